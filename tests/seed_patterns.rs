//! What the shipped suite must show about the seed patterns it added (the numbers are
//! the sim's, so these are checks of direction, made on the shipped seed): the exit-check
//! revert lowers told_false and failing exit checks carry over less to the next session;
//! the status-ledger gate has told_false = 0 and multi_in_progress = 0 by construction;
//! plan omission is higher without an initializer.

use crate::common;

use std::collections::BTreeMap;

use common::read_jsonl;
use common::shared_run::default_suite_run;
use serde_json::Value;

/// `(k, n)` of `metric` for `arm` in summary.json.
fn rate(summary: &[Value], arm: &str, metric: &str) -> (u64, u64) {
    let row = summary
        .iter()
        .find(|r| r["arm"] == arm && r["metric"] == metric)
        .unwrap_or_else(|| panic!("no {metric} for {arm}"));
    (row["k"].as_u64().unwrap(), row["n"].as_u64().unwrap())
}

/// Coding sessions right after one whose exit check failed, and how many of them fail
/// it too (per trial, in session order).
fn carry_over(sessions: &[Value], arm: &str) -> (u64, u64) {
    let mut trials: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
    for s in sessions {
        if s["arm"] == arm && s["kind"] == "coding" {
            trials
                .entry(s["trial_id"].as_str().unwrap())
                .or_default()
                .push(s);
        }
    }
    let (mut k, mut n) = (0, 0);
    for list in trials.values_mut() {
        list.sort_by_key(|s| s["session"].as_u64());
        for pair in list.windows(2) {
            if pair[0]["exit_check"] == Value::Bool(false) {
                n += 1;
                k += u64::from(pair[1]["exit_check"] == Value::Bool(false));
            }
        }
    }
    (k, n)
}

fn share((k, n): (u64, u64)) -> f64 {
    k as f64 / n as f64
}

#[test]
#[ignore = "reads the default run of the full suite; .ci/run runs it"]
fn the_seed_pattern_arms_show_what_they_were_added_for() {
    let out = default_suite_run();
    let summary: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let sessions = read_jsonl(&out.join("sessions.jsonl"));

    let told = |arm| share(rate(&summary, arm, "told_false"));
    assert!(
        told("revert") < told("json") / 2.0,
        "{} vs {}",
        told("revert"),
        told("json")
    );
    let (off, revert) = (
        carry_over(&sessions, "json"),
        carry_over(&sessions, "revert"),
    );
    assert!(
        off.1 >= 20 && revert.1 >= 20,
        "too few failed checks: {off:?} {revert:?}"
    );
    assert!(
        share(revert) < share(off),
        "carry-over {revert:?} vs {off:?}"
    );

    let (k, n) = rate(&summary, "status-gate", "told_false");
    assert!(k == 0 && n > 0, "status-gate told_false {k}/{n}");
    let (k, n) = rate(&summary, "status-gate", "multi_in_progress");
    assert!(k == 0 && n > 0, "status-gate multi_in_progress {k}/{n}");
    // The agent-owned ledger does leave several in progress, so the zero is the gate's.
    assert!(rate(&summary, "status", "multi_in_progress").0 > 0);

    let omission = |arm| share(rate(&summary, arm, "plan_omission"));
    assert!(omission("no-initializer") > omission("json"));
}
