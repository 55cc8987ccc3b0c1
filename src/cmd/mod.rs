//! One module per subcommand: each turns arguments into engine calls and reporters.

pub mod replay;
pub mod run;
pub mod sim_agent;
pub mod validate;
