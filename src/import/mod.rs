//! Importers: foreign agent transcripts → loopbench traces, so that real
//! agent runs are scored by replaying what they did to the files.
//!
//! Two Claude Code forms are read: its session files ([`claude_code`]) and the stdout
//! of `claude -p --output-format stream-json` ([`stream_json`]). Both share how content
//! blocks are read ([`blocks`]), how tool calls become actions, including the rule
//! that marks a session `divergent` ([`mapping`]), and how paths and commands are made
//! relative to the work directory ([`paths`]).

pub mod aider;
mod blocks;
pub mod claude_code;
pub mod codex;
pub mod detect;
pub mod emit;
pub mod format;
pub mod mapping;
pub mod paths;
mod session;
pub mod stream_json;
pub mod tally;

pub use session::{Imported, ImportedSession};
pub use tally::{SkipReason, Tally};
