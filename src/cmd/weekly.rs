//! `loopbench weekly RESULTS_ROOT`: weekly trend tables and plots over many runs.

use std::time::SystemTime;

use super::args::{WeeklyArgs, WeeklyFormat};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::report::compare::Rule;
use crate::report::export::export_text;
use crate::report::weekly::build;

use super::output::{print, print_for_reader};

/// Runs the command: writes weekly.csv, weekly.json, weekly.md and plots/ (and
/// weekly.html with `--html`) and prints the file `--format` names.
/// Flagged regressions are part of the report, not an exit code: it exits 0 with any
/// number of them (use `compare` as a gate). A root with no usable run is bad input
/// (exit 2), as is a run with a row that does not fit the record format.
pub fn run(args: &WeeklyArgs) -> Result<i32> {
    if !(args.confidence > 0.0 && args.confidence < 1.0) {
        return Err(Error::BadInput(format!(
            "--confidence must be between 0 and 1 (exclusive), got {}",
            args.confidence
        )));
    }
    let rule = Rule {
        max_increase: args.max_increase,
        alpha: args.alpha,
    };
    let weekly = build(
        &args.results_root,
        args.since,
        SystemTime::now(),
        rule,
        args.confidence,
    )?;
    for reason in &weekly.skipped {
        eprintln!("warning: skipped: {}", crate::terminal::line(reason));
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| args.results_root.join("weekly"));
    crate::store::check_output_dir(&out)?;
    weekly.write(&out)?;
    if args.html {
        crate::report::html::write_weekly_html(&out, &weekly)?;
    }
    let doc = weekly.document();
    match args.format {
        WeeklyFormat::Md => print_for_reader(&doc.markdown)?,
        WeeklyFormat::Csv => print(&export_text(&doc, "csv")?)?,
        WeeklyFormat::Json => print(&export_text(&doc, "json")?)?,
    }
    eprintln!("weekly report written to {}", out.display());
    Ok(exit_code::OK)
}
