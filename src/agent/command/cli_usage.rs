//! The usage report an agent CLI's captured output gives (`loopbench usage FORMAT
//! CAPTURE`): what the wrappers in `scripts/agents/` write to `$LOOPBENCH_USAGE_FILE`
//! for `claude -p --output-format stream-json`, `codex exec --json` and aider (its
//! printed lines or its analytics log).
//!
//! Fields the output does not give are left out (the harness records them as empty).
//! Lines that are not what a parser expects are skipped: a wrapper must never fail
//! because an agent printed something new.

use std::sync::LazyLock;

use regex::Regex;
use serde::Serialize;
use serde_json::{Map, Value};

use super::usage::{CliRetries, is_api_retry, report_result_line};
use crate::agent::trace::EndStatus;
use crate::agent::{Failure, FailureKind, classify_error_message};

/// The agent CLIs whose output can be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CliFormat {
    /// `claude -p --output-format stream-json --verbose`.
    Claude,
    /// `codex exec --json`.
    Codex,
    /// aider's `Tokens: ... Cost: ...` lines.
    Aider,
    /// aider's `--analytics-log` file: exact counts.
    AiderAnalytics,
}

/// The JSON object of a usage file (see [`super::read_usage_file`]); absent fields are
/// not written.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct UsageReport {
    /// Model calls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turns: Option<u64>,
    /// Prompt tokens, cached or not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_tokens: Option<u64>,
    /// Output tokens (for Codex, its reasoning tokens are a part of them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// What the CLI says the session cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// How the session ended, when the output says it did not simply complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<EndStatus>,
    /// A cause outside the agent the CLI's own error records state (or `agent`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure: Option<Failure>,
}

impl UsageReport {
    /// The report as one line of JSON.
    pub fn to_json(&self) -> String {
        // Plain numbers and a status: serializing cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| "{}".to_string())
    }
}

/// Reads the captured output `text` of a `format` CLI.
pub fn parse(format: CliFormat, text: &str) -> UsageReport {
    let mut reader = OutputReader::new(format);
    for line in text.lines() {
        reader.line(line);
    }
    reader.report()
}

/// Reads the capture at `path` of a `format` CLI a line at a time (a line longer than
/// [`super::usage::RESULT_LINE_MAX`] is skipped unread), as [`parse`] reads a text:
/// the harness's own reading of an agent's stdout, which may be as large as its
/// capture cap. `None` when the file cannot be opened.
pub fn read_capture(format: CliFormat, path: &std::path::Path) -> Option<UsageReport> {
    let file = std::fs::File::open(path).ok()?;
    let mut lines = crate::lines::BoundedLines::new(
        std::io::BufReader::new(file),
        super::usage::RESULT_LINE_MAX,
    );
    let mut reader = OutputReader::new(format);
    while let Ok(Some((_, line))) = lines.next_line() {
        if let crate::lines::Line::Text(bytes) = line {
            reader.line(&String::from_utf8_lossy(bytes));
        }
    }
    Some(reader.report())
}

/// One CLI's output read a line at a time: what each format keeps between lines.
pub struct OutputReader {
    state: State,
}

enum State {
    Claude {
        retries: CliRetries,
        last: Option<Map<String, Value>>,
    },
    Codex {
        report: UsageReport,
        last_error: Option<String>,
    },
    Aider {
        counts: AiderCounts,
        failure: AiderFailure,
    },
    AiderAnalytics(UsageReport),
}

impl OutputReader {
    /// A reader of `format`'s output, before its first line.
    pub fn new(format: CliFormat) -> OutputReader {
        let state = match format {
            CliFormat::Claude => State::Claude {
                retries: CliRetries::default(),
                last: None,
            },
            CliFormat::Codex => State::Codex {
                report: UsageReport {
                    turns: Some(0),
                    ..UsageReport::default()
                },
                last_error: None,
            },
            CliFormat::Aider => State::Aider {
                counts: AiderCounts::default(),
                failure: AiderFailure::default(),
            },
            CliFormat::AiderAnalytics => State::AiderAnalytics(UsageReport::default()),
        };
        OutputReader { state }
    }

    /// Reads the next line (without its newline).
    pub fn line(&mut self, line: &str) {
        match &mut self.state {
            State::Claude { retries, last } => {
                if let Some(record) = object(line) {
                    if is_api_retry(&record) {
                        retries.add(&record);
                    } else if record.get("type").and_then(Value::as_str) == Some("result") {
                        *last = Some(record);
                    }
                }
            }
            State::Codex { report, last_error } => {
                if let Some(event) = object(line) {
                    codex_event(&event, report, last_error);
                }
            }
            State::Aider { counts, failure } => {
                counts.line(line);
                failure.line(line);
            }
            State::AiderAnalytics(report) => {
                if let Some(event) = object(line) {
                    analytics_event(&event, report);
                }
            }
        }
    }

    /// The report of every line read.
    pub fn report(self) -> UsageReport {
        match self.state {
            State::Claude { retries, last } => claude(retries, last),
            State::Codex {
                mut report,
                last_error,
            } => {
                report.failure = last_error.as_deref().and_then(classify_error_message);
                report
            }
            State::Aider { counts, failure } => counts.report(failure.failure()),
            State::AiderAnalytics(report) => report,
        }
    }
}

/// A line of JSON that holds an object.
fn object(line: &str) -> Option<Map<String, Value>> {
    match serde_json::from_str::<Value>(line) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// The last `result` line, read as the command driver reads it: turns = num_turns,
/// input = input + cache creation + cache read tokens, output, total_cost_usd, and
/// `out_of_budget` for `error_max_turns`. Without a result line the session was cut
/// off: `interrupted`.
fn claude(retries: CliRetries, last: Option<Map<String, Value>>) -> UsageReport {
    let Some(result) = last else {
        return UsageReport {
            status: Some(EndStatus::Interrupted),
            ..UsageReport::default()
        };
    };
    let reported = report_result_line(&result);
    UsageReport {
        turns: reported.usage.turns,
        input_tokens: reported.usage.input_tokens,
        output_tokens: reported.usage.output_tokens,
        cost_usd: reported.usage.cost_usd,
        status: reported.status,
        failure: reported.failure.map(|f| retries.apply_to(f)),
    }
}

/// One event of Codex's output. Usage is summed over `turn.completed` events
/// (input_tokens already includes cached_input_tokens, and output_tokens its
/// reasoning_output_tokens: Codex copies the Responses API's counts, whose reasoning
/// tokens are a breakdown of the output, so adding them would count them twice). Codex
/// reports no model-call count: turns = completed items (commands, file changes,
/// messages, tool calls). No cost: Codex does not print one. A `turn.failed` or `error`
/// event with no completed turn after it (Codex retries a stream by itself):
/// `interrupted`, and its message names the failure: an HTTP status, a refused key, a
/// lost connection.
fn codex_event(
    event: &Map<String, Value>,
    report: &mut UsageReport,
    last_error: &mut Option<String>,
) {
    let add = |slot: &mut Option<u64>, n: u64| *slot = Some(slot.unwrap_or(0).saturating_add(n));
    match event.get("type").and_then(Value::as_str) {
        Some("item.completed") => add(&mut report.turns, 1),
        Some("turn.completed") => {
            // Codex reconnected by itself and the turn went on: no failure, and the
            // session was not cut off.
            *last_error = None;
            report.status = None;
            let usage = event.get("usage");
            let field = |name: &str| usage.and_then(|u| u.get(name)).and_then(Value::as_u64);
            if let Some(n) = field("input_tokens") {
                add(&mut report.input_tokens, n);
            }
            if let Some(n) = field("output_tokens") {
                add(&mut report.output_tokens, n);
            }
        }
        Some(kind @ ("turn.failed" | "error")) => {
            report.status = Some(EndStatus::Interrupted);
            let message = if kind == "error" {
                event.get("message")
            } else {
                event.get("error").and_then(|e| e.get("message"))
            };
            *last_error = message.and_then(Value::as_str).map(str::to_string);
        }
        _ => {}
    }
}

/// The failure aider's printed output states (for `aider-analytics`, whose log holds
/// the counts but not the exception that ended a session).
pub fn printed_failure(text: &str) -> Option<Failure> {
    let mut failure = AiderFailure::default();
    for line in text.lines() {
        failure.line(line);
    }
    failure.failure()
}

/// aider's provider exceptions, as it prints them: `litellm.<Class>: <message>` at
/// the start of a line, the classes of litellm's exception mapping.
static AIDER_EXCEPTION: LazyLock<Regex> =
    LazyLock::new(|| fixed(r"^litellm\.([A-Za-z]+Error|Timeout): (.*)$"));

/// Lines aider prints once it acts on an answer: from the first of them on, its
/// output holds what the agent controls (the output of the commands it runs, of
/// `--auto-test` and `--auto-lint`, which print without a header of their own), so no
/// printed line after it is evidence.
static AIDER_ACTS: LazyLock<Regex> =
    LazyLock::new(|| fixed(r"^(Running |Applied edit to |Did not apply edit to )"));

/// The failure of aider's last provider exception when no model call (`Tokens:` line)
/// succeeded after it (aider retries by itself). Authentication and permission errors
/// are `auth`; rate limits, overload, server and connection errors and timeouts are
/// `infra`; a bad request (a context too long) is the agent's, so none.
///
/// aider prints everything to one stream: its own messages, the model's answers and
/// the output of the commands it runs for the agent. A model's answer is always
/// followed by its `Tokens:` line, so a forged exception in it is superseded; but once
/// aider applied an edit or ran a command, the agent's programs have printed and
/// nothing later is believed: only a failure of a call made before that counts (the
/// session's first call, or its call again after aider added the files an answer
/// named). A later failure stays unclassified: the session is the agent's.
#[derive(Debug, Default)]
struct AiderFailure {
    /// aider acted on an answer: nothing it prints from here on is evidence.
    acted: bool,
    /// The last exception no model call went through after: its class and message.
    last: Option<(String, String)>,
}

impl AiderFailure {
    fn line(&mut self, line: &str) {
        if self.acted {
            return;
        }
        let line = line.trim_end();
        if AIDER_ACTS.is_match(line) {
            // Whatever was pending, a call went through: the answer being acted on.
            self.acted = true;
            self.last = None;
        } else if TOKENS.is_match(line.trim()) {
            self.last = None;
        } else if let Some(m) = AIDER_EXCEPTION.captures(line) {
            self.last = Some((m[1].to_string(), m[2].to_string()));
        }
    }

    fn failure(self) -> Option<Failure> {
        let (class, message) = self.last?;
        let reason = format!("aider: litellm.{class}: {message}");
        let status = classify_error_message(&message).and_then(|f| f.http_status);
        let kind = match class.as_str() {
            "AuthenticationError" | "PermissionDeniedError" => FailureKind::Auth,
            "RateLimitError"
            | "InternalServerError"
            | "ServiceUnavailableError"
            | "APIConnectionError"
            | "Timeout"
            | "APIError" => FailureKind::Infra,
            _ => return None,
        };
        let mut failure = Failure::new(kind, reason);
        failure.http_status = status;
        Some(failure)
    }
}

/// `Tokens: 2.3k sent, 1.1k cache write, 145 received. Cost: $0.01 message, $0.02
/// session.`
static TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    fixed(r"^Tokens: (.*)\. Cost: \$([0-9.]+) message, \$([0-9.]+) session\.?\s*$")
});
/// One count of a `Tokens:` line.
static PART: LazyLock<Regex> =
    LazyLock::new(|| fixed(r"([0-9.]+)(k|M)? (sent|received|cache write|cache hit)"));

fn fixed(pattern: &str) -> Regex {
    match Regex::new(pattern) {
        Ok(re) => re,
        // The patterns are part of the binary and covered by the tests below.
        Err(e) => panic!("built-in pattern {pattern} does not compile: {e}"),
    }
}

/// aider prints one `Tokens:` line per model call: turns = their number, input_tokens
/// = sent + cache write + cache hit, output_tokens = received, cost_usd = the last
/// session cost. aider rounds: "2.3k" is 2,300, so tokens are exact only below 1,000.
#[derive(Debug, Default)]
struct AiderCounts {
    turns: u64,
    input: u64,
    output: u64,
    cost: Option<f64>,
}

impl AiderCounts {
    fn line(&mut self, line: &str) {
        let Some(m) = TOKENS.captures(line.trim()) else {
            return;
        };
        self.turns += 1;
        for part in PART.captures_iter(&m[1]) {
            let Ok(number) = part[1].parse::<f64>() else {
                continue;
            };
            let scale = match part.get(2).map(|s| s.as_str()) {
                Some("k") => 1e3,
                Some("M") => 1e6,
                _ => 1.0,
            };
            // Python's round(): halves to even, as the numbers aider printed came from it.
            let n = (number * scale).round_ties_even().max(0.0) as u64;
            if &part[3] == "received" {
                self.output = self.output.saturating_add(n);
            } else {
                self.input = self.input.saturating_add(n);
            }
        }
        self.cost = m[3].parse::<f64>().ok().or(self.cost);
    }

    fn report(self, failure: Option<Failure>) -> UsageReport {
        if self.turns == 0 {
            return UsageReport {
                failure,
                ..UsageReport::default()
            };
        }
        UsageReport {
            turns: Some(self.turns),
            input_tokens: Some(self.input),
            output_tokens: Some(self.output),
            cost_usd: self.cost,
            status: None,
            failure,
        }
    }
}

/// One event of aider's analytics log (`--analytics-log FILE`, JSONL): one
/// `message_send` event per model call with `prompt_tokens` and `completion_tokens` as
/// the API reported them, and `total_cost` so far. turns = their number; cost = the
/// last `total_cost`.
fn analytics_event(event: &Map<String, Value>, report: &mut UsageReport) {
    let add = |slot: &mut Option<u64>, n: u64| *slot = Some(slot.unwrap_or(0).saturating_add(n));
    if event.get("event").and_then(Value::as_str) != Some("message_send") {
        return;
    }
    let field = |name: &str| event.get("properties").and_then(|p| p.get(name));
    add(&mut report.turns, 1);
    add(
        &mut report.input_tokens,
        field("prompt_tokens").and_then(Value::as_u64).unwrap_or(0),
    );
    add(
        &mut report.output_tokens,
        field("completion_tokens")
            .and_then(Value::as_u64)
            .unwrap_or(0),
    );
    if let Some(cost) = field("total_cost").and_then(Value::as_f64) {
        report.cost_usd = Some(cost);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(format: CliFormat, text: &str) -> String {
        parse(format, text).to_json()
    }

    #[test]
    fn claude_reads_the_last_result_line() {
        let text = concat!(
            "{\"type\":\"system\",\"subtype\":\"init\"}\n",
            "{\"type\":\"result\",\"subtype\":\"success\",\"num_turns\":1}\n",
            "wrapper noise\n",
            "{\"type\":\"result\",\"subtype\":\"success\",\"num_turns\":4,\"total_cost_usd\":0.25,",
            "\"usage\":{\"input_tokens\":100,\"cache_creation_input_tokens\":10,",
            "\"cache_read_input_tokens\":1,\"output_tokens\":7}}\n",
        );
        assert_eq!(
            json(CliFormat::Claude, text),
            r#"{"turns":4,"input_tokens":111,"output_tokens":7,"cost_usd":0.25}"#
        );
        let max = "{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"num_turns\":60}\n";
        assert_eq!(
            json(CliFormat::Claude, max),
            r#"{"turns":60,"status":"out_of_budget"}"#
        );
    }

    #[test]
    fn codex_sums_turn_usage_and_counts_completed_items() {
        let text = concat!(
            "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n",
            "{\"type\":\"item.completed\",\"item\":{\"type\":\"command_execution\"}}\n",
            "{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\"}}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1000,\"cached_input_tokens\":500,",
            "\"output_tokens\":30,\"reasoning_output_tokens\":3}}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"output_tokens\":1}}\n",
        );
        assert_eq!(
            json(CliFormat::Codex, text),
            r#"{"turns":2,"input_tokens":1010,"output_tokens":31}"#
        );
        assert_eq!(
            json(CliFormat::Codex, "{\"type\":\"turn.failed\"}\n"),
            r#"{"turns":0,"status":"interrupted"}"#
        );
    }

    #[test]
    fn aider_adds_its_rounded_counts_and_keeps_the_last_session_cost() {
        let text = concat!(
            "Aider v0.86.1\n",
            "Tokens: 2.3k sent, 1.1k cache write, 145 received. Cost: $0.01 message, $0.01 session.\n",
            "Applied edit to src/f1.txt\n",
            "Tokens: 4.5k sent, 1.2M cache hit, 3 received. Cost: $0.02 message, $0.03 session.\n",
        );
        assert_eq!(
            json(CliFormat::Aider, text),
            r#"{"turns":2,"input_tokens":1207900,"output_tokens":148,"cost_usd":0.03}"#
        );
        // Halves round to even, as Python's round() does.
        let half = "Tokens: 0.0025k sent, 1 received. Cost: $0.00 message, $0.00 session.\n";
        assert_eq!(
            parse(CliFormat::Aider, half).input_tokens,
            Some(2),
            "2.5 rounds to 2"
        );
    }

    #[test]
    fn output_a_parser_does_not_know_gives_what_it_can() {
        // Ported from the tests of the Python parser this module replaces.
        let junk = "garbage\n{\"type\":\"result\",\"num_turns\":\"x\"}\n[1,2]\n\u{0}\n";
        assert_eq!(json(CliFormat::Claude, junk), "{}");
        assert_eq!(json(CliFormat::Codex, junk), r#"{"turns":0}"#);
        assert_eq!(json(CliFormat::Aider, junk), "{}");
        // A claude capture without a result line: the session was cut off.
        assert_eq!(
            json(CliFormat::Claude, "{\"type\":\"assistant\"}\n"),
            r#"{"status":"interrupted"}"#
        );
        assert_eq!(json(CliFormat::Aider, "Tokens: 1..2k sent. Cost: $x"), "{}");
    }

    #[test]
    fn the_usage_report_carries_the_failure_each_cli_states_in_its_own_records() {
        let claude = concat!(
            "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1,\"error_status\":529}\n",
            "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"terminal_reason\":\"api_error\",",
            "\"api_error_status\":529,\"num_turns\":1}\n",
        );
        assert_eq!(
            json(CliFormat::Claude, claude),
            r#"{"turns":1,"failure":{"kind":"infra","reason":"HTTP 529 (api_error) in the CLI's result after 1 retry by the CLI","http_status":529}}"#
        );
        // The delay of the CLI's last retry, which follows the API's retry-after, is
        // kept for the trial's backoff.
        let waited = concat!(
            "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1,\"retry_delay_ms\":3728,\"error_status\":429}\n",
            "{\"type\":\"result\",\"is_error\":true,\"terminal_reason\":\"api_error\",\"api_error_status\":429}\n",
        );
        assert_eq!(
            parse(CliFormat::Claude, waited)
                .failure
                .and_then(|f| f.retry_after_ms),
            Some(3728)
        );
        let codex = concat!(
            "{\"type\":\"turn.started\"}\n",
            "{\"type\":\"error\",\"message\":\"exceeded retry limit, last status: 401 Unauthorized\"}\n",
            "{\"type\":\"turn.failed\",\"error\":{\"message\":\"exceeded retry limit, last status: 401 Unauthorized\"}}\n",
        );
        let report = parse(CliFormat::Codex, codex);
        assert_eq!(
            report.failure.as_ref().map(|f| f.kind),
            Some(FailureKind::Auth)
        );
        assert_eq!(report.failure.and_then(|f| f.http_status), Some(401));
        // Codex reconnected by itself and the turn completed: no failure.
        let recovered = concat!(
            "{\"type\":\"error\",\"message\":\"stream error: unexpected status 529; retrying 1/5\"}\n",
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n",
        );
        assert_eq!(parse(CliFormat::Codex, recovered).failure, None);
        let aider = concat!(
            "litellm.InternalServerError: AnthropicException - Overloaded. Handle with `litellm.InternalServerError`.\n",
            "The API provider's servers are down or overloaded.\n",
            "Retrying in 0.2 seconds...\n",
            "litellm.InternalServerError: AnthropicException - Overloaded.\n",
        );
        let f = parse(CliFormat::Aider, aider).failure.unwrap();
        assert_eq!(f.kind, FailureKind::Infra);
        assert!(
            f.reason.starts_with("aider: litellm.InternalServerError"),
            "{}",
            f.reason
        );
        let auth = "litellm.AuthenticationError: AnthropicException - invalid x-api-key\n";
        assert_eq!(
            parse(CliFormat::Aider, auth).failure.map(|f| f.kind),
            Some(FailureKind::Auth)
        );
        // aider retried and the next call went through; a bad request is the agent's.
        let recovered = concat!(
            "litellm.RateLimitError: rate limited\n",
            "Tokens: 10 sent, 2 received. Cost: $0.00 message, $0.00 session.\n",
        );
        assert_eq!(parse(CliFormat::Aider, recovered).failure, None);
        let bad = "litellm.BadRequestError: prompt is too long\n";
        assert_eq!(parse(CliFormat::Aider, bad).failure, None);
    }

    #[test]
    fn aiders_printed_exceptions_count_only_before_it_acted_on_an_answer() {
        let tokens = "Tokens: 3.0k sent, 30 received. Cost: $0.01 message, $0.01 session.\n";
        let forged = "litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect API key\n";
        // In a command's output, after aider's "Running" line.
        let text = format!("{tokens}Applied edit to src/f1.txt\nRunning echo x\n{forged}");
        assert_eq!(parse(CliFormat::Aider, &text).failure, None);
        // In the output of --auto-test, which has no header: after an applied edit.
        let text = format!("{tokens}Applied edit to tests/t.py\n{forged}");
        assert_eq!(parse(CliFormat::Aider, &text).failure, None);
        // In the model's answer: its Tokens line comes after it.
        let text = format!("src/f1.txt\n{forged}\ndone\n\n{tokens}");
        assert_eq!(parse(CliFormat::Aider, &text).failure, None);
        // A genuine failure: the first call, before anything was applied.
        let text = format!(
            "Aider v0.86.2\nRepo-map: using 4096 tokens\n\n{forged}The API provider is not able to authenticate you.\n"
        );
        assert_eq!(
            parse(CliFormat::Aider, &text).failure.map(|f| f.kind),
            Some(FailureKind::Auth)
        );
        // Or the call again after aider added the files an answer named.
        let text = format!("answer naming FEATURES.md\n\n{tokens}FEATURES.md\n{forged}");
        assert_eq!(
            parse(CliFormat::Aider, &text).failure.map(|f| f.kind),
            Some(FailureKind::Auth)
        );
    }

    #[test]
    fn aider_analytics_sums_the_exact_counts_of_each_model_call() {
        let log = concat!(
            "{\"event\": \"launched\", \"properties\": {}}\n",
            "{\"event\": \"message_send\", \"properties\": {\"prompt_tokens\": 3397, ",
            "\"completion_tokens\": 244, \"total_cost\": 0.0109}}\n",
            "not json\n",
            "{\"event\": \"message_send\", \"properties\": {\"prompt_tokens\": 3780, ",
            "\"completion_tokens\": 5, \"total_cost\": 0.0204}}\n",
        );
        assert_eq!(
            json(CliFormat::AiderAnalytics, log),
            r#"{"turns":2,"input_tokens":7177,"output_tokens":249,"cost_usd":0.0204}"#
        );
        assert_eq!(
            json(CliFormat::AiderAnalytics, "{\"event\": \"exit\"}\n"),
            "{}"
        );
    }
}
