//! Error types of the engine, each mapped to one exit code.

use std::fmt;
use std::path::PathBuf;

use crate::exit_code;

mod results_dir;
mod sandbox;
mod sim_agent;
mod suite_files;
mod transcripts;

pub use results_dir::{Named, NoUsableRun, ResultsDirError};
pub use sandbox::SandboxError;
pub use sim_agent::SimAgentError;
pub use suite_files::SuiteFileError;
pub use transcripts::{FormatFound, TranscriptError};

/// Everything that can stop a command. Failures of an agent are *data* (recorded in the
/// session records), never an `Error`.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A configuration file (task.toml, suite.toml) does not fit its schema.
    #[error("{file}:{line}:{column}: {message}")]
    Config {
        /// The file that was read.
        file: PathBuf,
        /// 1-based line of the offending text.
        line: usize,
        /// 1-based column of the offending text.
        column: usize,
        /// What was wrong and what was expected.
        message: String,
    },
    /// A line of a line-oriented file (a JSONL record file, a table, a mock model's
    /// script) does not fit its format; a trace's or a transcript's is a
    /// [`TranscriptError`].
    #[error("{file}:{line}: {message}")]
    BadLine {
        /// The file.
        file: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What was wrong and what was expected.
        message: String,
    },
    /// A path given to the harness (a trace action, a task file) would leave the
    /// directory it is confined to.
    #[error("path '{path}' escapes the work directory ({reason})")]
    PathEscape {
        /// The path as it was given.
        path: String,
        /// Why it was rejected: absolute, `..`, or a symlink pointing outside.
        reason: &'static str,
    },
    /// A results directory may not go on from another (shards merged, a sequential
    /// run's next look, a resume): the field that differs, with both values.
    #[error("{0}")]
    NotContinuable(Box<Mismatch>),
    /// A results directory a command cannot use as asked.
    #[error(transparent)]
    ResultsDir(#[from] ResultsDirError),
    /// A suite or task that cannot be read as one.
    #[error(transparent)]
    SuiteFile(#[from] SuiteFileError),
    /// A trace or a transcript that cannot be read as one.
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
    /// The simulated agent's process started without the environment a harness gives
    /// it.
    #[error(transparent)]
    SimAgent(#[from] SimAgentError),
    /// A sandbox or a container engine that failed (boxed: its variants carry
    /// several paths and names, and every `Result` of the harness carries an `Error`).
    #[error(transparent)]
    Sandbox(Box<SandboxError>),
    /// Any other input that does not fit: a missing directory, an invalid argument.
    #[error("{0}")]
    BadInput(String),
    /// An I/O operation of the harness failed.
    #[error("{context}")]
    Io {
        /// What the harness was doing, naming the path.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The run was stopped (Ctrl-C) before every trial finished; `resume` continues it.
    #[error("interrupted: {finished} of {planned} trials finished; continue with `loopbench resume {}`", run_dir.display())]
    Interrupted {
        /// The results directory.
        run_dir: PathBuf,
        /// Trials recorded.
        finished: usize,
        /// Trials planned.
        planned: usize,
    },
    /// The run stopped scheduling because going on could measure nothing (the provider
    /// refused the key, or too many infrastructure failures in a row); `resume`
    /// continues once the cause is fixed.
    #[error("stopped: {cause}; {finished} of {planned} trials finished; once that is fixed, continue with `loopbench resume {}`", run_dir.display())]
    Stopped {
        /// The results directory.
        run_dir: PathBuf,
        /// Why no new session started.
        cause: String,
        /// Trials recorded.
        finished: usize,
        /// Trials planned.
        planned: usize,
        /// What the command says before the error: per arm, the trials that could not
        /// run and why.
        unfinished: Vec<String>,
    },
    /// The engine's circuit breaker tripped for `cause`: no new session started. The
    /// command that drove the run turns it into [`Error::Stopped`].
    #[error("stopped: {cause}")]
    Halted {
        /// Why.
        cause: String,
    },
    /// A trial stopped early because the run is being cancelled; it is not recorded
    /// as finished, so `resume` runs it again.
    #[error("cancelled")]
    Cancelled,
    /// An external tool the harness relies on (git) failed.
    #[error("{0}")]
    Tool(String),
    /// What a session left cannot be observed (a tree past the task's size bound, a
    /// work directory that is gone). The session is recorded `error` with this message
    /// and the run goes on; it reaches the exit code only when nothing recorded it.
    #[error("{0}")]
    Unobservable(String),
}

/// What a results directory is going on from another for ([`Mismatch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// `merge`: another shard of the first directory's run.
    Merge,
    /// `run --look K --after DIR`: the next look of the sequential run in DIR.
    NextLook,
    /// `resume` of a suite's run: the same run, from its suite as it is now.
    Resume,
    /// `resume` of a replay: the same traces replayed into their directory again, from
    /// the task and traces as they are now.
    Replay,
}

/// A field of a run that a continuation compares ([`Mismatch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// A suite's run or a replay of traces.
    Kind,
    /// The suite's name.
    Suite,
    /// The content hash of the suite with its tasks, or of a replay's task and traces.
    Content,
    /// The run's seed.
    Seed,
    /// Replicates per arm and task.
    Replicates,
    /// The arms run, in order.
    Arms,
    /// The suite's tasks.
    Tasks,
    /// The sandbox the checks ran in.
    Sandbox,
    /// The version of loopbench that ran it.
    Version,
}

impl Field {
    /// Every field, in the order a refusal is looked for.
    pub const ALL: [Field; 9] = [
        Field::Kind,
        Field::Suite,
        Field::Content,
        Field::Seed,
        Field::Replicates,
        Field::Arms,
        Field::Tasks,
        Field::Sandbox,
        Field::Version,
    ];

    /// How a message names it ("the seed").
    pub fn title(self) -> &'static str {
        match self {
            Field::Kind => "the kind of run",
            Field::Suite => "the suite",
            Field::Content => "the suite's content",
            Field::Seed => "the seed",
            Field::Replicates => "the replicates",
            Field::Arms => "the arms",
            Field::Tasks => "the tasks",
            Field::Sandbox => "the checks' sandbox",
            Field::Version => "the loopbench version",
        }
    }

    /// "the seed differs", "the arms differ".
    pub fn differs(self) -> String {
        let verb = match self {
            Field::Replicates | Field::Arms | Field::Tasks => "differ",
            _ => "differs",
        };
        format!("{} {verb}", self.title())
    }
}

/// Why a directory may not go on from another.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// What it was for.
    pub purpose: Purpose,
    /// The directory refused.
    pub dir: PathBuf,
    /// The directory it was held to (the first shard, `--after`'s run) or, for
    /// `resume`, the same directory.
    pub other: PathBuf,
    /// The first field that differs.
    pub field: Field,
    /// Its value in the run being made or continued.
    pub ours: String,
    /// Its value in the directory refused.
    pub theirs: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (differs, ours, theirs) = (self.field.differs(), &self.ours, &self.theirs);
        match self.purpose {
            Purpose::Merge => write!(
                f,
                "'{}' is from a different run than '{}' ({differs}: {theirs} there, {ours} in \
                 the first); only shards of one run can be merged",
                self.dir.display(),
                self.other.display()
            ),
            Purpose::NextLook => write!(
                f,
                "--after: '{}' is a run of another experiment ({differs}: {theirs} there, {ours} \
                 in this look)",
                self.dir.display()
            ),
            Purpose::Resume if self.field == Field::Content => write!(
                f,
                "'{}' changed since this run started (content hash {theirs} is now {ours}); \
                 resuming '{}' would mix two experiments. Start a new run instead.",
                self.other.display(),
                self.dir.display()
            ),
            Purpose::Replay if self.field == Field::Content => write!(
                f,
                "the task '{}' or the traces of '{}' changed since this replay started \
                 (content hash {theirs} is now {ours}); resuming would mix two experiments. \
                 Start a new replay instead.",
                self.other.display(),
                self.dir.display()
            ),
            Purpose::Resume | Purpose::Replay => write!(
                f,
                "'{}' cannot be resumed here: {differs} ({theirs} when the run started, \
                 {ours} now); resuming would mix two experiments. Start a new run instead.",
                self.dir.display()
            ),
        }
    }
}

impl From<SandboxError> for Error {
    fn from(error: SandboxError) -> Error {
        Error::Sandbox(Box::new(error))
    }
}

impl From<Mismatch> for Error {
    fn from(mismatch: Mismatch) -> Error {
        Error::NotContinuable(Box::new(mismatch))
    }
}

/// Shorthand for results of the engine.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The exit code this error ends the process with.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Config { .. }
            | Error::BadLine { .. }
            | Error::PathEscape { .. }
            | Error::NotContinuable(_)
            | Error::ResultsDir(_)
            | Error::SuiteFile(_)
            | Error::Transcript(_)
            | Error::SimAgent(_)
            | Error::BadInput(_) => exit_code::BAD_INPUT,
            Error::Io { .. } | Error::Tool(_) | Error::Unobservable(_) => exit_code::INTERNAL,
            Error::Sandbox(e) => e.exit_code(),
            Error::Interrupted { .. }
            | Error::Cancelled
            | Error::Stopped { .. }
            | Error::Halted { .. } => exit_code::INTERRUPTED,
        }
    }

    /// Whether a container engine failed under a command of the harness's (it never ran
    /// it, or lost its container): the infrastructure's failure, known from the
    /// engine's own report on the container, never from anything its program wrote.
    pub fn is_engine_failure(&self) -> bool {
        matches!(self, Error::Sandbox(e) if matches!(**e, SandboxError::ContainerLost { .. }))
    }

    /// The process's output was closed (`loopbench report | head`): not a failure.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
    }

    /// Whether the harness ran out of a resource of its machine: no space or quota
    /// left on a disk it writes (its scratch directory, the results directory), no
    /// memory, no file descriptors. Such a failure is the harness's, never the agent's
    /// (docs/real-ab.md, section 9): known from the errno, never from a message an agent could
    /// have shaped.
    pub fn is_resource_exhaustion(&self) -> bool {
        let Error::Io { source, .. } = self else {
            return false;
        };
        use nix::libc;
        matches!(
            source.raw_os_error(),
            Some(libc::ENOSPC | libc::EDQUOT | libc::ENOMEM | libc::EMFILE | libc::ENFILE)
        )
    }

    /// Wraps an I/O error with what was being done.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

/// The message and every cause under it ("cannot write 'x': No such file or
/// directory"), so that an I/O failure says what the system said.
pub fn with_causes(err: &dyn std::error::Error) -> String {
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

/// Adds a description of what was being done to an `io::Result`.
pub trait IoContext<T> {
    /// Turns an `io::Error` into [`Error::Io`] whose message is built by `context`.
    fn io_context<F: FnOnce() -> String>(self, context: F) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn io_context<F: FnOnce() -> String>(self, context: F) -> Result<T> {
        self.map_err(|source| Error::io(context(), source))
    }
}
