//! Behaviour profiles of the sim agent: data (TOML), named, with per-format,
//! per-strategy and per-initializer parameters.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::feature_list::ListFormat;

const BUILT_IN: &str = include_str!("sim_profiles.toml");

/// One named behaviour profile.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// What the profile models.
    pub description: String,
    /// Turns one step of work costs, drawn uniformly from `[low, high]`.
    pub turns_per_step: [u32; 2],
    /// Synthetic input tokens per turn (usage only).
    pub input_tokens_per_turn: u64,
    /// Synthetic output tokens per turn (usage only).
    pub output_tokens_per_turn: u64,
    /// Probability that a session ends without committing.
    pub forget_commit: f64,
    /// Probability that a session does not update PROGRESS.md.
    pub skip_progress: f64,
    /// Share of premature claims made by weakening the feature's test instead of
    /// leaving a broken implementation.
    pub weaken_share: f64,
    /// Probability that a session finishing work half-done by a crashed session
    /// repeats its irreversible action without checking the log.
    pub repeat_side_effect_after_crash: f64,
    /// Per list format.
    pub format: FormatTable,
    /// The single-session strategy.
    pub single: SingleParams,
    /// Arms without an initializer session.
    pub no_initializer: NoInitializerParams,
    /// Arms with `list_schema = "status"`.
    pub status: StatusParams,
}

/// Per-format parameters.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormatTable {
    /// `feature_list.json`.
    pub json: FormatParams,
    /// `feature_list.yaml`.
    pub yaml: FormatParams,
    /// `FEATURES.md`.
    pub markdown: FormatParams,
}

/// Per-session probabilities of the acts a list format invites.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FormatParams {
    /// Claim the session's feature while its check fails.
    pub premature_claim: f64,
    /// Reword one entry's description.
    pub desc_edit: f64,
    /// Change one entry's steps.
    pub step_edit: f64,
    /// Delete one entry.
    pub entry_removal: f64,
    /// Delete one test file of another feature.
    pub test_removal: f64,
    /// Status schema, agent-owned ledger: mark a second entry `in_progress` while
    /// working on one (per work item).
    pub multi_in_progress: f64,
}

/// Context degradation of one long session.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SingleParams {
    /// Added to the premature-claim probability per feature already done in the session.
    pub premature_growth: f64,
    /// Probability of declaring the project complete after each feature.
    pub early_victory: f64,
    /// Relative growth of the turn cost of a step per feature already done.
    pub turn_growth: f64,
}

/// Planning without an initializer.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoInitializerParams {
    /// Probability that a requirement makes it into the agent's own plan.
    pub plan_coverage: f64,
}

/// The status schema: the states and the goal contract an agent can mishandle.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatusParams {
    /// `multi_in_progress` is multiplied by this in the single-session strategy, where
    /// the agent juggles several features in one context.
    pub single_multi_factor: f64,
    /// Probability that an incremental session rewords the goal contract.
    pub contract_reword: f64,
    /// Single strategy: probability of rewording the contract after each feature, per
    /// feature already done in the session (the context filling up).
    pub contract_reword_growth: f64,
}

fn built_in() -> &'static BTreeMap<String, Profile> {
    static PROFILES: OnceLock<BTreeMap<String, Profile>> = OnceLock::new();
    PROFILES.get_or_init(|| match toml::from_str(BUILT_IN) {
        Ok(p) => p,
        // The file is part of the binary and covered by a test.
        Err(e) => panic!("built-in sim profiles do not parse: {e}"),
    })
}

impl Profile {
    /// The built-in profile named `name`.
    pub fn named(name: &str) -> Option<&'static Profile> {
        built_in().get(name)
    }

    /// Whether a built-in profile has this name.
    pub fn exists(name: &str) -> bool {
        built_in().contains_key(name)
    }

    /// Names of the built-in profiles.
    pub fn names() -> Vec<String> {
        built_in().keys().cloned().collect()
    }

    /// The parameters of one list format.
    pub fn format(&self, format: ListFormat) -> &FormatParams {
        match format {
            ListFormat::Json => &self.format.json,
            ListFormat::Yaml => &self.format.yaml,
            ListFormat::Markdown => &self.format.markdown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_in_profiles_parse_and_hold_probabilities() {
        for name in Profile::names() {
            let p = Profile::named(&name).unwrap();
            let probs = ListFormat::ALL.iter().flat_map(|f| {
                let q = p.format(*f);
                [
                    q.premature_claim,
                    q.desc_edit,
                    q.step_edit,
                    q.entry_removal,
                    q.test_removal,
                    q.multi_in_progress,
                ]
            });
            for x in probs.chain([
                p.forget_commit,
                p.skip_progress,
                p.weaken_share,
                p.repeat_side_effect_after_crash,
                p.single.early_victory,
                p.no_initializer.plan_coverage,
                p.status.contract_reword,
            ]) {
                assert!((0.0..=1.0).contains(&x), "{name}: {x}");
            }
            assert!(p.turns_per_step[0] <= p.turns_per_step[1]);
        }
        assert!(Profile::exists("calibrated"));
    }
}
