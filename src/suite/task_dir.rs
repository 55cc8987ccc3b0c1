//! Where a task is read from: its directory, made safe to read (no file leading out of
//! it), and `task.toml` read in the layout it is written in, loopbench's own or
//! Harbor's.

use std::path::Path;

use super::toml_error::config_error;
use super::{Task, confined, harbor};
use crate::error::{Error, IoContext, Result};

impl Task {
    /// Loads `dir/task.toml` (or the file itself when `path` names it) and validates it.
    pub fn load(path: &Path) -> Result<Task> {
        let (dir, file) = if path.is_dir() {
            (path.to_path_buf(), path.join("task.toml"))
        } else if path.file_name().is_some_and(|n| n == "task.toml") {
            let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
            (dir, path.to_path_buf())
        } else {
            return Err(Error::BadInput(format!(
                "task '{}' not found: expected a task directory holding task.toml",
                path.display()
            )));
        };
        // Before anything of the task is read: none of its files may lead outside it.
        let escaping = if dir.is_dir() {
            confined::escaping_link(&dir)?
        } else {
            None
        };
        if let Some(link) = escaping.as_ref().filter(|l| l.rel == "task.toml") {
            return Err(Error::BadInput(format!(
                "{}: a symlink out of the task directory, to '{}': every file of a task \
                 must lie inside it",
                file.display(),
                link.target.display()
            )));
        }
        let text = std::fs::read_to_string(&file)
            .io_context(|| format!("cannot read task file '{}'", file.display()))
            .map_err(|e| match e {
                Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                    Error::BadInput(format!(
                        "task '{}' has no task.toml (looked for '{}')",
                        dir.display(),
                        file.display()
                    ))
                }
                other => other,
            })?;
        if harbor::is_harbor(&dir, &text) {
            if let Some(link) = escaping {
                return Err(config_error(
                    &file,
                    &text,
                    None,
                    format!(
                        "task file '{}' is a symlink out of the task directory, to '{}': \
                         every file of a task must lie inside it",
                        link.rel,
                        link.target.display()
                    ),
                ));
            }
            return harbor::load(dir, &file, &text);
        }
        Task::from_text(dir, &file, &text, escaping)
    }
}
