//! The reward a container task's check writes, judged against the feature's threshold:
//! `/logs/verifier/reward.txt` (one number) or `reward.json` (its `reward`, or where it
//! has none every value it holds). A pure function of the files' text, so that every
//! case is decided (and tested) without a container; the check that reads the files
//! is `in_container.rs`.

/// Where the check writes its reward, inside its container.
pub const REWARD_DIR: &str = "/logs/verifier";

/// What the reward files say of a check.
#[derive(Debug, Clone, PartialEq)]
pub enum RewardVerdict {
    /// The reward (the lowest value, where `reward.json` holds several) is at least
    /// the threshold.
    Passed {
        /// The reward that was judged.
        reward: f64,
    },
    /// No reward, one that is not a number, or one below the threshold.
    Failed {
        /// Why, for the record and for people.
        reason: String,
    },
}

/// Judges the text of `reward.txt` and of `reward.json` (`None`: the file is absent)
/// against `min_reward`. `reward.txt` decides when both are there.
pub fn judge_reward(txt: Option<&str>, json: Option<&str>, min_reward: f64) -> RewardVerdict {
    let rewards = match (txt, json) {
        (Some(text), _) => from_txt(text),
        (None, Some(text)) => from_json(text),
        (None, None) => Err(format!(
            "the check wrote no reward ({REWARD_DIR}/reward.txt or {REWARD_DIR}/reward.json)"
        )),
    };
    let rewards = match rewards {
        Ok(rewards) => rewards,
        Err(reason) => return RewardVerdict::Failed { reason },
    };
    let (name, lowest) = rewards
        .into_iter()
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or_else(|| ("reward".into(), f64::NEG_INFINITY));
    if lowest >= min_reward {
        RewardVerdict::Passed { reward: lowest }
    } else {
        RewardVerdict::Failed {
            reason: format!("{name} is {lowest}, below the required {min_reward}"),
        }
    }
}

/// The number `reward.txt` holds (surrounding white space allowed).
fn from_txt(text: &str) -> Result<Vec<(String, f64)>, String> {
    let trimmed = text.trim();
    match trimmed.parse::<f64>() {
        Ok(n) if n.is_finite() => Ok(vec![("reward.txt".into(), n)]),
        _ => Err(format!(
            "reward.txt holds '{}', not a number",
            crate::terminal::line(&shorten(trimmed))
        )),
    }
}

/// `reward.json`'s `reward`, or every value of the object where it has none.
fn from_json(text: &str) -> Result<Vec<(String, f64)>, String> {
    let value: serde_json::Value =
        serde_json::from_str(text).map_err(|e| format!("reward.json is not JSON: {e}"))?;
    let Some(object) = value.as_object() else {
        return Err("reward.json is not a JSON object of numbers".into());
    };
    let number = |key: &str, v: &serde_json::Value| {
        v.as_f64().filter(|n| n.is_finite()).ok_or_else(|| {
            format!(
                "reward.json's '{}' is {}, not a number",
                crate::terminal::line(key),
                crate::terminal::line(&shorten(&v.to_string()))
            )
        })
    };
    if let Some(reward) = object.get("reward") {
        return Ok(vec![(
            "reward.json's 'reward'".into(),
            number("reward", reward)?,
        )]);
    }
    if object.is_empty() {
        return Err("reward.json holds no reward (an empty object)".into());
    }
    object
        .iter()
        .map(|(k, v)| {
            let n = number(k, v)?;
            Ok((format!("reward.json's '{}'", crate::terminal::line(k)), n))
        })
        .collect()
}

/// At most 80 characters of what a file held, for a reason.
fn shorten(text: &str) -> String {
    let mut short: String = text.chars().take(80).collect();
    if short.len() < text.len() {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passed(txt: Option<&str>, json: Option<&str>, min: f64) -> f64 {
        match judge_reward(txt, json, min) {
            RewardVerdict::Passed { reward } => reward,
            RewardVerdict::Failed { reason } => panic!("failed: {reason}"),
        }
    }

    fn failed(txt: Option<&str>, json: Option<&str>, min: f64) -> String {
        match judge_reward(txt, json, min) {
            RewardVerdict::Passed { reward } => panic!("passed with {reward}"),
            RewardVerdict::Failed { reason } => reason,
        }
    }

    #[test]
    fn reward_txt_at_or_above_the_threshold_passes() {
        assert_eq!(passed(Some("1\n"), None, 1.0), 1.0);
        assert_eq!(passed(Some(" 0.75 "), None, 0.5), 0.75);
        assert!(failed(Some("0.99"), None, 1.0).contains("0.99, below the required 1"));
    }

    #[test]
    fn reward_txt_decides_when_both_files_are_there() {
        assert_eq!(passed(Some("1"), Some(r#"{"reward": 0}"#), 1.0), 1.0);
        failed(Some("0"), Some(r#"{"reward": 1}"#), 1.0);
    }

    #[test]
    fn a_reward_that_is_not_a_number_fails_with_that_reason() {
        for text in ["", "yes", "1 2", "nan", "inf", "1\x1b[2J"] {
            let reason = failed(Some(text), None, 0.0);
            assert!(reason.contains("not a number"), "{text:?}: {reason}");
            assert!(!reason.contains('\x1b'), "{reason}");
        }
    }

    #[test]
    fn reward_json_uses_its_reward_key() {
        assert_eq!(passed(None, Some(r#"{"reward": 1, "other": 0}"#), 1.0), 1.0);
        assert!(
            failed(None, Some(r#"{"reward": "1"}"#), 1.0)
                .contains("'reward' is \"1\", not a number")
        );
        failed(None, Some(r#"{"reward": 0.5, "other": 1}"#), 1.0);
    }

    #[test]
    fn reward_json_without_a_reward_key_needs_every_value() {
        assert_eq!(passed(None, Some(r#"{"a": 1, "b": 2}"#), 1.0), 1.0);
        let reason = failed(None, Some(r#"{"a": 1, "b": 0.5}"#), 1.0);
        assert!(reason.contains("'b' is 0.5, below"), "{reason}");
        assert!(failed(None, Some(r#"{"a": 1, "b": null}"#), 0.0).contains("'b' is null"));
        assert!(failed(None, Some("{}"), 0.0).contains("holds no reward"));
    }

    #[test]
    fn reward_json_that_is_not_an_object_of_numbers_fails() {
        assert!(failed(None, Some("1"), 0.0).contains("not a JSON object"));
        assert!(failed(None, Some("[1]"), 0.0).contains("not a JSON object"));
        assert!(failed(None, Some("{"), 0.0).contains("not JSON"));
    }

    #[test]
    fn no_reward_file_fails_with_that_reason() {
        assert!(failed(None, None, 0.0).contains("wrote no reward"));
    }
}
