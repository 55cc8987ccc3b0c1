//! `loopbench completions SHELL` and `loopbench man`: the shell completion script and
//! the roff man page, both generated from the same clap definition as `--help`, so that
//! they can never list a flag the binary does not have.

use super::args::{CompletionsArgs, ManArgs};
use super::output::print;
use crate::error::{IoContext, Result};
use crate::exit_code;

/// Prints the completion script for `args.shell` on stdout. `command` is the whole
/// command line's definition (the command line layer above hands it down).
pub fn completions(args: &CompletionsArgs, command: clap::Command) -> Result<i32> {
    let mut command = without_hidden_subcommands(command);
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "loopbench", &mut script);
    print(&String::from_utf8_lossy(&script))?;
    Ok(exit_code::OK)
}

/// `command` without its hidden subcommands (the internal `supervise`, `batch-supervise`
/// and `net-relay`): the completion generators offer every subcommand they are given,
/// hidden or not. clap cannot remove a subcommand, so the top level is built again from
/// the visible ones, its arguments and its version.
fn without_hidden_subcommands(command: clap::Command) -> clap::Command {
    let visible: Vec<clap::Command> = command
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    clap::Command::new("loopbench")
        .version(env!("CARGO_PKG_VERSION"))
        .args(command.get_arguments().cloned())
        .subcommands(visible)
}

/// Prints the man page loopbench(1) on stdout, or with `--out DIR` writes it and one
/// page per subcommand (loopbench-run.1, ...; the pages its SUBCOMMANDS section names)
/// into DIR. `command` is the whole command line's definition.
pub fn man(args: &ManArgs, command: clap::Command) -> Result<i32> {
    match &args.out {
        None => {
            let mut page = Vec::new();
            clap_mangen::Man::new(command)
                .render(&mut page)
                .io_context(|| "cannot render the man page".to_string())?;
            print(&String::from_utf8_lossy(&page))?;
        }
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .io_context(|| format!("cannot create '{}'", dir.display()))?;
            clap_mangen::generate_to(command, dir)
                .io_context(|| format!("cannot write the man pages into '{}'", dir.display()))?;
        }
    }
    Ok(exit_code::OK)
}
