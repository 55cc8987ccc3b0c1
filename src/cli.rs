//! Command-line interface: the subcommands (their arguments live with the commands, in
//! `cmd::args`) and dispatch to them.

use clap::{CommandFactory, Parser, Subcommand};

use crate::cmd;
use crate::cmd::args::*;
use crate::error::Result;

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
    #[command(after_help = cmd::examples::RUN)]
    Run(RunArgs),
    /// Continue an interrupted run; finished trials are kept.
    #[command(after_help = cmd::examples::RESUME)]
    Resume(ResumeArgs),
    /// Combine the shards of one run into one results directory.
    #[command(after_help = cmd::examples::MERGE)]
    Merge(MergeArgs),
    /// Check a suite, its tasks and arms without running anything.
    #[command(after_help = cmd::examples::VALIDATE)]
    Validate(ValidateArgs),
    /// Whether tasks can measure: each feature's check before any work, after its gold
    /// and with only what it declares it needs, repeated, timed; exit 1 on a problem.
    #[command(after_help = cmd::examples::CHECK_TASK)]
    CheckTask(CheckTaskArgs),
    /// Replay one recorded trace against a task as one trial; writes a results directory.
    #[command(after_help = cmd::examples::REPLAY)]
    Replay(ReplayArgs),
    /// Convert other agents' transcripts (Claude Code, Codex, aider...: the formats are
    /// its subcommands) into a trace for `replay`.
    #[command(after_help = cmd::examples::IMPORT)]
    Import(ImportArgs),
    /// (Re)write summary.csv, summary.json, summary.md and plots/ of a results directory
    /// and print one of them.
    #[command(after_help = cmd::examples::REPORT)]
    Report(ReportArgs),
    /// A run's trials one line each, or one trial's sessions with the evidence behind
    /// every count.
    #[command(after_help = cmd::examples::SHOW)]
    Show(ShowArgs),
    /// Write a run in a format other tools read: ATIF trajectories (one per session) or
    /// Inspect AI eval logs (one per arm).
    #[command(after_help = cmd::examples::EXPORT)]
    Export(ExportArgs),
    /// Compare two runs metric by metric; exit 1 when the new run regressed.
    #[command(after_help = cmd::examples::COMPARE)]
    Compare(CompareArgs),
    /// Trend of every metric per arm by ISO week over all runs under a results root.
    #[command(after_help = cmd::examples::WEEKLY)]
    Weekly(WeeklyArgs),
    /// Sessions per arm needed to detect rate p1 vs p2 (two-sided, Cohen's h); with
    /// --sequential also the maximum and expected sessions of a design that looks early.
    #[command(after_help = cmd::examples::POWER)]
    Power(PowerArgs),
    /// Print the usage report an agent CLI's captured output gives, as the JSON object
    /// of $LOOPBENCH_USAGE_FILE (for the agent wrappers in scripts/agents/).
    #[command(after_help = cmd::examples::USAGE)]
    Usage(UsageArgs),
    /// Run one session of the simulated agent as an external process (a command agent
    /// for `run`: `program = "loopbench"`, `args = ["sim-agent", "--suite", DIR]`).
    #[command(after_help = cmd::examples::SIM_AGENT)]
    SimAgent(SimAgentArgs),
    /// Serve one session of a scripted model on 127.0.0.1 (Anthropic Messages, OpenAI
    /// Responses and Chat Completions), optionally around an agent CLI pointed at it: a
    /// dry run of a real agent without an API key.
    #[command(after_help = cmd::examples::MOCK_MODEL)]
    MockModel(MockModelArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) on stdout.
    #[command(after_help = cmd::examples::COMPLETIONS)]
    Completions(CompletionsArgs),
    /// Print the man page loopbench(1) (roff) on stdout, or write every page into a
    /// directory.
    #[command(after_help = cmd::examples::MAN)]
    Man(ManArgs),
    /// Internal: runs one agent session so that nothing it started outlives it.
    #[command(hide = true)]
    Supervise(SuperviseArgs),
    /// Internal: inside a sandbox, runs the checks of one batch one after another.
    #[command(hide = true, name = crate::sandbox::BATCH_SUPERVISOR)]
    BatchSupervise(BatchSuperviseArgs),
    /// Internal: inside a sandbox, relays the agent's connections to the harness's
    /// proxy, which reaches only what the arm declares.
    #[command(hide = true)]
    NetRelay(NetRelayArgs),
}

/// Runs the parsed command and returns its exit code.
pub fn dispatch(cli: Cli) -> Result<i32> {
    match cli.command {
        Command::Run(args) => cmd::run::run(&args),
        Command::Resume(args) => cmd::resume::run(&args),
        Command::Merge(args) => cmd::merge::run(&args),
        Command::Validate(args) => cmd::validate::run(&args),
        Command::CheckTask(args) => cmd::check_task::run(&args),
        Command::Replay(args) => cmd::replay::run(&args),
        Command::Import(args) => cmd::import::run(&args),
        Command::Report(args) => cmd::report::run(&args),
        Command::Show(args) => cmd::show::run(&args),
        Command::Export(args) => cmd::export::run(&args),
        Command::Compare(args) => cmd::compare::run(&args),
        Command::Weekly(args) => cmd::weekly::run(&args),
        Command::Power(args) => cmd::power::run(&args),
        Command::Usage(args) => cmd::usage::run(&args),
        Command::SimAgent(args) => cmd::sim_agent::run(&args),
        Command::MockModel(args) => cmd::mock_model::run(&args),
        Command::Completions(args) => cmd::shell::completions(&args, Cli::command()),
        Command::Man(args) => cmd::shell::man(&args, Cli::command()),
        Command::Supervise(args) => Ok(crate::agent::command::supervise::supervise(
            &args.command[0],
            &args.command[1..],
            &args.status,
        )),
        Command::BatchSupervise(args) => {
            Ok(crate::sandbox::supervise_batch(&args.dir, &args.switch))
        }
        Command::NetRelay(args) => {
            crate::sandbox::net::relay(&args.socket, args.direct_loopback, &args.command)
        }
    }
}
