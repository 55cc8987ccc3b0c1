//! One observation of a work directory: the parsed list, every feature checked twice,
//! test counts per file, git status, the progress notes' hash and the effects log.

use std::collections::BTreeMap;

use super::verify::OracleTests;
use super::verify::{Check, Failure, VerifyCache, VerifyRun};
use crate::error::{Error, Result};
use crate::feature_list::{self, FeatureList, ListFormat, ListSchema};
use crate::fsutil::{TreeSize, TreeSnapshot, tree_size_within};
use crate::sandbox::Hidden;
use crate::suite::Task;
use crate::workspace::{PROGRESS_FILE, Workspace, git_status_porcelain};

/// The harness's own object store of a trial, beside its work directory: the trees of
/// the observations are written here, never into the agent's `.git`.
pub const TREE_STORE: &str = "trees.git";

/// The state of the feature list file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListState {
    /// There is no list file.
    Missing,
    /// The file exists and does not parse; the reason is kept for the record.
    Unparseable(String),
    /// The file parsed.
    Parsed(FeatureList),
}

impl ListState {
    /// The parsed list, if any.
    pub fn parsed(&self) -> Option<&FeatureList> {
        match self {
            ListState::Parsed(list) => Some(list),
            _ => None,
        }
    }

    /// `list_parse_ok`: true parses, false exists and does not parse, `None` absent.
    pub fn parse_ok(&self) -> Option<bool> {
        match self {
            ListState::Missing => None,
            ListState::Unparseable(_) => Some(false),
            ListState::Parsed(_) => Some(true),
        }
    }
}

/// What the harness saw in a work directory at one moment.
#[derive(Debug, Clone)]
pub struct Observation {
    /// The feature list file of the arm's format.
    pub list: ListState,
    /// Per canonical feature: verify with the oracle tests laid over (the truth).
    pub verified: BTreeMap<String, Check>,
    /// Per canonical feature: verify with the tests as the agent left them.
    pub self_verified: BTreeMap<String, Check>,
    /// Test files (by the task's glob) and the matches of its count pattern in each.
    pub tests: BTreeMap<String, u64>,
    /// `git status --porcelain`; `None` when git could not tell.
    pub git_status: Option<String>,
    /// blake3 of PROGRESS.md, `None` when absent.
    pub progress_hash: Option<String>,
    /// Non-empty lines of the effects log, in order.
    pub effects: Vec<String>,
    /// Content hash of the tree (without `.git`).
    pub tree_hash: String,
    /// Verify runs of this observation that reached their time limit (each counted
    /// as failing).
    pub verify_timeouts: u32,
    /// The schema the list was read with.
    pub schema: ListSchema,
    /// PROGRESS.md exists and holds a non-whitespace character.
    pub progress_nonblank: bool,
    /// Per canonical feature whose `verified` check failed: the command, its exit
    /// status and the end of its output.
    pub failures: BTreeMap<String, Failure>,
    /// The git tree of the work directory as `git add -A && git write-tree` gives it
    /// (uncommitted work included, ignored files not); `None` when git could not tell.
    pub git_tree: Option<String>,
}

impl Observation {
    /// Number of canonical features whose verify passes (flaky ones excluded).
    pub fn features_verified(&self) -> usize {
        self.verified
            .values()
            .filter(|c| **c == Check::Pass)
            .count()
    }

    /// What is known after a session whose directory could not be observed: nothing
    /// changed that the harness can vouch for, and there is no list to compare (so the
    /// list-based fields are null) and no clean tree.
    pub fn unobserved(&self) -> Observation {
        Observation {
            list: ListState::Missing,
            git_status: None,
            verify_timeouts: 0,
            progress_nonblank: false,
            git_tree: None,
            ..self.clone()
        }
    }

    /// Whether every canonical feature is verified.
    pub fn all_verified(&self) -> bool {
        self.verified.values().all(|c| *c == Check::Pass)
    }

    /// Whether the work tree is clean: git answered and listed nothing.
    pub fn clean_tree(&self) -> bool {
        self.git_status.as_deref().is_some_and(str::is_empty)
    }

    /// Features in a state that a weakened test produces: passing as the agent left
    /// the tests, failing against the pristine ones.
    pub fn weakened(&self) -> impl Iterator<Item = &str> {
        self.self_verified.iter().filter_map(|(id, own)| {
            let truth = self.verified.get(id)?;
            (*own == Check::Pass && *truth == Check::Fail).then_some(id.as_str())
        })
    }
}

/// Takes observations of one trial's work directory.
pub struct Observer<'a> {
    task: &'a Task,
    format: ListFormat,
    schema: ListSchema,
    oracle: Option<OracleTests>,
    cache: Option<&'a VerifyCache>,
    repeats: u32,
    sandbox: Option<Hidden>,
}

impl<'a> Observer<'a> {
    /// An observer for `task` with lists in `format`. `cache` is `None` when the suite
    /// turns caching off; `repeats > 1` checks each verify for flakiness.
    pub fn new(
        task: &'a Task,
        format: ListFormat,
        cache: Option<&'a VerifyCache>,
        repeats: u32,
    ) -> Result<Observer<'a>> {
        let oracle = task
            .oracle_tests_dir()
            .map(|dir| OracleTests::read(&dir))
            .transpose()?;
        Ok(Observer {
            task,
            format,
            schema: ListSchema::Passes,
            oracle,
            cache,
            repeats,
            sandbox: None,
        })
    }

    /// Runs every verify command under bubblewrap, hiding `hidden` (the agent's code
    /// must not reach the oracle, the run directory or other trials through its tests).
    pub fn sandboxed(mut self, hidden: Hidden) -> Observer<'a> {
        self.sandbox = Some(hidden);
        self
    }

    /// Reads the list under `schema` (the passes schema unless told).
    pub fn with_schema(mut self, schema: ListSchema) -> Observer<'a> {
        self.schema = schema;
        self
    }

    /// Whether verify commands run sandboxed.
    pub fn is_sandboxed(&self) -> bool {
        self.sandbox.is_some()
    }

    fn verify_run<'r>(
        &'r self,
        ws: &'r Workspace,
        feature: &'r crate::suite::Feature,
        overlay: Option<&'r OracleTests>,
        tree_key: blake3::Hash,
    ) -> VerifyRun<'r> {
        VerifyRun {
            work_dir: &ws.work_dir,
            tree_key,
            overlay,
            command: &feature.verify,
            timeout: self.task.verify_timeout,
            repeats: self.repeats,
            cache: self.cache,
            sandbox: self.sandbox.as_ref(),
        }
    }

    /// Observes the work directory of `ws` without changing it. A tree past the task's
    /// `max_tree_bytes` or `max_tree_files`, one that is gone, or an observation that
    /// runs past `observe_timeout` is [`Error::Unobservable`].
    pub fn observe(&self, ws: &Workspace) -> Result<Observation> {
        let started = std::time::Instant::now();
        let limit = self.task.max_tree_bytes;
        if !ws.work_dir.is_dir() {
            return Err(Error::Unobservable(
                "the work directory is gone (deleted or replaced during the session)".into(),
            ));
        }
        let max_files = self.task.max_tree_files;
        match tree_size_within(&ws.work_dir, limit, max_files)? {
            TreeSize::Within { .. } => {}
            TreeSize::OverBytes => {
                return Err(Error::Unobservable(format!(
                    "the work directory holds more than max_tree_bytes = {limit} bytes of \
                     files (without .git); it was not observed"
                )));
            }
            TreeSize::OverEntries => {
                return Err(Error::Unobservable(format!(
                    "the work directory holds more than max_tree_files = {max_files} files \
                     and directories (without .git); it was not observed"
                )));
            }
        }
        let out_of_time = || {
            let limit = self.task.observe_timeout;
            (started.elapsed() > limit).then(|| {
                Error::Unobservable(format!(
                    "observing the work directory took longer than observe_timeout = {}; \
                     it was not observed",
                    humantime::format_duration(limit)
                ))
            })
        };
        let tree = TreeSnapshot::read(&ws.work_dir)?;

        let list = match tree.get(self.format.file_name()) {
            None => ListState::Missing,
            Some(file) => match std::str::from_utf8(&file.content) {
                Err(_) => ListState::Unparseable("the file is not UTF-8 text".into()),
                Ok(text) => match feature_list::parse_with(self.format, self.schema, text) {
                    Ok(list) => ListState::Parsed(list),
                    Err(e) => ListState::Unparseable(e.to_string()),
                },
            },
        };

        let overlay = self.oracle.as_ref().filter(|o| !o.already_in(&tree));
        let ignores = &self.task.verify_ignores;
        let key_of = |t: &TreeSnapshot| {
            if ignores.is_empty() {
                t.hash
            } else {
                t.hash_where(|path| !ignores.is_match(path))
            }
        };
        let own_key = key_of(&tree);
        let overlaid_key = overlay.map(|o| key_of(&o.overlay(&tree)));
        let mut verified = BTreeMap::new();
        let mut self_verified = BTreeMap::new();
        let mut verify_timeouts = 0;
        let mut failures = BTreeMap::new();
        for feature in &self.task.features {
            let own = self.verify_run(ws, feature, None, own_key).check()?;
            verify_timeouts += own.timeouts;
            let own_check = own.check;
            let truth = match (overlay, overlaid_key) {
                (Some(o), Some(key)) => {
                    let truth = self.verify_run(ws, feature, Some(o), key).check()?;
                    verify_timeouts += truth.timeouts;
                    truth
                }
                _ => own,
            };
            if truth.check == Check::Fail
                && let Some(failure) = truth.failure
            {
                failures.insert(feature.id.clone(), failure);
            }
            self_verified.insert(feature.id.clone(), own_check);
            verified.insert(feature.id.clone(), truth.check);
            if let Some(late) = out_of_time() {
                return Err(late);
            }
        }

        let tests = tree
            .files
            .iter()
            .filter(|f| self.task.tests.glob.is_match(&f.path))
            .map(|f| {
                let text = String::from_utf8_lossy(&f.content);
                let count = self.task.tests.count_pattern.find_iter(&text).count() as u64;
                (f.path.clone(), count)
            })
            .collect();

        let progress = tree.get(PROGRESS_FILE);
        let progress_hash = progress.map(|f| blake3::hash(&f.content).to_hex().to_string());
        let progress_nonblank = progress.is_some_and(|f| {
            String::from_utf8_lossy(&f.content)
                .chars()
                .any(|c| !c.is_whitespace())
        });

        let effects_len = std::fs::metadata(&ws.effects_log).map_or(0, |m| m.len());
        if effects_len > limit {
            return Err(Error::Unobservable(format!(
                "the effects log holds {effects_len} bytes, more than max_tree_bytes = {limit}"
            )));
        }
        let effects = match std::fs::read(&ws.effects_log) {
            Ok(bytes) => String::from_utf8_lossy(&bytes)
                .lines()
                .map(str::trim_end)
                .filter(|l| !l.is_empty())
                .map(str::to_string)
                .collect(),
            Err(_) => Vec::new(),
        };

        Ok(Observation {
            list,
            verified,
            self_verified,
            tests,
            git_status: git_status_porcelain(&ws.work_dir),
            progress_hash,
            effects,
            tree_hash: tree.hash.to_hex().to_string(),
            verify_timeouts,
            schema: self.schema,
            progress_nonblank,
            failures,
            git_tree: crate::git::write_tree(&ws.work_dir, &ws.root().join(TREE_STORE)).ok(),
        })
    }
}
