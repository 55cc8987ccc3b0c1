//! One observation of a work directory: the parsed list, every feature checked twice,
//! test counts per file, git status, the progress notes' hash, and the counts of the
//! harness's effects record.

use std::collections::BTreeMap;

use super::hooks::{CheckPaths, TOOL_CACHES, hook_files};
use super::list_file::list_through_link;
use super::oracle::OracleTests;
use super::verify::{Check, Failure, VerifyCache};
use crate::effects::EffectsTally;
use crate::error::{Error, Result};
use crate::feature_list::{self, FeatureList, ListFormat, ListSchema};
use crate::fsutil::{TreeSize, TreeSnapshot, skipped_with_parents, tree_size_within};
use crate::sandbox::Hidden;
use crate::sandbox::container::TaskContainer;
use crate::suite::{CleanTree, Task};
use crate::workspace::{PROGRESS_FILE, Workspace};

mod checks;

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
    /// Whether the task's tests lie in the work directory, so that removing or
    /// weakening them can be seen; false for a task whose own checks bring their
    /// tests (a Harbor task's `/tests`), whose `tests_removed` and `tests_weakened`
    /// are then null.
    pub tests_measured: bool,
    /// The work directory holds exactly `HEAD^{tree}` as `git add -A` takes it, judged
    /// with the harness's own index and configuration (false when git could not tell);
    /// under the suite's strict reading (`clean_tree = "strict"`), also no git-ignored
    /// file a check can read ([`Observation::ignored_seen`]).
    pub clean: bool,
    /// blake3 of PROGRESS.md, `None` when absent.
    pub progress_hash: Option<String>,
    /// The harness's effects record when this observation was taken: how many lines,
    /// how many repeated an earlier key, and the last session's repeated keys (a
    /// bounded list). Never the lines themselves.
    pub effects: EffectsTally,
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
    /// What can forge a check, each with a hash of what it is, so that a session's new
    /// or changed ones are known (`verify_tamper`): files that can hook a check
    /// (`observe::hooks`), outside the pristine tests, by path, with their content and
    /// mode; and each check that found its runner changed or its sentinel test not
    /// failing, as `check of F1: what it found`.
    pub hooks: BTreeMap<String, blake3::Hash>,
    /// The git tree of the work directory as `git add -A && git write-tree` gives it
    /// (uncommitted work included), with every git-ignored file a check can read added
    /// too; `None` when git could not tell.
    pub git_tree: Option<String>,
    /// The git-ignored files a check can read (outside `verify_ignores` and the tool
    /// caches), `/`-separated paths in git's order: work the checks saw that a commit
    /// would leave out.
    pub ignored_seen: Vec<String>,
    /// Sentences for the record of the session that left this tree: the sandbox's
    /// limits its checks reached, each naming the feature ("check of F1: reached
    /// max_pids = ..."), and why the tree could not be recorded where it could not (a
    /// path git refuses, one too long to open: then it has no `git_tree` and is not
    /// clean).
    pub notes: Vec<String>,
    /// The harness could not observe the work directory at this moment (a tree past its
    /// bounds, a work directory that is gone, an observation past its time limit): the
    /// observation is what was known before ([`Observation::unobserved`]).
    pub unobserved: bool,
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
            clean: false,
            verify_timeouts: 0,
            progress_nonblank: false,
            git_tree: None,
            ignored_seen: Vec::new(),
            notes: Vec::new(),
            unobserved: true,
            ..self.clone()
        }
    }

    /// Makes `hooks` the hook files the next session's `verify_tamper` is judged
    /// against, in place of this observation's own. After the initializer session the
    /// trial loop passes the hooks the trial started with: `verify_tamper` is a rate over
    /// coding sessions, so a hook the initializer planted is counted in the first coding
    /// session, the first whose checks it can forge (docs/metrics.md).
    pub fn judge_next_hooks_against(&mut self, hooks: BTreeMap<String, blake3::Hash>) {
        self.hooks = hooks;
    }

    /// Whether every canonical feature is verified.
    pub fn all_verified(&self) -> bool {
        self.verified.values().all(|c| *c == Check::Pass)
    }

    /// Whether the work tree is clean: everything in it is committed (`HEAD^{tree}`
    /// is the tree of the work directory), whatever the agent's index or
    /// configuration says.
    pub fn clean_tree(&self) -> bool {
        self.clean
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
    /// The task's containers, where its checks run in them instead.
    container: Option<std::sync::Arc<TaskContainer>>,
    /// How the tree is judged clean.
    clean_tree: CleanTree,
    /// The programs the verify commands start and where their Python imports from,
    /// for [`hook_files`] and [`runner_stand_in`].
    paths: CheckPaths,
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
        let paths = CheckPaths::of(
            task.features.iter().map(|f| f.verify.as_str()),
            oracle.as_ref(),
        );
        Ok(Observer {
            task,
            format,
            schema: ListSchema::Passes,
            oracle,
            cache,
            repeats,
            sandbox: None,
            container: None,
            clean_tree: CleanTree::Git,
            paths,
        })
    }

    /// Runs every verify command in the sandbox, hiding `hidden` (the agent's code
    /// must not reach the oracle, the run directory or other trials through its tests).
    pub fn sandboxed(mut self, hidden: Hidden) -> Observer<'a> {
        self.sandbox = Some(hidden);
        self
    }

    /// Runs every check in a fresh container of the task's image (`container`) instead
    /// of on the host or under bubblewrap.
    pub fn in_container(mut self, container: std::sync::Arc<TaskContainer>) -> Observer<'a> {
        self.sandbox = None;
        self.container = Some(container);
        self
    }

    /// Judges the tree clean under `reading` (as git says unless told).
    pub fn with_clean_tree(mut self, reading: CleanTree) -> Observer<'a> {
        self.clean_tree = reading;
        self
    }

    /// Reads the list under `schema` (the passes schema unless told).
    pub fn with_schema(mut self, schema: ListSchema) -> Observer<'a> {
        self.schema = schema;
        self
    }

    /// Whether verify commands run sandboxed.
    pub fn is_sandboxed(&self) -> bool {
        self.sandbox.is_some() || self.container.is_some()
    }

    /// The list file: from the tree, or through a symlink inside the work directory
    /// (see [`list_through_link`]); any other non-regular file is unparseable.
    fn read_list(&self, ws: &Workspace, tree: &TreeSnapshot) -> Result<ListState> {
        let name = self.format.file_name();
        let bytes: std::borrow::Cow<'_, [u8]> = match tree.get(name) {
            Some(file) => std::borrow::Cow::Borrowed(&file.content),
            None if tree.links.iter().any(|(path, _)| path == name) => {
                match list_through_link(&ws.work_dir, name, self.task.max_tree_bytes) {
                    Ok(bytes) => std::borrow::Cow::Owned(bytes),
                    Err(reason) => return Ok(ListState::Unparseable(reason)),
                }
            }
            None => match std::fs::symlink_metadata(ws.work_dir.join(name)) {
                Ok(meta) => {
                    return Ok(ListState::Unparseable(format!(
                        "the list file is {}, not a regular file",
                        crate::fsutil::file_kind(meta.file_type())
                    )));
                }
                Err(_) => return Ok(ListState::Missing),
            },
        };
        Ok(match std::str::from_utf8(&bytes) {
            Err(_) => ListState::Unparseable("the file is not UTF-8 text".into()),
            Ok(text) => {
                let canonical: Vec<&str> =
                    self.task.features.iter().map(|f| f.id.as_str()).collect();
                match feature_list::parse_with(self.format, self.schema, text)
                    .and_then(|list| feature_list::with_canonical_ids(list, &canonical))
                {
                    Ok(list) => ListState::Parsed(list),
                    Err(e) => ListState::Unparseable(e.to_string()),
                }
            }
        })
    }

    /// Whether a path of the work directory is out of every check's sight: matched by
    /// `verify_ignores` or in a tool cache (`__pycache__`, ...), or under one.
    fn unseen(&self, path: &str) -> bool {
        let ignores = &self.task.verify_ignores;
        skipped_with_parents(path, |p| {
            ignores.is_match(p) || TOOL_CACHES.contains(&p.rsplit('/').next().unwrap_or(p))
        })
    }

    /// Observes the work directory of `ws` without changing it. A tree past the task's
    /// `max_tree_bytes` or `max_tree_files`, one that is gone, or an observation that
    /// runs past `observe_timeout` is [`Error::Unobservable`].
    pub fn observe(&self, ws: &Workspace) -> Result<Observation> {
        let started = std::time::Instant::now();
        self.check_tree_size(ws)?;
        let tree = TreeSnapshot::read(&ws.work_dir)?;

        let list = self.read_list(ws, &tree)?;
        let checks = self.run_checks(ws, &tree, started)?;
        let tests = self.count_tests(&tree);

        let progress = tree.get(PROGRESS_FILE);
        let progress_hash = progress.map(|f| blake3::hash(&f.content).to_hex().to_string());
        let progress_nonblank = progress.is_some_and(|f| {
            String::from_utf8_lossy(&f.content)
                .chars()
                .any(|c| !c.is_whitespace())
        });

        let mut hooks = hook_files(&tree, &self.paths, self.oracle.as_ref());
        hooks.extend(checks.tampered.iter().map(|(id, found)| {
            (
                format!("check of {id}: {found}"),
                blake3::hash(found.as_bytes()),
            )
        }));
        let store = ws.root().join(TREE_STORE);
        // The tree holds every file a check can read, whatever a `.gitignore` says.
        let seen = |path: &str| !self.unseen(path);
        let mut notes = checks.limits_reached;
        let trees = match crate::git::write_tree(&ws.work_dir, &store, &seen) {
            Ok(trees) => Some(trees),
            Err(e) => {
                notes.push(unrecorded_tree(e, &store)?);
                None
            }
        };
        let git_clean = crate::git::is_clean(&ws.work_dir, &store, trees.as_ref(), &seen);
        let (git_tree, ignored_seen) = match trees {
            Some(t) => (Some(t.seen), t.ignored_seen),
            None => (None, Vec::new()),
        };
        let clean = git_clean && (self.clean_tree == CleanTree::Git || ignored_seen.is_empty());
        Ok(Observation {
            list,
            verified: checks.verified,
            self_verified: checks.self_verified,
            tests,
            tests_measured: self.task.tests_in_work_dir(),
            clean,
            progress_hash,
            effects: ws.effects.tally(),
            tree_hash: tree.hash.to_hex().to_string(),
            verify_timeouts: checks.verify_timeouts,
            schema: self.schema,
            progress_nonblank,
            failures: checks.failures,
            git_tree,
            ignored_seen,
            hooks,
            notes,
            unobserved: false,
        })
    }

    /// The work directory is there and within the task's `max_tree_bytes` and
    /// `max_tree_files` (else it is not observed at all).
    fn check_tree_size(&self, ws: &Workspace) -> Result<()> {
        let limit = self.task.max_tree_bytes;
        if !ws.work_dir.is_dir() {
            return Err(Error::Unobservable(
                "the work directory is gone (deleted or replaced during the session)".into(),
            ));
        }
        let max_files = self.task.max_tree_files;
        match tree_size_within(&ws.work_dir, limit, max_files)? {
            TreeSize::Within { .. } => Ok(()),
            TreeSize::OverBytes => Err(Error::Unobservable(format!(
                "the work directory holds more than max_tree_bytes = {limit} bytes of \
                 files (without .git); it was not observed"
            ))),
            TreeSize::OverEntries => Err(Error::Unobservable(format!(
                "the work directory holds more than max_tree_files = {max_files} files \
                 and directories (without .git); it was not observed"
            ))),
        }
    }

    /// The matches of the task's count pattern in each of its test files.
    fn count_tests(&self, tree: &TreeSnapshot) -> BTreeMap<String, u64> {
        tree.files
            .iter()
            .filter(|f| self.task.tests.glob.is_match(&f.path))
            .map(|f| {
                let text = String::from_utf8_lossy(&f.content);
                let count = self.task.tests.count_pattern.find_iter(&text).count() as u64;
                (f.path.clone(), count)
            })
            .collect()
    }
}

/// What a work directory's tree that could not be recorded in `store` means: the note
/// for the record of the session that left it (the tree is not clean), or, where the
/// harness's own disk is full, the harness's failure (an out-of-room error), never a
/// tree that is not clean counted against the agent.
fn unrecorded_tree(error: Error, store: &std::path::Path) -> Result<String> {
    let disk = store.parent().unwrap_or(store);
    if crate::fsutil::out_of_room(&error) || crate::fsutil::scratch_full(disk) {
        return Err(Error::io(
            format!(
                "cannot record the work directory's tree in '{}': {error}",
                store.display()
            ),
            std::io::Error::from_raw_os_error(nix::libc::ENOSPC),
        ));
    }
    Ok(format!(
        "the work directory's tree could not be recorded, so it is not clean: {}",
        crate::error::with_causes(&error)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tree_that_cannot_be_recorded_is_a_note_unless_the_harnesss_disk_is_full() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("trees.git");
        let refused = Error::Tool("'w/.GIT' cannot be recorded: git refuses it".into());
        let note = unrecorded_tree(refused, &store).unwrap();
        assert!(
            note.starts_with(
                "the work directory's tree could not be recorded, so it is not clean:"
            ) && note.contains("'w/.GIT' cannot be recorded"),
            "{note}"
        );
        let full = Error::io(
            "cannot write a blob",
            std::io::Error::from_raw_os_error(nix::libc::ENOSPC),
        );
        let failed = unrecorded_tree(full, &store).unwrap_err();
        assert!(crate::fsutil::out_of_room(&failed), "{failed}");
        assert!(failed.to_string().contains("trees.git"), "{failed}");
    }
}
