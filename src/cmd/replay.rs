//! `loopbench replay`: rescores recorded traces. One trace is one trial; a directory of
//! traces is one arm, so two directories give an A/B run that `report` and `compare`
//! read like any other.

use std::collections::BTreeMap;
use std::path::Path;

use super::args::ReplayArgs;
use super::output::print_finished;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::runner::{Plan, ReplaySet, Source};
use crate::store::{RunWriter, new_run_dir};
use crate::study::drive::{DriveOptions, drive};
use crate::study::replay::{
    ReplaySetup, TraceInputs, load_arms, replay_manifest, sandbox_for, write_traces_csv,
};
use crate::study::suite_run::print_warnings;
use crate::suite::Task;

/// Runs the command; returns the exit code.
pub fn run(args: &ReplayArgs) -> Result<i32> {
    // Every trace is parsed before anything is written: bad input leaves no results.
    let task = Task::load(&args.task)?;
    print_warnings(task.warnings().iter().map(String::as_str));
    let inputs = TraceInputs {
        inputs: &args.inputs,
        arm: &args.arm,
        format: &args.format,
        schema: args.schema,
        exit_check: args.exit_check,
        session_tokens: args.session_tokens,
    };
    let arms = load_arms(&inputs)?;
    let out = match &args.out {
        Some(dir) => dir.clone(),
        None => new_run_dir(&Path::new("results").join("replay")),
    };
    let setup = ReplaySetup {
        sandboxed: sandbox_for(&arms, args.unsandboxed)?,
        unsandboxed: args.unsandboxed,
        keep_work: args.keep_work,
        keep_repos: args.keep_repos,
    };
    let manifest = replay_manifest(&task, &arms, &inputs, &setup)?;
    let writer = RunWriter::create(&out, manifest)?;
    write_traces_csv(&out, &task.name, &arms)?;
    let plan = Plan::replay(ReplaySet {
        task,
        arms,
        sandboxed: setup.sandboxed,
        keep_work: args.keep_work,
    });
    finish(
        &plan,
        &BTreeMap::new(),
        writer,
        args.jobs,
        args.quiet,
        args.full,
    )
}

/// Drives a replay plan and prints what `replay` prints: one row per session for a
/// single trace, the summary for several, where the results are, kept work
/// directories, and the traces that broke a rule (exit 2).
pub(crate) fn finish(
    plan: &Plan,
    finished_of_arm: &BTreeMap<String, u64>,
    writer: RunWriter,
    jobs: Option<usize>,
    quiet: bool,
    full: bool,
) -> Result<i32> {
    let Source::Replay(set) = plan.source.as_ref() else {
        return Err(Error::Tool("replay::finish needs a replay plan".into()));
    };
    let total = set.arms.iter().map(|a| a.traces.len()).sum::<usize>();
    let single = total == 1;
    let out = writer.dir().to_path_buf();
    let options = DriveOptions {
        jobs,
        quiet,
        session_table: single && finished_of_arm.is_empty(),
    };
    let driven = drive(plan, finished_of_arm, writer, options)?;
    if !single {
        print_finished(&driven.summary, &out, full)?;
    }
    eprintln!("results written to {}", out.display());
    let mut bad_traces = 0;
    for (trial, result) in plan.trials.iter().zip(&driven.results) {
        if let Some(kept) = &result.kept_work {
            if single {
                eprintln!("work directory kept at {}", kept.display());
            } else {
                let id = &result.record.key.trial_id;
                eprintln!("work directory of {id} kept at {}", kept.display());
            }
        }
        if let Some(reason) = &result.bad_input {
            let path = &set.arms[trial.arm].traces[trial.replicate as usize].path;
            eprintln!(
                "error: {}: {}",
                path.display(),
                crate::terminal::line(reason)
            );
            bad_traces += 1;
        }
    }
    Ok(if bad_traces == 0 {
        exit_code::OK
    } else {
        exit_code::BAD_INPUT
    })
}
