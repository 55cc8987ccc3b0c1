//! Observation: what the harness measures in a work directory before and after each
//! session. Observing never changes the work directory.

mod snapshot;
mod verify;

pub use crate::workspace::PROGRESS_FILE;
pub use snapshot::{ListState, Observation, Observer, TREE_STORE};
pub use verify::{Check, Failure, OUTPUT_TAIL_BYTES, VerifyCache};
