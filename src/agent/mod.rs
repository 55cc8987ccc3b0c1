//! Agent drivers: how a session is executed. Every driver acts on the work directory
//! and reports only how the session ended and what it cost; what it *did* is observed
//! by the harness.

pub mod command;
mod driver;
pub mod factory;
mod failure;
pub mod mock_model;
mod outcome;
pub mod replay;
pub mod sim;
pub mod trace;
pub mod trajectory;

pub use driver::{
    Agent, MAX_COST_USD, MAX_COUNT, SessionContext, SessionKind, SessionRun, Usage, add_counts,
};
pub use failure::{Failure, FailureKind, classify_error_message, short as short_reason};
pub use outcome::Outcome;
