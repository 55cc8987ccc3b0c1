//! Harbor's task layout read as a loopbench task, without conversion: `task.toml` with
//! `[task]`, `[environment]`, `[agent]`, `[verifier]` and (schema 1.1 on) `[[steps]]`;
//! `instruction.md`; `environment/Dockerfile`; `tests/test.sh`; `solution/solve.sh`;
//! `steps/<name>/{instruction.md,tests/,solution/,workdir/}`. One feature per step, in
//! order (a task without steps is one feature, `task`), each checked by its
//! `tests/test.sh` in a container and judged by the reward it writes. Nothing outside
//! this module knows Harbor: it sees a [`Task`] with an environment and features whose
//! check is a [`ContainerCheck`].

mod not_run;
mod schema;
mod templates;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use toml::Spanned;

use super::container_check::ContainerCheck;
use super::environment::{self, At, DEFAULT_WORKDIR, Environment, Image};
use super::task::{DEFAULT_MAX_TREE_BYTES, DEFAULT_MAX_TREE_FILES, DEFAULT_OBSERVE_TIMEOUT};
use super::toml_error::from_toml;
use super::{Feature, RunnerCheck, Task, TestDiscovery, is_simple_name};
use crate::error::{Error, IoContext, Result};
use not_run::Notes;
use schema::{HarborFile, Noted, StepFile, VerifierFile};
use templates::HostValues;

/// Harbor's default time limit of a verifier.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(600);
/// The id of the one feature of a task without steps.
const SINGLE_STEP_ID: &str = "task";
/// How a step's check is started, inside its container.
const CHECK_COMMAND: &str = "bash /tests/test.sh";
/// Whether `task.toml` (`text`, in `dir`) is in Harbor's layout rather than
/// loopbench's: none of loopbench's `name`, `goal`, `[tests]`, and one of Harbor's
/// tables or its `instruction.md`.
pub(super) fn is_harbor(dir: &Path, text: &str) -> bool {
    let Ok(table) = text.parse::<toml::Table>() else {
        return false;
    };
    let loopbench = ["name", "goal", "tests", "feature"]
        .iter()
        .any(|k| table.contains_key(*k));
    let harbor = [
        "task",
        "verifier",
        "agent",
        "steps",
        "schema_version",
        "version",
    ]
    .iter()
    .any(|k| table.contains_key(*k))
        || dir.join("instruction.md").is_file();
    !loopbench && harbor
}

/// Reads the Harbor task in `dir` (its `task.toml` is `file`, holding `text`).
pub(super) fn load(dir: PathBuf, file: &Path, text: &str) -> Result<Task> {
    let raw: HarborFile = toml::from_str(text).map_err(|e| from_toml(file, text, &e))?;
    let at = At { file, text };
    let mut notes = Notes::new(file, text);
    notes.parts(&raw, &dir);
    let mut warnings = Vec::new();
    let host = HostValues::default();
    let environment = environment_of(&at, &host, &raw, &dir, &mut warnings)?;
    let top_instruction = read_if_file(&dir.join("instruction.md"))?;
    let features = match raw.steps.as_deref() {
        None | Some([]) => vec![single_step(
            &at,
            &host,
            &raw,
            &dir,
            top_instruction.as_deref(),
        )?],
        Some(steps) => steps_of(&at, &host, &raw, &dir, steps)?,
    };
    for f in &features {
        if f.container.as_ref().is_some_and(|c| c.gold.is_none()) {
            warnings.push(format!(
                "feature '{}' has no solve.sh: check-task's oracle control cannot implement it",
                f.id
            ));
        }
    }
    let goal = goal_of(&at, &raw, top_instruction.as_deref(), &features)?;
    let name = name_of(&at, &raw, &dir)?;
    let verify_timeout = features
        .iter()
        .filter_map(|f| f.container.as_ref().map(|c| c.timeout))
        .max()
        .unwrap_or(DEFAULT_TIMEOUT);
    Ok(Task {
        dir,
        name,
        goal,
        tests: no_tests_in_the_work_directory()?,
        features,
        verify_timeout,
        max_tree_bytes: DEFAULT_MAX_TREE_BYTES,
        max_tree_files: DEFAULT_MAX_TREE_FILES,
        observe_timeout: DEFAULT_OBSERVE_TIMEOUT,
        side_effect_tools: Vec::new(),
        verify_ignores: globset::GlobSet::empty(),
        warnings,
        acceptance: Vec::new(),
        forbidden: Vec::new(),
        environment: Some(Box::new(environment)),
        not_run: notes.not_run,
        host_variables: host.into_names(),
    })
}

/// A Harbor task's tests never lie in the agent's work directory (they appear at
/// `/tests` of the check's container only), so no file of it is a test: a glob and a
/// count pattern that match nothing, and test removal and weakening are not measured.
fn no_tests_in_the_work_directory() -> Result<TestDiscovery> {
    // A relative path never starts with '/', so this glob matches no file of the tree.
    let glob = globset::Glob::new("/")
        .map_err(|e| Error::Tool(format!("glob: {e}")))?
        .compile_matcher();
    let count_pattern =
        regex::Regex::new(r"[^\s\S]").map_err(|e| Error::Tool(format!("regex: {e}")))?;
    Ok(TestDiscovery {
        glob_text: String::new(),
        glob,
        count_pattern,
    })
}

/// The task's name: the part after `/` of `[task] name` ("org/name"), else the
/// directory's name; a simple name either way.
fn name_of(at: &At<'_>, raw: &HarborFile, dir: &Path) -> Result<String> {
    if let Some(task) = &raw.task {
        let full = task.name.get_ref();
        let short = full.rsplit('/').next().unwrap_or(full);
        if !is_simple_name(short) {
            return Err(at.err(
                Some(task.name.span()),
                format!(
                    "task name '{full}': expected \"org/name\" with a name of ASCII letters, \
                     digits, '_', '.' or '-'"
                ),
            ));
        }
        return Ok(short.to_string());
    }
    let dir_name = std::fs::canonicalize(dir)
        .ok()
        .and_then(|d| d.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_default();
    if !is_simple_name(&dir_name) {
        return Err(at.err(
            None,
            format!(
                "a Harbor task without [task] name takes its directory's name, and '{dir_name}' \
                 is not one of ASCII letters, digits, '_', '.' or '-'"
            ),
        ));
    }
    Ok(dir_name)
}

/// The goal: `[task] description`, else the first line of the top-level
/// `instruction.md`, else of the first step's.
fn goal_of(
    at: &At<'_>,
    raw: &HarborFile,
    top: Option<&str>,
    features: &[Feature],
) -> Result<String> {
    let described = raw
        .task
        .as_ref()
        .map(|t| t.description.trim())
        .filter(|d| !d.is_empty());
    let first_line = |text: &str| {
        text.lines()
            .map(|l| l.trim().trim_start_matches('#').trim())
            .find(|l| !l.is_empty())
            .map(str::to_string)
    };
    described
        .map(str::to_string)
        .or_else(|| top.and_then(first_line))
        .or_else(|| features.first().and_then(|f| first_line(&f.description)))
        .ok_or_else(|| {
            at.err(
                None,
                "a Harbor task needs a goal: expected [task] description or a non-empty \
                 instruction.md"
                    .into(),
            )
        })
}

/// The one feature of a task without steps.
fn single_step(
    at: &At<'_>,
    host: &HostValues,
    raw: &HarborFile,
    dir: &Path,
    instruction: Option<&str>,
) -> Result<Feature> {
    let Some(instruction) = instruction.filter(|i| !i.trim().is_empty()) else {
        return Err(at.err(
            None,
            format!(
                "a Harbor task without [[steps]] needs its instruction in '{}'",
                dir.join("instruction.md").display()
            ),
        ));
    };
    let tests = test_dirs(dir, None);
    if !dir.join("tests/test.sh").is_file() {
        return Err(at.err(
            None,
            format!(
                "a Harbor task needs its check in '{}'",
                dir.join("tests/test.sh").display()
            ),
        ));
    }
    Ok(feature(
        SINGLE_STEP_ID,
        instruction,
        None,
        ContainerCheck {
            tests,
            script: "test.sh".into(),
            env: verifier_env(at, host, &raw.verifier, None)?,
            timeout: timeout(at, &raw.verifier, None)?,
            min_reward: 1.0,
            gold: Some(dir.join("solution/solve.sh")).filter(|p| p.is_file()),
            gold_env: solution_env(at, host, raw)?,
            workdir: None,
        },
    ))
}

/// One feature per `[[steps]]` entry, in order, each after the one before it.
fn steps_of(
    at: &At<'_>,
    host: &HostValues,
    raw: &HarborFile,
    dir: &Path,
    steps: &[StepFile],
) -> Result<Vec<Feature>> {
    let mut features: Vec<Feature> = Vec::new();
    for step in steps {
        let id = step.name.get_ref();
        let err = |message: String| at.err(Some(step.name.span()), message);
        if !is_simple_name(id) {
            return Err(err(format!(
                "step name '{id}' must be ASCII letters, digits, '_', '.' or '-'"
            )));
        }
        if features.iter().any(|f| f.id == *id) {
            return Err(err(format!("step '{id}' is defined twice")));
        }
        let step_dir = dir.join("steps").join(id);
        let instruction = read_if_file(&step_dir.join("instruction.md"))?
            .filter(|i| !i.trim().is_empty())
            .ok_or_else(|| {
                err(format!(
                    "step '{id}' has no instruction: expected '{}'",
                    step_dir.join("instruction.md").display()
                ))
            })?;
        let tests = test_dirs(dir, Some(&step_dir));
        if !tests.iter().any(|t| t.join("test.sh").is_file()) {
            return Err(err(format!(
                "step '{id}' has no check: expected '{}' (or the task's tests/test.sh)",
                step_dir.join("tests/test.sh").display()
            )));
        }
        let check = ContainerCheck {
            tests,
            script: "test.sh".into(),
            env: verifier_env(at, host, &raw.verifier, Some(&step.verifier))?,
            timeout: timeout(at, &raw.verifier, Some(&step.verifier))?,
            min_reward: min_reward(at, &step.min_reward)?,
            gold: Some(step_dir.join("solution/solve.sh")).filter(|p| p.is_file()),
            gold_env: solution_env(at, host, raw)?,
            workdir: Some(step_dir.join("workdir")).filter(|p| p.is_dir()),
        };
        let after = features.last().map(|f| f.id.clone());
        features.push(feature(id, &instruction, after, check));
    }
    Ok(features)
}

/// A feature of a Harbor task.
fn feature(id: &str, instruction: &str, after: Option<String>, check: ContainerCheck) -> Feature {
    Feature {
        id: id.to_string(),
        category: "step".into(),
        description: instruction.trim().to_string(),
        steps: Vec::new(),
        verify: CHECK_COMMAND.into(),
        depends_on: after.into_iter().collect(),
        runner: RunnerCheck::EXIT,
        container: Some(check),
    }
}

/// The directories laid at `/tests`: the task's `tests/`, then the step's over it.
fn test_dirs(dir: &Path, step_dir: Option<&Path>) -> Vec<PathBuf> {
    [Some(dir.join("tests")), step_dir.map(|s| s.join("tests"))]
        .into_iter()
        .flatten()
        .filter(|p| p.is_dir())
        .collect()
}

/// The task's verifier `env` with the step's over it.
fn verifier_env(
    at: &At<'_>,
    host: &HostValues,
    task: &VerifierFile,
    step: Option<&VerifierFile>,
) -> Result<BTreeMap<String, String>> {
    let mut env = BTreeMap::new();
    for table in [Some(task), step].into_iter().flatten() {
        if let Some(e) = &table.env {
            env.extend(host.env_table(at, e)?);
        }
    }
    Ok(env)
}

/// `[solution] env`: the environment of every `solve.sh` of the task.
fn solution_env(
    at: &At<'_>,
    host: &HostValues,
    raw: &HarborFile,
) -> Result<BTreeMap<String, String>> {
    match &raw.solution.env {
        Some(e) => host.env_table(at, e),
        None => Ok(BTreeMap::new()),
    }
}

/// The step's verifier `timeout_sec`, else the task's, else Harbor's 600 s.
fn timeout(at: &At<'_>, task: &VerifierFile, step: Option<&VerifierFile>) -> Result<Duration> {
    let Some(t) = step
        .and_then(|s| s.timeout_sec.as_ref())
        .or(task.timeout_sec.as_ref())
    else {
        return Ok(DEFAULT_TIMEOUT);
    };
    Duration::try_from_secs_f64(*t.get_ref())
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| {
            at.err(
                Some(t.span()),
                format!(
                    "timeout_sec must be a number of seconds above 0 (found {})",
                    t.get_ref()
                ),
            )
        })
}

/// A step's `min_reward`: a finite number, default 1. A table of per-key thresholds is
/// named by `validate` as not run and judged as the default here.
fn min_reward(at: &At<'_>, value: &Noted) -> Result<f64> {
    let Some(v) = value else {
        return Ok(1.0);
    };
    match v.get_ref() {
        toml::Value::Table(_) => Ok(1.0),
        other => other
            .as_float()
            .or_else(|| other.as_integer().map(|i| i as f64))
            .filter(|n| n.is_finite())
            .ok_or_else(|| {
                at.err(
                    Some(v.span()),
                    format!("min_reward must be a number, e.g. 1 or 0.5 (found {other})"),
                )
            }),
    }
}

/// The container: `[environment] docker_image`, else `environment/Dockerfile`; its
/// limits, network and `env`.
fn environment_of(
    at: &At<'_>,
    host: &HostValues,
    raw: &HarborFile,
    dir: &Path,
    warnings: &mut Vec<String>,
) -> Result<Environment> {
    let table = raw.environment.as_ref().map(Spanned::get_ref);
    let dockerfile = dir.join("environment/Dockerfile");
    let image = match table.and_then(|e| e.docker_image.clone()) {
        Some(image) => Image::Reference(environment::image_reference(at, image)?),
        None if dockerfile.is_file() => Image::Dockerfile(dockerfile),
        None => {
            return Err(at.err(
                raw.environment.as_ref().map(Spanned::span),
                format!(
                    "a Harbor task needs an image: expected [environment] docker_image or \
                     '{}'",
                    dockerfile.display()
                ),
            ));
        }
    };
    let workdir = match table.and_then(|e| e.workdir.as_ref()) {
        Some(w) => environment::workdir(at, w)?,
        None => DEFAULT_WORKDIR.to_string(),
    };
    let public = |mode: Option<&Spanned<String>>| mode.map(|m| m.get_ref() == "public");
    let task_network = table
        .and_then(|e| public(e.network_mode.as_ref()))
        .or_else(|| table.and_then(|e| e.allow_internet.as_ref().map(|a| *a.get_ref())));
    let allow_internet = public(raw.verifier.network_mode.as_ref())
        .or(task_network)
        .unwrap_or_else(|| {
            warnings.push(
                "the Harbor task says nothing of the network, which Harbor takes as public: \
                 loopbench gives its checks none (set [environment] network_mode = \"public\" \
                 to allow it)"
                    .into(),
            );
            false
        });
    let env = match table.and_then(|e| e.env.as_ref()) {
        Some(e) => host.env_table(at, e)?,
        None => BTreeMap::new(),
    };
    Ok(Environment {
        image,
        workdir,
        cpus: table
            .and_then(|e| e.cpus.as_ref())
            .map(|c| environment::cpus(at, c))
            .transpose()?,
        memory_mb: environment::positive(at, table.and_then(|e| e.memory_mb.clone()), "memory_mb")?,
        pids: None,
        allow_internet,
        env,
    })
}

/// Reads `path` when it is a file.
fn read_if_file(path: &Path) -> Result<Option<String>> {
    if !path.is_file() {
        return Ok(None);
    }
    std::fs::read_to_string(path)
        .io_context(|| format!("cannot read '{}'", path.display()))
        .map(Some)
}
