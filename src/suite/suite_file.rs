//! `suite.toml`: one experiment — its tasks, agents, arms, replicates and seed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use super::agent_table::{AgentDriver, AgentFile, agent_driver};
use super::arm::{Arm, ArmFile, build_arms};
use super::task::{Task, is_simple_name};
use super::toml_error::{KeyAt, config_error, from_toml};
use crate::error::{Error, IoContext, Result, SuiteFileError};

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
    /// A sandbox's name: run every arm's verify commands in it, even for agents
    /// that are not sandboxed themselves (a sandboxed agent's always are, in its own).
    verify_sandbox: Option<crate::sandbox::SandboxKind>,
    /// The container engine the container sandbox uses (`podman` or `docker`); absent:
    /// whichever answers `info`.
    engine: Option<crate::sandbox::container::EngineName>,
    /// Processes one sandboxed session (agent or check) may run at once.
    max_pids: Option<Spanned<u64>>,
    /// Memory one sandboxed session may use: a size like "4GiB" or bytes.
    max_memory: Option<Spanned<toml::Value>>,
    /// Bytes a command agent's HOME (and scripted model log) may hold after a session.
    max_home_bytes: Option<Spanned<toml::Value>>,
    /// Run in looks and stop arms early when the answer is known.
    sequential: Option<Spanned<SequentialFile>>,
    /// Times a trial is started again after a session failed for a cause outside the
    /// agent.
    #[serde(default = "default_infra_retries")]
    infra_retries: u32,
    /// Wait before the first such retry (humantime); it doubles before each further one.
    infra_backoff: Option<Spanned<String>>,
    /// Infrastructure failures in a row, across the run, after which no new trial or
    /// session starts.
    infra_circuit: Option<Spanned<u32>>,
    /// How a session's tree is judged clean: as git says, or also without git-ignored
    /// files a check can read.
    #[serde(default = "default_clean_tree")]
    clean_tree: CleanTree,
}

super::setting::setting! {
    /// `clean_tree` of a suite: what `clean_tree`, the exit check and the harness's
    /// ledger call a clean tree.
    pub enum CleanTree ("clean_tree") {
        /// As `git status` says: the work directory holds the tree of `HEAD` as `git add
        /// -A` takes it, the tree's `.gitignore` files honoured (the harness's own index
        /// and configuration, whatever the agent's say).
        Git = "git",
        /// As `git` and, besides, no git-ignored file that a check could read: work
        /// kept only in ignored files counts as uncommitted.
        Strict = "strict",
    }
}

fn default_clean_tree() -> CleanTree {
    CleanTree::Git
}

fn default_infra_retries() -> u32 {
    InfraPolicy::default().retries
}

/// What the run does about sessions that failed for a cause outside the agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InfraPolicy {
    /// `infra_retries`: times a trial is started again (default 2).
    pub retries: u32,
    /// `infra_backoff`: wait before the first retry, doubling per retry (default 30s).
    pub backoff: std::time::Duration,
    /// `infra_circuit`: infrastructure failures in a row that stop the run (default 5).
    pub circuit: u32,
}

impl Default for InfraPolicy {
    fn default() -> Self {
        InfraPolicy {
            retries: 2,
            backoff: std::time::Duration::from_secs(30),
            circuit: 5,
        }
    }
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

/// A loaded, validated suite.
#[derive(Debug, Clone)]
pub struct Suite {
    /// Directory holding `suite.toml`.
    pub dir: PathBuf,
    /// Suite name (results go to `results/<name>/`).
    pub name: String,
    /// Every random choice derives from it, unless a run says otherwise: private, so
    /// that a suite reads as its file says once loaded (a run's own seed and replicates
    /// are its specification's, never written back here).
    seed: u64,
    /// Trials per (arm, task), unless a run says otherwise.
    replicates: u32,
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
    /// `verify_sandbox`: the sandbox every arm's verify commands run in, at least
    /// (`none` when the suite does not ask).
    pub verify_sandbox: crate::sandbox::SandboxKind,
    /// `engine`: the container engine the suite names, if any.
    pub engine: Option<crate::sandbox::container::EngineName>,
    /// What each session may use (`max_pids`, `max_memory` when sandboxed;
    /// `max_home_bytes` for every command agent).
    pub limits: crate::sandbox::Limits,
    /// `[sequential]`: run in looks, stopping arms early.
    pub sequential: Option<Sequential>,
    /// Retries, backoff and circuit breaker for failures outside the agent.
    pub infra: InfraPolicy,
    /// Prompt templates (`prompts/initializer.md`, `prompts/coding.md`), if present.
    pub prompts: Prompts,
    /// `clean_tree`: how a session's tree is judged clean.
    pub clean_tree: CleanTree,
    /// blake3 over suite.toml, prompts and every task file.
    pub content_hash: String,
    /// The containers of the tasks whose checks run in one, by task name: made ready
    /// before a run starts ([`Suite::prepare_containers`]).
    pub containers: BTreeMap<String, std::sync::Arc<crate::sandbox::container::TaskContainer>>,
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
    /// The seed its file gives (a run's may differ: `run --seed`).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// The replicates per (arm, task) its file gives (a run's may differ:
    /// `run --replicates`, or a sequential suite's `max_replicates`).
    pub fn replicates(&self) -> u32 {
        self.replicates
    }

    /// Loads `dir/suite.toml` (or the file itself) with its tasks, and validates it.
    pub fn load(path: &Path) -> Result<Suite> {
        let (dir, file) = suite_file_of(path)?;
        let text = std::fs::read_to_string(&file).map_err(|e| SuiteFileError::SuiteUnreadable {
            file: file.clone(),
            reason: e.to_string(),
        })?;
        let raw: SuiteFile = toml::from_str(&text).map_err(|e| from_toml(&file, &text, &e))?;
        let err =
            |span: std::ops::Range<usize>, msg: String| config_error(&file, &text, Some(span), msg);
        let at = |span: std::ops::Range<usize>| KeyAt::of(&file, &text, span);

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
                agent_driver(&dir, agent_name, spec, &err, &at)?,
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
        let baseline = baseline_of(raw.baseline.as_ref(), &arms, &err)?;
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

        let verify_sandbox = raw.verify_sandbox.unwrap_or_default();
        let limits = sandbox_limits(&raw, &err)?;

        let sequential = match &raw.sequential {
            None => None,
            Some(table) => Some(sequential(table, &err)?),
        };
        check_plan_sizes(&raw, sequential.as_ref(), arms.len(), tasks.len(), &err)?;
        let infra = infra_policy(&raw, &err)?;
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
            engine: raw.engine,
            limits,
            sequential,
            infra,
            prompts,
            clean_tree: raw.clean_tree,
            content_hash,
            containers: BTreeMap::new(),
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

    /// The names whose values the run must keep out of everything it stores: every
    /// agent's `pass_env` and the harness's variables the tasks took values from
    /// ([`Task::host_variables`]).
    pub fn secret_names(&self) -> Vec<String> {
        let passed = self.agents.values().filter_map(|a| match a {
            AgentDriver::Command { pass_env, .. } => Some(pass_env.iter()),
            AgentDriver::Sim { .. } => None,
        });
        let taken = self.tasks.iter().map(|t| t.host_variables().iter());
        let mut names: Vec<String> = passed.flatten().chain(taken.flatten()).cloned().collect();
        names.sort();
        names.dedup();
        names
    }

    /// The agent an arm uses.
    pub fn agent_of(&self, arm: &Arm) -> &AgentDriver {
        // Validated at load time: every arm names a defined agent.
        &self.agents[&arm.agent]
    }

    /// The one sandbox the verify commands of every arm of `arms` (indices) run in;
    /// `none` when an arm's run on the host (or the arms' sandboxes differ).
    pub fn verify_sandbox_of_arms(&self, arms: &[usize]) -> crate::sandbox::SandboxKind {
        let kinds: std::collections::BTreeSet<_> = arms
            .iter()
            .filter_map(|&i| self.arms.get(i))
            .map(|arm| self.verify_sandbox_of(arm))
            .collect();
        match kinds.into_iter().collect::<Vec<_>>().as_slice() {
            [one] => *one,
            _ => crate::sandbox::SandboxKind::None,
        }
    }

    /// The sandbox the verify commands of `arm` run in: the arm's agent's, when it is
    /// sandboxed (its tests are its code), else the one the suite asks for (`none`
    /// when it asks for none).
    pub fn verify_sandbox_of(&self, arm: &Arm) -> crate::sandbox::SandboxKind {
        match self.agent_of(arm) {
            AgentDriver::Command {
                sandbox: Some(sandbox),
                ..
            } => sandbox.kind,
            _ => self.verify_sandbox,
        }
    }

    /// What loading found questionable in the suite's tasks, one sentence each (see
    /// [`Task::warnings`]).
    pub fn warnings(&self) -> impl Iterator<Item = &str> {
        self.tasks
            .iter()
            .flat_map(|t| t.warnings().iter().map(String::as_str))
    }
}

/// The sandbox's limits on what runs inside it: `max_pids`, `max_memory`,
/// `max_home_bytes`, each its default when not given.
fn sandbox_limits(
    raw: &SuiteFile,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<crate::sandbox::Limits> {
    let mut limits = crate::sandbox::Limits::default();
    if let Some(pids) = &raw.max_pids {
        if *pids.get_ref() == 0 {
            return Err(err(pids.span(), "max_pids must be at least 1".into()));
        }
        limits.max_pids = *pids.get_ref();
    }
    if let Some(memory) = &raw.max_memory {
        limits.max_memory = super::agent_table::capture_limit(memory.get_ref())
            .map_err(|e| err(memory.span(), format!("max_memory: {e}")))?;
    }
    if let Some(home) = &raw.max_home_bytes {
        limits.max_home_bytes = super::agent_table::capture_limit(home.get_ref())
            .map_err(|e| err(home.span(), format!("max_home_bytes: {e}")))?;
    }
    Ok(limits)
}

/// The plan is built in memory before anything runs: refuse one no machine can hold
/// (or finish) here, with the key that sets it, not as an allocation abort.
fn check_plan_sizes(
    raw: &SuiteFile,
    sequential: Option<&Sequential>,
    arms: usize,
    tasks: usize,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<()> {
    let mut sizes = vec![(
        "replicates",
        *raw.replicates.get_ref(),
        raw.replicates.span(),
    )];
    if let (Some(table), Some(seq)) = (&raw.sequential, sequential) {
        let span = table.get_ref().max_replicates.span();
        sizes.push(("sequential.max_replicates", seq.max_replicates, span));
    }
    for (key, replicates, span) in sizes {
        if let Err(message) = check_plan_size(arms, tasks, replicates, key) {
            return Err(err(span, message));
        }
    }
    Ok(())
}

/// What to do about attempts that fail outside the agent: `infra_retries`,
/// `infra_backoff` and `infra_circuit`.
fn infra_policy(
    raw: &SuiteFile,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<InfraPolicy> {
    let mut infra = InfraPolicy {
        retries: raw.infra_retries,
        ..InfraPolicy::default()
    };
    if let Some(b) = &raw.infra_backoff {
        infra.backoff = humantime::parse_duration(b.get_ref()).map_err(|e| {
            err(
                b.span(),
                format!("infra_backoff: expected a duration like \"30s\" or \"0s\": {e}"),
            )
        })?;
    }
    if let Some(c) = &raw.infra_circuit {
        if *c.get_ref() == 0 {
            return Err(err(c.span(), "infra_circuit must be at least 1".into()));
        }
        infra.circuit = *c.get_ref();
    }
    Ok(infra)
}

/// The arm the others are compared with: the one `baseline` names, else the first.
fn baseline_of(
    baseline: Option<&Spanned<String>>,
    arms: &[Arm],
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<String> {
    Ok(match baseline {
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
    })
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
        return Err(SuiteFileError::SuiteNotFound {
            path: path.to_path_buf(),
        }
        .into());
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

/// Most trials one run may plan (arms x tasks x replicates): ten million.
pub const MAX_PLAN_TRIALS: u64 = 10_000_000;

/// Refuses a plan of more than [`MAX_PLAN_TRIALS`] trials, naming `key` (the setting
/// that gives `replicates`) in the message.
pub fn check_plan_size(
    arms: usize,
    tasks: usize,
    replicates: u32,
    key: &str,
) -> std::result::Result<u64, String> {
    let trials = (arms as u64)
        .checked_mul(tasks as u64)
        .and_then(|n| n.checked_mul(u64::from(replicates)));
    match trials {
        Some(n) if n <= MAX_PLAN_TRIALS => Ok(n),
        _ => Err(format!(
            "{key} = {replicates} gives a plan of {} trials ({arms} arms x {tasks} tasks x \
             {replicates} replicates), more than the {MAX_PLAN_TRIALS} one run may hold; \
             lower {key} (or split the study into several suites)",
            trials.map_or_else(|| "too many".to_string(), |n| n.to_string())
        )),
    }
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

/// `prompts/initializer.md` and `prompts/coding.md` of the suite, when present; never
/// a file outside the suite directory (they are handed to the agent).
fn read_prompts(dir: &Path) -> Result<Prompts> {
    let read_prompt = |name: &str| -> Result<Option<String>> {
        let rel = format!("prompts/{name}");
        let p =
            super::confined::inside(dir, &rel).map_err(|why| SuiteFileError::PromptOutside {
                path: dir.join(&rel),
                why: why.to_string(),
            })?;
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
