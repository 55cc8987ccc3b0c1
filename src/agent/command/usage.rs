//! What a command agent reports about its session: the JSON object it may write to
//! `$LOOPBENCH_USAGE_FILE`, and, for whatever that leaves out, the final `result` line
//! of Claude Code's `--output-format stream-json` output on its stdout.
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
    /// A cause the report states: the wrapper's `failure` object, or the CLI's own
    /// error result (Claude Code's `is_error` result with its `api_error_status`).
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

/// Everything the agent reported: its usage file first, then the stream-json result
/// line for whatever the file leaves out.
pub fn read_reports(usage_file: &Path, stdout: &Path) -> Reported {
    let file = read_usage_file(usage_file).unwrap_or_default();
    // A wrapper that states no failure leaves the CLI's own error result to be read.
    let complete = file.usage.turns.is_some()
        && file.usage.input_tokens.is_some()
        && file.usage.output_tokens.is_some()
        && file.usage.cost_usd.is_some()
        && file.failure.is_some();
    if complete {
        return file;
    }
    file.or(read_stream_json(stdout).unwrap_or_default())
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
    let mut retries = 0u64;
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
                Some("system") if is_api_retry(&map) => retries += 1,
                _ => {}
            }
        }
    }
    let mut reported = report_result_line(&last?);
    reported.failure = reported.failure.map(|f| with_cli_retries(f, retries));
    Some(reported)
}

/// Whether a stream-json line is Claude Code's `{"type":"system","subtype":"api_retry"}`
/// record of one of its own retries.
pub fn is_api_retry(map: &Map<String, Value>) -> bool {
    map.get("type").and_then(Value::as_str) == Some("system")
        && map.get("subtype").and_then(Value::as_str) == Some("api_retry")
}

/// `failure` with the number of retries the CLI made before it gave up in its reason.
pub fn with_cli_retries(mut failure: Failure, retries: u64) -> Failure {
    if retries > 0 {
        let word = if retries == 1 { "retry" } else { "retries" };
        failure.reason = format!("{} after {retries} {word} by the CLI", failure.reason);
    }
    failure
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
        // The CLI's words, shown in reports and on the terminal: escaped.
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
    // The CLI's error text of its own error result, never the agent's words.
    let from_text = crate::agent::classify_error_message(text);
    match (terminal, from_text) {
        (_, Some(f)) if f.kind == FailureKind::Auth => Some(f),
        ("api_error", found) => Some(Failure::new(
            FailureKind::Infra,
            match found {
                Some(f) => format!(
                    "API error without an HTTP status in the CLI's result: {}",
                    f.reason
                ),
                None => "API error without an HTTP status (no response) in the CLI's result".into(),
            },
        )),
        _ => None,
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
    Some(Failure {
        kind,
        reason,
        http_status,
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
fn refuse_out_of_range(usage: &mut Usage, notes: &mut Vec<String>, what: &str) {
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
mod tests {
    use super::*;

    fn file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn a_usage_file_gives_usage_and_status() {
        let (_d, p) = file(
            r#"{"turns":24,"input_tokens":1148210,"output_tokens":9120,"cost_usd":1.5,"status":"declared_complete","model":"x"}"#,
        );
        let r = read_usage_file(&p).unwrap();
        assert_eq!(
            r.usage,
            Usage {
                turns: Some(24),
                input_tokens: Some(1_148_210),
                output_tokens: Some(9120),
                cost_usd: Some(1.5),
            }
        );
        assert_eq!(r.status, Some(EndStatus::DeclaredComplete));
        assert!(r.notes.is_empty());
    }

    #[test]
    fn a_missing_or_empty_usage_file_means_not_written() {
        let (_d, p) = file("  \n");
        assert_eq!(read_usage_file(&p), None);
        assert_eq!(read_usage_file(Path::new("/nonexistent/usage.json")), None);
    }

    #[test]
    fn a_bad_usage_file_is_a_note_never_a_failure() {
        let (_d, p) = file("turns: 3");
        let r = read_usage_file(&p).unwrap();
        assert_eq!(r.usage, Usage::default());
        assert!(r.notes[0].contains("not JSON"), "{:?}", r.notes);
        let (_d, p) = file(r#"{"turns":"many","output_tokens":7,"status":"done"}"#);
        let r = read_usage_file(&p).unwrap();
        assert_eq!(r.usage.turns, None);
        assert_eq!(r.usage.output_tokens, Some(7));
        assert_eq!(r.status, None);
        assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
    }

    #[test]
    fn the_last_result_line_of_a_stream_json_transcript_gives_usage() {
        let (_d, p) = file(concat!(
            "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}\n",
            "not json at all \"result\"\n",
            "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"\\\"result\\\"\"}]}}\n",
            "{\"type\":\"result\",\"subtype\":\"success\",\"num_turns\":1,\"total_cost_usd\":0.1}\n",
            "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"duration_ms\":1000,",
            "\"num_turns\":7,\"result\":\"done\",\"session_id\":\"s\",\"total_cost_usd\":0.2345,",
            "\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":1000,",
            "\"cache_read_input_tokens\":30000,\"output_tokens\":456,\"service_tier\":\"standard\"}}\n",
            "\u{0}\u{1}garbage",
        ));
        let r = read_stream_json(&p).unwrap();
        assert_eq!(
            r.usage,
            Usage {
                turns: Some(7),
                input_tokens: Some(31_012),
                output_tokens: Some(456),
                cost_usd: Some(0.2345),
            }
        );
        assert_eq!(r.status, None);
    }

    #[test]
    fn a_max_turns_result_means_out_of_budget() {
        let (_d, p) = file(
            "{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"num_turns\":60,\"usage\":{\"output_tokens\":9}}\n",
        );
        let r = read_stream_json(&p).unwrap();
        assert_eq!(r.status, Some(EndStatus::OutOfBudget));
        assert_eq!(r.usage.turns, Some(60));
        assert_eq!(r.usage.input_tokens, None);
    }

    #[test]
    fn the_usage_file_wins_and_the_stream_fills_in_what_it_leaves_out() {
        let dir = tempfile::tempdir().unwrap();
        let usage = dir.path().join("usage.json");
        let stdout = dir.path().join("stdout");
        std::fs::write(&usage, r#"{"turns": 3, "status": "declared_complete"}"#).unwrap();
        std::fs::write(
            &stdout,
            "{\"type\":\"result\",\"num_turns\":9,\"total_cost_usd\":0.5,\"usage\":{\"output_tokens\":4}}\n",
        )
        .unwrap();
        let r = read_reports(&usage, &stdout);
        assert_eq!(r.usage.turns, Some(3));
        assert_eq!(r.usage.output_tokens, Some(4));
        assert_eq!(r.usage.cost_usd, Some(0.5));
        assert_eq!(r.status, Some(EndStatus::DeclaredComplete));
        std::fs::write(&usage, "").unwrap();
        assert_eq!(read_reports(&usage, &stdout).usage.turns, Some(9));
    }

    #[test]
    fn a_usage_file_larger_than_its_bound_is_a_note_and_is_not_parsed() {
        let padding = " ".repeat(USAGE_FILE_MAX as usize);
        let (_d, p) = file(&format!("{{\"turns\": 3{padding}}}"));
        let r = read_usage_file(&p).unwrap();
        assert_eq!(r.usage.turns, None);
        assert_eq!(r.notes, vec!["usage file: larger than 1024 KiB, not read"]);
    }

    #[test]
    fn a_stdout_line_longer_than_the_bound_is_skipped_and_the_result_after_it_found() {
        let huge = "x".repeat(RESULT_LINE_MAX + 1);
        let (_d, p) = file(&format!(
            "{huge}\"result\"\n{{\"type\":\"result\",\"num_turns\":4}}\n"
        ));
        assert_eq!(read_stream_json(&p).unwrap().usage.turns, Some(4));
    }

    #[test]
    fn a_wrappers_failure_object_is_read_and_a_malformed_one_is_a_note() {
        let (_d, p) = file(
            r#"{"turns": 2, "failure": {"kind": "infra", "reason": "HTTP 529 overloaded_error\u001b[2J\u202e", "http_status": 529}}"#,
        );
        let r = read_usage_file(&p).unwrap();
        let f = r.failure.unwrap();
        assert_eq!(f.kind, FailureKind::Infra);
        assert_eq!(f.http_status, Some(529));
        assert_eq!(f.reason, "HTTP 529 overloaded_error\\e[2J\\u{202e}");
        let (_d, p) = file(r#"{"failure": {"kind": "outage"}}"#);
        let r = read_usage_file(&p).unwrap();
        assert_eq!(r.failure, None);
        assert!(
            r.notes[0].contains("not one of agent, infra, auth"),
            "{:?}",
            r.notes
        );
        let (_d, p) = file(r#"{"failure": {"kind": "auth", "http_status": 99999}}"#);
        let r = read_usage_file(&p).unwrap();
        assert_eq!(r.failure.unwrap().http_status, None);
        assert!(r.notes[0].contains("not an HTTP status"), "{:?}", r.notes);
    }

    #[test]
    fn a_claude_error_result_with_an_api_status_is_a_failure_with_the_clis_retries() {
        let (_d, p) = file(concat!(
            "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1,\"max_retries\":2,\"error_status\":529}\n",
            "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":2,\"max_retries\":2,\"error_status\":529}\n",
            "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"terminal_reason\":\"api_error\",",
            "\"api_error_status\":529,\"result\":\"API Error: 529 overloaded\",\"num_turns\":1}\n",
        ));
        let f = read_stream_json(&p).unwrap().failure.unwrap();
        assert_eq!(f.kind, FailureKind::Infra);
        assert_eq!(f.http_status, Some(529));
        assert_eq!(
            f.reason,
            "HTTP 529 (api_error) in the CLI's result after 2 retries by the CLI"
        );
        let (_d, p) = file(
            "{\"type\":\"result\",\"is_error\":true,\"terminal_reason\":\"api_error\",\"api_error_status\":401}\n",
        );
        assert_eq!(
            read_stream_json(&p).unwrap().failure.unwrap().kind,
            FailureKind::Auth
        );
    }

    #[test]
    fn a_claude_success_after_its_own_retries_and_the_agents_prose_are_no_failure() {
        // The CLI recovered by itself: no failure, whatever it retried.
        let (_d, p) = file(concat!(
            "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1,\"error_status\":529}\n",
            "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"num_turns\":3}\n",
        ));
        assert_eq!(read_stream_json(&p).unwrap().failure, None);
        // A tool's output is a string inside a message line: never evidence, even when
        // it holds a whole error result line.
        let (_d, p) = file(concat!(
            "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"content\":",
            "\"API Error: 529\\n{\\\"type\\\":\\\"result\\\",\\\"is_error\\\":true,\\\"api_error_status\\\":529}\"}]}}\n",
            "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"num_turns\":3}\n",
        ));
        assert_eq!(read_stream_json(&p).unwrap().failure, None);
        // A 400 is a request the agent made; max turns is a budget.
        let (_d, p) = file("{\"type\":\"result\",\"is_error\":true,\"api_error_status\":400}\n");
        assert_eq!(read_stream_json(&p).unwrap().failure, None);
        let (_d, p) =
            file("{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":true}\n");
        assert_eq!(read_stream_json(&p).unwrap().failure, None);
    }

    #[test]
    fn output_without_a_result_line_gives_nothing() {
        let (_d, p) = file("hello\n{\"type\":\"assistant\"}\n");
        assert_eq!(read_stream_json(&p), None);
    }
}
