//! A session's trajectory: what the agent did, entry by entry, in order, from whatever
//! the driver saw of it (a replayed trace and the transcript lines its importer kept,
//! the command agent's own stream-json capture, the simulated agent's real edits and
//! commands). It is for people reading a run (report.html, `show --trajectory`); no
//! metric reads it. One line of `trajectories.jsonl` per counted session.
//!
//! Before an entry is written, every text in it is masked (what looks like a secret:
//! an API key's shape, a bearer token, the value of a `*_KEY=`/`*TOKEN=`/`*SECRET=`/
//! `*PASSWORD=` assignment) and then cut at [`TEXT_LIMIT`] bytes, the cut named in the
//! entry's `cut` map with the text's full length: never silently.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::agent::Usage;

pub mod aider_output;
pub mod codex_json;

/// The most bytes of one text (a message, an output, an argument) an entry keeps.
pub const TEXT_LIMIT: usize = 8192;

/// What a masked value is replaced by.
pub const MASK: &str = "[masked]";

/// One thing the agent did or was told.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Act {
    /// Text the agent wrote (or, in an aider history, the user typed: `from` says).
    Message {
        /// The text.
        text: String,
        /// Who wrote it when not the agent (`user`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
    },
    /// A call of one of the agent's tools.
    ToolCall {
        /// The tool's name as the agent's program names it (`Bash`, `Edit`,
        /// `apply_patch`...).
        tool: String,
        /// The call's id, matched by its result.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// Its arguments, as given.
        #[serde(default)]
        input: serde_json::Value,
    },
    /// What a tool call gave back.
    ToolResult {
        /// The call's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The output.
        output: String,
        /// A command's exit status, where the program said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit: Option<i64>,
        /// The program marked the result an error.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        error: bool,
    },
    /// A change to a file of the work directory, as it was applied.
    Edit {
        /// Relative to the work directory.
        path: String,
        /// `write` (the whole content), `edit` (text replaced) or `delete`.
        op: EditOp,
        /// The text replaced (`edit`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        old: Option<String>,
        /// Its replacement (`edit`), or the whole content (`write`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        new: Option<String>,
        /// Why it was not applied; absent when it was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failed: Option<String>,
    },
    /// A shell command the harness ran for the agent (a replayed `run`, a sim commit).
    Command {
        /// The command line.
        cmd: String,
        /// The directory it started in, relative to the work directory.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
        /// What it printed, stdout then stderr, where the driver kept it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output: Option<String>,
        /// Its exit status; absent when killed or unknown.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit: Option<i64>,
    },
    /// A call that changed nothing because its program refused it or it failed (an
    /// aider SEARCH/REPLACE block aider reported as not matching), or that an importer
    /// could not reproduce: not applied.
    Rejected {
        /// The tool.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
        /// The path it named.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        /// Why.
        reason: String,
        /// The agent's program rejected it (not the importer).
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        by_agent: bool,
    },
    /// How the session ended.
    End {
        /// The session's outcome (`completed`, `interrupted`...).
        reason: String,
        /// What it used, as far as known.
        #[serde(default)]
        usage: Usage,
        /// The agent's own summary.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
}

/// The kinds of file change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EditOp {
    /// The whole content written.
    Write,
    /// Text replaced.
    Edit,
    /// The file removed.
    Delete,
}

/// One entry of a trajectory: an act, and the texts of it that were cut.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// What happened.
    #[serde(flatten)]
    pub act: Act,
    /// Each text cut at [`TEXT_LIMIT`] bytes, by field (`output`, `input.command`...),
    /// with its full length in bytes.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub cut: BTreeMap<String, u64>,
}

impl From<Act> for Entry {
    fn from(act: Act) -> Entry {
        Entry {
            act,
            cut: BTreeMap::new(),
        }
    }
}

/// A session's entries, in order.
pub type Trajectory = Vec<Entry>;

/// One line of `trajectories.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionTrajectory {
    /// The trial.
    pub trial_id: String,
    /// The session's number.
    pub session: u32,
    /// Its entries.
    pub trajectory: Trajectory,
}

/// Patterns of secrets by their shape: provider keys and tokens.
static SECRET_SHAPES: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"\bsk-(?:ant-|proj-)?[A-Za-z0-9_\-]{16,}",
        r"|\bgh[pousr]_[A-Za-z0-9]{20,}",
        r"|\bgithub_pat_[A-Za-z0-9_]{20,}",
        r"|\bAKIA[0-9A-Z]{16}\b",
        r"|\bxox[abprs]-[A-Za-z0-9\-]{10,}",
        r"|\bAIza[0-9A-Za-z_\-]{35}",
        r"|\bglpat-[A-Za-z0-9_\-]{20,}",
    ))
    .unwrap_or_else(|e| unreachable!("a fixed pattern: {e}"))
});

/// A bearer token after its scheme.
static BEARER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(bearer|basic)(\s+)[A-Za-z0-9._~+/=\-]{8,}")
        .unwrap_or_else(|e| unreachable!("a fixed pattern: {e}"))
});

/// An assignment of a secret-named variable, named in capitals as the environment's
/// are (an environment dump, a `.env` file,
/// `export X=...`, `"X": "..."`): the value after the name.
static SECRET_ASSIGNMENT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r#"\b([A-Z0-9_]*(?:API_?KEY|_KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|AUTH)[A-Z0-9_]*)"#,
        r#"("?\s*[=:]\s*"?)([^\s"',;]{4,})"#
    ))
    .unwrap_or_else(|e| unreachable!("a fixed pattern: {e}"))
});

/// `text` with what looks like a secret replaced by [`MASK`].
pub fn mask(text: &str) -> String {
    let text = SECRET_ASSIGNMENT.replace_all(text, |c: &regex::Captures| {
        format!("{}{}{MASK}", &c[1], &c[2])
    });
    let text = BEARER.replace_all(&text, |c: &regex::Captures| {
        format!("{}{}{MASK}", &c[1], &c[2])
    });
    SECRET_SHAPES.replace_all(&text, MASK).into_owned()
}

/// `text` cut at [`TEXT_LIMIT`] bytes (at a character's boundary), and its full length
/// when it was cut.
fn cut_text(text: &mut String) -> Option<u64> {
    if text.len() <= TEXT_LIMIT {
        return None;
    }
    let full = text.len() as u64;
    let mut at = TEXT_LIMIT;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    text.truncate(at);
    Some(full)
}

impl Entry {
    /// The entry as it is written: every text masked, then cut, the cuts named.
    pub fn sealed(mut self) -> Entry {
        let mut cut = std::mem::take(&mut self.cut);
        let mut seal = |field: &str, text: &mut String| {
            *text = mask(text);
            if let Some(full) = cut_text(text) {
                // A text held short as it was read keeps the length it had.
                cut.entry(field.to_string()).or_insert(full);
            }
        };
        match &mut self.act {
            Act::Message { text, .. } => seal("text", text),
            Act::ToolCall { input, .. } => seal_value("input", input, &mut seal),
            Act::ToolResult { output, .. } => seal("output", output),
            Act::Edit {
                path,
                old,
                new,
                failed,
                ..
            } => {
                seal("path", path);
                for (field, text) in [("old", old), ("new", new), ("failed", failed)] {
                    if let Some(text) = text {
                        seal(field, text);
                    }
                }
            }
            Act::Command { cmd, output, .. } => {
                seal("cmd", cmd);
                if let Some(output) = output {
                    seal("output", output);
                }
            }
            Act::Rejected { reason, .. } => seal("reason", reason),
            Act::End { summary, .. } => {
                if let Some(summary) = summary {
                    seal("summary", summary);
                }
            }
        }
        self.cut = cut;
        self
    }

    /// The first argument of a tool call, a command, or the path of an edit: what its
    /// folded line shows.
    pub fn headline(&self) -> String {
        match &self.act {
            Act::Message { text, .. } => text.lines().next().unwrap_or("").to_string(),
            Act::ToolCall { input, .. } => first_argument(input),
            Act::ToolResult { output, .. } => output.lines().next().unwrap_or("").to_string(),
            Act::Edit { path, .. } => path.clone(),
            Act::Command { cmd, .. } => cmd.lines().next().unwrap_or("").to_string(),
            Act::Rejected { path, reason, .. } => path.clone().unwrap_or_else(|| reason.clone()),
            Act::End { reason, .. } => reason.clone(),
        }
    }
}

/// The most bytes of one text kept while a capture is read, before the entry is masked
/// and cut at [`TEXT_LIMIT`] on its way to the file: so that a capture of any size is
/// never held whole.
const READ_LIMIT: usize = 4 * TEXT_LIMIT;

/// The entries of one line of Claude Code's `--output-format stream-json`: an assistant
/// message's text and tool calls, a user message's tool results; nothing for any other
/// line.
pub fn from_stream_json(line: &serde_json::Value) -> Vec<Entry> {
    use serde_json::Value;
    let blocks = line
        .get("message")
        .and_then(|m| m.get("content"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten();
    let str_of = |b: &Value, k: &str| b.get(k).and_then(Value::as_str).map(str::to_string);
    let mut out = Vec::new();
    match line.get("type").and_then(Value::as_str) {
        Some("assistant") => {
            for b in blocks {
                match b.get("type").and_then(Value::as_str) {
                    Some("text") => {
                        if let Some(text) = str_of(b, "text").filter(|t| !t.trim().is_empty()) {
                            out.push(Act::Message { text, from: None });
                        }
                    }
                    Some("tool_use") => out.push(Act::ToolCall {
                        tool: str_of(b, "name").unwrap_or_default(),
                        id: str_of(b, "id"),
                        input: b.get("input").cloned().unwrap_or(Value::Null),
                    }),
                    _ => {}
                }
            }
        }
        Some("user") => {
            for b in blocks.filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            {
                let output = content_text(b.get("content"));
                let exit = output
                    .lines()
                    .next()
                    .and_then(|l| l.strip_prefix("Exit code "))
                    .and_then(|n| n.trim().parse().ok());
                out.push(Act::ToolResult {
                    id: str_of(b, "tool_use_id"),
                    output,
                    exit,
                    error: b.get("is_error").and_then(Value::as_bool) == Some(true),
                });
            }
        }
        _ => {}
    }
    out.into_iter().map(read_bounded).collect()
}

/// The text of a Claude Code message's or tool result's `content`: a string, or its
/// text blocks joined by newlines (what the importers read too).
pub fn content_text(content: Option<&serde_json::Value>) -> String {
    use serde_json::Value;
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(|i| i.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The entries of a stream-json capture file, read a line at a time; a line that is not
/// JSON gives none. Each text is held to [`READ_LIMIT`] bytes as it is read, its full
/// length kept for the cut it will get.
pub fn read_stream_json(path: &std::path::Path) -> Trajectory {
    use std::io::BufRead;
    let Ok(file) = std::fs::File::open(path) else {
        return Trajectory::new();
    };
    std::io::BufReader::new(file)
        .split(b'\n')
        .map_while(std::result::Result::ok)
        .filter_map(|line| serde_json::from_slice::<serde_json::Value>(&line).ok())
        .flat_map(|value| from_stream_json(&value))
        .collect()
}

/// `act` with each text held to [`READ_LIMIT`] bytes, the full length of a text cut so
/// named.
fn read_bounded(act: Act) -> Entry {
    let mut entry = Entry::from(act);
    let hold = |field: &str, text: &mut String| {
        if text.len() > READ_LIMIT {
            let full = text.len() as u64;
            let mut at = READ_LIMIT;
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            text.truncate(at);
            Some((field.to_string(), full))
        } else {
            None
        }
    };
    let mut cuts = Vec::new();
    match &mut entry.act {
        Act::Message { text, .. } => cuts.extend(hold("text", text)),
        Act::ToolResult { output, .. } => cuts.extend(hold("output", output)),
        Act::ToolCall { input, .. } => {
            let mut each = |field: &str, text: &mut String| cuts.extend(hold(field, text));
            seal_value("input", input, &mut each);
        }
        _ => {}
    }
    entry.cut.extend(cuts);
    entry
}

/// Masks and cuts every string of a JSON value, naming each by its path.
fn seal_value(
    field: &str,
    value: &mut serde_json::Value,
    seal: &mut impl FnMut(&str, &mut String),
) {
    match value {
        serde_json::Value::String(s) => seal(field, s),
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                seal_value(&format!("{field}.{i}"), item, seal);
            }
        }
        serde_json::Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                seal_value(&format!("{field}.{key}"), item, seal);
            }
        }
        _ => {}
    }
}

/// The argument a tool call is best known by: its command, file path, pattern or first
/// string argument.
pub fn first_argument(input: &serde_json::Value) -> String {
    const KNOWN: [&str; 7] = [
        "command",
        "cmd",
        "file_path",
        "path",
        "pattern",
        "url",
        "query",
    ];
    let Some(map) = input.as_object() else {
        return match input {
            serde_json::Value::String(s) => s.lines().next().unwrap_or("").to_string(),
            serde_json::Value::Null => String::new(),
            other => other.to_string(),
        };
    };
    let text = |v: &serde_json::Value| match v {
        serde_json::Value::String(s) => Some(s.lines().next().unwrap_or("").to_string()),
        serde_json::Value::Array(items) => Some(
            items
                .iter()
                .filter_map(serde_json::Value::as_str)
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    };
    KNOWN
        .iter()
        .find_map(|k| map.get(*k).and_then(text))
        .or_else(|| map.values().find_map(text))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_values_are_masked() {
        let dump = "HOME=/root\nANTHROPIC_API_KEY=sk-ant-api03-abcdefghijklmnopqrstuvwxyz\nGH_TOKEN=ghp_0123456789abcdefghijklmnopqrstuv\nPATH=/usr/bin\n";
        let masked = mask(dump);
        assert_eq!(
            masked,
            "HOME=/root\nANTHROPIC_API_KEY=[masked]\nGH_TOKEN=[masked]\nPATH=/usr/bin\n"
        );
        assert_eq!(
            mask("curl -H 'Authorization: Bearer abc.DEF-123_456xyz' x"),
            "curl -H 'Authorization: Bearer [masked]' x"
        );
        assert_eq!(
            mask("the key is sk-proj-ABCDEFGHIJKLMNOPQRSTUV, and AKIAABCDEFGHIJKLMNOP"),
            "the key is [masked], and [masked]"
        );
        assert_eq!(
            mask(r#"{"OPENAI_API_KEY": "abcd1234efgh"}"#),
            r#"{"OPENAI_API_KEY": "[masked]"}"#
        );
        // Ordinary text stays.
        let plain = "def late_fee(inv): return 2  # token count 12";
        assert_eq!(mask(plain), plain);
    }

    #[test]
    fn long_texts_are_cut_at_the_limit_and_the_cut_is_named() {
        let long = "é".repeat(TEXT_LIMIT); // 2 bytes each
        let entry = Entry::from(Act::ToolResult {
            id: None,
            output: long.clone(),
            exit: Some(0),
            error: false,
        })
        .sealed();
        let Act::ToolResult { output, .. } = &entry.act else {
            panic!()
        };
        assert_eq!(output.len(), TEXT_LIMIT);
        assert_eq!(entry.cut.get("output"), Some(&(long.len() as u64)));
        let call = Entry::from(Act::ToolCall {
            tool: "Write".into(),
            id: None,
            input: serde_json::json!({"file_path": "a", "content": "x".repeat(TEXT_LIMIT + 1)}),
        })
        .sealed();
        assert_eq!(
            call.cut.get("input.content"),
            Some(&((TEXT_LIMIT + 1) as u64))
        );
        assert!(!call.cut.contains_key("input.file_path"));
    }

    #[test]
    fn an_entry_reads_back_as_it_was_written() {
        let entries = vec![
            Entry::from(Act::Message {
                text: "hi".into(),
                from: None,
            }),
            Entry::from(Act::Edit {
                path: "a.py".into(),
                op: EditOp::Edit,
                old: Some("x".into()),
                new: Some("y".into()),
                failed: None,
            }),
            Entry::from(Act::End {
                reason: "completed".into(),
                usage: Usage::default(),
                summary: None,
            }),
        ];
        let line = serde_json::to_string(&entries).unwrap();
        assert!(
            line.starts_with(r#"[{"kind":"message","text":"hi"}"#),
            "{line}"
        );
        let back: Vec<Entry> = serde_json::from_str(&line).unwrap();
        assert_eq!(back, entries);
    }

    #[test]
    fn a_stream_json_capture_gives_texts_calls_and_results_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session-1.stdout");
        let long = "y".repeat(READ_LIMIT + 10);
        let lines = [
            serde_json::json!({"type": "system", "subtype": "init"}),
            serde_json::json!({"type": "assistant", "message": {"content": [
                {"type": "text", "text": "Reading the notes."},
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/w/PROGRESS.md"}}
            ]}}),
            serde_json::json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": long}]}
            ]}}),
            serde_json::json!({"type": "user", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t2", "content": "Exit code 1\nboom", "is_error": true}
            ]}}),
            serde_json::json!({"type": "result", "subtype": "success"}),
        ];
        let text: String =
            lines.iter().map(|l| format!("{l}\n")).collect::<String>() + "not json\n";
        std::fs::write(&path, text).unwrap();
        let t = read_stream_json(&path);
        let kinds: Vec<&str> = t
            .iter()
            .map(|e| match e.act {
                Act::Message { .. } => "message",
                Act::ToolCall { .. } => "tool_call",
                Act::ToolResult { .. } => "tool_result",
                _ => "other",
            })
            .collect();
        assert_eq!(
            kinds,
            ["message", "tool_call", "tool_result", "tool_result"]
        );
        assert_eq!(t[1].headline(), "/w/PROGRESS.md");
        // Held short as it was read, its full length kept for the cut it gets.
        assert_eq!(t[2].cut.get("output"), Some(&((READ_LIMIT + 10) as u64)));
        let sealed = t[2].clone().sealed();
        assert_eq!(sealed.cut.get("output"), Some(&((READ_LIMIT + 10) as u64)));
        assert!(matches!(
            &t[3].act,
            Act::ToolResult {
                exit: Some(1),
                error: true,
                ..
            }
        ));
    }

    #[test]
    fn a_tool_call_is_known_by_its_command_or_path() {
        assert_eq!(
            first_argument(&serde_json::json!({"description": "d", "command": "ls -la\nmore"})),
            "ls -la"
        );
        assert_eq!(
            first_argument(&serde_json::json!({"file_path": "/w/PROGRESS.md"})),
            "/w/PROGRESS.md"
        );
        assert_eq!(
            first_argument(&serde_json::json!({"cmd": ["bash", "-lc", "cat x"]})),
            "bash -lc cat x"
        );
    }
}
