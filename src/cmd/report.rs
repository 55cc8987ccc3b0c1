//! `loopbench report RUN_DIR`: rewrites the summary files of a run (and report.html
//! with `--html`) and prints the verdict and where the rest is, or one summary file.

use super::args::{ReportArgs, ReportFormat};
use super::output::{print, print_for_reader, verdict_and_paths};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::report::html::write_run_html;

use super::output::say;
use crate::report::write_summary;
use crate::store::RunLock;
use crate::study::drive::unusable_arm_warnings;
use crate::study::sequential::sequential_summary;

/// Runs the command; returns the exit code.
pub fn run(args: &ReportArgs) -> Result<i32> {
    if args.full && args.format != ReportFormat::Md {
        return Err(Error::BadInput(
            "--full prints all of summary.md; it goes with --format md only".into(),
        ));
    }
    // The summary files are rewritten: not while another process writes the run.
    let lock = RunLock::acquire(&args.run_dir)?;
    let run_dir = lock.dir();
    let summary = write_summary(run_dir, args.baseline.as_deref(), args.confidence)?;
    // A sequential run's summary.md ends with its looks.
    let sequential = sequential_summary(run_dir, &summary)?;
    if let Some(md) = &sequential {
        crate::fsutil::write_atomic(&run_dir.summary_md(), md.as_bytes())?;
    }
    if args.html {
        write_run_html(run_dir, &summary)?;
    }
    match args.format {
        ReportFormat::Md if args.full => {
            print_for_reader(&sequential.unwrap_or_else(|| summary.to_markdown()))?;
        }
        ReportFormat::Md => print_for_reader(&verdict_and_paths(&summary, run_dir))?,
        ReportFormat::Csv => print(&summary.to_csv()?)?,
        ReportFormat::Json => print(&summary.to_json()?)?,
    }
    say(&unusable_arm_warnings(&summary));
    Ok(exit_code::OK)
}
