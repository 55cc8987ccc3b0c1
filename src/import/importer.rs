//! What one transcript format is to `loopbench import`: its name, its help, how its files
//! are recognized, the import itself, its example and its documentation, in one value
//! ([`Importer`]). Each format's folder defines its own; `format` lists them, and the
//! command line, detection, `--help`, the docs' list of formats and the test that holds
//! every format to a fixture are all made from that list.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::session::Imported;
use crate::agent::command::cli_usage::CliFormat;
use crate::error::Result;

/// A line of a file, as recognition sees it: a JSON object, or text.
#[derive(Debug, Clone, Copy)]
pub enum SniffedLine<'a> {
    /// A line that is a JSON object.
    Json(&'a Map<String, Value>),
    /// Any other line, as text.
    Text(&'a str),
}

/// How an importer's transcripts are recognized.
#[derive(Debug, Clone, Copy)]
pub struct Recognize {
    /// Whether a file found in a directory may be one of its transcripts (by name).
    pub file_name: fn(&Path) -> bool,
    /// Whether a line is one of its transcripts' (a file's first line when detecting;
    /// any line when naming the format of a line another importer refused).
    pub line: fn(SniffedLine) -> bool,
    /// For a format whose file is one JSON document over several lines: whether the
    /// file at the path is one (read whole, within the bound of a transcript line).
    pub document: Option<fn(&Path) -> bool>,
}

/// The import: the transcripts (files or directories) and the root their paths are
/// made relative to.
pub type ImportFn = fn(&[PathBuf], Option<&str>) -> Result<Imported>;

/// One transcript format of `loopbench import`.
#[derive(Debug, Clone, Copy)]
pub struct Importer {
    /// Its name: the subcommand and the value of `--format`.
    pub name: &'static str,
    /// A few words on what it reads, for the list of `--format`'s values.
    pub summary: &'static str,
    /// What one of its transcripts is called, with its article (`an aider chat
    /// history`), for messages about a file of another format.
    pub one: &'static str,
    /// The subcommand's help: which files it reads and how.
    pub about: &'static str,
    /// The examples at the end of the subcommand's `--help`.
    pub examples: &'static str,
    /// The docs' list of formats: what it reads (Markdown).
    pub reads: &'static str,
    /// The docs' list of formats: which calls become actions (Markdown).
    pub actions: &'static str,
    /// A transcript of its format in the repository (a file or directory under
    /// `tests/data`), which the tests import.
    pub fixture: &'static str,
    /// The agent CLI whose output, as a `command` agent's wrapper names it
    /// (`# loopbench: usage ...`) and the harness captures it
    /// (`RUN_DIR/agents/TRIAL_ID/session-N.stdout`), this format reads; `None` when a
    /// command agent's captures are not its transcripts.
    pub captures: Option<CliFormat>,
    /// How its files are recognized.
    pub recognize: Recognize,
    /// The import.
    pub import: ImportFn,
}
