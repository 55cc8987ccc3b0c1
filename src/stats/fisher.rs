//! Fisher's exact test on a 2x2 table, computed in log space.

use statrs::distribution::{Discrete, DiscreteCDF, Hypergeometric};
use statrs::function::factorial::ln_factorial;

use super::error::{Result, StatsError, invalid};

/// Alternative hypothesis of a test, named as in scipy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Alternative {
    /// `alternative="two-sided"`.
    TwoSided,
    /// `alternative="greater"`: for [`fisher_exact`], odds ratio > 1, i.e.
    /// row 0's event rate is higher than row 1's.
    Greater,
    /// `alternative="less"`: for [`fisher_exact`], odds ratio < 1, i.e.
    /// row 0's event rate is lower than row 1's.
    Less,
}

/// scipy's relative tolerance for "as probable as the observed table".
const SCIPY_TIE_REL: f64 = 1e-14;

/// Log-space tie tolerance for a table of `total` observations.
///
/// scipy compares probabilities from boost (accurate to a few ulps) with a
/// relative tolerance of 1e-14. Our probabilities are `exp(ln_pmf)`, where
/// `ln_pmf` is a sum of nine ln-factorials of size up to `ln(total!)`, so its
/// absolute rounding error is of the order of one ulp of `ln(total!)` (4e-11
/// for total = 20,000). Mirror tables that are exactly as probable as the
/// observed one (equal arm sizes, equal column totals) must still count as
/// ties, so the tolerance is scipy's plus 8 ulps of `ln(total!)`. (Measured:
/// mirror tables under equal column totals differ by at most ~0.3 ulp of
/// `ln(total!)` for totals from 480 to 100,000.)
fn tie_tolerance(total: u64) -> f64 {
    SCIPY_TIE_REL + 8.0 * f64::EPSILON * ln_factorial(total)
}

/// p-value of Fisher's exact test on a 2x2 table of counts.
///
/// Orientation: `table[i] = [events_i, non_events_i]`, rows are arms. The odds
/// ratio is `(t00 * t11) / (t01 * t10)`; [`Alternative::Greater`] tests odds
/// ratio > 1, i.e. "row 0's rate is higher" — put the new arm in row 0.
///
/// Convention: scipy `fisher_exact(table, alternative).pvalue` (scipy 1.17):
/// * `Less` = `hypergeom.cdf(t00, N, r0, c0)`;
/// * `Greater` = `hypergeom.cdf(t01, N, r0, c1)`;
/// * `TwoSided` = the probability of all tables (same margins) whose
///   probability is at most the observed one's times `1 + 1e-14`, where the
///   observed table's own tail is summed in full and the opposite tail is
///   found by binary search, exactly as scipy does. The tie tolerance is
///   widened slightly to cover our own rounding (see the private
///   `tie_tolerance` in this file) so that mirror tables still tie;
/// * a zero row or column total gives 1.0, like scipy;
/// * the result is capped at 1.
///
/// Every probability is `exp` of statrs' `Hypergeometric::ln_pmf` and each tail
/// is summed directly (statrs `cdf` for lower tails, `sf` for upper tails),
/// so nothing overflows for arms of 10,000+ and small p-values keep their
/// relative precision (down to the `f64` underflow near 1e-308).
///
/// Errors: only if the grand total exceeds `u64::MAX / 2`.
pub fn fisher_exact(table: [[u64; 2]; 2], alternative: Alternative) -> Result<f64> {
    let [[a, b], [c, d]] = table;
    let sum = |x: u64, y: u64| {
        x.checked_add(y)
            .ok_or_else(|| StatsError::InvalidInput("table total overflows u64".into()))
    };
    let (r0, r1, c0, c1) = (sum(a, b)?, sum(c, d)?, sum(a, c)?, sum(b, d)?);
    let total = sum(r0, r1)?;
    if total > u64::MAX / 2 {
        return invalid("table total too large");
    }
    if r0 == 0 || r1 == 0 || c0 == 0 || c1 == 0 {
        return Ok(1.0);
    }
    let hyper = |draws: u64| {
        Hypergeometric::new(total, r0, draws).map_err(|e| StatsError::InvalidInput(e.to_string()))
    };
    let p = match alternative {
        Alternative::Less => hyper(c0)?.cdf(a),
        Alternative::Greater => hyper(c1)?.cdf(b),
        Alternative::TwoSided => two_sided(&hyper(c0)?, a, r0, c0, total)?,
    };
    Ok(p.min(1.0))
}

/// scipy's two-sided rule; `x` = t00 ~ Hypergeometric(total, r0, c0).
fn two_sided(dist: &Hypergeometric, x: u64, r0: u64, c0: u64, total: u64) -> Result<f64> {
    let mode = (c0 as u128 + 1) * (r0 as u128 + 1) / (total as u128 + 2);
    let mode = u64::try_from(mode).or_else(|_| invalid("table too large"))?;
    let ln_exact = dist.ln_pmf(x);
    let tol = tie_tolerance(total);
    if dist.ln_pmf(mode) - ln_exact <= tol {
        return Ok(1.0);
    }
    // Tables with ln_pmf below this are "no more probable than observed".
    let threshold = ln_exact + tol;
    if x < mode {
        // Observed is in the lower tail; add the upper tables with pmf < threshold.
        let lower = dist.cdf(x);
        if dist.ln_pmf(c0) > threshold {
            return Ok(lower);
        }
        // pmf decreases on [mode, c0]: last x with ln_pmf(x) >= threshold.
        let (mut lo, mut hi) = (mode, c0 + 1);
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if dist.ln_pmf(mid) >= threshold {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Ok(lower + dist.sf(lo))
    } else {
        // Observed is in the upper tail; add the lower tables with pmf <= threshold.
        let upper = if x == 0 { 1.0 } else { dist.sf(x - 1) };
        if dist.ln_pmf(0) > threshold {
            return Ok(upper);
        }
        // pmf increases on [0, mode]: first x with ln_pmf(x) > threshold.
        let (mut lo, mut hi) = (0, mode);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if dist.ln_pmf(mid) > threshold {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        Ok(upper + if lo == 0 { 0.0 } else { dist.cdf(lo - 1) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Alternative::*;

    fn p(t: [[u64; 2]; 2], alt: Alternative) -> f64 {
        fisher_exact(t, alt).unwrap()
    }

    #[test]
    fn swapping_rows_swaps_greater_and_less_and_keeps_two_sided() {
        for t in [[[31, 209], [4, 236]], [[3, 5], [4, 50]], [[0, 10], [7, 3]]] {
            let s = [t[1], t[0]];
            let close = |x: f64, y: f64| ((x - y) / y).abs() < 1e-12;
            assert!(close(p(t, Greater), p(s, Less)));
            assert!(close(p(t, Less), p(s, Greater)));
            assert!(close(p(t, TwoSided), p(s, TwoSided)));
        }
    }

    #[test]
    fn greater_is_small_when_row_zero_has_the_higher_rate() {
        let t = [[44, 196], [22, 218]];
        assert!(p(t, Greater) < 0.01);
        assert!(p(t, Less) > 0.99);
    }

    #[test]
    fn mirror_tables_with_equal_arms_count_as_ties() {
        // [[3,7],[7,3]] and its mirror are equally probable: two-sided = 2 x one-sided.
        let t = [[3, 7], [7, 3]];
        assert!((p(t, TwoSided) - 2.0 * p(t, Less)).abs() < 1e-15);
        let big = [[5200, 4800], [4800, 5200]];
        assert!((p(big, TwoSided) / (2.0 * p(big, Greater)) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn mirror_tables_with_equal_column_totals_count_as_ties() {
        // Rows 4000 / 6000, columns 5000 / 5000: x and 4000 - x are equally probable.
        let t = [[2100, 1900], [2900, 3100]];
        assert!((p(t, TwoSided) / (2.0 * p(t, Greater)) - 1.0).abs() < 1e-9);
    }

    #[test]
    fn tables_tied_through_zero_and_one_factorials_count_as_ties() {
        // 0!2!3!5! = 1!1!2!6!: both tables are modes, so p = 1.
        assert_eq!(p([[0, 2], [3, 5]], TwoSided), 1.0);
        assert_eq!(p([[1, 1], [2, 6]], TwoSided), 1.0);
    }

    #[test]
    fn balanced_table_has_p_value_one() {
        assert_eq!(p([[10, 10], [10, 10]], TwoSided), 1.0);
        assert_eq!(p([[5000, 5000], [5000, 5000]], TwoSided), 1.0);
    }

    #[test]
    fn zero_margins_give_p_value_one() {
        for alt in [TwoSided, Greater, Less] {
            assert_eq!(p([[0, 5], [0, 7]], alt), 1.0);
            assert_eq!(p([[0, 0], [3, 4]], alt), 1.0);
            assert_eq!(p([[0, 0], [0, 0]], alt), 1.0);
        }
    }

    #[test]
    fn p_values_are_probabilities_for_large_arms() {
        for t in [
            [[900, 100], [100, 900]],
            [[10_000, 0], [0, 10_000]],
            [[1, 9_999], [0, 10_000]],
        ] {
            for alt in [TwoSided, Greater, Less] {
                let v = p(t, alt);
                assert!((0.0..=1.0).contains(&v), "{t:?} {alt:?} {v}");
            }
        }
    }

    #[test]
    fn overflowing_totals_are_errors_not_panics() {
        assert!(fisher_exact([[u64::MAX, 1], [0, 1]], TwoSided).is_err());
    }
}
