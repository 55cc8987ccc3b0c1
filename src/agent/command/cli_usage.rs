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

use super::usage::report_result_line;
use crate::agent::trace::EndStatus;

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
    /// Output tokens (reasoning included).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_tokens: Option<u64>,
    /// What the CLI says the session cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// How the session ended, when the output says it did not simply complete.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<EndStatus>,
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
    match format {
        CliFormat::Claude => claude(text),
        CliFormat::Codex => codex(text),
        CliFormat::Aider => aider(text),
        CliFormat::AiderAnalytics => aider_analytics(text),
    }
}

fn objects(text: &str) -> impl Iterator<Item = Map<String, Value>> + '_ {
    text.lines()
        .filter_map(|line| match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        })
}

/// The last `result` line, read as the command driver reads it: turns = num_turns,
/// input = input + cache creation + cache read tokens, output, total_cost_usd, and
/// `out_of_budget` for `error_max_turns`. Without a result line the session was cut
/// off: `interrupted`.
fn claude(text: &str) -> UsageReport {
    let Some(result) = objects(text)
        .filter(|m| m.get("type").and_then(Value::as_str) == Some("result"))
        .last()
    else {
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
    }
}

/// Usage summed over `turn.completed` events (input_tokens already includes
/// cached_input_tokens; reasoning tokens count as output). Codex reports no model-call
/// count: turns = completed items (commands, file changes, messages, tool calls). No
/// cost: Codex does not print one. A `turn.failed` or `error` event: `interrupted`.
fn codex(text: &str) -> UsageReport {
    let mut report = UsageReport {
        turns: Some(0),
        ..UsageReport::default()
    };
    let add = |slot: &mut Option<u64>, n: u64| *slot = Some(slot.unwrap_or(0).saturating_add(n));
    for event in objects(text) {
        match event.get("type").and_then(Value::as_str) {
            Some("item.completed") => add(&mut report.turns, 1),
            Some("turn.completed") => {
                let usage = event.get("usage");
                let field = |name: &str| usage.and_then(|u| u.get(name)).and_then(Value::as_u64);
                if let Some(n) = field("input_tokens") {
                    add(&mut report.input_tokens, n);
                }
                let out: Vec<u64> = ["output_tokens", "reasoning_output_tokens"]
                    .iter()
                    .filter_map(|name| field(name))
                    .collect();
                if !out.is_empty() {
                    add(&mut report.output_tokens, out.iter().sum());
                }
            }
            Some("turn.failed" | "error") => report.status = Some(EndStatus::Interrupted),
            _ => {}
        }
    }
    report
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
fn aider(text: &str) -> UsageReport {
    let (mut turns, mut input, mut output) = (0u64, 0u64, 0u64);
    let mut cost = None;
    for line in text.lines() {
        let Some(m) = TOKENS.captures(line.trim()) else {
            continue;
        };
        turns += 1;
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
                output = output.saturating_add(n);
            } else {
                input = input.saturating_add(n);
            }
        }
        cost = m[3].parse::<f64>().ok().or(cost);
    }
    if turns == 0 {
        return UsageReport::default();
    }
    UsageReport {
        turns: Some(turns),
        input_tokens: Some(input),
        output_tokens: Some(output),
        cost_usd: cost,
        status: None,
    }
}

/// aider's analytics log (`--analytics-log FILE`, JSONL): one `message_send` event per
/// model call with `prompt_tokens` and `completion_tokens` as the API reported them, and
/// `total_cost` so far. turns = their number; cost = the last `total_cost`.
fn aider_analytics(text: &str) -> UsageReport {
    let mut report = UsageReport::default();
    let add = |slot: &mut Option<u64>, n: u64| *slot = Some(slot.unwrap_or(0).saturating_add(n));
    for event in objects(text) {
        if event.get("event").and_then(Value::as_str) != Some("message_send") {
            continue;
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
    report
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
            r#"{"turns":2,"input_tokens":1010,"output_tokens":34}"#
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
