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
use crate::study::suite_run::{SuiteRunSetup, sandbox_facts, sandbox_line, suite_manifest};
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
pub struct StartedRun {
    /// What to drive.
    pub trials: StartedTrials,
    /// The results directory's writer.
    pub writer: RunWriter,
    /// Who the sandboxed processes run as and how their limits are enforced here, when
    /// an arm is sandboxed: the command says it before the run.
    pub sandbox: Option<String>,
}

/// What a started suite run drives.
pub enum StartedTrials {
    /// A plan: a suite's trials, or one look of a sequential suite (`--look`).
    Plan(Plan),
    /// A sequential suite, run look by look.
    Sequential(Box<RunSpec>),
}

/// Makes the run's specification from `suite` (loaded from `asked.suite_file`), checks
/// that its agents can start here, and creates the results directory with the run's
/// manifest.
pub fn start_suite_run(suite: Suite, asked: RunRequest) -> Result<StartedRun> {
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
        sandbox_facts()
    } else {
        (None, None)
    };
    let said = sandbox_line(&sandbox);
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
    Ok(StartedRun {
        trials: match plan {
            Some(plan) => StartedTrials::Plan(plan),
            None => StartedTrials::Sequential(Box::new(spec)),
        },
        writer,
        sandbox: said,
    })
}
