//! `loopbench show RUN_DIR [TRIAL_ID]`: a run's verdict and its trials one line each, or
//! one trial as a timeline of its sessions with the evidence behind every count, or with
//! `--trajectory` what the agent did in them. Reads only the run directory's records.

use super::args::ShowArgs;
use crate::agent::trajectory::SessionTrajectory;
use crate::error::{Error, Result, ResultsDirError};
use crate::exit_code;
use crate::record::{FailedSession, SessionRecord, TrialRecord};
use crate::report::show::{failed_attempts, run_listing, trial_timeline};
use crate::report::show_trajectory::{trajectory_json, trajectory_text};
use crate::run_dir::RunDir;
use crate::store::{jsonl_records, open_run_dir, read_jsonl};

/// Runs the command; returns the exit code.
pub fn run(args: &ShowArgs) -> Result<i32> {
    let dir = open_run_dir(&args.run_dir);
    if let (true, Some(id)) = (args.trajectory, args.trial_id.as_deref()) {
        let text = trajectories(&dir, id, args.session, args.json)?;
        // JSON escapes every control character itself; the text is escaped line by line.
        super::output::print(&text)?;
        return Ok(exit_code::OK);
    }
    let text = show(&dir, args.trial_id.as_deref())?;
    // Every line quotes records the agent's session filled; nothing in them reaches the
    // terminal as a control sequence.
    super::output::print(&crate::terminal::block(&text))?;
    Ok(exit_code::OK)
}

/// The text `show` prints.
pub fn show(dir: &RunDir, trial_id: Option<&str>) -> Result<String> {
    let trials_file = dir.trials_jsonl();
    if !dir.path().is_dir() || !trials_file.is_file() {
        return Err(ResultsDirError::NoFinishedTrials {
            dir: dir.path().to_path_buf(),
        }
        .into());
    }
    let mut trials: Vec<TrialRecord> = read_jsonl(&trials_file)?;
    let Some(id) = trial_id else {
        let summary = crate::report::summarize(dir, None, crate::report::DEFAULT_CONFIDENCE)?;
        // Trials in the order of the tables: arms as the summary orders them (baseline
        // first), then task and replicate, not in the order they happened to finish.
        let rank = |arm: &str| summary.arms.iter().position(|a| a == arm);
        trials.sort_by(|a, b| {
            (rank(&a.key.arm), &a.key.task, a.key.replicate).cmp(&(
                rank(&b.key.arm),
                &b.key.task,
                b.key.replicate,
            ))
        });
        let verdict = crate::report::Verdict::of(&summary).to_text();
        return Ok(format!(
            "{verdict}
{}",
            run_listing(&trials)
        ));
    };
    let failed: Vec<FailedSession> = read_jsonl::<FailedSession>(&dir.failures_jsonl())?
        .into_iter()
        .filter(|f| f.record.key.trial_id == id)
        .collect();
    let Some(trial) = trials.iter().find(|t| t.key.trial_id == id) else {
        if !failed.is_empty() {
            return Ok(failed_attempts(id, &failed, false));
        }
        let known: Vec<String> = trials
            .iter()
            .map(|t| t.key.trial_id.clone())
            .take(5)
            .collect();
        return Err(ResultsDirError::NoTrial {
            dir: dir.path().to_path_buf(),
            trial: id.to_string(),
            more: trials.len() > known.len(),
            known,
        }
        .into());
    };
    // The trial's sessions, read one record at a time.
    let mut sessions: Vec<SessionRecord> = Vec::new();
    for s in jsonl_records::<SessionRecord>(&dir.sessions_jsonl())? {
        let s = s?;
        if s.key.trial_id == id {
            sessions.push(s);
        }
    }
    sessions.sort_by_key(|s| s.session);
    let mut text = trial_timeline(trial, &sessions);
    if !failed.is_empty() {
        text += "\nFailed attempts before it (not counted):\n";
        text += &failed_attempts(id, &failed, true);
    }
    Ok(text)
}

/// What `show TRIAL_ID --trajectory` prints: each session's trajectory (or `session`'s
/// alone) as text, or as a JSON array of sessions with `json`. Read a line at a time
/// from `trajectories.jsonl`.
pub fn trajectories(dir: &RunDir, id: &str, session: Option<u32>, json: bool) -> Result<String> {
    // The trial must exist: the same checks and message as its timeline.
    show(dir, Some(id))?;
    let records: Vec<SessionRecord> = jsonl_records::<SessionRecord>(&dir.sessions_jsonl())?
        .filter(|s| {
            s.as_ref().map_or(true, |s| {
                s.key.trial_id == id && session.is_none_or(|n| s.session == n)
            })
        })
        .collect::<Result<_>>()?;
    if let (Some(n), true) = (session, records.is_empty()) {
        return Err(ResultsDirError::NoSession {
            dir: dir.path().to_path_buf(),
            trial: id.to_string(),
            session: n,
        }
        .into());
    }
    let file = dir.trajectories_jsonl();
    if !file.is_file() {
        return Err(ResultsDirError::NoTrajectories { file }.into());
    }
    let mut texts = Vec::new();
    let mut values = Vec::new();
    for line in jsonl_records::<SessionTrajectory>(&file)? {
        let line = line?;
        if line.trial_id != id {
            continue;
        }
        let Some(record) = records.iter().find(|r| r.session == line.session) else {
            continue;
        };
        if json {
            values.push(trajectory_json(record, &line.trajectory));
        } else {
            texts.push(trajectory_text(record, &line.trajectory));
        }
    }
    if texts.is_empty() && values.is_empty() {
        return Err(ResultsDirError::NoTrajectoryOf {
            file,
            trial: id.to_string(),
            session,
        }
        .into());
    }
    Ok(if json {
        let mut text = serde_json::to_string_pretty(&values)
            .map_err(|e| Error::Tool(format!("cannot encode the trajectory: {e}")))?;
        text.push('\n');
        text
    } else {
        texts.join("\n")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::open_run_dir;

    #[test]
    fn a_trial_a_run_does_not_hold_is_refused_with_what_it_holds() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_run_dir(tmp.path());
        std::fs::write(dir.trials_jsonl(), "").unwrap();
        let err = show(&dir, Some("json:latefees:9")).unwrap_err();
        let Error::ResultsDir(ResultsDirError::NoTrial {
            dir: named,
            trial,
            known,
            more,
        }) = err
        else {
            panic!("{err:?}");
        };
        assert_eq!(named, tmp.path());
        assert_eq!(trial, "json:latefees:9");
        assert!(known.is_empty() && !more);
    }
}
