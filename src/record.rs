//! The records a run writes: one per finished session and one per finished trial, as
//! JSON lines and as CSV rows with a stable column order.

use serde::{Deserialize, Serialize};

use crate::agent::{FailureKind, Outcome, SessionKind, Usage};
use crate::csv_text::Cell;
use crate::metrics::{Evidence, SessionMetrics, TrialMetrics};
use crate::suite::TrialKey;

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
    /// The per-session fields of docs/metrics.md.
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
    /// Whose failure the session was, empty when none: `agent` counts; `infra` and
    /// `auth` reach `sessions.jsonl` only for a session that changed what the harness
    /// observes (then it is the agent's session, counted, with the failure noted), and
    /// otherwise go to `failures.jsonl`.
    #[serde(default)]
    pub failure: Option<FailureKind>,
    /// The evidence behind `failure`, in words. JSONL only.
    #[serde(default)]
    pub failure_reason: Option<String>,
    /// The agent's wrapper or CLI declared the session interrupted, which the harness
    /// neither made nor saw: never the outcome, never a reason for the next session to
    /// be `resumed`. JSONL only, and written only when true.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub declared_interrupted: bool,
    /// What lies behind each count (docs/metrics.md, "Evidence"). JSONL only: the
    /// tables keep their columns. Null in records written before evidence existed.
    #[serde(default)]
    pub evidence: Option<Evidence>,
}

/// One finished trial.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// Which trial.
    #[serde(flatten)]
    pub key: TrialKey,
    /// The per-trial fields of docs/metrics.md.
    #[serde(flatten)]
    pub metrics: TrialMetrics,
    /// Sum over sessions.
    #[serde(flatten)]
    pub usage: Usage,
    /// Wall time of the whole trial. JSONL only.
    pub wall_ms: u64,
    /// Why the trial ended in error, if it did.
    pub error: Option<String>,
    /// What the per-trial counts stand on. JSONL only.
    #[serde(default)]
    pub evidence: TrialEvidence,
    /// Attempts the trial took: 1 when the first finished, more when attempts before
    /// it failed for a cause outside the agent (they are in `failures.jsonl`).
    #[serde(default = "one")]
    pub attempts: u32,
}

fn one() -> u32 {
    1
}

/// One session of a failed attempt, as `failures.jsonl` holds it: the session record
/// with the attempt it belonged to. A trial whose last record is here and not in
/// `trials.jsonl` could not run; `resume` tries it again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailedSession {
    /// 1-based attempt of the trial.
    pub attempt: u32,
    /// Where the attempt's captured output and the agent's HOME were kept, relative to
    /// the run directory (`agents/<trial_id>/attempt-<n>`), for command agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub captures: Option<String>,
    /// The session as it was observed.
    #[serde(flatten)]
    pub record: SessionRecord,
}

/// The ids behind a trial's counts.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialEvidence {
    /// Canonical ids in none of the lists the sessions left (null as `plan_omissions`).
    pub plan_omitted: Option<Vec<String>>,
}

/// Fields of the JSONL records that the CSV tables leave out: wall times differ
/// between identical runs, and the tables must not.
const JSONL_ONLY: &[&str] = &[
    "wall_ms",
    "evidence",
    "failure_reason",
    "declared_interrupted",
];

/// The columns of a record type, derived from its fields in declaration order (what
/// serde writes to the JSONL file), without the JSONL-only ones. A field added to a
/// record, or to the metrics it holds, is a column of its table at once.
fn columns_of<T: Serialize>(sample: &T) -> Vec<&'static str> {
    match serde_json::to_value(sample) {
        Ok(serde_json::Value::Object(map)) => map
            .keys()
            .filter(|k| !JSONL_ONLY.contains(&k.as_str()))
            .map(|k| &*Box::leak(k.clone().into_boxed_str()))
            .collect(),
        _ => Vec::new(),
    }
}

/// The CSV row of `record` for `columns`: strings as text cells (escaped as every CSV
/// text cell is), booleans as `true`/`false`, nulls empty, numbers as Rust prints them.
fn row_of<T: Serialize>(record: &T, columns: &[&str]) -> Vec<Cell> {
    let map = match serde_json::to_value(record) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    columns
        .iter()
        .map(|c| match map.get(*c) {
            None | Some(serde_json::Value::Null) => Cell::Value(String::new()),
            Some(serde_json::Value::String(s)) => Cell::Text(s.clone()),
            Some(serde_json::Value::Bool(b)) => Cell::Value(b.to_string()),
            Some(serde_json::Value::Number(n)) => {
                Cell::Value(match (n.as_u64(), n.as_i64(), n.as_f64()) {
                    (Some(u), _, _) => u.to_string(),
                    (None, Some(i), _) => i.to_string(),
                    (None, None, Some(f)) => f.to_string(),
                    _ => n.to_string(),
                })
            }
            Some(other) => Cell::Text(other.to_string()),
        })
        .collect()
}

/// Column names of `sessions.csv`, in order: the fields of [`SessionRecord`].
pub static SESSION_COLUMNS: std::sync::LazyLock<Vec<&'static str>> =
    std::sync::LazyLock::new(|| columns_of(&SessionRecord::sample()));

/// Column names of `trials.csv`, in order: the fields of [`TrialRecord`].
pub static TRIAL_COLUMNS: std::sync::LazyLock<Vec<&'static str>> =
    std::sync::LazyLock::new(|| columns_of(&TrialRecord::sample()));

impl SessionRecord {
    /// The row of `sessions.csv`, matching [`SESSION_COLUMNS`].
    pub fn csv_row(&self) -> Vec<Cell> {
        row_of(self, &SESSION_COLUMNS)
    }

    /// A record with every optional field present, to read the columns from.
    fn sample() -> SessionRecord {
        SessionRecord {
            key: TrialKey::new("a", "t", 0),
            session: 0,
            kind: SessionKind::Coding,
            outcome: Outcome::Completed,
            metrics: SessionMetrics::default(),
            actions_failed: 0,
            usage: Usage::default(),
            wall_ms: 0,
            error: None,
            divergent: false,
            failure: None,
            failure_reason: None,
            declared_interrupted: true,
            evidence: Some(Evidence::default()),
        }
    }
}

impl TrialRecord {
    /// The row of `trials.csv`, matching [`TRIAL_COLUMNS`].
    pub fn csv_row(&self) -> Vec<Cell> {
        row_of(self, &TRIAL_COLUMNS)
    }

    fn sample() -> TrialRecord {
        TrialRecord {
            key: TrialKey::new("a", "t", 0),
            metrics: TrialMetrics {
                features_verified: 0,
                features_total: 0,
                sessions: 0,
                ended_by: crate::metrics::EndedBy::MaxSessions,
                premature_victory: false,
                plan_omissions: None,
                tokens: None,
            },
            usage: Usage::default(),
            wall_ms: 0,
            error: None,
            evidence: TrialEvidence::default(),
            attempts: 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_session_table_has_its_stable_column_order() {
        assert_eq!(
            SESSION_COLUMNS.as_slice(),
            [
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
                "verify_timeouts",
                "in_progress",
                "contract_edits",
                "exit_check",
                "reverted",
                "over_budget",
                "effects_tampered",
                "verify_tamper",
                "ignored_seen",
                "unobservable",
                "actions_failed",
                "turns",
                "input_tokens",
                "output_tokens",
                "cost_usd",
                "error",
                "divergent",
                "failure",
            ]
        );
        assert_eq!(
            TRIAL_COLUMNS.as_slice(),
            [
                "trial_id",
                "arm",
                "task",
                "replicate",
                "features_verified",
                "features_total",
                "sessions",
                "ended_by",
                "premature_victory",
                "plan_omissions",
                "tokens",
                "turns",
                "input_tokens",
                "output_tokens",
                "cost_usd",
                "error",
                "attempts",
            ]
        );
    }

    #[test]
    fn cells_are_booleans_numbers_and_empty_nulls() {
        let mut r = SessionRecord::sample();
        r.usage.cost_usd = Some(0.1 + 0.2);
        r.usage.turns = Some(7);
        r.metrics.resume_success = None;
        r.metrics.clean_tree = true;
        let row = r.csv_row();
        let cell =
            |c: &str| match row[SESSION_COLUMNS.iter().position(|x| *x == c).unwrap()].clone() {
                Cell::Text(s) | Cell::Value(s) => s,
            };
        assert_eq!(cell("cost_usd"), (0.1f64 + 0.2).to_string());
        assert_eq!(cell("turns"), "7");
        assert_eq!(cell("resume_success"), "");
        assert_eq!(cell("clean_tree"), "true");
        assert_eq!(cell("kind"), "coding");
        assert_eq!(cell("error"), "");
    }

    #[test]
    fn strings_are_text_cells_and_numbers_and_flags_are_values() {
        let mut r = SessionRecord::sample();
        r.key = TrialKey::new("=1+1", "-t", 0);
        r.error = Some("@x".into());
        let row = r.csv_row();
        let cell = |c: &str| row[SESSION_COLUMNS.iter().position(|x| *x == c).unwrap()].clone();
        assert_eq!(cell("arm"), Cell::Text("=1+1".into()));
        assert_eq!(cell("task"), Cell::Text("-t".into()));
        assert_eq!(cell("trial_id"), Cell::Text("=1+1:-t:0".into()));
        assert_eq!(cell("error"), Cell::Text("@x".into()));
        assert_eq!(cell("session"), Cell::Value("0".into()));
        assert_eq!(cell("clean_tree"), Cell::Value("false".into()));
        assert_eq!(cell("resume_success"), Cell::Value(String::new()));
    }
}
