//! Which Codex form a JSON line belongs to: a rollout's record or an event of `codex exec
//! --json`. Detection asks it of a file's first line, the rollout reader of each line.

use serde_json::{Map, Value};

/// The record types of a rollout line.
pub const RECORD_TYPES: &[&str] = &[
    "session_meta",
    "response_item",
    "event_msg",
    "turn_context",
    "compacted",
];

/// The types of a bare response item (the oldest rollouts).
const ITEM_TYPES: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "web_search_call",
];

/// Whether `line` starts a rollout (of any CLI version).
pub fn is_rollout_line(line: &Map<String, Value>) -> bool {
    let kind = line.get("type").and_then(Value::as_str);
    match kind {
        Some(k) if RECORD_TYPES.contains(&k) => line.contains_key("payload"),
        Some(k) => ITEM_TYPES.contains(&k),
        // The oldest rollouts start with the session's id and time, untyped.
        None => line.contains_key("id") && line.contains_key("timestamp"),
    }
}

/// Whether `line` is an event of `codex exec --json`.
pub fn is_exec_json_event(line: &Map<String, Value>) -> bool {
    let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
    kind.starts_with("thread.")
        || kind.starts_with("turn.")
        || kind.starts_with("item.")
        || (kind == "error" && line.contains_key("message"))
}
