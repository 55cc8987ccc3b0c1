//! The `loopbench` binary: parses arguments, runs the command, maps errors to exit codes.

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Before any thread is started: a run's resident size must not grow with its records.
    loopbench::malloc_arenas::limit_malloc_arenas();
    // Before anything is started: what the harness inherited must reach no agent.
    if let Err(err) = loopbench::sandbox::close_inherited_descriptors() {
        eprintln!(
            "error: cannot keep the descriptors this process inherited from what it starts \
             (close_range and /proc/self/fd both failed): {err}"
        );
        return ExitCode::from(u8::try_from(loopbench::exit_code::INTERNAL).unwrap_or(u8::MAX));
    }
    // This binary supervises the batches of checks it runs, inside their sandboxes.
    if let Ok(exe) = std::env::current_exe() {
        loopbench::sandbox::supervise_batches_with(exe);
    }
    let cli = loopbench::cli::Cli::parse();
    let outcome = loopbench::cli::dispatch(cli);
    // Whatever is still in this process's scratch (a trial abandoned by a second
    // Ctrl-C, with its mounts) goes with it.
    loopbench::fsutil::clear_process_scratch();
    let code = match outcome {
        Ok(code) => code,
        Err(err) if err.is_broken_pipe() => loopbench::exit_code::OK,
        Err(err) => {
            // The message can quote what an agent wrote (a trace path, a file name).
            eprintln!(
                "error: {}",
                loopbench::terminal::block(&loopbench::error::with_causes(&err))
            );
            err.exit_code()
        }
    };
    ExitCode::from(u8::try_from(code).unwrap_or(u8::MAX))
}
