//! `loopbench run SUITE`: runs every (arm, task, replicate) trial of a suite and writes
//! a results directory.

use std::collections::BTreeMap;

use super::args::{RunArgs, arm_names};
use super::output::{
    Finish, print_finished, print_warnings, said_before_stop, say, warn_underpowered,
};
use crate::error::Result;
use crate::exit_code;
use crate::runner::Plan;
use crate::store::RunWriter;
use crate::study::new_run::{RunRequest, StartedTrials, start_suite_run};
use crate::study::sequential::Looks;
use crate::study::spec::{RunSettings, RunSpec};
use crate::suite::Suite;

/// Runs the command; returns the exit code.
pub fn run(args: &RunArgs) -> Result<i32> {
    let asked = RunRequest {
        suite_file: &args.suite,
        settings: RunSettings {
            seed: args.seed,
            replicates: args.replicates,
            look: args.look.map(|l| usize::try_from(l).unwrap_or(usize::MAX)),
            after: args.after.clone(),
            shard: args.shard,
        },
        arms: args.arms.as_deref().map(arm_names).transpose()?,
        keep_repos: args.keep_repos,
        out: args.out.as_deref(),
    };
    let how = Finish::of(args.jobs, args.quiet, args.full);
    let suite = Suite::load(&args.suite)?;
    print_warnings(suite.warnings());
    let started = start_suite_run(suite, asked)?;
    if let Some(line) = &started.sandbox {
        eprintln!("{line}");
    }
    match started.trials {
        StartedTrials::Plan(plan) => finish(&plan, &BTreeMap::new(), started.writer, how),
        StartedTrials::Sequential(spec) => finish_sequential(&spec, started.writer, how),
    }
}

/// Drives a suite's plan and prints what `run` and `resume` print: the verdict and
/// where the rest is (all of summary.md with `full`), and where the results are.
pub(crate) fn finish(
    plan: &Plan,
    finished_of_arm: &BTreeMap<String, u64>,
    writer: RunWriter,
    how: Finish,
) -> Result<i32> {
    // A shard holds a slice of the sessions, so its power says nothing about the study:
    // `merge` warns once, for the merged run.
    let sharded = writer.manifest().shard.is_some();
    let (driven, out) = how.drive(plan, finished_of_arm, writer)?;
    if let Some(effect) = plan.suite_source().and_then(|s| s.min_detectable_effect)
        && !sharded
    {
        warn_underpowered(&driven.summary, effect);
    }
    print_finished(&driven.summary, &out, how.full)?;
    eprintln!(
        "{} trials in {:.1}s; results in {}",
        plan.trials.len(),
        driven.elapsed.as_secs_f64(),
        out.path().display()
    );
    say(&driven.unfinished_report(&out));
    Ok(driven.exit_code())
}

/// Runs (or resumes) a sequential suite look by look and prints the verdict and where
/// the rest is (with `full`, all of `summary.md` and the looks).
pub(crate) fn finish_sequential(spec: &RunSpec, writer: RunWriter, how: Finish) -> Result<i32> {
    let out = writer.dir().clone();
    let sequencer = spec.sequencer()?;
    let looks = said_before_stop(crate::study::sequential::run(
        &sequencer,
        writer,
        how.options,
    ))?;
    match looks {
        Looks::Open {
            warnings,
            unfinished,
        } => {
            say(&warnings);
            say(&unfinished);
            Ok(exit_code::INTERRUPTED)
        }
        Looks::Finished { summary, warnings } => {
            say(&warnings);
            print_finished(&summary, &out, how.full)?;
            eprintln!("results in {}", out.path().display());
            Ok(exit_code::OK)
        }
    }
}
