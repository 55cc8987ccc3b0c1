//! One module per subcommand: each parses its arguments, calls a study, the engine or
//! a reporter, and prints the outcome (what several print alike is in `output.rs`).

pub mod args;
pub mod check_task;
pub mod compare;
pub mod examples;
pub mod export;
pub mod import;
pub mod merge;
pub mod mock_model;
mod output;
pub mod power;
pub mod replay;
pub mod report;
pub mod resume;
pub mod run;
pub mod shell;
pub mod show;
pub mod sim_agent;
pub mod usage;
pub mod validate;
pub mod weekly;
