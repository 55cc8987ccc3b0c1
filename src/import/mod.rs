//! Importers: foreign agent transcripts → loopbench traces, so that real
//! agent runs are scored by replaying what they did to the files.
//!
//! Each format is one [`importer::Importer`] in a folder of its own (`claude_code`,
//! `stream_json`, `codex`, `aider`, `atif`), listed in one table ([`format::IMPORTERS`]) from
//! which the command line, detection ([`detect`]) and the docs' list are made. What every
//! importer shares: what an import produces and how transcript files are read
//! ([`session`]), how actions are written with the rules every importer follows
//! ([`emit`]), how paths and commands are made relative to the work directory
//! ([`paths`]), and the counts of what became of the calls ([`tally`]).

pub mod aider;
pub mod atif;
pub mod claude_code;
pub mod codex;
pub mod detect;
pub mod emit;
pub mod format;
pub mod importer;
pub mod paths;
mod session;
pub mod stream_json;
pub mod tally;

pub use session::{Imported, ImportedSession};
pub use tally::{SkipReason, Tally};
