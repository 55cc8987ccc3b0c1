//! Experiment definitions: suites of arms over tasks.

mod agent_table;
mod arm;
mod confined;
mod container_check;
mod container_gold;
mod environment;
mod harbor;
mod key;
mod named_tests;
mod runner_command;
mod runner_entry;
mod setting;
pub mod sim_profile;
mod suite_file;
mod task;
mod task_dir;
mod toml_error;
mod verify_runner;

pub use agent_table::{
    AgentDriver, CrashMode, DEFAULT_CAPTURE_LIMIT, DEFAULT_CRASH_WINDOW, ModelServer, Network,
    Sandbox,
};
pub use arm::{Arm, ArmPrompts, ExitCheck, Ledger, PromptOverride, Strategy};
pub use container_check::{ContainerCheck, TESTS_AT};
pub use container_gold::{ContainerGold, container_gold, has_container_gold};
pub use environment::{DEFAULT_WORKDIR, Environment, Image, refuse_outside_container};
pub use key::TrialKey;
pub use named_tests::{NamedTest, ORACLE_TESTS_AT};
pub use runner_command::{VerifyRunner, import_roots};
pub use runner_entry::through_entry;
pub use suite_file::{
    CleanTree, InfraPolicy, MAX_PLAN_TRIALS, Prompts, Sequential, Suite, check_plan_size,
};
pub use task::{Feature, Task, TestDiscovery, is_simple_name};
pub use toml_error::{KeyAt, config_error, from_toml, line_column};
pub use verify_runner::{Collected, Discovery, RunnerCheck, UNITTEST_PATTERN, unrecognized_runner};
