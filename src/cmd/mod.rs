//! One module per subcommand: each turns arguments into engine calls and reporters.

pub mod compare;
pub mod power;
pub mod replay;
pub mod report;
pub mod weekly;
