//! What the commands print: all of `summary.md` or the verdict and where the rest of a
//! run is, the warnings of a suite and of a finished run, which trials could not run,
//! and text to stdout; and how `run`, `replay` and `resume` drive their plan before
//! they print.

use std::collections::BTreeMap;
use std::io::Write;

use crate::error::{IoContext, Result};

use crate::report::power::underpowered_arms;

use crate::report::{Summary, Verdict};
use crate::run_dir::{PLOTS_DIR, RunDir, SUMMARY_JSON, TRIALS_CSV};
use crate::runner::Plan;
use crate::store::RunWriter;
use crate::study::drive::{DriveOptions, Driven, drive};
use crate::study::sequential::sequential_summary;

/// What a finished `run`, `replay` or `resume` prints: all of `summary.md` (a sequential
/// run's section included) with `full`, else the verdict and where the rest is.
pub(crate) fn print_finished(summary: &Summary, run_dir: &RunDir, full: bool) -> Result<()> {
    if full {
        let md = sequential_summary(run_dir, summary)?.unwrap_or_else(|| summary.to_markdown());
        print_for_reader(&md)
    } else {
        print_for_reader(&verdict_and_paths(summary, run_dir))
    }
}

/// What `run` and `report` print: the verdict, then where every table, plot and
/// record of the run is. Fits one screen; `--full` prints summary.md instead.
pub(crate) fn verdict_and_paths(summary: &Summary, run_dir: &RunDir) -> String {
    let mut out = Verdict::of(summary).to_text();
    let at = |path: std::path::PathBuf| path.display().to_string();
    out += "\nThe rest of the run:\n";
    out += &format!(
        "  {}  every table (k/n, intervals, p, by task); --full prints it\n",
        at(run_dir.summary_md())
    );
    if run_dir.report_html().exists() {
        out += &format!(
            "  {}  the tables, plots and every trial's sessions, in a browser\n",
            at(run_dir.report_html())
        );
    }
    out += &format!(
        "  {}, {SUMMARY_JSON}, {PLOTS_DIR}/  the same numbers for programs, and plots\n",
        at(run_dir.summary_csv()),
    );
    out += &format!(
        "  {}, {TRIALS_CSV}  one row per session and per trial\n",
        at(run_dir.sessions_csv()),
    );
    out
}

/// Writes text for a person to stdout (a verdict, a Markdown table), with control and
/// invisible characters escaped ([`crate::terminal::block`]): it quotes names a run's
/// files hold, and an arm or task named with a zero-width space or a terminal sequence
/// in a forged table must print as what it is. Files and machine formats (CSV, JSON)
/// are written with [`print`].
pub(crate) fn print_for_reader(text: &str) -> Result<()> {
    print(&crate::terminal::block(text))
}

/// Writes `text` to stdout. A closed pipe comes back as an I/O error of kind
/// `BrokenPipe`, which `main` turns into exit 0.
pub(crate) fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .io_context(|| "cannot write to stdout".to_string())
}

/// Warns on stderr, per arm, when its premature-done sessions are too few to detect
/// the suite's `min_detectable_effect`.
pub(crate) fn warn_underpowered(summary: &Summary, effect: f64) {
    for warning in underpowered_arms(summary, effect) {
        eprintln!("warning: {warning}");
    }
}

/// How `run`, `replay` and `resume` drive a plan (`--jobs`, `--quiet`) and how much of
/// its summary they print (`--full`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Finish {
    /// How the study drives the plan.
    pub options: DriveOptions,
    /// `--full`: all of summary.md, not the verdict.
    pub full: bool,
}

impl Finish {
    /// `--jobs`, `--quiet` and `--full` as a command was given them.
    pub(crate) fn of(jobs: Option<usize>, quiet: bool, full: bool) -> Finish {
        Finish {
            options: DriveOptions {
                jobs,
                quiet,
                session_table: false,
            },
            full,
        }
    }

    /// Drives `plan` into `writer`'s directory; returns what it left and the directory.
    pub(crate) fn drive(
        self,
        plan: &Plan,
        finished_of_arm: &BTreeMap<String, u64>,
        writer: RunWriter,
    ) -> Result<(Driven, RunDir)> {
        let out = writer.dir().clone();
        let driven = said_before_stop(drive(plan, finished_of_arm, writer, self.options))?;
        say(&driven.warnings);
        Ok((driven, out))
    }
}

/// Says each line on stderr.
pub(crate) fn say(lines: &[String]) {
    for line in lines {
        eprintln!("{line}");
    }
}

/// Says each warning of a suite or task on stderr.
pub(crate) fn print_warnings<'a>(warnings: impl IntoIterator<Item = &'a str>) {
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
}

/// `result`, after saying, when it is a stopped run's error, which trials could not run
/// (the error itself says why the run stopped and how to go on).
pub(crate) fn said_before_stop<T>(result: Result<T>) -> Result<T> {
    if let Err(crate::error::Error::Stopped { unfinished, .. }) = &result {
        say(unfinished);
    }
    result
}
