//! `loopbench report RUN_DIR`: rewrites the summary files of a run and prints one.

use std::io::Write;

use super::args::{ReportArgs, ReportFormat};
use crate::error::{IoContext, Result};
use crate::exit_code;
use crate::report::write_summary;
use crate::store::RunLock;

/// Runs the command; returns the exit code.
pub fn run(args: &ReportArgs) -> Result<i32> {
    // The summary files are rewritten: not while another process writes the run.
    let _lock = RunLock::acquire(&args.run_dir)?;
    let summary = write_summary(&args.run_dir, args.baseline.as_deref(), args.confidence)?;
    // A sequential run's summary.md ends with its looks.
    let sequential = super::sequential::sequential_summary(&args.run_dir, &summary)?;
    if let Some(md) = &sequential {
        let path = args.run_dir.join(crate::report::summary::SUMMARY_MD);
        crate::store::write_atomic(&path, md.as_bytes())?;
    }
    let text = match args.format {
        ReportFormat::Md => sequential.unwrap_or_else(|| summary.to_markdown()),
        ReportFormat::Csv => summary.to_csv()?,
        ReportFormat::Json => summary.to_json()?,
    };
    print(&text)?;
    warn_unusable_arms(&summary);
    Ok(exit_code::OK)
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
