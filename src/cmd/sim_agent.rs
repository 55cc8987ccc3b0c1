//! `loopbench sim-agent`: the simulated agent as an external process speaking the
//! command driver's contract, so that the command driver can be tested end to end with
//! a real process, and so that a command arm running it reproduces the in-process sim.
//!
//! It runs one session per invocation: the work directory is its cwd, and it reads
//! `LOOPBENCH_SESSION`, `LOOPBENCH_SESSION_KIND`, `LOOPBENCH_ARM`, `LOOPBENCH_TASK`,
//! `LOOPBENCH_TURNS`, `LOOPBENCH_EFFECTS`, `LOOPBENCH_PROMPT_FILE`,
//! `LOOPBENCH_TRIAL_SEED` and, when the harness crashes the session with
//! `crash = "agent"`, `LOOPBENCH_INTERRUPT_AT`. The arm's settings and the task (with
//! the gold files the sim copies) come from `--suite`. What the in-process sim keeps in
//! memory across a trial's sessions (the irreversible actions it took) is kept in
//! `$LOOPBENCH_STATE_DIR/sim-agent.json`. It reports turns, tokens and how the session
//! ended in `$LOOPBENCH_USAGE_FILE`, and prints its ground truth as one JSON line.

use std::io::Write;

use super::args::SimAgentArgs;
use crate::agent::sim::process::run_session;
use crate::error::{IoContext, Result};
use crate::exit_code;

/// Runs one session; returns the exit code.
pub fn run(args: &SimAgentArgs) -> Result<i32> {
    let line = run_session(&args.suite, args.arm.as_deref(), &args.profile)?;
    writeln!(std::io::stdout().lock(), "{line}")
        .io_context(|| "sim-agent: cannot print".to_string())?;
    Ok(exit_code::OK)
}
