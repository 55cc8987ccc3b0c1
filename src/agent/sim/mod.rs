//! The simulated agent: a seeded, in-process model of a coding agent that
//! acts only through real file edits, and writes down what it did on purpose.

mod acts;
mod agent;
mod exec;
mod ledger;
mod plan;
pub mod process;
mod truth;

pub use agent::{SimAgent, SimMemory};
pub use truth::Truth;
