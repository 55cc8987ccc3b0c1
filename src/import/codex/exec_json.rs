//! `codex exec --json` captures: the JSONL events Codex prints for one headless
//! session, as the command driver keeps them (`RUN_DIR/agents/<trial>/session-N.stdout`).
//!
//! `thread.started` names the session; `item.completed` events carry its
//! `command_execution`s (the command as one quoted string, `/bin/bash -lc '...'`, and
//! its exit code and status) and `file_change`s, which list the paths changed but not
//! their content: such a change cannot be reconstructed, so it is a `skip` and the
//! session is divergent (the rollout of the same session has the patch; import that).
//! An item started and never completed has no result. Usage and the failure status are
//! read as the command driver reads the capture (`loopbench usage codex`): tokens
//! summed over `turn.completed`, turns = completed items. A session whose last turn
//! never completed (the CLI was killed), or that ended with `turn.failed` or `error`,
//! is `interrupted`. The capture names no directory: paths and commands are taken from
//! `--root`.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde_json::Value;

use super::command::{heredoc_patch, patch_invocation, script_of_argv, split_words};
use super::line_kind::is_exec_json_event;
use super::outcome::Answer;
use super::session::{Call, CodexSession, What};
use crate::agent::command::cli_usage::{CliFormat, parse};
use crate::agent::trace::EndStatus;
use crate::error::Result;
use crate::import::session::{ObjectLine, bad_line};

/// What a capture line is, for the message of a file that is not one.
pub const EXPECTED: &str = "a `codex exec --json` event (a JSON object with \"type\" thread.started, turn.started, item.started, item.completed, turn.completed or turn.failed)";

fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// Reads one capture's lines into a session.
pub fn read(file: &Path, lines: Vec<ObjectLine>) -> Result<CodexSession> {
    let mut session = CodexSession {
        file: file.to_path_buf(),
        id: None,
        cwd: None,
        started: None,
        calls: Vec::new(),
        answers: HashMap::new(),
        usage: Default::default(),
        status: EndStatus::Completed,
        unseen_changes: Vec::new(),
        form: "exec --json capture",
    };
    let mut started: HashSet<String> = HashSet::new();
    let mut completed: HashSet<String> = HashSet::new();
    let mut turn_open = false;
    let mut capture = String::new();
    for (i, (number, line)) in lines.into_iter().enumerate() {
        if i == 0 && !is_exec_json_event(&line) {
            return Err(bad_line(
                file,
                number,
                EXPECTED,
                &crate::import::session::describe_shape(&line),
            ));
        }
        let value = Value::Object(line);
        capture += &value.to_string();
        capture.push('\n');
        let at = format!("{}:{number}", file.display());
        match text(&value, "type").unwrap_or("") {
            "thread.started" if session.id.is_none() => {
                session.id = text(&value, "thread_id").map(str::to_string);
            }
            "turn.started" => turn_open = true,
            "turn.completed" | "turn.failed" => turn_open = false,
            "item.started" => {
                if let Some(call) = item_call(&value, &at) {
                    started.insert(call.id.clone());
                    if !session.calls.iter().any(|c| c.id == call.id) {
                        session.calls.push(call);
                    }
                }
            }
            "item.completed" => {
                let Some(item) = value.get("item") else {
                    continue;
                };
                let Some(call) = item_call(&value, &at) else {
                    continue;
                };
                let answer = Answer {
                    text: text(item, "aggregated_output").map(str::to_string),
                    success: None,
                    exit_code: item.get("exit_code").and_then(Value::as_i64),
                    status: text(item, "status").map(str::to_string),
                };
                completed.insert(call.id.clone());
                session.answers.insert(call.id.clone(), answer);
                match session.calls.iter_mut().find(|c| c.id == call.id) {
                    Some(known) => *known = call,
                    None => session.calls.push(call),
                }
            }
            _ => {}
        }
    }
    let report = parse(CliFormat::Codex, &capture);
    session.usage = crate::agent::Usage {
        turns: report.turns,
        input_tokens: report.input_tokens,
        output_tokens: report.output_tokens,
        cost_usd: report.cost_usd,
    };
    let unfinished = started.iter().any(|id| !completed.contains(id));
    if turn_open || unfinished || report.status == Some(EndStatus::Interrupted) {
        session.status = EndStatus::Interrupted;
    }
    Ok(session)
}

/// The call of an item event, for the items that touch files or run commands.
fn item_call(event: &Value, at: &str) -> Option<Call> {
    let item = event.get("item")?;
    // Item ids restart in every capture (`item_0`...): the capture's place makes them
    // unique across an import.
    let file = at.rsplit_once(':').map_or(at, |(f, _)| f);
    let id = format!("{file}#{}", text(item, "id")?);
    let what = match text(item, "type")? {
        "command_execution" => {
            let line = text(item, "command").unwrap_or("");
            match split_words(line) {
                Some(argv) => match patch_invocation(&argv) {
                    Some((patch, None)) => What::Patch(patch),
                    _ => What::Shell(script_of_argv(&argv)),
                },
                None => match heredoc_patch(line) {
                    Some((patch, None)) => What::Patch(patch),
                    _ => What::Shell(line.to_string()),
                },
            }
        }
        "file_change" => What::ChangedPaths(
            item.get("changes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|c| text(c, "path").map(str::to_string))
                .collect(),
        ),
        "mcp_tool_call" => What::Tool(
            text(item, "tool").map_or("mcp_tool_call".to_string(), |t| format!("mcp {t}")),
        ),
        "web_search" => What::Tool("web_search".into()),
        _ => return None,
    };
    Some(Call {
        id,
        what,
        origin: at.to_string(),
        cwd: None,
    })
}
