//! Checks the group-sequential statistics against reference values: the boundary table
//! tests/data/ldof_boundaries.csv and tests/data/sequential_vectors.json, both made by
//! scripts/gen_sequential_vectors.py (gsDesign's grid recursion through the `gsdesign`
//! port, scipy and statsmodels; see that script for how the values were cross-checked).
//!
//! Run with `--nocapture` to see the largest error per group.

use std::sync::OnceLock;

use loopbench::stats::*;
use serde_json::Value;

fn vectors() -> &'static Value {
    static V: OnceLock<Value> = OnceLock::new();
    V.get_or_init(|| {
        serde_json::from_str(include_str!("data/sequential_vectors.json")).expect("valid JSON")
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

/// Largest absolute and relative error seen in one group, asserted against a tolerance.
struct Worst {
    name: &'static str,
    abs: f64,
    rel: f64,
}

impl Worst {
    fn new(name: &'static str) -> Self {
        Worst {
            name,
            abs: 0.0,
            rel: 0.0,
        }
    }

    fn abs(&mut self, got: f64, want: f64, tol: f64, what: &dyn std::fmt::Display) {
        let err = (got - want).abs();
        self.abs = self.abs.max(err);
        assert!(err <= tol, "{}: {what}: got {got}, want {want}", self.name);
    }

    fn rel(&mut self, got: f64, want: f64, tol: f64, what: &dyn std::fmt::Display) {
        let err = ((got - want) / want).abs();
        self.rel = self.rel.max(err);
        assert!(
            err <= tol,
            "{}: {what}: got {got:e}, want {want:e}",
            self.name
        );
    }
}

impl Drop for Worst {
    fn drop(&mut self) {
        println!(
            "{}: max abs error {:.2e}, max rel error {:.2e}",
            self.name, self.abs, self.rel
        );
    }
}

#[test]
fn boundaries_match_the_gsdesign_sfldof_table_for_two_to_ten_looks() {
    let mut reader = csv::ReaderBuilder::new()
        .comment(Some(b'#'))
        .from_reader(include_str!("data/ldof_boundaries.csv").as_bytes());
    let mut table: Vec<Vec<(f64, f64, f64)>> = vec![Vec::new(); 11];
    for row in reader.records() {
        let row = row.unwrap();
        let num = |i: usize| row[i].parse::<f64>().unwrap();
        let looks: usize = row[0].parse().unwrap();
        let look: usize = row[1].parse().unwrap();
        assert_eq!(table[looks].len() + 1, look, "rows in look order");
        table[looks].push((num(2), num(3), num(4)));
    }
    let mut worst = Worst::new("ldof_boundaries.csv");
    for (looks, rows) in table.iter().enumerate().skip(2) {
        assert_eq!(rows.len(), looks, "{looks} looks in the table");
        let design = SequentialDesign::equally_spaced(0.05, looks).unwrap();
        let spent = design.cumulative_alpha();
        for (k, &(fraction, boundary, cumulative)) in rows.iter().enumerate() {
            let what = format!("K = {looks}, look {}", k + 1);
            assert!((design.fractions()[k] - fraction).abs() < 1e-6, "{what}");
            worst.abs(design.boundaries()[k], boundary, 1e-4, &what);
            assert!(
                ((spent[k] - cumulative) / cumulative).abs() < 1e-6,
                "{what}"
            );
        }
    }
    assert!(table.iter().skip(2).all(|rows| !rows.is_empty()));
}

#[test]
fn boundaries_at_unequal_looks_and_other_levels_match_gsdesign() {
    let mut worst = Worst::new("boundaries");
    for case in cases("boundaries") {
        let fractions = floats(&case["fractions"]);
        let design = SequentialDesign::new(f(case, "alpha"), &fractions).unwrap();
        for (got, want) in design.boundaries().iter().zip(floats(&case["boundaries"])) {
            worst.abs(*got, want, 1e-7, case);
        }
    }
}

#[test]
fn pooled_z_matches_statsmodels_proportions_ztest() {
    let mut worst = Worst::new("pooled_z");
    for case in cases("pooled_z") {
        let z = pooled_z(u(case, "k1"), u(case, "n1"), u(case, "k2"), u(case, "n2")).unwrap();
        let want = f(case, "z");
        if want == 0.0 {
            assert_eq!(z, 0.0, "{case}");
        } else {
            worst.rel(z, want, 1e-12, case);
        }
    }
}

#[test]
fn spending_matches_gsdesign_sfldof() {
    let mut worst = Worst::new("ldof_spending");
    for case in cases("spending") {
        let got = ldof_spending(f(case, "alpha"), f(case, "t")).unwrap();
        worst.rel(got, f(case, "one_side"), 1e-9, case);
    }
}

#[test]
fn crossing_probabilities_power_and_expected_fraction_match_gsdesign() {
    let mut worst = Worst::new("crossing");
    for case in cases("crossing") {
        let design = SequentialDesign::new(f(case, "alpha"), &floats(&case["fractions"])).unwrap();
        let drift = f(case, "drift");
        let got = design.crossing_probabilities(drift);
        for (k, c) in got.iter().enumerate() {
            worst.abs(c.upper, floats(&case["upper"])[k], 1e-9, case);
            worst.abs(c.lower, floats(&case["lower"])[k], 1e-9, case);
        }
        worst.abs(design.power(drift), f(case, "power"), 1e-9, case);
        worst.abs(
            design.expected_fraction(drift),
            f(case, "expected_fraction"),
            1e-9,
            case,
        );
    }
}

#[test]
fn repeated_p_values_match_a_root_search_on_gsdesign_boundaries() {
    let mut worst = Worst::new("repeated_p");
    for case in cases("repeated_p") {
        let design = SequentialDesign::new(f(case, "alpha"), &floats(&case["fractions"])).unwrap();
        let look = u(case, "look") as usize;
        let got = design.repeated_p_value_of_z(look, f(case, "z")).unwrap();
        worst.rel(got, f(case, "p"), 1e-6, case);
    }
}

#[test]
fn sequential_sample_sizes_match_the_reference_integration() {
    let mut worst = Worst::new("sample_size");
    for case in cases("sample_size") {
        let s = sequential_sessions_per_arm(
            f(case, "p1"),
            f(case, "p2"),
            f(case, "alpha"),
            f(case, "power"),
            u(case, "looks") as usize,
        )
        .unwrap();
        assert_eq!(s.fixed, u(case, "fixed"), "{case}");
        assert_eq!(s.max, u(case, "max"), "{case}");
        worst.rel(s.fixed_real, f(case, "fixed_real"), 1e-8, case);
        worst.rel(s.inflation, f(case, "inflation"), 1e-8, case);
        worst.rel(s.max_real, f(case, "max_real"), 1e-8, case);
        worst.abs(s.power_at_max, f(case, "power_at_max"), 1e-9, case);
        worst.rel(s.expected_alternative, f(case, "expected_h1"), 1e-8, case);
        worst.rel(s.expected_null, f(case, "expected_h0"), 1e-8, case);
    }
}
