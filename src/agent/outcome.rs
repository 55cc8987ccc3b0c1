//! How a session ended, as its driver tells the trial loop.

use serde::{Deserialize, Serialize};

/// How a session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The session finished its work normally.
    Completed,
    /// The agent said the whole project is done.
    DeclaredComplete,
    /// The session used its turn budget.
    OutOfBudget,
    /// The session was cut off (a crash); the next one is `resumed`.
    Interrupted,
    /// The harness killed the agent at its time limit.
    Timeout,
    /// The session could not run or broke a rule of the harness.
    Error,
}

impl Outcome {
    /// Every outcome, in the order of the contract.
    pub const ALL: [Outcome; 6] = [
        Outcome::Completed,
        Outcome::DeclaredComplete,
        Outcome::OutOfBudget,
        Outcome::Interrupted,
        Outcome::Timeout,
        Outcome::Error,
    ];

    /// The name used in records and traces.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::DeclaredComplete => "declared_complete",
            Outcome::OutOfBudget => "out_of_budget",
            Outcome::Interrupted => "interrupted",
            Outcome::Timeout => "timeout",
            Outcome::Error => "error",
        }
    }
}
