//! One module per subcommand: each turns arguments into engine calls and reporters.

pub mod args;
pub mod check_task;
pub mod compare;
mod drive;
pub mod examples;
pub mod import;
pub mod merge;
pub mod mock_model;
pub mod power;
pub mod replay;
pub mod report;
pub mod resume;
pub mod run;
pub mod sequential;
pub mod shell;
pub mod show;
pub mod sim_agent;
pub mod usage;
pub mod validate;
pub mod weekly;
