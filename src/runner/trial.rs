//! The trial loop, the same for every agent driver: observe, run a session, observe
//! again, compute the metrics, emit the record; reuse each "after" as the next "before".

use std::ffi::OsString;
use std::time::Instant;

use super::events::{Event, EventKind, EventSink};
use crate::agent::{Agent, SessionContext, SessionKind, Usage};
use crate::error::Result;
use crate::metrics::{Outcome, SessionEnd, session_metrics, trial_metrics};
use crate::observe::Observer;
use crate::record::{SessionRecord, TrialKey, TrialRecord};
use crate::workspace::{Workspace, git_env};

/// What a trial runs.
pub struct TrialSpec {
    /// Which trial.
    pub key: TrialKey,
    /// Session 0 is an initializer session.
    pub initializer: bool,
    /// Stop after this many sessions (`None`: when the agent has no more).
    pub max_sessions: Option<u32>,
    /// Stop once every feature is verified or the agent declares the project complete
    /// (a replay plays every recorded session instead).
    pub stop_when_done: bool,
}

/// A finished trial.
pub struct TrialResult {
    /// Its record (also emitted).
    pub record: TrialRecord,
    /// Set when a session broke a rule that makes the input bad (exit 2).
    pub bad_input: Option<String>,
}

/// The environment contract of DESIGN §5 for one session.
pub fn session_env(ws: &Workspace, key: &TrialKey, session: u32) -> Vec<(String, OsString)> {
    let mut env = git_env(&ws.work_dir);
    env.extend([
        ("LOOPBENCH_SESSION".into(), session.to_string().into()),
        ("LOOPBENCH_ARM".into(), key.arm.clone().into()),
        ("LOOPBENCH_TASK".into(), key.task.clone().into()),
        (
            "LOOPBENCH_EFFECTS".into(),
            ws.effects_log.clone().into_os_string(),
        ),
        (
            "LOOPBENCH_PROMPT_FILE".into(),
            ws.prompt_file.clone().into_os_string(),
        ),
    ]);
    env
}

/// Runs one trial in `ws` with `agent`, sending events to `sink`.
pub fn run_trial(
    spec: &TrialSpec,
    ws: &Workspace,
    agent: &mut dyn Agent,
    observer: &Observer<'_>,
    sink: &mut dyn EventSink,
    run_start: Instant,
) -> Result<TrialResult> {
    let emit = |sink: &mut dyn EventSink, kind| {
        sink.handle(&Event {
            elapsed: run_start.elapsed(),
            kind,
        })
    };
    let trial_start = Instant::now();
    emit(
        sink,
        EventKind::TrialStarted {
            key: spec.key.clone(),
        },
    )?;

    let mut before = observer.observe(ws)?;
    let mut ends: Vec<SessionEnd> = Vec::new();
    let mut usage = Usage::default();
    let mut bad_input = None;
    let mut previous: Option<Outcome> = None;
    let mut trial_error = None;
    while spec
        .max_sessions
        .is_none_or(|max| (ends.len() as u32) < max)
    {
        let Some(session) = agent.next_session() else {
            break;
        };
        let kind = if spec.initializer && ends.is_empty() {
            SessionKind::Initializer
        } else {
            SessionKind::Coding
        };
        let env = session_env(ws, &spec.key, session);
        let started = Instant::now();
        let run = agent.run_session(&SessionContext {
            workspace: ws,
            session,
            kind,
            env: &env,
        })?;
        let wall_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let after = observer.observe(ws)?;
        let metrics = session_metrics(&before, &after, previous);
        if run.bad_input && bad_input.is_none() {
            bad_input = run.error.clone();
        }
        usage = usage + run.usage;
        if run.outcome == Outcome::Error {
            trial_error = run.error.clone();
        }
        ends.push(SessionEnd {
            outcome: run.outcome,
            all_verified: after.all_verified(),
        });
        let record = SessionRecord {
            key: spec.key.clone(),
            session,
            kind,
            outcome: run.outcome,
            metrics,
            actions_failed: run.actions_failed,
            usage: run.usage,
            wall_ms,
            error: run.error,
        };
        emit(sink, EventKind::SessionFinished(Box::new(record)))?;
        previous = Some(run.outcome);
        let done = after.all_verified() || run.outcome == Outcome::DeclaredComplete;
        before = after;
        if run.outcome == Outcome::Error || (spec.stop_when_done && done) {
            break;
        }
    }

    let record = TrialRecord {
        key: spec.key.clone(),
        metrics: trial_metrics(&ends, &before),
        usage,
        wall_ms: u64::try_from(trial_start.elapsed().as_millis()).unwrap_or(u64::MAX),
        error: trial_error,
    };
    emit(sink, EventKind::TrialFinished(Box::new(record.clone())))?;
    Ok(TrialResult { record, bad_input })
}
