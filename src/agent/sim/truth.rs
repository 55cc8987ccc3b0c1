//! The sim agent's ground truth: every deliberate act of one session, counted the way
//! the observers count them, so that a test can compare the two exactly.

use serde::{Deserialize, Serialize};

/// What one session did on purpose.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Truth {
    /// The list parsed at the start of the session, so list-based acts are observable.
    pub list_observable: bool,
    /// Entries newly claimed while their feature's check fails.
    pub premature_claims: u32,
    /// Entries whose description was reworded.
    pub desc_edits: u32,
    /// Entries whose steps were changed.
    pub step_edits: u32,
    /// Entries deleted.
    pub entries_removed: u32,
    /// Count-pattern matches lost by deleting test files.
    pub tests_removed: u64,
    /// Features whose test was weakened so that it passes without the feature.
    pub tests_weakened: u32,
    /// Irreversible actions repeated with a key already in the log.
    pub dup_side_effects: u32,
    /// Status schema: entries the sim's list holds `in_progress` when the session ends
    /// (several when it marked a second one while working on another); `None` under
    /// the passes schema or when there is no list.
    pub in_progress: Option<u32>,
    /// Status schema: 1 when the session reworded the goal contract of a list that was
    /// there when it started.
    pub contract_edits: u32,
    /// Coding sessions: the sim knows it left the exit check failing (uncommitted
    /// changes, no notes, or a claim its own tests do not back); `None` for the
    /// initializer.
    pub exit_check_fail: Option<bool>,
    /// The arm reverts failed exit checks and this session failed one.
    pub reverted: bool,
    /// Tokens the session reported using (input plus output).
    pub tokens: u64,
    /// The session used more than the arm's `session_tokens`.
    pub over_budget: bool,
    /// The session wrote a fresh plan (a list where there was none): the canonical ids
    /// it left out, sorted (empty for the initializer's full list).
    pub plan_omitted: Option<Vec<String>>,
}
