//! The Cochran–Mantel–Haenszel test of an arm against the baseline stratified by task:
//! the chi-square test, and the exact conditional test for the sparse events where the
//! chi-square approximation fails, with the Mantel–Fleiss criterion that decides between
//! them.

use statrs::distribution::{ChiSquared, ContinuousCDF};

use super::fisher::Alternative;
use super::stratum::{Cells, Stratum, Sum, ratio, used};

/// The Cochran–Mantel–Haenszel test of [`cmh`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cmh {
    /// The CMH chi-square statistic without continuity correction, `z²`.
    pub statistic: f64,
    /// `Σ(aᵢ − E aᵢ) / √(Σ Var aᵢ)`: positive when the arm has more events than
    /// expected under equal rates.
    pub z: f64,
    /// Two-sided p-value: the chi-square (1 dof) upper tail of `statistic`, or the exact
    /// conditional p when [`Cmh::exact`].
    pub p: f64,
    /// True when the events are too sparse for the chi-square approximation (the
    /// Mantel–Fleiss criterion is below 5) and the p-values are the exact conditional
    /// test's ([`cmh_exact`]).
    pub exact: bool,
    p_greater: f64,
    p_less: f64,
}

impl Cmh {
    /// The p-value for `alternative`: two-sided [`Cmh::p`]; `Greater` (the arm's rate is
    /// higher) and `Less` (the arm's rate is lower) are `Φ̄(z)` and `Φ̄(−z)`, or, when
    /// [`Cmh::exact`], `P(S ≥ s)` and `P(S ≤ s)` of the exact conditional distribution.
    ///
    /// Asymptotically the smaller one-sided value is half the chi-square upper tail of
    /// `z²` (`Φ̄(|z|)` exactly), so it comes from an upper tail directly, never `1 − cdf`,
    /// and is exactly half of [`Cmh::p`]; the larger is `1 −` that. (statrs' `erfc`,
    /// behind its normal `sf`, was off by 4e-11 relative at p = 0.008, where the
    /// chi-square tail is exact to the last digits.)
    pub fn p_value(&self, alternative: Alternative) -> f64 {
        match alternative {
            Alternative::TwoSided => self.p,
            Alternative::Greater => self.p_greater,
            Alternative::Less => self.p_less,
        }
    }

    /// The asymptotic test of `z` and its chi-square `statistic`.
    fn asymptotic(statistic: f64, z: f64, p: f64) -> Cmh {
        let half = p / 2.0;
        let towards = |positive: bool| {
            if (z > 0.0) == positive || z == 0.0 {
                half
            } else {
                1.0 - half
            }
        };
        Cmh {
            statistic,
            z,
            p,
            exact: false,
            p_greater: towards(true),
            p_less: towards(false),
        }
    }
}

/// The Cochran–Mantel–Haenszel test that the odds ratio is 1 in every stratum, without
/// continuity correction.
///
/// Convention: statsmodels `StratifiedTable(tables).test_null_odds(correction=False)`
/// over the strata with units on both sides, each table `[[k1, n1 − k1], [k0, n0 − k0]]`:
/// `statistic = (Σ(aᵢ − n₁ᵢm₁ᵢ/Nᵢ))² / Σ n₁ᵢn₀ᵢm₁ᵢm₀ᵢ/(Nᵢ²(Nᵢ − 1))`, where `m₁ᵢ`, `m₀ᵢ`
/// are the event and non-event totals: the hypergeometric mean and variance of `aᵢ`
/// given the margins. `p` is the chi-square (1 dof) upper tail, `chi2.sf`; statsmodels
/// writes `1 − chi2.cdf`, which agrees to 1e-16 absolute but rounds p-values below it
/// to 0. [`Cmh::p_value`] gives the one-sided p-values from `z`.
///
/// Sparse events: when the Mantel–Fleiss criterion ([`mantel_fleiss`]) is below
/// [`MANTEL_FLEISS_MIN`], the chi-square approximation fails (with one event in 436
/// units it gave p = 0.0017 where the exact p is 0.09), and every p-value is the exact
/// conditional test's, R `mantelhaen.test(exact = TRUE)` ([`cmh_exact`]); `statistic`
/// and `z` stay the asymptotic ones, and [`Cmh::exact`] says so.
///
/// Each `aᵢNᵢ − n₁ᵢm₁ᵢ` is an exact integer before it is divided, and the sums are
/// compensated, so the statistic keeps its relative precision near 0.
///
/// None when no stratum has units on both sides, or every one has a zero margin (the
/// variance is then 0).
pub fn cmh(strata: &[Stratum]) -> Option<Cmh> {
    let mut excess = Sum::default();
    let mut variance = Sum::default();
    for t in used(strata) {
        let n = t.total();
        let nf = n as f64;
        excess.add(ratio(t.a * n - t.n1() * t.m1(), n));
        let rows = t.n1() as f64 * t.n0() as f64 / nf;
        let columns = t.m1() as f64 * t.m0() as f64 / nf;
        variance.add(rows * columns / (nf - 1.0));
    }
    let (excess, variance) = (excess.value(), variance.value());
    if !(variance > 0.0 && variance.is_finite() && excess.is_finite()) {
        return None;
    }
    let statistic = excess * excess / variance;
    let z = excess / variance.sqrt();
    if !(statistic.is_finite() && z.is_finite()) {
        return None;
    }
    let sparse = mantel_fleiss(strata).is_some_and(|c| c < MANTEL_FLEISS_MIN);
    if let Some(e) = sparse.then(|| cmh_exact(strata)).flatten() {
        return Some(Cmh {
            statistic,
            z,
            p: e.p,
            exact: true,
            p_greater: e.p_greater,
            p_less: e.p_less,
        });
    }
    let p = ChiSquared::new(1.0).ok()?.sf(statistic).clamp(0.0, 1.0);
    Some(Cmh::asymptotic(statistic, z, p))
}

/// The asymptotic CMH test is used when [`mantel_fleiss`] is at least this; the exact
/// conditional test below it (Mantel & Fleiss, Am. J. Epidemiol. 112 (1980) 129–134).
pub const MANTEL_FLEISS_MIN: f64 = 5.0;

/// A task's weight more than this many nats below its most probable count is left out of
/// the distribution (unless it is the observed count): e⁻⁸⁰⁰ is below the smallest `f64`,
/// so nothing a p-value can show is lost, and the work stays bounded for large tasks.
const LOG_FLOOR: f64 = -800.0;

/// The most counts one task may contribute, and the most multiply-adds the convolution
/// may take; past either, [`cmh_exact`] gives None and the asymptotic test is used.
const MAX_TASK_WIDTH: usize = 1_000_000;
const MAX_CONVOLUTION_WORK: usize = 50_000_000;

/// R's relative tolerance for "as probable as the observed value" in
/// `mantelhaen.test(exact = TRUE)` (`relErr <- 1 + 10^(-7)`).
const R_TIE_REL: f64 = 1e-7;

/// The p-values of [`cmh_exact`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CmhExact {
    /// Two-sided: the probability of every value of `S` no more probable than the
    /// observed one (times `1 + 1e-7`).
    pub p: f64,
    /// `P(S ≥ s)`: the arm's rate is higher.
    pub p_greater: f64,
    /// `P(S ≤ s)`: the arm's rate is lower.
    pub p_less: f64,
}

/// The Mantel–Fleiss criterion: `min(Σ E aᵢ − Σ Lᵢ, Σ Uᵢ − Σ E aᵢ)` over the strata with
/// units on both sides, where `aᵢ` is the arm's events in stratum i, `E aᵢ = n₁ᵢm₁ᵢ/Nᵢ`
/// its hypergeometric mean given the margins and `[Lᵢ, Uᵢ] = [max(0, n₁ᵢ − m₀ᵢ),
/// min(n₁ᵢ, m₁ᵢ)]` its support: how far the expected total lies from either end of the
/// range the total can take. Below [`MANTEL_FLEISS_MIN`] the chi-square approximation of
/// the CMH statistic is not to be trusted.
///
/// Each `n₁ᵢm₁ᵢ − LᵢNᵢ` is an exact integer before it is divided. None when no stratum
/// has units on both sides.
pub fn mantel_fleiss(strata: &[Stratum]) -> Option<f64> {
    let (mut above, mut below, mut any) = (0.0, 0.0, false);
    for t in strata.iter().filter_map(Stratum::cells) {
        let n = t.total() as u128;
        let (n1, m1) = (t.n1() as u128, t.m1() as u128);
        let (low, high) = support(&t);
        let mean_n = n1 * m1;
        above += (mean_n - low as u128 * n) as f64 / n as f64;
        below += (high as u128 * n - mean_n) as f64 / n as f64;
        any = true;
    }
    any.then_some(above.min(below))
}

/// The exact conditional test that the odds ratio is 1 in every stratum: given each
/// stratum's margins, the arm's events `aᵢ` are independent hypergeometric counts, and
/// the distribution of `S = Σ aᵢ` is the convolution of their probability functions.
///
/// Convention: R `mantelhaen.test(x, exact = TRUE)` for 2×2×K tables: the two-sided p is
/// the probability of the values of `S` whose probability is at most the observed one's
/// times `1 + 1e-7`; `p_greater = P(S ≥ s)`, `p_less = P(S ≤ s)`. With one stratum this is
/// Fisher's exact test ([`super::fisher_exact`]).
///
/// Each stratum's probabilities are built in log space from its most probable count
/// outwards by the ratio of neighbouring probabilities,
/// `P(x + 1)/P(x) = (m₁ − x)(n₁ − x) / ((x + 1)(m₀ − n₁ + x + 1))`, so no factorial of a
/// large count is formed; counts more than 800 nats less probable than the most probable
/// one are left out, except the observed one. The convolution is in log space too.
///
/// None when no stratum has units on both sides, or when the distribution would be too
/// wide to convolve (a task spanning more than a million counts above the floor, which
/// the Mantel–Fleiss criterion never sends here in practice).
pub fn cmh_exact(strata: &[Stratum]) -> Option<CmhExact> {
    let mut dist: Vec<f64> = vec![0.0];
    let (mut offset, mut observed, mut any) = (0u128, 0u128, false);
    let mut work = 0usize;
    for t in strata.iter().filter_map(Stratum::cells) {
        let (start, weights) = log_weights(&t)?;
        work = work.saturating_add(dist.len().saturating_mul(weights.len()));
        if work > MAX_CONVOLUTION_WORK {
            return None;
        }
        dist = convolve(&dist, &weights);
        offset += start as u128;
        observed += t.a as u128;
        any = true;
    }
    if !any {
        return None;
    }
    let at = usize::try_from(observed - offset).ok()?;
    let total = log_sum_exp(dist.iter().copied());
    let share = |logs: f64| (logs - total).exp().clamp(0.0, 1.0);
    let threshold = dist[at] + R_TIE_REL.ln_1p();
    Some(CmhExact {
        p: share(log_sum_exp(
            dist.iter().copied().filter(move |&l| l <= threshold),
        )),
        p_greater: share(log_sum_exp(dist[at..].iter().copied())),
        p_less: share(log_sum_exp(dist[..=at].iter().copied())),
    })
}

/// `[L, U]`, the counts `a` a stratum's margins allow.
fn support(t: &Cells) -> (u64, u64) {
    let (n1, m1, m0) = (t.n1(), t.m1(), t.m0());
    ((n1 - m0).max(0) as u64, n1.min(m1) as u64)
}

/// A stratum's log probabilities (up to a constant) from the first count kept: the
/// counts whose weight is above [`LOG_FLOOR`] relative to the mode, and the observed one.
fn log_weights(t: &Cells) -> Option<(u64, Vec<f64>)> {
    let (low, high) = support(t);
    let (n1, m1, m0) = (t.n1() as u128, t.m1() as u128, t.m0() as u128);
    let n = t.total() as u128;
    let mode = ((n1 + 1) * (m1 + 1) / (n + 2)).clamp(low as u128, high as u128) as u64;
    let a = t.a as u64;
    // ln P(x + 1) − ln P(x), as a product of two ratios of exact counts (x ≥ L, so
    // m0 + x + 1 − n1 ≥ 1).
    let up = |x: u64| {
        let x = x as u128;
        let events = (m1 - x) as f64 / (x + 1) as f64;
        let units = (n1 - x) as f64 / (m0 + x + 1 - n1) as f64;
        (events * units).ln()
    };
    let mut above = Vec::new();
    let (mut x, mut w) = (mode, 0.0);
    while x < high && (w > LOG_FLOOR || x < a) {
        w += up(x);
        x += 1;
        above.push(w);
        if above.len() > MAX_TASK_WIDTH {
            return None;
        }
    }
    let mut below = Vec::new();
    let (mut x, mut w) = (mode, 0.0);
    while x > low && (w > LOG_FLOOR || x > a) {
        x -= 1;
        w -= up(x);
        below.push(w);
        if below.len() > MAX_TASK_WIDTH {
            return None;
        }
    }
    let start = mode - below.len() as u64;
    let mut weights: Vec<f64> = below.into_iter().rev().collect();
    weights.push(0.0);
    weights.extend(above);
    Some((start, weights))
}

/// The log-space convolution of two log probability functions.
fn convolve(x: &[f64], y: &[f64]) -> Vec<f64> {
    (0..x.len() + y.len() - 1)
        .map(|k| {
            let from = k.saturating_sub(y.len() - 1);
            let to = k.min(x.len() - 1);
            log_sum_exp((from..=to).map(|i| x[i] + y[k - i]))
        })
        .collect()
}

/// `ln Σ exp(lᵢ)`, shifted by the largest term; −∞ for no terms.
fn log_sum_exp(logs: impl Iterator<Item = f64> + Clone) -> f64 {
    let top = logs.clone().fold(f64::NEG_INFINITY, f64::max);
    if top == f64::NEG_INFINITY {
        return top;
    }
    top + logs.map(|l| (l - top).exp()).sum::<f64>().ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::fisher_exact;

    fn strata(counts: &[(u64, u64, u64, u64)]) -> Vec<Stratum> {
        counts
            .iter()
            .map(|&(k1, n1, k0, n0)| Stratum::new(k1, n1, k0, n0).unwrap())
            .collect()
    }

    #[test]
    fn one_stratum_is_fishers_exact_test() {
        let mut tables = vec![
            (0, 40, 1, 396),
            (1, 40, 0, 396),
            (3, 10, 7, 12),
            (5, 9, 0, 9),
        ];
        for k1 in 0..=12 {
            for k0 in (0..=20).step_by(3) {
                tables.push((k1, 12, k0, 20));
            }
        }
        tables.extend([
            (2, 1000, 9, 1200),
            (40, 60, 10, 70),
            (0, 3, 2, 2),
            (6, 6, 2, 7),
        ]);
        for (k1, n1, k0, n0) in tables {
            let e = cmh_exact(&strata(&[(k1, n1, k0, n0)])).unwrap();
            let table = [[k1, n1 - k1], [k0, n0 - k0]];
            for (alt, got) in [
                (Alternative::TwoSided, e.p),
                (Alternative::Greater, e.p_greater),
                (Alternative::Less, e.p_less),
            ] {
                let want = fisher_exact(table, alt).unwrap();
                assert!(
                    (got - want).abs() <= 1e-9 * want.max(1e-300),
                    "{table:?} {alt:?}: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn strata_without_events_or_units_change_nothing() {
        let one = cmh_exact(&strata(&[(1, 10, 0, 99)])).unwrap();
        let padded = strata(&[(1, 10, 0, 99), (0, 10, 0, 99), (0, 0, 3, 4), (10, 10, 9, 9)]);
        let more = cmh_exact(&padded).unwrap();
        let close = |x: f64, y: f64| (x - y).abs() < 1e-14;
        assert!(close(one.p, more.p) && close(one.p_greater, more.p_greater));
        assert_eq!(cmh_exact(&strata(&[(0, 0, 1, 2)])), None);
        assert_eq!(cmh_exact(&[]), None);
    }

    #[test]
    fn the_mantel_fleiss_criterion_measures_distance_from_the_support_bounds() {
        // E a = 1·40/436 in the task with the event, 0 elsewhere; L = U = 0 there.
        let seed = strata(&[
            (1, 10, 0, 99),
            (0, 10, 0, 99),
            (0, 10, 0, 99),
            (0, 10, 0, 99),
        ]);
        let mf = mantel_fleiss(&seed).unwrap();
        assert!((mf - 10.0 / 109.0).abs() < 1e-15, "{mf}");
        // Events almost everywhere: the distance to the upper bound is the short one.
        let full = strata(&[(29, 30, 25, 25), (20, 20, 39, 40)]);
        let want = (30.0 - 30.0 * 54.0 / 55.0) + (20.0 - 20.0 * 59.0 / 60.0);
        assert!((mantel_fleiss(&full).unwrap() - want).abs() < 1e-12);
        assert_eq!(mantel_fleiss(&strata(&[(0, 0, 1, 2)])), None);
        assert!(mantel_fleiss(&strata(&[(44, 240, 22, 240)])).unwrap() > MANTEL_FLEISS_MIN);
    }

    #[test]
    fn large_strata_with_rare_events_stay_cheap_and_exact() {
        // A 2⁶² arm with one event: P(a = 1) = n1/N exactly, here 1/2.
        let big = 1u64 << 62;
        let e = cmh_exact(&strata(&[(1, big, 0, big)])).unwrap();
        assert!(
            (e.p_greater - 0.5).abs() < 1e-12 && (e.p - 1.0).abs() < 1e-12,
            "{e:?}"
        );
        let far = cmh_exact(&strata(&[(200, 1_000_000, 0, 1_000_000)])).unwrap();
        assert!(far.p < 1e-55 && far.p_less == 1.0, "{far:?}");
    }

    #[test]
    fn one_event_in_one_task_is_judged_by_the_exact_test() {
        // The default run's entry_removal: `single` 1 of 40 against 0 of 396, all in one
        // task. The chi-square approximation gave p = 0.0017; the exact conditional p is
        // the pooled Fisher p, 40/436 = 0.0917 (one event: P(S ≥ 1) = n1/N).
        let seed = strata(&[
            (1, 10, 0, 99),
            (0, 10, 0, 99),
            (0, 10, 0, 99),
            (0, 10, 0, 99),
        ]);
        let c = cmh(&seed).unwrap();
        assert!(c.exact, "{c:?}");
        assert!((c.p - 10.0 / 109.0).abs() < 1e-12, "{c:?}");
        assert!((c.p_value(Alternative::Greater) - 10.0 / 109.0).abs() < 1e-12);
        assert_eq!(c.p_value(Alternative::Less), 1.0);
        let chi2 = ChiSquared::new(1.0).unwrap().sf(c.statistic);
        assert!(chi2 < 0.01 && c.z > 2.5, "the asymptotic p would be {chi2}");
        // Plenty of events: the asymptotic test, as before.
        assert!(
            !cmh(&strata(&[(36, 40, 280, 400), (140, 400, 4, 40)]))
                .unwrap()
                .exact
        );
    }
}
