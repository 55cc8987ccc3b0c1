//! Metric definitions: every per-session and per-trial figure, computed only from what
//! the harness observed before and after a session (never from what the agent said
//! about its work), and the table of rates the reports are made of.

mod evidence;
mod session;
mod trial;

pub use crate::agent::Outcome;
pub use crate::rates::{Better, FEATURES_VERIFIED, Metric, RateDef, Tally, Unit, rates_markdown};
pub use evidence::{DescEdit, Evidence, FailedCheck, TestsRemoved, session_evidence};
pub use session::{SessionMetrics, session_metrics, session_metrics_with_evidence};
pub use trial::{EndedBy, SessionEnd, TrialMetrics, trial_metrics};
