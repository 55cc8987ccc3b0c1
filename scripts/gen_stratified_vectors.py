#!/usr/bin/env python3
"""Generate reference vectors for the stratified statistics (`stats::stratified`).

Writes tests/data/stratified_vectors.json (relative to the crate root): one case per
list of strata, each stratum (k1, n1, k0, n0) = k1 events of n1 in the arm and k0 of n0
in the baseline, and what every stratified statistic gives for it.

Where each expected value comes from
------------------------------------
Strata with n = 0 on a side are left out before anything is computed (statsmodels would
divide by zero on them); each case records how many were left out.

* CMH test: statsmodels `StratifiedTable(tables).test_null_odds(correction=False)`,
  tables [[k1, n1 - k1], [k0, n0 - k0]]. Its statistic is stored; its p-value is
  `1 - chi2.cdf`, which rounds everything below 1e-16 to 0, so the stored p is
  `scipy.stats.chi2.sf(statistic, 1)` (the script checks the two agree to 1e-13
  absolute). z = sum(a - E a) / sqrt(sum Var a) takes E a and Var a from
  `scipy.stats.hypergeom(N, m1, n1).stats()` (an independent route to the same
  moments, below 2^31 units; the script checks z^2 = statsmodels' statistic), and the one-sided p-values
  are `scipy.stats.norm.sf(z)` and `norm.sf(-z)`.
* Sparse events: when the Mantel-Fleiss criterion min(sum E a - sum L, sum U - sum E a)
  (L, U the bounds of each stratum's a given its margins) is below 5, loopbench uses
  the exact conditional test, R's `mantelhaen.test(exact = TRUE)`: the distribution of
  S = sum a is the convolution of the strata's `scipy.stats.hypergeom(N, m1, n1).pmf`
  over their supports (numpy.convolve); the two-sided p sums the probabilities of the
  values of S at most the observed one's times 1 + 1e-7 (R's rule), and the one-sided
  p-values are P(S >= s) and P(S <= s). The case's `cmh` then has `exact: true` and
  these p-values (statistic and z stay the asymptotic ones). The same distribution is
  recomputed in exact integer arithmetic (math.comb products, convolved as integers)
  and must agree to 1e-11 relative; with one stratum the p-values must equal
  `scipy.stats.fisher_exact` to 1e-9.
* Mantel-Haenszel odds ratio and its CI: statsmodels `oddsratio_pooled` and
  `oddsratio_pooled_confint(alpha=1 - confidence)` (Robins-Breslow-Greenland variance);
  `logodds_pooled_se` as `se_log`. Absent when the sum of a*d/N or of b*c/N is 0.
* Mantel-Haenszel risk difference: statsmodels has none. The estimate, Greenland-Robins
  (1985) standard error and Wald interval are R epiR's `zMHRD.GR` (the `ARisk.mh.green`
  of `epi.2by2`) re-implemented in numpy, line for line, with the interval then clipped
  to [-1, 1] as loopbench documents. R is not available where this was written, so two
  independent checks stand in for running epiR: every case is recomputed in exact
  rational arithmetic (fractions.Fraction, the square root in 50-digit Decimal), and
  every single-stratum case must equal statsmodels'
  `confint_proportions_2indep(method="wald", compare="diff")`, which the MH difference
  and its variance reduce to with one stratum.
* Breslow-Day: statsmodels `test_equal_odds(adjust=False)` over the strata without a
  zero margin, when at least two remain and their pooled odds ratio is neither 0 nor
  infinite; p is `chi2.sf(statistic, K - 1)` for the reason above. statsmodels divides
  by zero when the pooled odds ratio is exactly 1; there the stored statistic is the
  50-digit Decimal computation, and the case's `library_off` says so.

Every library value is also recomputed from the definitions in exact rational or
50-digit Decimal arithmetic and must agree to 1e-11 relative, so that a vector is the
true value and not a rounding artefact of either side. The one exception is a case
marked large (1e9 units per stratum and more): the libraries form differences such as
a - n1*m1/N in floating point and lose digits to cancellation there (statsmodels'
Breslow-Day statistic by up to 1e-5 relative), so such a case stores the exact value
and records the library's value and its relative error under `library_off`; a
difference above 1e-4 still stops the script. The script stops if any check fails.

Usage:  python3 scripts/gen_stratified_vectors.py
Needs:  pip install numpy scipy statsmodels
"""

import json
import math
import platform
import sys
import warnings
from decimal import Decimal, getcontext
from fractions import Fraction
from pathlib import Path

import numpy as np
import scipy
import statsmodels
from scipy import stats
from statsmodels.stats.contingency_tables import StratifiedTable
from statsmodels.stats.proportion import confint_proportions_2indep

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "stratified_vectors.json"
getcontext().prec = 50
CHECK_REL = 1e-11


def f(x):
    """Plain Python float (numpy scalars are not JSON serialisable)."""
    return float(x)


def agree(what, got, want, rel=CHECK_REL):
    got, want = float(got), float(want)
    if want == 0.0:
        ok = abs(got) <= 1e-300
    else:
        ok = abs(got - want) <= rel * abs(want)
    if not ok:
        raise SystemExit(f"{what}: {got!r} != {want!r} (relative {abs(got - want) / abs(want):.2e})")


def tables(strata):
    return [np.array([[k1, n1 - k1], [k0, n0 - k0]], dtype=np.float64)
            for k1, n1, k0, n0 in strata]


def zero_margin(s):
    k1, n1, k0, n0 = s
    return n1 == 0 or n0 == 0 or k1 + k0 == 0 or k1 + k0 == n1 + n0


def settle(notes, what, library, exact):
    """The library's value where it agrees with exact arithmetic to CHECK_REL.

    Only in a case marked large (strata of 1e9 units and more, where a library's float
    arithmetic cancels digits away: a - n1*m1/N with both terms near 1e11) may they
    differ; the exact value is stored then, and the library's value and its relative
    error are recorded in the case's `library_off`.
    """
    library, exact = float(library), float(exact)
    rel = abs(library - exact) / abs(exact) if exact else abs(library)
    if rel <= CHECK_REL:
        return library
    if not notes["large"] or rel > 1e-4:
        raise SystemExit(f"{notes['label']} {what}: library {library!r}, exact {exact!r}"
                         f" (relative {rel:.2e})")
    notes["library_off"][what] = {"library": library, "relative_error": rel}
    return exact


def cmh_case(used, notes):
    """CMH statistic from statsmodels, z from scipy's hypergeom moments, each checked
    against exact rational arithmetic."""
    excess = Fraction(0)
    variance = Fraction(0)
    for k1, n1, k0, n0 in used:
        n, m1, m0 = n1 + n0, k1 + k0, n1 + n0 - k1 - k0
        excess += k1 - Fraction(n1 * m1, n)
        variance += Fraction(n1 * n0 * m1 * m0, n * n * (n - 1))
    if variance == 0:
        return None
    res = StratifiedTable(tables(used)).test_null_odds(correction=False)
    p_statsmodels = f(res.pvalue)
    statistic = settle(notes, "cmh statistic", res.statistic, excess * excess / variance)
    p = f(stats.chi2.sf(statistic, 1))
    assert abs(f(stats.chi2.sf(res.statistic, 1)) - p_statsmodels) <= 1e-13, p_statsmodels
    # a ~ hypergeom(M = N, n = m1 events in all, N = n1 drawn into the arm). scipy's
    # hypergeom goes wrong past about 2^31 units (its mean for N = 1.9e12 is off by a
    # factor of 12,000), so larger strata take the textbook moments n1 m1 / N and
    # n1 n0 m1 m0 / (N^2 (N - 1)) in floats. scipy also divides by zero computing a
    # kurtosis nobody asked for.
    moments = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for k1, n1, k0, n0 in used:
            n, m1 = n1 + n0, k1 + k0
            if n < 2**31:
                moments.append(stats.hypergeom(n, m1, n1).stats("mv"))
            else:
                moments.append((n1 * m1 / n, n1 * n0 * m1 * (n - m1) / (n * n * (n - 1))))
    mean = sum(f(m) for m, _ in moments)
    var = sum(f(v) for _, v in moments)
    z_scipy = (sum(s[0] for s in used) - mean) / np.sqrt(var)
    z = settle(notes, "cmh z", z_scipy, dec(excess) / dec(variance).sqrt())
    agree("z^2 vs statistic", z * z, statistic, 1e-12)
    criterion = mantel_fleiss(used)
    out = {"statistic": statistic, "z": z, "mantel_fleiss": f(criterion)}
    if criterion < 5:
        out.update(exact_case(used))
        return out
    out.update({"exact": False, "p": p,
                "p_greater": f(stats.norm.sf(z)), "p_less": f(stats.norm.sf(-z))})
    return out


def support(s):
    k1, n1, k0, n0 = s
    m1, m0 = k1 + k0, n1 + n0 - k1 - k0
    return max(0, n1 - m0), min(n1, m1)


def mantel_fleiss(used):
    """min(sum E a - sum L, sum U - sum E a), exactly."""
    mean = sum(Fraction(n1 * (k1 + k0), n1 + n0) for k1, n1, k0, n0 in used)
    low = sum(support(s)[0] for s in used)
    high = sum(support(s)[1] for s in used)
    return min(mean - low, high - mean)


def r_exact_p(d, at):
    """R mantelhaen.test(exact = TRUE): two-sided, greater, less from a pmf of S."""
    rel = 1 + 1e-7
    return (sum(x for x in d if x <= d[at] * rel), sum(d[at:]), sum(d[:at + 1]))


def exact_case(used):
    """The exact conditional test by scipy's hypergeom pmf, checked in integers."""
    dist = np.array([1.0])
    whole = [1]
    offset = observed = 0
    for s in used:
        k1, n1, k0, n0 = s
        n, m1, m0 = n1 + n0, k1 + k0, n1 + n0 - k1 - k0
        low, high = support(s)
        xs = np.arange(low, high + 1)
        dist = np.convolve(dist, stats.hypergeom(n, m1, n1).pmf(xs))
        weights = [math.comb(m1, x) * math.comb(m0, n1 - x) for x in range(low, high + 1)]
        whole = [sum(whole[i] * weights[k - i] for i in range(len(whole))
                     if 0 <= k - i < len(weights))
                 for k in range(len(whole) + len(weights) - 1)]
        offset += low
        observed += k1
    at = observed - offset
    dist = dist / dist.sum()
    got = r_exact_p(list(dist), at)
    total = sum(whole)
    want = r_exact_p([Fraction(w, total) for w in whole], at)
    for what, g, w in zip(("two-sided", "greater", "less"), got, want):
        agree(f"exact {what}", g, w)
    if len(used) == 1:
        k1, n1, k0, n0 = used[0]
        table = [[k1, n1 - k1], [k0, n0 - k0]]
        for g, alt in zip(got, ("two-sided", "greater", "less")):
            agree(f"one stratum: exact {alt} vs fisher_exact", g,
                  stats.fisher_exact(table, alternative=alt).pvalue, 1e-9)
    p, greater, less = (min(f(x), 1.0) for x in got)
    return {"exact": True, "p": p, "p_greater": greater, "p_less": less}


def dec(x):
    x = Fraction(x)
    return Decimal(x.numerator) / Decimal(x.denominator)


def odds_ratio_case(used, confidence, notes):
    r, s = pooled_odds_sums(used)
    if r == 0 or s == 0:
        return None
    st = StratifiedTable(tables(used))
    estimate = settle(notes, "odds ratio", st.oddsratio_pooled, r / s)
    pr = ps_qr = qs = Fraction(0)
    for k1, n1, k0, n0 in used:
        a, b, c, d, n = k1, n1 - k1, k0, n0 - k0, n1 + n0
        ri, si, pi, qi = Fraction(a * d, n), Fraction(b * c, n), Fraction(a + d, n), Fraction(b + c, n)
        pr += pi * ri
        ps_qr += pi * si + qi * ri
        qs += qi * si
    se_exact = dec((pr / (r * r) + ps_qr / (r * s) + qs / (s * s)) / 2).sqrt()
    se = settle(notes, "log odds se", st.logodds_pooled_se, se_exact)
    low, high = st.oddsratio_pooled_confint(alpha=1 - confidence)
    half = dec(Fraction(f(stats.norm.isf((1 - confidence) / 2)))) * se_exact
    low = settle(notes, "odds ratio low", low, (dec(r / s).ln() - half).exp())
    high = settle(notes, "odds ratio high", high, (dec(r / s).ln() + half).exp())
    return {"estimate": estimate, "se_log": se, "low": low, "high": high}


def epir_mh_rd_green(used, confidence):
    """R epiR's zMHRD.GR, line for line in numpy (dataset columns: a, N1, c, N0)."""
    dataset = np.array([[k1, n1, k0, n0] for k1, n1, k0, n0 in used], dtype=np.float64)
    num = np.sum((dataset[:, 0] * dataset[:, 3] - dataset[:, 2] * dataset[:, 1])
                 / (dataset[:, 1] + dataset[:, 3]))
    w = np.sum(dataset[:, 1] * dataset[:, 3] / (dataset[:, 1] + dataset[:, 3]))
    delta_mh = num / w
    p1 = dataset[:, 0] / dataset[:, 1]
    p2 = dataset[:, 2] / dataset[:, 3]
    denom = dataset[:, 1] * dataset[:, 3] / (dataset[:, 1] + dataset[:, 3])
    var_delta_mh = np.sum(denom**2 * (p1 * (1 - p1) / dataset[:, 1]
                                      + p2 * (1 - p2) / dataset[:, 3])) / w**2
    z = stats.norm.ppf(1 - (1 - confidence) / 2)
    return delta_mh, np.sqrt(var_delta_mh), z


def diff_case(used, confidence, notes):
    if not used:
        return None
    estimate, se, z = epir_mh_rd_green(used, confidence)
    w = sum(Fraction(n1 * n0, n1 + n0) for _, n1, _, n0 in used)
    est_exact = sum(Fraction(k1 * n0 - k0 * n1, n1 + n0) for k1, n1, k0, n0 in used) / w
    var_exact = sum(Fraction(n1 * n0, n1 + n0) ** 2
                    * (Fraction(k1 * (n1 - k1), n1**3) + Fraction(k0 * (n0 - k0), n0**3))
                    for k1, n1, k0, n0 in used) / (w * w)
    epir_low, epir_high = estimate - z * se, estimate + z * se
    estimate = settle(notes, "risk difference", estimate, est_exact)
    se = settle(notes, "risk difference se", se, dec(var_exact).sqrt())
    half = dec(Fraction(f(z))) * dec(var_exact).sqrt()
    low = settle(notes, "risk difference low", epir_low, dec(est_exact) - half)
    high = settle(notes, "risk difference high", epir_high, dec(est_exact) + half)
    if len(used) == 1:
        k1, n1, k0, n0 = used[0]
        wl, wh = confint_proportions_2indep(k1, n1, k0, n0, method="wald", compare="diff",
                                            alpha=1 - confidence)
        agree("one stratum: low vs statsmodels wald", low, wl, 1e-12)
        agree("one stratum: high vs statsmodels wald", high, wh, 1e-12)
    return {"estimate": estimate, "se": se,
            "low": f(max(low, -1.0)), "high": f(min(high, 1.0)),
            "clipped": bool(low < -1.0 or high > 1.0)}


def pooled_odds_sums(used):
    """Exact sum of a*d/N and of b*c/N."""
    r = sum(Fraction(k1 * (n0 - k0), n1 + n0) for k1, n1, k0, n0 in used)
    s = sum(Fraction((n1 - k1) * k0, n1 + n0) for k1, n1, k0, n0 in used)
    return r, s


def breslow_day_decimal(kept, psi):
    """Breslow-Day statistic from the definition, 50 digits, root of the quadratic."""
    total = Decimal(0)
    for k1, n1, k0, n0 in kept:
        a, d, m1 = Decimal(k1), Decimal(n0 - k0), Decimal(k1 + k0)
        n1d = Decimal(n1)
        qa = 1 - psi
        qb = psi * (n1d + m1) + d - a
        qc = -psi * n1d * m1
        e = (-2 * qc) / (qb + (qb * qb - 4 * qa * qc).sqrt())
        assert max(Decimal(0), m1 - Decimal(n0)) < e < min(n1d, m1), (e, kept)
        v = 1 / (1 / e + 1 / (m1 - e) + 1 / (n1d - e) + 1 / (d - a + e))
        total += (a - e) ** 2 / v
    return total


def homogeneity_case(used, notes):
    kept = [s for s in used if not zero_margin(s)]
    if len(kept) < 2:
        return None
    r, s = pooled_odds_sums(kept)
    if r == 0 or s == 0:
        return None
    exact = breslow_day_decimal(kept, dec(r / s))
    dof = len(kept) - 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = StratifiedTable(tables(kept)).test_equal_odds(adjust=False)
    if r == s:
        # statsmodels divides by zero at a pooled odds ratio of exactly 1.
        assert not np.isfinite(res.statistic), res.statistic
        statistic = float(exact)
        notes["library_off"]["breslow-day statistic"] = {
            "library": "division by zero at a pooled odds ratio of exactly 1"}
    else:
        statistic = settle(notes, "breslow-day statistic", res.statistic, exact)
        p_sm = f(res.pvalue)
        assert abs(f(stats.chi2.sf(res.statistic, dof)) - p_sm) <= 1e-13, (res.statistic, p_sm)
    return {"statistic": statistic, "dof": dof, "p": f(stats.chi2.sf(statistic, dof)),
            "strata": len(kept)}


def case(label, strata, confidence=0.95, large=False):
    used = [s for s in strata if s[1] > 0 and s[3] > 0]
    for k1, n1, k0, n0 in strata:
        assert 0 <= k1 <= n1 and 0 <= k0 <= n0
    notes = {"label": label, "large": large, "library_off": {}}
    out = {
        "label": label, "strata": [list(s) for s in strata], "confidence": confidence,
        "used": len(used), "left_out": len(strata) - len(used),
        "cmh": cmh_case(used, notes), "odds_ratio": odds_ratio_case(used, confidence, notes),
        "diff": diff_case(used, confidence, notes), "homogeneity": homogeneity_case(used, notes),
    }
    if notes["library_off"]:
        out["library_off"] = notes["library_off"]
    return out


def random_strata(rng, count, n_max, rate_low=0.02, rate_high=0.98, empty_side=0.0,
                  shift_sd=0.05):
    out = []
    for _ in range(count):
        n1, n0 = (int(x) for x in rng.integers(1, n_max + 1, 2))
        if rng.random() < empty_side:
            if rng.random() < 0.5:
                n1 = 0
            else:
                n0 = 0
        base = rng.uniform(rate_low, rate_high)
        shift = rng.normal(0, shift_sd)
        p1 = min(max(base + shift, 0.0), 1.0)
        out.append((int(rng.binomial(n1, p1)), n1, int(rng.binomial(n0, base)), n0))
    return out


def main():
    rng = np.random.default_rng(20261229)
    cases = [
        # The Simpson's-paradox case the end-to-end test reuses: the arm is 22.5 points
        # better in both tasks and 24.5 points worse pooled, because most of its units
        # fall on the hard task.
        case("simpson_two_tasks", [(36, 40, 280, 400), (140, 400, 4, 40)]),
        # One stratum: CMH = Pearson's chi-square times (N - 1)/N; the MH difference is
        # the plain difference with statsmodels' Wald interval.
        case("single_stratum", [(44, 240, 22, 240)]),
        case("single_stratum_small", [(3, 10, 7, 12)], 0.9),
        case("single_stratum_no_baseline_events", [(5, 9, 0, 9)]),
        case("single_stratum_all_events", [(6, 6, 2, 7)], 0.99),
        case("single_stratum_clipped_interval", [(4, 4, 0, 3)]),
        # Strata with n = 0 on one side are left out and counted.
        case("empty_side_left_out", [(3, 10, 1, 10), (0, 0, 4, 9), (5, 7, 0, 0),
                                     (2, 9, 6, 11)]),
        case("only_empty_sides", [(0, 0, 4, 9), (5, 7, 0, 0)]),
        # Zero margins: no CMH, no odds ratio, no homogeneity; the difference is 0.
        case("zero_margins_everywhere", [(0, 10, 0, 12), (3, 3, 4, 4), (0, 1, 0, 1)]),
        case("some_zero_margins", [(0, 10, 0, 12), (7, 20, 3, 18), (5, 5, 9, 9),
                                   (11, 30, 12, 25)]),
        case("one_table_without_zero_margin", [(0, 10, 0, 12), (7, 20, 3, 18)]),
        case("arm_without_events", [(0, 10, 1, 10), (0, 5, 3, 5)]),
        case("pooled_odds_ratio_exactly_one", [(2, 3, 1, 3), (1, 3, 2, 3)]),
        case("identical_arms", [(5, 20, 5, 20), (12, 30, 12, 30), (1, 4, 1, 4)]),
        case("heterogeneous", [(30, 40, 10, 40), (10, 40, 30, 40), (20, 40, 20, 40)]),
        case("tiny_p", [(500, 1000, 200, 1000), (450, 1000, 160, 1000)]),
        case("published_like", [(15, 80, 7, 80), (17, 80, 8, 80), (12, 80, 7, 80)]),
        case("many_strata", random_strata(rng, 40, 60, empty_side=0.1)),
        case("many_small_strata", random_strata(rng, 200, 6), 0.9),
        # Large counts with equal rates in both arms, so that the statistics are of
        # ordinary size and the excess events cancel across strata.
        case("large_counts", random_strata(rng, 6, 10**9, shift_sd=0.0), large=True),
        case("very_large_counts", [(123456789012 + 1234, 987654321098, 109567901373 - 777,
                                    876543210987),
                                   (5 * 10**11 - 999, 10**12, 4 * 10**11 + 10**6,
                                    8 * 10**11)], large=True),
    ]
    # Sparse events: the Mantel-Fleiss criterion is below 5 and the p-values are the exact
    # conditional test's. The default run's entry_removal first: one event in 40
    # sessions against none in 396, all in one of four tasks (chi-square p 0.0017, exact
    # p 0.092).
    cases += [
        case("sparse_one_event_in_one_task", [(1, 10, 0, 99), (0, 10, 0, 99), (0, 10, 0, 99),
                                               (0, 10, 0, 99)]),
        case("sparse_three_tasks", [(2, 30, 0, 25), (1, 20, 1, 40), (0, 15, 0, 10)]),
        case("sparse_arm_lower", [(0, 50, 3, 45), (0, 40, 2, 60), (1, 30, 1, 30)]),
        case("sparse_significant", [(4, 12, 0, 15), (3, 10, 0, 9)]),
        case("sparse_near_upper_bound", [(29, 30, 25, 25), (20, 20, 39, 40)]),
        case("sparse_large_tasks", [(1, 100000, 0, 120000), (2, 90000, 1, 80000),
                                    (0, 5000, 1, 7000)], large=True),
        case("sparse_many_tasks", random_strata(rng, 12, 40, rate_low=0.0, rate_high=0.03,
                                                shift_sd=0.01)),
        case("sparse_one_stratum", [(3, 25, 0, 30)]),
    ]
    for i in range(6):
        cases.append(case(f"random_{i}", random_strata(rng, int(rng.integers(2, 9)),
                                                       int(rng.integers(5, 300))),
                          [0.95, 0.9, 0.99][i % 3]))
    assert cases[0]["diff"]["estimate"] > 0
    assert sum(s[0] for s in cases[0]["strata"]) / sum(s[1] for s in cases[0]["strata"]) \
        < sum(s[2] for s in cases[0]["strata"]) / sum(s[3] for s in cases[0]["strata"])
    assert any(c["diff"] and c["diff"]["clipped"] for c in cases)
    sparse = [c for c in cases if c["label"].startswith("sparse_")]
    assert all(c["cmh"] and c["cmh"]["exact"] for c in sparse), [c["label"] for c in sparse]
    assert any(c["cmh"] and not c["cmh"]["exact"] for c in cases)
    v = {
        "meta": {
            "generator": "scripts/gen_stratified_vectors.py",
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "statsmodels": statsmodels.__version__,
        },
        "stratified": cases,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w") as fh:
        json.dump(v, fh, indent=1, allow_nan=False)
        fh.write("\n")
    print(f"wrote {OUT} with {len(cases)} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
