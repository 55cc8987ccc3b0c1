//! One task's 2×2 table of an arm against the baseline: the input of the stratified
//! statistics in [`super::stratified`].

use super::error::{Result, invalid};

/// The largest count a [`Stratum`] accepts: `2^63 − 1`, the ceiling the harness holds
/// every count at. Below it every product the stratified statistics form from two counts
/// (`a·N`, `k1·n0`) fits an `i128` exactly.
pub const MAX_STRATUM_COUNT: u64 = i64::MAX as u64;

/// One stratum (one task): `k1` events among `n1` units of the arm being judged (the new
/// run, the non-baseline arm) and `k0` among `n0` of the baseline.
///
/// As a 2×2 table in statsmodels' orientation, rows are arms and column 0 holds the
/// events: `[[k1, n1 − k1], [k0, n0 − k0]]`, so an odds ratio above 1 or a positive
/// difference means the arm's rate is higher than the baseline's.
///
/// The invariant `k ≤ n ≤ MAX_STRATUM_COUNT` on both sides holds for every value;
/// `n = 0` on a side is allowed (the stratified statistics leave such a stratum out and
/// count it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Stratum {
    k1: u64,
    n1: u64,
    k0: u64,
    n0: u64,
}

impl Stratum {
    /// The stratum with `k1` of `n1` in the arm and `k0` of `n0` in the baseline.
    ///
    /// Errors: `InvalidInput` when `k1 > n1`, `k0 > n0`, or a count exceeds
    /// [`MAX_STRATUM_COUNT`].
    pub fn new(k1: u64, n1: u64, k0: u64, n0: u64) -> Result<Stratum> {
        for (side, k, n) in [("arm", k1, n1), ("baseline", k0, n0)] {
            if n > MAX_STRATUM_COUNT {
                return invalid(format!(
                    "{side}: n = {n} exceeds the count ceiling {MAX_STRATUM_COUNT}"
                ));
            }
            if k > n {
                return invalid(format!("{side}: k = {k} exceeds n = {n}"));
            }
        }
        Ok(Stratum { k1, n1, k0, n0 })
    }

    /// Events in the arm.
    pub fn k1(&self) -> u64 {
        self.k1
    }

    /// Units in the arm.
    pub fn n1(&self) -> u64 {
        self.n1
    }

    /// Events in the baseline.
    pub fn k0(&self) -> u64 {
        self.k0
    }

    /// Units in the baseline.
    pub fn n0(&self) -> u64 {
        self.n0
    }

    /// True when both sides have a unit: only such a stratum compares the arms, and the
    /// stratified statistics leave out the others.
    pub fn has_both_arms(&self) -> bool {
        self.n1 > 0 && self.n0 > 0
    }

    /// True when a row or column total of the 2×2 table is zero: a side without units, or
    /// no events (or no non-events) on both sides together. Such a stratum carries no
    /// information about an odds ratio.
    pub fn has_zero_margin(&self) -> bool {
        let events = self.k1 + self.k0;
        let units = self.n1 + self.n0;
        !self.has_both_arms() || events == 0 || events == units
    }

    /// `k1/n1 − k0/n0`; None when a side has no units.
    pub fn diff(&self) -> Option<f64> {
        self.has_both_arms()
            .then(|| self.k1 as f64 / self.n1 as f64 - self.k0 as f64 / self.n0 as f64)
    }

    /// The cells and margins of a stratum with both arms, as exact integers.
    pub(crate) fn cells(&self) -> Option<Cells> {
        self.has_both_arms().then(|| Cells {
            a: i128::from(self.k1),
            b: i128::from(self.n1 - self.k1),
            c: i128::from(self.k0),
            d: i128::from(self.n0 - self.k0),
        })
    }
}

/// The 2×2 table `[[a, b], [c, d]]` of a stratum with both arms (see [`Stratum`]), in
/// `i128` so that every product of two cells or margins is exact.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cells {
    pub a: i128,
    pub b: i128,
    pub c: i128,
    pub d: i128,
}

impl Cells {
    /// Units in the arm, `a + b`.
    pub fn n1(&self) -> i128 {
        self.a + self.b
    }

    /// Units in the baseline, `c + d`.
    pub fn n0(&self) -> i128 {
        self.c + self.d
    }

    /// Events on both sides, `a + c`.
    pub fn m1(&self) -> i128 {
        self.a + self.c
    }

    /// Non-events on both sides, `b + d`.
    pub fn m0(&self) -> i128 {
        self.b + self.d
    }

    /// All units, `N`.
    pub fn total(&self) -> i128 {
        self.a + self.b + self.c + self.d
    }
}

/// The tables of the strata with units on both sides.
pub(super) fn used(strata: &[Stratum]) -> impl Iterator<Item = Cells> + '_ {
    strata.iter().filter_map(Stratum::cells)
}

/// `num / den` of two exact integers, each rounded to `f64` once.
pub(super) fn ratio(num: i128, den: i128) -> f64 {
    num as f64 / den as f64
}

/// Neumaier's compensated sum: terms of both signs (the excess events of the CMH test)
/// cancel without losing the sum's relative precision.
#[derive(Debug, Default)]
pub(super) struct Sum {
    sum: f64,
    compensation: f64,
}

impl Sum {
    pub(super) fn add(&mut self, x: f64) {
        let t = self.sum + x;
        self.compensation += if self.sum.abs() >= x.abs() {
            (self.sum - t) + x
        } else {
            (x - t) + self.sum
        };
        self.sum = t;
    }

    pub(super) fn value(&self) -> f64 {
        self.sum + self.compensation
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_above_n_or_the_ceiling_are_refused() {
        assert!(Stratum::new(3, 2, 0, 1).is_err());
        assert!(Stratum::new(0, 1, 5, 4).is_err());
        assert!(Stratum::new(0, MAX_STRATUM_COUNT + 1, 0, 1).is_err());
        assert!(Stratum::new(0, 1, 0, u64::MAX).is_err());
        let top = Stratum::new(MAX_STRATUM_COUNT, MAX_STRATUM_COUNT, 0, MAX_STRATUM_COUNT);
        assert!(top.is_ok());
    }

    #[test]
    fn zero_margins_are_a_missing_side_or_a_single_outcome() {
        let s = |k1, n1, k0, n0| Stratum::new(k1, n1, k0, n0).unwrap();
        assert!(s(0, 0, 3, 5).has_zero_margin() && !s(0, 0, 3, 5).has_both_arms());
        assert!(s(0, 4, 0, 5).has_zero_margin() && s(0, 4, 0, 5).has_both_arms());
        assert!(s(4, 4, 5, 5).has_zero_margin());
        assert!(!s(0, 4, 5, 5).has_zero_margin());
        assert!(!s(1, 4, 0, 5).has_zero_margin());
    }

    #[test]
    fn the_difference_is_the_arm_minus_the_baseline() {
        let s = Stratum::new(3, 4, 1, 4).unwrap();
        assert_eq!(s.diff(), Some(0.5));
        assert_eq!(Stratum::new(0, 0, 1, 4).unwrap().diff(), None);
    }
}
