//! The transcript formats `loopbench import` reads and which one a JSON or text line
//! belongs to: what detection sniffs, and what an importer names when it is handed a
//! line of another format.

use serde_json::{Map, Value};

use super::codex::line_kind;

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
    if line_kind::is_rollout_line(line) || line_kind::is_exec_json_event(line) {
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
}
