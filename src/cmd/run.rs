//! `loopbench run SUITE`: runs every (arm, task, replicate) trial of a suite and writes
//! a results directory.

use std::collections::BTreeMap;
use std::path::Path;

use super::args::{RunArgs, arm_names};
use super::output::{print_finished, warn_underpowered};
use crate::agent::command;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::runner::Plan;
use crate::store::{RunWriter, SequentialStep, new_run_dir};
use crate::study::drive::{DriveOptions, drive};
use crate::study::sequential::{Looks, look_plan};
use crate::study::suite_run::{
    RunSettings, SuiteRunSetup, announce_sandbox, apply_settings, print_warnings, select_arms,
    suite_manifest,
};
use crate::suite::Suite;

/// Runs the command; returns the exit code.
pub fn run(args: &RunArgs) -> Result<i32> {
    let mut suite = Suite::load(&args.suite)?;
    print_warnings(suite.warnings());
    let look = args.look.map(|l| usize::try_from(l).unwrap_or(usize::MAX));
    let asked = RunSettings {
        seed: args.seed,
        replicates: args.replicates,
        look,
        sharded: args.shard.is_some(),
    };
    apply_settings(&mut suite, &asked)?;
    let arms = match args.arms.as_deref() {
        Some(list) => select_arms(&suite, Some(&arm_names(list)?))?,
        None => select_arms(&suite, None)?,
    };
    command::preflight(&suite, &arms)?;
    let sandboxed = arms.iter().any(|&i| suite.verify_sandboxed(&suite.arms[i]));
    let sandbox = if sandboxed {
        announce_sandbox()
    } else {
        (None, None)
    };
    let after = match &args.after {
        Some(dir) => Some(std::fs::canonicalize(dir).map_err(|e| {
            Error::BadInput(format!("--after: cannot open '{}': {e}", dir.display()))
        })?),
        None => None,
    };
    let look_plan = match look {
        Some(look) => Some(look_plan(&suite, &arms, look, after.as_deref())?),
        None => None,
    };
    let out = match &args.out {
        Some(dir) => dir.clone(),
        None => new_run_dir(&Path::new("results").join(&suite.name)),
    };
    let setup = SuiteRunSetup {
        suite_file: &args.suite,
        shard: args.shard,
        sequential_step: look.map(|look| SequentialStep {
            look,
            after: after.as_ref().map(|a| a.display().to_string()),
        }),
        keep_repos: args.keep_repos,
        sandbox,
    };
    let manifest = suite_manifest(&suite, &arms, setup);
    let writer = RunWriter::create(&out, manifest)?;
    if let Some(mut plan) = look_plan {
        if let Some(shard) = args.shard {
            plan = plan.sharded(shard);
        }
        return finish(
            &plan,
            &BTreeMap::new(),
            writer,
            args.jobs,
            args.quiet,
            args.full,
        );
    }
    if suite.sequential.is_some() {
        return finish_sequential(&suite, &arms, writer, args.jobs, args.quiet, args.full);
    }
    let replicates = suite.replicates;
    let mut plan = Plan::suite(suite, &arms, replicates);
    if let Some(shard) = args.shard {
        plan = plan.sharded(shard);
    }
    finish(
        &plan,
        &BTreeMap::new(),
        writer,
        args.jobs,
        args.quiet,
        args.full,
    )
}

/// Drives a suite's plan and prints what `run` and `resume` print: the verdict and
/// where the rest is (all of summary.md with `full`), and where the results are.
pub(crate) fn finish(
    plan: &Plan,
    finished_of_arm: &BTreeMap<String, u64>,
    writer: RunWriter,
    jobs: Option<usize>,
    quiet: bool,
    full: bool,
) -> Result<i32> {
    let options = DriveOptions {
        jobs,
        quiet,
        session_table: false,
    };
    let out = writer.dir().to_path_buf();
    // A shard holds a slice of the sessions, so its power says nothing about the study:
    // `merge` warns once, for the merged run.
    let sharded = writer.manifest().shard.is_some();
    let driven = drive(plan, finished_of_arm, writer, options)?;
    if let Some(effect) = plan.suite_source().and_then(|s| s.min_detectable_effect)
        && !sharded
    {
        warn_underpowered(&driven.summary, effect);
    }
    print_finished(&driven.summary, &out, full)?;
    eprintln!(
        "{} trials in {:.1}s; results in {}",
        plan.trials.len(),
        driven.elapsed.as_secs_f64(),
        out.display()
    );
    Ok(driven.report_unfinished(&out))
}

/// Runs (or resumes) a sequential suite look by look and prints the verdict and where
/// the rest is (with `full`, all of `summary.md` and the looks).
pub(crate) fn finish_sequential(
    suite: &Suite,
    arms: &[usize],
    writer: RunWriter,
    jobs: Option<usize>,
    quiet: bool,
    full: bool,
) -> Result<i32> {
    let out = writer.dir().to_path_buf();
    match crate::study::sequential::run(suite, arms, writer, jobs, quiet)? {
        Looks::Open(code) => Ok(code),
        Looks::Finished(summary) => {
            print_finished(&summary, &out, full)?;
            eprintln!("results in {}", out.display());
            Ok(exit_code::OK)
        }
    }
}
