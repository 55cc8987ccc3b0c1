//! Trial-clustered percentile bootstrap interval for a ratio rate, optionally with the
//! trials resampled within strata (tasks).

use std::collections::HashMap;
use std::hash::Hash;

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::describe::quantile_sorted;
use super::error::{Result, StatsError, check_confidence, invalid};
use super::proportion::Interval;

/// Suggested number of bootstrap resamples.
pub const DEFAULT_RESAMPLES: usize = 2_000;

/// Percentile bootstrap interval for the pooled rate `Σk / Σn` when trials
/// are clustered (e.g. all sessions of one trial share a task).
///
/// Each element of `clusters` is `(k, n)` for one cluster. A resample draws
/// `clusters.len()` clusters with replacement (indices uniform via
/// `ChaCha8Rng::seed_from_u64(seed)` and `random_range`) and computes
/// `Σk / Σn` over the drawn clusters. A resample whose `Σn` is 0 (possible
/// only when some clusters have `n = 0`) has no rate and is skipped, so the
/// interval may rest on fewer than `resamples` values. The interval is the
/// `alpha/2` and `1 - alpha/2` quantiles (`alpha = 1 - confidence`) of the
/// resampled rates with numpy's default linear interpolation, i.e.
/// `numpy.quantile(rates, [alpha/2, 1 - alpha/2])`
/// (= `numpy.percentile(rates, [100*alpha/2, 100*(1 - alpha/2)])`).
///
/// Deterministic: the same inputs and `seed` always give the same interval,
/// on every platform. [`DEFAULT_RESAMPLES`] (2,000) is a reasonable
/// `resamples` for a 95% interval.
///
/// Errors: `InvalidInput` for no clusters, a cluster with `k > n`, a total
/// `Σn` of 0, `resamples == 0`, or `confidence` outside (0, 1); `Undefined`
/// if every resample had `Σn = 0`.
pub fn cluster_bootstrap_rate(
    clusters: &[(u64, u64)],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Result<Interval> {
    check_confidence(confidence)?;
    if clusters.is_empty() {
        return invalid("no clusters");
    }
    if resamples == 0 {
        return invalid("resamples must be positive");
    }
    if let Some((k, n)) = clusters.iter().find(|(k, n)| k > n) {
        return invalid(format!("cluster with k = {k} > n = {n}"));
    }
    if clusters.iter().all(|&(_, n)| n == 0) {
        return invalid("all clusters have n = 0");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let m = clusters.len();
    let mut rates = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        let (mut k_sum, mut n_sum) = (0u128, 0u128);
        for _ in 0..m {
            let (k, n) = clusters[rng.random_range(0..m)];
            k_sum += u128::from(k);
            n_sum += u128::from(n);
        }
        if n_sum > 0 {
            rates.push(k_sum as f64 / n_sum as f64);
        }
    }
    if rates.is_empty() {
        return Err(StatsError::Undefined("every resample had n = 0".into()));
    }
    rates.sort_by(f64::total_cmp);
    let alpha = 1.0 - confidence;
    Ok(Interval {
        low: quantile_sorted(&rates, alpha / 2.0),
        high: quantile_sorted(&rates, 1.0 - alpha / 2.0),
    })
}

/// [`cluster_bootstrap_rate`] for several metrics measured on the same clusters, in one
/// pass: every resample draws its cluster indices once and uses them for every metric.
///
/// `clusters[j][i]` is `(k, n)` of metric `j` in cluster `i`; every metric must list the
/// same clusters. Element `j` of the result is exactly what
/// `cluster_bootstrap_rate(&clusters[j], resamples, confidence, seed)` returns (the
/// index stream does not depend on the metric), so each metric's interval keeps that
/// function's documented convention while the random draws are shared.
///
/// Errors: `InvalidInput` (for the whole call) when the metrics list different numbers
/// of clusters, or for the reasons of [`cluster_bootstrap_rate`] that do not depend on a
/// metric; per metric, the errors of [`cluster_bootstrap_rate`].
pub fn cluster_bootstrap_rates<C: AsRef<[(u64, u64)]>>(
    clusters: &[C],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Result<Vec<Result<Interval>>> {
    let m = clusters.first().map_or(0, |c| c.as_ref().len());
    bootstrap_groups(clusters, &[(0..m).collect()], resamples, confidence, seed)
}

/// [`cluster_bootstrap_rates`] with the clusters resampled within strata, so that every
/// resample keeps the design's mix of strata: the trials of each (arm, task) are
/// resampled among themselves.
///
/// `strata[i]` is the stratum (the task) of cluster `i`, the same for every metric.
/// Strata are taken in the order they first appear in `strata`; a resample draws, for
/// each stratum in turn, as many clusters as the stratum has, with replacement and
/// uniformly among that stratum's clusters (`random_range(0..size)` on one
/// `ChaCha8Rng::seed_from_u64(seed)` stream), then computes `Σk / Σn` over all the drawn
/// clusters. Everything else (skipped resamples, quantiles, errors) is as in
/// [`cluster_bootstrap_rates`]; with a single stratum the draws are the same, so the
/// intervals are exactly that function's. A stratum with one cluster always contributes
/// that cluster, so with one trial per stratum the interval shrinks to the rate itself:
/// the design then has no within-task replication to resample.
///
/// Errors: `InvalidInput` when `strata` and the clusters differ in length, and those of
/// [`cluster_bootstrap_rates`].
pub fn cluster_bootstrap_rates_within<C: AsRef<[(u64, u64)]>, S: Eq + Hash>(
    clusters: &[C],
    strata: &[S],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Result<Vec<Result<Interval>>> {
    let m = clusters.first().map_or(0, |c| c.as_ref().len());
    if strata.len() != m {
        return invalid(format!(
            "{} strata labels for {m} clusters; every cluster needs one",
            strata.len()
        ));
    }
    let mut index: HashMap<&S, usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, label) in strata.iter().enumerate() {
        let g = *index.entry(label).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[g].push(i);
    }
    bootstrap_groups(clusters, &groups, resamples, confidence, seed)
}

/// The bootstrap of every metric, resampling each group of cluster indices within itself.
fn bootstrap_groups<C: AsRef<[(u64, u64)]>>(
    clusters: &[C],
    groups: &[Vec<usize>],
    resamples: usize,
    confidence: f64,
    seed: u64,
) -> Result<Vec<Result<Interval>>> {
    check_confidence(confidence)?;
    if resamples == 0 {
        return invalid("resamples must be positive");
    }
    let m = clusters.first().map_or(0, |c| c.as_ref().len());
    if clusters.iter().any(|c| c.as_ref().len() != m) {
        return invalid("every metric must list the same clusters");
    }
    // Metrics whose input the single-metric function would refuse get its error; the
    // others are bootstrapped together.
    let mut results: Vec<Option<Result<Interval>>> = clusters
        .iter()
        .map(|c| {
            let c = c.as_ref();
            if c.is_empty() {
                Some(invalid("no clusters"))
            } else if let Some((k, n)) = c.iter().find(|(k, n)| k > n) {
                Some(invalid(format!("cluster with k = {k} > n = {n}")))
            } else if c.iter().all(|&(_, n)| n == 0) {
                Some(invalid("all clusters have n = 0"))
            } else {
                None
            }
        })
        .collect();
    let live: Vec<usize> = (0..clusters.len())
        .filter(|&j| results[j].is_none())
        .collect();
    if live.is_empty() {
        return Ok(results.into_iter().flatten().collect());
    }
    let live_clusters: Vec<&[(u64, u64)]> = live.iter().map(|&j| clusters[j].as_ref()).collect();
    let rates = resample_rates(&live_clusters, groups, resamples, seed);
    let alpha = 1.0 - confidence;
    for (&j, mut r) in live.iter().zip(rates) {
        results[j] = Some(if r.is_empty() {
            Err(StatsError::Undefined("every resample had n = 0".into()))
        } else {
            r.sort_by(f64::total_cmp);
            Ok(Interval {
                low: quantile_sorted(&r, alpha / 2.0),
                high: quantile_sorted(&r, 1.0 - alpha / 2.0),
            })
        });
    }
    Ok(results.into_iter().flatten().collect())
}

/// The resampled rates of every metric: `resamples` times, draw from each group of
/// cluster indices as many as it holds (`group[random_range(0..group.len())]` on
/// `ChaCha8Rng::seed_from_u64(seed)`, one stream shared by the metrics and the groups, in
/// group order) and compute `Σk / Σn` of each metric over the drawn clusters, skipping a
/// resample whose `Σn` is 0. One group `0..m` is the unstratified bootstrap.
///
/// Sums are exact integers, so their order does not matter: when counts fit in `u32`
/// the draws are tallied into multiplicities and each sum is one dot product (which the
/// compiler vectorizes); otherwise each draw adds its cluster in `u128`.
fn resample_rates(
    clusters: &[&[(u64, u64)]],
    groups: &[Vec<usize>],
    resamples: usize,
    seed: u64,
) -> Vec<Vec<f64>> {
    let m = clusters.first().map_or(0, |c| c.len());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut rates: Vec<Vec<f64>> = vec![Vec::with_capacity(resamples); clusters.len()];
    let max_n = clusters
        .iter()
        .flat_map(|c| c.iter().map(|&(_, n)| n))
        .max()
        .unwrap_or(0);
    let small = u32::try_from(max_n).is_ok()
        && u32::try_from(m).is_ok()
        && (m as u128) * u128::from(max_n) <= u128::from(u64::MAX);
    if small {
        resample_by_multiplicity(clusters, groups, resamples, &mut rng, &mut rates);
    } else {
        resample_by_sums(clusters, groups, resamples, &mut rng, &mut rates);
    }
    rates
}

/// The distinct nonzero columns of the clusters' k and n (metrics often share their n,
/// every coding session, and a column of zeros needs no dot product), and for each
/// metric the slots of its k and n among them (`None`: all zero).
#[expect(
    clippy::type_complexity,
    reason = "the columns and each metric's two slots in them, used together"
)]
fn distinct_columns(
    clusters: &[&[(u64, u64)]],
) -> (Vec<Vec<u32>>, Vec<(Option<usize>, Option<usize>)>) {
    let mut columns: Vec<Vec<u32>> = Vec::new();
    let mut slot = |values: Vec<u32>| -> Option<usize> {
        if values.iter().all(|&v| v == 0) {
            return None;
        }
        Some(match columns.iter().position(|c| *c == values) {
            Some(i) => i,
            None => {
                columns.push(values);
                columns.len() - 1
            }
        })
    };
    let slots: Vec<(Option<usize>, Option<usize>)> = clusters
        .iter()
        .map(|c| {
            let k = slot(c.iter().map(|x| x.0 as u32).collect());
            let n = slot(c.iter().map(|x| x.1 as u32).collect());
            (k, n)
        })
        .collect();
    (columns, slots)
}

/// [`resample_rates`] when counts fit in `u32`: the draws tallied into multiplicities,
/// each sum one dot product.
fn resample_by_multiplicity(
    clusters: &[&[(u64, u64)]],
    groups: &[Vec<usize>],
    resamples: usize,
    rng: &mut ChaCha8Rng,
    rates: &mut [Vec<f64>],
) {
    let m = clusters.first().map_or(0, |c| c.len());
    let (columns, slots) = distinct_columns(clusters);
    let dot = |a: &[u32], b: &[u32]| -> u64 {
        a.iter()
            .zip(b)
            .map(|(&x, &y)| u64::from(x) * u64::from(y))
            .sum()
    };
    let mut multiplicity = vec![0u32; m];
    let mut sums = vec![0u64; columns.len()];
    for _ in 0..resamples {
        multiplicity.fill(0);
        for group in groups {
            for _ in 0..group.len() {
                multiplicity[group[rng.random_range(0..group.len())]] += 1;
            }
        }
        for (sum, column) in sums.iter_mut().zip(&columns) {
            *sum = dot(&multiplicity, column);
        }
        for (r, &(k, n)) in rates.iter_mut().zip(&slots) {
            let sum = |slot: Option<usize>| slot.map_or(0, |i| sums[i]);
            let n_sum = sum(n);
            if n_sum > 0 {
                r.push(sum(k) as f64 / n_sum as f64);
            }
        }
    }
}

/// [`resample_rates`] for any counts: each draw adds its cluster in `u128`.
fn resample_by_sums(
    clusters: &[&[(u64, u64)]],
    groups: &[Vec<usize>],
    resamples: usize,
    rng: &mut ChaCha8Rng,
    rates: &mut [Vec<f64>],
) {
    let mut sums = vec![(0u128, 0u128); clusters.len()];
    for _ in 0..resamples {
        sums.fill((0, 0));
        for group in groups {
            for _ in 0..group.len() {
                let i = group[rng.random_range(0..group.len())];
                for (sum, c) in sums.iter_mut().zip(clusters) {
                    sum.0 += u128::from(c[i].0);
                    sum.1 += u128::from(c[i].1);
                }
            }
        }
        for (r, &(k_sum, n_sum)) in rates.iter_mut().zip(&sums) {
            if n_sum > 0 {
                r.push(k_sum as f64 / n_sum as f64);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clusters() -> Vec<(u64, u64)> {
        (0..40u64).map(|i| ((i * 7) % 5, 4 + i % 3)).collect()
    }

    #[test]
    fn the_same_seed_gives_the_same_interval() {
        let a = cluster_bootstrap_rate(&clusters(), DEFAULT_RESAMPLES, 0.95, 42).unwrap();
        let b = cluster_bootstrap_rate(&clusters(), DEFAULT_RESAMPLES, 0.95, 42).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn a_different_seed_gives_a_different_interval() {
        let a = cluster_bootstrap_rate(&clusters(), DEFAULT_RESAMPLES, 0.95, 1).unwrap();
        let b = cluster_bootstrap_rate(&clusters(), DEFAULT_RESAMPLES, 0.95, 2).unwrap();
        assert_ne!(a, b);
    }

    #[test]
    fn interval_contains_the_pooled_rate_and_stays_in_unit_range() {
        let c = clusters();
        let pooled =
            c.iter().map(|x| x.0).sum::<u64>() as f64 / c.iter().map(|x| x.1).sum::<u64>() as f64;
        let ci = cluster_bootstrap_rate(&c, DEFAULT_RESAMPLES, 0.95, 7).unwrap();
        assert!(ci.contains(pooled), "{pooled} {ci:?}");
        assert!(0.0 <= ci.low && ci.low < ci.high && ci.high <= 1.0);
    }

    #[test]
    fn all_zero_and_all_one_rates_give_degenerate_intervals() {
        let zero = cluster_bootstrap_rate(&[(0, 5), (0, 3)], 100, 0.95, 0).unwrap();
        assert_eq!((zero.low, zero.high), (0.0, 0.0));
        let one = cluster_bootstrap_rate(&[(5, 5), (3, 3)], 100, 0.95, 0).unwrap();
        assert_eq!((one.low, one.high), (1.0, 1.0));
    }

    #[test]
    fn empty_clusters_are_skipped() {
        let ci = cluster_bootstrap_rate(&[(0, 0), (2, 4)], 200, 0.9, 3).unwrap();
        assert_eq!((ci.low, ci.high), (0.5, 0.5));
    }

    #[test]
    fn several_metrics_at_once_give_exactly_the_single_metric_intervals() {
        let a = clusters();
        let b: Vec<(u64, u64)> = a.iter().map(|&(k, n)| (n - k, n + 1)).collect();
        let none: Vec<(u64, u64)> = a.iter().map(|_| (0, 0)).collect();
        let both = cluster_bootstrap_rates(&[a.clone(), none, b.clone()], 500, 0.9, 11).unwrap();
        assert_eq!(both[0], cluster_bootstrap_rate(&a, 500, 0.9, 11));
        assert!(both[1].is_err());
        assert_eq!(both[2], cluster_bootstrap_rate(&b, 500, 0.9, 11));
        assert!(cluster_bootstrap_rates(&[a, vec![(1, 1)]], 10, 0.9, 1).is_err());
    }

    #[test]
    fn counts_too_large_for_the_fast_path_give_the_same_intervals_as_small_ones() {
        // Scaling every k and n by 2^33 leaves each rate unchanged but forces u128 sums.
        let scale = 1u64 << 33;
        let small = clusters();
        let large: Vec<(u64, u64)> = small.iter().map(|&(k, n)| (k * scale, n * scale)).collect();
        let a = cluster_bootstrap_rates(&[small], 300, 0.95, 5).unwrap();
        let b = cluster_bootstrap_rates(&[large], 300, 0.95, 5).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn one_stratum_gives_exactly_the_unstratified_intervals() {
        let a = clusters();
        let b: Vec<(u64, u64)> = a.iter().map(|&(k, n)| (n - k, n + 1)).collect();
        let metrics = [a.clone(), b];
        let labels = vec!["task"; a.len()];
        let within = cluster_bootstrap_rates_within(&metrics, &labels, 700, 0.95, 9).unwrap();
        assert_eq!(
            within,
            cluster_bootstrap_rates(&metrics, 700, 0.95, 9).unwrap()
        );
    }

    #[test]
    fn resampling_within_tasks_keeps_the_task_mix_of_every_resample() {
        // Task "easy" always succeeds, task "hard" never does; 3 easy and 5 hard trials
        // of 2 sessions each, interleaved. Every stratified resample has 3 easy and 5
        // hard trials, so its rate is always 6/16; resampling across tasks is not.
        let labels = [
            "easy", "hard", "hard", "easy", "hard", "hard", "easy", "hard",
        ];
        let trials: Vec<(u64, u64)> = labels
            .iter()
            .map(|&t| if t == "easy" { (2, 2) } else { (0, 2) })
            .collect();
        let metrics = [trials];
        let within = cluster_bootstrap_rates_within(&metrics, &labels, 500, 0.95, 4).unwrap();
        let ci = within[0].clone().unwrap();
        assert_eq!((ci.low, ci.high), (6.0 / 16.0, 6.0 / 16.0));
        let across = cluster_bootstrap_rates(&metrics, 500, 0.95, 4).unwrap();
        let wide = across[0].clone().unwrap();
        assert!(wide.low < 0.2 && wide.high > 0.55, "{wide:?}");
    }

    #[test]
    fn stratified_counts_too_large_for_the_fast_path_give_the_same_intervals() {
        let scale = 1u64 << 33;
        let small = clusters();
        let large: Vec<(u64, u64)> = small.iter().map(|&(k, n)| (k * scale, n * scale)).collect();
        let labels: Vec<u64> = (0..small.len() as u64).map(|i| i % 3).collect();
        let a = cluster_bootstrap_rates_within(&[small], &labels, 300, 0.95, 5).unwrap();
        let b = cluster_bootstrap_rates_within(&[large], &labels, 300, 0.95, 5).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn strata_labels_must_name_every_cluster() {
        let c = clusters();
        let short = vec![0u8; c.len() - 1];
        assert!(cluster_bootstrap_rates_within(&[c], &short, 10, 0.95, 1).is_err());
    }

    #[test]
    fn invalid_inputs_are_errors_not_panics() {
        assert!(cluster_bootstrap_rate(&[], 100, 0.95, 0).is_err());
        assert!(cluster_bootstrap_rate(&[(3, 2)], 100, 0.95, 0).is_err());
        assert!(cluster_bootstrap_rate(&[(0, 0)], 100, 0.95, 0).is_err());
        assert!(cluster_bootstrap_rate(&[(1, 2)], 0, 0.95, 0).is_err());
        assert!(cluster_bootstrap_rate(&[(1, 2)], 10, 1.0, 0).is_err());
    }
}
