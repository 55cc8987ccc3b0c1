//! An observation's checks run ahead in one sandbox (`sandbox::Batch`) instead of a
//! sandbox each, where the sandbox allows it: the same scratch copies, commands and
//! time limits, judged afterwards by [`VerifyRun::check_given`] exactly as runs of
//! their own. A batch that gives no verdict leaves every check to run alone.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use super::runner_summary::SUMMARY_TAIL_BYTES;
use super::verify::{Prepared, Ran, VerifyRun};
use crate::error::{IoContext, Result};
use crate::sandbox::{Batch, BatchEnd, Hidden};

/// The most bytes of scratch copies one batch makes at once (every copy of its checks
/// exists before the first runs); past it, the checks run one sandbox each.
pub const BATCH_MAX_BYTES: u64 = 64 * 1024 * 1024;

/// One check of an observation: which feature, and whether on the tree with the
/// pristine tests laid over (the truth) or with the agent's own.
pub type CheckId = (usize, bool);

/// What running ahead gave.
pub enum Ahead {
    /// The runs made, per check (empty: every check runs alone).
    Ran(HashMap<CheckId, Vec<Ran>>),
    /// The batch ran past what was left of the observation's time.
    OutOfTime,
}

/// Runs, in one batch under `hidden` (where [`Batch::possible`]: the caller asks before
/// it plans the checks), every run of `checks` that the cache does not
/// answer (one of each question when the cache is on: the others are answered by it
/// once the first is judged) and that can run at all ([`VerifyRun::refused`]); each
/// laid out by [`VerifyRun::prepare`] as a run of its own would be, the entry point
/// and the sentinel included. `tree_bytes`: the size of one scratch copy.
pub fn run_ahead(
    hidden: &Hidden,
    checks: &[(CheckId, VerifyRun<'_>)],
    tree_bytes: u64,
    time_left: Duration,
) -> Result<Ahead> {
    let none = || Ok(Ahead::Ran(HashMap::new()));
    let mut asked = HashSet::new();
    let needed: Vec<&(CheckId, VerifyRun<'_>)> = checks
        .iter()
        .filter(|(_, run)| run.refused().is_none())
        .filter(|(_, run)| match run.cached_key() {
            Some(key) => !run.cache_has(&key) && asked.insert(key),
            None => true,
        })
        .collect();
    let runs: u64 = needed
        .iter()
        .map(|(_, r)| u64::from(r.repeats.max(1)))
        .sum();
    if runs < 2 || runs.saturating_mul(tree_bytes) > BATCH_MAX_BYTES {
        return none();
    }
    let mut batch = Batch::new()?;
    let mut laid: Vec<Vec<Prepared>> = Vec::with_capacity(needed.len());
    for (_, run) in &needed {
        let mut runs = Vec::new();
        for _ in 0..run.repeats.max(1) {
            let check = batch
                .add(run.command, run.timeout)
                .io_context(|| "cannot prepare a batch of checks".into())?;
            let Ok(prepared) = run.prepare(&check.dir)? else {
                // Alone, the check fails with the reason.
                return none();
            };
            check.command.clone_from(&prepared.command);
            runs.push(prepared);
        }
        laid.push(runs);
    }
    let end = batch
        .run(hidden, time_left, SUMMARY_TAIL_BYTES)
        .io_context(|| "cannot run a batch of checks".into())?;
    let ran = match end {
        BatchEnd::Ran(ran) => ran,
        // What kept the batch from a verdict is known again, for the check it concerns,
        // when the checks run alone.
        BatchEnd::Unused(_) => return none(),
        BatchEnd::OutOfTime => return Ok(Ahead::OutOfTime),
    };
    let mut ran = ran.iter();
    let mut out: HashMap<CheckId, Vec<Ran>> = HashMap::new();
    for ((id, run), prepared) in needed.into_iter().zip(laid) {
        // The laid-out runs first: zip takes from its first side first.
        let made: Vec<Ran> = prepared
            .iter()
            .zip(ran.by_ref())
            .map(|(p, r)| run.ran_in_batch(r, p))
            .collect();
        out.insert(*id, made);
    }
    Ok(Ahead::Ran(out))
}
