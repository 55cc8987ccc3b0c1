//! `loopbench usage claude|codex|aider CAPTURE`: the usage report of an agent CLI's
//! captured output, as the JSON object an agent wrapper writes to
//! `$LOOPBENCH_USAGE_FILE` ([`crate::agent::command::cli_usage`]).

use super::args::UsageArgs;
use crate::agent::command::cli_usage;
use crate::error::{Error, Result};
use crate::exit_code;

use super::output::print;

/// Runs the command: one line of JSON on stdout. A capture that cannot be read is bad
/// input (exit 2); bytes that are not UTF-8 are replaced.
pub fn run(args: &UsageArgs) -> Result<i32> {
    let bytes = std::fs::read(&args.capture).map_err(|e| {
        Error::BadInput(format!(
            "cannot read capture '{}': {e}",
            args.capture.display()
        ))
    })?;
    let mut report = cli_usage::parse(args.format, &String::from_utf8_lossy(&bytes));
    if let Some(printed) = &args.printed {
        let bytes = std::fs::read(printed).map_err(|e| {
            Error::BadInput(format!(
                "cannot read --printed capture '{}': {e}",
                printed.display()
            ))
        })?;
        report.failure = report
            .failure
            .or_else(|| cli_usage::printed_failure(&String::from_utf8_lossy(&bytes)));
    }
    print(&format!("{}\n", report.to_json()))?;
    Ok(exit_code::OK)
}
