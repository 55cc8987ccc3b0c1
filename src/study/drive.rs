//! The one way every study runs a plan: progress bars, the results writer, the engine,
//! the interrupted run's error, then the summary files and what the command warns of. `run`,
//! `resume` and `replay` differ only in the plan they build and in what they print
//! afterwards.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::events::Fanout;
use crate::exit_code;
use crate::record::FailedSession;
use crate::report::{DEFAULT_CONFIDENCE, Progress, SessionTable, Summary, write_summary};
use crate::run_dir::RunDir;
use crate::runner::{Plan, RunOptions, TrialResult, default_jobs, execute};
use crate::store::RunWriter;

/// How to drive a plan.
#[derive(Debug, Clone, Copy, Default)]
pub struct DriveOptions {
    /// `--jobs` (default [`default_jobs`]).
    pub jobs: Option<usize>,
    /// No progress bars.
    pub quiet: bool,
    /// Print one row per session as it finishes (a single replayed trace).
    pub session_table: bool,
}

/// What a driven plan left.
pub struct Driven {
    /// The summary, already written to the run directory.
    pub summary: Summary,
    /// The trials this process ran that kept their work directory or broke a rule of
    /// the input, in plan order, each with its index in the plan.
    pub results: Vec<(usize, TrialResult)>,
    /// Wall time of the run.
    pub elapsed: Duration,
    /// Trials that could not run (retries exhausted): the last failed session of each.
    pub unfinished: Vec<FailedSession>,
    /// What the run's summary warns of: arms with no usable session, agents that failed
    /// in every session of a trial.
    pub warnings: Vec<String>,
}

impl Driven {
    /// What a command says when trials could not run: per arm how many and why (the
    /// reasons grouped), then how to go on; nothing when every trial ran.
    pub fn unfinished_report(&self, out: &RunDir) -> Vec<String> {
        if self.unfinished.is_empty() {
            return Vec::new();
        }
        let mut lines = unfinished_lines(&self.unfinished);
        lines.push(format!(
            "the run is not complete: once the cause is fixed, `loopbench resume {}` tries those trials again",
            out.path().display()
        ));
        lines
    }

    /// The exit code of the command: 3 when a trial could not run (the run is not
    /// complete, `resume` tries those again), else 0.
    pub fn exit_code(&self) -> i32 {
        if self.unfinished.is_empty() {
            exit_code::OK
        } else {
            exit_code::INTERRUPTED
        }
    }
}

/// One line per arm with trials that could not run: how many, and each reason with
/// how many trials it ended.
pub fn unfinished_lines(unfinished: &[FailedSession]) -> Vec<String> {
    let mut by_arm: BTreeMap<&str, BTreeMap<String, u64>> = BTreeMap::new();
    for f in unfinished {
        let kind = f.record.failure.map_or("infra", |k| k.as_str());
        let reason = f
            .record
            .failure_reason
            .as_deref()
            .unwrap_or("no reason recorded");
        *by_arm
            .entry(f.record.key.arm.as_str())
            .or_default()
            // The reason quotes what a CLI or a wrapper wrote.
            .entry(format!("{kind}: {}", crate::terminal::line(reason)))
            .or_insert(0) += 1;
    }
    by_arm
        .into_iter()
        .map(|(arm, reasons)| {
            let n: u64 = reasons.values().sum();
            let grouped: Vec<String> = reasons
                .into_iter()
                .map(|(reason, k)| format!("{k} × {reason}"))
                .collect();
            format!(
                "warning: arm '{arm}': {n} trial{} could not run ({})",
                if n == 1 { "" } else { "s" },
                grouped.join("; ")
            )
        })
        .collect()
}

/// Runs `plan` into `writer`'s directory, then writes the tables and the summary files.
/// `finished_of_arm`: trials per arm an earlier process already recorded (resume).
pub fn drive(
    plan: &Plan,
    finished_of_arm: &BTreeMap<String, u64>,
    mut writer: RunWriter,
    options: DriveOptions,
) -> Result<Driven> {
    let out = writer.dir().clone();
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
        finished_before: already as usize,
        run_dir: out.clone(),
        keep_repos: writer.manifest().keep_repos,
        infra: plan
            .suite_source()
            .map_or_else(Default::default, |s| s.infra),
        prior_attempts: crate::store::prior_attempts(&out)?,
    };
    let outcome = {
        let mut sink = Fanout::new().with(&mut writer).with(&mut progress);
        if options.session_table {
            sink = sink.with(&mut table);
        }
        execute(plan, &run_options, &mut sink, start)
    };
    let recorded = |out: &RunDir| -> Result<usize> {
        Ok(crate::store::read_jsonl::<crate::record::TrialRecord>(&out.trials_jsonl())?.len())
    };
    let results = match outcome {
        Ok(results) => results,
        Err(Error::Cancelled) => {
            return Err(Error::Interrupted {
                finished: recorded(&out)?,
                run_dir: out.path().to_path_buf(),
                planned,
            });
        }
        Err(Error::Halted { cause }) => {
            // What did run is reported as after any run (show, report, compare and
            // report.html read these), and the verdict names the arms whose trials
            // could not run; the run stays incomplete (exit 3, `resume` finishes it).
            crate::store::write_tables(&out, &writer.manifest().arms)?;
            let summary = write_summary(&out, None, DEFAULT_CONFIDENCE)?;
            crate::report::html::write_run_html(&out, &summary)?;
            return Err(Error::Stopped {
                finished: recorded(&out)?,
                run_dir: out.path().to_path_buf(),
                cause,
                planned,
                unfinished: unfinished_lines(&crate::store::unfinished_trials(&out)?),
            });
        }
        Err(e) => return Err(e),
    };
    let summary = write_summary(&out, None, DEFAULT_CONFIDENCE)?;
    crate::report::html::write_run_html(&out, &summary)?;
    let mut warnings = unusable_arm_warnings(&summary);
    warnings.extend(
        summary
            .attempts
            .agent_failure_lines()
            .into_iter()
            .map(|line| format!("warning: {line}")),
    );
    Ok(Driven {
        summary,
        results,
        elapsed: start.elapsed(),
        unfinished: crate::store::unfinished_trials(&out)?,
        warnings,
    })
}

/// A warning for every arm none of whose sessions is usable (all ended in `error`), so
/// that a run whose agent never started cannot pass for a result.
pub fn unusable_arm_warnings(summary: &Summary) -> Vec<String> {
    summary
        .unusable_arms()
        .iter()
        // `report` reads arm names from a run's tables, which a user may bring.
        .map(|arm| {
            format!(
                "warning: arm with no usable sessions: {}",
                crate::terminal::line(arm)
            )
        })
        .collect()
}
