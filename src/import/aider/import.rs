//! Which aider sessions an import reads: every session of each history file given (a
//! directory means every `.aider.chat.history.md` under it), in the order given, a
//! file's sessions in the order aider wrote them. aider names files relative to the
//! repository's root and runs commands there; `--root` (the repository's path on the
//! recording machine) makes absolute paths relative and rewrites commands that name it.

use std::path::{Path, PathBuf};

use super::history::AIDER_HEADER;
use super::{history, map};
use crate::error::{Result, TranscriptError};
use crate::import::emit::Emitter;
use crate::import::importer::{Importer, Recognize, SniffedLine};
use crate::import::session::{Imported, ImportedSession, expand, require_sessions};
use crate::import::tally::Tally;

/// `loopbench import aider`.
pub const IMPORTER: Importer = Importer {
    name: "aider",
    summary: "aider chat histories",
    one: "an aider chat history",
    about: "aider chat histories (.aider.chat.history.md): a session at each \"# aider chat \
            started at\"; edits applied where aider confirmed them, shell commands it ran",
    examples: "\
Examples:
  loopbench import aider tests/data/aider/latefees/.aider.chat.history.md --out latefees-aider.jsonl
  loopbench import aider ~/src/myproject/.aider.chat.history.md --root ~/src/myproject > myproject.jsonl",
    reads: "`.aider.chat.history.md` (a directory means every one under it); a session at each \
            `# aider chat started at`",
    actions: "SEARCH/REPLACE and whole-file blocks where \"Applied edit to PATH\" confirms them \
              (a block aider reports as not matching: a `skip`); commands aider ran \
              (`Running CMD`) or the user did (`/run`, `!`, `/test`, `/git`); aider's commits \
              and `/undo`; the \"Tokens: ... Cost: ...\" lines as usage",
    fixture: "tests/data/aider/latefees/.aider.chat.history.md",
    captures: None,
    recognize: Recognize {
        file_name: is_markdown,
        line: is_header,
        document: None,
    },
    import,
};

/// A file a history may be in (aider's own name, or another Markdown file).
fn is_markdown(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "md")
}

/// The line that starts a session.
fn is_header(line: SniffedLine) -> bool {
    matches!(line, SniffedLine::Text(text) if text.starts_with(AIDER_HEADER))
}

/// The name aider gives its chat history.
const HISTORY: &str = ".aider.chat.history.md";

/// Imports the aider histories `inputs` (files, or directories holding them).
pub fn import(inputs: &[PathBuf], root: Option<&str>) -> Result<Imported> {
    let mut imported = Imported::default();
    for input in inputs {
        let files = expand(input, is_history)?;
        if files.is_empty() {
            return Err(TranscriptError::HoldsNone {
                dir: input.clone(),
                expected: HISTORY.into(),
            }
            .into());
        }
        for file in files {
            for session in history::read(&file, &mut imported.notes)? {
                let mut tally = Tally::default();
                let name = file.display().to_string();
                let mut out =
                    Emitter::new(root, &mut imported.known, &mut tally, &mut imported.notes);
                let (usage, status) = map::map_session(&session, &name, &mut out);
                let mapped = out.finish();
                imported.push(ImportedSession {
                    lines: mapped.lines,
                    divergent: mapped.divergent,
                    usage,
                    status,
                    source: format!(
                        "aider chat started at {} ({}:{})",
                        session.started, name, session.line
                    ),
                    tally,
                    n: None,
                });
            }
        }
    }
    require_sessions(&imported, inputs)?;
    Ok(imported)
}

fn is_history(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == HISTORY)
}
