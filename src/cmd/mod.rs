//! One module per subcommand: each turns arguments into engine calls and reporters.

pub mod merge;
pub mod replay;
pub mod resume;
pub mod run;
pub mod validate;
