//! Runs verify commands in scratch copies of the work directory, with and without the
//! oracle tests laid over them, memoized by a content hash. The tests a verify command
//! runs are the agent's code, so it can run in the same kind of sandbox as the
//! agent: the scratch copy writable, nothing of `oracle/` but the laid-over tests
//! visible, no network. The check whose answer is `verified` starts a known runner
//! through the harness's entry point, with a sentinel test that must fail
//! (`observe::entry`); every run, alone or in a batch, is judged by
//! [`VerifyRun::judge`].

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

use super::entry::{ENTRY_SOURCE, EntryCheck, RUNNER_CHANGED, lay_out, refused};
use super::in_container::InContainer;
use super::oracle::OracleTests;
use super::reward::RewardVerdict;
use super::runner_summary::{SUMMARY_TAIL_BYTES, missing_evidence};
use super::verify_cache::{Generations, Held};

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
    /// a failure or too few tests, the runner was changed, the sentinel test did not
    /// fail; `None` when the exit status says it.
    pub reason: Option<String>,
    /// What the run found of a runner changed during it or a sentinel test that did
    /// not fail as it must (counted in `verify_tamper`), as any run on the same tree
    /// finds it; `None` when nothing.
    pub tamper: Option<String>,
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

/// The bytes one generation of the cache may hold: two generations are at most twice
/// this (`verify_cache`).
const CACHE_GENERATION_BYTES: usize = 4 << 20;

/// Memo of verify results keyed by (hash of the tree the check sees, command, whether
/// it ran sandboxed). Shared by all trials of a run: identical trees give identical
/// answers unless a check reads outside the tree, in which case the suite turns the
/// cache off. A sandboxed and an unsandboxed answer never stand in for each other.
/// It holds a fixed budget of answers (`verify_cache`).
#[derive(Debug)]
pub struct VerifyCache {
    answers: Mutex<Generations<RunResult>>,
    hits: AtomicU64,
    runs: AtomicU64,
}

impl Default for VerifyCache {
    fn default() -> VerifyCache {
        VerifyCache {
            answers: Mutex::new(Generations::new(CACHE_GENERATION_BYTES)),
            hits: AtomicU64::new(0),
            runs: AtomicU64::new(0),
        }
    }
}

impl VerifyCache {
    fn get(&self, key: &blake3::Hash) -> Option<RunResult> {
        let found = self.answers.lock().ok()?.get(key);
        if found.is_some() {
            self.hits.fetch_add(1, Ordering::Relaxed);
        }
        found
    }

    /// Whether `key` has an answer, without counting a hit.
    fn peek(&self, key: &blake3::Hash) -> bool {
        self.answers.lock().is_ok_and(|a| a.contains(key))
    }

    /// (checks answered from the cache, verify commands actually run).
    pub fn stats(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.runs.load(Ordering::Relaxed),
        )
    }

    fn put(&self, key: blake3::Hash, result: RunResult) {
        if let Ok(mut answers) = self.answers.lock() {
            answers.put(key, result);
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

impl Held for RunResult {
    fn held_bytes(&self) -> usize {
        std::mem::size_of::<RunResult>()
            + self.failure().map_or(0, |f| {
                f.command.len()
                    + f.output.len()
                    + f.reason.as_ref().map_or(0, String::len)
                    + f.tamper.as_ref().map_or(0, String::len)
            })
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
    /// Start the runner through the harness's entry point, with a sentinel test (the
    /// check whose answer is `verified`); only where `runner` names a runner.
    pub through_entry: bool,
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
    /// Run in the sandbox, hiding these places; `None`: on the host.
    pub sandbox: Option<&'a Hidden>,
    /// Run in a fresh container of the task's image instead (then `sandbox` is `None`).
    pub container: Option<InContainer<'a>>,
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
        // The entry point's code is part of the question; the sentinel, drawn anew for
        // each run, is not: an honest tree passes and a changed runner fails whatever
        // it is, so an answer holds for every draw (except for code that recognizes
        // the sentinel, a limit the README names).
        if self.entry() {
            h.update(b"entry");
            h.update(blake3::hash(ENTRY_SOURCE.as_bytes()).as_bytes());
        }
        // One run has one sandbox for its checks: whether a check ran in it is the
        // part of the question it adds.
        h.update(if self.sandbox.is_some() {
            b"sandbox"
        } else {
            b"host   "
        });
        // In a container, the image and the check's own files are part of it too.
        if let Some(c) = &self.container {
            h.update(b"container");
            h.update(c.task.image.id.as_bytes());
            if let Some(check) = c.check {
                h.update(format!("{check:?}").as_bytes());
            }
        }
        h.finalize()
    }

    /// One run in a fresh copy, so that one check cannot leave anything for the next;
    /// with the sandbox's limits it reached.
    fn run_once(&self) -> Result<(RunResult, Vec<String>)> {
        let scratch = scratch_dir("loopbench-verify-")?;
        let copy = scratch.path().join("tree");
        let prepared = match self.prepare(scratch.path())? {
            Ok(prepared) => prepared,
            Err(why) => return Ok((self.refusal(why), Vec::new())),
        };
        // Side effects of a check land in a throwaway log, never in the trial's.
        let effects = scratch.path().join("effects.log");
        let env: Vec<(String, OsString)> = vec![
            ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
            ("LOOPBENCH_EFFECTS".into(), effects.clone().into_os_string()),
        ];
        if let Some(container) = &self.container {
            std::fs::write(&effects, "")
                .io_context(|| format!("cannot write '{}'", effects.display()))?;
            let ran = container.run(
                scratch.path(),
                &copy,
                &prepared.command,
                &env,
                &prepared.entry_dir.iter().cloned().collect::<Vec<_>>(),
                &[effects],
                self.timeout,
                SUMMARY_TAIL_BYTES,
            )?;
            let ended = Ended {
                code: ran.outcome.code,
                timed_out: ran.outcome.timed_out,
                stdout: &ran.stdout,
                stderr: &ran.stderr,
            };
            let result = match ran.reward {
                // Judged by the reward the check wrote, whatever its exit status.
                Some(RewardVerdict::Passed { .. }) => RunResult::Passed,
                Some(RewardVerdict::Failed { reason }) => {
                    let mut failure = match self.judge(&ended, None) {
                        RunResult::Failed(f) | RunResult::TimedOut(f) => f,
                        RunResult::Passed => self.failure_of(&ended),
                    };
                    failure.reason = Some(reason);
                    RunResult::Failed(failure)
                }
                None => self.judge(&ended, prepared.entry.as_ref()),
            };
            return Ok((result, ran.outcome.limits_reached));
        }
        let layout = match self.sandbox {
            Some(hidden) => {
                // The sandbox can only show a file that exists.
                std::fs::write(&effects, "")
                    .io_context(|| format!("cannot write '{}'", effects.display()))?;
                let mut layout = hidden.layout(&copy, &[&effects], &[]);
                layout.readable.extend(prepared.entry_dir.clone());
                Some(layout)
            }
            None => None,
        };
        let (outcome, stdout, stderr) = ShellCommand {
            script: &prepared.command,
            cwd: &copy,
            env: &env,
            timeout: self.timeout,
            isolation: layout.as_ref().map_or(Isolation::Host, Isolation::Sandbox),
        }
        .run_keeping_tails(SUMMARY_TAIL_BYTES)
        .io_context(|| format!("cannot run verify command '{}'", self.command))?;
        let ended = Ended {
            code: outcome.code,
            timed_out: outcome.timed_out,
            stdout: &stdout,
            stderr: &stderr,
        };
        let result = self.judge(&ended, prepared.entry.as_ref());
        Ok((result, outcome.limits_reached))
    }

    /// The run a batch made of this check (laid out by [`VerifyRun::prepare`] as
    /// `prepared`), judged as [`VerifyRun::check`] judges its own.
    pub fn ran_in_batch(&self, ran: &crate::sandbox::BatchRan, prepared: &Prepared) -> Ran {
        let ended = Ended {
            code: ran.code,
            timed_out: ran.timed_out,
            stdout: &ran.stdout,
            stderr: &ran.stderr,
        };
        Ran {
            result: self.judge(&ended, prepared.entry.as_ref()),
            limits_reached: Vec::new(),
            elapsed: ran.elapsed,
        }
    }

    /// The failure of a run that exited 0 and still failed (a container check whose
    /// reward says so): its exit status and the end of its output.
    fn failure_of(&self, ended: &Ended<'_>) -> Failure {
        let mut both = ended.stdout.to_vec();
        both.extend_from_slice(ended.stderr);
        Failure {
            command: self.command.to_string(),
            exit: ended.code,
            output: String::from_utf8_lossy(crate::process::last_bytes(&both, OUTPUT_TAIL_BYTES))
                .into_owned(),
            reason: None,
            tamper: None,
        }
    }

    /// Whether a run starts its runner through the entry point.
    fn entry(&self) -> bool {
        self.through_entry && !self.runner.exit_only()
    }

    /// Why this check cannot run at all, if it cannot: it should go through the entry
    /// point, and its command starts the runner where the entry point cannot go.
    pub fn refused(&self) -> Option<String> {
        self.entry()
            .then(|| refused(self.command, self.runner))
            .flatten()
    }

    /// The answer of a check that could not run ([`VerifyRun::refused`]).
    fn refusal(&self, why: String) -> RunResult {
        RunResult::Failed(Failure {
            command: self.command.to_string(),
            exit: None,
            output: String::new(),
            reason: Some(why),
            tamper: None,
        })
    }

    /// Lays out a run in `dir` (a fresh directory of its own): the tree at `dir/tree`
    /// ([`VerifyRun::copy_into`]) and, for a run through the entry point, the entry
    /// point in `dir/entry` and the sentinel in the tree; with the command to run.
    /// `Ok(Err(why))` when the check cannot run ([`VerifyRun::refused`]).
    pub fn prepare(&self, dir: &Path) -> Result<std::result::Result<Prepared, String>> {
        if let Some(why) = self.refused() {
            return Ok(Err(why));
        }
        let tree = dir.join("tree");
        self.copy_into(&tree)?;
        if !self.entry() {
            return Ok(Ok(Prepared {
                command: self.command.to_string(),
                entry_dir: None,
                entry: None,
            }));
        }
        Ok(
            lay_out(&dir.join("entry"), &tree, self.command, self.runner)?.map(|laid| Prepared {
                command: laid.command,
                entry_dir: Some(laid.dir),
                entry: Some(laid.entry),
            }),
        )
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

    /// Whether a run passed, from how it ended, the ends of its output and, for a run
    /// through the entry point (`entry`), what the entry point reported. The one
    /// judging function of every run: alone, in a batch, for `check-task`.
    ///
    /// A pass needs exit status 0, no module of the tree standing in for the runner,
    /// the runner's summaries (every test passed, as many as expected) and, through
    /// the entry point, one report of it per run, each with the sentinel failed, no
    /// other test failed and the runner unchanged. What the entry point found wrong
    /// (or a summary without its report) is tampering, whatever the exit status.
    fn judge(&self, ended: &Ended<'_>, entry: Option<&EntryCheck>) -> RunResult {
        let failure = |reason: Option<String>, tamper: Option<String>| {
            // The end of the tests' own output: without the sentinel's, which would
            // fill it.
            let own = |bytes: &[u8]| match entry {
                Some(e) => e
                    .without_own_output(&String::from_utf8_lossy(bytes))
                    .into_bytes(),
                None => bytes.to_vec(),
            };
            let mut both = own(ended.stdout);
            both.extend_from_slice(&own(ended.stderr));
            let tail = crate::process::last_bytes(&both, OUTPUT_TAIL_BYTES);
            Failure {
                command: self.command.to_string(),
                exit: ended.code,
                output: String::from_utf8_lossy(tail).into_owned(),
                reason,
                tamper,
            }
        };
        if ended.timed_out {
            return RunResult::TimedOut(failure(None, None));
        }
        let runs = self.runner.unittest.saturating_add(self.runner.pytest);
        let found = entry.map(|e| e.findings(ended.stderr)).unwrap_or_default();
        let mut tampered = found.tampered;
        let exit = ended
            .code
            .map_or_else(|| "killed by a signal".to_string(), |c| format!("exit {c}"));
        if let Some(path) = self.stand_in.as_ref().filter(|_| !self.runner.exit_only()) {
            // (The entry point imports the installed runner, but the tree's may run
            // anywhere else the command imports it.)
            let also: String = tampered.iter().map(|t| format!("; {t}")).collect();
            return RunResult::Failed(failure(
                Some(format!(
                    "{exit}, but '{path}' of the tree stands in for the test runner, so its \
                     summary is no evidence{also}"
                )),
                stable(&tampered),
            ));
        }
        if ended.code != Some(0) {
            // The entry point ends a run it found wrong with a failure of its own.
            let reason = (!tampered.is_empty()).then(|| format!("{exit}: {}", tampered.join("; ")));
            return RunResult::Failed(failure(reason, stable(&tampered)));
        }
        let sentinels = if entry.is_some() { runs } else { 0 };
        let lacking = missing_evidence(
            self.runner,
            self.expected,
            sentinels,
            ended.stdout,
            ended.stderr,
        );
        if entry.is_some() {
            let finished = lacking.as_ref().is_none_or(|l| !l.unfinished);
            if finished && found.reports < runs {
                tampered.push(format!(
                    "the runner's summary came without the entry point's report ({} of {runs}): \
                     the run was ended or its output forged after the tests ran",
                    found.reports
                ));
            }
            if found.tests_failed && lacking.is_none() {
                tampered.push(
                    "the runner recorded a failure that its summary does not show: its \
                     output was forged"
                        .into(),
                );
            }
        }
        let all = (!tampered.is_empty()).then(|| tampered.join("; "));
        let reason = match (lacking, &all) {
            (None, None) => return RunResult::Passed,
            (Some(l), None) => l.why,
            (None, Some(t)) => format!("exit 0, but {t}"),
            (Some(l), Some(t)) => format!("{}; {t}", l.why),
        };
        RunResult::Failed(failure(Some(reason), stable(&tampered)))
    }
}

/// What a run found of tampering, as the same tree gives it whatever sentinel was
/// drawn: when the runner's machinery changed, that alone (whether the sentinel then
/// failed depends on which failing statement it was given); `None` when nothing.
fn stable(tampered: &[String]) -> Option<String> {
    let changed: Vec<&str> = tampered
        .iter()
        .map(String::as_str)
        .filter(|t| t.starts_with(RUNNER_CHANGED))
        .collect();
    if tampered.is_empty() {
        None
    } else if changed.is_empty() {
        Some(tampered.join("; "))
    } else {
        Some(changed.join("; "))
    }
}

/// How one run of a verify command ended: its exit status (`None`: killed) and the
/// ends of its output.
pub struct Ended<'o> {
    /// Exit code; `None` when it was killed.
    pub code: Option<i32>,
    /// Stopped by its time limit.
    pub timed_out: bool,
    /// The end of its stdout.
    pub stdout: &'o [u8],
    /// The end of its stderr.
    pub stderr: &'o [u8],
}

/// A run laid out in its directory ([`VerifyRun::prepare`]): the command to run and,
/// through the entry point, the entry point's directory (to show read-only) and what
/// its report is told apart by.
#[derive(Debug)]
pub struct Prepared {
    /// The command, its runs started through the entry point where they go through it.
    pub command: String,
    /// The directory of the entry point, beside the tree.
    pub entry_dir: Option<std::path::PathBuf>,
    /// What the entry point's report is told apart by.
    pub entry: Option<EntryCheck>,
}

#[cfg(test)]
#[path = "verify_tests.rs"]
mod tests;
