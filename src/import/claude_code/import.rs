//! `loopbench import claude-code`: Claude Code session files
//! (`~/.claude/projects/<project>/<sessionId>.jsonl`) → a trace.
//!
//! **Lines.** Only `user` and `assistant` lines are read; every other type (`system`,
//! `summary`, `file-history-snapshot`, `queue-operation`, whatever a later CLI adds)
//! and every unknown field is ignored. A line that is not JSON is skipped with a note
//! naming file:line; a file that cannot be read is bad input (exit 2).
//!
//! **Resumed sessions.** `claude --continue` / `--resume` (1.0.x) writes a new session
//! file that starts with `summary` lines and a copy of the earlier conversation: the
//! same `uuid`s under the new `sessionId`, with the time of the copy (sidechains are
//! not copied). A uuid is read once, where it occurred first in time (the earliest
//! `timestamp`; a tie goes to the file read first), so the earlier session keeps its
//! work, turns and tokens whatever the file names.
//!
//! **Sessions.** Lines are grouped by `sessionId`; sessions are ordered by their first
//! `timestamp` (RFC 3339) and numbered 1..k. Subagent lines (`isSidechain: true`, inline
//! in old CLI versions, in `agent-*.jsonl` files or in `<sessionId>/subagents/` next to
//! the session file in newer ones) carry their parent's `sessionId` and are merged into
//! its session; within a session, tool calls are taken in timestamp order, so subagent
//! actions interleave with the parent's. A line without a timestamp takes the one
//! before it in its file. A directory argument means every `*.jsonl` under it; for a
//! session file, its `<sessionId>/subagents/*.jsonl` are read too.
//!
//! **Root.** Paths are made relative to `--root`, else to the `cwd` of the session's
//! first main-chain line ([`crate::import::paths`]).
//!
//! **The shell's directory.** Claude Code's Bash keeps a `cd` from one call to the
//! next, and every line's `cwd` says where the shell is. A `Bash` call runs where the
//! `cwd` of its assistant line says: a directory under the root becomes the `run`
//! line's `cwd`, and relative file paths of the other tools are taken from there too
//! ([`super::mapping`]).
//!
//! **Usage** per session: over distinct assistant `message.id`s (`<synthetic>` ones left
//! out), turns = their number on the main chain (one per model call of the main
//! conversation, as `--max-turns` counts; subagents' calls are no turns), and over all
//! of them, subagents' included, input_tokens = input + cache_creation_input_tokens +
//! cache_read_input_tokens, output_tokens, and cost_usd only when lines carry
//! `costUSD` ([`super::blocks::UsageTally`]).
//!
//! **Status.** `interrupted` when a tool call never got a result, or when the last
//! line of the conversation is the user's "[Request interrupted by user...", tool results
//! the model never answered (the CLI was killed while it waited for the model), or an
//! API error message (`isApiErrorMessage`); otherwise `completed`. Lines the CLI writes
//! about the conversation (a compaction's `isCompactSummary`, `isMeta` lines, a slash
//! command's echo) are not its last line. Never `declared_complete`: what the agent
//! claims in prose is not evidence, and the metrics read the files anyway.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::blocks::{UsageTally, tool_calls, tool_results, user_text};
use super::mapping::map_session;
use crate::import::importer::{Importer, Recognize, SniffedLine};
use crate::import::session::{
    Imported, ImportedSession, expand, read_json_lines, require_sessions,
};
use crate::import::tally::Tally;

/// `loopbench import claude-code`.
pub const IMPORTER: Importer = Importer {
    name: "claude-code",
    summary: "Claude Code session files",
    one: "a Claude Code session file",
    about: "Claude Code session files (~/.claude/projects/<project>/<sessionId>.jsonl); a \
            directory means every *.jsonl under it. Sessions are ordered by time",
    examples: "\
Examples:
  loopbench import claude-code tests/data/claude-code/latefees --root /home/dev/latefees --out latefees.jsonl
  loopbench import claude-code ~/.claude/projects/-home-me-myproject --out myproject.jsonl",
    reads: "Claude Code session files, `~/.claude/projects/<project>/*.jsonl` (resumed \
            sessions and subagent files included); a directory means every `*.jsonl` under it",
    actions: "`Write`, `Edit`, `MultiEdit` and `Bash` calls and their results",
    fixture: "tests/data/claude-code/latefees",
    captures: None,
    recognize: Recognize {
        file_name: is_jsonl,
        line: is_session_line,
        document: None,
    },
    import,
};

/// A line of a session file: it names its `sessionId`, or is one of the lines the CLI
/// writes before the conversation (a title `summary`, a `file-history-snapshot`).
fn is_session_line(line: SniffedLine) -> bool {
    let SniffedLine::Json(line) = line else {
        return false;
    };
    let kind = line.get("type").and_then(Value::as_str).unwrap_or("");
    line.contains_key("sessionId") || kind == "summary" || kind == "file-history-snapshot"
}
use crate::agent::trace::EndStatus;
use crate::error::Result;

/// Imports the session files `inputs` (files or directories).
pub fn import(inputs: &[PathBuf], root: Option<&str>) -> Result<Imported> {
    let mut imported = Imported::default();
    let files = session_files(inputs)?;
    // Every line once, as (sessionId, line); a uuid's later copies are dropped below.
    let mut lines: Vec<(String, Entry)> = Vec::new();
    let mut by_uuid: HashMap<String, usize> = HashMap::new();
    for (file_no, file) in files.iter().enumerate() {
        let mut last_ts = None;
        for item in read_json_lines(file)? {
            let (line, parsed) = item?;
            let at = format!("{}:{line}", file.display());
            let value = match parsed {
                Ok(v @ Value::Object(_)) => v,
                Ok(_) => {
                    imported
                        .notes
                        .push(format!("{at}: not a JSON object, skipped"));
                    continue;
                }
                Err(e) => {
                    imported
                        .notes
                        .push(format!("{at}: not JSON, skipped ({e})"));
                    continue;
                }
            };
            let ts = value
                .get("timestamp")
                .and_then(Value::as_str)
                .and_then(crate::timestamp::rfc3339_nanos)
                .or(last_ts);
            last_ts = ts;
            let user = match value.get("type").and_then(Value::as_str) {
                Some("user") => true,
                Some("assistant") => false,
                _ => continue,
            };
            let Some(session) = value
                .get("sessionId")
                .and_then(Value::as_str)
                .map(str::to_string)
            else {
                imported.notes.push(format!("{at}: no sessionId, skipped"));
                continue;
            };
            let entry = Entry {
                key: (ts, file_no, line),
                at,
                user,
                sidechain: value.get("isSidechain").and_then(Value::as_bool) == Some(true),
                value,
            };
            let uuid = entry.value.get("uuid").and_then(Value::as_str);
            if let Some(&kept) = uuid.and_then(|u| by_uuid.get(u)) {
                // A copy (a resumed session repeats its history): the occurrence that
                // came first in time is the original, whichever file was read first.
                if entry.original_before(&lines[kept].1) {
                    lines[kept] = (session, entry);
                }
                continue;
            }
            if let Some(uuid) = uuid {
                by_uuid.insert(uuid.to_string(), lines.len());
            }
            lines.push((session, entry));
        }
    }
    let sessions = by_session(lines);
    for (id, entries) in &sessions {
        let session = import_session(id, entries, root, &mut imported);
        imported.push(session);
    }
    require_sessions(&imported, inputs)?;
    Ok(imported)
}

/// The lines grouped by session, each session's in the order of events, the sessions
/// in the order of their first event.
fn by_session(lines: Vec<(String, Entry)>) -> Vec<(String, Vec<Entry>)> {
    let mut sessions: Vec<(String, Vec<Entry>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (session, entry) in lines {
        let slot = *index.entry(session.clone()).or_insert_with(|| {
            sessions.push((session, Vec::new()));
            sessions.len() - 1
        });
        sessions[slot].1.push(entry);
    }
    for (_, entries) in &mut sessions {
        entries.sort_by_key(|e| e.key);
    }
    sessions.sort_by_key(|(_, entries)| entries.first().map(|e| e.key));
    sessions
}

/// A `user` or `assistant` line.
struct Entry {
    /// (timestamp in ns, file number, line number): the order of events.
    key: (Option<i128>, usize, usize),
    /// `file:line`.
    at: String,
    user: bool,
    sidechain: bool,
    value: Value,
}

impl Entry {
    /// Whether this occurrence of a uuid is earlier than `other`: the earlier
    /// timestamp, a line with a timestamp before one without, else the line read first.
    fn original_before(&self, other: &Entry) -> bool {
        let (ts, file, line) = self.key;
        let (other_ts, other_file, other_line) = other.key;
        match (ts, other_ts) {
            (Some(a), Some(b)) if a != b => a < b,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            _ => (file, line) < (other_file, other_line),
        }
    }
}

fn import_session(
    id: &str,
    entries: &[Entry],
    root: Option<&str>,
    imported: &mut Imported,
) -> ImportedSession {
    let cwd = |main: bool| {
        entries
            .iter()
            .filter(|e| !main || !e.sidechain)
            .find_map(|e| e.value.get("cwd").and_then(Value::as_str))
    };
    let root = root.or_else(|| cwd(true)).or_else(|| cwd(false));
    let mut usage = UsageTally::default();
    let mut calls = Vec::new();
    let mut texts = Vec::new();
    let mut seen_texts = HashSet::new();
    let mut call_ids = HashSet::new();
    let mut results = HashMap::new();
    let mut seq = 0;
    for e in entries {
        let message = e.value.get("message").unwrap_or(&Value::Null);
        if e.user {
            for (id, outcome) in tool_results(message, e.value.get("toolUseResult")) {
                results.entry(id).or_insert(outcome);
            }
        } else {
            let cost = e.value.get("costUSD").and_then(Value::as_f64);
            usage.add(message, cost, &e.at, !e.sidechain);
            let cwd = e.value.get("cwd").and_then(Value::as_str);
            // A resumed file repeats the conversation before it: each of the agent's
            // texts once per message.
            let mut said = Vec::new();
            let calls_here = tool_calls(message, &e.at, cwd, &mut seq, &mut said);
            let message_id = message.get("id").and_then(Value::as_str).unwrap_or("");
            texts.extend(
                said.into_iter()
                    .filter(|(_, text)| seen_texts.insert((message_id.to_string(), text.clone()))),
            );
            for call in calls_here {
                if call_ids.insert(call.id.clone()) {
                    calls.push(call);
                }
            }
        }
    }
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
    // The conversation's own last line: not a subagent's, not one the CLI writes about
    // the conversation (a compaction summary, a command's echo, meta lines).
    let flag = |e: &Entry, key: &str| e.value.get(key).and_then(Value::as_bool) == Some(true);
    let outside_the_conversation = |e: &Entry| {
        e.sidechain
            || ["isCompactSummary", "isMeta", "isVisibleInTranscriptOnly"]
                .iter()
                .any(|key| flag(e, key))
            || (e.user
                && is_command_echo(&user_text(e.value.get("message").unwrap_or(&Value::Null))))
    };
    let last = entries.iter().rev().find(|e| !outside_the_conversation(e));
    let cut_off = last.is_some_and(|e| {
        let message = e.value.get("message").unwrap_or(&Value::Null);
        if e.user {
            user_text(message)
                .trim_start()
                .starts_with("[Request interrupted by user")
                || only_tool_results(message)
        } else {
            flag(e, "isApiErrorMessage")
        }
    });
    ImportedSession {
        lines: mapped.lines,
        divergent: mapped.divergent,
        usage: usage.usage(),
        status: if mapped.unanswered || cut_off {
            EndStatus::Interrupted
        } else {
            EndStatus::Completed
        },
        source: format!("claude-code session {id}"),
        tally,
        n: None,
    }
}

/// A user line the CLI writes for a slash command (`/compact`, `/clear`...) and its
/// output, not a prompt.
fn is_command_echo(text: &str) -> bool {
    let text = text.trim_start();
    [
        "<command-name>",
        "<command-message>",
        "<local-command-stdout>",
        "<local-command-stderr>",
    ]
    .iter()
    .any(|tag| text.starts_with(tag))
}

fn is_jsonl(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
}

/// The files to read: every input (directories expanded), plus the subagent files next
/// to each session file; each file once.
fn session_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        for file in expand(input, is_jsonl)? {
            let subagents = file
                .file_stem()
                .map(|stem| file.with_file_name(stem).join("subagents"));
            files.push(file);
            if let Some(dir) = subagents.filter(|d| d.is_dir()) {
                files.extend(expand(&dir, is_jsonl)?);
            }
        }
    }
    let mut seen = HashSet::new();
    files.retain(|f| seen.insert(f.canonicalize().unwrap_or_else(|_| f.clone())));
    Ok(files)
}

/// Whether a user message holds tool results and nothing else: the conversation's last
/// line only when the CLI died waiting for the model's answer to them.
fn only_tool_results(message: &Value) -> bool {
    message
        .get("content")
        .and_then(Value::as_array)
        .is_some_and(|blocks| {
            !blocks.is_empty()
                && blocks
                    .iter()
                    .all(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        })
}
