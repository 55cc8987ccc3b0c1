//! `suite.toml`: one experiment — its tasks, agents, arms, replicates and seed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::arm::{Arm, ArmFile, build_arms};
use super::setting::setting;
use super::task::{Task, is_simple_name};
use super::toml_error::{config_error, from_toml};
use crate::error::{Error, IoContext, Result};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuiteFile {
    name: Spanned<String>,
    seed: u64,
    replicates: Spanned<u32>,
    tasks: Vec<Spanned<String>>,
    baseline: Option<Spanned<String>>,
    #[serde(default)]
    agents: BTreeMap<String, Spanned<AgentFile>>,
    #[serde(rename = "arm", default)]
    arms: Vec<ArmFile>,
    /// Cache verify results by tree hash (off when checks read outside the tree).
    #[serde(default = "default_true")]
    verify_cache: bool,
    /// Run each verify this many times to detect flaky checks (bypasses the cache).
    #[serde(default = "default_one")]
    verify_repeats: Spanned<u32>,
    /// Smallest difference in a rate the suite wants to detect (`run` warns when the
    /// sessions per arm are too few).
    min_detectable_effect: Option<Spanned<f64>>,
    /// `"bwrap"`: run every arm's verify commands under bubblewrap, even for agents
    /// that are not sandboxed themselves (a sandboxed agent's always are).
    verify_sandbox: Option<SandboxMode>,
    /// Run in looks and stop arms early when the answer is known.
    sequential: Option<Spanned<SequentialFile>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SequentialFile {
    metric: Spanned<String>,
    look_every: Spanned<u32>,
    max_replicates: Spanned<u32>,
    #[serde(default = "default_alpha")]
    alpha: Spanned<f64>,
}

fn default_alpha() -> Spanned<f64> {
    Spanned::new(0..0, 0.05)
}

/// A suite's `[sequential]` table: the run proceeds in looks of `look_every` replicates
/// per (arm, task); after each, every arm still running is compared with the baseline
/// on `metric`, and an arm that crossed its group-sequential boundary gets no more
/// trials.
#[derive(Debug, Clone, PartialEq)]
pub struct Sequential {
    /// The rate metric judged at each look.
    pub metric: crate::rates::Metric,
    /// Replicates per (arm, task) between looks.
    pub look_every: u32,
    /// Replicates per (arm, task) at the last look.
    pub max_replicates: u32,
    /// Two-sided significance level.
    pub alpha: f64,
}

fn default_true() -> bool {
    true
}

fn default_one() -> Spanned<u32> {
    Spanned::new(0..0, 1)
}

/// Default `crash_window` of a command agent: a typical session's length, so that a
/// crash lands inside sessions that are much shorter than their timeout.
pub const DEFAULT_CRASH_WINDOW: Duration = Duration::from_secs(10 * 60);

/// Default `capture_limit` of a command agent: what is kept of each of its stdout and
/// stderr per session. Enough for any transcript worth reading, small enough that a
/// runaway agent cannot fill the disk or the harness's memory.
pub const DEFAULT_CAPTURE_LIMIT: u64 = 64 * 1024 * 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AgentFile {
    driver: DriverKind,
    profile: Option<Spanned<String>>,
    program: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    timeout: Option<Spanned<String>>,
    sandbox: Option<SandboxMode>,
    sandbox_network: Option<Spanned<bool>>,
    sandbox_writable: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    crash: Option<CrashMode>,
    crash_window: Option<Spanned<String>>,
    /// A size like "64MiB" or a number of bytes.
    capture_limit: Option<Spanned<toml::Value>>,
    /// `{ scenario = "..." }`: run the CLI against the scripted model server.
    model_server: Option<Spanned<ModelServerFile>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelServerFile {
    scenario: String,
}

setting! {
    /// How the harness crashes a command agent's session (`crash_rate`).
    pub enum CrashMode ("crash") {
        /// SIGKILL to the agent's process group at a random moment of the session.
        Kill = "kill",
        /// The harness only tells the agent (`LOOPBENCH_INTERRUPT_AT`); the agent cuts its
        /// own session short and reports `interrupted`. For deterministic model agents such
        /// as `loopbench sim-agent`.
        Agent = "agent",
    }
}

setting! {
    /// The `driver` of an agent.
    enum DriverKind ("driver") {
        /// The built-in simulated agent.
        Sim = "sim",
        /// Any agent CLI.
        Command = "command",
    }
}

setting! {
    /// `sandbox` of a command agent and the suite's `verify_sandbox`.
    enum SandboxMode ("sandbox") {
        /// bubblewrap: read-only system, writable work directory, no network.
        Bwrap = "bwrap",
        /// No sandbox.
        None = "none",
    }
}

/// How sessions of an agent are executed.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentDriver {
    /// The built-in simulated agent with a named behaviour profile.
    Sim {
        /// Profile name (see `agent::sim`).
        profile: String,
    },
    /// Any agent CLI: the prompt on stdin, the work directory as cwd.
    Command {
        /// Program to run.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Per-session time limit.
        timeout: Duration,
        /// The bubblewrap sandbox, or none.
        sandbox: Option<Sandbox>,
        /// Extra environment.
        env: BTreeMap<String, String>,
        /// How a crash is injected.
        crash: CrashMode,
        /// The span of a session a killed crash falls in: the moment is
        /// `interrupt_at × min(timeout, crash_window)`.
        crash_window: Duration,
        /// Bytes kept of each of stdout and stderr per session.
        capture_limit: u64,
        /// The scripted model server the CLI is pointed at, when the agent names one.
        model_server: Option<ModelServer>,
    },
}

/// `model_server = { scenario = "..." }` of a command agent: each session runs under
/// `loopbench mock-model`, which serves the scenario's session to the CLI on
/// 127.0.0.1 inside the agent's own network namespace (the sandbox's, under bwrap).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelServer {
    /// The scenario file (absolute; written relative to the suite directory).
    pub scenario: PathBuf,
}

/// `sandbox = "bwrap"` of a command agent. A real agent CLI needs its API
/// (`sandbox_network = true`) and usually a writable config directory such as
/// `~/.claude` (`sandbox_writable`); the oracle and the run directory stay hidden either way.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sandbox {
    /// Share the host's network (bwrap `--share-net`).
    pub network: bool,
    /// Directories outside the work directory the agent may write (`~` is `$HOME`).
    pub writable: Vec<PathBuf>,
}

impl AgentDriver {
    /// The driver's name as written in `suite.toml`.
    pub fn name(&self) -> &'static str {
        match self {
            AgentDriver::Sim { .. } => "sim",
            AgentDriver::Command { .. } => "command",
        }
    }
}

/// A loaded, validated suite.
#[derive(Debug, Clone)]
pub struct Suite {
    /// Directory holding `suite.toml`.
    pub dir: PathBuf,
    /// Suite name (results go to `results/<name>/`).
    pub name: String,
    /// Every random choice derives from it.
    pub seed: u64,
    /// Trials per (arm, task).
    pub replicates: u32,
    /// Tasks in suite order.
    pub tasks: Vec<Task>,
    /// The arm others are compared with.
    pub baseline: String,
    /// Agents by name.
    pub agents: BTreeMap<String, AgentDriver>,
    /// Arms in suite order.
    pub arms: Vec<Arm>,
    /// Cache verify results by tree hash.
    pub verify_cache: bool,
    /// Runs of each verify per observation (more than one detects flakiness).
    pub verify_repeats: u32,
    /// Smallest rate difference the suite wants to detect.
    pub min_detectable_effect: Option<f64>,
    /// `verify_sandbox = "bwrap"`: every arm's verify commands run under bubblewrap.
    pub verify_sandbox: bool,
    /// `[sequential]`: run in looks, stopping arms early.
    pub sequential: Option<Sequential>,
    /// Prompt templates (`prompts/initializer.md`, `prompts/coding.md`), if present.
    pub prompts: Prompts,
    /// blake3 over suite.toml, prompts and every task file.
    pub content_hash: String,
}

/// Prompt templates of a suite.
#[derive(Debug, Clone, Default)]
pub struct Prompts {
    /// Template of session 0 of arms with an initializer.
    pub initializer: Option<String>,
    /// Template of every coding session.
    pub coding: Option<String>,
}

impl Suite {
    /// Loads `dir/suite.toml` (or the file itself) with its tasks, and validates it.
    pub fn load(path: &Path) -> Result<Suite> {
        let (dir, file) = suite_file_of(path)?;
        let text = std::fs::read_to_string(&file).map_err(|e| {
            Error::BadInput(format!("cannot read suite file '{}': {e}", file.display()))
        })?;
        let raw: SuiteFile = toml::from_str(&text).map_err(|e| from_toml(&file, &text, &e))?;
        let err =
            |span: std::ops::Range<usize>, msg: String| config_error(&file, &text, Some(span), msg);

        let name = raw.name.get_ref().clone();
        if !is_simple_name(&name) {
            return Err(err(
                raw.name.span(),
                format!(
                    "suite name '{name}' must be ASCII letters, digits, '_', '.' or '-', and not '.' or '..'"
                ),
            ));
        }
        if *raw.replicates.get_ref() == 0 {
            return Err(err(
                raw.replicates.span(),
                "replicates must be at least 1".into(),
            ));
        }
        if raw.tasks.is_empty() {
            return Err(config_error(
                &file,
                &text,
                None,
                "tasks: list at least one task directory",
            ));
        }
        let tasks = load_tasks(&raw.tasks, &dir, &err)?;

        let mut agents = BTreeMap::new();
        for (agent_name, spec) in &raw.agents {
            agents.insert(
                agent_name.clone(),
                agent_driver(&dir, agent_name, spec, &err)?,
            );
        }

        if raw.arms.is_empty() {
            return Err(config_error(
                &file,
                &text,
                None,
                "a suite needs at least one [[arm]] table",
            ));
        }
        let arms = build_arms(&raw.arms, &agents, &dir, &err)?;
        let baseline = match &raw.baseline {
            Some(b) => {
                if !arms.iter().any(|a| &a.name == b.get_ref()) {
                    return Err(err(
                        b.span(),
                        format!("baseline '{}' is not an arm of this suite", b.get_ref()),
                    ));
                }
                b.get_ref().clone()
            }
            None => arms[0].name.clone(),
        };
        if *raw.verify_repeats.get_ref() == 0 {
            return Err(err(
                raw.verify_repeats.span(),
                "verify_repeats must be at least 1".into(),
            ));
        }
        let min_detectable_effect = match &raw.min_detectable_effect {
            Some(m) if !(*m.get_ref() > 0.0 && *m.get_ref() < 1.0) => {
                return Err(err(
                    m.span(),
                    "min_detectable_effect must be in (0, 1)".into(),
                ));
            }
            other => other.as_ref().map(|m| *m.get_ref()),
        };

        let verify_sandbox = raw.verify_sandbox == Some(SandboxMode::Bwrap);

        let sequential = match &raw.sequential {
            None => None,
            Some(table) => Some(sequential(table, &err)?),
        };
        let prompts = read_prompts(&dir)?;
        let scenarios: Vec<&Path> = agents
            .values()
            .filter_map(|a| match a {
                AgentDriver::Command {
                    model_server: Some(m),
                    ..
                } => Some(m.scenario.as_path()),
                _ => None,
            })
            .collect();
        let content_hash = content_hash(&file, &dir, &tasks, &arms, &scenarios)?;

        Ok(Suite {
            dir,
            name,
            seed: raw.seed,
            replicates: *raw.replicates.get_ref(),
            tasks,
            baseline,
            agents,
            arms,
            verify_cache: raw.verify_cache,
            verify_repeats: *raw.verify_repeats.get_ref(),
            min_detectable_effect,
            verify_sandbox,
            sequential,
            prompts,
            content_hash,
        })
    }

    /// The prompt templates of `arm`'s sessions: the arm's own where it names them,
    /// else the suite's.
    pub fn prompts_of(&self, arm: &Arm) -> Prompts {
        Prompts {
            initializer: arm
                .prompts
                .initializer
                .as_ref()
                .map(|p| p.text.clone())
                .or_else(|| self.prompts.initializer.clone()),
            coding: arm
                .prompts
                .coding
                .as_ref()
                .map(|p| p.text.clone())
                .or_else(|| self.prompts.coding.clone()),
        }
    }

    /// The agent an arm uses.
    pub fn agent_of(&self, arm: &Arm) -> &AgentDriver {
        // Validated at load time: every arm names a defined agent.
        &self.agents[&arm.agent]
    }

    /// Whether the verify commands of `arm` run under bubblewrap: the suite asks for
    /// it, or the arm's agent is sandboxed (its tests are its code).
    pub fn verify_sandboxed(&self, arm: &Arm) -> bool {
        self.verify_sandbox
            || matches!(
                self.agent_of(arm),
                AgentDriver::Command {
                    sandbox: Some(_),
                    ..
                }
            )
    }

    /// What loading found questionable in the suite's tasks, one sentence each (see
    /// [`Task::warnings`]).
    pub fn warnings(&self) -> impl Iterator<Item = &str> {
        self.tasks
            .iter()
            .flat_map(|t| t.warnings().iter().map(String::as_str))
    }
}

/// The directory of a suite and its `suite.toml`, from the path the user gave (either).
fn suite_file_of(path: &Path) -> Result<(PathBuf, PathBuf)> {
    let found = if path.is_dir() {
        (path.to_path_buf(), path.join("suite.toml"))
    } else if path.is_file() {
        (
            path.parent().unwrap_or(Path::new(".")).to_path_buf(),
            path.to_path_buf(),
        )
    } else {
        return Err(Error::BadInput(format!(
            "suite '{}' not found: expected a directory holding suite.toml",
            path.display()
        )));
    };
    Ok(found)
}

/// The suite's tasks, each loaded and checked; names must be unique.
fn load_tasks(
    listed: &[Spanned<String>],
    dir: &Path,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<Vec<Task>> {
    let mut tasks = Vec::new();
    for t in listed {
        let task_dir = dir.join(t.get_ref());
        if !task_dir.join("task.toml").is_file() {
            return Err(err(
                t.span(),
                format!(
                    "task '{}' has no task.toml (looked in '{}')",
                    t.get_ref(),
                    task_dir.display()
                ),
            ));
        }
        let task = Task::load(&task_dir)?;
        if tasks.iter().any(|other: &Task| other.name == task.name) {
            return Err(err(
                t.span(),
                format!("two tasks are named '{}'", task.name),
            ));
        }
        tasks.push(task);
    }
    Ok(tasks)
}

/// The `[sequential]` table, checked.
fn sequential(
    table: &Spanned<SequentialFile>,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<Sequential> {
    let t = table.get_ref();
    let metric = crate::rates::Metric::parse(t.metric.get_ref()).ok_or_else(|| {
        err(
            t.metric.span(),
            format!(
                "sequential.metric: unknown metric '{}' (one of: {})",
                t.metric.get_ref(),
                crate::rates::Metric::ALL.map(|m| m.name()).join(", ")
            ),
        )
    })?;
    let (look_every, max_replicates) = (*t.look_every.get_ref(), *t.max_replicates.get_ref());
    if look_every == 0 {
        return Err(err(
            t.look_every.span(),
            "sequential.look_every must be at least 1".into(),
        ));
    }
    if max_replicates < look_every {
        return Err(err(
            t.max_replicates.span(),
            format!(
                "sequential.max_replicates ({max_replicates}) must be at least look_every ({look_every})"
            ),
        ));
    }
    let looks = max_replicates.div_ceil(look_every);
    if looks > 50 {
        return Err(err(
            t.max_replicates.span(),
            format!("sequential: {looks} looks; at most 50 are supported"),
        ));
    }
    let alpha = *t.alpha.get_ref();
    if !(alpha > 0.0 && alpha < 1.0) {
        return Err(err(
            t.alpha.span(),
            format!("sequential.alpha must be in (0, 1), got {alpha}"),
        ));
    }
    Ok(Sequential {
        metric,
        look_every,
        max_replicates,
        alpha,
    })
}

/// `prompts/initializer.md` and `prompts/coding.md` of the suite, when present.
fn read_prompts(dir: &Path) -> Result<Prompts> {
    let read_prompt = |name: &str| -> Result<Option<String>> {
        let p = dir.join("prompts").join(name);
        match std::fs::read_to_string(&p) {
            Ok(t) => Ok(Some(t)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(
                format!("cannot read prompt '{}'", p.display()),
                e,
            )),
        }
    };
    let prompts = Prompts {
        initializer: read_prompt("initializer.md")?,
        coding: read_prompt("coding.md")?,
    };
    Ok(prompts)
}

fn agent_driver(
    suite_dir: &Path,
    name: &str,
    spec: &Spanned<AgentFile>,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<AgentDriver> {
    let a = spec.get_ref();
    let misplaced = |key: &str, driver: &str| {
        err(
            spec.span(),
            format!("agent '{name}': '{key}' does not apply to driver '{driver}'"),
        )
    };
    match a.driver {
        DriverKind::Sim => {
            if a.program.is_some() {
                return Err(misplaced("program", "sim"));
            }
            if a.sandbox.is_some() {
                return Err(misplaced("sandbox", "sim"));
            }
            if a.crash.is_some() {
                return Err(misplaced("crash", "sim"));
            }
            if a.crash_window.is_some() {
                return Err(misplaced("crash_window", "sim"));
            }
            if a.capture_limit.is_some() {
                return Err(misplaced("capture_limit", "sim"));
            }
            if a.model_server.is_some() {
                return Err(misplaced("model_server", "sim"));
            }
            let profile = a
                .profile
                .as_ref()
                .map_or_else(|| "calibrated".to_string(), |p| p.get_ref().clone());
            if !super::sim_profile::Profile::exists(&profile) {
                let span = a.profile.as_ref().map_or(spec.span(), Spanned::span);
                return Err(err(
                    span,
                    format!(
                        "agent '{name}': unknown sim profile '{profile}' (known: {})",
                        super::sim_profile::Profile::names().join(", ")
                    ),
                ));
            }
            Ok(AgentDriver::Sim { profile })
        }
        DriverKind::Command => {
            if a.profile.is_some() {
                return Err(misplaced("profile", "command"));
            }
            let Some(program) = a.program.clone() else {
                return Err(err(
                    spec.span(),
                    format!("agent '{name}': driver 'command' needs 'program'"),
                ));
            };
            let timeout = match &a.timeout {
                None => Duration::from_secs(30 * 60),
                Some(t) => humantime::parse_duration(t.get_ref()).map_err(|e| {
                    err(
                        t.span(),
                        format!("agent '{name}': timeout: expected a duration like \"30m\": {e}"),
                    )
                })?,
            };
            let bwrap = a.sandbox == Some(SandboxMode::Bwrap);
            if !bwrap {
                let stray = [
                    (
                        "sandbox_network",
                        a.sandbox_network.as_ref().map(Spanned::span),
                    ),
                    (
                        "sandbox_writable",
                        a.sandbox_writable.as_ref().map(Spanned::span),
                    ),
                ];
                if let Some((key, Some(span))) = stray.into_iter().find(|(_, s)| s.is_some()) {
                    return Err(err(
                        span,
                        format!("agent '{name}': {key} needs sandbox = \"bwrap\""),
                    ));
                }
            }
            let sandbox = bwrap.then(|| Sandbox {
                network: a.sandbox_network.as_ref().is_some_and(|n| *n.get_ref()),
                writable: a
                    .sandbox_writable
                    .as_ref()
                    .map(|w| w.get_ref().iter().map(|p| expand_home(p)).collect())
                    .unwrap_or_default(),
            });
            let crash = a.crash.unwrap_or(CrashMode::Kill);
            let crash_window = match &a.crash_window {
                None => DEFAULT_CRASH_WINDOW,
                Some(w) => match humantime::parse_duration(w.get_ref()) {
                    Ok(d) if !d.is_zero() => d,
                    Ok(_) => {
                        return Err(err(
                            w.span(),
                            format!("agent '{name}': crash_window must be longer than zero"),
                        ));
                    }
                    Err(e) => {
                        return Err(err(
                            w.span(),
                            format!(
                                "agent '{name}': crash_window: expected a duration like \"10m\": {e}"
                            ),
                        ));
                    }
                },
            };
            let capture_limit = match &a.capture_limit {
                None => DEFAULT_CAPTURE_LIMIT,
                Some(v) => capture_limit(v.get_ref())
                    .map_err(|e| err(v.span(), format!("agent '{name}': capture_limit: {e}")))?,
            };
            let model_server = match &a.model_server {
                None => None,
                Some(m) => {
                    let scenario = suite_dir.join(&m.get_ref().scenario);
                    if !scenario.is_file() {
                        return Err(err(
                            m.span(),
                            format!(
                                "agent '{name}': model_server: scenario '{}' is not a file",
                                scenario.display()
                            ),
                        ));
                    }
                    let scenario = std::path::absolute(&scenario).unwrap_or(scenario);
                    Some(ModelServer { scenario })
                }
            };
            Ok(AgentDriver::Command {
                program,
                args: a.args.clone(),
                timeout,
                sandbox,
                env: a.env.clone(),
                crash,
                crash_window,
                capture_limit,
                model_server,
            })
        }
    }
}

/// A `capture_limit`: a positive number of bytes, or a string such as "64MiB", "500 KB"
/// or "1GiB" (SI units are powers of 1000, IEC units powers of 1024; any case).
fn capture_limit(value: &toml::Value) -> std::result::Result<u64, String> {
    const EXPECTED: &str = "expected a size like \"64MiB\" or a number of bytes";
    let bytes = match value {
        toml::Value::Integer(n) => u64::try_from(*n).map_err(|_| format!("{EXPECTED}, got {n}"))?,
        toml::Value::String(text) => {
            parse_size(text).ok_or_else(|| format!("{EXPECTED}, got '{text}'"))?
        }
        other => return Err(format!("{EXPECTED}, got {other}")),
    };
    if bytes == 0 {
        return Err("must be at least 1 byte".into());
    }
    Ok(bytes)
}

/// "64MiB" → 67108864; `None` when it is no size.
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().ok()?;
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1000,
        "kib" => 1 << 10,
        "mb" => 1000 * 1000,
        "mib" => 1 << 20,
        "gb" => 1000 * 1000 * 1000,
        "gib" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(factor)
}

/// blake3 over the suite file, its prompts, every file of every task and the model
/// server scenarios, so that a resume against a changed suite can be refused.
fn content_hash(
    file: &Path,
    dir: &Path,
    tasks: &[Task],
    arms: &[Arm],
    scenarios: &[&Path],
) -> Result<String> {
    let mut hasher = blake3::Hasher::new();
    for f in std::iter::once(file).chain(scenarios.iter().copied()) {
        let bytes = std::fs::read(f).io_context(|| format!("cannot read '{}'", f.display()))?;
        hasher.update(&bytes);
    }
    // An arm's templates may lie outside prompts/; what they say is part of the suite.
    for arm in arms {
        let named = [&arm.prompts.initializer, &arm.prompts.coding];
        for prompt in named.into_iter().flatten() {
            hasher.update(prompt.path.as_bytes());
            hasher.update(prompt.text.as_bytes());
        }
    }
    for sub in std::iter::once(dir.join("prompts")).chain(tasks.iter().map(|t| t.dir.clone())) {
        if sub.is_dir() {
            let snapshot = crate::fsutil::TreeSnapshot::read(&sub)?;
            hasher.update(snapshot.hash.as_bytes());
        }
    }
    Ok(hasher.finalize().to_hex().to_string())
}

/// `~` or `~/x` with `$HOME` in front; any other path as it is.
fn expand_home(path: &str) -> PathBuf {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    match (path.strip_prefix('~'), home()) {
        (Some(""), Some(h)) => h,
        (Some(rest), Some(h)) if rest.starts_with('/') => h.join(&rest[1..]),
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_si_and_iec_units_in_any_case() {
        assert_eq!(parse_size("64MiB"), Some(64 << 20));
        assert_eq!(parse_size(" 500 kb "), Some(500_000));
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        assert_eq!(parse_size("2GB"), Some(2_000_000_000));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("10B"), Some(10));
        for bad in ["", "MiB", "1.5MiB", "-1", "12 parsecs", "99999999999999GiB"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_capture_limit_is_a_positive_count_or_a_size() {
        assert_eq!(capture_limit(&toml::Value::Integer(1)), Ok(1));
        assert_eq!(
            capture_limit(&toml::Value::String("1MiB".into())),
            Ok(1 << 20)
        );
        assert!(capture_limit(&toml::Value::Integer(0)).is_err());
        assert!(capture_limit(&toml::Value::Boolean(true)).is_err());
    }
}
