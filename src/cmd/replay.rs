//! `loopbench replay`: rescores recorded traces. One trace is one trial; a directory of
//! traces is one arm, so two directories give an A/B run that `report` and `compare`
//! read like any other.

use std::collections::BTreeMap;

use super::args::ReplayArgs;
use super::output::{Finish, print_finished, print_warnings, say};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::runner::{Plan, Source};
use crate::store::RunWriter;
use crate::study::replay::{ReplayRequest, TraceInputs, start_replay};
use crate::suite::Task;

/// Runs the command; returns the exit code.
pub fn run(args: &ReplayArgs) -> Result<i32> {
    let task = Task::load(&args.task)?;
    print_warnings(task.warnings().iter().map(String::as_str));
    let (plan, writer) = start_replay(ReplayRequest {
        task,
        inputs: TraceInputs {
            inputs: &args.inputs,
            arm: &args.arm,
            format: &args.format,
            schema: args.schema,
            exit_check: args.exit_check,
            ledger: args.ledger,
            session_tokens: args.session_tokens,
            start: args.start,
        },
        unsandboxed: args.unsandboxed,
        keep_work: args.keep_work,
        keep_repos: args.keep_repos,
        out: args.out.as_deref(),
    })?;
    let how = Finish::of(args.jobs, args.quiet, args.full);
    finish(&plan, &BTreeMap::new(), writer, how)
}

/// Drives a replay plan and prints what `replay` prints: one row per session for a
/// single trace, the summary for several, where the results are, kept work
/// directories, and the traces that broke a rule (exit 2).
pub(crate) fn finish(
    plan: &Plan,
    finished_of_arm: &BTreeMap<String, u64>,
    writer: RunWriter,
    mut how: Finish,
) -> Result<i32> {
    let Source::Replay(set) = plan.source.as_ref() else {
        return Err(Error::Tool("replay::finish needs a replay plan".into()));
    };
    let total = set.arms.iter().map(|a| a.traces.len()).sum::<usize>();
    let single = total == 1;
    // One row per session as it finishes, for a single trace replayed from its start.
    how.options.session_table = single && finished_of_arm.is_empty();
    let (driven, out) = how.drive(plan, finished_of_arm, writer)?;
    if !single {
        print_finished(&driven.summary, &out, how.full)?;
    }
    eprintln!("results written to {}", out.path().display());
    let mut bad_traces = 0;
    for (index, result) in &driven.results {
        let Some(trial) = plan.trials.get(*index) else {
            continue;
        };
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
    // A trial that could not run leaves the replay incomplete, as it leaves a run.
    say(&driven.unfinished_report(&out));
    Ok(if bad_traces > 0 {
        exit_code::BAD_INPUT
    } else {
        driven.exit_code()
    })
}
