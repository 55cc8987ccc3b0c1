//! Experiment definitions: tasks (and, later, suites of arms).

mod task;
mod toml_error;

pub use task::{Feature, Task, TestDiscovery};
pub use toml_error::{config_error, from_toml, line_column};
