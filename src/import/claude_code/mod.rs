//! `loopbench import claude-code`: Claude Code's session files ([`import`]), and what
//! its other transcript form, stream-json, shares with them: how content blocks are
//! read ([`blocks`]) and how Claude Code's tool calls become actions, with the rule that
//! marks a session `divergent` ([`mapping`]).

pub mod blocks;
mod import;
pub mod mapping;

pub use import::{IMPORTER, import};
