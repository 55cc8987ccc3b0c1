//! The engine: runs trials and emits events; it never prints. Reporters and the
//! results store consume the events.

mod gate;
mod prompt;
mod run;
mod trial;

pub use crate::events::{Event, EventKind, EventSink, Fanout, Notice};
pub use run::{PlannedTrial, RunOptions, Shard, default_jobs, execute, plan};
pub use trial::{TrialResult, TrialSpec, run_trial, session_env};
