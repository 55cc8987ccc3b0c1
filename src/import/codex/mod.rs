//! `loopbench import codex`: Codex CLI sessions → a trace. Rollout files
//! ([`rollout`], `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, one session a file) and
//! `codex exec --json` captures ([`exec_json`]) are read into one model of a session
//! ([`session`]): its shell calls, patches ([`patch`], in `apply_patch`'s own grammar),
//! what became of each ([`outcome`]), its usage and how it ended; [`map`] turns that
//! into trace actions with the rules every importer shares ([`super::emit`]).

mod command;
pub mod exec_json;
mod import;
pub mod line_kind;
pub mod map;
pub mod outcome;
pub mod patch;
pub mod rollout;
pub mod session;
mod tokens;
pub mod tool;

pub use import::{IMPORTER, import};
