//! What reporters tell the person running loopbench while it happens: an agent being
//! retried, a run stopping, what the verify cache saved. Drivers send them through
//! their session context; they are never part of the results.

use std::time::Duration;

use crate::suite::TrialKey;

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
                "loopbench: {} session {session}: {}",
                key.trial_id,
                // The message can quote the agent's own output.
                crate::terminal::line(message)
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
