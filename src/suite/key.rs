//! The identity of a trial: one (arm, task, replicate) of a plan.

use serde::{Deserialize, Serialize};

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
