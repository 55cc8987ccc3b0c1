//! `task.toml`: a starting repository, its canonical feature list and how to find tests.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use globset::{Glob, GlobMatcher};
use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

use super::confined::EscapingLink;
use super::container_check::ContainerCheck;
use super::environment::{At, Environment, EnvironmentFile};
use super::named_tests::{ORACLE_TESTS_AT, named_tests};
use super::runner_command::VerifyRunner;
use super::toml_error::{config_error, from_toml};
use super::verify_runner::{RunnerCheck, unrecognized_runner};
use crate::error::{Error, Result, SuiteFileError};
use crate::feature_list::{Contract, Entry};

/// Verify commands that run longer than this are killed and count as failing.
const DEFAULT_VERIFY_TIMEOUT: Duration = Duration::from_secs(120);
/// Largest work directory (bytes of its files, `.git` left out) the harness observes.
pub const DEFAULT_MAX_TREE_BYTES: u64 = 256 * 1024 * 1024;
/// Most entries (files, directories, links; `.git` left out) of a work directory the
/// harness observes: a tree of empty files costs nothing in bytes but time to walk.
pub const DEFAULT_MAX_TREE_FILES: u64 = 50_000;
/// Longest time one observation (every check, twice) may take before the session is
/// recorded unobservable.
pub const DEFAULT_OBSERVE_TIMEOUT: Duration = Duration::from_secs(30 * 60);

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskFile {
    name: Spanned<String>,
    goal: String,
    tests: TestsFile,
    #[serde(rename = "feature", default)]
    features: Vec<FeatureFile>,
    /// How long one verify command may run, e.g. "90s" (humantime).
    verify_timeout: Option<Spanned<String>>,
    /// Largest work directory in bytes, without `.git` (default 256 MiB): a session that
    /// leaves a larger one is recorded `error`, since every observation copies the tree.
    max_tree_bytes: Option<Spanned<u64>>,
    /// Most files and directories in the work directory, without `.git` (default 50,000).
    max_tree_files: Option<Spanned<u64>>,
    /// How long one observation may take, e.g. "30m" (default).
    observe_timeout: Option<Spanned<String>>,
    /// Tools in `repo/` that append to `$LOOPBENCH_EFFECTS` (documentation for agents
    /// and a check that they exist).
    #[serde(default)]
    side_effect_tools: Vec<Spanned<String>>,
    /// Globs of files that no verify command reads (notes, the feature list). They are
    /// left out of the verify cache key and of the scratch copies the checks run in.
    #[serde(default)]
    verify_ignores: Vec<Spanned<String>>,
    /// The goal contract: what done means for the whole task.
    #[serde(default)]
    acceptance: Vec<String>,
    /// The goal contract: actions never allowed.
    #[serde(default)]
    forbidden: Vec<String>,
    /// Whose summary a pass of every feature's verify needs (unless the feature says
    /// otherwise); absent: found from each command.
    verify_runner: Option<VerifyRunner>,
    /// The container image the task runs in and the container's limits.
    environment: Option<Spanned<EnvironmentFile>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TestsFile {
    glob: Spanned<String>,
    count_pattern: Spanned<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FeatureFile {
    id: Spanned<String>,
    #[serde(default)]
    category: String,
    description: String,
    #[serde(default)]
    steps: Vec<String>,
    verify: Spanned<String>,
    #[serde(default)]
    depends_on: Vec<Spanned<String>>,
    /// Whose summary a pass of this verify needs; overrides the task's.
    verify_runner: Option<VerifyRunner>,
}

/// A loaded, validated task.
#[derive(Debug, Clone)]
pub struct Task {
    /// The task directory (holding `task.toml`, `repo/`, `oracle/`).
    pub dir: PathBuf,
    /// Short name, used in trial ids and `LOOPBENCH_TASK`.
    pub name: String,
    /// The goal handed to the agent.
    pub goal: String,
    /// How tests are found and counted.
    pub tests: TestDiscovery,
    /// The canonical feature list, in file order.
    pub features: Vec<Feature>,
    /// Time limit of one verify command.
    pub verify_timeout: Duration,
    /// Largest work directory the harness observes, in bytes (`.git` left out).
    pub max_tree_bytes: u64,
    /// Most entries of a work directory the harness observes (`.git` left out).
    pub max_tree_files: u64,
    /// Longest time one observation may take.
    pub observe_timeout: Duration,
    /// Tools that write to the effects log, relative to the work directory.
    pub side_effect_tools: Vec<String>,
    /// Files the checks never read (left out of the verify cache key and the copies).
    pub verify_ignores: globset::GlobSet,
    /// What loading found questionable but not wrong, for the command to print.
    pub(super) warnings: Vec<String>,
    /// The goal contract's `acceptance` list (what done means for the whole task).
    pub acceptance: Vec<String>,
    /// The goal contract's `forbidden` list (actions never allowed).
    pub forbidden: Vec<String>,
    /// The container the task runs in (`[environment]`, or a Harbor task's image);
    /// `None`: the work directory on the host, in the suite's sandbox.
    /// (Boxed: a task is carried by value in every plan, most without one.)
    pub environment: Option<Box<Environment>>,
    /// What the task's files ask for that loopbench does not run, one sentence each
    /// naming its file and line, for `validate` to print.
    pub(super) not_run: Vec<String>,
    /// The harness's variables whose values the task's `env` tables took (Harbor's
    /// `${NAME}` templates): secrets as much as a `pass_env` value, redacted alike.
    pub(super) host_variables: Vec<String>,
}

/// How test files are found (a glob relative to the work directory) and how tests in
/// them are counted (matches of a multi-line regex).
#[derive(Debug, Clone)]
pub struct TestDiscovery {
    /// The glob as written in `task.toml`.
    pub glob_text: String,
    /// The compiled glob; `*` does not cross `/`, `**` spans directories.
    pub glob: GlobMatcher,
    /// The count pattern, compiled with `^`/`$` matching at line boundaries.
    pub count_pattern: Regex,
}

/// One canonical feature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Feature {
    /// Stable id, e.g. `F1`.
    pub id: String,
    /// Free-form category, e.g. `functional`.
    pub category: String,
    /// What the feature does.
    pub description: String,
    /// How a person would check it by hand.
    pub steps: Vec<String>,
    /// Shell command whose exit status 0 means the feature works.
    pub verify: String,
    /// Features whose gold files must be in place before this one's.
    pub depends_on: Vec<String>,
    /// What a pass of `verify` needs besides exit status 0: the runner's summary, and
    /// the test files whose tests it must report passed.
    pub runner: RunnerCheck,
    /// For a task that runs in a container: the check that decides the feature instead
    /// of `verify` on the host, its gold and its starting files.
    pub container: Option<ContainerCheck>,
}

impl Task {
    /// Reads a task in loopbench's own layout from its `task.toml` (`text`, read from
    /// `file` in `dir`); `escaping` is the first file of the directory that leads out of
    /// it, found before anything was read.
    pub(super) fn from_text(
        dir: PathBuf,
        file: &Path,
        text: &str,
        escaping: Option<EscapingLink>,
    ) -> Result<Task> {
        let raw: TaskFile = toml::from_str(text).map_err(|e| from_toml(file, text, &e))?;
        let source = Source { file, text };
        if let Some(link) = escaping {
            return Err(escape_error(&source, &raw, &link));
        }
        Task::validate(dir, file, text, raw)
    }

    /// Checks what `task.toml` (`text`, read from `file`) says against itself and
    /// against the task directory `dir`, in the order its errors are reported.
    fn validate(dir: PathBuf, file: &Path, text: &str, raw: TaskFile) -> Result<Task> {
        let source = Source { file, text };
        check_name(&source, &raw.name)?;
        let tests = test_discovery(&source, &raw.tests)?;
        check_features(&source, &raw.features)?;
        let runners: Vec<RunnerCheck> = raw
            .features
            .iter()
            .map(|f| {
                RunnerCheck::of(
                    f.verify.get_ref(),
                    f.verify_runner.or(raw.verify_runner),
                    &tests.glob,
                )
            })
            .collect();
        check_dependencies(&source, &raw.features)?;
        let limits = Limits::of(&source, &raw)?;
        let warnings = check_files(&source, &dir, &raw, &tests.glob)?;
        let verify_ignores = verify_ignores(&source, &raw.verify_ignores)?;
        let environment = match raw.environment {
            None => None,
            Some(table) => {
                let span = table.span();
                let at = At { file, text };
                Some(Box::new(table.into_inner().validate(&at, span, &dir)?))
            }
        };

        Ok(Task {
            dir,
            verify_ignores,
            name: raw.name.into_inner(),
            goal: raw.goal,
            tests,
            features: raw
                .features
                .into_iter()
                .zip(runners)
                .map(|(f, runner)| Feature {
                    id: f.id.into_inner(),
                    category: f.category,
                    description: f.description,
                    steps: f.steps,
                    verify: f.verify.into_inner(),
                    depends_on: f.depends_on.into_iter().map(Spanned::into_inner).collect(),
                    runner,
                    container: None,
                })
                .collect(),
            verify_timeout: limits.verify_timeout,
            max_tree_bytes: limits.max_tree_bytes,
            max_tree_files: limits.max_tree_files,
            observe_timeout: limits.observe_timeout,
            warnings,
            acceptance: raw.acceptance,
            forbidden: raw.forbidden,
            environment,
            not_run: Vec::new(),
            host_variables: Vec::new(),
            side_effect_tools: raw
                .side_effect_tools
                .into_iter()
                .map(Spanned::into_inner)
                .collect(),
        })
    }

    /// Why the task needs a container, when it does (see [`super::refuse_outside_container`]).
    pub fn needs_container(&self) -> Option<&'static str> {
        match (
            &self.environment,
            self.features.iter().any(|f| f.container.is_some()),
        ) {
            (None, _) => None,
            (Some(_), true) => Some("is a Harbor task"),
            (Some(_), false) => Some("has an [environment] table"),
        }
    }

    /// What the task asks for that loopbench does not run, each with its file and line.
    pub fn not_run(&self) -> &[String] {
        &self.not_run
    }

    /// The harness's variables whose values the task took (resolved `${NAME}`
    /// templates of its `env` tables), by name: what is stored of a run must not hold
    /// their values.
    pub fn host_variables(&self) -> &[String] {
        &self.host_variables
    }

    /// Whether the task's tests lie in the work directory (found by its glob), where an
    /// agent could remove or weaken them; not for a task in Harbor's layout, whose
    /// checks bring their own.
    pub fn tests_in_work_dir(&self) -> bool {
        !self.tests.glob_text.is_empty()
    }

    /// The files the agent starts from.
    pub fn repo_dir(&self) -> PathBuf {
        self.dir.join("repo")
    }

    /// Lays the files a trial starts from in `dir`: `repo/` (none for a task in
    /// Harbor's layout), then [`Task::lay_step_files`].
    pub fn lay_starting_files(&self, dir: &Path) -> Result<()> {
        let repo = self.repo_dir();
        if repo.is_dir() {
            crate::fsutil::copy_tree(&repo, dir, true)?;
        } else {
            std::fs::create_dir_all(dir)
                .map_err(|e| Error::io(format!("cannot create '{}'", dir.display()), e))?;
        }
        self.lay_step_files(dir)
    }

    /// Lays each feature's starting files (a Harbor step's `workdir/`) in `dir`, in
    /// feature order: every step's at once, where a tree must hold them all (the gold of
    /// every step, `check-task`'s controls).
    pub fn lay_step_files(&self, dir: &Path) -> Result<()> {
        self.lay_step_files_of(dir, 0..self.features.len())
            .map(drop)
    }

    /// Lays the starting files of the features at `indices` (in feature order) in
    /// `dir`, as a trial does: the first feature's before the first session, each later
    /// one's before the session that works on it ([`Task::steps_due`]). Returns the
    /// paths laid, relative to `dir` (the top-level entries of each `workdir/`).
    pub fn lay_step_files_of(
        &self,
        dir: &Path,
        indices: std::ops::Range<usize>,
    ) -> Result<Vec<PathBuf>> {
        let mut laid = Vec::new();
        for f in self.features.get(indices).unwrap_or_default() {
            if let Some(files) = f.container.as_ref().and_then(|c| c.workdir.as_deref()) {
                crate::fsutil::copy_tree(files, dir, true)?;
                let entries = std::fs::read_dir(files)
                    .map_err(|e| Error::io(format!("cannot read '{}'", files.display()), e))?;
                for entry in entries {
                    let entry = entry
                        .map_err(|e| Error::io(format!("cannot read '{}'", files.display()), e))?;
                    laid.push(PathBuf::from(entry.file_name()));
                }
            }
        }
        laid.sort();
        laid.dedup();
        Ok(laid)
    }

    /// How many features' starting files a trial has in place once the features
    /// `passing` says pass: every feature up to and including the first that does not
    /// (the step a session then works on, as Harbor runs its steps in order), at least
    /// the first.
    pub fn steps_due(&self, passing: impl Fn(&str) -> bool) -> usize {
        let first_open = self
            .features
            .iter()
            .position(|f| !passing(&f.id))
            .unwrap_or(self.features.len().saturating_sub(1));
        (first_open + 1).min(self.features.len())
    }

    /// Whether a feature of the task has starting files of its own.
    pub fn has_step_files(&self) -> bool {
        self.features
            .iter()
            .any(|f| f.container.as_ref().is_some_and(|c| c.workdir.is_some()))
    }

    /// What loading found questionable but not wrong (no `oracle/tests`), one sentence
    /// each; the engine never prints them, the command does.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Pristine tests, laid over `tests/` of a scratch copy to compute `verified`.
    /// `None` when the task ships none (then `verified` equals `self_verified`, and
    /// [`Task::warnings`] says so).
    pub fn oracle_tests_dir(&self) -> Option<PathBuf> {
        Some(self.dir.join("oracle").join("tests")).filter(|p| p.is_dir())
    }

    /// Files that implement feature `id` (used by the sim agent only).
    pub fn gold_dir(&self, id: &str) -> PathBuf {
        self.dir.join("oracle").join("gold").join(id)
    }

    /// The canonical list as the harness writes it: every feature, none passing.
    pub fn canonical_entries(&self) -> Vec<Entry> {
        self.features
            .iter()
            .map(|f| Entry {
                id: f.id.clone(),
                category: f.category.clone(),
                description: f.description.clone(),
                steps: f.steps.clone(),
                passes: false,
                status: None,
                notes: String::new(),
            })
            .collect()
    }

    /// The goal contract a status-schema list starts with: the goal and the
    /// `acceptance` and `forbidden` lists of `task.toml`.
    pub fn contract(&self) -> Contract {
        Contract {
            goal: self.goal.clone(),
            acceptance: self.acceptance.clone(),
            forbidden: self.forbidden.clone(),
        }
    }

    /// The feature with this id, if it is canonical.
    pub fn feature(&self, id: &str) -> Option<&Feature> {
        self.features.iter().find(|f| f.id == id)
    }
}

/// Whether `name` can stand in trial ids and as a file name: ASCII letters, digits,
/// `_`, `.` and `-`, and neither `.` nor `..`.
pub fn is_simple_name(name: &str) -> bool {
    !name.is_empty()
        && name != "."
        && name != ".."
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// The text of a `task.toml` and where it was read from, for errors that point into it.
struct Source<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Source<'_> {
    /// An error at `span` of the file.
    fn err(&self, span: std::ops::Range<usize>, message: String) -> Error {
        config_error(self.file, self.text, Some(span), message)
    }
}

/// A file of the task that is a symlink out of its directory, named at the key that
/// names it where there is one (the feature of an `oracle/gold/<ID>`), else at line 1.
fn escape_error(source: &Source<'_>, raw: &TaskFile, link: &EscapingLink) -> Error {
    let gold = link
        .rel
        .strip_prefix("oracle/gold/")
        .and_then(|rest| rest.split('/').next())
        .and_then(|id| raw.features.iter().find(|f| f.id.get_ref() == id));
    let feature = gold.map_or_else(String::new, |f| format!("feature '{}': ", f.id.get_ref()));
    config_error(
        source.file,
        source.text,
        gold.map(|f| f.id.span()),
        format!(
            "{feature}task file '{}' is a symlink out of the task directory, to '{}': every \
             file of a task (its repo/, oracle/tests, oracle/gold/<ID>) must lie inside it",
            link.rel,
            link.target.display()
        ),
    )
}

/// The name becomes part of trial ids and of paths under the run directory.
fn check_name(source: &Source<'_>, name: &Spanned<String>) -> Result<()> {
    let text = name.get_ref();
    if !is_simple_name(text) {
        return Err(source.err(
            name.span(),
            format!(
                "task name '{text}' must be ASCII letters, digits, '_', '.' or '-', and not '.' or '..'"
            ),
        ));
    }
    Ok(())
}

/// How the task's test files are found and counted: `[tests]`.
fn test_discovery(source: &Source<'_>, raw: &TestsFile) -> Result<TestDiscovery> {
    let glob_text = raw.glob.get_ref().clone();
    let glob = Glob::new(&glob_text)
        .and_then(|g| {
            globset::GlobBuilder::new(g.glob())
                .literal_separator(true)
                .build()
        })
        .map_err(|e| {
            source.err(
                raw.glob.span(),
                format!("tests.glob is not a valid glob: {e}"),
            )
        })?
        .compile_matcher();
    let count_pattern = regex::RegexBuilder::new(raw.count_pattern.get_ref())
        .multi_line(true)
        .build()
        .map_err(|e| {
            source.err(
                raw.count_pattern.span(),
                format!("tests.count_pattern is not a valid regex: {e}"),
            )
        })?;
    Ok(TestDiscovery {
        glob_text,
        glob,
        count_pattern,
    })
}

/// At least one feature, each with a simple id of its own and a verify command.
fn check_features(source: &Source<'_>, features: &[FeatureFile]) -> Result<()> {
    if features.is_empty() {
        return Err(config_error(
            source.file,
            source.text,
            None,
            "a task needs at least one [[feature]] table",
        ));
    }
    let mut seen = BTreeSet::new();
    for f in features {
        let id = f.id.get_ref();
        if id.is_empty()
            || !id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
        {
            return Err(source.err(
                f.id.span(),
                format!(
                    "feature id '{id}' must be non-empty ASCII letters, digits, '_', '.' or '-'"
                ),
            ));
        }
        if !seen.insert(id.clone()) {
            return Err(source.err(f.id.span(), format!("feature id '{id}' is defined twice")));
        }
        if f.verify.get_ref().trim().is_empty() {
            return Err(source.err(
                f.verify.span(),
                format!("feature '{id}' has an empty verify command"),
            ));
        }
    }
    Ok(())
}

/// Every `depends_on` names a feature of the task, and no feature depends on itself.
fn check_dependencies(source: &Source<'_>, features: &[FeatureFile]) -> Result<()> {
    let ids: BTreeSet<&String> = features.iter().map(|f| f.id.get_ref()).collect();
    for f in features {
        for dep in &f.depends_on {
            if !ids.contains(dep.get_ref()) {
                return Err(source.err(
                    dep.span(),
                    format!(
                        "feature '{}' depends on '{}', which is not a feature of this task",
                        f.id.get_ref(),
                        dep.get_ref()
                    ),
                ));
            }
        }
    }
    if let Some(cycle_at) = first_dependency_cycle(features) {
        let f = &features[cycle_at];
        return Err(source.err(
            f.id.span(),
            format!(
                "feature '{}' depends on itself through depends_on",
                f.id.get_ref()
            ),
        ));
    }
    Ok(())
}

/// The task's time and size limits, each its default when not set.
struct Limits {
    verify_timeout: Duration,
    max_tree_bytes: u64,
    max_tree_files: u64,
    observe_timeout: Duration,
}

impl Limits {
    fn of(source: &Source<'_>, raw: &TaskFile) -> Result<Limits> {
        let verify_timeout = match &raw.verify_timeout {
            None => DEFAULT_VERIFY_TIMEOUT,
            Some(t) => humantime::parse_duration(t.get_ref()).map_err(|e| {
                source.err(
                    t.span(),
                    format!("verify_timeout: expected a duration like \"90s\" or \"2m\": {e}"),
                )
            })?,
        };
        let max_tree_bytes = match &raw.max_tree_bytes {
            None => DEFAULT_MAX_TREE_BYTES,
            Some(m) if *m.get_ref() == 0 => {
                return Err(source.err(m.span(), "max_tree_bytes must be at least 1".into()));
            }
            Some(m) => *m.get_ref(),
        };
        let max_tree_files = match &raw.max_tree_files {
            None => DEFAULT_MAX_TREE_FILES,
            Some(m) if *m.get_ref() == 0 => {
                return Err(source.err(m.span(), "max_tree_files must be at least 1".into()));
            }
            Some(m) => *m.get_ref(),
        };
        let observe_timeout = match &raw.observe_timeout {
            None => DEFAULT_OBSERVE_TIMEOUT,
            Some(t) => humantime::parse_duration(t.get_ref()).map_err(|e| {
                source.err(
                    t.span(),
                    format!("observe_timeout: expected a duration like \"30m\": {e}"),
                )
            })?,
        };
        Ok(Limits {
            verify_timeout,
            max_tree_bytes,
            max_tree_files,
            observe_timeout,
        })
    }
}

/// What the task names in its directory: `repo/`, the tests each verify command names
/// (in `repo/` or `oracle/tests`) and the side-effect tools. Gives back the warnings of
/// what is questionable but not wrong (no `oracle/tests`, a verify command whose test
/// runner is not recognized).
fn check_files(
    source: &Source<'_>,
    dir: &Path,
    raw: &TaskFile,
    glob: &GlobMatcher,
) -> Result<Vec<String>> {
    let name = raw.name.get_ref();
    let repo = dir.join("repo");
    if !repo.is_dir() {
        return Err(SuiteFileError::NoRepo {
            dir: dir.to_path_buf(),
            repo,
        }
        .into());
    }
    let oracle_tests = dir.join("oracle").join("tests");
    let has_oracle = oracle_tests.is_dir();
    let mut warnings = Vec::new();
    if !has_oracle {
        warnings.push(format!(
            "task '{name}' has no oracle/tests ('{}'): verified then equals self_verified, so tests the agent weakens cannot be detected",
            oracle_tests.display()
        ));
    }
    for f in &raw.features {
        let setting = f.verify_runner.or(raw.verify_runner);
        if let Some(why) = unrecognized_runner(f.verify.get_ref(), setting) {
            warnings.push(format!(
                "task '{name}' feature '{}': verify {why}",
                f.id.get_ref()
            ));
        }
    }
    // A check whose test exists nowhere fails until the agent writes that test, and
    // then checks the agent's own test: every claim before that counts premature.
    let in_oracle = |path: &str| {
        has_oracle
            && path
                .strip_prefix(ORACLE_TESTS_AT)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|rest| oracle_tests.join(rest).exists())
    };
    for f in &raw.features {
        for named in named_tests(f.verify.get_ref(), glob) {
            if !named
                .paths
                .iter()
                .any(|p| repo.join(p).exists() || in_oracle(p))
            {
                return Err(source.err(
                    f.verify.span(),
                    format!(
                        "feature '{}': verify names test '{}', which is in neither repo/ nor oracle/tests (looked for {})",
                        f.id.get_ref(),
                        named.word,
                        named.paths.join(", ")
                    ),
                ));
            }
        }
    }
    for tool in &raw.side_effect_tools {
        if !repo.join(tool.get_ref()).is_file() {
            return Err(source.err(
                tool.span(),
                format!(
                    "side-effect tool '{}' is not a file in repo/",
                    tool.get_ref()
                ),
            ));
        }
    }
    Ok(warnings)
}

/// `verify_ignores`: the files left out of every check's copy.
fn verify_ignores(source: &Source<'_>, patterns: &[Spanned<String>]) -> Result<globset::GlobSet> {
    let mut ignores = globset::GlobSetBuilder::new();
    for pattern in patterns {
        let glob = globset::GlobBuilder::new(pattern.get_ref())
            .literal_separator(true)
            .build()
            .map_err(|e| {
                source.err(
                    pattern.span(),
                    format!("verify_ignores: not a valid glob: {e}"),
                )
            })?;
        ignores.add(glob);
    }
    ignores.build().map_err(|e| {
        config_error(
            source.file,
            source.text,
            None,
            format!("verify_ignores: {e}"),
        )
    })
}

/// Index of a feature that lies on a `depends_on` cycle, if any (depth-first search).
fn first_dependency_cycle(features: &[FeatureFile]) -> Option<usize> {
    let index: BTreeMap<&str, usize> = features
        .iter()
        .enumerate()
        .map(|(i, f)| (f.id.get_ref().as_str(), i))
        .collect();
    // 0 = unvisited, 1 = on the stack, 2 = done
    let mut state = vec![0u8; features.len()];
    fn visit(
        i: usize,
        features: &[FeatureFile],
        index: &BTreeMap<&str, usize>,
        state: &mut [u8],
    ) -> bool {
        state[i] = 1;
        for dep in &features[i].depends_on {
            let Some(&j) = index.get(dep.get_ref().as_str()) else {
                continue;
            };
            if state[j] == 1 || (state[j] == 0 && visit(j, features, index, state)) {
                return true;
            }
        }
        state[i] = 2;
        false
    }
    (0..features.len()).find(|&i| state[i] == 0 && visit(i, features, &index, &mut state))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write_task(toml: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("repo")).unwrap();
        std::fs::write(dir.path().join("task.toml"), toml).unwrap();
        dir
    }

    const MINIMAL: &str = r#"
name = "t"
goal = "g"
tests = { glob = "tests/**/*.py", count_pattern = '^\s*def test_' }

[[feature]]
id = "F1"
description = "one"
verify = "true"
"#;

    #[test]
    fn minimal_task_loads_with_defaults() {
        let dir = write_task(MINIMAL);
        let task = Task::load(dir.path()).unwrap();
        assert_eq!(task.name, "t");
        assert_eq!(task.features.len(), 1);
        assert_eq!(task.verify_timeout, DEFAULT_VERIFY_TIMEOUT);
        assert!(task.tests.glob.is_match("tests/test_a.py"));
        assert!(task.tests.glob.is_match("tests/sub/test_b.py"));
        assert!(!task.tests.glob.is_match("src/test_a.py"));
    }

    #[test]
    fn unknown_key_names_file_line_and_key() {
        let dir = write_task(&MINIMAL.replace("verify = \"true\"", "verify = \"true\"\nverfy = 1"));
        let err = Task::load(dir.path()).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("task.toml:10:1"), "{msg}");
        assert!(msg.contains("verfy"), "{msg}");
        assert_eq!(err.exit_code(), crate::exit_code::BAD_INPUT);
    }

    #[test]
    fn dependency_on_unknown_feature_is_an_error_at_its_line() {
        let dir = write_task(&MINIMAL.replace(
            "verify = \"true\"",
            "verify = \"true\"\ndepends_on = [\"F9\"]",
        ));
        let msg = Task::load(dir.path()).unwrap_err().to_string();
        assert!(msg.contains(":10:"), "{msg}");
        assert!(msg.contains("F9"), "{msg}");
    }

    #[test]
    fn dependency_cycle_is_rejected() {
        let text = format!(
            "{MINIMAL}depends_on = [\"F2\"]\n\n[[feature]]\nid = \"F2\"\ndescription = \"two\"\nverify = \"true\"\ndepends_on = [\"F1\"]\n"
        );
        let msg = Task::load(write_task(&text).path())
            .unwrap_err()
            .to_string();
        assert!(msg.contains("depends on itself"), "{msg}");
    }

    #[test]
    fn invalid_count_pattern_points_at_the_pattern() {
        let dir = write_task(&MINIMAL.replace(r"'^\s*def test_'", "'(unclosed'"));
        let msg = Task::load(dir.path()).unwrap_err().to_string();
        assert!(msg.contains("task.toml:4:"), "{msg}");
        assert!(msg.contains("count_pattern"), "{msg}");
    }

    #[test]
    fn simple_names_are_letters_digits_and_three_marks_but_never_dot_or_dot_dot() {
        for good in ["shtask", "a-b_c.d", "v1.2", "...", ".hidden"] {
            assert!(is_simple_name(good), "{good}");
        }
        for bad in ["", ".", "..", "../x", "a/b", "a b", "caf\u{e9}", "a:b"] {
            assert!(!is_simple_name(bad), "{bad}");
        }
    }

    #[test]
    fn a_task_name_that_is_a_path_is_an_error_at_the_name() {
        let dir = write_task(&MINIMAL.replace("name = \"t\"", "name = \"../../x\""));
        let err = Task::load(dir.path()).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("task.toml:2:8: task name '../../x' must be"),
            "{msg}"
        );
        assert_eq!(err.exit_code(), crate::exit_code::BAD_INPUT);
    }

    #[test]
    fn a_task_without_oracle_tests_loads_with_a_warning_that_weakened_tests_go_unseen() {
        let dir = write_task(MINIMAL);
        let task = Task::load(dir.path()).unwrap();
        let [warning] = task.warnings() else {
            panic!("{:?}", task.warnings());
        };
        assert!(
            warning.starts_with("task 't' has no oracle/tests"),
            "{warning}"
        );
        assert!(
            warning.contains(
                "verified then equals self_verified, so tests the agent weakens cannot be detected"
            ),
            "{warning}"
        );
        std::fs::create_dir_all(dir.path().join("oracle/tests")).unwrap();
        assert!(Task::load(dir.path()).unwrap().warnings().is_empty());
    }

    #[test]
    fn a_verify_that_mentions_a_runner_loopbench_cannot_read_is_warned_about_by_name() {
        let dir = write_task(&MINIMAL.replace(
            "verify = \"true\"",
            "verify = \"python3 -c 'import pytest; raise SystemExit(pytest.main())'\"",
        ));
        std::fs::create_dir_all(dir.path().join("oracle/tests")).unwrap();
        let task = Task::load(dir.path()).unwrap();
        let [warning] = task.warnings() else {
            panic!("{:?}", task.warnings());
        };
        assert!(
            warning.starts_with("task 't' feature 'F1': verify '"),
            "{warning}"
        );
        assert!(warning.contains("set verify_runner"), "{warning}");
        // Naming the runner is no answer where the command starts it out of the
        // harness's sight: the harness cannot start it through its entry point, so no
        // check of it can pass (a warning again); naming "exit" keeps the exit status.
        let named = MINIMAL.replace(
            "verify = \"true\"",
            "verify = \"python3 -c 'import pytest'\"\nverify_runner = \"pytest\"",
        );
        let dir = write_task(&named);
        std::fs::create_dir_all(dir.path().join("oracle/tests")).unwrap();
        let task = Task::load(dir.path()).unwrap();
        let [warning] = task.warnings() else {
            panic!("{:?}", task.warnings());
        };
        assert!(
            warning.contains("cannot start it through its entry point"),
            "{warning}"
        );
        let exit = named.replace("verify_runner = \"pytest\"", "verify_runner = \"exit\"");
        let dir = write_task(&exit);
        std::fs::create_dir_all(dir.path().join("oracle/tests")).unwrap();
        assert!(Task::load(dir.path()).unwrap().warnings().is_empty());
    }

    #[test]
    fn a_verify_naming_a_test_that_is_nowhere_is_an_error_at_the_verify() {
        let dir = write_task(&MINIMAL.replace(
            "verify = \"true\"",
            "verify = \"python3 -m unittest tests.test_gone\"",
        ));
        let err = Task::load(dir.path()).unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("task.toml:9:10: feature 'F1': verify names test 'tests.test_gone', which is in neither repo/ nor oracle/tests (looked for tests/test_gone.py, tests/test_gone)"),
            "{msg}"
        );
        assert_eq!(err.exit_code(), crate::exit_code::BAD_INPUT);
    }

    #[test]
    fn a_verify_naming_a_test_in_repo_or_only_in_the_oracle_loads() {
        let dir = write_task(&MINIMAL.replace(
            "verify = \"true\"",
            "verify = \"python3 -m unittest tests.test_hidden && python3 -m pytest tests/test_open.py\"",
        ));
        std::fs::create_dir_all(dir.path().join("oracle/tests")).unwrap();
        std::fs::create_dir_all(dir.path().join("repo/tests")).unwrap();
        std::fs::write(dir.path().join("oracle/tests/test_hidden.py"), "").unwrap();
        std::fs::write(dir.path().join("repo/tests/test_open.py"), "").unwrap();
        Task::load(dir.path()).unwrap();
        std::fs::remove_file(dir.path().join("oracle/tests/test_hidden.py")).unwrap();
        assert!(Task::load(dir.path()).is_err());
    }

    #[test]
    fn missing_task_dir_is_bad_input() {
        let err = Task::load(Path::new("/nonexistent/task")).unwrap_err();
        assert_eq!(err.exit_code(), crate::exit_code::BAD_INPUT);
    }
}
