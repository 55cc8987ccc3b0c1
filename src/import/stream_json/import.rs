//! `loopbench import stream-json`: the stdout of `claude -p --output-format stream-json
//! --verbose` → a trace, one session per capture file.
//!
//! **Inputs.** Each file is one session; several files become sessions 1..k in the
//! order given. A directory is a trial's capture directory of the `command` driver
//! (`RUN_DIR/agents/<trial_id>/`): its `session-<n>.stdout` files in numeric order of
//! n, so that a real run can be re-scored later.
//!
//! **Lines.** `system` (subtype `init`) gives the `cwd`, `assistant` lines the tool
//! calls and per-message usage, `user` lines the tool results (with
//! `tool_use_result` when the CLI writes it), the last `result` line the session's
//! outcome. Anything else is ignored; a line that is not JSON is skipped with a note
//! (an agent wrapper may print other things on stdout). Calls map to actions as for
//! session files ([`crate::import::claude_code::mapping`]), paths relative to `--root`, else to the init
//! line's `cwd`.
//!
//! **Usage**: from the `result` line when there is one (read by the same function the
//! `command` driver uses: turns = num_turns, cost = total_cost_usd, tokens from its
//! usage with cache tokens counted as input), each field it lacks summed over distinct
//! assistant messages (turns: those of the main conversation, without a
//! `parent_tool_use_id`).
//!
//! **Status**: result `success` → `completed`; `error_max_turns` → `out_of_budget`;
//! any other result subtype (`error_during_execution`...) or no result line at all →
//! `interrupted` (the CLI stopped before finishing its turn); a tool call without a
//! result → `interrupted` too.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::import::claude_code::blocks::{UsageTally, tool_calls, tool_results};
use crate::import::claude_code::mapping::{ToolCall, ToolOutcome, map_session};
use crate::import::importer::{Importer, Recognize, SniffedLine};
use crate::import::session::{
    Imported, ImportedSession, capture_files, expand, read_json_lines, require_sessions,
};
use crate::import::tally::Tally;

/// `loopbench import stream-json`.
pub const IMPORTER: Importer = Importer {
    name: "stream-json",
    summary: "Captured `claude -p --output-format stream-json`",
    one: "a stream-json capture",
    about: "Captured stdout of `claude -p --output-format stream-json --verbose`, one file per \
            session in the order given; a directory means its session-<n>.stdout files (a \
            trial's capture directory, RUN_DIR/agents/<trial_id>)",
    examples: "\
Examples:
  loopbench import stream-json tests/data/stream-json/latefees > latefees-stream.jsonl
  loopbench import stream-json RUN_DIR/agents/TRIAL_ID --out trial.jsonl   # a command agent's captures",
    reads: "captured `claude -p --output-format stream-json` output, one file a session; a \
            directory means its `session-<n>.stdout` files",
    actions: "the same",
    fixture: "tests/data/stream-json/latefees",
    captures: Some(CliFormat::Claude),
    recognize: Recognize {
        file_name: is_capture,
        line: is_stream_line,
        document: None,
    },
    import,
};

/// A file a capture may be in: the command driver's `session-<n>.stdout`, or JSONL.
fn is_capture(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == "stdout" || e == "jsonl")
}

/// A line of stream-json: a message or the result, naming its `session_id`.
fn is_stream_line(line: SniffedLine) -> bool {
    let SniffedLine::Json(line) = line else {
        return false;
    };
    let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
    line.contains_key("session_id") && matches!(kind, "system" | "assistant" | "user" | "result")
}
use crate::agent::command::cli_usage::CliFormat;
use crate::agent::command::{Reported, report_result_line};
use crate::agent::trace::EndStatus;
use crate::error::{Result, TranscriptError};

/// Imports the capture files `inputs` (files, or trial capture directories).
pub fn import(inputs: &[PathBuf], root: Option<&str>) -> Result<Imported> {
    let mut imported = Imported::default();
    for input in inputs {
        let files = if input.is_dir() {
            let files = capture_files(input)?;
            if files.is_empty() {
                return Err(TranscriptError::HoldsNone {
                    dir: input.clone(),
                    expected: "session-<n>.stdout capture".into(),
                }
                .into());
            }
            files
        } else {
            expand(input, |_| true)?
        };
        for file in files {
            let session = import_file(&file, root, &mut imported)?;
            imported.push(session);
        }
    }
    require_sessions(&imported, inputs)?;
    Ok(imported)
}

/// The session of one capture file.
fn import_file(
    file: &Path,
    root: Option<&str>,
    imported: &mut Imported,
) -> Result<ImportedSession> {
    let Capture {
        cwd,
        session_id,
        result,
        usage,
        calls,
        texts,
        results,
    } = read_capture(file, &mut imported.notes)?;
    let root = root.or(cwd.as_deref());
    let mut tally = Tally::default();
    let mapped = map_session(
        &calls,
        &texts,
        &results,
        root,
        &mut imported.known,
        &mut tally,
        &mut imported.notes,
    );
    let from_messages = Reported {
        usage: usage.usage(),
        ..Reported::default()
    };
    let (reported, status) = match &result {
        Some(map) => {
            let status = match map.get("subtype").and_then(Value::as_str) {
                Some("success") => EndStatus::Completed,
                Some("error_max_turns") => EndStatus::OutOfBudget,
                _ => EndStatus::Interrupted,
            };
            (report_result_line(map).or(from_messages), status)
        }
        None => (from_messages, EndStatus::Interrupted),
    };
    for note in reported.notes {
        imported.notes.push(format!("{}: {note}", file.display()));
    }
    let status = if mapped.unanswered {
        EndStatus::Interrupted
    } else {
        status
    };
    Ok(ImportedSession {
        lines: mapped.lines,
        divergent: mapped.divergent,
        usage: reported.usage,
        status,
        source: match session_id {
            Some(id) => format!("stream-json session {id} ({})", file.display()),
            None => format!("stream-json capture {}", file.display()),
        },
        tally,
        n: None,
    })
}

/// What a capture file holds, read line by line.
#[derive(Default)]
struct Capture {
    /// The `cwd` of its first `system` line.
    cwd: Option<String>,
    /// The first `session_id` of its lines.
    session_id: Option<String>,
    /// Its last `result` line.
    result: Option<serde_json::Map<String, Value>>,
    /// The usage of its assistant messages.
    usage: UsageTally,
    /// Its tool calls, each id once, in order.
    calls: Vec<ToolCall>,
    /// The agent's texts, numbered in one sequence with the calls.
    texts: Vec<(u64, String)>,
    /// The first result of each tool call, by call id.
    results: HashMap<String, ToolOutcome>,
}

/// Reads the capture `file`; a line that is not a JSON object is skipped with a note.
fn read_capture(file: &Path, notes: &mut Vec<String>) -> Result<Capture> {
    let mut capture = Capture::default();
    let mut call_ids = HashSet::new();
    let mut seq = 0;
    for item in read_json_lines(file)? {
        let (line, parsed) = item?;
        let at = format!("{}:{line}", file.display());
        let Ok(Value::Object(map)) = parsed else {
            notes.push(format!("{at}: not a JSON object, skipped"));
            continue;
        };
        if capture.session_id.is_none() {
            capture.session_id = map
                .get("session_id")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        let message = map.get("message").unwrap_or(&Value::Null);
        match map.get("type").and_then(Value::as_str) {
            Some("system") if capture.cwd.is_none() => {
                capture.cwd = map.get("cwd").and_then(Value::as_str).map(str::to_string);
            }
            Some("assistant") => {
                // A subagent's messages name the Task call they serve.
                let main = map.get("parent_tool_use_id").is_none_or(Value::is_null);
                capture.usage.add(message, None, &at, main);
                // stream-json gives no cwd per message: the shell's directory is unknown.
                for call in tool_calls(message, &at, None, &mut seq, &mut capture.texts) {
                    if call_ids.insert(call.id.clone()) {
                        capture.calls.push(call);
                    }
                }
            }
            Some("user") => {
                let structured = map
                    .get("tool_use_result")
                    .or_else(|| map.get("toolUseResult"));
                for (id, outcome) in tool_results(message, structured) {
                    capture.results.entry(id).or_insert(outcome);
                }
            }
            Some("result") => capture.result = Some(map),
            _ => {}
        }
    }
    Ok(capture)
}
