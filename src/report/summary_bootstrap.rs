//! The trial-clustered bootstrap intervals of `summary.*`: per arm, every session-level
//! rate, trials resampled within each task, arms spread over the available cores.

use super::aggregate::{Aggregate, Counts};
use crate::rates::Metric;
use crate::stats::{self, DEFAULT_RESAMPLES, Interval};

/// Seed of every trial-clustered bootstrap: fixed, so that summaries are reproducible.
pub const BOOTSTRAP_SEED: u64 = 20_260_704;

/// [`bootstrap`] of every arm, arms spread over the available cores. Each arm has its
/// own fixed-seed stream, so the result does not depend on the number of threads.
pub(super) fn bootstrap_arms(
    agg: &Aggregate,
    arms: &[String],
    confidence: f64,
) -> Vec<Vec<Option<Interval>>> {
    let threads = std::thread::available_parallelism()
        .map(usize::from)
        .unwrap_or(1)
        .clamp(1, arms.len().max(1));
    let chunk = arms.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let handles: Vec<_> = arms
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|arm| bootstrap(&agg.by_arm[arm], confidence))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// Bootstrap intervals of every session-level metric of one arm (None elsewhere).
fn bootstrap(counts: &Counts, confidence: f64) -> Vec<Option<Interval>> {
    let mut out = vec![None; Metric::ALL.len()];
    let session: Vec<Metric> = Metric::ALL
        .into_iter()
        .filter(|m| m.is_session_level())
        .collect();
    let clusters: Vec<&[(u64, u64)]> = session
        .iter()
        .map(|m| counts.clusters[m.index()].as_slice())
        .collect();
    // Trials are resampled within each task, so every resample keeps the arm's task mix.
    if let Ok(results) = stats::cluster_bootstrap_rates_within(
        &clusters,
        &counts.cluster_tasks,
        DEFAULT_RESAMPLES,
        confidence,
        BOOTSTRAP_SEED,
    ) {
        for (m, r) in session.iter().zip(results) {
            out[m.index()] = r.ok();
        }
    }
    out
}
