//! Metric definitions: every per-session and per-trial figure, computed only from what
//! the harness observed before and after a session (never from what the agent said
//! about its work), and the table of rates the reports are made of.

mod changes;
mod evidence;
mod session;
mod status;
mod trial;

pub use changes::observed_changes;
pub use evidence::{DescEdit, Evidence, FailedCheck, TestsRemoved, session_evidence};
pub use session::{SessionMetrics, session_metrics, session_metrics_with_evidence};
pub use status::{ExitCheck, contract_changed, exit_check, in_progress_ids};
pub use trial::{EndedBy, PlanCoverage, SessionEnd, TrialMetrics, trial_metrics};

/// The length of a list of ids as a count field.
pub fn count_of<T>(items: &[T]) -> u32 {
    u32::try_from(items.len()).unwrap_or(u32::MAX)
}
