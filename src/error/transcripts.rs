//! What can be wrong with a trace `replay` is given or with the transcripts `import`
//! reads: a file that cannot be read, a directory that holds none, a line or a document
//! not of its format, inputs whose format cannot be told or that mix two, a chain of
//! ATIF trajectories that does not hold together, an import that finds no session.

use std::fmt;
use std::path::PathBuf;

/// A trace or a transcript that cannot be read as one (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TranscriptError {
    /// A trace file that is missing or not text.
    #[error("cannot read trace '{}': {reason}", file.display())]
    TraceUnreadable {
        /// The trace file.
        file: PathBuf,
        /// What the system said.
        reason: String,
    },
    /// A line of a trace that does not fit the trace format.
    #[error("{}:{line}: {message}", file.display())]
    TraceLine {
        /// The trace file.
        file: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What was wrong and what was expected.
        message: String,
    },
    /// A directory given to `replay` that holds no trace.
    #[error("'{}' holds no traces (expected *.jsonl files)", dir.display())]
    NoTraces {
        /// The directory.
        dir: PathBuf,
    },
    /// A transcript file or directory that is missing or cannot be read.
    #[error("cannot read transcript '{}': {reason}", path.display())]
    Unreadable {
        /// The path given, or the file being read.
        path: PathBuf,
        /// What the system said.
        reason: String,
    },
    /// An ATIF trajectory that cannot be read.
    #[error("cannot read trajectory '{}': {reason}", file.display())]
    TrajectoryUnreadable {
        /// The trajectory file.
        file: PathBuf,
        /// What the system said.
        reason: String,
    },
    /// A transcript line that is not what its format has.
    #[error("{}:{line}: expected {expected}; found {found}", file.display())]
    BadLine {
        /// The transcript file.
        file: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What the format has there.
        expected: String,
        /// What the line is, by its shape (or the format it belongs to).
        found: String,
    },
    /// A file that is not one document of its format (an ATIF trajectory).
    #[error("'{}': expected {expected}; found {found}", file.display())]
    BadDocument {
        /// The file.
        file: PathBuf,
        /// What the format is.
        expected: String,
        /// What the file is.
        found: String,
    },
    /// A transcript file with nothing in it.
    #[error("'{}' is empty: expected {expected}", file.display())]
    Empty {
        /// The file.
        file: PathBuf,
        /// What the format is.
        expected: String,
    },
    /// A directory that holds no file the format reads.
    #[error("'{}' holds no {expected}", dir.display())]
    HoldsNone {
        /// The directory.
        dir: PathBuf,
        /// The files looked for.
        expected: String,
    },
    /// Codex rollouts and `codex exec --json` captures given together.
    #[error(
        "{} mix Codex rollouts and `codex exec --json` captures, which would be the same \
         sessions twice; import one form",
        Quoted(inputs)
    )]
    MixedCodexForms {
        /// The inputs.
        inputs: Vec<PathBuf>,
    },
    /// An import that found no session.
    #[error("no session with user or assistant messages in {}", Quoted(inputs))]
    NoSessions {
        /// The inputs.
        inputs: Vec<PathBuf>,
    },
    /// A file whose format cannot be told from its first line.
    #[error(
        "cannot tell the format of '{}' from its first line; name it: {}",
        file.display(),
        Choices(formats)
    )]
    FormatUnknown {
        /// The file.
        file: PathBuf,
        /// The formats `import` reads, by name.
        formats: Vec<String>,
    },
    /// Inputs in which no transcript of any format was found.
    #[error(
        "no transcript found in {}; name the format: {}",
        Quoted(inputs),
        Choices(formats)
    )]
    NoTranscript {
        /// The inputs.
        inputs: Vec<PathBuf>,
        /// The formats `import` reads, by name.
        formats: Vec<String>,
    },
    /// Inputs that hold transcripts of more than one format.
    #[error(
        "{} {} transcripts of more than one format: {}; import one with `loopbench import {} \
         PATH...`",
        Quoted(inputs),
        if inputs.len() == 1 { "holds" } else { "hold" },
        found.iter().map(FormatFound::to_string).collect::<Vec<_>>().join(", "),
        found.iter().map(|f| f.format.as_str()).collect::<Vec<_>>().join("|")
    )]
    MixedFormats {
        /// The inputs.
        inputs: Vec<PathBuf>,
        /// Each format found, in the table's order.
        found: Vec<FormatFound>,
    },
    /// A format's name given where a transcript's path goes.
    #[error(
        "'{}' is a format, not a transcript: name the format before the options \
         (`loopbench import {} --root DIR PATH...`) or pass --format {}",
        name.display(),
        name.display(),
        name.display()
    )]
    FormatAsPath {
        /// The argument, a format's name.
        name: PathBuf,
    },
    /// A trajectory's `continued_trajectory_ref` that is not a string.
    #[error("'{}': continued_trajectory_ref {given} is not a path", file.display())]
    ContinuationNotAPath {
        /// The trajectory.
        file: PathBuf,
        /// The value, as JSON.
        given: String,
    },
    /// A trajectory's `continued_trajectory_ref` that leads out of its directory.
    #[error(
        "'{}': continued_trajectory_ref {name:?} is not a file beside the trajectory",
        file.display()
    )]
    ContinuationNotBeside {
        /// The trajectory.
        file: PathBuf,
        /// The reference.
        name: String,
    },
    /// A trajectory's `continued_trajectory_ref` that names no file.
    #[error(
        "'{}': its continued_trajectory_ref '{}' is not a file",
        file.display(),
        next.display()
    )]
    ContinuationMissing {
        /// The trajectory.
        file: PathBuf,
        /// The file it names.
        next: PathBuf,
    },
    /// A trajectory continued by two, or on a chain that comes back to itself.
    #[error(
        "'{}' continues two trajectories, or its chain of continued_trajectory_ref comes back \
         to itself",
        file.display()
    )]
    ContinuedTwice {
        /// The trajectory.
        file: PathBuf,
    },
    /// A chain of trajectories that comes back to itself.
    #[error(
        "'{}': its chain of continued_trajectory_ref comes back to itself",
        file.display()
    )]
    ChainLoops {
        /// A trajectory of the loop.
        file: PathBuf,
    },
}

/// One format found among inputs of more than one ([`TranscriptError::MixedFormats`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatFound {
    /// The format's name.
    pub format: String,
    /// How many files are of it.
    pub files: usize,
    /// The first of them.
    pub example: PathBuf,
}

impl fmt::Display for FormatFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({} file(s), e.g. '{}')",
            self.format,
            self.files,
            self.example.display()
        )
    }
}

/// Paths as a message lists them: quoted, separated by commas.
struct Quoted<'a>(&'a [PathBuf]);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, path) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "'{}'", path.display())?;
        }
        Ok(())
    }
}

/// The command that names a format: `loopbench import A|B PATH...`.
struct Choices<'a>(&'a [String]);

impl fmt::Display for Choices<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "loopbench import {} PATH...", self.0.join("|"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::exit_code;

    /// The lists a message builds read as the messages built them before they were a
    /// type: `import`'s users and the CLI tests see the same text.
    #[test]
    fn the_lists_read_as_before_and_every_variant_is_bad_input() {
        let mixed = TranscriptError::MixedFormats {
            inputs: vec![PathBuf::from("a"), PathBuf::from("b")],
            found: vec![
                FormatFound {
                    format: "codex".into(),
                    files: 2,
                    example: PathBuf::from("a/rollout-1.jsonl"),
                },
                FormatFound {
                    format: "aider".into(),
                    files: 1,
                    example: PathBuf::from("b/.aider.chat.history.md"),
                },
            ],
        };
        assert_eq!(
            mixed.to_string(),
            "'a', 'b' hold transcripts of more than one format: codex (2 file(s), e.g. \
             'a/rollout-1.jsonl'), aider (1 file(s), e.g. 'b/.aider.chat.history.md'); import \
             one with `loopbench import codex|aider PATH...`"
        );
        let unknown = TranscriptError::FormatUnknown {
            file: PathBuf::from("t.jsonl"),
            formats: vec!["claude-code".into(), "codex".into()],
        };
        assert_eq!(
            unknown.to_string(),
            "cannot tell the format of 't.jsonl' from its first line; name it: loopbench \
             import claude-code|codex PATH..."
        );
        for e in [mixed, unknown] {
            assert_eq!(Error::from(e).exit_code(), exit_code::BAD_INPUT);
        }
        let sim = crate::error::SimAgentError::Unset { var: "X".into() };
        assert_eq!(Error::from(sim).exit_code(), exit_code::BAD_INPUT);
    }
}
