//! The `loopbench` binary: parses arguments, runs the command, maps errors to exit codes.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = loopbench::cli::Cli::parse();
    let code = match loopbench::cli::dispatch(cli) {
        Ok(code) => code,
        Err(err) if err.is_broken_pipe() => loopbench::exit_code::OK,
        Err(err) => {
            eprintln!("error: {err}");
            err.exit_code()
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX))
}
