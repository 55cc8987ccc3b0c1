//! The entries of what `aider --message` printed (`--no-pretty`), as the command driver
//! keeps its stdout: only the lines aider prints in a form of its own, "Applied edit to
//! PATH" (an edit block aider applied), "Running COMMAND" (a command it ran; its output
//! goes to the chat, not here) and its report of a SEARCH/REPLACE block that failed to
//! match (a call aider rejected). The model's reply is printed among them with nothing
//! to tell where it begins or ends, so it is left out rather than guessed; a line of
//! the reply or of a test's output in one of those forms reads the same.

use std::io::BufRead;
use std::path::Path;

use super::{Act, EditOp, Trajectory, read_bounded};

/// The report aider prints for each block that failed to match, before its path.
const NO_MATCH: &str =
    "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in ";
/// aider's report of a reply whose blocks it could not apply, before it lists them.
const NOT_CONFORMED: &str = "The LLM did not conform to the edit format.";

/// The entries of the aider output at `path`, read a line at a time.
pub fn read_aider_output(path: &Path) -> Trajectory {
    let Ok(file) = std::fs::File::open(path) else {
        return Trajectory::new();
    };
    let mut out = Trajectory::new();
    // A reply aider said did not conform, whose failed blocks it has not listed yet.
    let mut unlisted = false;
    for line in std::io::BufReader::new(file)
        .split(b'\n')
        .map_while(std::result::Result::ok)
    {
        let line = String::from_utf8_lossy(&line);
        let line = line.trim_end();
        let act = if let Some(path) = line.strip_prefix("Applied edit to ") {
            Act::Edit {
                path: path.to_string(),
                op: EditOp::Edit,
                old: None,
                new: None,
                failed: None,
            }
        } else if let Some(cmd) = line.strip_prefix("Running ") {
            Act::Command {
                cmd: cmd.to_string(),
                cwd: None,
                output: None,
                exit: None,
            }
        } else if let Some(path) = line.strip_prefix(NO_MATCH) {
            unlisted = false;
            rejected(Some(path), &line[3..])
        } else if line == NOT_CONFORMED {
            unlisted = true;
            continue;
        } else if unlisted && line.starts_with("Tokens: ") {
            // The next reply: the one that did not conform listed no block.
            unlisted = false;
            out.push(read_bounded(rejected(None, NOT_CONFORMED)));
            continue;
        } else {
            continue;
        };
        out.push(read_bounded(act));
    }
    if unlisted {
        out.push(read_bounded(rejected(None, NOT_CONFORMED)));
    }
    out
}

/// A block aider rejected: not applied.
fn rejected(path: Option<&str>, reason: &str) -> Act {
    Act::Rejected {
        tool: Some("aider".into()),
        path: path.map(str::to_string),
        reason: reason.to_string(),
        by_agent: true,
    }
}
