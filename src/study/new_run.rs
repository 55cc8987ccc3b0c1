//! A suite run started: the suite loaded with what `run` was asked to change, its
//! agents checked, and a new results directory created with the manifest, holding the
//! plan to drive (or a sequential suite, run look by look).

use std::path::Path;

use crate::agent::command;
use crate::error::{Error, Result};
use crate::runner::{Plan, Shard};
use crate::store::{RunWriter, SequentialStep, new_run_dir};
use crate::study::sequential::look_plan;
use crate::study::suite_run::{
    RunSettings, SuiteRunSetup, announce_sandbox, apply_settings, print_warnings, select_arms,
    suite_manifest,
};
use crate::suite::Suite;

/// What `run` was asked for: the suite file, what to change of it, its arms and where
/// the results go.
pub struct RunRequest<'a> {
    /// The suite file as given.
    pub suite_file: &'a Path,
    /// `--seed`, `--replicates`, `--look`, whether `--shard` was given.
    pub settings: RunSettings,
    /// `--arms` (all when `None`).
    pub arms: Option<Vec<&'a str>>,
    /// `--shard I/N`.
    pub shard: Option<Shard>,
    /// `--after DIR` of a look of a sharded sequential run.
    pub after: Option<&'a Path>,
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
    Sequential(Box<Suite>, Vec<usize>, RunWriter),
}

/// Loads the suite, applies what was asked, checks that its agents can start here,
/// and creates the results directory with the run's manifest. Says the suite's
/// warnings, and the sandbox when an arm is sandboxed, on stderr.
pub fn start_suite_run(asked: RunRequest) -> Result<StartedRun> {
    let mut suite = Suite::load(asked.suite_file)?;
    print_warnings(suite.warnings());
    apply_settings(&mut suite, &asked.settings)?;
    let arms = select_arms(&suite, asked.arms.as_deref())?;
    suite.prepare_containers(&arms)?;
    command::preflight(&suite, &arms)?;
    let sandboxed = arms
        .iter()
        .any(|&i| suite.verify_sandbox_of(&suite.arms[i]).confines());
    let sandbox = if sandboxed {
        announce_sandbox()
    } else {
        (None, None)
    };
    let after = match asked.after {
        Some(dir) => Some(std::fs::canonicalize(dir).map_err(|e| {
            Error::BadInput(format!("--after: cannot open '{}': {e}", dir.display()))
        })?),
        None => None,
    };
    let look = asked.settings.look;
    let look_plan = match look {
        Some(look) => Some(look_plan(&suite, &arms, look, after.as_deref())?),
        None => None,
    };
    let out = match asked.out {
        Some(dir) => dir.to_path_buf(),
        None => new_run_dir(&Path::new("results").join(&suite.name)),
    };
    let setup = SuiteRunSetup {
        suite_file: asked.suite_file,
        shard: asked.shard,
        sequential_step: look.map(|look| SequentialStep {
            look,
            after: after.as_ref().map(|a| a.display().to_string()),
        }),
        keep_repos: asked.keep_repos,
        sandbox,
    };
    let writer = RunWriter::create(&out, suite_manifest(&suite, &arms, setup))?;
    let plan = match look_plan {
        Some(plan) => plan,
        None if suite.sequential.is_some() => {
            return Ok(StartedRun::Sequential(Box::new(suite), arms, writer));
        }
        None => {
            let replicates = suite.replicates;
            Plan::suite(suite, &arms, replicates)
        }
    };
    Ok(StartedRun::Plan(
        match asked.shard {
            Some(shard) => plan.sharded(shard),
            None => plan,
        },
        writer,
    ))
}
