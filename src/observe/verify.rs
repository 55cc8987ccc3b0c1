//! Runs verify commands in scratch copies of the work directory, with and without the
//! oracle tests laid over them, memoized by a content hash. The tests a verify command
//! runs are the agent's code, so it can run under the same bubblewrap sandbox as the
//! agent: the scratch copy writable, nothing of `oracle/` but the laid-over tests
//! visible, no network.

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::{IoContext, Result};
use crate::fsutil::{copy_tree, copy_tree_except, scratch_dir};
use crate::process::{Isolation, ShellCommand};
use crate::sandbox::Hidden;
use crate::suite::RunnerCheck;

use super::oracle::OracleTests;
use super::runner_summary::{SUMMARY_TAIL_BYTES, missing_evidence};

/// The result of checking one feature on one tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Check {
    /// The verify command exited 0 (every repeat).
    Pass,
    /// The verify command failed or timed out (every repeat).
    Fail,
    /// Repeats on the same tree disagreed: never counted as either.
    Flaky,
}

impl Check {
    /// `Some(true)` for pass, `Some(false)` for fail, `None` for flaky.
    pub fn known(self) -> Option<bool> {
        match self {
            Check::Pass => Some(true),
            Check::Fail => Some(false),
            Check::Flaky => None,
        }
    }
}

/// How much of a failing check's output is kept: the last bytes, stdout then stderr.
pub const OUTPUT_TAIL_BYTES: usize = 2048;

/// What a failing verify run left: its exit status and the end of its output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The verify command.
    pub command: String,
    /// Exit code; `None` when it was killed (its time limit, or a signal).
    pub exit: Option<i32>,
    /// The last [`OUTPUT_TAIL_BYTES`] bytes of stdout then stderr, as text.
    pub output: String,
    /// Why a run that exited 0 did not pass: the runner's summary is missing, reports
    /// a failure or too few tests; `None` when the exit status says it.
    pub reason: Option<String>,
}

/// One verify command's answer on one tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// How the check came out.
    pub check: Check,
    /// Runs of it that reached the time limit (and so failed).
    pub timeouts: u32,
    /// The last failing run, when one failed.
    pub failure: Option<Failure>,
    /// The sandbox's limits a run of it reached (`max_pids`, `max_memory`), each as a
    /// sentence; empty for an answer from the cache.
    pub limits_reached: Vec<String>,
    /// Wall time of the slowest run of the command (its scratch copy included); zero
    /// for an answer from the cache.
    pub slowest: Duration,
}

/// Memo of verify results keyed by (hash of the tree the check sees, command, whether
/// it ran sandboxed). Shared by all trials of a run: identical trees give identical
/// answers unless a check reads outside the tree, in which case the suite turns the
/// cache off. A sandboxed and an unsandboxed answer never stand in for each other.
#[derive(Debug, Default)]
pub struct VerifyCache {
    results: Mutex<HashMap<blake3::Hash, RunResult>>,
    hits: AtomicU64,
    runs: AtomicU64,
}

impl VerifyCache {
    fn get(&self, key: &blake3::Hash) -> Option<RunResult> {
        let found = self.results.lock().ok()?.get(key).cloned();
        if found.is_some() {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    /// Whether `key` has an answer, without counting a hit.
    fn peek(&self, key: &blake3::Hash) -> bool {
        self.results.lock().is_ok_and(|map| map.contains_key(key))
    }

    /// (checks answered from the cache, verify commands actually run).
    pub fn stats(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.runs.load(Ordering::Relaxed),
        )
    }

    fn put(&self, key: blake3::Hash, result: RunResult) {
        if let Ok(mut map) = self.results.lock() {
            map.insert(key, result);
        }
    }
}

/// How one run of a verify command ended. A failure keeps the end of its output, so
/// that an answer from the cache explains itself as well as a fresh run.
#[derive(Debug, Clone, PartialEq, Eq)]
enum RunResult {
    Passed,
    Failed(Failure),
    TimedOut(Failure),
}

impl RunResult {
    fn failure(&self) -> Option<&Failure> {
        match self {
            RunResult::Passed => None,
            RunResult::Failed(f) | RunResult::TimedOut(f) => Some(f),
        }
    }
}

/// One run of a verify command made ahead of its [`VerifyRun::check_given`]: in a
/// batch of an observation's checks (`sandbox::Batch`).
#[derive(Debug, Clone)]
pub struct Ran {
    result: RunResult,
    limits_reached: Vec<String>,
    elapsed: Duration,
}

/// Everything needed to run one verify command.
pub struct VerifyRun<'a> {
    /// The live work directory (copied, never touched).
    pub work_dir: &'a Path,
    /// Entries of the work directory left out of the copy (`verify_ignores`, tool
    /// caches, and what the overlay displaces), as they are left out of `tree_key`,
    /// so that the key covers all the check can read. Called with each `/`-separated
    /// relative path; a directory left out goes with everything in it.
    pub leave_out: &'a dyn Fn(&str) -> bool,
    /// Content hash of what the check can read, with the overlay already laid over
    /// when there is one: a tree whose weakened tests are restored by the oracle shares
    /// its results with the same code under pristine tests.
    pub tree_key: blake3::Hash,
    /// The oracle to lay over the copy, if any.
    pub overlay: Option<&'a OracleTests>,
    /// The verify command.
    pub command: &'a str,
    /// What a pass needs besides exit status 0 (a known runner's summary).
    pub runner: &'a RunnerCheck,
    /// The tests the runner must report passed on this tree, when that is known.
    pub expected: Option<u64>,
    /// A module or package of the tree that stands in for the runner whose summary is
    /// needed (its path): then no summary is evidence, and the check fails.
    pub stand_in: Option<String>,
    /// Time limit of one run.
    pub timeout: Duration,
    /// `timeout` is what is left of the observation's time limit, shorter than the
    /// task's `verify_timeout`: a run it stops is not cached (another observation would
    /// give it its whole time).
    pub cut_short: bool,
    /// How many times to run it; more than one detects flakiness and skips the cache.
    pub repeats: u32,
    /// Memo, when the suite allows it.
    pub cache: Option<&'a VerifyCache>,
    /// Run under bubblewrap, hiding these places; `None`: on the host.
    pub sandbox: Option<&'a Hidden>,
}

impl VerifyRun<'_> {
    /// Checks the feature: cached when allowed, otherwise in fresh scratch copies.
    pub fn check(&self) -> Result<Verdict> {
        self.check_given(Vec::new())
    }

    /// [`VerifyRun::check`], taking the first runs from `ran` (runs of this check made
    /// already, in a batch) before running any more.
    pub fn check_given(&self, ran: Vec<Ran>) -> Result<Verdict> {
        let mut ran = ran.into_iter();
        let key = self.cache_key();
        let use_cache = self.repeats <= 1;
        if use_cache && let Some(result) = self.cache.and_then(|c| c.get(&key)) {
            return Ok(Verdict {
                check: if result == RunResult::Passed {
                    Check::Pass
                } else {
                    Check::Fail
                },
                timeouts: u32::from(matches!(result, RunResult::TimedOut(_))),
                failure: result.failure().cloned(),
                limits_reached: Vec::new(),
                slowest: Duration::ZERO,
            });
        }
        let mut passes = 0;
        let mut timeouts = 0;
        let mut last = RunResult::Passed;
        let mut failure = None;
        let mut limits_reached: Vec<String> = Vec::new();
        let mut slowest = Duration::ZERO;
        let runs = self.repeats.max(1);
        for _ in 0..runs {
            if let Some(cache) = self.cache {
                cache.runs.fetch_add(1, Ordering::Relaxed);
            }
            let reached;
            let took;
            (last, reached, took) = match ran.next() {
                Some(done) => (done.result, done.limits_reached, done.elapsed),
                None => {
                    let started = std::time::Instant::now();
                    let (result, reached) = self.run_once()?;
                    (result, reached, started.elapsed())
                }
            };
            slowest = slowest.max(took);
            for r in reached {
                if !limits_reached.contains(&r) {
                    limits_reached.push(r);
                }
            }
            match &last {
                RunResult::Passed => passes += 1,
                RunResult::TimedOut(f) => {
                    timeouts += 1;
                    failure = Some(f.clone());
                }
                RunResult::Failed(f) => failure = Some(f.clone()),
            }
        }
        let check = match passes {
            0 => Check::Fail,
            p if p == runs => Check::Pass,
            _ => Check::Flaky,
        };
        let stopped_early = self.cut_short && matches!(last, RunResult::TimedOut(_));
        if use_cache
            && !stopped_early
            && let Some(cache) = self.cache
        {
            cache.put(key, last);
        }
        Ok(Verdict {
            check,
            timeouts,
            failure,
            limits_reached,
            slowest,
        })
    }

    fn cache_key(&self) -> blake3::Hash {
        let mut h = blake3::Hasher::new();
        h.update(self.tree_key.as_bytes());
        h.update(self.command.as_bytes());
        // What counts as a pass is part of the question.
        h.update(&self.runner.unittest.to_le_bytes());
        h.update(&self.runner.pytest.to_le_bytes());
        h.update(&self.expected.map_or([0xff; 9], |n| {
            let mut b = [0; 9];
            b[1..].copy_from_slice(&n.to_le_bytes());
            b
        }));
        if let Some(path) = &self.stand_in {
            h.update(b"stand-in");
            h.update(path.as_bytes());
        }
        h.update(if self.sandbox.is_some() {
            b"bwrap"
        } else {
            b"host "
        });
        h.finalize()
    }

    /// One run in a fresh copy, so that one check cannot leave anything for the next;
    /// with the sandbox's limits it reached.
    fn run_once(&self) -> Result<(RunResult, Vec<String>)> {
        let scratch = scratch_dir("loopbench-verify-")?;
        let copy = scratch.path().join("tree");
        self.copy_into(&copy)?;
        // Side effects of a check land in a throwaway log, never in the trial's.
        let effects = scratch.path().join("effects.log");
        let env: Vec<(String, OsString)> = vec![
            ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
            ("LOOPBENCH_EFFECTS".into(), effects.clone().into_os_string()),
        ];
        let layout = match self.sandbox {
            Some(hidden) => {
                // bwrap can only bind a file that exists.
                std::fs::write(&effects, "")
                    .io_context(|| format!("cannot write '{}'", effects.display()))?;
                Some(hidden.layout(&copy, &[&effects], &[]))
            }
            None => None,
        };
        let (outcome, stdout, stderr) = ShellCommand {
            script: self.command,
            cwd: &copy,
            env: &env,
            timeout: self.timeout,
            isolation: layout.as_ref().map_or(Isolation::Host, Isolation::Sandbox),
        }
        .run_keeping_tails(SUMMARY_TAIL_BYTES)
        .io_context(|| format!("cannot run verify command '{}'", self.command))?;
        let result = self.judge(outcome.code, outcome.timed_out, &stdout, &stderr);
        Ok((result, outcome.limits_reached))
    }

    /// The run a batch made of this check, judged as [`VerifyRun::check`] judges its own.
    pub fn ran_in_batch(&self, ran: &crate::sandbox::BatchRan) -> Ran {
        Ran {
            result: self.judge(ran.code, ran.timed_out, &ran.stdout, &ran.stderr),
            limits_reached: Vec::new(),
            elapsed: ran.elapsed,
        }
    }

    /// The cache's key of this check, when the cache keeps its answer (on, and no
    /// repeats).
    pub fn cached_key(&self) -> Option<blake3::Hash> {
        (self.repeats <= 1 && self.cache.is_some()).then(|| self.cache_key())
    }

    /// Whether the cache holds an answer under `key` (a [`VerifyRun::cached_key`]).
    pub fn cache_has(&self, key: &blake3::Hash) -> bool {
        self.cache.is_some_and(|c| c.peek(key))
    }

    /// The tree the check runs in, made at `copy`: the work directory without what
    /// `leave_out` names, with the oracle laid over when there is one.
    pub fn copy_into(&self, copy: &Path) -> Result<()> {
        copy_tree_except(self.work_dir, copy, true, self.leave_out)?;
        if let Some(oracle) = self.overlay {
            copy_tree(&oracle.dir, &copy.join(oracle.target), false)?;
        }
        Ok(())
    }

    /// Whether a run passed, from how it ended and the ends of its output.
    fn judge(&self, code: Option<i32>, timed_out: bool, stdout: &[u8], stderr: &[u8]) -> RunResult {
        let failure = |reason: Option<String>| {
            let mut both = stdout.to_vec();
            both.extend_from_slice(stderr);
            let tail = crate::process::last_bytes(&both, OUTPUT_TAIL_BYTES);
            Failure {
                command: self.command.to_string(),
                exit: code,
                output: String::from_utf8_lossy(tail).into_owned(),
                reason,
            }
        };
        if timed_out {
            RunResult::TimedOut(failure(None))
        } else if code != Some(0) {
            RunResult::Failed(failure(None))
        } else if let Some(path) = self.stand_in.as_ref().filter(|_| !self.runner.exit_only()) {
            RunResult::Failed(failure(Some(format!(
                "exit 0, but '{path}' of the tree stands in for the test runner, so its \
                 summary is no evidence"
            ))))
        } else if let Some(why) = missing_evidence(self.runner, self.expected, stdout, stderr) {
            RunResult::Failed(failure(Some(why)))
        } else {
            RunResult::Passed
        }
    }
}
