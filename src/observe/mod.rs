//! Observation: what the harness measures in a work directory before and after each
//! session. Observing never changes the work directory.

mod snapshot;
mod verify;

pub use snapshot::{ListState, Observation, Observer, PROGRESS_FILE};
pub use verify::{Check, VerifyCache};
