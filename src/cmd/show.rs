//! `loopbench show RUN_DIR [TRIAL_ID]`: a run's verdict and its trials one line each, or
//! one trial as a timeline of its sessions with the evidence behind every count. Reads
//! only the run directory's records.

use super::args::ShowArgs;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::record::{FailedSession, SessionRecord, TrialRecord};
use crate::report::show::{failed_attempts, run_listing, trial_timeline};
use crate::run_dir::{RunDir, TRIALS_JSONL};
use crate::store::{jsonl_records, open_run_dir, read_jsonl};

/// Runs the command; returns the exit code.
pub fn run(args: &ShowArgs) -> Result<i32> {
    let text = show(&open_run_dir(&args.run_dir), args.trial_id.as_deref())?;
    // Every line quotes records the agent's session filled; nothing in them reaches the
    // terminal as a control sequence.
    super::output::print(&crate::terminal::block(&text))?;
    Ok(exit_code::OK)
}

/// The text `show` prints.
pub fn show(dir: &RunDir, trial_id: Option<&str>) -> Result<String> {
    let trials_file = dir.trials_jsonl();
    if !dir.path().is_dir() || !trials_file.is_file() {
        return Err(Error::BadInput(format!(
            "'{}' is not a results directory with finished trials (no {TRIALS_JSONL}); \
             give the directory `run` or `replay` wrote, e.g. results/<suite>/<run-id>",
            dir.path().display()
        )));
    }
    let mut trials: Vec<TrialRecord> = read_jsonl(&trials_file)?;
    let Some(id) = trial_id else {
        let summary = crate::report::summarize(dir, None, crate::report::DEFAULT_CONFIDENCE)?;
        // Trials in the order of the tables: arms as the summary orders them (baseline
        // first), then task and replicate, not in the order they happened to finish.
        let rank = |arm: &str| summary.arms.iter().position(|a| a == arm);
        trials.sort_by(|a, b| {
            (rank(&a.key.arm), &a.key.task, a.key.replicate).cmp(&(
                rank(&b.key.arm),
                &b.key.task,
                b.key.replicate,
            ))
        });
        let verdict = crate::report::Verdict::of(&summary).to_text();
        return Ok(format!(
            "{verdict}
{}",
            run_listing(&trials)
        ));
    };
    let failed: Vec<FailedSession> = read_jsonl::<FailedSession>(&dir.failures_jsonl())?
        .into_iter()
        .filter(|f| f.record.key.trial_id == id)
        .collect();
    let Some(trial) = trials.iter().find(|t| t.key.trial_id == id) else {
        if !failed.is_empty() {
            return Ok(failed_attempts(id, &failed, false));
        }
        let known: Vec<&str> = trials
            .iter()
            .map(|t| t.key.trial_id.as_str())
            .take(5)
            .collect();
        let more = if trials.len() > known.len() {
            ", …"
        } else {
            ""
        };
        return Err(Error::BadInput(format!(
            "no trial '{id}' in '{}' (trial ids are arm:task:replicate, e.g. {}{more}); \
             `loopbench show {}` lists them all",
            dir.path().display(),
            if known.is_empty() {
                "none finished yet".to_string()
            } else {
                known.join(", ")
            },
            dir.path().display()
        )));
    };
    // The trial's sessions, read one record at a time.
    let mut sessions: Vec<SessionRecord> = Vec::new();
    for s in jsonl_records::<SessionRecord>(&dir.sessions_jsonl())? {
        let s = s?;
        if s.key.trial_id == id {
            sessions.push(s);
        }
    }
    sessions.sort_by_key(|s| s.session);
    let mut text = trial_timeline(trial, &sessions);
    if !failed.is_empty() {
        text += "\nFailed attempts before it (not counted):\n";
        text += &failed_attempts(id, &failed, true);
    }
    Ok(text)
}
