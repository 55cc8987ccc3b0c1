//! Sample size and power for comparing two proportions (arcsine effect size, z-test).

use statrs::distribution::{ContinuousCDF, Normal};

use super::error::{Result, check_probability, invalid};
use super::proportion::normal_isf;

/// Cohen's h for two proportions: `2 asin(√p1) − 2 asin(√p2)`.
///
/// Convention: statsmodels `proportion_effectsize(p1, p2)` (method "normal").
///
/// Errors: `p1` or `p2` outside [0, 1].
pub fn proportion_effectsize(p1: f64, p2: f64) -> Result<f64> {
    check_probability("p1", p1)?;
    check_probability("p2", p2)?;
    Ok(2.0 * (p1.sqrt().asin() - p2.sqrt().asin()))
}

/// Power of the two-sided two-sample z-test at level `alpha` to detect
/// rates `p1` vs `p2` with `n_per_arm` sessions in each arm.
///
/// Convention: statsmodels `NormalIndPower().power(effect_size=h,
/// nobs1=n_per_arm, alpha=alpha, ratio=1, alternative="two-sided")` with
/// `h = proportion_effectsize(p1, p2)`: with `nobs = 1 / (1/n + 1/n)`,
/// `power = Φ̄(z_{α/2} − h√nobs) + Φ(−z_{α/2} − h√nobs)` — both rejection
/// tails count. `n_per_arm` may be fractional.
///
/// Errors: a proportion outside [0, 1], `alpha` outside (0, 1), or
/// `n_per_arm` not positive and finite.
pub fn power_at(p1: f64, p2: f64, n_per_arm: f64, alpha: f64) -> Result<f64> {
    let h = proportion_effectsize(p1, p2)?;
    check_alpha(alpha)?;
    if !(n_per_arm > 0.0 && n_per_arm.is_finite()) {
        return invalid(format!("n_per_arm must be positive, got {n_per_arm}"));
    }
    Ok(two_sided_power(h, n_per_arm, normal_isf(alpha / 2.0)))
}

/// The real-valued sessions per arm at which [`power_at`] equals `power`.
///
/// Convention: the root that statsmodels `NormalIndPower().solve_power(
/// effect_size=h, alpha=alpha, power=power, ratio=1,
/// alternative="two-sided")` searches for, solved on the same two-tailed
/// power function by bisection to full `f64` precision (statsmodels' own
/// `brentq_expanding` stops at `xtol=1e-5`, so its float differs from this
/// root by up to ~1e-5 sessions).
///
/// Errors: a proportion outside [0, 1], `p1 == p2` (statsmodels raises:
/// "Cannot detect an effect-size of 0"), `alpha` outside (0, 1), or `power`
/// outside (alpha, 1) (power tends to alpha as n → 0 and to 1 as n → ∞).
pub fn required_n_per_arm(p1: f64, p2: f64, alpha: f64, power: f64) -> Result<f64> {
    let h = proportion_effectsize(p1, p2)?;
    check_alpha(alpha)?;
    if h == 0.0 {
        return invalid("p1 == p2: an effect size of 0 cannot be detected");
    }
    if !(power > alpha && power < 1.0) {
        return invalid(format!("power must be in (alpha, 1), got {power}"));
    }
    let crit = normal_isf(alpha / 2.0);
    let below = |n: f64| two_sided_power(h, n, crit) < power;
    let (mut lo, mut hi) = (0.0_f64, 1.0_f64);
    while below(hi) {
        lo = hi;
        hi *= 2.0;
        if !hi.is_finite() {
            return invalid("power unreachable in f64 range");
        }
    }
    // Bisect until lo and hi are adjacent doubles (power is increasing in n).
    loop {
        let mid = lo + (hi - lo) / 2.0;
        if mid <= lo || mid >= hi {
            break;
        }
        if below(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Ok(hi)
}

/// Sessions per arm needed for `power` at two-sided level `alpha` to detect
/// `p1` vs `p2`: [`required_n_per_arm`] rounded up, i.e.
/// `ceil(NormalIndPower().solve_power(...))` in statsmodels.
///
/// Errors: as [`required_n_per_arm`].
pub fn sessions_per_arm(p1: f64, p2: f64, alpha: f64, power: f64) -> Result<u64> {
    let n = required_n_per_arm(p1, p2, alpha, power)?;
    if n >= u64::MAX as f64 {
        return invalid("required sessions exceed u64");
    }
    Ok(n.ceil() as u64)
}

fn check_alpha(alpha: f64) -> Result<()> {
    if alpha > 0.0 && alpha < 1.0 {
        Ok(())
    } else {
        invalid(format!("alpha must be in (0, 1), got {alpha}"))
    }
}

/// statsmodels `normal_power(h, nobs, alpha, alternative="two-sided")` with
/// `nobs = 1 / (1/n + 1/n)` and `crit = norm.isf(alpha / 2)`.
fn two_sided_power(h: f64, n_per_arm: f64, crit: f64) -> f64 {
    let nobs = 1.0 / (1.0 / n_per_arm + 1.0 / n_per_arm);
    let shift = h * nobs.sqrt();
    let z = Normal::standard();
    z.sf(crit - shift) + z.cdf(-crit - shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn effect_size_is_antisymmetric_and_zero_for_equal_rates() {
        let h = proportion_effectsize(0.183, 0.092).unwrap();
        assert_eq!(proportion_effectsize(0.092, 0.183).unwrap(), -h);
        assert_eq!(proportion_effectsize(0.3, 0.3).unwrap(), 0.0);
    }

    #[test]
    fn power_grows_with_sessions_and_is_symmetric_in_the_arms() {
        let mut last = 0.05;
        for n in [5.0, 50.0, 219.0, 1000.0] {
            let p = power_at(0.183, 0.092, n, 0.05).unwrap();
            assert!(p > last && p < 1.0);
            assert!((p - power_at(0.092, 0.183, n, 0.05).unwrap()).abs() < 1e-15);
            last = p;
        }
    }

    #[test]
    fn sessions_per_arm_is_the_smallest_count_reaching_the_power() {
        let n = sessions_per_arm(0.183, 0.092, 0.05, 0.8).unwrap();
        assert!(power_at(0.183, 0.092, n as f64, 0.05).unwrap() >= 0.8);
        assert!(power_at(0.183, 0.092, (n - 1) as f64, 0.05).unwrap() < 0.8);
    }

    #[test]
    fn unreachable_or_invalid_targets_are_errors() {
        assert!(sessions_per_arm(0.2, 0.2, 0.05, 0.8).is_err());
        assert!(sessions_per_arm(0.2, 0.1, 0.05, 0.05).is_err());
        assert!(sessions_per_arm(0.2, 0.1, 0.05, 1.0).is_err());
        assert!(sessions_per_arm(0.2, 0.1, 0.0, 0.8).is_err());
        assert!(sessions_per_arm(1.2, 0.1, 0.05, 0.8).is_err());
        assert!(power_at(0.2, 0.1, 0.0, 0.05).is_err());
        assert!(power_at(0.2, 0.1, f64::NAN, 0.05).is_err());
    }
}
