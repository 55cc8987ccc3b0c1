//! An arm against the baseline stratified by task: the Cochran–Mantel–Haenszel test (in
//! [`super::cmh`]), the Mantel–Haenszel odds ratio and risk difference, and the
//! Breslow–Day test that the odds ratio is the same in every task.
//!
//! Every function takes one [`Stratum`] per task and leaves out the strata where either
//! side has no units (they compare nothing); [`stratified`] counts them. Strata with a zero
//! column total (no events, or only events, on both sides) are kept: they add nothing to
//! any sum here, exactly as in statsmodels. Where a statistic is undefined the result is
//! `None`, never NaN or infinity.

use statrs::distribution::{ChiSquared, ContinuousCDF};

use super::cmh::{Cmh, cmh};
use super::error::{Result, check_confidence};
use super::proportion::{Interval, normal_isf};
use super::stratum::{Cells, Stratum, Sum, ratio, used};

/// The Mantel–Haenszel pooled odds ratio of [`mh_odds_ratio`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MhOddsRatio {
    /// `Σ aᵢdᵢ/Nᵢ / Σ bᵢcᵢ/Nᵢ`.
    pub estimate: f64,
    /// Robins–Breslow–Greenland standard error of `ln(estimate)`.
    pub se_log: f64,
    /// `exp(ln(estimate) ± z · se_log)`.
    pub ci: Interval,
}

/// The Mantel–Haenszel risk difference of [`mh_risk_difference`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MhRiskDifference {
    /// `Σ wᵢdᵢ / Σ wᵢ`, `wᵢ = n₁ᵢn₀ᵢ/(n₁ᵢ + n₀ᵢ)`, `dᵢ = k₁ᵢ/n₁ᵢ − k₀ᵢ/n₀ᵢ`.
    pub estimate: f64,
    /// Greenland–Robins (1985) standard error of `estimate`.
    pub se: f64,
    /// Wald interval `estimate ± z · se`, clipped to [−1, 1].
    pub ci: Interval,
}

/// The Breslow–Day test of [`breslow_day`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BreslowDay {
    /// The Breslow–Day chi-square statistic, without Tarone's adjustment.
    pub statistic: f64,
    /// Degrees of freedom: the strata tested minus one.
    pub dof: u64,
    /// Upper-tail p-value, `chi2.sf(statistic, dof)`.
    pub p: f64,
    /// The strata tested: those without a zero margin.
    pub strata: usize,
}

/// Everything [`stratified`] computes for one arm against the baseline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stratified {
    /// Strata with units on both sides, the ones every statistic uses.
    pub used: usize,
    /// Strata left out because a side has no units.
    pub left_out: usize,
    /// [`cmh`]; None when every used stratum has a zero margin (or none is used).
    pub cmh: Option<Cmh>,
    /// [`mh_odds_ratio`]; None when the pooled odds ratio is 0, infinite or undefined.
    pub odds_ratio: Option<MhOddsRatio>,
    /// [`mh_risk_difference`]; None when no stratum is used.
    pub diff: Option<MhRiskDifference>,
    /// [`breslow_day`]; None with fewer than two strata without a zero margin.
    pub homogeneity: Option<BreslowDay>,
}

/// Every stratified statistic of one arm against the baseline, and how many strata were
/// used and left out; see [`cmh`], [`mh_odds_ratio`], [`mh_risk_difference`] and
/// [`breslow_day`] for the conventions.
///
/// Errors: `confidence` outside (0, 1).
pub fn stratified(strata: &[Stratum], confidence: f64) -> Result<Stratified> {
    check_confidence(confidence)?;
    let used = strata.iter().filter(|s| s.has_both_arms()).count();
    Ok(Stratified {
        used,
        left_out: strata.len() - used,
        cmh: cmh(strata),
        odds_ratio: mh_odds_ratio(strata, confidence)?,
        diff: mh_risk_difference(strata, confidence)?,
        homogeneity: breslow_day(strata),
    })
}

/// The Mantel–Haenszel pooled odds ratio and its confidence interval.
///
/// Convention: statsmodels `StratifiedTable(tables).oddsratio_pooled` and
/// `.oddsratio_pooled_confint(alpha=1 - confidence)` over the strata with units on both
/// sides: `OR = Σ Rᵢ / Σ Sᵢ` with `Rᵢ = aᵢdᵢ/Nᵢ`, `Sᵢ = bᵢcᵢ/Nᵢ`; the variance of
/// `ln OR` is Robins, Breslow and Greenland's (Biometrics 1986), with `Pᵢ = (aᵢ + dᵢ)/Nᵢ`
/// and `Qᵢ = (bᵢ + cᵢ)/Nᵢ`:
/// `(ΣPᵢRᵢ/(ΣR)² + Σ(PᵢSᵢ + QᵢRᵢ)/(ΣR ΣS) + ΣQᵢSᵢ/(ΣS)²) / 2`; the interval is
/// `exp(ln OR ± z se)`, `z = norm.isf((1 − confidence)/2)`. Both bounds are held on
/// their side of the estimate (one ulp of `exp(ln x)` could otherwise cross it).
///
/// None when `Σ Rᵢ` or `Σ Sᵢ` is 0: the estimate is then 0, infinite or 0/0 and has no
/// logarithm (statsmodels gives 0, inf or NaN).
///
/// Errors: `confidence` outside (0, 1).
pub fn mh_odds_ratio(strata: &[Stratum], confidence: f64) -> Result<Option<MhOddsRatio>> {
    check_confidence(confidence)?;
    let (mut r, mut s) = (Sum::default(), Sum::default());
    let (mut pr, mut ps_qr, mut qs) = (Sum::default(), Sum::default(), Sum::default());
    for t in used(strata) {
        let n = t.total();
        let (ri, si) = (ratio(t.a * t.d, n), ratio(t.b * t.c, n));
        let (pi, qi) = (ratio(t.a + t.d, n), ratio(t.b + t.c, n));
        r.add(ri);
        s.add(si);
        pr.add(pi * ri);
        ps_qr.add(pi * si + qi * ri);
        qs.add(qi * si);
    }
    let (r, s) = (r.value(), s.value());
    if !(r > 0.0 && s > 0.0) {
        return Ok(None);
    }
    let estimate = r / s;
    let var_log = (pr.value() / (r * r) + ps_qr.value() / (r * s) + qs.value() / (s * s)) / 2.0;
    let se_log = var_log.sqrt();
    let half = normal_isf((1.0 - confidence) / 2.0) * se_log;
    let log = estimate.ln();
    let ci = Interval {
        low: (log - half).exp().min(estimate),
        high: (log + half).exp().max(estimate),
    };
    let finite = [estimate, se_log, ci.low, ci.high]
        .iter()
        .all(|x| x.is_finite());
    Ok(finite.then_some(MhOddsRatio {
        estimate,
        se_log,
        ci,
    }))
}

/// The Mantel–Haenszel risk difference (arm − baseline) and its Wald interval with the
/// Greenland–Robins variance.
///
/// Convention (statsmodels has none): Greenland & Robins, "Estimation of a common
/// effect parameter from sparse follow-up data", Biometrics 41 (1985) 55–68, as R's
/// epiR computes it (`epi.2by2(...)$massoc$ARisk.mh.green`, its `zMHRD.GR`), over the
/// strata with units on both sides: `estimate = Σwᵢdᵢ / Σwᵢ`, `wᵢ = n₁ᵢn₀ᵢ/Nᵢ`,
/// `dᵢ = k₁ᵢ/n₁ᵢ − k₀ᵢ/n₀ᵢ`;
/// `Var = Σwᵢ²(p₁ᵢ(1 − p₁ᵢ)/n₁ᵢ + p₀ᵢ(1 − p₀ᵢ)/n₀ᵢ) / (Σwᵢ)²`; the interval is
/// `estimate ± z·√Var`, `z = norm.isf((1 − confidence)/2)`, clipped to [−1, 1] (epiR does
/// not clip; a difference of two rates lies in [−1, 1], so clipping only removes values
/// no rate can take). With one stratum this is the unpooled Wald interval, statsmodels
/// `confint_proportions_2indep(method="wald", compare="diff")`. When every rate is 0 or
/// 1 the variance is 0 and the interval is the estimate alone (the Wald interval's
/// known blind spot; the CMH test says then whether the arms differ).
///
/// Each `k₁ᵢn₀ᵢ − k₀ᵢn₁ᵢ` is an exact integer before it is divided.
///
/// None when no stratum has units on both sides.
///
/// Errors: `confidence` outside (0, 1).
pub fn mh_risk_difference(strata: &[Stratum], confidence: f64) -> Result<Option<MhRiskDifference>> {
    check_confidence(confidence)?;
    let (mut weighted, mut weights, mut variance) =
        (Sum::default(), Sum::default(), Sum::default());
    for t in used(strata) {
        let n = t.total();
        let (n1, n0) = (t.n1() as f64, t.n0() as f64);
        let w = ratio(t.n1() * t.n0(), n);
        weighted.add(ratio(t.a * t.n0() - t.c * t.n1(), n));
        weights.add(w);
        let arm = (t.a * t.b) as f64 / (n1 * n1 * n1);
        let baseline = (t.c * t.d) as f64 / (n0 * n0 * n0);
        variance.add(w * w * (arm + baseline));
    }
    let weights = weights.value();
    // Every used stratum has a positive weight, so only an empty sum is 0.
    if weights <= 0.0 || weights.is_nan() {
        return Ok(None);
    }
    let estimate = (weighted.value() / weights).clamp(-1.0, 1.0);
    let se = variance.value().sqrt() / weights;
    let half = normal_isf((1.0 - confidence) / 2.0) * se;
    let ci = Interval {
        low: (estimate - half).max(-1.0),
        high: (estimate + half).min(1.0),
    };
    let finite = [estimate, se, ci.low, ci.high]
        .iter()
        .all(|x| x.is_finite());
    Ok(finite.then_some(MhRiskDifference { estimate, se, ci }))
}

/// The Breslow–Day test that the odds ratio is the same in every stratum, without
/// Tarone's adjustment.
///
/// Convention: statsmodels `StratifiedTable(tables).test_equal_odds(adjust=False)` over
/// the strata without a zero margin (a side without units, or no events or no
/// non-events on both sides: such a table says nothing about an odds ratio, and R's
/// metafor `rma.mh` drops it too). With `ψ` the Mantel–Haenszel odds ratio of those
/// strata, `eᵢ` is the root in the table's range of `(1 − ψ)e² + (ψ(n₁ᵢ + m₁ᵢ) + dᵢ − aᵢ)e
/// − ψn₁ᵢm₁ᵢ = 0` (the `aᵢ` whose table has odds ratio `ψ` with the margins held), `vᵢ` its
/// variance `1/(1/eᵢ + 1/(m₁ᵢ − eᵢ) + 1/(n₁ᵢ − eᵢ) + 1/(dᵢ − aᵢ + eᵢ))`, the statistic
/// `Σ(aᵢ − eᵢ)²/vᵢ` and `p = chi2.sf(statistic, K − 1)`. The root is computed as
/// `2ψn₁ᵢm₁ᵢ / (B + √(B² + 4(1 − ψ)ψn₁ᵢm₁ᵢ))`, the same root as statsmodels'
/// `(−B + √…)/(2(1 − ψ))` without its cancellation, and defined at `ψ = 1`, where
/// statsmodels divides by zero.
///
/// None with fewer than two such strata, or when their pooled odds ratio is 0 or
/// infinite (an arm with no events, or only events, wherever the other side has some).
pub fn breslow_day(strata: &[Stratum]) -> Option<BreslowDay> {
    let tables: Vec<Cells> = strata
        .iter()
        .filter(|s| !s.has_zero_margin())
        .filter_map(Stratum::cells)
        .collect();
    if tables.len() < 2 {
        return None;
    }
    let (mut r, mut s) = (Sum::default(), Sum::default());
    for t in &tables {
        r.add(ratio(t.a * t.d, t.total()));
        s.add(ratio(t.b * t.c, t.total()));
    }
    let (r, s) = (r.value(), s.value());
    if !(r > 0.0 && s > 0.0) {
        return None;
    }
    let psi = r / s;
    let mut statistic = Sum::default();
    for t in &tables {
        let (n1, m1, a) = (t.n1() as f64, t.m1() as f64, t.a as f64);
        let d_minus_a = (t.d - t.a) as f64;
        let linear = psi * (n1 + m1) + d_minus_a;
        let product = psi * n1 * m1;
        let root = (linear * linear + 4.0 * (1.0 - psi) * product).sqrt();
        let expected = 2.0 * product / (linear + root);
        let variance = 1.0
            / (1.0 / expected
                + 1.0 / (m1 - expected)
                + 1.0 / (n1 - expected)
                + 1.0 / (d_minus_a + expected));
        statistic.add((a - expected) * (a - expected) / variance);
    }
    let statistic = statistic.value();
    if !(statistic.is_finite() && statistic >= 0.0) {
        return None;
    }
    let dof = tables.len() as u64 - 1;
    let p = ChiSquared::new(dof as f64)
        .ok()?
        .sf(statistic)
        .clamp(0.0, 1.0);
    Some(BreslowDay {
        statistic,
        dof,
        p,
        strata: tables.len(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::{Alternative, MAX_STRATUM_COUNT, chi2_2xk};

    fn strata(counts: &[(u64, u64, u64, u64)]) -> Vec<Stratum> {
        counts
            .iter()
            .map(|&(k1, n1, k0, n0)| Stratum::new(k1, n1, k0, n0).unwrap())
            .collect()
    }

    /// The arm is 22.5 points better in both tasks, yet 24.5 points worse pooled, because
    /// most of its units fall on the hard task (tests/data/stats_vectors.json keeps the
    /// same counts as `simpson_two_tasks`).
    const SIMPSON: [(u64, u64, u64, u64); 2] = [(36, 40, 280, 400), (140, 400, 4, 40)];

    #[test]
    fn a_single_stratum_gives_pearsons_chi_square_times_n_minus_one_over_n() {
        for (k1, n1, k0, n0) in [(44, 240, 22, 240), (3, 10, 7, 12), (0, 5, 4, 9)] {
            let c = cmh(&strata(&[(k1, n1, k0, n0)])).unwrap();
            let pearson = chi2_2xk(&[k1, k0], &[n1, n0]).unwrap().statistic;
            let n = (n1 + n0) as f64;
            let want = pearson * (n - 1.0) / n;
            assert!(((c.statistic - want) / want).abs() < 1e-12, "{c:?} {want}");
        }
    }

    #[test]
    fn the_stratified_difference_keeps_the_sign_that_pooling_reverses() {
        let s = stratified(&strata(&SIMPSON), 0.95).unwrap();
        let pooled = 176.0 / 440.0 - 284.0 / 440.0;
        let diff = s.diff.unwrap();
        assert!(
            pooled < -0.2 && (diff.estimate - 0.225).abs() < 1e-12,
            "{diff:?}"
        );
        assert!(diff.ci.low > 0.0);
        let cmh = s.cmh.unwrap();
        assert!(cmh.z > 0.0 && cmh.p_value(Alternative::Greater) < 0.001);
        assert!(s.odds_ratio.unwrap().ci.low > 1.0);
        assert!(s.homogeneity.unwrap().p > 0.5);
    }

    #[test]
    fn strata_with_an_empty_side_are_left_out_and_counted() {
        // (1, 1, 0, 0) has N = 1: kept, its hypergeometric variance would be 0/0.
        let with = strata(&[
            (3, 10, 1, 10),
            (0, 0, 4, 9),
            (5, 7, 0, 0),
            (1, 1, 0, 0),
            (2, 9, 6, 11),
        ]);
        let without = strata(&[(3, 10, 1, 10), (2, 9, 6, 11)]);
        let a = stratified(&with, 0.95).unwrap();
        let b = stratified(&without, 0.95).unwrap();
        assert_eq!((a.used, a.left_out), (2, 3));
        assert_eq!((b.used, b.left_out), (2, 0));
        assert_eq!((a.cmh, a.odds_ratio, a.diff), (b.cmh, b.odds_ratio, b.diff));
        assert_eq!(a.homogeneity, b.homogeneity);
    }

    #[test]
    fn zero_margins_everywhere_give_no_test_and_no_panic() {
        for counts in [
            vec![(0, 10, 0, 12), (0, 3, 0, 4)],
            vec![(10, 10, 12, 12), (0, 3, 0, 4)],
            vec![(0, 0, 3, 4), (2, 2, 0, 0)],
            vec![],
        ] {
            let s = stratified(&strata(&counts), 0.95).unwrap();
            assert_eq!(s.cmh, None, "{counts:?}");
            assert_eq!(s.odds_ratio, None, "{counts:?}");
            assert_eq!(s.homogeneity, None, "{counts:?}");
        }
        let d = mh_risk_difference(&strata(&[(0, 10, 0, 12), (3, 3, 4, 4)]), 0.95)
            .unwrap()
            .unwrap();
        assert_eq!(
            (d.estimate, d.se, d.ci.low, d.ci.high),
            (0.0, 0.0, 0.0, 0.0)
        );
        assert_eq!(mh_risk_difference(&strata(&[(0, 0, 1, 2)]), 0.95), Ok(None));
    }

    #[test]
    fn swapping_the_arms_mirrors_every_estimate() {
        let counts = [(12, 40, 5, 38), (30, 50, 21, 52), (2, 9, 4, 8)];
        let swapped: Vec<_> = counts.iter().map(|&(a, b, c, d)| (c, d, a, b)).collect();
        let s = stratified(&strata(&counts), 0.9).unwrap();
        let t = stratified(&strata(&swapped), 0.9).unwrap();
        let close = |x: f64, y: f64| (x - y).abs() <= 1e-12 * x.abs().max(1.0);
        let (c, m) = (s.cmh.unwrap(), t.cmh.unwrap());
        assert!(close(c.z, -m.z) && close(c.p, m.p));
        assert!(close(
            c.p_value(Alternative::Greater),
            m.p_value(Alternative::Less)
        ));
        let (o, r) = (s.odds_ratio.unwrap(), t.odds_ratio.unwrap());
        assert!(close(o.estimate, 1.0 / r.estimate) && close(o.ci.low, 1.0 / r.ci.high));
        let (d, e) = (s.diff.unwrap(), t.diff.unwrap());
        assert!(close(d.estimate, -e.estimate) && close(d.ci.low, -e.ci.high));
        let (h, g) = (s.homogeneity.unwrap(), t.homogeneity.unwrap());
        assert!(close(h.statistic, g.statistic));
    }

    #[test]
    fn one_sided_p_values_are_the_two_tails_of_z() {
        let c = cmh(&strata(&[(12, 40, 5, 38), (30, 50, 21, 52)])).unwrap();
        let (g, l) = (
            c.p_value(Alternative::Greater),
            c.p_value(Alternative::Less),
        );
        assert!(c.z > 0.0 && g < 0.5 && l > 0.5);
        assert!((g + l - 1.0).abs() < 1e-15);
        assert_eq!(2.0 * g, c.p);
        assert!((c.z * c.z - c.statistic).abs() < 1e-12 * c.statistic);
        // A p-value far below 1e-16 comes from the upper tail (statsmodels' 1 - cdf gives
        // 0 here; scipy's chi2.sf gives 4.425232594633604e-88 for the two-sided p).
        let far = cmh(&strata(&[(500, 1000, 200, 1000), (450, 1000, 160, 1000)])).unwrap();
        assert!(
            (far.p / 4.425232594633604e-88 - 1.0).abs() < 1e-9,
            "{far:?}"
        );
        assert_eq!(far.p_value(Alternative::Greater), far.p / 2.0);
    }

    #[test]
    fn breslow_day_is_defined_where_the_pooled_odds_ratio_is_exactly_one() {
        // Odds ratios 4 and 1/4 with equal weights: ψ = 1, where statsmodels divides by
        // zero. Then eᵢ = n₁m₁/N = 1.5 and vᵢ = 1/(4/1.5) = 0.375 in both tables.
        let bd = breslow_day(&strata(&[(2, 3, 1, 3), (1, 3, 2, 3)])).unwrap();
        assert_eq!(bd.dof, 1);
        let want = 2.0 * 0.25 / 0.375;
        assert!((bd.statistic - want).abs() < 1e-14, "{bd:?}");
    }

    #[test]
    fn breslow_day_needs_two_tables_without_a_zero_margin() {
        assert_eq!(breslow_day(&strata(&[(3, 10, 1, 10)])), None);
        assert_eq!(
            breslow_day(&strata(&[(3, 10, 1, 10), (0, 5, 0, 5), (0, 0, 1, 3)])),
            None
        );
        // An arm without events wherever the baseline has some: ψ = 0.
        assert_eq!(breslow_day(&strata(&[(0, 10, 1, 10), (0, 5, 3, 5)])), None);
        let bd = breslow_day(&strata(&[(3, 10, 1, 10), (0, 5, 0, 5), (2, 9, 6, 11)]));
        assert_eq!(bd.map(|b| (b.strata, b.dof)), Some((2, 1)));
    }

    #[test]
    fn invalid_confidences_are_errors() {
        let s = strata(&[(3, 10, 1, 10)]);
        for conf in [0.0, 1.0, -0.1, f64::NAN] {
            assert!(stratified(&s, conf).is_err());
            assert!(mh_odds_ratio(&s, conf).is_err());
            assert!(mh_risk_difference(&s, conf).is_err());
        }
    }

    fn count() -> impl proptest::strategy::Strategy<Value = u64> {
        use proptest::prelude::*;
        prop_oneof![
            3 => 0u64..60,
            1 => (MAX_STRATUM_COUNT - 1_000)..=MAX_STRATUM_COUNT,
            1 => 0u64..=MAX_STRATUM_COUNT,
        ]
    }

    fn stratum() -> impl proptest::strategy::Strategy<Value = Stratum> {
        use proptest::prelude::*;
        (count(), count(), 0.0f64..=1.0, 0.0f64..=1.0).prop_map(|(n1, n0, f1, f0)| {
            // k = f·n, rounded down and held at n (f64 rounding could pass it).
            let k = |f: f64, n: u64| ((f * n as f64) as u64).min(n);
            Stratum::new(k(f1, n1), n1, k(f0, n0), n0).unwrap()
        })
    }

    proptest::proptest! {
        #[test]
        fn any_counts_give_probabilities_and_intervals_around_their_estimates(
            strata in proptest::collection::vec(stratum(), 0..7),
            confidence in 0.5f64..0.9999,
        ) {
            use proptest::prop_assert;
            let s = stratified(&strata, confidence).unwrap();
            prop_assert!(s.used + s.left_out == strata.len());
            if let Some(c) = s.cmh {
                prop_assert!(c.statistic >= 0.0 && (0.0..=1.0).contains(&c.p));
                for alt in [Alternative::Greater, Alternative::Less] {
                    prop_assert!((0.0..=1.0).contains(&c.p_value(alt)));
                }
            }
            if let Some(o) = s.odds_ratio {
                prop_assert!(o.estimate > 0.0 && o.ci.contains(o.estimate), "{o:?}");
            }
            if let Some(d) = s.diff {
                prop_assert!(d.ci.contains(d.estimate), "{d:?}");
                prop_assert!(-1.0 <= d.ci.low && d.ci.high <= 1.0, "{d:?}");
            }
            prop_assert!(s.diff.is_some() == (s.used > 0));
            if let Some(h) = s.homogeneity {
                prop_assert!(h.strata >= 2 && (0.0..=1.0).contains(&h.p), "{h:?}");
            }
        }
    }
}
