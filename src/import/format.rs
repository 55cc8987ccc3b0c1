//! The transcript formats `loopbench import` reads: one table of importers
//! ([`IMPORTERS`], each defined in its own folder), from which the command line, the
//! detection of a file's format, `--help` and the docs' list of formats are made; and
//! the import, which names the format of a line an importer refused when it is another
//! one's.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::importer::{Importer, SniffedLine};
use super::session::{Imported, JSON_LINE_MAX, describe_shape, describe_text};
use super::{aider, atif, claude_code, codex, stream_json};
use crate::error::{Error, Result, TranscriptError};

/// Every importer, in the order messages and the docs list them. A new format is one
/// more entry here and a folder of its own.
pub static IMPORTERS: &[Importer] = &[
    claude_code::IMPORTER,
    stream_json::IMPORTER,
    codex::IMPORTER,
    aider::IMPORTER,
    atif::IMPORTER,
];

/// One of the formats: its place in [`IMPORTERS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Format(usize);

impl Format {
    /// Every format, in the order of [`IMPORTERS`].
    pub fn all() -> impl Iterator<Item = Format> {
        (0..IMPORTERS.len()).map(Format)
    }

    /// The format named `name` (`claude-code`...).
    pub fn named(name: &str) -> Option<Format> {
        Format::all().find(|f| f.name() == name)
    }

    /// Its importer.
    pub fn importer(self) -> &'static Importer {
        &IMPORTERS[self.0]
    }

    /// The name `loopbench import` gives it.
    pub fn name(self) -> &'static str {
        self.importer().name
    }

    /// Imports `inputs` in this format; a line the importer refused is named as a line
    /// of another format when it is one (see [`describe`]).
    pub fn import(self, inputs: &[PathBuf], root: Option<&str>) -> Result<Imported> {
        (self.importer().import)(inputs, root).map_err(name_the_format_found)
    }
}

/// The docs' list of formats (docs/formats.md, "Importers"), made from the table: a test
/// holds the docs to it.
pub fn docs_table() -> String {
    let mut table = String::from(
        "| format | reads | actions from | a `command` agent's captures |\n| --- | --- | --- | --- |\n",
    );
    for format in Format::all() {
        let importer = format.importer();
        let captures = match importer
            .captures
            .and_then(|c| clap::ValueEnum::to_possible_value(&c))
        {
            Some(cli) => format!(
                "`RUN_DIR/agents/TRIAL_ID`, when its program's output is read as `{}` (`# loopbench: usage {}`)",
                cli.get_name(),
                cli.get_name()
            ),
            None => "no".to_string(),
        };
        table += &format!(
            "| `{}` | {} | {} | {captures} |\n",
            importer.name, importer.reads, importer.actions
        );
    }
    table
}

/// The format whose transcripts the line `line` is of, if any.
pub fn format_of_line(line: SniffedLine) -> Option<Format> {
    Format::all().find(|f| (f.importer().recognize.line)(line))
}

/// What the JSON line `line` is, for a message about a file of the wrong format: its
/// shape, and which format's line it is.
pub fn describe(line: &Map<String, Value>) -> String {
    let shape = describe_shape(line);
    match format_of_line(SniffedLine::Json(line)) {
        Some(format) => format!(
            "{shape}, a line of a {} transcript (import it with `loopbench import {}`)",
            format.name(),
            format.name()
        ),
        None => shape,
    }
}

/// What a text line that is not JSON is, for the same messages.
pub fn describe_line(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => describe(&map),
        _ => match format_of_line(SniffedLine::Text(text)) {
            Some(format) => format!(
                "{} (import it with `loopbench import {}`)",
                format.importer().one,
                format.name()
            ),
            None => describe_text(text),
        },
    }
}

/// An importer describes a line it refuses by its shape alone; here, where every format
/// is known, the line is read again and named for the format it belongs to.
fn name_the_format_found(error: Error) -> Error {
    let Error::Transcript(TranscriptError::BadLine {
        file,
        line,
        expected,
        found,
    }) = error
    else {
        return error;
    };
    let found = line_of(&file, line).map_or(found, |text| describe_line(&text));
    TranscriptError::BadLine {
        file,
        line,
        expected,
        found,
    }
    .into()
}

/// Line `number` (1-based) of the file `path`, without its line end; `None` when it
/// cannot be read (or is longer than a transcript line may be).
fn line_of(path: &Path, number: usize) -> Option<String> {
    let file = std::fs::File::open(path).ok()?;
    let mut lines = crate::lines::BoundedLines::new(std::io::BufReader::new(file), JSON_LINE_MAX);
    while let Ok(Some((n, line))) = lines.next_line() {
        if n == number {
            return match line {
                crate::lines::Line::Text(bytes) => Some(
                    String::from_utf8_lossy(bytes)
                        .trim_end_matches(['\n', '\r'])
                        .to_string(),
                ),
                crate::lines::Line::TooLong(_) => None,
            };
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn each_format_is_known_by_its_first_line() {
        let cases = [
            (
                json!({"type": "user", "sessionId": "s", "uuid": "u"}),
                Some("claude-code"),
            ),
            (
                json!({"type": "summary", "summary": "x"}),
                Some("claude-code"),
            ),
            (
                json!({"type": "system", "subtype": "init", "session_id": "s"}),
                Some("stream-json"),
            ),
            (
                json!({"timestamp": "t", "type": "session_meta", "payload": {}}),
                Some("codex"),
            ),
            (
                json!({"type": "thread.started", "thread_id": "t"}),
                Some("codex"),
            ),
            (
                json!({"id": "x", "timestamp": "t", "instructions": null}),
                Some("codex"),
            ),
            (json!({"op": "session", "n": 1}), None),
        ];
        for (line, format) in cases {
            let line = object(line);
            let found = format_of_line(SniffedLine::Json(&line)).map(Format::name);
            assert_eq!(found, format, "{line:?}");
        }
        let claude = describe(&object(json!({"type": "user", "sessionId": "s"})));
        assert!(claude.contains("loopbench import claude-code"), "{claude}");
        assert_eq!(
            describe_line("# aider chat started at 2026"),
            "an aider chat history (import it with `loopbench import aider`)"
        );
    }

    /// An importer refuses a line by its shape; the table names the format it is of
    /// (this test was `aider::history`'s before the formats were one table).
    #[test]
    fn a_file_of_another_format_names_its_first_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout.jsonl");
        std::fs::write(&path, "\n{\"type\":\"session_meta\",\"payload\":{}}\n").unwrap();
        let aider = Format::named("aider").unwrap();
        let Err(Error::Transcript(TranscriptError::BadLine {
            file,
            line,
            expected,
            found,
        })) = aider.import(std::slice::from_ref(&path), None)
        else {
            panic!("not a transcript line's refusal");
        };
        assert_eq!((file, line), (path, 2));
        assert_eq!(expected, crate::import::aider::history::EXPECTED);
        // Read again where every format is known: named for the one it is of.
        assert_eq!(
            found,
            describe_line("{\"type\":\"session_meta\",\"payload\":{}}")
        );
        assert!(found.contains("`loopbench import codex`"), "{found}");
    }

    #[test]
    fn every_format_has_a_name_of_its_own() {
        let mut names: Vec<&str> = Format::all().map(Format::name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), IMPORTERS.len());
        assert!(!names.contains(&"auto"), "`auto` is --format's own value");
    }
}
