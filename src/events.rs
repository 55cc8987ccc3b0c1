//! Typed events of a run, and the sink trait that reporters implement.

use std::time::Duration;

use crate::agent::Failure;
use crate::agent::trajectory::SessionTrajectory;
use crate::error::Result;
use crate::notice::Notice;
use crate::record::{SessionRecord, TrialRecord};
use crate::run_dir::RunDir;
use crate::suite::TrialKey;

/// Something that happened in a run, with the time since the run started.
#[derive(Debug, Clone)]
pub struct Event {
    /// Time since `RunStarted`.
    pub elapsed: Duration,
    /// What happened.
    pub kind: EventKind,
}

/// The kinds of event, in the order a run emits them.
#[derive(Debug, Clone)]
pub enum EventKind {
    /// The run directory exists and trials are about to start.
    RunStarted {
        /// Where results go.
        run_dir: RunDir,
        /// Trials planned.
        trials: usize,
    },
    /// A trial's work directory is ready.
    TrialStarted {
        /// Which trial.
        key: TrialKey,
    },
    /// What a simulated agent did on purpose in a session (ground truth for tests,
    /// never used by a metric).
    SimTruth {
        /// Which trial.
        key: TrialKey,
        /// Which session.
        session: u32,
        /// The sim's record of its acts.
        truth: serde_json::Value,
    },
    /// What the agent did in a session that counts, entry by entry (for people: no
    /// metric reads it); its record follows.
    Trajectory(Box<SessionTrajectory>),
    /// A session was run and observed.
    SessionFinished(Box<SessionRecord>),
    /// A trial ended.
    TrialFinished(Box<TrialRecord>),
    /// An attempt at a trial ended in a failure outside the agent: its sessions so far
    /// are not the trial's (they belong in `failures.jsonl`), and no trial record follows
    /// for this attempt.
    AttemptFailed {
        /// Which trial.
        key: TrialKey,
        /// Which attempt, from 1.
        attempt: u32,
        /// What failed.
        failure: Failure,
        /// Where the attempt's captures were put aside, relative to the run directory.
        captures: Option<String>,
    },
    /// A session that failed outside the agent and changed nothing the harness
    /// observes, after sessions of its attempt that were recorded: it alone goes to
    /// `failures.jsonl`, never to the trial's sessions (the session is run again, or the
    /// trial ends before it).
    SessionLeftOut {
        /// Which attempt of the trial, from 1.
        attempt: u32,
        /// Where the session's captures were put aside, relative to the run directory.
        captures: Option<String>,
        /// The session as it was observed.
        record: Box<SessionRecord>,
    },
    /// Every trial ended.
    RunFinished,
    /// Something a person watching should see now; never part of the results.
    Notice(Notice),
}

/// Consumes events: a results writer, a progress display, a summary printer.
pub trait EventSink {
    /// Handles one event. An error stops the run (a results file that cannot be written
    /// must not be ignored).
    fn handle(&mut self, event: &Event) -> Result<()>;
}

/// Sends each event to several sinks, in order.
#[derive(Default)]
pub struct Fanout<'a> {
    sinks: Vec<&'a mut dyn EventSink>,
}

impl<'a> Fanout<'a> {
    /// An empty fan-out.
    pub fn new() -> Fanout<'a> {
        Fanout { sinks: Vec::new() }
    }

    /// Adds a sink.
    pub fn with(mut self, sink: &'a mut dyn EventSink) -> Fanout<'a> {
        self.sinks.push(sink);
        self
    }
}

impl EventSink for Fanout<'_> {
    fn handle(&mut self, event: &Event) -> Result<()> {
        for sink in &mut self.sinks {
            sink.handle(event)?;
        }
        Ok(())
    }
}
