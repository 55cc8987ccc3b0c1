//! The sim agent's ground truth: every deliberate act of one session, counted the way
//! the observers count them, so that a test can compare the two exactly.

use serde::{Deserialize, Serialize};

/// What one session did on purpose.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
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
}
