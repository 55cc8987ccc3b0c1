//! The per-trial figures: features verified at the end, sessions, why the trial
//! stopped, and whether the agent declared victory too early.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use super::session::count;
use crate::agent::Outcome;
use crate::observe::{Check, Observation};

/// Why a trial stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndedBy {
    /// Every canonical feature verified after the last session.
    AllVerified,
    /// The agent declared the project complete.
    DeclaredComplete,
    /// The session budget (or, in replay, the trace) ran out.
    MaxSessions,
    /// A session ended in `error`.
    Error,
    /// The trial's token or dollar budget was used up, so no new session started.
    Budget,
}

impl EndedBy {
    /// The name used in records.
    pub fn as_str(self) -> &'static str {
        match self {
            EndedBy::AllVerified => "all_verified",
            EndedBy::DeclaredComplete => "declared_complete",
            EndedBy::MaxSessions => "max_sessions",
            EndedBy::Error => "error",
            EndedBy::Budget => "budget",
        }
    }
}

/// The per-trial fields of docs/metrics.md.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TrialMetrics {
    /// Canonical features verified at the end.
    pub features_verified: u32,
    /// Canonical features of the task.
    pub features_total: u32,
    /// Sessions run, the initializer included.
    pub sessions: u32,
    /// Why the trial stopped.
    pub ended_by: EndedBy,
    /// The agent declared the project complete while some feature was not verified.
    pub premature_victory: bool,
    /// Canonical ids in none of the lists the sessions left; null when none parsed.
    #[serde(default)]
    pub plan_omissions: Option<u32>,
    /// Input plus output tokens of the trial's sessions; null when none reported usage.
    #[serde(default)]
    pub tokens: Option<u64>,
}

/// Which canonical ids the lists that a trial's sessions left have named, for
/// `plan_omissions`. The list the harness rendered before the first session is not
/// shown to it.
#[derive(Debug, Clone, Default)]
pub struct PlanCoverage {
    parsed: bool,
    seen: BTreeSet<String>,
}

impl PlanCoverage {
    /// Takes in the observation after a session, as the agent left it.
    pub fn add(&mut self, after: &Observation) {
        if let Some(list) = after.list.parsed() {
            self.parsed = true;
            self.seen.extend(list.ids().map(str::to_string));
        }
    }

    /// Canonical ids (in `canonical` order) on none of the lists; `None` when no list
    /// parsed.
    pub fn omitted<'c>(&self, canonical: impl IntoIterator<Item = &'c str>) -> Option<Vec<String>> {
        self.parsed.then(|| {
            canonical
                .into_iter()
                .filter(|id| !self.seen.contains(*id))
                .map(str::to_string)
                .collect()
        })
    }
}

/// What the trial loop remembers of each session for the per-trial fields.
#[derive(Debug, Clone, Copy)]
pub struct SessionEnd {
    /// How the session ended.
    pub outcome: Outcome,
    /// Every canonical feature was verified after it.
    pub all_verified: bool,
}

/// Computes the per-trial fields from the sessions' ends and the final observation;
/// `budget_spent`: the loop stopped because the trial's budget was used up.
/// `plan_omissions` and `tokens` are left null for the caller to fill in.
pub fn trial_metrics(
    sessions: &[SessionEnd],
    last: &Observation,
    budget_spent: bool,
) -> TrialMetrics {
    let ended_by = match sessions.last() {
        Some(s) if s.outcome == Outcome::Error => EndedBy::Error,
        _ if last.all_verified() => EndedBy::AllVerified,
        Some(s) if s.outcome == Outcome::DeclaredComplete => EndedBy::DeclaredComplete,
        _ if budget_spent => EndedBy::Budget,
        _ => EndedBy::MaxSessions,
    };
    TrialMetrics {
        features_verified: count(last.verified.values().filter(|c| **c == Check::Pass)),
        features_total: count(last.verified.keys()),
        sessions: count(sessions),
        ended_by,
        premature_victory: sessions
            .iter()
            .any(|s| s.outcome == Outcome::DeclaredComplete && !s.all_verified),
        plan_omissions: None,
        tokens: None,
    }
}
