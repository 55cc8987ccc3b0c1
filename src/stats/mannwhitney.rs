//! Mann–Whitney U test (two-sided), exact or normal-approximation as scipy chooses.

use statrs::distribution::{ContinuousCDF, Normal};

use super::error::{Result, StatsError, check_sample};

/// Result of [`mann_whitney`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// U statistic of the first sample, `R_a - n_a (n_a + 1) / 2` (scipy's
    /// `statistic`); ties get average ranks, so U may end in .5.
    pub u: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// True when the exact null distribution was used, false for the normal
    /// approximation.
    pub exact: bool,
}

/// Two-sided Mann–Whitney U test of `a` against `b`.
///
/// Convention: scipy `mannwhitneyu(a, b)` with its defaults
/// (`alternative="two-sided"`, `use_continuity=True`, `method="auto"`), scipy 1.17:
/// * "auto" picks **exact** when `min(len(a), len(b)) <= 8` **and** there are
///   no ties among all values pooled; otherwise the normal approximation
///   (scipy `_mwu_choose_method`: asymptotic if both sizes > 8, or if any tie).
/// * With `U = max(U_a, U_b)`:
///   exact `p = 2 * P(U' <= n_a n_b - U)` from the exact null distribution
///   (counts of rank configurations, computed exactly in `i128`);
///   asymptotic `p = 2 * Normal.sf(z)`, `z = (U - n_a n_b / 2 - 0.5) / s`,
///   `s² = n_a n_b / 12 * ((n + 1) - Σ(t³ - t) / (n (n - 1)))` with tie sizes
///   `t` (tie-corrected, continuity-corrected). When `s = 0` (every value
///   equal) `z = -inf` and p = 1, as in scipy.
/// * p is clipped to [0, 1].
///
/// Errors:
/// * `InvalidInput` for an empty sample or a NaN / infinite value;
/// * `Undefined` if the exact branch is chosen but the number of rank
///   configurations `C(n_a + n_b, min(n_a, n_b))` overflows `i128` (only for
///   a sample of ≤ 8 against one of roughly 190,000+ values).
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Result<MannWhitney> {
    check_sample("a", a)?;
    check_sample("b", b)?;
    let (n1, n2) = (a.len(), b.len());
    let (ranks, tie_sizes) = average_ranks(a, b);
    let r1: f64 = ranks[..n1].iter().sum();
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let u1 = r1 - n1f * (n1f + 1.0) / 2.0;
    let u2 = n1f * n2f - u1;
    let u = u1.max(u2);
    let has_ties = tie_sizes.iter().any(|&t| t > 1);
    let exact = (n1 <= 8 || n2 <= 8) && !has_ties;
    let p = if exact {
        // No ties, so U is an integer; the lower tail at n1*n2 - U is summed directly.
        let lower = (n1 as u64 * n2 as u64) as f64 - u;
        2.0 * exact_cdf(lower as u64, n1.min(n2), n1.max(n2))?
    } else {
        let n = n1f + n2f;
        let tie_term: f64 = tie_sizes
            .iter()
            .map(|&t| (t as f64).powi(3) - t as f64)
            .sum();
        let s = (n1f * n2f / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)))).sqrt();
        let numerator = u - n1f * n2f / 2.0 - 0.5;
        if s == 0.0 {
            1.0
        } else {
            2.0 * Normal::standard().sf(numerator / s)
        }
    };
    Ok(MannWhitney {
        u: u1,
        p: p.clamp(0.0, 1.0),
        exact,
    })
}

/// Average ranks (1-based) of `a` followed by `b`, and the size of every group
/// of tied values (scipy `rankdata(method="average")` and its tie counts).
fn average_ranks(a: &[f64], b: &[f64]) -> (Vec<f64>, Vec<usize>) {
    let pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    let mut order: Vec<usize> = (0..pooled.len()).collect();
    order.sort_by(|&i, &j| pooled[i].total_cmp(&pooled[j]));
    let mut ranks = vec![0.0; pooled.len()];
    let mut tie_sizes = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && pooled[order[end]] == pooled[order[start]] {
            end += 1;
        }
        // Positions start..end (0-based) share the mean of ranks start+1..=end.
        let rank = (start + 1 + end) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        tie_sizes.push(end - start);
        start = end;
    }
    (ranks, tie_sizes)
}

/// `P(U <= k)` under H0 for samples of sizes `m <= n` without ties.
///
/// The number of rank configurations with `U = u` is the coefficient of `q^u`
/// in the Gaussian binomial `[m + n choose m]_q =
/// Π_{j=1..m} (1 - q^(n+j)) / (1 - q^j)`; it is built one factor at a time,
/// truncated at `q^k`, in exact integer arithmetic (the same counts scipy's
/// `_MWU` builds), then divided by `C(m + n, m)`.
fn exact_cdf(k: u64, m: usize, n: usize) -> Result<f64> {
    let overflow = || StatsError::Undefined("exact Mann-Whitney counts overflow i128".into());
    let k = usize::try_from(k).map_err(|_| overflow())?;
    let mut counts = vec![0i128; k + 1];
    counts[0] = 1;
    let mut total: i128 = 1;
    for j in 1..=m {
        // Multiply by (1 - q^(n+j)), high powers first so inputs are unmodified.
        for u in (n + j..=k).rev() {
            counts[u] = counts[u]
                .checked_sub(counts[u - n - j])
                .ok_or_else(overflow)?;
        }
        // Divide by (1 - q^j): a running sum with stride j.
        for u in j..=k {
            counts[u] = counts[u].checked_add(counts[u - j]).ok_or_else(overflow)?;
        }
        // C(n + j, j) = C(n + j - 1, j - 1) * (n + j) / j, exact at every step.
        total = total.checked_mul((n + j) as i128).ok_or_else(overflow)? / j as i128;
    }
    let mut below: i128 = 0;
    for &c in &counts {
        below = below.checked_add(c).ok_or_else(overflow)?;
    }
    Ok(below as f64 / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_counts_sum_to_the_number_of_rank_configurations() {
        // P(U <= m*n) = 1 for several shapes.
        for (m, n) in [(1, 1), (2, 3), (5, 5), (8, 20), (3, 300)] {
            assert_eq!(exact_cdf((m * n) as u64, m, n).unwrap(), 1.0);
        }
    }

    #[test]
    fn exact_distribution_matches_a_hand_count() {
        // m = 2, n = 2: U takes 0,1,2,2,3,4 over the 6 configurations.
        let cdf: Vec<f64> = (0..=4).map(|k| exact_cdf(k, 2, 2).unwrap()).collect();
        assert_eq!(cdf, vec![1.0 / 6.0, 2.0 / 6.0, 4.0 / 6.0, 5.0 / 6.0, 1.0]);
    }

    #[test]
    fn u_statistics_of_the_two_samples_add_up_to_the_product_of_sizes() {
        let (a, b) = ([1.0, 4.0, 4.0, 9.0], [2.0, 4.0, 7.0]);
        let ab = mann_whitney(&a, &b).unwrap();
        let ba = mann_whitney(&b, &a).unwrap();
        assert_eq!(ab.u + ba.u, 12.0);
        assert_eq!(ab.p, ba.p);
    }

    #[test]
    fn auto_uses_exact_only_for_a_small_tie_free_sample() {
        let small = [1.0, 2.0, 3.0];
        let big: Vec<f64> = (10..30).map(f64::from).collect();
        assert!(mann_whitney(&small, &big).unwrap().exact);
        assert!(!mann_whitney(&[1.0, 2.0, 2.0], &[3.0, 4.0]).unwrap().exact);
        let big2: Vec<f64> = (40..49).map(f64::from).collect();
        assert!(!mann_whitney(&big2, &big).unwrap().exact);
    }

    #[test]
    fn identical_samples_give_p_value_one() {
        assert_eq!(mann_whitney(&[4.0, 4.0, 4.0], &[4.0, 4.0]).unwrap().p, 1.0);
        assert_eq!(mann_whitney(&[1.0, 2.0], &[1.0, 2.0]).unwrap().p, 1.0);
    }

    #[test]
    fn empty_or_non_finite_samples_are_errors() {
        assert!(mann_whitney(&[], &[1.0]).is_err());
        assert!(mann_whitney(&[1.0], &[f64::NAN]).is_err());
    }
}
