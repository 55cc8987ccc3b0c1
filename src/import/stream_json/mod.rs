//! `loopbench import stream-json`: captured stdout of `claude -p --output-format
//! stream-json` ([`import`]), read with Claude Code's blocks and tool mapping
//! ([`super::claude_code`]).

mod import;

pub use import::{IMPORTER, import};
