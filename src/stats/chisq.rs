//! Pearson chi-square test of homogeneity for K arms' event rates (a 2xK table).

use statrs::distribution::{ChiSquared, ContinuousCDF};

use super::error::{Result, StatsError, invalid};

/// Result of [`chi2_2xk`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChiSquare {
    /// Pearson's X² statistic.
    pub statistic: f64,
    /// Degrees of freedom, K − 1.
    pub dof: u64,
    /// Upper-tail p-value, `chi2.sf(statistic, dof)`.
    pub p: f64,
}

/// Chi-square test that K arms share one event rate; arm `i` has `k[i]`
/// events in `n[i]` trials.
///
/// Convention: scipy `chi2_contingency(table, correction=False)` on the 2xK
/// table `[[k_0, .., k_{K-1}], [n_0 - k_0, .., n_{K-1} - k_{K-1}]]`: expected
/// counts `row_total * column_total / grand_total`, X² = Σ (O − E)² / E,
/// dof = K − 1, p from the chi-square survival function (never 1 − cdf).
///
/// Errors:
/// * `InvalidInput` if `k` and `n` differ in length, K < 2, or some `k[i] > n[i]`;
/// * `Undefined` if an expected count is zero — an arm with `n[i] = 0`, or no
///   events (or no non-events) in any arm. scipy raises `ValueError` there too.
pub fn chi2_2xk(k: &[u64], n: &[u64]) -> Result<ChiSquare> {
    if k.len() != n.len() {
        return invalid(format!("k has {} arms but n has {}", k.len(), n.len()));
    }
    if k.len() < 2 {
        return invalid("need at least two arms");
    }
    if let Some(i) = (0..k.len()).find(|&i| k[i] > n[i]) {
        return invalid(format!("arm {i}: k = {} exceeds n = {}", k[i], n[i]));
    }
    let events: f64 = k.iter().map(|&x| x as f64).sum();
    let total: f64 = n.iter().map(|&x| x as f64).sum();
    let non_events = total - events;
    if n.contains(&0) || events == 0.0 || non_events == 0.0 {
        return Err(StatsError::Undefined(
            "a zero row or column total gives a zero expected count".into(),
        ));
    }
    // Row-major over the 2xK table, as numpy sums the flattened terms.
    let mut statistic = 0.0;
    for (row_total, row) in [(events, 0), (non_events, 1)] {
        for (&ki, &ni) in k.iter().zip(n) {
            let observed = if row == 0 { ki } else { ni - ki } as f64;
            let expected = row_total * ni as f64 / total;
            statistic += (observed - expected).powi(2) / expected;
        }
    }
    let dof = (k.len() - 1) as u64;
    let dist = ChiSquared::new(dof as f64).map_err(|e| StatsError::InvalidInput(e.to_string()))?;
    Ok(ChiSquare {
        statistic,
        dof,
        p: dist.sf(statistic),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_rates_give_zero_statistic_and_p_value_one() {
        let r = chi2_2xk(&[10, 10, 10], &[100, 100, 100]).unwrap();
        assert_eq!(r.statistic, 0.0);
        assert_eq!(r.dof, 2);
        assert_eq!(r.p, 1.0);
    }

    #[test]
    fn very_different_rates_give_a_tiny_p_value_from_the_upper_tail() {
        let r = chi2_2xk(&[900, 100], &[1000, 1000]).unwrap();
        assert!(r.p > 0.0 && r.p < 1e-100, "{r:?}");
    }

    #[test]
    fn zero_expected_counts_are_undefined_not_panics() {
        for (k, n) in [
            (vec![0, 0], vec![10, 10]),
            (vec![10, 10], vec![10, 10]),
            (vec![1, 0], vec![5, 0]),
        ] {
            assert!(matches!(chi2_2xk(&k, &n), Err(StatsError::Undefined(_))));
        }
    }

    #[test]
    fn malformed_tables_are_invalid_input() {
        assert!(matches!(
            chi2_2xk(&[1], &[2]),
            Err(StatsError::InvalidInput(_))
        ));
        assert!(matches!(
            chi2_2xk(&[1, 2], &[2]),
            Err(StatsError::InvalidInput(_))
        ));
        assert!(matches!(
            chi2_2xk(&[3, 1], &[2, 2]),
            Err(StatsError::InvalidInput(_))
        ));
    }
}
