//! Experiment definitions: suites of arms over tasks.

mod key;
mod named_tests;
pub mod sim_profile;
mod suite_file;
mod task;
mod toml_error;

pub use key::TrialKey;
pub use named_tests::ORACLE_TESTS_AT;
pub use suite_file::{
    AgentDriver, Arm, CrashMode, DEFAULT_CAPTURE_LIMIT, DEFAULT_CRASH_WINDOW, Ledger, ModelServer,
    Prompts, Sandbox, Sequential, Strategy, Suite,
};
pub use task::{Feature, Task, TestDiscovery, is_simple_name};
pub use toml_error::{config_error, from_toml, line_column};
