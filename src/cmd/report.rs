//! `loopbench report RUN_DIR`: rewrites the summary files of a run (and report.html
//! with `--html`) and prints the verdict and where the rest is, or one summary file.

use std::io::Write;
use std::path::Path;

use super::args::{ReportArgs, ReportFormat};
use crate::error::{Error, IoContext, Result};
use crate::exit_code;
use crate::report::html::{REPORT_HTML, write_run_html};
use crate::report::summary::{PLOTS_DIR, SUMMARY_CSV, SUMMARY_JSON, SUMMARY_MD};
use crate::report::{Summary, Verdict, write_summary};
use crate::store::{RunLock, SESSIONS_CSV, TRIALS_CSV};

/// Runs the command; returns the exit code.
pub fn run(args: &ReportArgs) -> Result<i32> {
    if args.full && args.format != ReportFormat::Md {
        return Err(Error::BadInput(
            "--full prints all of summary.md; it goes with --format md only".into(),
        ));
    }
    // The summary files are rewritten: not while another process writes the run.
    let _lock = RunLock::acquire(&args.run_dir)?;
    let summary = write_summary(&args.run_dir, args.baseline.as_deref(), args.confidence)?;
    // A sequential run's summary.md ends with its looks.
    let sequential = super::sequential::sequential_summary(&args.run_dir, &summary)?;
    if let Some(md) = &sequential {
        let path = args.run_dir.join(SUMMARY_MD);
        crate::fsutil::write_atomic(&path, md.as_bytes())?;
    }
    if args.html {
        write_run_html(&args.run_dir, &summary)?;
    }
    let text = match args.format {
        ReportFormat::Md if args.full => sequential.unwrap_or_else(|| summary.to_markdown()),
        ReportFormat::Md => verdict_and_paths(&summary, &args.run_dir),
        ReportFormat::Csv => summary.to_csv()?,
        ReportFormat::Json => summary.to_json()?,
    };
    print(&text)?;
    warn_unusable_arms(&summary);
    Ok(exit_code::OK)
}

/// What a finished `run`, `replay` or `resume` prints: all of `summary.md` (a sequential
/// run's section included) with `full`, else the verdict and where the rest is.
pub(crate) fn print_finished(summary: &Summary, run_dir: &Path, full: bool) -> Result<()> {
    if full {
        let md = super::sequential::sequential_summary(run_dir, summary)?
            .unwrap_or_else(|| summary.to_markdown());
        print(&md)
    } else {
        print(&verdict_and_paths(summary, run_dir))
    }
}

/// What `run` and `report` print: the verdict, then where every table, plot and
/// record of the run is. Fits one screen; `--full` prints summary.md instead.
pub(crate) fn verdict_and_paths(summary: &Summary, run_dir: &Path) -> String {
    let mut out = Verdict::of(summary).to_text();
    let at = |file: &str| run_dir.join(file).display().to_string();
    out += "\nThe rest of the run:\n";
    out += &format!(
        "  {}  every table (k/n, intervals, p, by task); --full prints it\n",
        at(SUMMARY_MD)
    );
    if run_dir.join(REPORT_HTML).exists() {
        out += &format!(
            "  {}  the tables, plots and every trial's sessions, in a browser\n",
            at(REPORT_HTML)
        );
    }
    out += &format!(
        "  {}, {}, {}/  the same numbers for programs, and plots\n",
        at(SUMMARY_CSV),
        SUMMARY_JSON,
        PLOTS_DIR
    );
    out += &format!(
        "  {}, {}  one row per session and per trial\n",
        at(SESSIONS_CSV),
        TRIALS_CSV
    );
    out
}

/// Warns on stderr about every arm none of whose sessions is usable (all ended in
/// `error`), so that a run whose agent never started cannot pass for a result.
pub(crate) fn warn_unusable_arms(summary: &crate::report::Summary) {
    for arm in summary.unusable_arms() {
        eprintln!("warning: arm with no usable sessions: {arm}");
    }
}

/// Writes `text` to stdout. A closed pipe comes back as an I/O error of kind
/// `BrokenPipe`, which `main` turns into exit 0.
pub(crate) fn print(text: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .io_context(|| "cannot write to stdout".to_string())
}
