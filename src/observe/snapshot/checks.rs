//! The checks of one observation: each feature's verify command on the tree as the
//! checks see it (without what no check reads), with the agent's own tests and with the
//! pristine tests laid over, in scratch copies, run ahead in one batch where the
//! sandbox allows; and what they found.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use super::Observer;
use crate::error::{Error, Result};
use crate::fsutil::{TreeSnapshot, skipped_with_parents};
use crate::observe::batched::{Ahead, CheckId, run_ahead};
use crate::observe::hooks::{links_lead_outside, runner_stand_in};
use crate::observe::oracle::OracleTests;
use crate::observe::runner_summary::expected_tests;
use crate::observe::verify::{Check, Failure, Ran, Verdict, VerifyCache, VerifyRun};
use crate::sandbox::Batch;
use crate::suite::Feature;
use crate::workspace::Workspace;

/// Whether any entry of `tree` lies in a tool cache directory (`__pycache__`, ...).
fn tree_has_tool_cache(tree: &TreeSnapshot) -> bool {
    let cached = |path: &str| crate::observe::hooks::in_tool_cache(path);
    tree.others.iter().any(|e| cached(&e.path))
        || tree.files.iter().any(|f| cached(&f.path))
        || tree.links.iter().any(|(p, _)| cached(p))
}

/// A tree as the checks see it ([`Observer::checked_tree`]).
pub(super) struct CheckedTree<'t> {
    /// The tree without what no check reads.
    visible: std::borrow::Cow<'t, TreeSnapshot>,
    /// The pristine tests to lay over a check's copy, unless they are already in place.
    overlay: Option<&'t OracleTests>,
    /// Entries of the tree the overlay leaves out of a check's copy.
    left_out: std::collections::BTreeSet<String>,
    /// `visible` with the overlay laid over it.
    overlaid: Option<TreeSnapshot>,
}
impl<'a> Observer<'a> {
    /// One verify run of `feature` on `seen`, the tree as the check sees it (the
    /// overlay laid over when there is one), copied from the work directory without
    /// what `leave_out` names, with what is left of the observation's time. A run with
    /// the overlay is the truth, and starts a known runner through the entry point; a
    /// caller whose run without it is the truth says so (`through_entry`).
    pub(super) fn verify_run<'r>(
        &'r self,
        work_dir: &'r Path,
        feature: &'r Feature,
        overlay: Option<&'r OracleTests>,
        seen: &TreeSnapshot,
        leave_out: &'r dyn Fn(&str) -> bool,
        (cache, time_left): (Option<&'r VerifyCache>, std::time::Duration),
    ) -> VerifyRun<'r> {
        let full = self.task.verify_timeout;
        VerifyRun {
            work_dir,
            leave_out,
            tree_key: seen.hash,
            overlay,
            command: &feature.verify,
            runner: &feature.runner,
            expected: expected_tests(&feature.runner, seen, &self.task.tests.count_pattern),
            stand_in: runner_stand_in(seen, &self.paths.roots, &feature.runner),
            through_entry: overlay.is_some(),
            timeout: full.min(time_left),
            cut_short: time_left < full,
            repeats: self.repeats,
            cache,
            sandbox: self.sandbox.as_ref(),
            container: self
                .container
                .as_deref()
                .map(|task| crate::observe::InContainer {
                    task,
                    check: feature.container.as_ref(),
                }),
        }
    }

    /// The tree as the checks see it: without `verify_ignores` and tool caches, and
    /// with the pristine tests laid over it when the task has them and they are not
    /// already in place.
    pub(super) fn checked_tree<'t>(&'t self, tree: &'t TreeSnapshot) -> CheckedTree<'t> {
        let visible = if self.task.verify_ignores.is_empty() && !tree_has_tool_cache(tree) {
            std::borrow::Cow::Borrowed(tree)
        } else {
            std::borrow::Cow::Owned(tree.without(|path: &str| self.unseen(path)))
        };
        let overlay = self.oracle.as_ref().filter(|o| !o.already_in(&visible));
        let left_out = overlay.map(|o| o.left_out(&visible)).unwrap_or_default();
        let overlaid = overlay.map(|o| o.overlay(&visible));
        CheckedTree {
            visible,
            overlay,
            left_out,
            overlaid,
        }
    }

    /// The `verified` answer of each of `features` on the tree at `work_dir`: the same
    /// scratch copies, pristine-test overlay, sandbox and runner evidence as an
    /// observation's, each run given the task's whole `verify_timeout` and this
    /// observer's repeats. The tree is only read. For `check-task`, which asks of a
    /// task's own trees (its `repo/`, its gold) what a run would ask of an agent's.
    pub fn verify_truth(&self, work_dir: &Path, features: &[&Feature]) -> Result<Vec<Verdict>> {
        let tree = TreeSnapshot::read(work_dir)?;
        let CheckedTree {
            visible,
            overlay,
            left_out,
            overlaid,
        } = self.checked_tree(&tree);
        let leave_out =
            |path: &str| self.unseen(path) || skipped_with_parents(path, |p| left_out.contains(p));
        let cache = self.cache.filter(|_| !links_lead_outside(&visible));
        let seen = overlaid.as_ref().unwrap_or(&visible);
        let full = self.task.verify_timeout;
        features
            .iter()
            .map(|feature| {
                let run =
                    self.verify_run(work_dir, feature, overlay, seen, &leave_out, (cache, full));
                VerifyRun {
                    through_entry: true,
                    ..run
                }
                .check()
            })
            .collect()
    }

    /// Runs every feature's check on `tree`: with the agent's own tests, and with the
    /// pristine tests laid over when there are any, all within what is left of
    /// `observe_timeout` since `started`.
    pub(super) fn run_checks(
        &self,
        ws: &Workspace,
        tree: &TreeSnapshot,
        started: std::time::Instant,
    ) -> Result<Checks> {
        let out_of_time = || self.out_of_time(started);
        let unseen = |path: &str| self.unseen(path);
        let CheckedTree {
            visible,
            overlay,
            left_out,
            overlaid,
        } = self.checked_tree(tree);
        let leave_out_own = |path: &str| unseen(path);
        let leave_out_overlaid =
            |path: &str| unseen(path) || skipped_with_parents(path, |p| left_out.contains(p));
        // A symlink out of the tree lets a check read what the key does not cover.
        let cache = self.cache.filter(|_| !links_lead_outside(&visible));
        let mut checks = Checks::default();
        // Every check runs within what is left of observe_timeout: a deadline, not a
        // look at the clock between features.
        let time_left = || self.task.observe_timeout.saturating_sub(started.elapsed());
        // Without an overlay to lay over, the run with the agent's own tests is the
        // truth, and goes through the entry point.
        let own_run = |feature, left| VerifyRun {
            through_entry: overlay.is_none(),
            ..self.verify_run(
                &ws.work_dir,
                feature,
                None,
                &visible,
                &leave_out_own,
                (cache, left),
            )
        };
        // With the pristine tests laid over, when the task has them.
        let truth_run = |feature, left| {
            let (o, seen) = (overlay?, overlaid.as_ref()?);
            Some(self.verify_run(
                &ws.work_dir,
                feature,
                Some(o),
                seen,
                &leave_out_overlaid,
                (cache, left),
            ))
        };
        let bytes = |t: &TreeSnapshot| t.files.iter().map(|f| f.content.len() as u64).sum::<u64>();
        let tree_bytes = bytes(&visible).max(overlaid.as_ref().map_or(0, bytes));
        let mut ahead = self.ran_ahead(&own_run, &truth_run, tree_bytes, started)?;
        for (i, feature) in self.task.features.iter().enumerate() {
            if let Some(late) = out_of_time() {
                return Err(late);
            }
            let own = own_run(feature, time_left())
                .check_given(ahead.remove(&(i, false)).unwrap_or_default())?;
            checks.verify_timeouts += own.timeouts;
            let own_check = own.check;
            let mut reached = own.limits_reached.clone();
            let truth = match truth_run(feature, time_left()) {
                Some(run) => {
                    let truth = run.check_given(ahead.remove(&(i, true)).unwrap_or_default())?;
                    checks.verify_timeouts += truth.timeouts;
                    reached.extend(truth.limits_reached.iter().cloned());
                    truth
                }
                None => own,
            };
            checks.add(&feature.id, own_check, truth, reached);
            if let Some(late) = out_of_time() {
                return Err(late);
            }
        }
        Ok(checks)
    }

    /// Every check of the observation (`own_run` and `truth_run` of each feature) made
    /// ahead in one batch under the sandbox (none without one, or when a batch is not
    /// possible or gave no verdict); a batch past what was left of `observe_timeout`
    /// makes the observation fail. `tree_bytes`: the size of one scratch copy.
    fn ran_ahead<'f, 'r>(
        &'f self,
        own_run: &impl Fn(&'f Feature, std::time::Duration) -> VerifyRun<'r>,
        truth_run: &impl Fn(&'f Feature, std::time::Duration) -> Option<VerifyRun<'r>>,
        tree_bytes: u64,
        started: std::time::Instant,
    ) -> Result<HashMap<CheckId, Vec<Ran>>> {
        // Planned only where a batch can run: planning counts each run's expected tests
        // in the tree, work wasted where the checks run one sandbox each anyway.
        let Some(hidden) = self.sandbox.as_ref().filter(|h| Batch::possible(h)) else {
            return Ok(HashMap::new());
        };
        let left = self.task.observe_timeout.saturating_sub(started.elapsed());
        let mut planned = Vec::new();
        for (i, feature) in self.task.features.iter().enumerate() {
            planned.push(((i, false), own_run(feature, left)));
            planned.extend(truth_run(feature, left).map(|run| ((i, true), run)));
        }
        match run_ahead(hidden, &planned, tree_bytes, left)? {
            Ahead::Ran(ran) => Ok(ran),
            Ahead::OutOfTime => Err(self.out_of_time(started).unwrap_or_else(|| {
                Error::Unobservable("the checks ran past observe_timeout".into())
            })),
        }
    }

    /// The error of an observation that has run past `observe_timeout` since
    /// `started`, if it has.
    pub(super) fn out_of_time(&self, started: std::time::Instant) -> Option<Error> {
        let limit = self.task.observe_timeout;
        (started.elapsed() > limit).then(|| {
            Error::Unobservable(format!(
                "observing the work directory took longer than observe_timeout = {}; \
                 it was not observed",
                humantime::format_duration(limit)
            ))
        })
    }
}

/// What the checks of one observation found.
#[derive(Default)]
pub(super) struct Checks {
    pub(super) verified: BTreeMap<String, Check>,
    pub(super) self_verified: BTreeMap<String, Check>,
    pub(super) verify_timeouts: u32,
    pub(super) failures: BTreeMap<String, Failure>,
    pub(super) limits_reached: Vec<String>,
    /// Per feature whose truth found its runner changed or its sentinel not failing:
    /// what it found (`verify_tamper`).
    pub(super) tampered: BTreeMap<String, String>,
}

impl Checks {
    /// Adds one feature's checks: with the agent's own tests (`own`) and the one that
    /// counts (`truth`, with the pristine tests where there are any), and the sandbox
    /// limits they reached.
    fn add(&mut self, id: &str, own: Check, truth: Verdict, mut reached: Vec<String>) {
        reached.dedup();
        self.limits_reached
            .extend(reached.into_iter().map(|r| format!("check of {id}: {r}")));
        if let Some(tamper) = truth.failure.as_ref().and_then(|f| f.tamper.clone()) {
            self.tampered.insert(id.to_string(), tamper);
        }
        if truth.check == Check::Fail
            && let Some(failure) = truth.failure
        {
            self.failures.insert(id.to_string(), failure);
        }
        self.self_verified.insert(id.to_string(), own);
        self.verified.insert(id.to_string(), truth.check);
    }
}
