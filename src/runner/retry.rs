//! When a failed attempt is tried again, and when an agent stops trying: the backoff
//! between the attempts of a trial (doubling, at least what the provider asked for),
//! and the circuit breaker that stops an agent's sessions on a refused key or on a run
//! of infrastructure failures in a row, while the other agents' arms go on.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::agent::{Failure, FailureKind};

/// The longest wait a provider's `retry-after` can impose on a retry: beyond it the
/// configured backoff decides (a provider that asks for hours is an outage, which the
/// circuit breaker and `resume` handle).
pub const RETRY_AFTER_CAP: Duration = Duration::from_secs(15 * 60);

/// The wait before each retry of one trial: `infra_backoff`, doubling per retry, and
/// never shorter than what the provider asked for (capped at [`RETRY_AFTER_CAP`]).
#[derive(Debug, Clone, Copy)]
pub struct Backoff {
    next: Duration,
}

impl Backoff {
    /// Starts at `first`.
    pub fn new(first: Duration) -> Backoff {
        Backoff { next: first }
    }

    /// The wait before the retry after `failure`.
    pub fn next(&mut self, failure: &Failure) -> Duration {
        let asked = failure
            .retry_after_ms
            .map(Duration::from_millis)
            .unwrap_or_default()
            .min(RETRY_AFTER_CAP);
        let wait = self.next.max(asked);
        self.next = self.next.saturating_mul(2);
        wait
    }
}

/// Whether any of `flags` (the run's stop, the agent's) is set.
pub fn stopped(flags: &[&AtomicBool]) -> bool {
    flags.iter().any(|f| f.load(Ordering::Relaxed))
}

/// Waits `delay` in short steps; `false` when the run or the agent was stopped
/// meanwhile (any of `flags`).
pub async fn wait_unless_cancelled(delay: Duration, flags: &[&AtomicBool]) -> bool {
    let until = tokio::time::Instant::now() + delay;
    loop {
        if stopped(flags) {
            return false;
        }
        let now = tokio::time::Instant::now();
        if now >= until {
            return true;
        }
        tokio::time::sleep((until - now).min(Duration::from_millis(100))).await;
    }
}

/// [`wait_unless_cancelled`] on a thread of its own (a trial's, waiting to run a
/// session again).
pub fn wait_unless_stopped(delay: Duration, flags: &[&AtomicBool]) -> bool {
    let until = std::time::Instant::now() + delay;
    loop {
        if stopped(flags) {
            return false;
        }
        let now = std::time::Instant::now();
        if now >= until {
            return true;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(100)));
    }
}

/// Stops an agent on a dead endpoint: on a refused key at once, and after `limit`
/// infrastructure failures in a row. "In a row" counts the agent's trials whose
/// attempts failed since its last trial that finished: the retries of one trial
/// failing again count once, so that one trial's retries alone cannot trip it, while
/// `limit` different trials failing with nothing finishing in between is an outage.
/// Once tripped, no new trial or session of that agent starts (its stop flag); its
/// sessions in flight finish, and every other agent's arms go on: one agent's refused
/// key, or a failure its own sessions can bring about, never stops another's.
pub struct Breaker {
    limit: u32,
    agents: Mutex<BTreeMap<String, AgentCircuit>>,
    causes: Mutex<Vec<String>>,
}

/// One agent's side of the breaker.
#[derive(Default)]
struct AgentCircuit {
    failing: BTreeSet<String>,
    stop: Arc<AtomicBool>,
}

impl Breaker {
    /// A breaker that trips an agent after `limit` (at least 1) failing trials in a row.
    pub fn new(limit: u32) -> Breaker {
        Breaker {
            limit: limit.max(1),
            agents: Mutex::new(BTreeMap::new()),
            causes: Mutex::new(Vec::new()),
        }
    }

    /// The flag set when `agent`'s sessions must stop (`agent` names it in messages:
    /// "agent 'claude'").
    pub fn stop_flag(&self, agent: &str) -> Arc<AtomicBool> {
        match self.agents.lock() {
            Ok(mut agents) => agents.entry(agent.to_string()).or_default().stop.clone(),
            // A poisoned lock: a flag nobody sets, and the run goes on as without a
            // breaker (the failure is still in failures.jsonl).
            Err(_) => Arc::new(AtomicBool::new(false)),
        }
    }

    /// A trial of `agent` finished: its endpoint works.
    pub fn finished(&self, agent: &str) {
        if let Ok(mut agents) = self.agents.lock() {
            agents.entry(agent.to_string()).or_default().failing.clear();
        }
    }

    /// An attempt at `agent`'s trial `trial_id` failed for `failure`; trips the
    /// agent's breaker when that makes going on with it pointless.
    pub fn failed(&self, agent: &str, trial_id: &str, failure: &Failure) {
        let Ok(mut agents) = self.agents.lock() else {
            return;
        };
        let circuit = agents.entry(agent.to_string()).or_default();
        let cause = match failure.kind {
            FailureKind::Auth => Some(format!(
                "the provider refused the credentials ({})",
                failure.reason
            )),
            FailureKind::Infra => {
                circuit.failing.insert(trial_id.to_string());
                let n = circuit.failing.len();
                (n >= self.limit as usize).then(|| {
                    format!(
                        "{n} trials in a row failed outside the agent (infra_circuit = {}), the last: {}",
                        self.limit, failure.reason
                    )
                })
            }
            FailureKind::Agent => None,
        };
        if let Some(cause) = cause
            && !circuit.stop.swap(true, Ordering::Relaxed)
            && let Ok(mut causes) = self.causes.lock()
        {
            causes.push(format!("{cause}; {agent} started no new session"));
        }
    }

    /// Why it tripped, for every agent it stopped, in the order they stopped.
    pub fn cause(&self) -> Option<String> {
        let causes = self.causes.lock().ok()?;
        (!causes.is_empty()).then(|| causes.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn infra(retry_after_ms: Option<u64>) -> Failure {
        Failure {
            retry_after_ms,
            ..Failure::new(FailureKind::Infra, "HTTP 529")
        }
    }

    #[test]
    fn the_backoff_doubles_and_waits_at_least_what_the_provider_asked_for_up_to_a_cap() {
        let mut b = Backoff::new(Duration::from_secs(1));
        assert_eq!(b.next(&infra(None)), Duration::from_secs(1));
        assert_eq!(b.next(&infra(Some(30_000))), Duration::from_secs(30));
        assert_eq!(b.next(&infra(Some(100))), Duration::from_secs(4));
        assert_eq!(b.next(&infra(Some(u64::MAX))), RETRY_AFTER_CAP);
    }

    #[test]
    fn retries_of_one_trial_count_once_and_a_finished_trial_resets_the_count() {
        let b = Breaker::new(2);
        let stop = b.stop_flag("agent 'a'");
        for _ in 0..5 {
            b.failed("agent 'a'", "a:t:0", &infra(None));
        }
        assert!(!stop.load(Ordering::Relaxed), "one trial's retries alone");
        b.finished("agent 'a'");
        b.failed("agent 'a'", "a:t:1", &infra(None));
        assert!(!stop.load(Ordering::Relaxed));
        b.failed("agent 'a'", "a:t:2", &infra(None));
        assert!(stop.load(Ordering::Relaxed));
        assert!(
            b.cause()
                .unwrap()
                .starts_with("2 trials in a row failed outside the agent (infra_circuit = 2)")
        );
    }

    #[test]
    fn a_refused_key_trips_its_agent_at_once_an_agent_failure_never_and_others_go_on() {
        let b = Breaker::new(5);
        let (a, other) = (b.stop_flag("agent 'a'"), b.stop_flag("agent 'b'"));
        b.failed(
            "agent 'a'",
            "a:t:0",
            &Failure::new(FailureKind::Agent, "exit 1"),
        );
        assert!(!a.load(Ordering::Relaxed));
        b.failed(
            "agent 'a'",
            "a:t:0",
            &Failure::new(FailureKind::Auth, "HTTP 401"),
        );
        assert!(a.load(Ordering::Relaxed));
        assert!(!other.load(Ordering::Relaxed), "another agent's arms go on");
        // Failures of other agents' trials in between do not add up across agents.
        b.failed("agent 'b'", "b:t:0", &infra(None));
        b.failed("agent 'c'", "c:t:0", &infra(None));
        assert!(!other.load(Ordering::Relaxed));
        assert_eq!(
            b.cause().unwrap(),
            "the provider refused the credentials (HTTP 401); agent 'a' started no new session"
        );
    }

    #[test]
    fn a_wait_ends_early_when_a_flag_is_set() {
        let flag = AtomicBool::new(true);
        let start = std::time::Instant::now();
        assert!(!wait_unless_stopped(Duration::from_secs(30), &[&flag]));
        assert!(start.elapsed() < Duration::from_secs(5));
        let unset = AtomicBool::new(false);
        assert!(wait_unless_stopped(Duration::from_millis(10), &[&unset]));
    }
}
