//! `loopbench power` prints the statsmodels sample size.

mod common;

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
