//! The usage of a Codex session from its `token_count` events: the cumulative
//! `total_token_usage` adds what it grew by (a repeated total adds nothing, a total that
//! starts over adds itself); events with only a per-call `last_token_usage`, or the flat
//! counts of early versions, add that. A turn is one model call: one count that added
//! tokens. input_tokens include cached ones and output_tokens the reasoning ones, as
//! Codex counts them (its `reasoning_output_tokens` is a breakdown of the output, as in
//! the Responses API it copies), and as the command driver reads `codex exec --json`.

use serde_json::Value;

use crate::agent::Usage;

/// Tokens over a session's `token_count` events.
#[derive(Debug, Default)]
pub struct Tokens {
    turns: u64,
    input: u64,
    output: u64,
    /// The last cumulative (input, output, total) seen.
    last_total: Option<[u64; 3]>,
    seen: bool,
}

fn counts(usage: &Value) -> [u64; 3] {
    let field = |k: &str| usage.get(k).and_then(Value::as_u64).unwrap_or(0);
    let output = field("output_tokens");
    let total = usage
        .get("total_tokens")
        .and_then(Value::as_u64)
        .unwrap_or_else(|| field("input_tokens").saturating_add(output));
    [field("input_tokens"), output, total]
}

impl Tokens {
    /// Adds one event's `info`.
    pub fn count(&mut self, info: &Value) {
        match info.get("total_token_usage").filter(|t| t.is_object()) {
            Some(total) => {
                let now = counts(total);
                let added = match self.last_total {
                    Some(before) if now == before => return,
                    Some(before) if now.iter().zip(before).all(|(n, b)| *n >= b) => {
                        [now[0] - before[0], now[1] - before[1]]
                    }
                    // The first count, or one that started over (a resumed process).
                    _ => [now[0], now[1]],
                };
                self.last_total = Some(now);
                self.add(added);
            }
            None => {
                if let Some(last) = info.get("last_token_usage").filter(|l| l.is_object()) {
                    self.count_last(last);
                }
            }
        }
    }

    /// Adds the counts of one model call.
    pub fn count_last(&mut self, usage: &Value) {
        let [input, output, _] = counts(usage);
        self.add([input, output]);
    }

    fn add(&mut self, [input, output]: [u64; 2]) {
        self.seen = true;
        self.turns += 1;
        self.input = self.input.saturating_add(input);
        self.output = self.output.saturating_add(output);
    }

    /// The session's usage; nothing when no event counted tokens.
    pub fn usage(&self) -> Usage {
        if !self.seen {
            return Usage::default();
        }
        Usage {
            turns: Some(self.turns),
            input_tokens: Some(self.input),
            output_tokens: Some(self.output),
            cost_usd: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn cumulative_totals_add_what_they_grew_by_and_repeats_add_nothing() {
        let mut t = Tokens::default();
        let info = |input: u64, output: u64| {
            json!({"total_token_usage": {"input_tokens": input, "cached_input_tokens": 0,
                "output_tokens": output, "reasoning_output_tokens": 1,
                "total_tokens": input + output},
                "last_token_usage": {"input_tokens": 999, "output_tokens": 999}})
        };
        t.count(&info(100, 10));
        t.count(&info(100, 10));
        t.count(&info(250, 30));
        let u = t.usage();
        assert_eq!(
            (u.turns, u.input_tokens, u.output_tokens),
            (Some(2), Some(250), Some(30))
        );
        // A total that starts over (a resumed process) adds itself.
        t.count(&info(40, 4));
        assert_eq!(t.usage().input_tokens, Some(290));
    }

    #[test]
    fn per_call_counts_add_up_when_there_is_no_total() {
        let mut t = Tokens::default();
        t.count(&json!({"last_token_usage": {"input_tokens": 5, "output_tokens": 2}}));
        t.count_last(&json!({"input_tokens": 7, "output_tokens": 1, "reasoning_output_tokens": 3}));
        let u = t.usage();
        assert_eq!(
            (u.turns, u.input_tokens, u.output_tokens),
            (Some(2), Some(12), Some(3))
        );
        assert_eq!(Tokens::default().usage(), Usage::default());
    }
}
