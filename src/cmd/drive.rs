//! The one way every command runs a plan: progress bars, the results writer, the
//! engine, the interrupted message, then the summary files. `run`, `resume` and
//! `replay` differ only in the plan they build and in what they print afterwards.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::report::{DEFAULT_CONFIDENCE, Progress, SessionTable, Summary, write_summary};
use crate::runner::{
    Event, EventKind, EventSink, Fanout, Plan, RunOptions, TrialResult, default_jobs, execute,
};
use crate::store::RunWriter;

/// How to drive a plan.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DriveOptions {
    /// `--jobs` (default [`default_jobs`]).
    pub jobs: Option<usize>,
    /// No progress bars.
    pub quiet: bool,
    /// Print one row per session as it finishes (a single replayed trace).
    pub session_table: bool,
}

/// What a driven plan left.
pub(crate) struct Driven {
    /// The summary, already written to the run directory.
    pub summary: Summary,
    /// The trials this process ran, in plan order.
    pub results: Vec<TrialResult>,
    /// Wall time of the run.
    pub elapsed: Duration,
}

/// Runs `plan` into `writer`'s directory, then writes the tables and the summary files.
/// `finished_of_arm`: trials per arm an earlier process already recorded (resume).
pub(crate) fn drive(
    plan: &Plan,
    finished_of_arm: &BTreeMap<String, u64>,
    mut writer: RunWriter,
    options: DriveOptions,
) -> Result<Driven> {
    let out = writer.dir().to_path_buf();
    let already: u64 = finished_of_arm.values().sum();
    let planned = already as usize + plan.trials.len();
    let names = plan.arm_names();
    let arm_bars: Vec<(String, u64, u64)> = writer
        .manifest()
        .arms
        .iter()
        .map(|name| {
            let index = names.iter().position(|a| a == name);
            let left = plan.trials.iter().filter(|t| Some(t.arm) == index).count() as u64;
            let done = finished_of_arm.get(name).copied().unwrap_or(0);
            (name.clone(), left + done, done)
        })
        .collect();
    let mut progress = Progress::new(&arm_bars, options.quiet || options.session_table);
    let mut table = SessionTable::new(std::io::stdout());
    let start = Instant::now();
    let run_options = RunOptions {
        jobs: options.jobs.unwrap_or_else(default_jobs),
        seed: plan.suite_source().map_or(0, |s| s.seed),
        run_dir: out.clone(),
        keep_repos: writer.manifest().keep_repos,
    };
    let outcome = {
        let mut sink = Fanout::new().with(&mut writer).with(&mut progress);
        if options.session_table {
            sink = sink.with(&mut table);
        }
        sink.handle(&Event {
            elapsed: start.elapsed(),
            kind: EventKind::RunStarted {
                run_dir: out.clone(),
                trials: planned,
            },
        })?;
        let outcome = execute(plan, &run_options, &mut sink, start);
        if outcome.is_ok() {
            sink.handle(&Event {
                elapsed: start.elapsed(),
                kind: EventKind::RunFinished,
            })?;
        }
        outcome
    };
    let results = match outcome {
        Ok(results) => results,
        Err(Error::Cancelled) => {
            let finished = crate::store::read_jsonl::<crate::record::TrialRecord>(
                &out.join(crate::store::TRIALS_JSONL),
            )?
            .len();
            return Err(Error::Interrupted {
                run_dir: out,
                finished,
                planned,
            });
        }
        Err(e) => return Err(e),
    };
    let summary = write_summary(&out, None, DEFAULT_CONFIDENCE)?;
    crate::report::html::write_run_html(&out, &summary)?;
    super::report::warn_unusable_arms(&summary);
    Ok(Driven {
        summary,
        results,
        elapsed: start.elapsed(),
    })
}
