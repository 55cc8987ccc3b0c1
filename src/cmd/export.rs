//! `loopbench export RUN_DIR --to FORMAT [--out DIR]`: a run written in a format other
//! tools read (`crate::export`), from its records alone; prints where it went.

use super::args::ExportArgs;
use crate::error::Result;
use crate::exit_code;
use crate::export::{RunRecords, export_run};
use crate::store::open_run_dir;

/// Runs the command; returns the exit code.
pub fn run(args: &ExportArgs) -> Result<i32> {
    let dir = open_run_dir(&args.run_dir);
    let mut records = RunRecords::open(&dir)?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| dir.export(args.to.name()));
    let exported = export_run(&mut records, args.to, &out)?;
    super::output::print(&format!(
        "{} trials of {} arms as {}: {} files in {}\n",
        exported.trials,
        exported.arms,
        args.to.name(),
        exported.files,
        exported.out.display()
    ))?;
    Ok(exit_code::OK)
}
