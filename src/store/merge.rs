//! Merging the shards of one run into one results directory, whose tables equal those
//! of a single-process run.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::continuation;
use super::{
    JsonlAppender, Manifest, RunLock, claim_new_run_dir, jsonl_records, now_rfc3339, write_tables,
};
use crate::agent::trajectory::SessionTrajectory;
use crate::error::Purpose;
use crate::error::{Error, IoContext, Named, Result, ResultsDirError};
use crate::record::{FailedSession, SessionRecord, TrialRecord};
use crate::run_dir::RunDir;
use crate::runner::Shard;

/// Joins the shards `dirs` of one run into the new results directory `out`: checks
/// that they are finished shards of one run covering every index once (per look, for
/// the looks of a sequential run), copies their
/// records (refusing a trial found twice), rebuilds the tables and writes the merged
/// manifest. Returns the lock on `out` (hold it while writing the summary) and the
/// number of trials.
pub fn merge_shards(dirs: &[PathBuf], out: &Path) -> Result<(RunLock, usize)> {
    let mut manifests = Vec::new();
    let shards: Vec<RunDir> = dirs.iter().map(RunDir::new).collect();
    for shard in &shards {
        if !shard.manifest().is_file() {
            return Err(ResultsDirError::NoManifest {
                dir: shard.path().to_path_buf(),
                named: Named::Given,
            }
            .into());
        }
        manifests.push(Manifest::read(shard)?);
    }
    let first = &manifests[0];
    for (dir, m) in dirs.iter().zip(&manifests).skip(1) {
        continuation::check(Purpose::Merge, first, m, dir, &dirs[0])?;
    }
    for (dir, m) in dirs.iter().zip(&manifests) {
        if m.finished.is_none() {
            return Err(ResultsDirError::Unfinished {
                dir: dir.clone(),
                named: Named::Given,
            }
            .into());
        }
    }
    // The shards of one look of a sequential run cover that look; the merged run of
    // the looks before it comes with them unsharded.
    let looks: BTreeSet<Option<usize>> = manifests
        .iter()
        .map(|m| m.sequential_step.as_ref().map(|s| s.look))
        .collect();
    for look in looks {
        let (group_dirs, group): (Vec<PathBuf>, Vec<Manifest>) = dirs
            .iter()
            .zip(&manifests)
            .filter(|(_, m)| m.sequential_step.as_ref().map(|s| s.look) == look)
            .map(|(d, m)| (d.clone(), m.clone()))
            .unzip();
        check_shard_cover(&group_dirs, &group)?;
    }

    // Held until the merged run is complete: no other process writes into it meanwhile.
    let lock = claim_new_run_dir(out)?;
    let out = lock.dir().clone();

    let mut seen = BTreeSet::new();
    let mut sessions = JsonlAppender::open(&out.sessions_jsonl())?;
    let mut trials = JsonlAppender::open(&out.trials_jsonl())?;
    let mut truth: Option<JsonlAppender> = None;
    let mut trajectories: Option<JsonlAppender> = None;
    let mut failures: Option<JsonlAppender> = None;
    for dir in &shards {
        for t in jsonl_records::<TrialRecord>(&dir.trials_jsonl())? {
            let t = t?;
            if !seen.insert(t.key.trial_id.clone()) {
                return Err(ResultsDirError::ShardsOverlap {
                    trial: t.key.trial_id,
                }
                .into());
            }
            trials.append(&t)?;
        }
        for s in jsonl_records::<SessionRecord>(&dir.sessions_jsonl())? {
            sessions.append(&s?)?;
        }
        copy_bundles(dir, &out)?;
        // The failed attempts stay with the run: they say which trials were retried
        // and which could not run.
        let failures_file = dir.failures_jsonl();
        if failures_file.exists() {
            let out_failures = match failures.as_mut() {
                Some(f) => f,
                None => failures.insert(JsonlAppender::open(&out.failures_jsonl())?),
            };
            for line in jsonl_records::<FailedSession>(&failures_file)? {
                out_failures.append(&line?)?;
            }
        }
        let trajectories_file = dir.trajectories_jsonl();
        if trajectories_file.exists() {
            let out_trajectories = match trajectories.as_mut() {
                Some(t) => t,
                None => trajectories.insert(JsonlAppender::open(&out.trajectories_jsonl())?),
            };
            // Copied as written (each line was masked and cut by its shard), a megabyte
            // at a time.
            let mut lines = Vec::new();
            for line in jsonl_records::<SessionTrajectory>(&trajectories_file)? {
                lines.extend(
                    serde_json::to_vec(&line?)
                        .map_err(|e| Error::Tool(format!("cannot encode a trajectory: {e}")))?,
                );
                lines.push(b'\n');
                if lines.len() > 1 << 20 {
                    out_trajectories.append_lines(&std::mem::take(&mut lines))?;
                }
            }
            out_trajectories.append_lines(&lines)?;
        }
        let truth_file = dir.sim_truth_jsonl();
        if truth_file.exists() {
            let out_truth = match truth.as_mut() {
                Some(t) => t,
                None => truth.insert(JsonlAppender::open(&out.sim_truth_jsonl())?),
            };
            for line in jsonl_records::<serde_json::Value>(&truth_file)? {
                out_truth.append(&line?)?;
            }
        }
    }
    write_tables(&out, &first.arms)?;
    let mut merged = first.clone();
    merged.shard = None;
    merged.sequential_step = None;
    merged.host = manifests
        .iter()
        .map(|m| m.host.as_str())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect::<Vec<_>>()
        .join(",");
    merged.started = manifests
        .iter()
        .map(|m| m.started.clone())
        .min()
        .unwrap_or_default();
    merged.finished = Some(now_rfc3339());
    merged.write(&out)?;
    Ok((lock, seen.len()))
}

/// Shards must be of one count and each index present exactly once.
fn check_shard_cover(dirs: &[std::path::PathBuf], manifests: &[Manifest]) -> Result<()> {
    let shards: Vec<Option<Shard>> = manifests.iter().map(|m| m.shard).collect();
    if shards.iter().all(Option::is_none) {
        return Ok(());
    }
    let Some(count) = shards.iter().flatten().map(|s| s.count).next() else {
        return Ok(());
    };
    let mut have = BTreeSet::new();
    for (dir, shard) in dirs.iter().zip(&shards) {
        match shard {
            Some(s) if s.count == count => {
                if !have.insert(s.index) {
                    return Err(ResultsDirError::ShardTwice {
                        shard: s.to_string(),
                        dir: dir.clone(),
                    }
                    .into());
                }
            }
            _ => {
                return Err(ResultsDirError::ShardOfAnotherSplit {
                    dir: dir.clone(),
                    count,
                }
                .into());
            }
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|i| !have.contains(i))
        .map(|i| format!("{i}/{count}"))
        .collect();
    if !missing.is_empty() {
        return Err(ResultsDirError::ShardsMissing { missing }.into());
    }
    Ok(())
}

/// Copies the trial bundles of a `--keep-repos` shard (`repos/*.bundle`) into `out`.
fn copy_bundles(dir: &RunDir, out: &RunDir) -> Result<()> {
    let from = dir.bundles();
    let Ok(entries) = std::fs::read_dir(&from) else {
        return Ok(());
    };
    let to = out.bundles();
    std::fs::create_dir_all(&to).io_context(|| format!("cannot create '{}'", to.display()))?;
    for entry in entries {
        let path = entry
            .io_context(|| format!("cannot read '{}'", from.display()))?
            .path();
        if path.extension().is_some_and(|e| e == "bundle")
            && let Some(name) = path.file_name()
        {
            std::fs::copy(&path, to.join(name))
                .io_context(|| format!("cannot copy '{}'", path.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shards(of: &[Option<&str>]) -> (Vec<std::path::PathBuf>, Vec<Manifest>) {
        of.iter()
            .enumerate()
            .map(|(i, shard)| {
                let manifest = Manifest {
                    shard: shard.map(|s| s.parse().unwrap()),
                    ..Manifest::stamped()
                };
                (std::path::PathBuf::from(format!("s{i}")), manifest)
            })
            .unzip()
    }

    fn refusal(of: &[Option<&str>]) -> Option<ResultsDirError> {
        let (dirs, manifests) = shards(of);
        match check_shard_cover(&dirs, &manifests) {
            Ok(()) => None,
            Err(Error::ResultsDir(e)) => Some(e),
            Err(e) => panic!("not a results directory's error: {e:?}"),
        }
    }

    #[test]
    fn the_shards_of_one_split_must_each_be_given_once() {
        assert_eq!(refusal(&[Some("1/2"), Some("2/2")]), None);
        assert_eq!(refusal(&[None, None]), None);
        assert_eq!(
            refusal(&[Some("1/3"), Some("3/3")]),
            Some(ResultsDirError::ShardsMissing {
                missing: vec!["2/3".into()]
            })
        );
        assert_eq!(
            refusal(&[Some("1/2"), Some("1/2"), Some("2/2")]),
            Some(ResultsDirError::ShardTwice {
                shard: "1/2".into(),
                dir: "s1".into()
            })
        );
        assert_eq!(
            refusal(&[Some("1/2"), Some("2/3")]),
            Some(ResultsDirError::ShardOfAnotherSplit {
                dir: "s1".into(),
                count: 2
            })
        );
    }
}
