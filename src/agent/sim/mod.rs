//! The simulated agent (DESIGN §7): a seeded, in-process model of a coding agent that
//! acts only through real file edits, and writes down what it did on purpose.

mod acts;
mod agent;
mod profile;
mod truth;

pub use agent::{SimAgent, SimMemory};
pub use profile::{FormatParams, Profile};
pub use truth::Truth;
