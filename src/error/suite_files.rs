//! What can be wrong with a suite or a task on disk before its file is parsed: a path
//! that holds neither, a file that cannot be read, a file or a directory the task
//! needs that is not there, a link or a prompt that leads outside. What a parsed file
//! gets wrong is a configuration error with its line (`Error::Config`).

use std::path::PathBuf;

/// A suite or task that cannot be read as one (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SuiteFileError {
    /// The path holds no suite.
    #[error("suite '{}' not found: expected a directory holding suite.toml", path.display())]
    SuiteNotFound {
        /// The path given.
        path: PathBuf,
    },
    /// The suite file cannot be read.
    #[error("cannot read suite file '{}': {reason}", file.display())]
    SuiteUnreadable {
        /// The suite file.
        file: PathBuf,
        /// What failed.
        reason: String,
    },
    /// A prompt template of the suite leads outside its directory.
    #[error(
        "{}: the suite's prompt template leads outside the suite directory ({why}); it must \
         lie inside it",
        path.display()
    )]
    PromptOutside {
        /// The template's path.
        path: PathBuf,
        /// Why it leads outside.
        why: String,
    },
    /// The path names neither a task directory nor a task file.
    #[error("task '{}' not found: expected a task directory holding task.toml", path.display())]
    TaskNotFound {
        /// The path given.
        path: PathBuf,
    },
    /// The task directory has no task file.
    #[error("task '{}' has no task.toml (looked for '{}')", dir.display(), file.display())]
    NoTaskFile {
        /// The task directory.
        dir: PathBuf,
        /// Where the file was looked for.
        file: PathBuf,
    },
    /// The task file is a symlink out of the task directory.
    #[error(
        "{}: a symlink out of the task directory, to '{}': every file of a task must lie \
         inside it",
        file.display(),
        target.display()
    )]
    TaskFileOutside {
        /// The task file.
        file: PathBuf,
        /// Where the link points.
        target: PathBuf,
    },
    /// The task directory cannot be walked.
    #[error("cannot read task directory '{}': {reason}", dir.display())]
    TaskDirUnreadable {
        /// The task directory.
        dir: PathBuf,
        /// What failed.
        reason: String,
    },
    /// The task has no repository to start trials from.
    #[error("task '{}' has no repo/ directory (expected '{}')", dir.display(), repo.display())]
    NoRepo {
        /// The task directory.
        dir: PathBuf,
        /// Where the repository was looked for.
        repo: PathBuf,
    },
    /// `oracle/gold` holds a file where only directories named after features go.
    #[error(
        "{}: expected only directories named after features in oracle/gold, found a file",
        path.display()
    )]
    GoldNotADirectory {
        /// The file.
        path: PathBuf,
    },
    /// `oracle/gold` holds a directory for a feature the task does not have.
    #[error(
        "{}: gold for feature '{feature}', but {} has no [[feature]] with id = \"{feature}\" \
         (expected one of: {})",
        path.display(),
        task_file.display(),
        features.join(", ")
    )]
    GoldForUnknownFeature {
        /// The gold directory.
        path: PathBuf,
        /// Its name.
        feature: String,
        /// The task file.
        task_file: PathBuf,
        /// The task's feature ids.
        features: Vec<String>,
    },
}
