//! `loopbench resume RUN_DIR`: continues an interrupted run. Finished trials are kept;
//! a trial without its trial record is rerun from scratch, and its partial session
//! records are dropped first, so nothing is lost or counted twice.

use std::collections::BTreeSet;
use std::path::Path;

use super::args::ResumeArgs;
use super::run::select_arms;
use crate::agent::command;
use crate::error::{Error, Result};
use crate::record::TrialRecord;
use crate::runner::{Plan, Shard};
use crate::store::{Manifest, RunLock, RunWriter, TRIALS_JSONL, read_jsonl};
use crate::suite::Suite;

/// Runs the command; returns the exit code.
pub fn run(args: &ResumeArgs) -> Result<i32> {
    let dir = &args.run_dir;
    if !dir.join(crate::store::MANIFEST).is_file() {
        return Err(Error::BadInput(format!(
            "'{}' is not a results directory (no manifest.json)",
            dir.display()
        )));
    }
    // Before anything is read: a live run appending to these files must not have them
    // replaced under it.
    let lock = RunLock::acquire(dir)?;
    let manifest = Manifest::read(dir)?;
    let mut plan = if manifest.replay.is_some() {
        super::replay::plan_from_manifest(dir, &manifest)?
    } else {
        suite_plan(dir, &manifest)?
    };
    // One look of a sharded sequential run: only that look's trials, which the merged
    // run of the looks before it decides.
    let step = manifest.sequential_step.clone();
    if let (Some(step), Some(suite)) = (&step, plan.suite_source()) {
        let arms = select_arms(suite, Some(&manifest.arms.join(",")))?;
        let after = step.after.as_deref().map(Path::new);
        plan = super::sequential::look_plan(suite, &arms, step.look, after)?;
    }
    if let Some(shard) = &manifest.shard {
        let shard: Shard = shard
            .parse()
            .map_err(|e| Error::BadInput(format!("manifest shard: {e}")))?;
        plan = plan.sharded(shard);
    }

    let finished: Vec<TrialRecord> = read_jsonl(&dir.join(TRIALS_JSONL))?;
    let done: BTreeSet<String> = finished.iter().map(|t| t.key.trial_id.clone()).collect();
    let plan = plan.without(&done);
    // Like `run`: an agent that cannot be started here is refused before anything runs
    // or is rewritten (the program may have moved since the run started).
    if let Some(suite) = plan.suite_source() {
        let mut pending: Vec<usize> = plan.trials.iter().map(|t| t.arm).collect();
        pending.dedup();
        command::preflight(suite, &pending)?;
    }

    crate::store::prune_unfinished(dir, &done)?;

    eprintln!(
        "resuming {}: {} trials finished, {} to run",
        dir.display(),
        done.len(),
        plan.trials.len()
    );
    let replayed = manifest.replay.is_some();
    let writer = RunWriter::reopen(lock, manifest)?;
    let mut finished_of_arm = std::collections::BTreeMap::new();
    for t in &finished {
        *finished_of_arm.entry(t.key.arm.clone()).or_insert(0u64) += 1;
    }
    if let Some(suite) = plan.suite_source()
        && suite.sequential.is_some()
        && step.is_none()
    {
        let arms = select_arms(suite, Some(&writer.manifest().arms.join(",")))?;
        return super::sequential::run(suite, &arms, writer, args.jobs, args.quiet, args.full);
    }
    if replayed {
        super::replay::finish(
            &plan,
            &finished_of_arm,
            writer,
            args.jobs,
            args.quiet,
            args.full,
        )
    } else {
        super::run::finish(
            &plan,
            &finished_of_arm,
            writer,
            args.jobs,
            args.quiet,
            args.full,
        )
    }
}

/// The whole plan of a suite run, from its manifest: the suite must be unchanged.
fn suite_plan(dir: &Path, manifest: &Manifest) -> Result<Plan> {
    let (suite, arms) = suite_of_run(dir, manifest)?;
    let replicates = suite.replicates;
    Ok(Plan::suite(suite, &arms, replicates))
}

/// The suite a run was made from, with the run's seed and replicates, and the indices
/// of its arms: the suite must be unchanged since.
pub(crate) fn suite_of_run(dir: &Path, manifest: &Manifest) -> Result<(Suite, Vec<usize>)> {
    let Some(suite_path) = manifest.suite_path.clone() else {
        return Err(Error::BadInput(format!(
            "'{}' was written neither by `loopbench run` nor by `loopbench replay` (no suite or traces in its manifest); it cannot be resumed",
            dir.display()
        )));
    };
    let mut suite = Suite::load(Path::new(&suite_path))?;
    super::validate::print_warnings(suite.warnings());
    if suite.content_hash != manifest.suite_hash {
        return Err(Error::BadInput(format!(
            "the suite at '{suite_path}' changed since this run started (content hash {} is now {}); \
             resuming would mix two experiments. Start a new run instead.",
            short(&manifest.suite_hash),
            short(&suite.content_hash)
        )));
    }
    if let Some(seed) = manifest.seed {
        suite.seed = seed;
    }
    suite.replicates = manifest.replicates;
    let arms = select_arms(&suite, Some(&manifest.arms.join(",")))?;
    Ok((suite, arms))
}

fn short(hash: &str) -> &str {
    hash.get(..12).unwrap_or(hash)
}
