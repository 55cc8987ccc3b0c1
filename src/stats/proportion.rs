//! Confidence intervals for one binomial proportion and for a difference of two.

use statrs::distribution::{Beta, Continuous, ContinuousCDF, Normal};

use super::error::{Result, StatsError, check_confidence, check_count};

/// A two-sided confidence interval `[low, high]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    /// Lower bound.
    pub low: f64,
    /// Upper bound.
    pub high: f64,
}

impl Interval {
    /// True when `low <= x <= high`.
    pub fn contains(&self, x: f64) -> bool {
        self.low <= x && x <= self.high
    }
}

/// Upper `tail` quantile of the standard normal, `scipy.stats.norm.isf(tail)`,
/// computed as `-ppf(tail)` so that small tails keep full precision.
pub(crate) fn normal_isf(tail: f64) -> f64 {
    -Normal::standard().inverse_cdf(tail)
}

/// Wilson score interval for `k` events in `n` trials, without continuity
/// correction.
///
/// Convention: statsmodels
/// `proportion_confint(k, n, alpha=1 - confidence, method="wilson")`,
/// including its final clipping of both bounds to `[0, 1]`. At `k == 0` the
/// lower bound is exactly 0 and at `k == n` the upper bound exactly 1 (their
/// exact values; statsmodels' floating-point evaluation can leave them one
/// ulp off, e.g. 0.9999999999999999).
///
/// Errors: `n == 0` (statsmodels returns NaN), `k > n`, or `confidence`
/// outside (0, 1).
pub fn wilson(k: u64, n: u64, confidence: f64) -> Result<Interval> {
    check_count(k, n)?;
    check_confidence(confidence)?;
    let alpha = 1.0 - confidence;
    let crit = normal_isf(alpha / 2.0);
    let crit2 = crit * crit;
    let nf = n as f64;
    let q = k as f64 / nf;
    let denom = 1.0 + crit2 / nf;
    let center = (q + crit2 / (2.0 * nf)) / denom;
    let dist = crit * (q * (1.0 - q) / nf + crit2 / (4.0 * nf * nf)).sqrt() / denom;
    // At k = 0 (k = n) the exact lower (upper) bound is 0 (1); evaluated in
    // floating point it can land an ulp inside, so pin it.
    let low = if k == 0 {
        0.0
    } else {
        (center - dist).clamp(0.0, 1.0)
    };
    let high = if k == n {
        1.0
    } else {
        (center + dist).clamp(0.0, 1.0)
    };
    Ok(Interval { low, high })
}

/// Clopper–Pearson ("exact") interval for `k` events in `n` trials.
///
/// Convention: statsmodels
/// `proportion_confint(k, n, alpha=1 - confidence, method="beta")`:
/// `low = Beta(k, n - k + 1).ppf(alpha / 2)` (0 when `k == 0`) and
/// `high = Beta(k + 1, n - k).isf(alpha / 2)` (1 when `k == n`).
///
/// Errors: `n == 0`, `k > n`, or `confidence` outside (0, 1).
pub fn clopper_pearson(k: u64, n: u64, confidence: f64) -> Result<Interval> {
    check_count(k, n)?;
    check_confidence(confidence)?;
    let tail = (1.0 - confidence) / 2.0;
    let beta = |a: u64, b: u64| {
        Beta::new(a as f64, b as f64).map_err(|e| StatsError::InvalidInput(e.to_string()))
    };
    let low = if k == 0 {
        0.0
    } else {
        beta_tail_quantile(&beta(k, n - k + 1)?, tail, false)
    };
    let high = if k == n {
        1.0
    } else {
        beta_tail_quantile(&beta(k + 1, n - k)?, tail, true)
    };
    Ok(Interval { low, high })
}

/// `x` with `cdf(x) = tail` (`upper == false`, scipy `beta.ppf(tail)`) or
/// `sf(x) = tail` (`upper == true`, scipy `beta.isf(tail)`).
///
/// statrs' `inverse_cdf` (AS 109) stops at about 1e-12 absolute, which is
/// ~5e-9 relative for a bound near 0 such as `isf` for k = 0, n = 10,000. The
/// estimate is therefore polished with Newton steps on statrs' own `cdf` /
/// `sf` (each tail evaluated directly) and `pdf`.
fn beta_tail_quantile(dist: &Beta, tail: f64, upper: bool) -> f64 {
    let mut x = dist.inverse_cdf(if upper { 1.0 - tail } else { tail });
    for _ in 0..8 {
        let density = dist.pdf(x);
        if !(density > 0.0 && density.is_finite()) {
            break;
        }
        // Residual of an increasing function of x that is 0 at the answer.
        let residual = if upper {
            tail - dist.sf(x)
        } else {
            dist.cdf(x) - tail
        };
        let next = x - residual / density;
        if !(next > 0.0 && next < 1.0) {
            break;
        }
        let step = (next - x).abs();
        x = next;
        if step <= 4.0 * f64::EPSILON * x {
            break;
        }
    }
    x
}

/// Newcombe hybrid score interval for the difference of proportions
/// `p1 - p2 = k1/n1 - k2/n2` (Newcombe 1998, method 10).
///
/// Convention: statsmodels
/// `confint_proportions_2indep(k1, n1, k2, n2, method="newcomb",
/// compare="diff", alpha=1 - confidence)`, which builds on the two clipped
/// [`wilson`] intervals. The interval is for arm 1 minus arm 2: pass the new
/// arm first to get "new − baseline".
///
/// Errors: as [`wilson`] for either arm.
pub fn newcombe_diff(k1: u64, n1: u64, k2: u64, n2: u64, confidence: f64) -> Result<Interval> {
    let w1 = wilson(k1, n1, confidence)?;
    let w2 = wilson(k2, n2, confidence)?;
    let p1 = k1 as f64 / n1 as f64;
    let p2 = k2 as f64 / n2 as f64;
    let diff = p1 - p2;
    let d_low = ((p1 - w1.low).powi(2) + (w2.high - p2).powi(2)).sqrt();
    let d_high = ((p2 - w2.low).powi(2) + (w1.high - p1).powi(2)).sqrt();
    Ok(Interval {
        low: diff - d_low,
        high: diff + d_high,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const COUNTS: [(u64, u64); 10] = [
        (0, 1),
        (1, 1),
        (0, 10),
        (3, 10),
        (10, 10),
        (22, 240),
        (44, 240),
        (0, 10_000),
        (5_000, 10_000),
        (10_000, 10_000),
    ];

    #[test]
    fn wilson_interval_contains_the_estimate_and_stays_in_unit_range() {
        for (k, n) in COUNTS {
            for conf in [0.5, 0.95, 0.999] {
                let ci = wilson(k, n, conf).unwrap();
                assert!(ci.contains(k as f64 / n as f64), "{k}/{n} {ci:?}");
                assert!(0.0 <= ci.low && ci.high <= 1.0, "{k}/{n} {ci:?}");
            }
        }
    }

    #[test]
    fn clopper_pearson_interval_contains_the_estimate_and_stays_in_unit_range() {
        for (k, n) in COUNTS {
            for conf in [0.5, 0.95, 0.999] {
                let ci = clopper_pearson(k, n, conf).unwrap();
                assert!(ci.contains(k as f64 / n as f64), "{k}/{n} {ci:?}");
                assert!(0.0 <= ci.low && ci.high <= 1.0, "{k}/{n} {ci:?}");
            }
        }
    }

    #[test]
    fn clopper_pearson_is_wider_than_wilson_for_a_typical_count() {
        let w = wilson(22, 240, 0.95).unwrap();
        let cp = clopper_pearson(22, 240, 0.95).unwrap();
        assert!(cp.low < w.low && cp.high > w.high);
    }

    #[test]
    fn newcombe_interval_contains_the_observed_difference_and_flips_with_the_arms() {
        let d = newcombe_diff(44, 240, 22, 240, 0.95).unwrap();
        assert!(d.contains(22.0 / 240.0));
        let r = newcombe_diff(22, 240, 44, 240, 0.95).unwrap();
        assert!((d.low + r.high).abs() < 1e-15 && (d.high + r.low).abs() < 1e-15);
    }

    #[test]
    fn higher_confidence_gives_a_wider_interval() {
        let a = wilson(31, 240, 0.95).unwrap();
        let b = wilson(31, 240, 0.999).unwrap();
        assert!(b.low < a.low && b.high > a.high);
    }

    #[test]
    fn invalid_counts_and_confidences_are_errors_not_panics() {
        assert!(wilson(0, 0, 0.95).is_err());
        assert!(wilson(3, 2, 0.95).is_err());
        for conf in [0.0, 1.0, -0.5, 1.5, f64::NAN] {
            assert!(wilson(1, 2, conf).is_err());
            assert!(clopper_pearson(1, 2, conf).is_err());
            assert!(newcombe_diff(1, 2, 1, 2, conf).is_err());
        }
        assert!(clopper_pearson(5, 4, 0.95).is_err());
        assert!(newcombe_diff(1, 2, 1, 0, 0.95).is_err());
    }
}
