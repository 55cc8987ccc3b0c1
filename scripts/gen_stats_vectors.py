#!/usr/bin/env python3
"""Generate reference vectors for the Rust `stats` module.

Writes tests/data/stats_vectors.json (relative to the crate root), grouped by
function. Every expected value comes straight from scipy / statsmodels /
numpy; floats are written by `json` (which uses `repr`, i.e. shortest
round-trip representation), so no precision is lost.

Usage:  python3 scripts/gen_stats_vectors.py
Needs:  pip install scipy statsmodels numpy
"""

import json
import math
import platform
import sys
import warnings
from pathlib import Path

import numpy as np
import scipy
import statsmodels
from scipy import optimize, stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import NormalIndPower
from statsmodels.stats.proportion import (
    confint_proportions_2indep,
    proportion_confint,
    proportion_effectsize,
)

OUT = Path(__file__).resolve().parent.parent / "tests" / "data" / "stats_vectors.json"

# Published loopbench table: 240 sessions per arm.
ARM_N = 240
PUBLISHED = {
    "desc_edits": {"markdown": 31, "yaml": 19, "json": 4},
    "test_removals": {"markdown": 18, "yaml": 11, "json": 2},
    "premature": {"markdown": 44, "yaml": 37, "json": 22},
}
ALTS = ["two-sided", "greater", "less"]


def f(x):
    """Plain Python float (numpy scalars are not JSON serialisable)."""
    return float(x)


def wilson_case(k, n, conf, label=None):
    low, high = proportion_confint(k, n, alpha=1 - conf, method="wilson")
    case = {"k": k, "n": n, "confidence": conf, "low": f(low), "high": f(high)}
    if label:
        case["label"] = label
    return case


def cp_case(k, n, conf):
    low, high = proportion_confint(k, n, alpha=1 - conf, method="beta")
    return {"k": k, "n": n, "confidence": conf, "low": f(low), "high": f(high)}


def newcombe_case(k1, n1, k2, n2, conf, label=None):
    low, high = confint_proportions_2indep(
        k1, n1, k2, n2, method="newcomb", compare="diff", alpha=1 - conf
    )
    case = {
        "k1": k1, "n1": n1, "k2": k2, "n2": n2, "confidence": conf,
        "low": f(low), "high": f(high),
    }
    if label:
        case["label"] = label
    return case


def fisher_cases(table, label=None):
    out = []
    for alt in ALTS:
        p = stats.fisher_exact(table, alternative=alt).pvalue
        case = {"table": table, "alternative": alt, "p": f(p)}
        if label:
            case["label"] = label
        out.append(case)
    return out


def chi2_case(k, n, label=None):
    table = np.array([k, [ni - ki for ki, ni in zip(k, n)]])
    res = stats.chi2_contingency(table, correction=False)
    case = {"k": k, "n": n, "statistic": f(res.statistic), "dof": int(res.dof),
            "p": f(res.pvalue)}
    if label:
        case["label"] = label
    return case


def holm_case(p, label=None):
    adj = multipletests(p, method="holm")[1]
    case = {"p": [f(x) for x in p], "adjusted": [f(x) for x in adj]}
    if label:
        case["label"] = label
    return case


def welch_case(a, b, conf):
    res = stats.ttest_ind(a, b, equal_var=False)
    ci = res.confidence_interval(confidence_level=conf)
    return {
        "a": a, "b": b, "confidence": conf,
        "diff": f(np.mean(a) - np.mean(b)), "low": f(ci.low), "high": f(ci.high),
        "t": f(res.statistic), "df": f(res.df), "p": f(res.pvalue),
    }


def mwu_case(a, b):
    res = stats.mannwhitneyu(a, b)
    ties = len(set(a) | set(b)) < len(a) + len(b)
    exact = (len(a) <= 8 or len(b) <= 8) and not ties
    return {"a": a, "b": b, "u": f(res.statistic), "p": f(res.pvalue),
            "branch": "exact" if exact else "asymptotic"}


def describe_case(x):
    arr = np.asarray(x, dtype=float)
    return {
        "x": x, "n": len(x), "mean": f(np.mean(arr)),
        "sd": f(np.std(arr, ddof=1)) if len(x) > 1 else None,
        "median": f(np.median(arr)),
        "p10": f(np.percentile(arr, 10)), "p90": f(np.percentile(arr, 90)),
    }


def power_case(p1, p2, alpha, power):
    h = proportion_effectsize(p1, p2)
    analysis = NormalIndPower()
    raw = analysis.solve_power(effect_size=h, alpha=alpha, power=power, ratio=1,
                               alternative="two-sided")

    # The same power function, solved to full double precision: solve_power's
    # brentq_expanding uses xtol=1e-5, so its float answer is only good to ~1e-5.
    def g(n):
        return analysis.power(h, n, alpha, ratio=1, alternative="two-sided") - power

    hi = 2.0
    while g(hi) < 0:
        hi *= 2
    precise = optimize.brentq(g, 1e-9, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps,
                              maxiter=500)
    assert math.ceil(raw) == math.ceil(precise), (p1, p2, raw, precise)
    return {
        "p1": p1, "p2": p2, "alpha": alpha, "power": power, "effect_size": f(h),
        "nobs_solve_power": f(raw), "nobs_precise": f(precise),
        "sessions_per_arm": math.ceil(raw),
    }


def power_at_case(p1, p2, n, alpha):
    h = proportion_effectsize(p1, p2)
    pw = NormalIndPower().power(h, n, alpha, ratio=1, alternative="two-sided")
    return {"p1": p1, "p2": p2, "n_per_arm": n, "alpha": alpha, "power": f(pw)}


def main():
    # scipy warns that a constant sample (the [5.0, 5.0] Welch case) loses precision
    # in its variance; the variance is exactly 0 there, which is what we test.
    warnings.filterwarnings("ignore", message="Precision loss occurred in moment")
    rng = np.random.default_rng(20240611)
    v = {
        "meta": {
            "generator": "scripts/gen_stats_vectors.py",
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "statsmodels": statsmodels.__version__,
            "published_table_n_per_arm": ARM_N,
            "published_table": PUBLISHED,
        }
    }

    # ---- single proportions -------------------------------------------------
    generic = [(0, 1), (1, 1), (0, 10), (10, 10), (3, 10), (1, 2), (0, 240), (240, 240),
               (22, 240), (44, 240), (0, 10000), (10000, 10000), (1, 10000),
               (9999, 10000), (183, 10000), (5000, 10000), (1, 3)]
    v["wilson"] = []
    v["clopper_pearson"] = []
    for conf in (0.95, 0.999, 0.8):
        for k, n in generic:
            v["wilson"].append(wilson_case(k, n, conf))
            v["clopper_pearson"].append(cp_case(k, n, conf))
    for metric, arms in PUBLISHED.items():
        for arm, k in arms.items():
            for conf in (0.95, 0.999):
                v["wilson"].append(wilson_case(k, ARM_N, conf, f"{metric} {arm}"))

    # ---- difference of proportions -------------------------------------------
    v["newcombe_diff"] = []
    for metric, arms in PUBLISHED.items():
        for arm in ("markdown", "yaml"):
            for conf in (0.95, 0.999):
                v["newcombe_diff"].append(newcombe_case(
                    arms[arm], ARM_N, arms["json"], ARM_N, conf, f"{metric} {arm} - json"))
    for k1, n1, k2, n2 in [(0, 10, 0, 10), (10, 10, 0, 10), (0, 10, 10, 10), (1, 1, 0, 1),
                           (5, 20, 9, 31), (0, 240, 22, 240), (183, 10000, 92, 10000),
                           (0, 10000, 10000, 10000), (1, 3, 2, 7)]:
        v["newcombe_diff"].append(newcombe_case(k1, n1, k2, n2, 0.95))

    # ---- Fisher exact ------------------------------------------------------
    v["fisher_exact"] = []
    for metric, arms in PUBLISHED.items():
        for arm in ("markdown", "yaml"):
            table = [[arms[arm], ARM_N - arms[arm]], [arms["json"], ARM_N - arms["json"]]]
            v["fisher_exact"] += fisher_cases(table, f"{metric} {arm} vs json")
    generic_tables = [
        # mirror ties: equal row sizes (row swap) and/or equal column totals
        [[3, 7], [7, 3]], [[7, 3], [3, 7]], [[2, 8], [5, 5]], [[1, 9], [9, 1]],
        [[0, 10], [10, 0]], [[10, 10], [10, 10]], [[5, 5], [5, 5]], [[2, 5], [6, 3]],
        [[4, 236], [31, 209]], [[22, 218], [22, 218]], [[21, 219], [23, 217]],
        [[0, 5], [0, 7]], [[0, 0], [3, 4]], [[1, 0], [0, 1]], [[1, 0], [0, 0]],
        [[3, 5], [4, 50]], [[61, 118], [2, 1]], [[172, 46], [90, 127]],
        # several orders of magnitude of p, 240 per arm
        [[20, 220], [4, 236]], [[40, 200], [4, 236]], [[46, 194], [4, 236]],
        [[50, 190], [4, 236]], [[54, 186], [4, 236]], [[60, 180], [4, 236]],
        [[100, 140], [4, 236]], [[150, 90], [4, 236]], [[200, 40], [4, 236]],
        # large arms
        [[520, 480], [480, 520]], [[550, 450], [450, 550]], [[600, 400], [400, 600]],
        [[700, 300], [300, 700]], [[800, 200], [200, 800]], [[850, 150], [150, 850]],
        [[5100, 4900], [4900, 5100]], [[5200, 4800], [4800, 5200]],
        [[130, 9870], [80, 9920]], [[0, 10000], [5, 9995]], [[183, 9817], [92, 9908]],
        [[5000, 5000], [5000, 5000]], [[4990, 5010], [5010, 4990]],
        # equal column totals with unequal rows (mirror x <-> r0 - x is not a cell
        # permutation of ln-factorials), a 0! = 1! tie, and 50,000 per arm
        [[2100, 1900], [2900, 3100]], [[1950, 2050], [3050, 2950]],
        [[0, 2], [3, 5]], [[1, 1], [2, 6]], [[15200, 34800], [14800, 35200]],
    ]
    for t in generic_tables:
        v["fisher_exact"] += fisher_cases(t)
    # subnormal p-value (only ~3 significant digits exist at this magnitude)
    v["fisher_exact_subnormal"] = fisher_cases([[900, 100], [100, 900]])

    # ---- chi-square 2xK ------------------------------------------------------
    v["chi2_2xk"] = []
    for metric, arms in PUBLISHED.items():
        k = [arms["markdown"], arms["yaml"], arms["json"]]
        v["chi2_2xk"].append(chi2_case(k, [ARM_N] * 3, metric))
    for k, n in [([1, 0], [1, 1]), ([5, 9], [20, 31]), ([0, 3, 7], [10, 10, 10]),
                 ([183, 92], [10000, 10000]), ([100, 4], [240, 240]),
                 ([900, 100, 500], [1000, 1000, 1000]), ([2, 3, 4, 5], [10, 12, 14, 16])]:
        v["chi2_2xk"].append(chi2_case(k, n))

    # ---- Holm -----------------------------------------------------------------
    v["holm"] = []
    for metric in PUBLISHED:
        for alt in ("two-sided", "greater"):
            ps = [c["p"] for c in v["fisher_exact"]
                  if c.get("label", "").startswith(metric) and c["alternative"] == alt]
            assert len(ps) == 2
            v["holm"].append(holm_case(ps, f"{metric} fisher {alt}"))
    for ps in [[0.01, 0.04, 0.03, 0.005], [0.5, 0.5, 0.5], [0.2, 0.9], [1e-12, 0.3, 0.3],
               [0.04], [0.6, 0.01, 0.02, 0.7, 0.0]]:
        v["holm"].append(holm_case(ps))

    # ---- Welch ----------------------------------------------------------------
    def sample(n, loc, scale, decimals=3):
        return [round(float(x), decimals) for x in rng.normal(loc, scale, n)]

    small_a = [12.1, 14.3, 11.8, 15.0, 13.2]
    small_b = [10.4, 9.9, 11.7, 10.1]
    tied_a = [1.0, 2.0, 2.0, 3.0, 4.0, 4.0]
    tied_b = [2.0, 3.0, 3.0, 5.0, 6.0, 6.0, 7.0]
    med_a, med_b = sample(40, 100.0, 15.0), sample(55, 92.0, 25.0)
    big_a, big_b = sample(300, 3.5, 1.0), sample(250, 3.4, 1.2)
    v["welch"] = []
    for a, b in [(small_a, small_b), (tied_a, tied_b), (med_a, med_b), (big_a, big_b),
                 ([1.0, 2.0], [3.0, 5.0, 4.0]), ([0.0, 0.0, 1.0], [5.0, 5.0])]:
        for conf in (0.95, 0.99):
            v["welch"].append(welch_case(a, b, conf))

    # ---- Mann-Whitney ---------------------------------------------------------
    v["mann_whitney"] = [
        mwu_case(small_a, small_b),                       # exact (both < 8)
        mwu_case([19, 22, 16, 29, 24], [20, 11, 17, 12]),
        mwu_case([1.5, 2.5, 3.5], [0.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5]),  # exact, 3 vs 8
        mwu_case([3.3], [1.1, 2.2, 4.4]),                 # exact, n1 = 1
        mwu_case(sample(8, 0, 1, 6), sample(12, 0.8, 1, 6)),  # exact: one side <= 8
        mwu_case(sample(5, 0, 1), sample(300, 0.5, 1, 6)),  # exact, 5 vs 300
        mwu_case(tied_a, tied_b),                         # ties -> asymptotic
        mwu_case([1, 2, 3], [1, 2, 3]),                   # ties -> asymptotic
        mwu_case([4, 4, 4], [4, 4]),                      # all tied: s = 0
        mwu_case(sample(9, 0, 1), sample(9, 1, 1)),       # both > 8 -> asymptotic
        mwu_case(med_a, med_b),
        mwu_case([int(x) for x in rng.integers(0, 6, 60)],
                 [int(x) for x in rng.integers(1, 7, 45)]),  # heavy ties
        mwu_case(big_a, big_b),
    ]

    # ---- describe / percentile ----------------------------------------------
    v["describe"] = [describe_case(x) for x in [
        [4.2], [1.0, 2.0], [3.0, 1.0, 2.0], [5.5, 1.25, 9.0, 2.0, 2.0, 7.75],
        small_a, tied_b, med_a, big_b, [0.1 * i for i in range(11)],
    ]]
    v["percentile"] = []
    for x in ([7.0], [1.0, 2.0], med_a, [0.1 * i for i in range(11)]):
        for q in (0.0, 2.5, 10.0, 25.0, 50.0, 90.0, 97.5, 100.0, 33.3):
            v["percentile"].append({"x": x, "q": q, "value": f(np.percentile(x, q))})

    # ---- power ---------------------------------------------------------------
    pairs = [(0.183, 0.092), (0.092, 0.183), (0.129, 0.017), (0.154, 0.092), (0.5, 0.4),
             (0.05, 0.01), (0.3, 0.25), (0.9, 0.99), (0.0, 0.1), (1.0, 0.5)]
    v["proportion_effectsize"] = [
        {"p1": a, "p2": b, "h": f(proportion_effectsize(a, b))} for a, b in pairs]
    v["power"] = []
    for a, b in pairs:
        for alpha, pw in ((0.05, 0.8), (0.05, 0.9), (0.01, 0.8)):
            v["power"].append(power_case(a, b, alpha, pw))
    v["power_at"] = []
    for a, b in pairs[:5]:
        for n in (10, 100, 240, 1000, 12.5):
            v["power_at"].append(power_at_case(a, b, n, 0.05))

    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w") as fh:
        json.dump(v, fh, indent=1, allow_nan=False)
        fh.write("\n")
    counts = {key: len(val) for key, val in v.items() if isinstance(val, list)}
    print(f"wrote {OUT} with {sum(counts.values())} cases: {counts}", file=sys.stderr)


if __name__ == "__main__":
    main()
