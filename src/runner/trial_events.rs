//! Where a trial's events go: the steps' records and the agent's notices, which arrive
//! while a session runs, to one sink.

use std::cell::RefCell;
use std::time::Instant;

use super::trial::{Attempt, TrialSpec, harness_failed_attempt};
use crate::agent::{Agent, SessionKind};
use crate::error::{Error, Result};
use crate::events::{Event, EventKind, EventSink};
use crate::notice::Notice;

/// Where a trial's events go: shared by the steps and by the agent's notices, which
/// arrive while a session runs.
pub(crate) struct Events<'s> {
    sink: RefCell<&'s mut dyn EventSink>,
    run_start: Instant,
}

impl<'s> Events<'s> {
    /// Events to `sink`, timed from `run_start`.
    pub(crate) fn new(sink: &'s mut dyn EventSink, run_start: Instant) -> Events<'s> {
        Events {
            sink: RefCell::new(sink),
            run_start,
        }
    }

    /// Sends one event.
    pub(crate) fn emit(&self, kind: EventKind) -> Result<()> {
        self.sink.borrow_mut().handle(&Event {
            elapsed: self.run_start.elapsed(),
            kind,
        })
    }

    /// Sends a notice of the agent's. A notice that cannot be shown must not stop the
    /// trial.
    pub(crate) fn notify(&self, notice: Notice) {
        let _ = self.emit(EventKind::Notice(notice));
    }

    /// Ends the attempt as the harness's own failure at `at` (session, kind): see
    /// [`harness_failed_attempt`].
    pub(crate) fn harness_failed(
        &self,
        spec: &TrialSpec<'_>,
        at: (u32, SessionKind),
        error: &Error,
        agent: &mut dyn Agent,
    ) -> Result<Attempt> {
        let mut sink = self.sink.borrow_mut();
        harness_failed_attempt(
            &spec.key,
            spec.attempt,
            at,
            error,
            Some(agent),
            &mut **sink,
            self.run_start,
        )
    }
}
