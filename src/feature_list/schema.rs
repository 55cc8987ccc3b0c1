//! The two list schemas (a `passes` boolean per entry, or a `status` state per entry with a
//! goal contract at the top), the six states, and the contract itself.

use std::fmt;
use std::str::FromStr;

/// What a feature list holds per entry, as an arm chooses it (`list_schema`).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum ListSchema {
    /// Each entry carries `passes`, a boolean; there is no contract in the file.
    #[default]
    Passes,
    /// Each entry carries a [`Status`] and `notes`; the file starts with the goal contract.
    Status,
}

impl ListSchema {
    /// Every schema, in a fixed order.
    pub const ALL: [ListSchema; 2] = [ListSchema::Passes, ListSchema::Status];

    /// The lowercase name of the schema, as accepted by [`FromStr`] and used by serde.
    pub fn as_str(self) -> &'static str {
        match self {
            ListSchema::Passes => "passes",
            ListSchema::Status => "status",
        }
    }
}

impl FromStr for ListSchema {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "passes" => Ok(ListSchema::Passes),
            "status" => Ok(ListSchema::Status),
            _ => Err(format!(
                "unknown feature list schema {s:?}: expected one of passes, status"
            )),
        }
    }
}

impl fmt::Display for ListSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The state of one entry under the status schema.
///
/// Only [`Status::Completed`] is a claim that the feature is done; the other five are
/// stages of work that metrics treat alike as "not claimed".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Cannot go on without outside help (with the gate ledger: three failed attempts).
    Blocked,
    /// Done as far as the worker can tell, waiting for someone to check it.
    NeedsReview,
    /// Done: the claim that the feature works.
    Completed,
    /// Tried and given up on.
    Failed,
}

impl Status {
    /// Every state, in the order the schema lists them.
    pub const ALL: [Status; 6] = [
        Status::Pending,
        Status::InProgress,
        Status::Blocked,
        Status::NeedsReview,
        Status::Completed,
        Status::Failed,
    ];

    /// The snake_case word for the state, as written in every format.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::InProgress => "in_progress",
            Status::Blocked => "blocked",
            Status::NeedsReview => "needs_review",
            Status::Completed => "completed",
            Status::Failed => "failed",
        }
    }

    /// Whether the state claims the feature is done (only `completed` does).
    pub fn is_done(self) -> bool {
        self == Status::Completed
    }
}

/// The accepted words, for error messages.
const STATUS_EXPECTED: &str =
    "expected one of pending, in_progress, blocked, needs_review, completed, failed";

impl FromStr for Status {
    type Err = String;

    /// Reads a state word; surrounding whitespace and ASCII case are ignored, as they are
    /// for `passes` strings, but the spelling is not (`in-progress` is refused).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let word = s.trim().to_ascii_lowercase();
        Status::ALL
            .into_iter()
            .find(|state| state.as_str() == word)
            .ok_or_else(|| format!("unknown status {s:?}: {STATUS_EXPECTED}"))
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The goal contract a status-schema list starts with; empty under the passes schema.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Contract {
    /// What the whole task is for, in one line.
    pub goal: String,
    /// What done means for the whole task.
    pub acceptance: Vec<String>,
    /// Actions that are never allowed.
    pub forbidden: Vec<String>,
}

impl Contract {
    /// Whether the contract says nothing at all.
    pub fn is_empty(&self) -> bool {
        self.goal.is_empty() && self.acceptance.is_empty() && self.forbidden.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_round_trip_through_from_str_and_serde() {
        for schema in ListSchema::ALL {
            assert_eq!(schema.as_str().parse::<ListSchema>(), Ok(schema));
            let json = serde_json::to_string(&schema).unwrap_or_default();
            assert_eq!(json, format!("\"{schema}\""));
        }
        assert_eq!(" STATUS ".parse::<ListSchema>(), Ok(ListSchema::Status));
        assert_eq!(ListSchema::default(), ListSchema::Passes);
    }

    #[test]
    fn an_unknown_schema_name_is_refused_with_the_expected_values() {
        let err = "state".parse::<ListSchema>().err().unwrap_or_default();
        assert!(err.contains("passes") && err.contains("status") && err.contains("state"));
    }

    #[test]
    fn status_words_are_snake_case_in_serde_display_and_from_str() {
        let words: Vec<String> = Status::ALL.iter().map(|s| s.to_string()).collect();
        assert_eq!(
            words,
            [
                "pending",
                "in_progress",
                "blocked",
                "needs_review",
                "completed",
                "failed"
            ]
        );
        for state in Status::ALL {
            let json = serde_json::to_string(&state).unwrap_or_default();
            assert_eq!(json, format!("\"{state}\""));
            assert_eq!(state.as_str().parse::<Status>(), Ok(state));
        }
    }

    #[test]
    fn status_words_ignore_case_and_outer_whitespace_but_not_spelling() {
        assert_eq!(" In_Progress\t".parse::<Status>(), Ok(Status::InProgress));
        for word in ["in-progress", "in progress", "done", "", "complete"] {
            let err = word.parse::<Status>().err().unwrap_or_default();
            assert!(err.contains("needs_review"), "{word:?}: {err}");
        }
    }

    #[test]
    fn only_completed_is_done() {
        let done: Vec<Status> = Status::ALL.into_iter().filter(|s| s.is_done()).collect();
        assert_eq!(done, [Status::Completed]);
    }

    #[test]
    fn a_default_contract_is_empty() {
        assert!(Contract::default().is_empty());
        let goal_only = Contract {
            goal: "x".into(),
            ..Contract::default()
        };
        assert!(!goal_only.is_empty());
    }
}
