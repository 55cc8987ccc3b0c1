//! Typed events of a run, and the sink trait that reporters implement.

use std::path::PathBuf;
use std::time::Duration;

use crate::error::Result;
use crate::record::{SessionRecord, TrialKey, TrialRecord};

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
        run_dir: PathBuf,
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
    /// A session was run and observed.
    SessionFinished(Box<SessionRecord>),
    /// A trial ended.
    TrialFinished(Box<TrialRecord>),
    /// Every trial ended.
    RunFinished,
    /// Something a person watching should see now; never part of the results.
    Notice(Notice),
}

/// What reporters tell the person running loopbench while it happens.
#[derive(Debug, Clone, PartialEq)]
pub enum Notice {
    /// An agent could not be started and is tried again (or given up on).
    AgentRetry {
        /// Which trial.
        key: TrialKey,
        /// Which session.
        session: u32,
        /// What failed and what happens next.
        message: String,
    },
    /// Ctrl-C, SIGTERM or SIGHUP: no new trials; agents in flight get `grace` before
    /// they are signalled.
    Stopping {
        /// What stopped the run: `Ctrl-C`, `SIGTERM` or `SIGHUP`.
        signal: &'static str,
        /// How long agents in flight may go on.
        grace: Duration,
    },
    /// How much work the verify cache saved (a debugging aid).
    VerifyCache {
        /// Checks answered from the cache.
        hits: u64,
        /// Verify commands run.
        runs: u64,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::AgentRetry {
                key,
                session,
                message,
            } => write!(
                f,
                "loopbench: {} session {session}: {message}",
                key.trial_id
            ),
            Notice::Stopping { signal, grace } => write!(
                f,
                "{signal}: stopping: no new trials; agents in flight get {}s to finish \
                 (Ctrl-C, SIGTERM or SIGHUP again to abort now)",
                grace.as_secs()
            ),
            Notice::VerifyCache { hits, runs } => write!(
                f,
                "verify: {runs} commands run, {hits} checks answered from the cache"
            ),
        }
    }
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
