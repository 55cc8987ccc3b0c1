//! When a failed attempt is tried again, and when the run stops trying: the backoff
//! between the attempts of a trial (doubling, at least what the provider asked for),
//! and the circuit breaker that stops scheduling on a refused key or on a run of
//! infrastructure failures in a row.

use std::collections::BTreeSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
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

/// Waits `delay` in short steps; `false` when the run was stopped meanwhile.
pub async fn wait_unless_cancelled(delay: Duration, cancel: &AtomicBool) -> bool {
    let until = tokio::time::Instant::now() + delay;
    loop {
        if cancel.load(Ordering::Relaxed) {
            return false;
        }
        let now = tokio::time::Instant::now();
        if now >= until {
            return true;
        }
        tokio::time::sleep((until - now).min(Duration::from_millis(100))).await;
    }
}

/// Stops the run on a dead endpoint: a refused key at once, and `limit` infrastructure
/// failures in a row across the run. "In a row" counts the trials whose attempts failed
/// since the last trial that finished: the retries of one trial failing again count
/// once, so that one trial's retries alone cannot trip it, while `limit` different
/// trials failing with nothing finishing in between is an outage. Once tripped, no new
/// trial or session starts (the `cancel` flag); sessions in flight finish.
pub struct Breaker {
    limit: u32,
    failing: Mutex<BTreeSet<String>>,
    cause: Mutex<Option<String>>,
}

impl Breaker {
    /// A breaker that trips after `limit` (at least 1) failing trials in a row.
    pub fn new(limit: u32) -> Breaker {
        Breaker {
            limit: limit.max(1),
            failing: Mutex::new(BTreeSet::new()),
            cause: Mutex::new(None),
        }
    }

    /// A trial finished: the endpoint works.
    pub fn finished(&self) {
        if let Ok(mut failing) = self.failing.lock() {
            failing.clear();
        }
    }

    /// An attempt at `trial_id` failed for `failure`; trips the breaker (and `cancel`)
    /// when that makes the run pointless to go on with.
    pub fn failed(&self, trial_id: &str, failure: &Failure, cancel: &AtomicBool) {
        let cause = match failure.kind {
            FailureKind::Auth => Some(format!(
                "the provider refused the credentials ({})",
                failure.reason
            )),
            FailureKind::Infra => {
                let n = match self.failing.lock() {
                    Ok(mut failing) => {
                        failing.insert(trial_id.to_string());
                        failing.len()
                    }
                    Err(_) => 0,
                };
                (n >= self.limit as usize).then(|| {
                    format!(
                        "{n} trials in a row failed outside the agent (infra_circuit = {}), the last: {}",
                        self.limit, failure.reason
                    )
                })
            }
            FailureKind::Agent => None,
        };
        if let Some(cause) = cause {
            if let Ok(mut slot) = self.cause.lock() {
                slot.get_or_insert(cause);
            }
            cancel.store(true, Ordering::Relaxed);
        }
    }

    /// Why it tripped, if it did.
    pub fn cause(&self) -> Option<String> {
        self.cause.lock().ok().and_then(|c| c.clone())
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
        let cancel = AtomicBool::new(false);
        let b = Breaker::new(2);
        for _ in 0..5 {
            b.failed("a:t:0", &infra(None), &cancel);
        }
        assert!(!cancel.load(Ordering::Relaxed), "one trial's retries alone");
        b.finished();
        b.failed("a:t:1", &infra(None), &cancel);
        assert!(!cancel.load(Ordering::Relaxed));
        b.failed("a:t:2", &infra(None), &cancel);
        assert!(cancel.load(Ordering::Relaxed));
        assert!(
            b.cause()
                .unwrap()
                .starts_with("2 trials in a row failed outside the agent (infra_circuit = 2)")
        );
    }

    #[test]
    fn a_refused_key_trips_at_once_and_an_agent_failure_never() {
        let cancel = AtomicBool::new(false);
        let b = Breaker::new(5);
        b.failed(
            "a:t:0",
            &Failure::new(FailureKind::Agent, "exit 1"),
            &cancel,
        );
        assert!(!cancel.load(Ordering::Relaxed));
        b.failed(
            "a:t:0",
            &Failure::new(FailureKind::Auth, "HTTP 401"),
            &cancel,
        );
        assert!(cancel.load(Ordering::Relaxed));
        assert_eq!(
            b.cause().unwrap(),
            "the provider refused the credentials (HTTP 401)"
        );
    }
}
