//! Harbor's `task.toml`, every key of its schema (up to 1.4, `[[steps]]` from 1.1)
//! with the spelling Harbor reads. A key Harbor does not know is refused at its line,
//! as in loopbench's own files; the parts loopbench does not run are kept as raw
//! values with their place, so that `validate` can name them.

use std::collections::BTreeMap;

use serde::Deserialize;
use toml::Spanned;

/// A value loopbench keeps only to say where it stands.
pub(super) type Noted = Option<Spanned<toml::Value>>;

/// The whole file. (Some keys are read only so that Harbor's files are accepted as
/// written: loopbench has no use for a schema version, metadata or a source.)
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct HarborFile {
    pub schema_version: Option<String>,
    /// The name of `schema_version` before 1.1.
    pub version: Option<String>,
    pub task: Option<PackageFile>,
    #[serde(default)]
    pub metadata: toml::Table,
    #[serde(default)]
    pub verifier: VerifierFile,
    #[serde(default)]
    pub agent: AgentFile,
    pub environment: Option<Spanned<EnvironmentFile>>,
    #[serde(default)]
    pub solution: SolutionFile,
    pub source: Option<String>,
    pub multi_step_reward_strategy: Noted,
    pub steps: Option<Vec<StepFile>>,
    pub artifacts: Noted,
}

/// `[task]`: the package's name and description.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct PackageFile {
    pub name: Spanned<String>,
    pub version: Option<String>,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub authors: Vec<toml::Value>,
    #[serde(default)]
    pub keywords: Vec<String>,
}

/// `[verifier]`, and a step's `[steps.verifier]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct VerifierFile {
    pub timeout_sec: Option<Spanned<f64>>,
    pub env: Option<Spanned<BTreeMap<String, String>>>,
    pub user: Noted,
    pub environment_mode: Noted,
    pub environment: Noted,
    pub continuous: Noted,
    pub collect: Noted,
    pub network_mode: Option<Spanned<String>>,
    pub allowed_hosts: Noted,
}

/// `[agent]`, and a step's `[steps.agent]`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AgentFile {
    pub timeout_sec: Noted,
    pub user: Noted,
    pub network_mode: Option<Spanned<String>>,
    pub allowed_hosts: Noted,
}

/// `[environment]`.
#[allow(dead_code)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EnvironmentFile {
    pub build_timeout_sec: Option<f64>,
    pub docker_image: Option<Spanned<String>>,
    pub os: Option<Spanned<String>>,
    pub cpus: Option<Spanned<f64>>,
    pub memory_mb: Option<Spanned<u64>>,
    pub storage_mb: Noted,
    pub gpus: Noted,
    pub gpu_types: Noted,
    pub tpu: Noted,
    pub mcp_servers: Noted,
    pub env: Option<Spanned<BTreeMap<String, String>>>,
    pub skills_dir: Noted,
    pub healthcheck: Noted,
    pub workdir: Option<Spanned<String>>,
    pub allow_internet: Option<Spanned<bool>>,
    pub network_mode: Option<Spanned<String>>,
    pub allowed_hosts: Noted,
    /// Earlier spellings of `memory_mb` and `storage_mb` ("2G").
    pub memory: Noted,
    pub storage: Noted,
}

/// `[solution]`: the environment of every `solve.sh`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct SolutionFile {
    pub env: Option<Spanned<BTreeMap<String, String>>>,
}

/// One `[[steps]]` entry.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct StepFile {
    pub name: Spanned<String>,
    #[serde(default)]
    pub agent: AgentFile,
    #[serde(default)]
    pub verifier: VerifierFile,
    pub min_reward: Noted,
    pub healthcheck: Noted,
    pub artifacts: Noted,
}
