//! Where a task is read from: its directory, made safe to read (no file leading out of
//! it), and `task.toml` read in the layout it is written in, loopbench's own or
//! Harbor's.

use std::path::Path;

use super::toml_error::config_error;
use super::{Task, confined, harbor};
use crate::error::{Error, IoContext, Result, SuiteFileError};

impl Task {
    /// Loads `dir/task.toml` (or the file itself when `path` names it) and validates it.
    pub fn load(path: &Path) -> Result<Task> {
        let (dir, file) = if path.is_dir() {
            (path.to_path_buf(), path.join("task.toml"))
        } else if path.file_name().is_some_and(|n| n == "task.toml") {
            let dir = path.parent().unwrap_or(Path::new(".")).to_path_buf();
            (dir, path.to_path_buf())
        } else {
            return Err(SuiteFileError::TaskNotFound {
                path: path.to_path_buf(),
            }
            .into());
        };
        // Before anything of the task is read: none of its files may lead outside it.
        let escaping = if dir.is_dir() {
            confined::escaping_link(&dir)?
        } else {
            None
        };
        if let Some(link) = escaping.as_ref().filter(|l| l.rel == "task.toml") {
            return Err(SuiteFileError::TaskFileOutside {
                file,
                target: link.target.clone(),
            }
            .into());
        }
        let text = std::fs::read_to_string(&file)
            .io_context(|| format!("cannot read task file '{}'", file.display()))
            .map_err(|e| match e {
                Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                    SuiteFileError::NoTaskFile {
                        dir: dir.clone(),
                        file: file.clone(),
                    }
                    .into()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suite::Suite;

    fn refusal(err: Error) -> SuiteFileError {
        assert_eq!(err.exit_code(), crate::exit_code::BAD_INPUT);
        match err {
            Error::SuiteFile(e) => e,
            other => panic!("not a suite or task file's error: {other:?}"),
        }
    }

    #[test]
    fn a_path_without_a_suite_or_a_task_is_refused_naming_what_is_missing() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("missing");
        assert_eq!(
            refusal(Suite::load(&missing).unwrap_err()),
            SuiteFileError::SuiteNotFound {
                path: missing.clone()
            }
        );
        assert_eq!(
            refusal(Task::load(&missing.join("notes.md")).unwrap_err()),
            SuiteFileError::TaskNotFound {
                path: missing.join("notes.md")
            }
        );
        let empty = tmp.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert_eq!(
            refusal(Task::load(&empty).unwrap_err()),
            SuiteFileError::NoTaskFile {
                dir: empty.clone(),
                file: empty.join("task.toml")
            }
        );
        let outside = tmp.path().join("elsewhere.toml");
        std::fs::write(&outside, "name = \"t\"\n").unwrap();
        let linked = tmp.path().join("linked");
        std::fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(&outside, linked.join("task.toml")).unwrap();
        assert!(matches!(
            refusal(Task::load(&linked).unwrap_err()),
            SuiteFileError::TaskFileOutside { file, .. } if file == linked.join("task.toml")
        ));
    }
}
