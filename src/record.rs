//! The records a run writes: one per finished session and one per finished trial, as
//! JSON lines and as CSV rows with a stable column order.

use serde::{Deserialize, Serialize};

use crate::agent::{SessionKind, Usage};
use crate::metrics::{Outcome, SessionMetrics, TrialMetrics};

/// Identifies a trial: (arm, task, replicate).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TrialKey {
    /// `arm:task:replicate`.
    pub trial_id: String,
    /// Arm name.
    pub arm: String,
    /// Task name.
    pub task: String,
    /// Replicate number, from 0.
    pub replicate: u32,
}

impl TrialKey {
    /// The key of replicate `replicate` of `task` under `arm`.
    pub fn new(arm: &str, task: &str, replicate: u32) -> TrialKey {
        TrialKey {
            trial_id: format!("{arm}:{task}:{replicate}"),
            arm: arm.to_string(),
            task: task.to_string(),
            replicate,
        }
    }
}

/// One finished session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// Which trial.
    #[serde(flatten)]
    pub key: TrialKey,
    /// Session number.
    pub session: u32,
    /// Initializer or coding.
    pub kind: SessionKind,
    /// How it ended.
    pub outcome: Outcome,
    /// The DESIGN §8 fields.
    #[serde(flatten)]
    pub metrics: SessionMetrics,
    /// Driver actions that could not be carried out.
    pub actions_failed: u32,
    /// What the session used.
    #[serde(flatten)]
    pub usage: Usage,
    /// Wall time of the session itself (not of observing it). JSONL only: it would
    /// make the CSV differ between identical runs.
    pub wall_ms: u64,
    /// Error or failed-action notes.
    pub error: Option<String>,
    /// A replayed transcript session whose importer reset a file to what the agent
    /// saw (`divergent` on the trace's session line). Absent in older records.
    #[serde(default)]
    pub divergent: bool,
}

/// One finished trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// Which trial.
    #[serde(flatten)]
    pub key: TrialKey,
    /// The DESIGN §8 per-trial fields.
    #[serde(flatten)]
    pub metrics: TrialMetrics,
    /// Sum over sessions.
    #[serde(flatten)]
    pub usage: Usage,
    /// Wall time of the whole trial. JSONL only.
    pub wall_ms: u64,
    /// Why the trial ended in error, if it did.
    pub error: Option<String>,
}

/// Column names of `sessions.csv`, in order.
pub const SESSION_COLUMNS: &[&str] = &[
    "trial_id",
    "arm",
    "task",
    "replicate",
    "session",
    "kind",
    "outcome",
    "list_parse_ok",
    "newly_claimed",
    "premature_claims",
    "newly_verified",
    "regressions",
    "told_false",
    "desc_edits",
    "step_edits",
    "entries_removed",
    "entries_added",
    "tests_removed",
    "tests_weakened",
    "dup_side_effects",
    "clean_tree",
    "progress_updated",
    "resumed",
    "resume_success",
    "flaky",
    "features_verified",
    "actions_failed",
    "turns",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "error",
    // Appended last so that older readers' column positions hold; optional on reading.
    "divergent",
    "verify_timeouts",
];

/// Column names of `trials.csv`, in order.
pub const TRIAL_COLUMNS: &[&str] = &[
    "trial_id",
    "arm",
    "task",
    "replicate",
    "features_verified",
    "features_total",
    "sessions",
    "ended_by",
    "premature_victory",
    "turns",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "error",
];

/// A CSV cell: booleans as `true`/`false`, nulls as empty.
fn cell<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

impl SessionRecord {
    /// The row of `sessions.csv`, matching [`SESSION_COLUMNS`].
    pub fn csv_row(&self) -> Vec<String> {
        let m = &self.metrics;
        vec![
            self.key.trial_id.clone(),
            self.key.arm.clone(),
            self.key.task.clone(),
            self.key.replicate.to_string(),
            self.session.to_string(),
            self.kind.as_str().to_string(),
            self.outcome.as_str().to_string(),
            cell(m.list_parse_ok),
            cell(m.newly_claimed),
            cell(m.premature_claims),
            m.newly_verified.to_string(),
            m.regressions.to_string(),
            cell(m.told_false),
            cell(m.desc_edits),
            cell(m.step_edits),
            cell(m.entries_removed),
            cell(m.entries_added),
            m.tests_removed.to_string(),
            m.tests_weakened.to_string(),
            m.dup_side_effects.to_string(),
            m.clean_tree.to_string(),
            m.progress_updated.to_string(),
            m.resumed.to_string(),
            cell(m.resume_success),
            m.flaky.to_string(),
            m.features_verified.to_string(),
            self.actions_failed.to_string(),
            cell(self.usage.turns),
            cell(self.usage.input_tokens),
            cell(self.usage.output_tokens),
            cell(self.usage.cost_usd),
            self.error.clone().unwrap_or_default(),
            self.divergent.to_string(),
            m.verify_timeouts.to_string(),
        ]
    }
}

impl TrialRecord {
    /// The row of `trials.csv`, matching [`TRIAL_COLUMNS`].
    pub fn csv_row(&self) -> Vec<String> {
        let m = &self.metrics;
        vec![
            self.key.trial_id.clone(),
            self.key.arm.clone(),
            self.key.task.clone(),
            self.key.replicate.to_string(),
            m.features_verified.to_string(),
            m.features_total.to_string(),
            m.sessions.to_string(),
            m.ended_by.as_str().to_string(),
            m.premature_victory.to_string(),
            cell(self.usage.turns),
            cell(self.usage.input_tokens),
            cell(self.usage.output_tokens),
            cell(self.usage.cost_usd),
            self.error.clone().unwrap_or_default(),
        ]
    }
}
