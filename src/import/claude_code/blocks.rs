//! The content blocks Claude Code writes in both of its transcript forms (session files
//! and `--output-format stream-json`): tool calls, tool results, per-message usage.
//!
//! Everything is read leniently from `serde_json::Value`: a missing or mistyped field
//! makes a block or a number absent, never an error.

use std::collections::BTreeMap;

use serde_json::Value;

use super::mapping::{ToolCall, ToolOutcome};
use crate::agent::Usage;
use crate::agent::trajectory::content_text;

/// The `tool_use` blocks of an assistant `message`, in order; `cwd` is where the
/// agent's shell was when the message was written (the line's `cwd`), if known. Its
/// `text` blocks go onto `texts`, numbered from the same `seq` as the calls so that
/// the two keep their order.
pub fn tool_calls(
    message: &Value,
    origin: &str,
    cwd: Option<&str>,
    seq: &mut u64,
    texts: &mut Vec<(u64, String)>,
) -> Vec<ToolCall> {
    blocks(message)
        .filter_map(|b| {
            if b.get("type").and_then(Value::as_str) == Some("text") {
                let text = b.get("text").and_then(Value::as_str)?;
                if !text.trim().is_empty() {
                    *seq += 1;
                    texts.push((*seq, text.to_string()));
                }
                return None;
            }
            if b.get("type").and_then(Value::as_str) != Some("tool_use") {
                return None;
            }
            let id = b.get("id")?.as_str()?.to_string();
            let name = b.get("name")?.as_str()?.to_string();
            *seq += 1;
            Some(ToolCall {
                id,
                name,
                input: b.get("input").cloned().unwrap_or(Value::Null),
                origin: origin.to_string(),
                cwd: cwd.map(str::to_string),
                seq: *seq,
            })
        })
        .collect()
}

/// The `tool_result` blocks of a user `message`, keyed by the call they answer. The
/// line's structured result (`toolUseResult` in session files, `tool_use_result` in
/// stream-json) is attached when the line answers exactly one call, as Claude Code
/// writes it.
pub fn tool_results(message: &Value, structured: Option<&Value>) -> Vec<(String, ToolOutcome)> {
    let mut out: Vec<(String, ToolOutcome)> = blocks(message)
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        .filter_map(|b| {
            let id = b.get("tool_use_id")?.as_str()?.to_string();
            Some((
                id,
                ToolOutcome {
                    is_error: b.get("is_error").and_then(Value::as_bool) == Some(true),
                    text: content_text(b.get("content")),
                    result: None,
                },
            ))
        })
        .collect();
    if let ([(_, only)], Some(result)) = (out.as_mut_slice(), structured) {
        only.result = Some(result.clone());
    }
    out
}

fn blocks(message: &Value) -> impl Iterator<Item = &Value> {
    message
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The text a user `message` carries (its string content, or its text blocks).
pub fn user_text(message: &Value) -> String {
    content_text(message.get("content"))
}

/// Usage summed over distinct API messages. Claude Code splits one API message over
/// several lines (one per content block) that share `message.id` and each repeat its
/// usage, so every id counts once, with the largest value of each field among its
/// lines (the last line of a streamed message has the final output count).
///
/// A turn is one model call of the main conversation, as `--max-turns` and the
/// `num_turns` of stream-json count them: subagents' messages add tokens and cost,
/// not turns.
#[derive(Debug, Default)]
pub struct UsageTally {
    /// Per message id: input (uncached + cache writes + cache reads), output.
    messages: BTreeMap<String, [Option<u64>; 2]>,
    /// Message ids seen on the main conversation (not a subagent's).
    main: std::collections::BTreeSet<String>,
    costs: BTreeMap<String, f64>,
    anonymous: u64,
}

impl UsageTally {
    /// Adds one assistant line's `message` (and its line-level `costUSD`, which early
    /// CLI versions wrote); `main` says it belongs to the main conversation, not to a
    /// subagent. `key` stands in for a missing `message.id`. Synthetic messages (model
    /// `<synthetic>`, written by the CLI itself, not the API) are no turns and cost
    /// nothing.
    pub fn add(&mut self, message: &Value, cost: Option<f64>, key: &str, main: bool) {
        if message.get("model").and_then(Value::as_str) == Some("<synthetic>") {
            return;
        }
        let id = match message.get("id").and_then(Value::as_str) {
            Some(id) => id.to_string(),
            None => {
                self.anonymous += 1;
                format!("\u{0}{key}#{}", self.anonymous)
            }
        };
        let usage = message.get("usage");
        let field = |name: &str| usage.and_then(|u| u.get(name)).and_then(Value::as_u64);
        let input = [
            "input_tokens",
            "cache_creation_input_tokens",
            "cache_read_input_tokens",
        ]
        .iter()
        .filter_map(|n| field(n))
        .reduce(u64::saturating_add);
        if main {
            self.main.insert(id.clone());
        }
        let seen = self.messages.entry(id.clone()).or_default();
        for (slot, value) in seen.iter_mut().zip([input, field("output_tokens")]) {
            *slot = (*slot).max(value);
        }
        if let Some(c) = cost.filter(|c| c.is_finite() && *c >= 0.0) {
            let slot = self.costs.entry(id).or_default();
            *slot = slot.max(c);
        }
    }

    /// turns = distinct messages of the main conversation; tokens and cost summed over
    /// all of them, subagents' included; a field no message gave stays absent.
    pub fn usage(&self) -> Usage {
        let sum = |i: usize| {
            self.messages
                .values()
                .filter_map(|m| m[i])
                .reduce(u64::saturating_add)
        };
        Usage {
            turns: Some(self.main.len() as u64),
            input_tokens: sum(0),
            output_tokens: sum(1),
            // Rounded to a millionth of a dollar: a float sum's last digits are noise.
            cost_usd: (!self.costs.is_empty())
                .then(|| (self.costs.values().sum::<f64>() * 1e6).round() / 1e6),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_message_split_over_lines_counts_once() {
        let mut t = UsageTally::default();
        let part = |out: u64| {
            json!({"id": "msg_1", "model": "claude", "usage": {"input_tokens": 3,
                "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000,
                "output_tokens": out}})
        };
        t.add(&part(5), None, "a", true);
        t.add(&part(40), None, "a", true);
        t.add(
            &json!({"id": "msg_2", "usage": {"input_tokens": 10, "output_tokens": 2}}),
            None,
            "a",
            true,
        );
        t.add(
            &json!({"id": "msg_3", "model": "<synthetic>", "usage": {"output_tokens": 9}}),
            None,
            "a",
            true,
        );
        let u = t.usage();
        assert_eq!(u.turns, Some(2));
        assert_eq!(u.input_tokens, Some(1103 + 10));
        assert_eq!(u.output_tokens, Some(42));
        assert_eq!(u.cost_usd, None);
    }

    #[test]
    fn lines_without_a_message_id_each_count_and_cost_is_summed_when_given() {
        let mut t = UsageTally::default();
        t.add(
            &json!({"usage": {"output_tokens": 1}}),
            Some(0.5),
            "a",
            true,
        );
        t.add(
            &json!({"usage": {"output_tokens": 1}}),
            Some(0.25),
            "a",
            true,
        );
        t.add(&json!("not an object"), None, "a", true);
        let u = t.usage();
        assert_eq!(u.turns, Some(3));
        assert_eq!(u.output_tokens, Some(2));
        assert_eq!(u.cost_usd, Some(0.75));
    }

    #[test]
    fn subagent_messages_add_tokens_and_cost_but_no_turns() {
        let mut t = UsageTally::default();
        let msg = |id: &str, out: u64| json!({"id": id, "usage": {"input_tokens": 1, "output_tokens": out}});
        t.add(&msg("msg_main", 10), Some(0.5), "a", true);
        t.add(&msg("msg_sub1", 20), Some(0.25), "b", false);
        t.add(&msg("msg_sub2", 30), None, "b", false);
        let u = t.usage();
        assert_eq!(u.turns, Some(1));
        assert_eq!(u.input_tokens, Some(3));
        assert_eq!(u.output_tokens, Some(60));
        assert_eq!(u.cost_usd, Some(0.75));
    }

    #[test]
    fn results_carry_errors_text_and_the_structured_result() {
        let msg = json!({"content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": true,
             "content": [{"type": "text", "text": "boom"}]}]});
        let r = tool_results(&msg, Some(&json!({"originalFile": "x"})));
        assert_eq!(r[0].0, "t1");
        assert!(r[0].1.is_error);
        assert_eq!(r[0].1.text, "boom");
        assert!(r[0].1.result.is_some());
        assert!(tool_results(&json!({"content": "hello"}), None).is_empty());
    }
}
