//! Codex CLI rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), one session
//! a file, in every shape the CLI has written them.
//!
//! **Lines.** `{"timestamp", "type", "payload"}`: `session_meta` (the session's id, cwd,
//! start time and CLI version; the first one counts), `turn_context` (the cwd of the
//! turns that follow), `response_item` (messages, calls and their outputs), `event_msg`
//! (token counts, turn starts, ends and aborts, item events), `compacted` (a summary
//! that replaces the history the model sees; the calls before it are already in the
//! file, so it adds nothing). Rollouts of the oldest CLI versions hold the items bare,
//! after a first line with the session's `id` and `timestamp`. Any other line type
//! (`world_state`, `token_usage_record`...) is left alone.
//!
//! **Calls.** `function_call` named `shell`/`container.exec`/`local_shell` (an argv and
//! a `workdir`, CLI 0.4x), `shell_command` (a script and a `workdir`), `exec_command`
//! (a `cmd` script and a `workdir`, CLI 0.13x and later), `apply_patch`; a
//! `local_shell_call` (an `action` with an argv and a `working_directory`); a
//! `custom_tool_call` named `apply_patch` (the patch as its input) or `exec` (the
//! JavaScript tool whose nested calls come as item events). An `apply_patch` the model
//! ran through the shell (`["apply_patch", PATCH]`, `apply_patch <<'EOF'`) is a patch,
//! as Codex applies it ([`super::tool`] reads each tool's arguments). Outputs
//! (`function_call_output`, `custom_tool_call_output`) and the `item_completed`,
//! `exec_command_end` and `patch_apply_end` events of the same call id say what became
//! of it ([`super::outcome`]); such an event for an id no call has is a nested call of
//! the `exec` tool, taken as a call of its own.
//!
//! **Usage.** `token_count` events: their `total_token_usage` is cumulative, so each
//! event adds what it grew by (a repeated total adds nothing, a total that starts over
//! adds itself); events with only a per-call `last_token_usage` (or the flat counts of
//! early versions) add that. A turn is one model call: one count that added tokens.
//! input_tokens include cached ones and output_tokens the reasoning ones, as Codex
//! counts them and as the command driver reads `codex exec --json`.
//!
//! **Status.** `interrupted` when the last turn was aborted (`turn_aborted`) or never
//! completed (a `task_started` without its `task_complete`: the CLI was killed), or,
//! in rollouts without turn events, when the last item is a call or an output the
//! model never answered; otherwise `completed`.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::command::script_of_argv;
use super::line_kind::{self, RECORD_TYPES};
use super::outcome::Answer;
use super::session::{Call, Change, ChangeKind, CodexSession, What};
use super::tokens::Tokens;
use super::tool::{self, argv};
use crate::agent::Usage;
use crate::agent::trace::EndStatus;
use crate::error::Result;
use crate::import::session::{ObjectLine, bad_line};

/// What a rollout line is, for the message of a file that is not one.
pub const EXPECTED: &str = "a Codex rollout line (a JSON object with \"type\" session_meta, response_item, event_msg, turn_context or compacted and a \"payload\")";

/// Reads one rollout's lines (already read as objects) into a session.
pub fn read(file: &Path, lines: Vec<ObjectLine>) -> Result<CodexSession> {
    let mut reader = Reader {
        file,
        session: CodexSession {
            file: file.to_path_buf(),
            id: None,
            cwd: None,
            started: None,
            calls: Vec::new(),
            answers: HashMap::new(),
            usage: Usage::default(),
            status: EndStatus::Completed,
            unseen_changes: Vec::new(),
            form: "rollout",
        },
        turn_cwd: None,
        tokens: Tokens::default(),
        turn_open: false,
        aborted: false,
        turn_events: false,
        last_item: None,
        nested: 0,
    };
    for (i, (number, line)) in lines.into_iter().enumerate() {
        if i == 0 && !line_kind::is_rollout_line(&line) {
            return Err(bad_line(
                file,
                number,
                EXPECTED,
                &crate::import::session::describe_shape(&line),
            ));
        }
        reader.line(number, line);
    }
    Ok(reader.finish())
}

struct Reader<'f> {
    file: &'f Path,
    session: CodexSession,
    /// The cwd of the current turn.
    turn_cwd: Option<String>,
    tokens: Tokens,
    turn_open: bool,
    aborted: bool,
    turn_events: bool,
    /// Whether the last response item was one the model still had to answer.
    last_item: Option<bool>,
    nested: usize,
}

fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

impl Reader<'_> {
    fn at(&self, number: usize) -> String {
        format!("{}:{number}", self.file.display())
    }

    fn line(&mut self, number: usize, mut line: Map<String, Value>) {
        let kind = line.get("type").and_then(Value::as_str).map(str::to_string);
        let (kind, payload) = match kind.as_deref() {
            Some(k) if RECORD_TYPES.contains(&k) || line.contains_key("payload") => {
                (k.to_string(), line.remove("payload").unwrap_or(Value::Null))
            }
            Some(_) => ("response_item".to_string(), Value::Object(line.clone())),
            None if self.session.id.is_none() && line.contains_key("id") => {
                ("session_meta".to_string(), Value::Object(line.clone()))
            }
            None => return,
        };
        let timestamp = line.get("timestamp").and_then(Value::as_str);
        match kind.as_str() {
            "session_meta" => self.meta(&payload, timestamp),
            "turn_context" => {
                if let Some(cwd) = text(&payload, "cwd") {
                    self.turn_cwd = Some(cwd.to_string());
                }
            }
            "response_item" => self.item(number, &payload),
            "event_msg" => self.event(number, &payload),
            _ => {}
        }
    }

    fn meta(&mut self, payload: &Value, timestamp: Option<&str>) {
        if self.session.id.is_some() {
            return;
        }
        // A forked session's meta nests the original's under `meta`.
        let meta = payload.get("meta").unwrap_or(payload);
        self.session.id = Some(text(meta, "id").unwrap_or("").to_string());
        self.session.cwd = text(meta, "cwd").map(str::to_string);
        self.turn_cwd = self.session.cwd.clone();
        self.session.started = text(meta, "timestamp")
            .or(timestamp)
            .and_then(crate::timestamp::rfc3339_nanos);
    }

    /// The absolute directory of a call whose `workdir` is `workdir` (relative to the
    /// turn's cwd, or absolute).
    fn dir(&self, workdir: Option<&str>) -> Option<String> {
        tool::resolve(workdir.filter(|w| !w.is_empty()), self.turn_cwd.as_deref())
    }

    fn push(&mut self, number: usize, id: String, what: What, cwd: Option<String>) {
        self.session.calls.push(Call {
            id,
            what,
            origin: self.at(number),
            cwd,
        });
    }

    fn item(&mut self, number: usize, item: &Value) {
        let kind = text(item, "type").unwrap_or("");
        let call_id = text(item, "call_id")
            .or_else(|| text(item, "id"))
            .map(str::to_string);
        match kind {
            "function_call" => {
                let name = text(item, "name").unwrap_or("");
                // The arguments are a string of JSON; an unparsable one names no command.
                let args: Value = text(item, "arguments")
                    .and_then(|a| serde_json::from_str(a).ok())
                    .unwrap_or(Value::Null);
                let id = call_id.unwrap_or_else(|| self.at(number));
                let (what, dir) = tool::function_call(name, &args);
                let dir = self.dir(dir.as_deref());
                self.push(number, id, what, dir);
                self.last_item = Some(true);
            }
            "local_shell_call" => {
                let action = item.get("action").unwrap_or(&Value::Null);
                let id = call_id.unwrap_or_else(|| self.at(number));
                let workdir = text(action, "working_directory");
                let (what, dir) = match argv(action.get("command")) {
                    Some(argv) => tool::argv_call(&argv, workdir),
                    None => (
                        What::Tool("local_shell_call".into()),
                        workdir.map(str::to_string),
                    ),
                };
                let dir = self.dir(dir.as_deref());
                self.push(number, id, what, dir);
                self.last_item = Some(true);
            }
            "custom_tool_call" => {
                let name = text(item, "name").unwrap_or("");
                let id = call_id.unwrap_or_else(|| self.at(number));
                let what = tool::custom_tool_call(name, text(item, "input"));
                let dir = self.dir(None);
                self.push(number, id, what, dir);
                self.last_item = Some(true);
            }
            "function_call_output" | "custom_tool_call_output" => {
                if let Some(id) = text(item, "call_id") {
                    let answer = self.session.answers.remove(id).unwrap_or_default();
                    let output = item.get("output").unwrap_or(&Value::Null);
                    self.session
                        .answers
                        .insert(id.to_string(), answer.with_output(output));
                }
                self.last_item = Some(true);
            }
            "message" => {
                let role = text(item, "role");
                if role == Some("assistant") {
                    self.last_item = Some(false);
                } else if role == Some("user") {
                    // A new prompt: whatever was cut off before is behind it.
                    self.aborted = false;
                }
            }
            _ => {}
        }
    }

    fn event(&mut self, number: usize, event: &Value) {
        match text(event, "type").unwrap_or("") {
            "token_count" => {
                if let Some(usage) = event.get("info").filter(|i| !i.is_null()) {
                    self.tokens.count(usage);
                } else if event.get("input_tokens").is_some() {
                    // Early versions: the counts of one model call, flat.
                    self.tokens.count_last(event);
                }
            }
            "task_started" | "turn_started" => {
                self.turn_events = true;
                self.turn_open = true;
                self.aborted = false;
            }
            "task_complete" | "turn_complete" => {
                self.turn_events = true;
                self.turn_open = false;
            }
            "turn_aborted" => {
                self.turn_events = true;
                self.turn_open = false;
                self.aborted = true;
            }
            "item_completed" => {
                if let Some(item) = event.get("item") {
                    self.item_event(number, item);
                }
            }
            "exec_command_end" => self.exec_end(number, event),
            "patch_apply_end" => self.patch_end(number, event),
            "undo_completed" if event.get("success").and_then(Value::as_bool) != Some(false) => {
                let at = self.at(number);
                self.session
                    .unseen_changes
                    .push((at, "Codex undid a turn's changes (/undo)".into()));
            }
            "thread_rolled_back" => {
                let at = self.at(number);
                self.session
                    .unseen_changes
                    .push((at, "Codex rolled the thread back".into()));
            }
            _ => {}
        }
    }

    fn known_call(&self, id: Option<&str>) -> bool {
        id.is_some_and(|id| self.session.calls.iter().any(|c| c.id == id))
    }

    fn answer(&mut self, id: &str) -> &mut Answer {
        self.session.answers.entry(id.to_string()).or_default()
    }

    fn nested_id(&mut self, id: Option<&str>) -> String {
        self.nested += 1;
        match id {
            Some(id) => id.to_string(),
            None => format!("{}#nested-{}", self.file.display(), self.nested),
        }
    }

    /// `item_completed`: a command or file change, of a call already read (its exit code
    /// or status) or nested in an `exec` call (a call of its own).
    fn item_event(&mut self, number: usize, item: &Value) {
        let kind: String = text(item, "type")
            .unwrap_or("")
            .chars()
            .filter(|c| *c != '_')
            .flat_map(char::to_lowercase)
            .collect();
        let id = text(item, "id");
        let status = text(item, "status").map(str::to_string);
        let exit_code = item.get("exit_code").and_then(Value::as_i64);
        if !matches!(kind.as_str(), "commandexecution" | "filechange") {
            return;
        }
        if self.known_call(id) {
            let answer = self.answer(id.unwrap_or(""));
            answer.exit_code = exit_code.or(answer.exit_code);
            answer.status = status.or(answer.status.take());
            return;
        }
        let cwd = text(item, "cwd").map(|c| c.strip_prefix("file://").unwrap_or(c).to_string());
        let what = if kind == "filechange" {
            What::Changes(changes(item.get("changes")))
        } else {
            match argv(item.get("command")) {
                Some(argv) => What::Shell(script_of_argv(&argv)),
                None => What::Shell(text(item, "command").unwrap_or("").to_string()),
            }
        };
        let id = self.nested_id(id);
        self.session.answers.insert(
            id.clone(),
            Answer {
                exit_code,
                status,
                text: text(item, "aggregated_output")
                    .or_else(|| text(item, "stdout"))
                    .map(str::to_string),
                success: None,
            },
        );
        let cwd = cwd.or_else(|| self.dir(None));
        self.push(number, id, what, cwd);
    }

    /// `exec_command_end` (recorded by some versions): a command's exit code.
    fn exec_end(&mut self, number: usize, event: &Value) {
        let id = text(event, "call_id");
        let exit_code = event.get("exit_code").and_then(Value::as_i64);
        let status = text(event, "status").map(str::to_string);
        if self.known_call(id) {
            let answer = self.answer(id.unwrap_or(""));
            answer.exit_code = exit_code.or(answer.exit_code);
            answer.status = status.or(answer.status.take());
            return;
        }
        let Some(argv) = argv(event.get("command")) else {
            return;
        };
        let id = self.nested_id(id);
        self.session.answers.insert(
            id.clone(),
            Answer {
                exit_code,
                status,
                ..Answer::default()
            },
        );
        let cwd = text(event, "cwd")
            .map(str::to_string)
            .or_else(|| self.dir(None));
        self.push(number, id, What::Shell(script_of_argv(&argv)), cwd);
    }

    /// `patch_apply_end` (recorded by some versions): whether a patch succeeded, and for
    /// a nested one its changes.
    fn patch_end(&mut self, number: usize, event: &Value) {
        let id = text(event, "call_id");
        let status = match event.get("success").and_then(Value::as_bool) {
            Some(true) => Some("completed".to_string()),
            Some(false) => Some("failed".to_string()),
            None => text(event, "status").map(str::to_string),
        };
        if self.known_call(id) {
            let answer = self.answer(id.unwrap_or(""));
            answer.status = status.or(answer.status.take());
            return;
        }
        if event.get("changes").is_none() {
            return;
        }
        let id = self.nested_id(id);
        self.session.answers.insert(
            id.clone(),
            Answer {
                status,
                ..Answer::default()
            },
        );
        let cwd = self.dir(None);
        self.push(
            number,
            id,
            What::Changes(changes(event.get("changes"))),
            cwd,
        );
    }

    fn finish(mut self) -> CodexSession {
        self.session.usage = self.tokens.usage();
        let cut_off = if self.turn_events {
            self.turn_open || self.aborted
        } else {
            self.aborted || self.last_item == Some(true)
        };
        if cut_off {
            self.session.status = EndStatus::Interrupted;
        }
        self.session
    }
}

/// The changes of a file change record: a map from path to `{"type": "add", "content"}`
/// / `{"type": "update", "unified_diff", "move_path"}` / `{"type": "delete"}` (or the
/// same with the kind as the only key, `{"add": {"content"}}`), or a list of them with
/// a `path` each.
fn changes(value: Option<&Value>) -> Vec<Change> {
    let one = |path: &str, change: &Value| {
        let (kind, body) = match text(change, "type").or_else(|| text(change, "kind")) {
            Some(kind) => (kind.to_string(), change),
            None => match change.as_object().and_then(|m| m.iter().next()) {
                Some((k, v)) => (k.clone(), v),
                None => return None,
            },
        };
        let kind = match kind.as_str() {
            "add" => ChangeKind::Add(text(body, "content").unwrap_or("").to_string()),
            "delete" => ChangeKind::Delete,
            "update" => ChangeKind::Update {
                diff: text(body, "unified_diff").unwrap_or("").to_string(),
                move_to: text(body, "move_path").map(str::to_string),
            },
            _ => return None,
        };
        Some(Change {
            path: path.to_string(),
            kind,
        })
    };
    match value {
        Some(Value::Object(map)) => map.iter().filter_map(|(p, c)| one(p, c)).collect(),
        Some(Value::Array(list)) => list
            .iter()
            .filter_map(|c| one(text(c, "path")?, c))
            .collect(),
        _ => Vec::new(),
    }
}
