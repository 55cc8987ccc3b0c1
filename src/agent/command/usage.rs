//! What a command agent reports about its session: the JSON object it may write to
//! `$LOOPBENCH_USAGE_FILE` (usage and `status`), and its stdout as the harness captured
//! it in Claude Code's `--output-format stream-json` (the other CLIs' formats are
//! `cli_usage.rs`'s; `reports.rs` takes what the harness uses of each): usage the file
//! leaves out, and the only failure taken.
//!
//! Both readers are lenient: unknown fields are ignored, a field of the wrong type is
//! skipped with a note, and junk lines in the stream never stop the parse. What an
//! agent wrote can never fail the harness.

use std::io::BufReader;
use std::path::Path;

use serde_json::{Map, Value};

use crate::agent::trace::EndStatus;
use crate::agent::{Failure, FailureKind, Usage};
use crate::agent_file::{self, AgentFile, Links};
use crate::lines::{BoundedLines, Line};

/// The largest usage file read: the object has five fields, anything near this size is
/// not a usage report.
pub const USAGE_FILE_MAX: u64 = 1024 * 1024;

/// The longest stdout line looked at for a `result` line; longer lines are skipped
/// unread (a result line holds the final message and a few numbers).
pub const RESULT_LINE_MAX: usize = 8 * 1024 * 1024;

/// What the agent told the harness about its session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reported {
    /// Turns, tokens, cost.
    pub usage: Usage,
    /// How the agent says the session ended (`status` in the usage file, or a Claude
    /// Code `error_max_turns` result).
    pub status: Option<EndStatus>,
    /// Things that could not be read, for the session's `error` field.
    pub notes: Vec<String>,
    /// A cause the report states: the CLI's own error records (Claude Code's `is_error`
    /// result with its `api_error_status`, Codex's error events, aider's provider
    /// exceptions); a usage file's `failure` object as read, which
    /// [`super::reports::read_reports`] never takes.
    pub failure: Option<Failure>,
}

impl Reported {
    /// Field by field, what `self` says, else what `other` says (a wrapper script may
    /// write only a `status` while Claude Code's stream gives the tokens).
    pub fn or(self, other: Reported) -> Reported {
        let (a, b) = (self.usage, other.usage);
        Reported {
            usage: Usage {
                turns: a.turns.or(b.turns),
                input_tokens: a.input_tokens.or(b.input_tokens),
                output_tokens: a.output_tokens.or(b.output_tokens),
                cost_usd: a.cost_usd.or(b.cost_usd),
            },
            status: self.status.or(other.status),
            notes: self.notes.into_iter().chain(other.notes).collect(),
            failure: self.failure.or(other.failure),
        }
    }
}

/// Reads `$LOOPBENCH_USAGE_FILE`: `None` when the agent did not write it (missing or
/// empty), otherwise whatever fields could be read.
///
/// ```json
/// {"turns": 24, "input_tokens": 1148210, "output_tokens": 9120, "cost_usd": 1.92,
///  "status": "declared_complete"}
/// ```
///
/// Every field is optional; `status` is one of `completed`, `declared_complete`,
/// `out_of_budget`, `interrupted` (the statuses of a trace's `end` line). `failure`,
/// when the wrapper knows the session did not run the way the agent meant, is
/// `{"kind": "infra"|"auth"|"agent", "reason": "...", "http_status": 529}` (reason and
/// http_status optional).
pub fn read_usage_file(path: &Path) -> Option<Reported> {
    let mut reported = Reported::default();
    // The agent may have left a FIFO or a device there: never a blocking open.
    let bytes = match agent_file::read(path, USAGE_FILE_MAX, Links::Refuse) {
        Ok(AgentFile::Bytes(bytes)) => bytes,
        Ok(AgentFile::Missing) | Err(_) => return None,
        Ok(AgentFile::TooLarge(_)) => {
            reported.notes.push(format!(
                "usage file: larger than {} KiB, not read",
                USAGE_FILE_MAX / 1024
            ));
            return Some(reported);
        }
        Ok(other) => {
            reported.notes.push(format!(
                "usage file: {}",
                other
                    .refusal("it", USAGE_FILE_MAX)
                    .unwrap_or_else(|| "not read".into())
            ));
            return Some(reported);
        }
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return None;
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => {
            reported.usage = Usage {
                turns: count(&map, "turns", &mut reported.notes),
                input_tokens: count(&map, "input_tokens", &mut reported.notes),
                output_tokens: count(&map, "output_tokens", &mut reported.notes),
                cost_usd: money(&map, "cost_usd", &mut reported.notes),
            };
            refuse_out_of_range(&mut reported.usage, &mut reported.notes, "usage file");
            reported.status = match map.get("status") {
                None | Some(Value::Null) => None,
                Some(v) => match serde_json::from_value::<EndStatus>(v.clone()) {
                    Ok(s) => Some(s),
                    Err(_) => {
                        reported.notes.push(format!(
                            "usage file: status {v} is not one of completed, declared_complete, out_of_budget, interrupted"
                        ));
                        None
                    }
                },
            };
            reported.failure = match map.get("failure") {
                None | Some(Value::Null) => None,
                Some(v) => failure_object(v, &mut reported.notes),
            };
        }
        Ok(_) => reported
            .notes
            .push("usage file: expected a JSON object".to_string()),
        Err(e) => reported.notes.push(format!("usage file: not JSON ({e})")),
    }
    Some(reported)
}

/// Reads the last `{"type":"result",...}` line of a Claude Code stream-json transcript
/// (`claude -p --output-format stream-json`): `num_turns`, `total_cost_usd` and the
/// `usage` tokens. `input_tokens` counts every prompt token the model read, cached or
/// not (`usage.input_tokens + cache_creation_input_tokens + cache_read_input_tokens`),
/// since Claude's own `input_tokens` leaves cache reads out. A result whose subtype is
/// `error_max_turns` gives status `out_of_budget`. `None` when there is no result line.
/// The file is read line by line; a line longer than [`RESULT_LINE_MAX`] is skipped.
pub fn read_stream_json(path: &Path) -> Option<Reported> {
    let file = std::fs::File::open(path).ok()?;
    let mut lines = BoundedLines::new(BufReader::new(file), RESULT_LINE_MAX);
    let mut last: Option<Map<String, Value>> = None;
    let mut retries = CliRetries::default();
    while let Ok(Some((_, line))) = lines.next_line() {
        let Line::Text(line) = line else {
            continue;
        };
        // Cheap filter first: most lines of a transcript are messages and tool calls.
        let result = contains(line, b"\"result\"");
        if !result && !contains(line, b"\"api_retry\"") {
            continue;
        }
        // Only the CLI's own top-level records count: a tool's output is a string
        // inside a message line, never a line of its own.
        if let Ok(Value::Object(map)) = serde_json::from_slice::<Value>(line) {
            match map.get("type").and_then(Value::as_str) {
                Some("result") => last = Some(map),
                Some("system") if is_api_retry(&map) => retries.add(&map),
                _ => {}
            }
        }
    }
    let mut reported = report_result_line(&last?);
    reported.failure = reported.failure.map(|f| retries.apply_to(f));
    Some(reported)
}

/// Whether a stream-json line is Claude Code's `{"type":"system","subtype":"api_retry"}`
/// record of one of its own retries.
pub fn is_api_retry(map: &Map<String, Value>) -> bool {
    map.get("type").and_then(Value::as_str) == Some("system")
        && map.get("subtype").and_then(Value::as_str) == Some("api_retry")
}

/// The retries Claude Code recorded (`system`/`api_retry` lines) before its result.
#[derive(Debug, Clone, Copy, Default)]
pub struct CliRetries {
    /// How many.
    pub count: u64,
    /// The delay of the last one (`retry_delay_ms`), which follows the API's
    /// `retry-after` when it sent one.
    pub last_delay_ms: Option<u64>,
}

impl CliRetries {
    /// Counts one `api_retry` record.
    pub fn add(&mut self, map: &Map<String, Value>) {
        self.count += 1;
        self.last_delay_ms = map.get("retry_delay_ms").and_then(Value::as_u64);
    }

    /// `failure` with the number of retries the CLI made before it gave up in its
    /// reason, and the provider's last asked-for wait.
    pub fn apply_to(self, mut failure: Failure) -> Failure {
        if self.count > 0 {
            let word = if self.count == 1 { "retry" } else { "retries" };
            failure.reason = format!("{} after {} {word} by the CLI", failure.reason, self.count);
            failure.retry_after_ms = failure.retry_after_ms.or(self.last_delay_ms);
        }
        failure
    }
}

/// What a Claude Code result line says went wrong outside the agent: an error result
/// (`is_error`) with the API's HTTP status (`api_error_status`), or an API error with no
/// status (the connection). A success result is no failure even after `api_retry`
/// records: the CLI recovered by itself. `error_max_turns` is a budget, not a failure.
fn result_failure(map: &Map<String, Value>) -> Option<Failure> {
    if map.get("is_error").and_then(Value::as_bool) != Some(true)
        || map.get("subtype").and_then(Value::as_str) == Some("error_max_turns")
    {
        return None;
    }
    let terminal = map
        .get("terminal_reason")
        .and_then(Value::as_str)
        .unwrap_or("");
    let text = map.get("result").and_then(Value::as_str).unwrap_or("");
    let status = map
        .get("api_error_status")
        .and_then(Value::as_u64)
        .and_then(|s| u16::try_from(s).ok());
    if let Some(status) = status {
        let why = if terminal.is_empty() {
            String::new()
        } else {
            format!(" ({})", crate::terminal::line(terminal))
        };
        return Failure::of_http_status(status, format!("HTTP {status}{why} in the CLI's result"))
            .map(|mut f| {
                f.http_status = Some(status);
                f
            });
    }
    // Only an API error the CLI states in its structured fields; its text is then the
    // CLI's own message about that error (never the agent's words), which may name a
    // refused key.
    if terminal != "api_error" {
        return None;
    }
    match crate::agent::classify_error_message(text) {
        Some(f) if f.kind == FailureKind::Auth => Some(f),
        Some(f) => Some(Failure::new(
            FailureKind::Infra,
            format!(
                "API error without an HTTP status in the CLI's result: {}",
                f.reason
            ),
        )),
        None => Some(Failure::new(
            FailureKind::Infra,
            "API error without an HTTP status (no response) in the CLI's result",
        )),
    }
}

/// The wrapper's `failure` object of a usage file; a malformed one is a note.
fn failure_object(v: &Value, notes: &mut Vec<String>) -> Option<Failure> {
    let Value::Object(obj) = v else {
        notes.push(format!("usage file: failure {v} is not an object"));
        return None;
    };
    let kind = match obj.get("kind") {
        Some(k) => match serde_json::from_value::<FailureKind>(k.clone()) {
            Ok(kind) => kind,
            Err(_) => {
                notes.push(format!(
                    "usage file: failure kind {k} is not one of agent, infra, auth"
                ));
                return None;
            }
        },
        None => {
            notes.push("usage file: failure has no kind".to_string());
            return None;
        }
    };
    let http_status = match obj.get("http_status") {
        None | Some(Value::Null) => None,
        Some(s) => match s.as_u64().and_then(|n| u16::try_from(n).ok()) {
            Some(n) if (100..=599).contains(&n) => Some(n),
            _ => {
                notes.push(format!(
                    "usage file: failure http_status {s} is not an HTTP status"
                ));
                None
            }
        },
    };
    let reason = match obj.get("reason") {
        // A wrapper's text, shown in reports: bounded, with control characters escaped.
        Some(Value::String(r)) => {
            crate::terminal::line(&r.chars().take(300).collect::<String>()).into_owned()
        }
        _ => format!("the wrapper reported {}", kind.as_str()),
    };
    let retry_after_ms = match obj.get("retry_after_ms") {
        None | Some(Value::Null) => None,
        Some(v) => v.as_u64().or_else(|| {
            notes.push(format!(
                "usage file: failure retry_after_ms {v} is not a count of milliseconds"
            ));
            None
        }),
    };
    Some(Failure {
        kind,
        reason,
        http_status,
        retry_after_ms,
    })
}

/// What one `{"type":"result",...}` line of a stream-json transcript reports (see
/// [`read_stream_json`] for the fields read). Shared with `loopbench import
/// stream-json`, so that a run and a later re-scoring read the line the same way.
pub fn report_result_line(map: &Map<String, Value>) -> Reported {
    let mut notes = Vec::new();
    let tokens = map.get("usage").and_then(Value::as_object);
    let token = |name: &str, notes: &mut Vec<String>| tokens.and_then(|t| count(t, name, notes));
    let input = [
        "input_tokens",
        "cache_creation_input_tokens",
        "cache_read_input_tokens",
    ]
    .iter()
    .filter_map(|name| token(name, &mut notes))
    .reduce(u64::saturating_add);
    let usage = Usage {
        turns: count(map, "num_turns", &mut notes),
        input_tokens: input,
        output_tokens: token("output_tokens", &mut notes),
        cost_usd: money(map, "total_cost_usd", &mut notes),
    };
    let mut usage = usage;
    refuse_out_of_range(&mut usage, &mut notes, "the usage");
    let status = (map.get("subtype").and_then(Value::as_str) == Some("error_max_turns"))
        .then_some(EndStatus::OutOfBudget);
    Reported {
        usage,
        status,
        failure: result_failure(map),
        notes: notes
            .into_iter()
            .map(|n| format!("stream-json result: {n}"))
            .collect(),
    }
}

/// Refuses the whole report when one of its numbers is out of range (a count above
/// 2^63-1, a cost past 2^53 dollars): a note says so and the usage is left unknown, so
/// that one absurd record cannot break the tables, and no other number of a report
/// that lied once is believed.
pub(super) fn refuse_out_of_range(usage: &mut Usage, notes: &mut Vec<String>, what: &str) {
    if let Some(reason) = usage.out_of_range() {
        notes.push(format!("{what}: {reason}; the usage report is refused"));
        *usage = Usage::default();
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

/// A non-negative integer field; a float is rounded (some tools write `12.0`).
fn count(map: &Map<String, Value>, name: &str, notes: &mut Vec<String>) -> Option<u64> {
    match map.get(name)? {
        Value::Null => None,
        Value::Number(n) => match (n.as_u64(), n.as_f64()) {
            (Some(v), _) => Some(v),
            (None, Some(f)) if f.is_finite() && f >= 0.0 && f < u64::MAX as f64 => {
                Some(f.round() as u64)
            }
            _ => {
                notes.push(format!("{name} = {n} is not a count"));
                None
            }
        },
        other => {
            notes.push(format!("{name} = {other} is not a number"));
            None
        }
    }
}

fn money(map: &Map<String, Value>, name: &str, notes: &mut Vec<String>) -> Option<f64> {
    match map.get(name)? {
        Value::Null => None,
        Value::Number(n) => n
            .as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .or_else(|| {
                notes.push(format!("{name} = {n} is not an amount"));
                None
            }),
        other => {
            notes.push(format!("{name} = {other} is not a number"));
            None
        }
    }
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;
