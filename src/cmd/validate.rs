//! `loopbench validate SUITE`: checks a suite, its tasks and arms without running.

use std::io::Write;

use super::args::ValidateArgs;
use crate::error::{IoContext, Result};
use crate::exit_code;
use crate::suite::Suite;

/// Runs the command; returns the exit code (errors carry exit code 2).
pub fn run(args: &ValidateArgs) -> Result<i32> {
    let suite = Suite::load(&args.suite)?;
    print_warnings(suite.warnings());
    // A suite that cannot run on this machine (its agent program or bwrap missing) is
    // not valid here.
    let all: Vec<usize> = (0..suite.arms.len()).collect();
    crate::agent::command::preflight(&suite, &all)?;
    let trials = suite.arms.len() * suite.tasks.len() * suite.replicates as usize;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "suite '{}' is valid: {} arms x {} tasks x {} replicates = {} trials (baseline '{}')",
        suite.name,
        suite.arms.len(),
        suite.tasks.len(),
        suite.replicates,
        trials,
        suite.baseline
    )
    .and_then(|()| {
        for task in &suite.tasks {
            writeln!(out, "  task {}: {} features", task.name, task.features.len())?;
        }
        for arm in &suite.arms {
            writeln!(
                out,
                "  arm {}: agent = \"{}\" (driver {}), list_format = \"{}\", strategy = \"{}\", initializer = {}, ledger = \"{}\", max_sessions = {}, session_turns = {}, crash_rate = {}",
                arm.name,
                arm.agent,
                suite.agent_of(arm).name(),
                arm.list_format,
                arm.strategy.as_str(),
                arm.initializer,
                arm.ledger.as_str(),
                arm.max_sessions,
                arm.session_turns,
                arm.crash_rate
            )?;
        }
        Ok(())
    })
    .io_context(|| "cannot print".to_string())?;
    Ok(exit_code::OK)
}

/// Prints what loading a suite or task warned about on stderr, one `warning:` line each.
pub(crate) fn print_warnings<'a>(warnings: impl IntoIterator<Item = &'a str>) {
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
}
