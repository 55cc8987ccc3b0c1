//! Which transcript format a file is, from its first line: what `loopbench import
//! --format auto` uses, and what an importer names when it is handed a file of
//! another format.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::codex::{exec_json, rollout};
use super::session::JSON_LINE_MAX;
use crate::error::{Error, Result};

/// The transcript formats `loopbench import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Format {
    /// Claude Code session files.
    ClaudeCode,
    /// Captured `claude -p --output-format stream-json`.
    StreamJson,
    /// Codex CLI rollouts and `codex exec --json` captures.
    Codex,
    /// aider's `.aider.chat.history.md`.
    Aider,
}

impl Format {
    /// Every format, in the order messages list them.
    pub const ALL: [Format; 4] = [
        Format::ClaudeCode,
        Format::StreamJson,
        Format::Codex,
        Format::Aider,
    ];

    /// The name `loopbench import` gives it.
    pub fn name(self) -> &'static str {
        match self {
            Format::ClaudeCode => "claude-code",
            Format::StreamJson => "stream-json",
            Format::Codex => "codex",
            Format::Aider => "aider",
        }
    }
}

/// The line that starts every session of an aider chat history.
pub const AIDER_HEADER: &str = "# aider chat started at";

/// The format of the JSON line `line`, if it is one of the transcripts'.
pub fn format_of_line(line: &Map<String, Value>) -> Option<Format> {
    let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
    if line.contains_key("sessionId") || kind == "summary" || kind == "file-history-snapshot" {
        return Some(Format::ClaudeCode);
    }
    if line.contains_key("session_id") && matches!(kind, "system" | "assistant" | "user" | "result")
    {
        return Some(Format::StreamJson);
    }
    if rollout::is_rollout_line(line) || exec_json::is_event(line) {
        return Some(Format::Codex);
    }
    None
}

/// A few words on what the JSON line `line` is, for a message about a file of the
/// wrong format.
pub fn describe(line: &Map<String, Value>) -> String {
    let kind = line.get("type").and_then(Value::as_str);
    let shape = match kind {
        Some(kind) => format!("a JSON object with \"type\": {kind:?}"),
        None => "a JSON object without \"type\"".to_string(),
    };
    match format_of_line(line) {
        Some(format) => format!(
            "{shape}, a line of a {} transcript (import it with `loopbench import {}`)",
            format.name(),
            format.name()
        ),
        None => shape,
    }
}

/// What a text line that is not JSON is, for the same messages.
pub fn describe_text(line: &str) -> String {
    if line.starts_with(AIDER_HEADER) {
        return "an aider chat history (import it with `loopbench import aider`)".to_string();
    }
    let shown: String = line.chars().take(40).collect();
    format!("text that is not JSON ({shown:?})")
}

/// The first line of `path` that is not blank (at most [`JSON_LINE_MAX`] bytes of it).
fn first_line(path: &Path) -> Result<Option<String>> {
    let file = std::fs::File::open(path).map_err(|e| {
        Error::BadInput(format!("cannot read transcript '{}': {e}", path.display()))
    })?;
    let mut reader = BufReader::new(file).take(JSON_LINE_MAX as u64);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        let read = reader.read_until(b'\n', &mut bytes).map_err(|e| {
            Error::BadInput(format!("cannot read transcript '{}': {e}", path.display()))
        })?;
        if read == 0 {
            return Ok(None);
        }
        let line = String::from_utf8_lossy(&bytes);
        if !line.trim().is_empty() {
            return Ok(Some(line.trim_end_matches(['\n', '\r']).to_string()));
        }
    }
}

/// The format of the file `path`, from its first line; `None` when it is none of them.
pub fn sniff(path: &Path) -> Result<Option<Format>> {
    let Some(line) = first_line(path)? else {
        return Ok(None);
    };
    if line.starts_with(AIDER_HEADER) {
        return Ok(Some(Format::Aider));
    }
    Ok(match serde_json::from_str::<Value>(&line) {
        Ok(Value::Object(map)) => format_of_line(&map),
        _ => None,
    })
}

/// Whether a file in a directory could be a transcript: the names the CLIs and the
/// command driver give them.
fn candidate(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.ends_with(".jsonl") || name.ends_with(".stdout") || name.ends_with(".md")
}

/// The one format of every transcript in `inputs` (files, or directories searched for
/// `*.jsonl`, `*.stdout` and `*.md` files). A file of no known format, inputs of two
/// formats, or none at all are bad input naming the choices.
pub fn detect(inputs: &[PathBuf]) -> Result<Format> {
    let mut found: std::collections::BTreeMap<Format, Vec<PathBuf>> = Default::default();
    for input in inputs {
        let meta = std::fs::metadata(input).map_err(|e| {
            Error::BadInput(format!("cannot read transcript '{}': {e}", input.display()))
        })?;
        if meta.is_dir() {
            for file in super::session::expand(input, candidate)? {
                if let Some(format) = sniff(&file)? {
                    found.entry(format).or_default().push(file);
                }
            }
        } else {
            match sniff(input)? {
                Some(format) => found.entry(format).or_default().push(input.clone()),
                None => {
                    return Err(Error::BadInput(format!(
                        "cannot tell the format of '{}' from its first line; name it: {}",
                        input.display(),
                        choices()
                    )));
                }
            }
        }
    }
    let mut formats = found.iter();
    match (formats.next(), formats.next()) {
        (Some((format, _)), None) => Ok(*format),
        (None, _) => Err(Error::BadInput(format!(
            "no transcript found in {}; name the format: {}",
            names(inputs),
            choices()
        ))),
        (Some(_), Some(_)) => {
            let each: Vec<String> = found
                .iter()
                .map(|(format, files)| {
                    format!(
                        "{} ({} file(s), e.g. '{}')",
                        format.name(),
                        files.len(),
                        files[0].display()
                    )
                })
                .collect();
            let verb = if inputs.len() == 1 { "holds" } else { "hold" };
            Err(Error::BadInput(format!(
                "{} {verb} transcripts of more than one format: {}; import one with `loopbench import {} PATH...`",
                names(inputs),
                each.join(", "),
                found.keys().map(|f| f.name()).collect::<Vec<_>>().join("|")
            )))
        }
    }
}

fn choices() -> String {
    let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
    format!("loopbench import {} PATH...", names.join("|"))
}

fn names(inputs: &[PathBuf]) -> String {
    inputs
        .iter()
        .map(|p| format!("'{}'", p.display()))
        .collect::<Vec<_>>()
        .join(", ")
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
                Some(Format::ClaudeCode),
            ),
            (
                json!({"type": "summary", "summary": "x"}),
                Some(Format::ClaudeCode),
            ),
            (
                json!({"type": "system", "subtype": "init", "session_id": "s"}),
                Some(Format::StreamJson),
            ),
            (
                json!({"timestamp": "t", "type": "session_meta", "payload": {}}),
                Some(Format::Codex),
            ),
            (
                json!({"type": "thread.started", "thread_id": "t"}),
                Some(Format::Codex),
            ),
            (
                json!({"id": "x", "timestamp": "t", "instructions": null}),
                Some(Format::Codex),
            ),
            (json!({"op": "session", "n": 1}), None),
        ];
        for (line, format) in cases {
            assert_eq!(format_of_line(&object(line.clone())), format, "{line}");
        }
        let claude = describe(&object(json!({"type": "user", "sessionId": "s"})));
        assert!(claude.contains("loopbench import claude-code"), "{claude}");
        assert!(describe_text("# aider chat started at 2026").contains("import aider"));
    }

    #[test]
    fn a_directory_of_two_formats_names_both_and_one_of_one_format_is_that_format() {
        let dir = tempfile::tempdir().unwrap();
        let codex = dir.path().join("rollout-1.jsonl");
        std::fs::write(&codex, "{\"type\":\"session_meta\",\"payload\":{}}\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a transcript").unwrap();
        assert_eq!(detect(&[dir.path().to_path_buf()]).unwrap(), Format::Codex);
        std::fs::write(
            dir.path().join(".aider.chat.history.md"),
            "\n# aider chat started at 2026-12-01 10:00:00\n",
        )
        .unwrap();
        let err = detect(&[dir.path().to_path_buf()]).unwrap_err().to_string();
        assert!(
            err.contains("codex (1 file(s)") && err.contains("aider (1 file(s)"),
            "{err}"
        );
        assert!(err.contains("loopbench import codex|aider"), "{err}");
        let other = dir.path().join("trace.jsonl");
        std::fs::write(&other, "{\"op\":\"session\",\"n\":1}\n").unwrap();
        let err = detect(&[other]).unwrap_err().to_string();
        assert!(err.contains("cannot tell the format"), "{err}");
    }
}
