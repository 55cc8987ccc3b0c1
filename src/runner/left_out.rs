//! A session that failed outside the agent (`infra`, `auth`) and changed nothing the
//! harness observes: what becomes of it and of its trial. The attempt's first session
//! fails the attempt; a later one is left out alone and runs again in place, or ends
//! the trial with the sessions before it counted. And what becomes of a trial whose run
//! or agent is stopped before its next session.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Next, Trial, TrialState};
use crate::agent::{Agent, Failure, FailureKind};
use crate::error::{Error, Result};
use crate::events::EventKind;
use crate::notice::Notice;
use crate::record::SessionRecord;
use crate::runner::retry::wait_unless_stopped;
use crate::runner::trial::Attempt;

impl Trial<'_> {
    /// A session that failed outside the agent and changed nothing the harness
    /// observes. While no coding session of the attempt changed anything, nothing of
    /// the attempt describes the agent: it goes to `failures.jsonl` whole and the trial
    /// is tried again from its initial state (or not at all, on a refused key). After a
    /// coding session that did, the sessions before stay the trial's (a failure that a
    /// session's tools can bring about, or that their sabotage of the CLI's
    /// configuration can, must never take a session that changed the work out of the
    /// tables): the session alone goes to `failures.jsonl`, and runs again in place after
    /// the backoff, up to `infra_retries` times; on a refused key, or past its retries,
    /// the trial ends there, its sessions so far counted.
    pub(super) fn leave_out(
        &self,
        state: &mut TrialState,
        record: SessionRecord,
        failure: Failure,
        agent: &mut dyn Agent,
        again: u32,
    ) -> Result<ControlFlow<Attempt, Next>> {
        let spec = self.spec;
        let number = record.session;
        if !state.coding_changed {
            self.events
                .emit(EventKind::SessionFinished(Box::new(record)))?;
            let captures = agent.archive_attempt(spec.attempt)?;
            self.events.emit(EventKind::AttemptFailed {
                key: spec.key.clone(),
                attempt: spec.attempt,
                failure: failure.clone(),
                captures,
            })?;
            return Ok(ControlFlow::Break(Attempt::Failed(failure)));
        }
        let captures = agent.archive_session(number, spec.attempt, again + 1)?;
        self.events.emit(EventKind::SessionLeftOut {
            attempt: spec.attempt,
            captures,
            record: Box::new(record),
        })?;
        let what = format!(
            "session {number} failed {} outside the agent ({}) and changed nothing",
            failure.kind, failure.reason
        );
        if failure.kind == FailureKind::Infra && again < spec.infra.retries {
            let wait = state.backoff.next(&failure);
            self.events.notify(Notice::AgentRetry {
                key: spec.key.clone(),
                session: number,
                message: format!(
                    "{what}; it runs again in {} (the sessions before it stay)",
                    humantime::format_duration(wait)
                ),
            });
            return Ok(ControlFlow::Continue(Next::Again(wait)));
        }
        let tries = if again == 0 {
            String::new()
        } else {
            format!(" in {} runs", again + 1)
        };
        state.trial_error = Some(format!(
            "{what}{tries}: the trial ends there, its sessions before it counted \
             (failures.jsonl has the failed runs)"
        ));
        state.ended_outside = Some(failure);
        Ok(ControlFlow::Continue(Next::Stop))
    }

    /// Waits `wait` before a session runs again; `false` when the trial must end there
    /// instead (its agent was stopped meanwhile: see [`Trial::must_stop`]).
    pub(crate) fn wait_to_run_again(
        &self,
        state: &mut TrialState,
        wait: std::time::Duration,
    ) -> Result<bool> {
        if wait_unless_stopped(wait, &self.stop_flags()) {
            return Ok(true);
        }
        Ok(!self.must_stop(state)?)
    }

    /// Whether the trial ends here, its sessions so far counted, instead of starting its
    /// next session: a stopped run is [`Error::Cancelled`] (`resume` runs the trial
    /// again). A stopped agent (its key refused, or its circuit tripped in
    /// another trial) ends a trial one of whose coding sessions changed the work there,
    /// its sessions counted, since starting it again would take them out of the tables;
    /// any other trial of it is cancelled.
    pub(super) fn must_stop(&self, state: &mut TrialState) -> Result<bool> {
        if self.spec.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Error::Cancelled);
        }
        if !self
            .spec
            .agent_stop
            .is_some_and(|c| c.load(Ordering::Relaxed))
        {
            return Ok(false);
        }
        if !state.coding_changed {
            return Err(Error::Cancelled);
        }
        state.trial_error = Some(
            "its agent started no new session (a failure outside it stopped the agent): \
             the trial ends here, its sessions counted"
                .into(),
        );
        state.ended_early = true;
        Ok(true)
    }

    /// The run's stop and the agent's, where the trial has them.
    fn stop_flags(&self) -> Vec<&AtomicBool> {
        [self.spec.cancel, self.spec.agent_stop]
            .into_iter()
            .flatten()
            .collect()
    }
}
