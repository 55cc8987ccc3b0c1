//! Which aider sessions an import reads: every session of each history file given (a
//! directory means every `.aider.chat.history.md` under it), in the order given, a
//! file's sessions in the order aider wrote them. aider names files relative to the
//! repository's root and runs commands there; `--root` (the repository's path on the
//! recording machine) makes absolute paths relative and rewrites commands that name it.

use std::path::{Path, PathBuf};

use super::{history, map};
use crate::error::{Error, Result};
use crate::import::emit::Emitter;
use crate::import::session::{Imported, ImportedSession, expand, require_sessions};
use crate::import::tally::Tally;

/// The name aider gives its chat history.
const HISTORY: &str = ".aider.chat.history.md";

/// Imports the aider histories `inputs` (files, or directories holding them).
pub fn import(inputs: &[PathBuf], root: Option<&str>) -> Result<Imported> {
    let mut imported = Imported::default();
    for input in inputs {
        let files = expand(input, is_history)?;
        if files.is_empty() {
            return Err(Error::BadInput(format!(
                "'{}' holds no {HISTORY}",
                input.display()
            )));
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
