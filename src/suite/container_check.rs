//! How a feature of a task that runs in a container is checked, implemented and set
//! up: a script in a fresh container of the task's image, judged by the reward it
//! writes (the reward judge of the observation), never by its exit status alone. Harbor's
//! tasks are read into this; `observe::in_container` runs the check and
//! `container_gold.rs` the gold.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Where a check's tests appear in its container.
pub const TESTS_AT: &str = "/tests";

/// One feature's check, gold and starting files in a container task.
#[derive(Debug, Clone, PartialEq)]
pub struct ContainerCheck {
    /// Directories laid at [`TESTS_AT`], in order, each over the ones before it (the
    /// task's shared tests, then the feature's own).
    pub tests: Vec<PathBuf>,
    /// The script run, relative to [`TESTS_AT`].
    pub script: String,
    /// Added to the check's environment.
    pub env: BTreeMap<String, String>,
    /// Longest time the check may run.
    pub timeout: Duration,
    /// The least reward that passes.
    pub min_reward: f64,
    /// The script that implements the feature (the oracle control and the simulated
    /// agent's gold), where the task has one.
    pub gold: Option<PathBuf>,
    /// Added to the gold's environment (Harbor's `[solution] env`).
    pub gold_env: BTreeMap<String, String>,
    /// Files placed in the work directory before the session that works on the
    /// feature, where the task has them.
    pub workdir: Option<PathBuf>,
}

// A threshold read from a file is finite (checked where it is read), so equality is an
// equivalence and a feature holding one can be `Eq`.
impl Eq for ContainerCheck {}
