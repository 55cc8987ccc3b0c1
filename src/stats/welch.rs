//! Welch's unequal-variance t-test with a confidence interval for the mean difference.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::describe::mean;
use super::error::{Result, StatsError, check_confidence, check_sample, invalid};

/// Result of [`welch`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// `mean(a) - mean(b)`.
    pub diff: f64,
    /// Lower confidence bound for `diff`.
    pub low: f64,
    /// Upper confidence bound for `diff`.
    pub high: f64,
    /// t statistic, `diff / sqrt(var_a/n_a + var_b/n_b)`.
    pub t: f64,
    /// Welch–Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value, `2 * t_df.sf(|t|)`.
    pub p: f64,
}

/// Welch's t-test of `mean(a) == mean(b)` with a two-sided confidence interval
/// for `mean(a) - mean(b)`.
///
/// Convention: scipy `res = ttest_ind(a, b, equal_var=False)` (two-sided) and
/// `res.confidence_interval(confidence_level=confidence)`: sample variances
/// with n − 1, `df = (va/na + vb/nb)² / ((va/na)²/(na−1) + (vb/nb)²/(nb−1))`,
/// `p = 2 * t.sf(|t|, df)` (upper tail, never 1 − cdf), and
/// `diff ± t.ppf(..) * se` from the Student t quantiles of statrs.
///
/// Errors:
/// * `InvalidInput` for a sample with fewer than 2 values or a NaN / infinite
///   value (scipy returns NaN), or `confidence` outside (0, 1);
/// * `Undefined` when both samples are constant (zero standard error; scipy
///   gives t = ±inf, or NaN when the means are equal too). One constant
///   sample is fine.
pub fn welch(a: &[f64], b: &[f64], confidence: f64) -> Result<Welch> {
    check_sample("a", a)?;
    check_sample("b", b)?;
    check_confidence(confidence)?;
    if a.len() < 2 || b.len() < 2 {
        return invalid("each sample needs at least 2 values for a variance");
    }
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let (ma, mb) = (mean(a), mean(b));
    let vn_a = variance(a, ma) / na;
    let vn_b = variance(b, mb) / nb;
    if vn_a + vn_b == 0.0 {
        return Err(StatsError::Undefined(
            "both samples are constant: the standard error is 0".into(),
        ));
    }
    let df = (vn_a + vn_b).powi(2) / (vn_a.powi(2) / (na - 1.0) + vn_b.powi(2) / (nb - 1.0));
    let se = (vn_a + vn_b).sqrt();
    let diff = ma - mb;
    let t = diff / se;
    let dist = StudentsT::new(0.0, 1.0, df).map_err(|e| StatsError::Undefined(e.to_string()))?;
    let p = 2.0 * dist.sf(t.abs());
    let tail = (1.0 - confidence) / 2.0;
    Ok(Welch {
        diff,
        low: dist.inverse_cdf(tail) * se + diff,
        high: dist.inverse_cdf(1.0 - tail) * se + diff,
        t,
        df,
        p,
    })
}

/// Variance with n − 1, computed as scipy does: `mean((x - m)²) * n / (n - 1)`.
fn variance(x: &[f64], m: f64) -> f64 {
    let n = x.len() as f64;
    let ss: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
    (ss / n) * (n / (n - 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: [f64; 5] = [12.1, 14.3, 11.8, 15.0, 13.2];
    const B: [f64; 4] = [10.4, 9.9, 11.7, 10.1];

    #[test]
    fn interval_is_centred_on_the_difference_and_contains_it() {
        let w = welch(&A, &B, 0.95).unwrap();
        assert!(w.low < w.diff && w.diff < w.high);
        assert!(((w.high - w.diff) - (w.diff - w.low)).abs() < 1e-12);
    }

    #[test]
    fn swapping_samples_negates_t_and_the_interval_and_keeps_p() {
        let w = welch(&A, &B, 0.9).unwrap();
        let s = welch(&B, &A, 0.9).unwrap();
        assert_eq!((w.t, w.p, w.df), (-s.t, s.p, s.df));
        assert!((w.low + s.high).abs() < 1e-12 && (w.high + s.low).abs() < 1e-12);
    }

    #[test]
    fn interval_excludes_zero_exactly_when_p_is_below_alpha() {
        let w = welch(&A, &B, 0.95).unwrap();
        assert_eq!(w.p < 0.05, w.low > 0.0 || w.high < 0.0);
    }

    #[test]
    fn one_constant_sample_is_fine_but_two_are_undefined() {
        assert!(welch(&[0.0, 0.0, 1.0], &[5.0, 5.0], 0.95).is_ok());
        assert!(matches!(
            welch(&[1.0, 1.0], &[2.0, 2.0], 0.95),
            Err(StatsError::Undefined(_))
        ));
    }

    #[test]
    fn tiny_or_non_finite_samples_and_bad_confidence_are_errors() {
        assert!(welch(&[1.0], &B, 0.95).is_err());
        assert!(welch(&A, &[], 0.95).is_err());
        assert!(welch(&[1.0, f64::INFINITY], &B, 0.95).is_err());
        assert!(welch(&A, &B, 1.0).is_err());
    }
}
