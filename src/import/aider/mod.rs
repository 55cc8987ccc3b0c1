//! `loopbench import aider`: aider chat histories (`.aider.chat.history.md`) → a trace.
//! The file is split into sessions and into what the user, the model and aider wrote
//! ([`history`]); the model's edit blocks are read as aider reads them ([`blocks`])
//! and applied as aider applies them where the importer knows the file ([`replace`]);
//! [`map`] keeps what aider confirmed and turns it into trace actions with the rules
//! every importer shares ([`super::emit`]).

pub mod blocks;
pub mod history;
mod import;
pub mod map;
pub mod replace;

pub use import::{IMPORTER, import};
