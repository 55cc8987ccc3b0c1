//! A suite run started: its specification made from the suite and what `run` asked,
//! its agents checked, and a new results directory created with the manifest, holding
//! the plan to drive (or a sequential suite, run look by look).

use std::collections::BTreeSet;
use std::path::Path;

use crate::agent::command;
use crate::error::Result;
use crate::runner::Plan;
use crate::store::{RunWriter, new_run_dir};
use crate::study::spec::{RunSettings, RunSpec};
use crate::study::suite_run::{SuiteRunSetup, announce_sandbox, print_warnings, suite_manifest};
use crate::suite::Suite;

/// What `run` was asked for: the suite file, what to change of it, its arms and where
/// the results go.
pub struct RunRequest<'a> {
    /// The suite file as given.
    pub suite_file: &'a Path,
    /// `--seed`, `--replicates`, `--look`, `--after`, `--shard`.
    pub settings: RunSettings,
    /// `--arms` (all when `None`).
    pub arms: Option<Vec<&'a str>>,
    /// `--keep-repos`.
    pub keep_repos: bool,
    /// `--out DIR` (else `results/<suite>/<timestamp>`).
    pub out: Option<&'a Path>,
}

/// A suite run started: its results directory created, locked and holding the manifest.
pub enum StartedRun {
    /// A plan to drive: a suite's trials, or one look of a sequential suite (`--look`).
    Plan(Plan, RunWriter),
    /// A sequential suite, run look by look.
    Sequential(Box<RunSpec>, RunWriter),
}

/// Loads the suite, makes the run's specification, checks that its agents can start
/// here, and creates the results directory with the run's manifest. Says the suite's
/// warnings, and the sandbox when an arm is sandboxed, on stderr.
pub fn start_suite_run(asked: RunRequest) -> Result<StartedRun> {
    let suite = Suite::load(asked.suite_file)?;
    print_warnings(suite.warnings());
    let spec = RunSpec::of_request(suite, asked.arms.as_deref(), asked.settings)?;
    let Some(suite) = spec.suite() else {
        return Err(crate::error::Error::Tool(
            "a suite's run without its suite".into(),
        ));
    };
    command::preflight(suite, spec.arms())?;
    let sandboxed = spec
        .arms()
        .iter()
        .any(|&i| suite.verify_sandbox_of(&suite.arms[i]).confines());
    let sandbox = if sandboxed {
        announce_sandbox()
    } else {
        (None, None)
    };
    // Before anything is written: a look's plan refuses a wrong `--after`.
    let plan = (!spec.is_sequential())
        .then(|| spec.plan(&BTreeSet::new()))
        .transpose()?;
    let out = match asked.out {
        Some(dir) => dir.to_path_buf(),
        None => new_run_dir(&Path::new("results").join(&suite.name)),
    };
    let setup = SuiteRunSetup {
        suite_file: asked.suite_file,
        keep_repos: asked.keep_repos,
        sandbox,
    };
    let writer = RunWriter::create(&out, suite_manifest(&spec, setup)?)?;
    Ok(match plan {
        Some(plan) => StartedRun::Plan(plan, writer),
        None => StartedRun::Sequential(Box::new(spec), writer),
    })
}
