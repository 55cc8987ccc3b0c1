//! The trials a run has finished, read from `trials.jsonl` one record at a time: their
//! ids and how many each arm has, never the records themselves, so that resuming a run
//! or judging its next look holds a few bytes a trial instead of every trial's record.

use std::collections::{BTreeMap, BTreeSet};

use super::jsonl_records;
use crate::error::Result;
use crate::record::TrialRecord;
use crate::run_dir::RunDir;

/// The finished trials of a run.
#[derive(Debug, Default, PartialEq)]
pub struct FinishedTrials {
    /// Their trial ids.
    pub ids: BTreeSet<String>,
    /// How many trials of each arm finished.
    pub of_arm: BTreeMap<String, u64>,
}

impl FinishedTrials {
    /// Reads `trials.jsonl` of `dir` (nothing when it does not exist; a torn last line
    /// dropped): every record is read whole, so a bad one is refused as before, and
    /// only its id and arm are kept.
    pub fn read(dir: &RunDir) -> Result<FinishedTrials> {
        let mut finished = FinishedTrials::default();
        for trial in jsonl_records::<TrialRecord>(&dir.trials_jsonl())? {
            let key = trial?.key;
            *finished.of_arm.entry(key.arm).or_insert(0) += 1;
            finished.ids.insert(key.trial_id);
        }
        Ok(finished)
    }
}
