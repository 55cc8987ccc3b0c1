//! The engine: runs trials and emits events; it never prints. Reporters and the
//! results store consume the events.

mod events;
mod trial;

pub use events::{Event, EventKind, EventSink, Fanout};
pub use trial::{TrialResult, TrialSpec, run_trial, session_env};
