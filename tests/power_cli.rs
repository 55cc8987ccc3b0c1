//! `loopbench power` prints the statsmodels sample size and, with `--sequential`, the
//! group-sequential design's maximum and expected sessions.

use crate::common;

use common::loopbench;
use predicates::prelude::*;

#[test]
fn power_prints_sessions_per_arm_as_statsmodels_solves_it() {
    // statsmodels NormalIndPower().solve_power(h(0.183, 0.092), alpha=0.05, power=0.8)
    // = 218.98, rounded up (tests/data/stats_vectors.json, group "power").
    loopbench()
        .args(["power", "--p1", "0.183", "--p2", "0.092"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("219 sessions per arm\n"));
}

#[test]
fn equal_rates_or_a_rate_outside_zero_one_are_bad_input() {
    loopbench()
        .args(["power", "--p1", "0.2", "--p2", "0.2"])
        .assert()
        .code(2);
    loopbench()
        .args(["power", "--p1", "1.2", "--p2", "0.2"])
        .assert()
        .code(2);
}

#[test]
fn sequential_power_prints_the_maximum_and_expected_sessions_next_to_the_fixed_design() {
    // tests/data/sequential_vectors.json, group "sample_size": 36% vs 8%, five looks:
    // fixed 30.84 -> 31, inflation 1.0247, maximum 32, expected 25.64 (alternative) and
    // 31.79 (null) sessions per arm.
    loopbench()
        .args(["power", "--p1", "0.36", "--p2", "0.08", "--sequential"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("31 sessions per arm\n"))
        .stdout(predicate::str::contains("5 equally spaced looks"))
        .stdout(predicate::str::contains(
            "32 sessions per arm at most, if no look stops the comparison",
        ))
        .stdout(predicate::str::contains("inflation factor 1.0247"))
        .stdout(predicate::str::contains(
            "4.877   3.357   2.680   2.290   2.031",
        ))
        .stdout(predicate::str::contains(
            "25.6 sessions per arm expected if the rates are 0.36 vs 0.08",
        ))
        .stdout(predicate::str::contains(
            "31.8 sessions per arm expected if the arms do not differ",
        ))
        .stdout(predicate::str::contains("numerical integration"));
}

#[test]
fn sequential_power_takes_the_number_of_looks() {
    // Group "sample_size": 18.3% vs 9.2%, three looks: maximum 222, expected 189.69 and
    // 221.09; boundaries of tests/data/ldof_boundaries.csv for K = 3.
    loopbench()
        .args(["power", "--p1", "0.183", "--p2", "0.092", "--sequential"])
        .args(["--looks", "3"])
        .assert()
        .success()
        .stdout(predicate::str::starts_with("219 sessions per arm\n"))
        .stdout(predicate::str::contains("222 sessions per arm at most"))
        .stdout(predicate::str::contains("3.710   2.511   1.993"))
        .stdout(predicate::str::contains("74     148     222"))
        .stdout(predicate::str::contains("189.7 sessions per arm expected"))
        .stdout(predicate::str::contains("221.1 sessions per arm expected"));
}

#[test]
fn looks_without_sequential_or_outside_one_to_fifty_are_bad_input() {
    loopbench()
        .args(["power", "--p1", "0.36", "--p2", "0.08", "--looks", "5"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--sequential"));
    for looks in ["0", "51"] {
        loopbench()
            .args(["power", "--p1", "0.36", "--p2", "0.08", "--sequential"])
            .args(["--looks", looks])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("looks must be 1 to 50"));
    }
}

#[test]
fn power_help_says_what_the_sequential_numbers_mean() {
    loopbench()
        .args(["power", "--help"])
        .assert()
        .success()
        .stdout(predicate::str::contains("--sequential"))
        .stdout(predicate::str::contains("maximum sessions per arm"))
        .stdout(predicate::str::contains("expected"))
        .stdout(predicate::str::contains("numerical integration"));
}

fn power_json(args: &[&str]) -> serde_json::Value {
    let out = loopbench()
        .arg("power")
        .args(args)
        .args(["--format", "json"])
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

#[test]
fn format_json_gives_the_same_numbers_under_stable_names() {
    let fixed = power_json(&["--p1", "0.183", "--p2", "0.092"]);
    assert_eq!(fixed["sessions_per_arm"], 219);
    assert_eq!(fixed["p1"], 0.183);
    assert_eq!(fixed["alpha"], 0.05);
    assert_eq!(fixed["power"], 0.8);
    assert!((fixed["cohens_h"].as_f64().unwrap() - 0.2677).abs() < 1e-4);
    assert!(fixed["sequential"].is_null());
    // tests/data/sequential_vectors.json, group "sample_size": 36% vs 8%, five looks.
    let seq = power_json(&["--p1", "0.36", "--p2", "0.08", "--sequential"]);
    let s = &seq["sequential"];
    assert_eq!(seq["sessions_per_arm"], 31);
    assert_eq!(s["looks"], 5);
    assert_eq!(s["max_sessions_per_arm"], 32);
    assert!((s["inflation_factor"].as_f64().unwrap() - 1.0247).abs() < 1e-4);
    assert!((s["expected_sessions_per_arm_alternative"].as_f64().unwrap() - 25.64).abs() < 0.01);
    let table = s["look_table"].as_array().unwrap();
    assert_eq!(table.len(), 5);
    assert_eq!(table[4]["sessions_per_arm"], 32.0);
    assert_eq!(table[4]["information_fraction"], 1.0);
    let bounds: Vec<f64> = table
        .iter()
        .map(|l| l["z_boundary"].as_f64().unwrap())
        .collect();
    assert!(bounds.windows(2).all(|w| w[0] > w[1]), "{bounds:?}");
}
