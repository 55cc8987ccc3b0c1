//! Command-line interface: argument types and dispatch to the commands.

use std::path::PathBuf;

use clap::{Parser, Subcommand};

use crate::cmd;
use crate::error::Result;
use crate::feature_list::ListFormat;

/// loopbench: batch A/B harness for long-running coding-agent loops.
#[derive(Debug, Parser)]
#[command(name = "loopbench", version, about, long_about = None)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run every trial of a suite and write a results directory.
    Run(RunArgs),
    /// Check a suite, its tasks and arms without running anything.
    Validate(ValidateArgs),
    /// Replay one recorded trace against a task as one trial; writes a results directory.
    Replay(ReplayArgs),
    /// Run one session of the simulated agent as an external process (a command agent
    /// for `run`: `program = "loopbench"`, `args = ["sim-agent", "--suite", DIR]`).
    SimAgent(SimAgentArgs),
}

/// Arguments of `loopbench run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The suite directory (holding suite.toml).
    pub suite: PathBuf,
    /// Only these arms, comma-separated.
    #[arg(long)]
    pub arms: Option<String>,
    /// Trials per (arm, task), overriding the suite.
    #[arg(long)]
    pub replicates: Option<u32>,
    /// Suite seed, overriding the suite.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Trials at once [default: min(4, cores)].
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Results directory [default: results/<suite>/<run-id>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No progress display.
    #[arg(long)]
    pub quiet: bool,
}

/// Arguments of `loopbench validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The suite directory (holding suite.toml).
    pub suite: PathBuf,
}

/// Arguments of `loopbench replay`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The trace (JSONL, one action per line).
    pub trace: PathBuf,
    /// The task directory the trace ran against (holding task.toml).
    #[arg(long)]
    pub task: PathBuf,
    /// Feature-list format the trial starts with.
    #[arg(long, value_parser = parse_format)]
    pub format: ListFormat,
    /// Results directory [default: results/replay/<run-id>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Arm name written in the records.
    #[arg(long, default_value = "replay")]
    pub arm: String,
    /// Keep the trial's work directory and print where it is.
    #[arg(long)]
    pub keep_work: bool,
}

/// Arguments of `loopbench sim-agent`.
#[derive(Debug, clap::Args)]
pub struct SimAgentArgs {
    /// The suite whose arm and task the session belongs to (settings and gold files).
    #[arg(long)]
    pub suite: PathBuf,
    /// The arm whose settings to follow [default: $LOOPBENCH_ARM].
    #[arg(long)]
    pub arm: Option<String>,
    /// The sim behaviour profile.
    #[arg(long, default_value = "calibrated")]
    pub profile: String,
}

fn parse_format(s: &str) -> std::result::Result<ListFormat, String> {
    s.parse()
}

/// Runs the parsed command and returns its exit code.
pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run(args) => cmd::run::run(&args),
        Command::Validate(args) => cmd::validate::run(&args),
        Command::Replay(args) => cmd::replay::run(&args),
        Command::SimAgent(args) => cmd::sim_agent::run(&args),
    }
}
