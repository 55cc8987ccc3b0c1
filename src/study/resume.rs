//! Resuming a run: its plan rebuilt from the manifest (the suite or the traces must be
//! unchanged), less the trials already recorded, whose partial records are dropped
//! first, so nothing is lost or counted twice.

use std::collections::BTreeMap;
use std::path::Path;

use super::spec::RunSpec;
use crate::agent::command;
use crate::error::{Named, Result, ResultsDirError};
use crate::runner::{Plan, Source};
use crate::store::{FinishedTrials, Manifest, RunLock, open_run_dir};

/// What a run to resume holds and what is left of it.
pub struct Resume {
    /// The run, as its manifest says.
    pub spec: RunSpec,
    /// The trials left to run.
    pub plan: Plan,
    /// The run's lock, held since before anything was read.
    pub lock: RunLock,
    /// The run's manifest.
    pub manifest: Manifest,
    /// Trials recorded per arm.
    pub finished_of_arm: BTreeMap<String, u64>,
    /// Trials recorded.
    pub finished: usize,
    /// What kind of run it is.
    pub kind: RunKind,
    /// What its suite or task warns of.
    pub warnings: Vec<String>,
}

/// The kinds of run, each finished its own way.
pub enum RunKind {
    /// A suite's trials.
    Suite,
    /// Recorded traces.
    Replay,
    /// A sequential suite run in one process: its looks are replayed over what is
    /// recorded.
    Sequential,
}

/// Reads the run in `dir` and what is left of it: locks it, rebuilds its plan, refuses
/// an agent that cannot be started here, and drops the partial records of the trials
/// that will be rerun.
pub fn prepare(dir: &Path) -> Result<Resume> {
    if !open_run_dir(dir).manifest().is_file() {
        return Err(ResultsDirError::NoManifest {
            dir: dir.to_path_buf(),
            named: Named::Given,
        }
        .into());
    }
    // Before anything is read: a live run appending to these files must not have them
    // replaced under it.
    let lock = RunLock::acquire(dir)?;
    // The scratch of the killed process (its trials' directories and mounts) goes now,
    // even when no trial is left to run.
    crate::fsutil::clear_dead_leftovers();
    let run_dir = lock.dir().clone();
    let manifest = Manifest::read(&run_dir)?;
    let spec = if manifest.replay.is_some() {
        super::replay::spec_of_manifest(&run_dir, &manifest)?
    } else {
        RunSpec::of_suite_manifest(&run_dir, &manifest)?
    };
    let warnings = match spec.source().as_ref() {
        Source::Suite(suite) => suite.warnings().map(String::from).collect(),
        // A replay's task warned when the replay started.
        Source::Replay(_) => Vec::new(),
    };
    let FinishedTrials {
        ids: done,
        of_arm: finished_of_arm,
    } = FinishedTrials::read(&run_dir)?;
    let plan = spec.plan(&done)?;
    // Like `run`: an agent that cannot be started here is refused before anything runs
    // or is rewritten (the program may have moved since the run started).
    if let Some(suite) = spec.suite() {
        let mut pending: Vec<usize> = plan.trials.iter().map(|t| t.arm).collect();
        pending.dedup();
        command::preflight(suite, &pending)?;
    }

    crate::store::prune_unfinished(&run_dir, &done)?;

    let kind = if manifest.replay.is_some() {
        RunKind::Replay
    } else if spec.is_sequential() {
        RunKind::Sequential
    } else {
        RunKind::Suite
    };
    Ok(Resume {
        spec,
        plan,
        lock,
        manifest,
        finished_of_arm,
        finished: done.len(),
        kind,
        warnings,
    })
}
