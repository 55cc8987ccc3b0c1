//! Checks every function in `stats` against scipy / statsmodels / numpy values
//! stored in tests/data/stats_vectors.json (made by scripts/gen_stats_vectors.py).
//!
//! Tolerance: 1e-9 relative. An absolute floor of 1e-15 applies only where the
//! reference value is exactly 0 (e.g. a clipped Wilson bound at k = 0), since
//! no relative error is defined there. Run with `--nocapture` to see the
//! measured maximum relative error per function.

use std::sync::OnceLock;

use loopbench::stats::*;
use serde_json::Value;

const REL_TOL: f64 = 1e-9;
const ZERO_ABS_TOL: f64 = 1e-15;

fn vectors() -> &'static Value {
    static V: OnceLock<Value> = OnceLock::new();
    V.get_or_init(|| {
        serde_json::from_str(include_str!("data/stats_vectors.json")).expect("valid JSON")
    })
}

fn cases(group: &str) -> &'static [Value] {
    vectors()[group]
        .as_array()
        .unwrap_or_else(|| panic!("no group {group}"))
}

fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

fn u(v: &Value, key: &str) -> u64 {
    v[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn counts(v: &Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap())
        .collect()
}

/// Collects every mismatch of one function and its largest relative error.
struct Checker {
    name: &'static str,
    max_rel: f64,
    checked: usize,
    failures: Vec<String>,
}

impl Checker {
    fn new(name: &'static str) -> Self {
        Checker {
            name,
            max_rel: 0.0,
            checked: 0,
            failures: Vec::new(),
        }
    }

    fn close(&mut self, what: &str, case: &Value, got: f64, want: f64) {
        self.checked += 1;
        let ok = if want == 0.0 {
            got.abs() <= ZERO_ABS_TOL
        } else {
            let rel = ((got - want) / want).abs();
            self.max_rel = self.max_rel.max(rel);
            rel <= REL_TOL
        };
        if !ok {
            self.failures
                .push(format!("{what}: got {got:e}, want {want:e} in {case}"));
        }
    }

    fn finish(self) {
        println!(
            "{}: {} values, max relative error {:.3e}",
            self.name, self.checked, self.max_rel
        );
        assert!(
            self.failures.is_empty(),
            "{}:\n{}",
            self.name,
            self.failures.join("\n")
        );
    }
}

#[test]
fn wilson_matches_statsmodels_proportion_confint_wilson() {
    let mut c = Checker::new("wilson");
    for case in cases("wilson") {
        let ci = wilson(u(case, "k"), u(case, "n"), f(case, "confidence")).unwrap();
        c.close("low", case, ci.low, f(case, "low"));
        c.close("high", case, ci.high, f(case, "high"));
    }
    c.finish();
}

#[test]
fn clopper_pearson_matches_statsmodels_proportion_confint_beta() {
    let mut c = Checker::new("clopper_pearson");
    for case in cases("clopper_pearson") {
        let ci = clopper_pearson(u(case, "k"), u(case, "n"), f(case, "confidence")).unwrap();
        c.close("low", case, ci.low, f(case, "low"));
        c.close("high", case, ci.high, f(case, "high"));
    }
    c.finish();
}

#[test]
fn newcombe_diff_matches_statsmodels_confint_proportions_2indep_newcomb() {
    let mut c = Checker::new("newcombe_diff");
    for case in cases("newcombe_diff") {
        let (k1, n1, k2, n2) = (u(case, "k1"), u(case, "n1"), u(case, "k2"), u(case, "n2"));
        let ci = newcombe_diff(k1, n1, k2, n2, f(case, "confidence")).unwrap();
        c.close("low", case, ci.low, f(case, "low"));
        c.close("high", case, ci.high, f(case, "high"));
    }
    c.finish();
}

fn table(case: &Value) -> [[u64; 2]; 2] {
    let t = case["table"].as_array().unwrap();
    let row = |i: usize| {
        let r = counts(&t[i]);
        [r[0], r[1]]
    };
    [row(0), row(1)]
}

fn alternative(case: &Value) -> Alternative {
    match case["alternative"].as_str().unwrap() {
        "two-sided" => Alternative::TwoSided,
        "greater" => Alternative::Greater,
        "less" => Alternative::Less,
        other => panic!("unknown alternative {other}"),
    }
}

#[test]
fn fisher_exact_matches_scipy_fisher_exact_for_every_alternative() {
    let mut c = Checker::new("fisher_exact");
    for case in cases("fisher_exact") {
        let p = fisher_exact(table(case), alternative(case)).unwrap();
        c.close("p", case, p, f(case, "p"));
    }
    c.finish();
}

#[test]
fn fisher_exact_subnormal_p_values_match_scipy_to_the_precision_f64_holds() {
    // Below f64::MIN_POSITIVE (2.2e-308) a double keeps only a few significant
    // digits (4e-321 is ~815 units of 4.9e-324), so 1e-9 relative is not
    // representable there. These cases are checked to 1% relative instead.
    for case in cases("fisher_exact_subnormal") {
        let got = fisher_exact(table(case), alternative(case)).unwrap();
        let want = f(case, "p");
        let ok = if want < f64::MIN_POSITIVE {
            (got - want).abs() <= 0.01 * want
        } else {
            ((got - want) / want).abs() <= REL_TOL
        };
        println!("fisher_exact subnormal: got {got:e}, want {want:e}");
        assert!(ok, "got {got:e}, want {want:e} in {case}");
    }
}

#[test]
fn chi2_2xk_matches_scipy_chi2_contingency_without_correction() {
    let mut c = Checker::new("chi2_2xk");
    for case in cases("chi2_2xk") {
        let r = chi2_2xk(&counts(&case["k"]), &counts(&case["n"])).unwrap();
        assert_eq!(r.dof, u(case, "dof"), "{case}");
        c.close("statistic", case, r.statistic, f(case, "statistic"));
        c.close("p", case, r.p, f(case, "p"));
    }
    c.finish();
}

#[test]
fn holm_matches_statsmodels_multipletests_holm() {
    let mut c = Checker::new("holm");
    for case in cases("holm") {
        let got = holm(&floats(&case["p"])).unwrap();
        let want = floats(&case["adjusted"]);
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            c.close("adjusted", case, *g, *w);
        }
    }
    c.finish();
}

#[test]
fn welch_matches_scipy_ttest_ind_unequal_var_and_its_confidence_interval() {
    let mut c = Checker::new("welch");
    for case in cases("welch") {
        let w = welch(
            &floats(&case["a"]),
            &floats(&case["b"]),
            f(case, "confidence"),
        )
        .unwrap();
        for (name, got) in [
            ("diff", w.diff),
            ("low", w.low),
            ("high", w.high),
            ("t", w.t),
            ("df", w.df),
            ("p", w.p),
        ] {
            c.close(name, case, got, f(case, name));
        }
    }
    c.finish();
}

#[test]
fn mann_whitney_matches_scipy_mannwhitneyu_with_method_auto() {
    let mut c = Checker::new("mann_whitney");
    for case in cases("mann_whitney") {
        let r = mann_whitney(&floats(&case["a"]), &floats(&case["b"])).unwrap();
        assert_eq!(r.exact, case["branch"] == "exact", "{case}");
        c.close("u", case, r.u, f(case, "u"));
        c.close("p", case, r.p, f(case, "p"));
    }
    c.finish();
}

#[test]
fn describe_matches_numpy_mean_std_median_and_percentiles() {
    let mut c = Checker::new("describe");
    for case in cases("describe") {
        let d = describe(&floats(&case["x"])).unwrap();
        assert_eq!(d.n as u64, u(case, "n"));
        match (d.sd, case["sd"].as_f64()) {
            (Some(got), Some(want)) => c.close("sd", case, got, want),
            (None, None) => {}
            other => panic!("sd mismatch {other:?} in {case}"),
        }
        for (name, got) in [
            ("mean", d.mean),
            ("median", d.median),
            ("p10", d.p10),
            ("p90", d.p90),
        ] {
            c.close(name, case, got, f(case, name));
        }
    }
    c.finish();
}

#[test]
fn percentile_matches_numpy_percentile_linear() {
    let mut c = Checker::new("percentile");
    for case in cases("percentile") {
        let got = percentile(&floats(&case["x"]), f(case, "q")).unwrap();
        c.close("value", case, got, f(case, "value"));
    }
    c.finish();
}

#[test]
fn proportion_effectsize_matches_statsmodels() {
    let mut c = Checker::new("proportion_effectsize");
    for case in cases("proportion_effectsize") {
        let h = proportion_effectsize(f(case, "p1"), f(case, "p2")).unwrap();
        c.close("h", case, h, f(case, "h"));
    }
    c.finish();
}

#[test]
fn sessions_per_arm_is_the_ceiling_of_statsmodels_solve_power() {
    for case in cases("power") {
        let (p1, p2, alpha, power) = (
            f(case, "p1"),
            f(case, "p2"),
            f(case, "alpha"),
            f(case, "power"),
        );
        assert_eq!(
            sessions_per_arm(p1, p2, alpha, power).unwrap(),
            u(case, "sessions_per_arm"),
            "{case}"
        );
    }
}

#[test]
fn required_n_per_arm_matches_the_precise_root_of_statsmodels_power() {
    // "nobs_precise" is brentq on statsmodels' own power function to machine
    // precision; solve_power itself stops at xtol = 1e-5 (printed for the record).
    let mut c = Checker::new("required_n_per_arm");
    let mut vs_solve_power = 0.0_f64;
    for case in cases("power") {
        let (p1, p2, alpha, power) = (
            f(case, "p1"),
            f(case, "p2"),
            f(case, "alpha"),
            f(case, "power"),
        );
        let n = required_n_per_arm(p1, p2, alpha, power).unwrap();
        c.close("nobs", case, n, f(case, "nobs_precise"));
        let raw = f(case, "nobs_solve_power");
        vs_solve_power = vs_solve_power.max(((n - raw) / raw).abs());
    }
    println!(
        "required_n_per_arm vs solve_power's xtol=1e-5 float: max relative {vs_solve_power:.3e}"
    );
    c.finish();
}

#[test]
fn power_at_matches_statsmodels_normal_ind_power() {
    let mut c = Checker::new("power_at");
    for case in cases("power_at") {
        let (p1, p2, n, alpha) = (
            f(case, "p1"),
            f(case, "p2"),
            f(case, "n_per_arm"),
            f(case, "alpha"),
        );
        c.close(
            "power",
            case,
            power_at(p1, p2, n, alpha).unwrap(),
            f(case, "power"),
        );
    }
    c.finish();
}

#[test]
fn reference_vectors_cover_the_required_edge_cases() {
    let meta = &vectors()["meta"];
    for lib in ["scipy", "statsmodels", "numpy"] {
        assert!(meta[lib].is_string(), "version of {lib} recorded");
    }
    let wilson = cases("wilson");
    let has = |pred: &dyn Fn(u64, u64) -> bool| wilson.iter().any(|c| pred(u(c, "k"), u(c, "n")));
    assert!(
        has(&|k, _| k == 0)
            && has(&|k, n| k == n)
            && has(&|_, n| n == 1)
            && has(&|_, n| n == 10_000)
    );
    let fisher_p: Vec<f64> = cases("fisher_exact").iter().map(|c| f(c, "p")).collect();
    let bands = [
        (1e-6, 1e-3),
        (1e-9, 1e-6),
        (1e-12, 1e-9),
        (1e-20, 1e-12),
        (1e-50, 1e-20),
        (1e-100, 1e-50),
        (1e-300, 1e-100),
    ];
    for (lo, hi) in bands {
        assert!(
            fisher_p.iter().any(|&p| lo <= p && p < hi),
            "a Fisher p-value in [{lo:e}, {hi:e})"
        );
    }
    for metric in ["desc_edits", "test_removals", "premature"] {
        for arm in ["markdown", "yaml"] {
            let label = format!("{metric} {arm} vs json");
            let n = cases("fisher_exact")
                .iter()
                .filter(|c| c["label"] == label.as_str())
                .count();
            assert_eq!(n, 3, "{label}");
        }
        assert!(cases("chi2_2xk").iter().any(|c| c["label"] == metric));
    }
    let branches: Vec<&str> = cases("mann_whitney")
        .iter()
        .map(|c| c["branch"].as_str().unwrap())
        .collect();
    assert!(branches.contains(&"exact") && branches.contains(&"asymptotic"));
}

/// The stratified vectors: tests/data/stratified_vectors.json, made by
/// scripts/gen_stratified_vectors.py (statsmodels for the CMH test, the Mantel–Haenszel
/// odds ratio and Breslow–Day; R epiR's Greenland–Robins risk difference re-implemented in
/// numpy; every value checked there against exact rational arithmetic).
fn stratified_cases() -> &'static [Value] {
    static V: OnceLock<Value> = OnceLock::new();
    V.get_or_init(|| {
        serde_json::from_str(include_str!("data/stratified_vectors.json")).expect("valid JSON")
    })["stratified"]
        .as_array()
        .expect("a stratified array")
}

fn strata_of(case: &Value) -> Vec<Stratum> {
    case["strata"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let c = counts(s);
            Stratum::new(c[0], c[1], c[2], c[3]).unwrap()
        })
        .collect()
}

/// Both present or both absent; the values of a present one go to `check`.
fn both<T: std::fmt::Debug>(
    case: &Value,
    key: &str,
    got: Option<T>,
    check: impl FnOnce(T, &Value),
) {
    match (got, case[key].is_null()) {
        (Some(g), false) => check(g, &case[key]),
        (None, true) => {}
        (g, _) => panic!("{key}: got {g:?}, want {} in {}", case[key], case["label"]),
    }
}

#[test]
fn stratified_statistics_match_statsmodels_epir_and_exact_arithmetic() {
    let mut c = Checker::new("stratified");
    let checker = std::cell::RefCell::new(&mut c);
    for case in stratified_cases() {
        let s = stratified(&strata_of(case), f(case, "confidence")).unwrap();
        assert_eq!(s.used as u64, u(case, "used"), "{}", case["label"]);
        assert_eq!(s.left_out as u64, u(case, "left_out"), "{}", case["label"]);
        let close = |what: &str, got: f64, want: f64| {
            checker.borrow_mut().close(what, &case["label"], got, want)
        };
        both(case, "cmh", s.cmh, |g, w| {
            assert_eq!(g.exact, w["exact"].as_bool().unwrap(), "{}", case["label"]);
            let criterion = mantel_fleiss(&strata_of(case)).unwrap();
            close("mantel-fleiss", criterion, f(w, "mantel_fleiss"));
            close("cmh statistic", g.statistic, f(w, "statistic"));
            close("cmh z", g.z, f(w, "z"));
            close("cmh p", g.p, f(w, "p"));
            close(
                "cmh p greater",
                g.p_value(Alternative::Greater),
                f(w, "p_greater"),
            );
            close("cmh p less", g.p_value(Alternative::Less), f(w, "p_less"));
        });
        both(case, "odds_ratio", s.odds_ratio, |g, w| {
            close("odds ratio", g.estimate, f(w, "estimate"));
            close("odds ratio se_log", g.se_log, f(w, "se_log"));
            close("odds ratio low", g.ci.low, f(w, "low"));
            close("odds ratio high", g.ci.high, f(w, "high"));
        });
        both(case, "diff", s.diff, |g, w| {
            close("diff", g.estimate, f(w, "estimate"));
            close("diff se", g.se, f(w, "se"));
            close("diff low", g.ci.low, f(w, "low"));
            close("diff high", g.ci.high, f(w, "high"));
        });
        both(case, "homogeneity", s.homogeneity, |g, w| {
            assert_eq!(g.dof, u(w, "dof"), "{}", case["label"]);
            assert_eq!(g.strata as u64, u(w, "strata"), "{}", case["label"]);
            close("breslow-day statistic", g.statistic, f(w, "statistic"));
            close("breslow-day p", g.p, f(w, "p"));
        });
    }
    c.finish();
}

#[test]
fn stratified_vectors_cover_the_required_edge_cases() {
    let case = |label: &str| {
        stratified_cases()
            .iter()
            .find(|c| c["label"] == label)
            .unwrap_or_else(|| panic!("no case {label}"))
    };
    // Simpson's paradox: pooled and Mantel–Haenszel differences of opposite signs.
    let simpson = case("simpson_two_tasks");
    let totals = counts(&simpson["strata"][0])
        .iter()
        .zip(counts(&simpson["strata"][1]))
        .map(|(a, b)| a + b)
        .collect::<Vec<_>>();
    let pooled = totals[0] as f64 / totals[1] as f64 - totals[2] as f64 / totals[3] as f64;
    assert!(pooled < 0.0 && f(&simpson["diff"], "estimate") > 0.0);
    // n = 0 on one side, left out and counted; nothing left at all.
    assert!(u(case("empty_side_left_out"), "left_out") > 0);
    assert!(case("only_empty_sides")["diff"].is_null());
    // Zero margins everywhere: no p, no odds ratio, no homogeneity, but a difference.
    let zeros = case("zero_margins_everywhere");
    assert!(zeros["cmh"].is_null() && zeros["homogeneity"].is_null());
    assert!(zeros["odds_ratio"].is_null() && !zeros["diff"].is_null());
    // Sparse events: the exact conditional test, over one stratum and over several; the
    // default run's one event in one task is not significant.
    let exact = |c: &&Value| !c["cmh"].is_null() && c["cmh"]["exact"] == true;
    assert!(
        stratified_cases()
            .iter()
            .filter(exact)
            .any(|c| { c["strata"].as_array().unwrap().len() >= 3 })
    );
    assert!(
        stratified_cases()
            .iter()
            .filter(exact)
            .any(|c| { c["strata"].as_array().unwrap().len() == 1 })
    );
    assert!(
        stratified_cases()
            .iter()
            .any(|c| c["cmh"]["exact"] == false)
    );
    assert!(f(&case("sparse_one_event_in_one_task")["cmh"], "p") > 0.05);
    // One stratum, many strata, large counts, a pooled odds ratio of exactly 1, and an
    // interval clipped at ±1.
    assert_eq!(
        case("single_stratum")["strata"].as_array().unwrap().len(),
        1
    );
    assert!(
        stratified_cases()
            .iter()
            .any(|c| c["strata"].as_array().unwrap().len() >= 40)
    );
    assert!(stratified_cases().iter().any(|c| {
        c["strata"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| counts(s)[1] >= 1_000_000_000)
    }));
    assert!(!case("pooled_odds_ratio_exactly_one")["homogeneity"].is_null());
    assert!(
        stratified_cases()
            .iter()
            .any(|c| c["diff"]["clipped"] == true)
    );
}
