//! The entries of a `codex exec --json` capture: the JSONL events Codex prints for one
//! headless session (`thread.*`, `turn.*`, `item.started`/`item.completed` of its
//! items, `error`), as the command driver keeps its stdout. An item's entries come when
//! Codex reports it: a command or MCP call when it starts, its result when it
//! completes; a message, a reasoning summary, a web search and a file change when they
//! complete. A file change names its paths and kind but not the change, so its edits
//! have no text. Anything else (the to-do list) is left out.

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::path::Path;

use serde_json::{Value, json};

use super::{Act, EditOp, Trajectory, read_bounded};

/// The entries of the `codex exec --json` capture at `path`, read a line at a time; a
/// line that is not JSON gives none (each text held to the read limit, as a
/// stream-json capture's are).
pub fn read_codex_json(path: &Path) -> Trajectory {
    let Ok(file) = std::fs::File::open(path) else {
        return Trajectory::new();
    };
    let mut events = CodexEvents::default();
    let mut out = Trajectory::new();
    for line in std::io::BufReader::new(file)
        .split(b'\n')
        .map_while(std::result::Result::ok)
    {
        if let Ok(event) = serde_json::from_slice::<Value>(&line) {
            out.extend(events.event(&event).into_iter().map(read_bounded));
        }
    }
    out.extend(events.finish().into_iter().map(read_bounded));
    out
}

/// What the events so far left open: the calls already entered (a command or MCP call
/// that started), and the file changes that started and have not completed.
#[derive(Default)]
struct CodexEvents {
    called: HashSet<String>,
    changing: HashMap<String, Vec<String>>,
}

fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// The paths of a `file_change` item, with their kind (`add`, `delete`, `update`).
fn changes(item: &Value) -> Vec<(String, String)> {
    item.get("changes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| {
            Some((
                text(c, "path")?.to_string(),
                text(c, "kind").unwrap_or("update").to_string(),
            ))
        })
        .collect()
}

impl CodexEvents {
    /// The acts of one event.
    fn event(&mut self, event: &Value) -> Vec<Act> {
        let said = |message: Option<&str>| {
            message
                .map(|text| Act::Message {
                    text: text.to_string(),
                    from: Some("codex".into()),
                })
                .into_iter()
                .collect()
        };
        match text(event, "type").unwrap_or("") {
            "item.started" => event.get("item").map_or_else(Vec::new, |i| self.started(i)),
            "item.completed" => event
                .get("item")
                .map_or_else(Vec::new, |i| self.completed(i)),
            // What the CLI itself reported: a failed turn, a stream's error.
            "turn.failed" => said(event.get("error").and_then(|e| text(e, "message"))),
            "error" => said(text(event, "message")),
            _ => Vec::new(),
        }
    }

    /// The call of a command or MCP call as it starts; a file change is kept until it
    /// completes.
    fn started(&mut self, item: &Value) -> Vec<Act> {
        let Some(id) = text(item, "id") else {
            return Vec::new();
        };
        match text(item, "type").unwrap_or("") {
            "command_execution" | "mcp_tool_call" => {
                self.called.insert(id.to_string());
                vec![call(item)]
            }
            "file_change" => {
                let paths = changes(item).into_iter().map(|(path, _)| path).collect();
                self.changing.insert(id.to_string(), paths);
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// The acts of an item that completed.
    fn completed(&mut self, item: &Value) -> Vec<Act> {
        let id = text(item, "id").map(str::to_string);
        let status = text(item, "status").unwrap_or("");
        let failed = matches!(status, "failed" | "declined");
        let mut out = Vec::new();
        match text(item, "type").unwrap_or("") {
            "agent_message" => out.extend(text(item, "text").map(|t| Act::Message {
                text: t.to_string(),
                from: None,
            })),
            "reasoning" => out.extend(text(item, "text").map(|t| Act::Message {
                text: t.to_string(),
                from: Some("reasoning".into()),
            })),
            kind @ ("command_execution" | "mcp_tool_call") => {
                if id.as_ref().is_none_or(|id| !self.called.remove(id)) {
                    out.push(call(item));
                }
                let output = if kind == "command_execution" {
                    text(item, "aggregated_output").unwrap_or("").to_string()
                } else {
                    mcp_output(item)
                };
                out.push(Act::ToolResult {
                    id,
                    output,
                    exit: item.get("exit_code").and_then(Value::as_i64),
                    error: failed,
                });
            }
            "file_change" => {
                if let Some(id) = &id {
                    self.changing.remove(id);
                }
                for (path, kind) in changes(item) {
                    out.push(Act::Edit {
                        path,
                        op: match kind.as_str() {
                            "add" => EditOp::Write,
                            "delete" => EditOp::Delete,
                            _ => EditOp::Edit,
                        },
                        old: None,
                        new: None,
                        failed: failed.then(|| format!("Codex reported the change {status}")),
                    });
                }
            }
            "web_search" => out.push(Act::ToolCall {
                tool: "web_search".into(),
                id,
                input: json!({ "query": text(item, "query").unwrap_or("") }),
            }),
            "error" => out.extend(text(item, "message").map(|t| Act::Message {
                text: t.to_string(),
                from: Some("codex".into()),
            })),
            _ => {}
        }
        out
    }

    /// A file change that started and never completed (the session was cut off): a call
    /// naming its paths, without a result, since whether it was applied is not known.
    fn finish(self) -> Vec<Act> {
        let mut open: Vec<(String, Vec<String>)> = self.changing.into_iter().collect();
        open.sort();
        open.into_iter()
            .map(|(id, paths)| Act::ToolCall {
                tool: "file_change".into(),
                id: Some(id),
                input: json!({ "paths": paths }),
            })
            .collect()
    }
}

/// The call of a command (`shell`, its command line as Codex printed it) or of an MCP
/// tool (`mcp TOOL`, its arguments).
fn call(item: &Value) -> Act {
    let id = text(item, "id").map(str::to_string);
    match text(item, "type") {
        Some("mcp_tool_call") => Act::ToolCall {
            tool: format!("mcp {}", text(item, "tool").unwrap_or("")),
            id,
            input: item.get("arguments").cloned().unwrap_or(Value::Null),
        },
        _ => Act::ToolCall {
            tool: "shell".into(),
            id,
            input: json!({ "command": text(item, "command").unwrap_or("") }),
        },
    }
}

/// What an MCP call gave back: its result's texts, or its error's message.
fn mcp_output(item: &Value) -> String {
    if let Some(message) = item.get("error").and_then(|e| text(e, "message")) {
        return message.to_string();
    }
    item.get("result")
        .and_then(|r| r.get("content"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| text(c, "text"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn acts(lines: &[Value]) -> Vec<Act> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session-1.stdout");
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        std::fs::write(&path, text).unwrap();
        read_codex_json(&path).into_iter().map(|e| e.act).collect()
    }

    #[test]
    fn mcp_calls_reasoning_errors_and_an_unfinished_change_are_read_as_codex_printed_them() {
        let got = acts(&[
            json!({"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "Look first."}}),
            json!({"type": "item.started", "item": {"id": "item_1", "type": "mcp_tool_call", "server": "fs", "tool": "read_file", "arguments": {"path": "PROGRESS.md"}, "status": "in_progress"}}),
            json!({"type": "item.completed", "item": {"id": "item_1", "type": "mcp_tool_call", "server": "fs", "tool": "read_file", "arguments": {"path": "PROGRESS.md"}, "result": {"content": [{"type": "text", "text": "notes"}]}, "status": "completed"}}),
            json!({"type": "item.completed", "item": {"id": "item_2", "type": "file_change", "changes": [{"path": "a.py", "kind": "add"}, {"path": "b.py", "kind": "delete"}], "status": "failed"}}),
            json!({"type": "item.started", "item": {"id": "item_3", "type": "file_change", "changes": [{"path": "c.py", "kind": "update"}], "status": "in_progress"}}),
            json!({"type": "turn.failed", "error": {"message": "stream disconnected"}}),
        ]);
        assert_eq!(
            got,
            vec![
                Act::Message {
                    text: "Look first.".into(),
                    from: Some("reasoning".into())
                },
                Act::ToolCall {
                    tool: "mcp read_file".into(),
                    id: Some("item_1".into()),
                    input: json!({"path": "PROGRESS.md"})
                },
                Act::ToolResult {
                    id: Some("item_1".into()),
                    output: "notes".into(),
                    exit: None,
                    error: false
                },
                Act::Edit {
                    path: "a.py".into(),
                    op: EditOp::Write,
                    old: None,
                    new: None,
                    failed: Some("Codex reported the change failed".into())
                },
                Act::Edit {
                    path: "b.py".into(),
                    op: EditOp::Delete,
                    old: None,
                    new: None,
                    failed: Some("Codex reported the change failed".into())
                },
                Act::Message {
                    text: "stream disconnected".into(),
                    from: Some("codex".into())
                },
                Act::ToolCall {
                    tool: "file_change".into(),
                    id: Some("item_3".into()),
                    input: json!({"paths": ["c.py"]})
                },
            ]
        );
    }
}
