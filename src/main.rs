//! The `loopbench` binary: parses arguments, runs the command, maps errors to exit codes.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = loopbench::cli::Cli::parse();
    let code = match loopbench::cli::dispatch(cli) {
        Ok(code) => code,
        Err(err) if err.is_broken_pipe() => loopbench::exit_code::OK,
        Err(err) => {
            // The message can quote what an agent wrote (a trace path, a file name).
            eprintln!("error: {}", loopbench::terminal::block(&with_causes(&err)));
            err.exit_code()
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX))
}

/// The message and every cause under it ("cannot write 'x': No such file or
/// directory"), so that an I/O failure says what the system said.
fn with_causes(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        let more = c.to_string();
        if !text.ends_with(&more) {
            text = format!("{text}: {more}");
        }
        cause = c.source();
    }
    text
}
