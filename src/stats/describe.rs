//! Descriptive summary of a sample and numpy-compatible percentiles.

use super::error::{Result, check_sample, invalid};

/// Summary of a sample, see [`describe`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Describe {
    /// Sample size.
    pub n: usize,
    /// Arithmetic mean, `numpy.mean`.
    pub mean: f64,
    /// Sample standard deviation with n − 1 denominator,
    /// `numpy.std(x, ddof=1)`; `None` when n = 1 (numpy gives NaN).
    pub sd: Option<f64>,
    /// `numpy.median` (mean of the two middle values for even n).
    pub median: f64,
    /// `numpy.percentile(x, 10)` (linear interpolation).
    pub p10: f64,
    /// `numpy.percentile(x, 90)` (linear interpolation).
    pub p90: f64,
}

/// Summarises a sample: n, mean, sd (n − 1), median, 10th and 90th percentiles.
///
/// Conventions: `numpy.mean`, `numpy.std(ddof=1)` (two-pass),
/// `numpy.median`, `numpy.percentile(x, q)` with the default
/// `method="linear"`.
///
/// Errors: empty sample, or a NaN / infinite value.
pub fn describe(x: &[f64]) -> Result<Describe> {
    check_sample("x", x)?;
    let n = x.len();
    let mean = mean(x);
    let sd = (n > 1).then(|| {
        let ss: f64 = x.iter().map(|v| (v - mean) * (v - mean)).sum();
        (ss / (n - 1) as f64).sqrt()
    });
    let sorted = sorted(x);
    let mid = n / 2;
    let median = if n % 2 == 1 {
        sorted[mid]
    } else {
        (sorted[mid - 1] + sorted[mid]) / 2.0
    };
    Ok(Describe {
        n,
        mean,
        sd,
        median,
        p10: quantile_sorted(&sorted, 0.1),
        p90: quantile_sorted(&sorted, 0.9),
    })
}

/// The `q`-th percentile (q in [0, 100]) of a sample.
///
/// Convention: `numpy.percentile(x, q)` with the default `method="linear"`
/// (Hyndman–Fan type 7): virtual index `(n - 1) * q / 100`, linear
/// interpolation between its two neighbours, using numpy's two-sided lerp.
///
/// Errors: empty sample, a NaN / infinite value, or `q` outside [0, 100].
pub fn percentile(x: &[f64], q: f64) -> Result<f64> {
    check_sample("x", x)?;
    if !(0.0..=100.0).contains(&q) {
        return invalid(format!("percentile must be in [0, 100], got {q}"));
    }
    Ok(quantile_sorted(&sorted(x), q / 100.0))
}

pub(crate) fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

pub(crate) fn sorted(x: &[f64]) -> Vec<f64> {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// numpy `quantile(sorted, fraction, method="linear")` on an already sorted,
/// non-empty, NaN-free slice; `fraction` in [0, 1].
pub(crate) fn quantile_sorted(sorted: &[f64], fraction: f64) -> f64 {
    let last = sorted.len() - 1;
    let virtual_index = last as f64 * fraction;
    if virtual_index >= last as f64 {
        return sorted[last];
    }
    let below = virtual_index.floor();
    let gamma = virtual_index - below;
    let i = below as usize;
    let (a, b) = (sorted[i], sorted[i + 1]);
    let diff = b - a;
    if gamma >= 0.5 {
        b - diff * (1.0 - gamma)
    } else {
        a + diff * gamma
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_single_value_has_no_sd_and_is_its_own_median_and_percentiles() {
        let d = describe(&[4.2]).unwrap();
        assert_eq!(
            (d.n, d.mean, d.sd, d.median, d.p10, d.p90),
            (1, 4.2, None, 4.2, 4.2, 4.2)
        );
    }

    #[test]
    fn two_values_interpolate_linearly() {
        let d = describe(&[2.0, 1.0]).unwrap();
        assert_eq!(d.median, 1.5);
        assert!((d.p10 - 1.1).abs() < 1e-15 && (d.p90 - 1.9).abs() < 1e-15);
        assert!((d.sd.unwrap() - std::f64::consts::FRAC_1_SQRT_2).abs() < 1e-15);
    }

    #[test]
    fn percentiles_are_ordered_and_bounded_by_the_extremes() {
        let x = [5.5, 1.25, 9.0, 2.0, 2.0, 7.75, -3.0];
        let qs = [0.0, 2.5, 10.0, 50.0, 90.0, 97.5, 100.0];
        let v: Vec<f64> = qs.iter().map(|&q| percentile(&x, q).unwrap()).collect();
        assert_eq!(v[0], -3.0);
        assert_eq!(v[6], 9.0);
        assert!(v.windows(2).all(|w| w[0] <= w[1]), "{v:?}");
    }

    #[test]
    fn empty_or_non_finite_samples_and_bad_percentiles_are_errors() {
        assert!(describe(&[]).is_err());
        assert!(describe(&[1.0, f64::NAN]).is_err());
        assert!(percentile(&[1.0], 101.0).is_err());
        assert!(percentile(&[1.0], f64::NAN).is_err());
        assert!(percentile(&[], 50.0).is_err());
    }
}
