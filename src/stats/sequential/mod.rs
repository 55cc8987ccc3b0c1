//! Group-sequential comparison of two rates: two-sided Lan–DeMets O'Brien–Fleming-type
//! boundaries, the pooled z statistic checked against them at each look, repeated
//! confidence intervals and p-values, and a design's power and expected sample size.
//!
//! # Why a design and not a test per look
//!
//! Testing the same accumulating data after every batch at α = 0.05 rejects a true null
//! far more often than 5% of the time: with five looks about 14% of identical-arm runs
//! "find" a difference at one look or another. A group-sequential design spends α over
//! the looks instead: each look has its own boundary `c_k`, high early (little data, so
//! only an overwhelming difference stops the run) and close to the fixed-sample 1.96 at
//! the last look, chosen so that the probability of ever crossing under the null is α.
//!
//! # Conventions
//!
//! - Information fraction `t_k`: the share of the planned maximum reached at look k
//!   (replicates so far / `max_replicates`, see [`look_fractions`]; or sessions per arm
//!   so far / the maximum), strictly increasing, the last exactly 1.
//! - Spending: α is split equally between the two sides; each side spends
//!   `α₁(t) = 2 − 2Φ(z_{1−α/4} / √t)` (Lan & DeMets 1983), i.e. gsDesign
//!   `sfLDOF(alpha / 2, t)`, so that `α₁(1) = α/2`.
//! - Boundaries: symmetric, `|Z_k| ≥ c_k` stops. `c_k` solves
//!   `P(Z_j ∈ (−c_j, c_j) for j < k, Z_k ≥ c_k) = α₁(t_k) − α₁(t_{k−1})` under H0, where
//!   `Z_k` is the standardized statistic (independent increments, `Cov(Z_j, Z_k) =
//!   √(t_j / t_k)`). The joint density is carried from look to look by the recursion of
//!   Armitage, McPherson & Rowe (1969) on the grid of Jennison & Turnbull (2000, ch. 19)
//!   with Simpson weights, exactly as gsDesign's C code does (`gridpts`/`h1`/`hupdate`,
//!   r = 18), and each boundary is a root of that probability. These are the boundaries
//!   of R `gsDesign(k, test.type = 2, alpha = alpha / 2, sfu = sfLDOF, timing = t)`
//!   `$upper$bound` and ldbounds `bounds(t, iuse = 1, alpha = c(alpha / 2, alpha / 2))`;
//!   for five equally spaced looks at α = 0.05 they are 4.877, 3.357, 2.680, 2.290,
//!   2.031. `tests/sequential_vectors.rs` checks them against a reference table (how it
//!   was made and cross-checked is in `scripts/gen_sequential_vectors.py`). The r = 18
//!   grid is itself accurate to about 2e-6 for up to ten looks.
//! - Statistic: the pooled two-proportion z of arm 2 against arm 1 ([`pooled_z`]);
//!   positive when arm 2's rate is higher.
//! - Drift: when the true standardized effect is such that `E[Z_K] = θ` at the last look,
//!   `E[Z_k] = θ √t_k`. For two rates `p1`, `p2` and `n` sessions per arm at the last look
//!   this crate uses Cohen's h as `power` does: `θ = h √(n / 2)`.

use statrs::function::erf::erfc;

mod integration;

use integration::{BOUNDARY_CAP, Density, illinois};

use super::error::{Result, StatsError, check_count, invalid};
use super::power::{proportion_effectsize, required_n_per_arm};
use super::proportion::{Interval, normal_isf};

/// Most looks a design may have.
pub const MAX_LOOKS: usize = 50;

/// Smallest repeated p-value reported; a statistic beyond every boundary computable in
/// `f64` gets this value.
pub const MIN_REPEATED_P: f64 = 1e-300;

/// Each side's Lan–DeMets O'Brien–Fleming-type spending at information fraction `t`:
/// `α₁(t) = 2 − 2Φ(z_{1−α/4} / √t)`, the one-sided α spent by `t`; the two-sided α spent
/// is twice this and reaches `alpha` at `t = 1`.
///
/// Convention: R gsDesign `sfLDOF(alpha / 2, t)$spend`. Computed as
/// `erfc(z_{1−α/4} / √(2t))`, which keeps full relative precision for small `t`.
///
/// Errors: `alpha` outside (0, 1), or `t` outside (0, 1].
pub fn ldof_spending(alpha: f64, t: f64) -> Result<f64> {
    check_alpha(alpha)?;
    if !(t > 0.0 && t <= 1.0) {
        return invalid(format!("information fraction must be in (0, 1], got {t}"));
    }
    Ok(spend(normal_isf(alpha / 4.0), t))
}

fn spend(z_quarter: f64, t: f64) -> f64 {
    erfc(z_quarter / (2.0 * t).sqrt())
}

/// Information fractions of a run that looks after every `look_every` replicates and
/// stops at `max_replicates`: `look_every · j / max_replicates` for each multiple below
/// the maximum, then exactly 1 (so a maximum that is not a multiple gets a shorter last
/// step). Feed them to [`SequentialDesign::new`].
///
/// Errors: `look_every` or `max_replicates` of 0, or more than [`MAX_LOOKS`] looks.
pub fn look_fractions(look_every: u64, max_replicates: u64) -> Result<Vec<f64>> {
    if look_every == 0 || max_replicates == 0 {
        return invalid(format!(
            "look_every and max_replicates must be positive, got {look_every} and \
             {max_replicates}"
        ));
    }
    let looks = max_replicates.div_ceil(look_every);
    if looks > MAX_LOOKS as u64 {
        return invalid(format!(
            "{looks} looks (every {look_every} of {max_replicates} replicates); at most \
             {MAX_LOOKS}"
        ));
    }
    Ok((1..=looks)
        .map(|j| (j * look_every).min(max_replicates) as f64 / max_replicates as f64)
        .collect())
}

/// The pooled two-proportion z statistic of arm 2 (`k2` of `n2`) against arm 1 (`k1` of
/// `n1`): `z = (p̂2 − p̂1) / √(p̂(1 − p̂)(1/n1 + 1/n2))` with the pooled rate
/// `p̂ = (k1 + k2) / (n1 + n2)`. Positive when arm 2's rate is higher. A pooled rate of 0
/// or 1 (no events, or only events, in both arms) gives `z = 0`: there is no evidence of
/// a difference, and a sequential run does not stop on it.
///
/// Convention: statsmodels `proportions_ztest([k2, k1], [n2, n1])` statistic (its default
/// pooled variance), which is NaN where this returns 0.
///
/// Errors: `n1` or `n2` zero, or a count above its total.
pub fn pooled_z(k1: u64, n1: u64, k2: u64, n2: u64) -> Result<f64> {
    check_count(k1, n1)?;
    check_count(k2, n2)?;
    if (k1 == 0 && k2 == 0) || (k1 == n1 && k2 == n2) {
        return Ok(0.0);
    }
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let pooled = (k1 as f64 + k2 as f64) / (n1f + n2f);
    let se = (pooled * (1.0 - pooled) * (1.0 / n1f + 1.0 / n2f)).sqrt();
    Ok((k2 as f64 / n2f - k1 as f64 / n1f) / se)
}

/// Events and sessions of the two arms at one look, cumulative since the start: arm 1 is
/// the baseline, arm 2 the arm compared with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookCounts {
    /// Events in arm 1 (the baseline).
    pub k1: u64,
    /// Sessions in arm 1.
    pub n1: u64,
    /// Events in arm 2 (the compared arm).
    pub k2: u64,
    /// Sessions in arm 2.
    pub n2: u64,
}

/// What one look concluded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LookDecision {
    /// The look, 1-based.
    pub look: usize,
    /// Its information fraction `t_k`.
    pub fraction: f64,
    /// The pooled z of arm 2 against arm 1 ([`pooled_z`]).
    pub z: f64,
    /// The boundary `c_k` of this look (may be infinite: this look cannot stop).
    pub boundary: f64,
    /// `|z| ≥ c_k` and `z ≠ 0`: the difference is significant at the design's α and the
    /// comparison may stop here. (`z = 0`, e.g. a pooled rate of 0 or 1, never stops,
    /// even at a degenerate boundary of 0.)
    pub crossed: bool,
}

/// Probabilities that a run first crosses a boundary at one look.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Crossing {
    /// `P(no earlier crossing, Z_k ≥ c_k)`.
    pub upper: f64,
    /// `P(no earlier crossing, Z_k ≤ −c_k)`.
    pub lower: f64,
}

/// A two-sided group-sequential design: α, the looks' information fractions and their
/// Lan–DeMets O'Brien–Fleming-type boundaries (see the module documentation).
///
/// Boundary k depends only on α and the fractions up to look k, so a runner whose looks
/// fall elsewhere than planned can build a design from the fractions actually reached
/// (with the planned maximum as 1) and the boundaries already used stay valid.
#[derive(Debug, Clone, PartialEq)]
pub struct SequentialDesign {
    alpha: f64,
    fractions: Vec<f64>,
    boundaries: Vec<f64>,
}

impl SequentialDesign {
    /// The design with two-sided level `alpha` and looks at information fractions
    /// `fractions` (strictly increasing, in (0, 1], the last exactly 1, at most
    /// [`MAX_LOOKS`]).
    ///
    /// A boundary is infinite where the spending up to that look is below 1e-300 (a look
    /// at a tiny fraction), and 0 where the spending asks for more than the continuing
    /// runs hold (only for α close to 1); neither happens for designs in practical use.
    ///
    /// Errors: `alpha` outside (0, 1); no fractions, more than [`MAX_LOOKS`], a fraction
    /// outside (0, 1] or not above the previous one, or a last fraction other than 1.
    pub fn new(alpha: f64, fractions: &[f64]) -> Result<Self> {
        check_alpha(alpha)?;
        check_fractions(fractions)?;
        Ok(SequentialDesign {
            alpha,
            fractions: fractions.to_vec(),
            boundaries: solve_boundaries(alpha, fractions),
        })
    }

    /// [`SequentialDesign::new`] with `looks` equally spaced looks, `t_k = k / looks`.
    ///
    /// Errors: `looks` of 0 or above [`MAX_LOOKS`], or `alpha` outside (0, 1).
    pub fn equally_spaced(alpha: f64, looks: usize) -> Result<Self> {
        if looks == 0 || looks > MAX_LOOKS {
            return invalid(format!("looks must be 1 to {MAX_LOOKS}, got {looks}"));
        }
        let fractions: Vec<f64> = (1..=looks).map(|k| k as f64 / looks as f64).collect();
        Self::new(alpha, &fractions)
    }

    /// The two-sided level.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Number of looks.
    pub fn looks(&self) -> usize {
        self.fractions.len()
    }

    /// The information fractions `t_1 < … < t_K = 1`.
    pub fn fractions(&self) -> &[f64] {
        &self.fractions
    }

    /// The boundaries `c_1, …, c_K` for `|z|`.
    pub fn boundaries(&self) -> &[f64] {
        &self.boundaries
    }

    /// Two-sided α spent by each look, `2 α₁(t_k)`; the last is `alpha`.
    pub fn cumulative_alpha(&self) -> Vec<f64> {
        let zq = normal_isf(self.alpha / 4.0);
        self.fractions.iter().map(|&t| 2.0 * spend(zq, t)).collect()
    }

    /// The decision at look `look` (1-based) given the cumulative counts then.
    ///
    /// Errors: `look` outside 1..=K, or counts [`pooled_z`] refuses.
    pub fn look(&self, look: usize, counts: LookCounts) -> Result<LookDecision> {
        let i = self.index(look)?;
        let z = pooled_z(counts.k1, counts.n1, counts.k2, counts.n2)?;
        let boundary = self.boundaries[i];
        Ok(LookDecision {
            look,
            fraction: self.fractions[i],
            z,
            boundary,
            crossed: z != 0.0 && z.abs() >= boundary,
        })
    }

    /// The repeated confidence interval (Jennison & Turnbull 2000, ch. 9) for the
    /// difference of rates `p2 − p1` at look `look`:
    /// `(p̂2 − p̂1) ± c_k · √(p̂1(1 − p̂1)/n1 + p̂2(1 − p̂2)/n2)`, the Wald interval with the
    /// look's boundary in place of 1.96, clipped to [−1, 1]. In normal theory the
    /// intervals of all looks hold the true difference simultaneously with probability
    /// `1 − alpha`, so the interval at whichever look a run stops at keeps its coverage.
    ///
    /// It uses the unpooled standard error while the decision uses the pooled one, so
    /// near the boundary the interval can exclude 0 without a crossing or the reverse,
    /// as with the fixed-sample Wald interval and z test. When both arms are all-0 or
    /// all-1 the standard error is 0 and the interval is the point `p̂2 − p̂1`; an
    /// infinite boundary gives [−1, 1].
    ///
    /// Errors: as [`SequentialDesign::look`].
    pub fn repeated_ci(&self, look: usize, counts: LookCounts) -> Result<Interval> {
        let i = self.index(look)?;
        check_count(counts.k1, counts.n1)?;
        check_count(counts.k2, counts.n2)?;
        let p1 = counts.k1 as f64 / counts.n1 as f64;
        let p2 = counts.k2 as f64 / counts.n2 as f64;
        let se = (p1 * (1.0 - p1) / counts.n1 as f64 + p2 * (1.0 - p2) / counts.n2 as f64).sqrt();
        let c = self.boundaries[i];
        let diff = p2 - p1;
        if c.is_infinite() {
            return Ok(Interval {
                low: -1.0,
                high: 1.0,
            });
        }
        Ok(Interval {
            low: (diff - c * se).max(-1.0),
            high: (diff + c * se).min(1.0),
        })
    }

    /// The repeated p-value at look `look` for the pooled z of `counts`: the smallest
    /// two-sided level α′ at which this look's boundary, in the design with the same
    /// fractions and spending function but level α′, is crossed:
    /// `p = inf{α′ : |z| ≥ c_k(α′)}`. See [`SequentialDesign::repeated_p_value_of_z`].
    ///
    /// Errors: as [`SequentialDesign::look`].
    pub fn repeated_p_value(&self, look: usize, counts: LookCounts) -> Result<f64> {
        let z = pooled_z(counts.k1, counts.n1, counts.k2, counts.n2)?;
        self.repeated_p_value_of_z(look, z)
    }

    /// The repeated p-value at look `look` (1-based) of a statistic `z`:
    /// `p = inf{α′ ∈ (0, 1) : |z| ≥ c_k(α′)}`, where `c_k(α′)` is look k's boundary at
    /// level α′ with this design's fractions (Jennison & Turnbull 2000, §9.1).
    ///
    /// Properties: `p ≤ alpha` exactly when the look's boundary is crossed (the p-value
    /// agrees with the decision); `p` decreases as `|z|` grows; it does not depend on the
    /// design's own α; with one look (`t = 1`) it is the fixed-sample two-sided p-value
    /// `2Φ̄(|z|)`; and the chance that any look's repeated p-value falls to α′ or below is
    /// at most α′ under the null, so it can be read at whichever look a run stopped.
    /// It is never smaller than the fixed-sample p-value of the same z (the price of
    /// looking; at the last look the two meet as |z| grows). Found by root finding on `ln α′` (to 1e-10); the grid integration
    /// limits it to about 1e-4 relative for p-values above 1e-12 and a few percent by
    /// 1e-23, where the last look's tail rests on the grid's sparse outer points. `z = 0`
    /// gives 1 and a statistic beyond every boundary computable in `f64` gives
    /// [`MIN_REPEATED_P`].
    ///
    /// Errors: `look` outside 1..=K, or `z` NaN.
    pub fn repeated_p_value_of_z(&self, look: usize, z: f64) -> Result<f64> {
        let i = self.index(look)?;
        if z.is_nan() {
            return invalid("z is NaN");
        }
        let fractions = &self.fractions[..=i];
        let target = z.abs();
        // Boundaries fall as α′ grows; work in x = ln α′.
        let excess = |x: f64| {
            let b = solve_boundaries(x.exp(), fractions);
            b[i].min(BOUNDARY_CAP) - target
        };
        let (lo, hi) = (MIN_REPEATED_P.ln(), (1.0 - 1e-12_f64).ln());
        let (f_lo, f_hi) = (excess(lo), excess(hi));
        if f_hi > 0.0 {
            return Ok(1.0);
        }
        if f_lo <= 0.0 {
            return Ok(MIN_REPEATED_P);
        }
        let x = illinois(excess, lo, hi, f_lo, f_hi, 1e-10);
        Ok(x.exp().min(1.0))
    }

    /// Probability of first crossing each look's upper and lower boundary when the
    /// statistic has drift `drift` (`E[Z_k] = drift · √t_k`; 0 is the null), by the same
    /// recursion as the boundaries. The probabilities over all looks sum to the power.
    ///
    /// Convention: R gsDesign `gsProbability(k, theta = drift, n.I = t, a = -c, b = c)`
    /// `$upper$prob` and `$lower$prob`.
    pub fn crossing_probabilities(&self, drift: f64) -> Vec<Crossing> {
        let mut out = Vec::with_capacity(self.looks());
        let mut density = Density::start();
        let mut t_prev = 0.0;
        for (k, (&t, &c)) in self.fractions.iter().zip(&self.boundaries).enumerate() {
            let (upper, lower) = density.tails(t_prev, t, drift, c);
            out.push(Crossing { upper, lower });
            if k + 1 < self.looks() {
                density = density.next(t_prev, t, drift, c);
                t_prev = t;
            }
        }
        out
    }

    /// Probability that the design stops at some look (rejects H0) under drift `drift`;
    /// `alpha` at drift 0.
    pub fn power(&self, drift: f64) -> f64 {
        self.crossing_probabilities(drift)
            .iter()
            .map(|c| c.upper + c.lower)
            .sum()
    }

    /// Expected information fraction at stopping under drift `drift`:
    /// `Σ_k t_k P(stop at k)`, the last look taking every run not stopped before. Times
    /// the maximum sessions per arm it is the expected sessions per arm.
    pub fn expected_fraction(&self, drift: f64) -> f64 {
        let crossings = self.crossing_probabilities(drift);
        let last = self.looks() - 1;
        let mut stopped_before_last = 0.0;
        let mut expected = 0.0;
        for (k, c) in crossings.iter().enumerate().take(last) {
            let p = c.upper + c.lower;
            stopped_before_last += p;
            expected += self.fractions[k] * p;
        }
        expected + (1.0 - stopped_before_last).max(0.0)
    }

    /// The drift at which [`SequentialDesign::power`] equals `power`.
    ///
    /// Errors: `power` outside (alpha, 1).
    pub fn drift_for_power(&self, power: f64) -> Result<f64> {
        if !(power > self.alpha && power < 1.0) {
            return invalid(format!("power must be in (alpha, 1), got {power}"));
        }
        let gap = |drift: f64| self.power(drift) - power;
        let mut hi = 4.0;
        let mut f_hi = gap(hi);
        while f_hi < 0.0 {
            hi *= 2.0;
            if hi > 1e6 {
                return Err(StatsError::Undefined(format!("power {power} unreachable")));
            }
            f_hi = gap(hi);
        }
        Ok(illinois(gap, 0.0, hi, self.alpha - power, f_hi, 1e-12))
    }

    fn index(&self, look: usize) -> Result<usize> {
        if look == 0 || look > self.looks() {
            return invalid(format!(
                "look must be 1 to {}, got {look} (looks are 1-based)",
                self.looks()
            ));
        }
        Ok(look - 1)
    }
}

/// Sessions per arm of a fixed design and of the sequential design with the same α and
/// power, from [`sequential_sessions_per_arm`].
#[derive(Debug, Clone, PartialEq)]
pub struct SequentialSampleSize {
    /// The sequential design (equally spaced looks).
    pub design: SequentialDesign,
    /// Fixed design: real-valued sessions per arm ([`required_n_per_arm`]).
    pub fixed_real: f64,
    /// Fixed design: sessions per arm, rounded up ([`crate::stats::sessions_per_arm`]).
    pub fixed: u64,
    /// Inflation factor `R`: the sequential maximum over the fixed sample size for the
    /// same power (a property of the boundaries, α and power, not of the rates).
    pub inflation: f64,
    /// Sequential maximum, real-valued: `fixed_real · inflation`.
    pub max_real: f64,
    /// Sequential maximum sessions per arm (at the last look), rounded up.
    pub max: u64,
    /// Power of the sequential design at `max` sessions per arm (at least the target).
    pub power_at_max: f64,
    /// Expected sessions per arm at stopping when the rates are `p1` vs `p2`.
    pub expected_alternative: f64,
    /// Expected sessions per arm at stopping when the arms do not differ.
    pub expected_null: f64,
}

/// Sessions per arm for the two-sided group-sequential design with `looks` equally
/// spaced looks to detect `p1` vs `p2` with `power` at level `alpha`, next to the fixed
/// design's.
///
/// The fixed design is [`required_n_per_arm`] (statsmodels `NormalIndPower` on Cohen's
/// h), whose statistic has drift `θ_fix = h √(n/2)`. The sequential design needs the
/// drift `θ_seq` at which its power (both boundaries, by numerical integration) is
/// `power`, so its maximum is `n_fix · (θ_seq / θ_fix)²`. That ratio is the inflation
/// factor of the boundaries (gsDesign's `gsDesign(k, test.type = 2, alpha = alpha / 2,
/// beta = 1 − power, sfu = sfLDOF)$n.I[k]` for `n.fix = 1`): 1.0247 for five looks at
/// α = 0.05 and power 0.8. Power counts crossings of both boundaries, as statsmodels'
/// fixed-design power counts both tails; the lower boundary adds under 2e-6 here. The
/// expected sessions per arm use the rounded-up maximum and the same integration, under
/// drift `h √(max / 2)` and under 0; they are not simulated.
///
/// Errors: as [`required_n_per_arm`], and `looks` of 0 or above [`MAX_LOOKS`].
pub fn sequential_sessions_per_arm(
    p1: f64,
    p2: f64,
    alpha: f64,
    power: f64,
    looks: usize,
) -> Result<SequentialSampleSize> {
    let fixed_real = required_n_per_arm(p1, p2, alpha, power)?;
    let h = proportion_effectsize(p1, p2)?.abs();
    let design = SequentialDesign::equally_spaced(alpha, looks)?;
    let drift_fixed = h * (fixed_real / 2.0).sqrt();
    let drift_seq = design.drift_for_power(power)?;
    let inflation = (drift_seq / drift_fixed).powi(2);
    let max_real = fixed_real * inflation;
    if max_real.is_nan() || max_real >= u64::MAX as f64 {
        return invalid("required sessions exceed u64");
    }
    let max = max_real.ceil() as u64;
    let drift_max = h * (max as f64 / 2.0).sqrt();
    Ok(SequentialSampleSize {
        fixed_real,
        fixed: fixed_real.ceil() as u64,
        inflation,
        max_real,
        max,
        power_at_max: design.power(drift_max),
        expected_alternative: max as f64 * design.expected_fraction(drift_max),
        expected_null: max as f64 * design.expected_fraction(0.0),
        design,
    })
}

fn check_alpha(alpha: f64) -> Result<()> {
    if alpha > 0.0 && alpha < 1.0 {
        Ok(())
    } else {
        invalid(format!("alpha must be in (0, 1), got {alpha}"))
    }
}

fn check_fractions(fractions: &[f64]) -> Result<()> {
    if fractions.is_empty() {
        return invalid("a design needs at least one look");
    }
    if fractions.len() > MAX_LOOKS {
        return invalid(format!(
            "at most {MAX_LOOKS} looks, got {}",
            fractions.len()
        ));
    }
    let mut prev = 0.0;
    for &t in fractions {
        if !(t > prev && t <= 1.0) {
            return invalid(format!(
                "information fractions must increase strictly within (0, 1], got {fractions:?}"
            ));
        }
        prev = t;
    }
    if prev != 1.0 {
        return invalid(format!(
            "the last information fraction must be 1, got {prev}"
        ));
    }
    Ok(())
}

/// The boundaries for valid `alpha` and `fractions` (see [`SequentialDesign::new`]).
fn solve_boundaries(alpha: f64, fractions: &[f64]) -> Vec<f64> {
    let zq = normal_isf(alpha / 4.0);
    let mut boundaries = Vec::with_capacity(fractions.len());
    let mut density = Density::start();
    let (mut t_prev, mut spent) = (0.0, 0.0);
    for (k, &t) in fractions.iter().enumerate() {
        let cumulative = spend(zq, t);
        let target = cumulative - spent;
        spent = cumulative;
        let c = density.upper_boundary(t_prev, t, target);
        boundaries.push(c);
        if k + 1 < fractions.len() {
            density = density.next(t_prev, t, 0.0, c);
            t_prev = t;
        }
    }
    boundaries
}

#[cfg(test)]
mod tests {
    use super::integration::upper_tail;
    use super::*;

    fn counts(k1: u64, n1: u64, k2: u64, n2: u64) -> LookCounts {
        LookCounts { k1, n1, k2, n2 }
    }

    #[test]
    fn five_equally_spaced_looks_give_the_published_boundaries() {
        let d = SequentialDesign::equally_spaced(0.05, 5).unwrap();
        let published = [4.877, 3.357, 2.680, 2.290, 2.031];
        for (got, want) in d.boundaries().iter().zip(published) {
            assert!((got - want).abs() < 5e-4, "{:?}", d.boundaries());
        }
    }

    #[test]
    fn the_boundaries_spend_exactly_alpha_under_the_null() {
        for fractions in [vec![0.2, 0.4, 0.6, 0.8, 1.0], vec![0.1, 0.35, 1.0]] {
            let d = SequentialDesign::new(0.05, &fractions).unwrap();
            let crossings = d.crossing_probabilities(0.0);
            let spent = d.cumulative_alpha();
            let mut total = 0.0;
            for (c, s) in crossings.iter().zip(&spent) {
                assert!((c.upper - c.lower).abs() < 1e-15, "{c:?}");
                total += c.upper + c.lower;
                assert!((total - s).abs() < 1e-10, "{total} vs {s}");
            }
            assert!((d.power(0.0) - 0.05).abs() < 1e-10);
        }
    }

    #[test]
    fn one_look_is_the_fixed_two_sided_test() {
        let d = SequentialDesign::new(0.05, &[1.0]).unwrap();
        assert!((d.boundaries()[0] - 1.959963984540054).abs() < 1e-9);
        for z in [0.5, 1.96, 2.5, 4.0] {
            let p = d.repeated_p_value_of_z(1, z).unwrap();
            let fixed = 2.0 * upper_tail(z);
            assert!((p / fixed - 1.0).abs() < 1e-8, "{z}: {p} vs {fixed}");
        }
    }

    #[test]
    fn pooled_z_is_positive_when_arm_two_is_higher_and_zero_without_variation() {
        let z = pooled_z(2, 30, 11, 30).unwrap();
        assert!(z > 0.0);
        assert_eq!(pooled_z(11, 30, 2, 30).unwrap(), -z);
        assert_eq!(pooled_z(0, 10, 0, 12).unwrap(), 0.0);
        assert_eq!(pooled_z(10, 10, 12, 12).unwrap(), 0.0);
        assert!(pooled_z(0, 10, 0, 0).is_err());
        assert!(pooled_z(11, 10, 0, 10).is_err());
    }

    #[test]
    fn a_look_crosses_exactly_when_its_repeated_p_value_is_at_most_alpha() {
        let d = SequentialDesign::equally_spaced(0.05, 5).unwrap();
        for look in 1..=5 {
            let c = d.boundaries()[look - 1];
            for z in [c - 1e-6, c + 1e-6, -c - 1e-6, -c + 1e-6, 0.3 * c, 1.5 * c] {
                let p = d.repeated_p_value_of_z(look, z).unwrap();
                assert_eq!(p <= 0.05, z.abs() >= c, "look {look} z {z} p {p}");
            }
        }
    }

    #[test]
    fn the_repeated_p_value_falls_as_the_statistic_grows() {
        let d = SequentialDesign::equally_spaced(0.05, 5).unwrap();
        for look in [1, 3, 5] {
            let mut last = d.repeated_p_value_of_z(look, 0.0).unwrap();
            assert_eq!(last, 1.0);
            for i in 1..=14 {
                let z = 0.5 * i as f64;
                let p = d.repeated_p_value_of_z(look, z).unwrap();
                // 1 while no level below 1 would stop here, then strictly falling.
                assert!(p < last || p == 1.0, "look {look} z {z}: {p} after {last}");
                assert!(p > 0.0);
                // Never below the fixed-sample p-value (to the grid's precision there).
                assert!(
                    p >= 2.0 * upper_tail(z) * (1.0 - 1e-3),
                    "look {look} z {z}: {p}"
                );
                if i % 4 == 0 {
                    assert_eq!(d.repeated_p_value_of_z(look, -z).unwrap(), p);
                }
                last = p;
            }
        }
    }

    #[test]
    fn the_repeated_interval_uses_the_look_boundary_and_narrows_with_it() {
        let d = SequentialDesign::equally_spaced(0.05, 5).unwrap();
        let c = counts(5, 30, 14, 30);
        let (p1, p2): (f64, f64) = (5.0 / 30.0, 14.0 / 30.0);
        let se = (p1 * (1.0 - p1) / 30.0 + p2 * (1.0 - p2) / 30.0).sqrt();
        let mut last_width = f64::INFINITY;
        for look in 1..=5 {
            let ci = d.repeated_ci(look, c).unwrap();
            let b = d.boundaries()[look - 1];
            assert!(ci.contains(p2 - p1));
            assert!(
                (ci.high - ci.low - 2.0 * b * se).abs() < 1e-12,
                "look {look} {ci:?}"
            );
            assert!(ci.high - ci.low < last_width && ci.low >= -1.0 && ci.high <= 1.0);
            last_width = ci.high - ci.low;
        }
        let ci = d.repeated_ci(5, c).unwrap();
        assert!((ci.low - (p2 - p1 - 2.031 * se)).abs() < 1e-3 * se);
    }

    #[test]
    fn the_decision_compares_the_absolute_statistic_with_the_boundary() {
        let d = SequentialDesign::equally_spaced(0.05, 5).unwrap();
        let strong = d.look(3, counts(1, 18, 12, 18)).unwrap();
        assert!(strong.z > strong.boundary && strong.crossed, "{strong:?}");
        let reversed = d.look(3, counts(12, 18, 1, 18)).unwrap();
        assert!(reversed.z < 0.0 && reversed.crossed);
        let weak = d.look(3, counts(3, 18, 6, 18)).unwrap();
        assert!(!weak.crossed && weak.fraction == 0.6);
        let none = d.look(1, counts(0, 6, 0, 6)).unwrap();
        assert!(none.z == 0.0 && !none.crossed);
    }

    #[test]
    fn power_grows_with_the_drift_and_early_stopping_saves_sessions() {
        let d = SequentialDesign::equally_spaced(0.05, 5).unwrap();
        let mut last = d.power(0.0);
        for drift in [1.0, 2.0, 2.836, 4.0] {
            let p = d.power(drift);
            assert!(p > last && p < 1.0);
            last = p;
        }
        assert!((d.power(2.836) - 0.8).abs() < 1e-4);
        assert!(d.expected_fraction(2.836) < d.expected_fraction(0.0));
        assert!(d.expected_fraction(0.0) < 1.0);
    }

    #[test]
    fn extreme_designs_give_finite_probabilities_and_no_panic() {
        let tiny_first = SequentialDesign::new(0.05, &[0.001, 1.0]).unwrap();
        assert!(tiny_first.boundaries()[0].is_infinite());
        assert!((tiny_first.boundaries()[1] - 1.959963984540054).abs() < 1e-6);
        assert!((tiny_first.power(0.0) - 0.05).abs() < 1e-9);
        let ci = tiny_first.repeated_ci(1, counts(0, 3, 3, 3)).unwrap();
        assert_eq!((ci.low, ci.high), (-1.0, 1.0));
        let many = SequentialDesign::equally_spaced(0.999, MAX_LOOKS).unwrap();
        assert!(many.boundaries().iter().all(|c| c.is_finite() && *c >= 0.0));
        assert!(many.power(0.0).is_finite());
        let lax = SequentialDesign::equally_spaced(0.5, 5).unwrap();
        assert!(lax.repeated_p_value_of_z(5, 40.0).unwrap() >= MIN_REPEATED_P);
    }

    #[test]
    fn look_fractions_end_at_one_even_when_the_maximum_is_not_a_multiple() {
        assert_eq!(look_fractions(6, 30).unwrap(), [0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(
            look_fractions(7, 32).unwrap(),
            [7.0 / 32.0, 0.4375, 21.0 / 32.0, 0.875, 1.0]
        );
        assert_eq!(look_fractions(40, 30).unwrap(), [1.0]);
        assert!(SequentialDesign::new(0.05, &look_fractions(7, 32).unwrap()).is_ok());
        assert!(look_fractions(0, 30).is_err() && look_fractions(3, 0).is_err());
        assert!(look_fractions(1, MAX_LOOKS as u64).is_ok());
        assert!(look_fractions(1, MAX_LOOKS as u64 + 1).is_err());
    }

    #[test]
    fn invalid_designs_and_looks_are_errors_not_panics() {
        for alpha in [0.0, 1.0, -0.1, f64::NAN] {
            assert!(SequentialDesign::equally_spaced(alpha, 5).is_err());
            assert!(ldof_spending(alpha, 0.5).is_err());
        }
        for fractions in [
            &[][..],
            &[0.5][..],
            &[0.5, 0.5, 1.0][..],
            &[0.6, 0.4, 1.0][..],
            &[0.0, 1.0][..],
            &[0.5, 1.2][..],
            &[0.5, f64::NAN, 1.0][..],
        ] {
            assert!(
                SequentialDesign::new(0.05, fractions).is_err(),
                "{fractions:?}"
            );
        }
        assert!(SequentialDesign::equally_spaced(0.05, 0).is_err());
        assert!(SequentialDesign::equally_spaced(0.05, MAX_LOOKS + 1).is_err());
        let d = SequentialDesign::equally_spaced(0.05, 3).unwrap();
        assert!(d.look(0, counts(1, 2, 1, 2)).is_err());
        assert!(d.look(4, counts(1, 2, 1, 2)).is_err());
        assert!(d.look(1, counts(3, 2, 1, 2)).is_err());
        assert!(d.repeated_ci(1, counts(0, 0, 1, 2)).is_err());
        assert!(d.repeated_p_value_of_z(1, f64::NAN).is_err());
        assert!(d.drift_for_power(0.01).is_err());
        assert!(sequential_sessions_per_arm(0.2, 0.2, 0.05, 0.8, 5).is_err());
        assert!(sequential_sessions_per_arm(0.3, 0.2, 0.05, 0.8, 0).is_err());
    }

    proptest::proptest! {
        #[test]
        fn every_look_is_consistent_for_any_counts(
            n1 in 1u64..400, n2 in 1u64..400, a in 0.0f64..=1.0, b in 0.0f64..=1.0,
            look in 1usize..=5,
        ) {
            let d = five_looks();
            let (k1, k2) = ((a * n1 as f64) as u64, (b * n2 as f64) as u64);
            let c = counts(k1, n1, k2, n2);
            let decision = d.look(look, c).unwrap();
            let mirrored = d.look(look, counts(k2, n2, k1, n1)).unwrap();
            proptest::prop_assert_eq!(mirrored.z, -decision.z);
            proptest::prop_assert_eq!(mirrored.crossed, decision.crossed);
            proptest::prop_assert_eq!(
                decision.crossed,
                decision.z != 0.0 && decision.z.abs() >= decision.boundary
            );
            let ci = d.repeated_ci(look, c).unwrap();
            let diff = k2 as f64 / n2 as f64 - k1 as f64 / n1 as f64;
            proptest::prop_assert!(ci.contains(diff) && ci.low >= -1.0 && ci.high <= 1.0);
        }
    }

    fn five_looks() -> &'static SequentialDesign {
        static D: std::sync::OnceLock<SequentialDesign> = std::sync::OnceLock::new();
        D.get_or_init(|| SequentialDesign::equally_spaced(0.05, 5).unwrap())
    }
}
