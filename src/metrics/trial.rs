//! The per-trial figures: features verified at the end, sessions, why the trial
//! stopped, and whether the agent declared victory too early.

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
}

impl EndedBy {
    /// The name used in records.
    pub fn as_str(self) -> &'static str {
        match self {
            EndedBy::AllVerified => "all_verified",
            EndedBy::DeclaredComplete => "declared_complete",
            EndedBy::MaxSessions => "max_sessions",
            EndedBy::Error => "error",
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
}

/// What the trial loop remembers of each session for the per-trial fields.
#[derive(Debug, Clone, Copy)]
pub struct SessionEnd {
    /// How the session ended.
    pub outcome: Outcome,
    /// Every canonical feature was verified after it.
    pub all_verified: bool,
}

/// Computes the per-trial fields from the sessions' ends and the final observation.
pub fn trial_metrics(sessions: &[SessionEnd], last: &Observation) -> TrialMetrics {
    let ended_by = match sessions.last() {
        Some(s) if s.outcome == Outcome::Error => EndedBy::Error,
        _ if last.all_verified() => EndedBy::AllVerified,
        Some(s) if s.outcome == Outcome::DeclaredComplete => EndedBy::DeclaredComplete,
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
    }
}
