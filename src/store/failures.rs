//! What `failures.jsonl` says about a run: the trials that could not run, and the
//! attempts already made at each trial (so that `resume` numbers the next one after
//! them).

use super::{jsonl_records, read_jsonl};
use crate::error::Result;
use crate::record::{FailedSession, TrialRecord};
use crate::run_dir::RunDir;

/// Trials that could not run: each trial of `failures.jsonl` that has no record in
/// `trials.jsonl`, with its last failed session (the one whose failure ended it), in
/// the order of `failures.jsonl`.
pub fn unfinished_trials(dir: &RunDir) -> Result<Vec<FailedSession>> {
    let finished: std::collections::BTreeSet<String> =
        jsonl_records::<TrialRecord>(&dir.trials_jsonl())?
            .map(|t| t.map(|t| t.key.trial_id))
            .collect::<Result<_>>()?;
    let mut last: Vec<FailedSession> = Vec::new();
    for failed in read_jsonl::<FailedSession>(&dir.failures_jsonl())? {
        if finished.contains(&failed.record.key.trial_id) {
            continue;
        }
        match last
            .iter_mut()
            .find(|l| l.record.key.trial_id == failed.record.key.trial_id)
        {
            Some(slot) => *slot = failed,
            None => last.push(failed),
        }
    }
    Ok(last)
}

/// The attempts already made at each trial, from `failures.jsonl`.
pub fn prior_attempts(dir: &RunDir) -> Result<std::collections::BTreeMap<String, u32>> {
    let mut attempts = std::collections::BTreeMap::new();
    for failed in read_jsonl::<FailedSession>(&dir.failures_jsonl())? {
        let slot = attempts.entry(failed.record.key.trial_id).or_insert(0);
        *slot = (*slot).max(failed.attempt);
    }
    Ok(attempts)
}
