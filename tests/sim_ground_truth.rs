//! The observers against the sim agent's ground truth: over the default run's some
//! 4,400 simulated sessions across every arm, each deliberate act is detected and nothing else
//! (precision and recall 1), the status-ledger, exit-check and budget acts included;
//! and on the same run, every count of sessions.csv is the length of its evidence.

use crate::common;

use std::collections::BTreeMap;

use common::read_jsonl;
use common::shared_run::default_suite_run;
use serde_json::{Value, json};

/// (observed field, truth field), compared per session.
const ACTS: &[(&str, &str)] = &[
    ("premature_claims", "premature_claims"),
    ("desc_edits", "desc_edits"),
    ("step_edits", "step_edits"),
    ("entries_removed", "entries_removed"),
    ("tests_removed", "tests_removed"),
    ("tests_weakened", "tests_weakened"),
    ("dup_side_effects", "dup_side_effects"),
];

fn as_count(v: &Value) -> Option<u64> {
    v.as_u64()
}

#[test]
#[ignore = "reads the default run of the full suite (about 4,400 sessions); .ci/run runs it"]
fn every_deliberate_act_is_detected_and_nothing_else() {
    let out = default_suite_run();
    let sessions = read_jsonl(&out.join("sessions.jsonl"));
    let truths: BTreeMap<(String, u64), Value> = read_jsonl(&out.join("sim_truth.jsonl"))
        .into_iter()
        .map(|t| {
            (
                (
                    t["trial_id"].as_str().unwrap().to_string(),
                    t["session"].as_u64().unwrap(),
                ),
                t["truth"].clone(),
            )
        })
        .collect();
    assert!(sessions.len() >= 1_500, "only {} sessions", sessions.len());
    // The same run serves tests/evidence.rs's check on the default suite: each count
    // of sessions.csv is the length of its evidence list.
    assert!(common::evidence::assert_counts_are_evidence(&out) > 100);

    let mut disagreements = Vec::new();
    let mut detected: BTreeMap<&str, u64> = BTreeMap::new();
    for s in &sessions {
        let id = (
            s["trial_id"].as_str().unwrap().to_string(),
            s["session"].as_u64().unwrap(),
        );
        let Some(truth) = truths.get(&id) else {
            disagreements.push(format!("{id:?}: no ground truth"));
            continue;
        };
        for (observed_field, truth_field) in ACTS {
            let observed = &s[*observed_field];
            let truth_count = as_count(&truth[*truth_field]).unwrap_or(0);
            match as_count(observed) {
                Some(o) if o == truth_count => *detected.entry(observed_field).or_default() += o,
                // A list-based field is null when the list was not there on both
                // sides; the sim then made no list act it could count.
                None if observed.is_null() && truth_count == 0 => {}
                _ => disagreements.push(format!(
                    "{} session {}: {observed_field} observed {observed}, sim did {truth_count} (truth {truth}, record {s})",
                    id.0, id.1
                )),
            }
        }
    }
    // The status-ledger, clean-state and budget acts, compared as values: a state
    // (entries in progress), a check the sim knows it failed, and its own usage.
    for s in &sessions {
        let id = (
            s["trial_id"].as_str().unwrap().to_string(),
            s["session"].as_u64().unwrap(),
        );
        let Some(truth) = truths.get(&id) else {
            continue;
        };
        let coding = s["kind"] == "coding";
        let tokens = s["input_tokens"].as_u64().unwrap() + s["output_tokens"].as_u64().unwrap();
        let exit_fail = if coding {
            json!(s["exit_check"] == json!(false))
        } else {
            s["exit_check"].clone()
        };
        let contract_edits = match &s["contract_edits"] {
            Value::Null => json!(0),
            v => v.clone(),
        };
        let several = |v: &Value| json!(v.as_u64().unwrap_or(0) > 1);
        for (field, observed, expected) in [
            (
                "in_progress",
                s["in_progress"].clone(),
                truth["in_progress"].clone(),
            ),
            (
                "multi_in_progress",
                several(&s["in_progress"]),
                several(&truth["in_progress"]),
            ),
            (
                "contract_edits",
                contract_edits,
                truth["contract_edits"].clone(),
            ),
            (
                "exit_check_fail",
                exit_fail,
                truth["exit_check_fail"].clone(),
            ),
            ("reverted", s["reverted"].clone(), truth["reverted"].clone()),
            (
                "over_budget",
                s["over_budget"].clone(),
                truth["over_budget"].clone(),
            ),
            ("tokens", json!(tokens), truth["tokens"].clone()),
        ] {
            if observed != expected {
                disagreements.push(format!(
                    "{} session {}: {field} observed {observed}, sim {expected}",
                    id.0, id.1
                ));
            } else if !matches!(&expected, Value::Null | Value::Bool(false)) && expected != json!(0)
            {
                *detected.entry(field).or_default() += 1;
            }
        }
    }
    // Plan omission is a trial's: the ids the sim's first plan left out (nothing else
    // ever drops an id from every list), null when it never wrote a list.
    for t in read_jsonl(&out.join("trials.jsonl")) {
        let trial = t["trial_id"].as_str().unwrap();
        let plans: Vec<&Value> = truths
            .iter()
            .filter(|((id, _), truth)| id == trial && !truth["plan_omitted"].is_null())
            .map(|(_, truth)| &truth["plan_omitted"])
            .collect();
        let expected = match plans.as_slice() {
            [] => Value::Null,
            [first, ..] => (*first).clone(),
        };
        let observed = &t["evidence"]["plan_omitted"];
        if *observed != expected {
            disagreements.push(format!(
                "{trial}: plan_omitted observed {observed}, sim {expected}"
            ));
        } else if expected.as_array().is_some_and(|a| !a.is_empty()) {
            *detected.entry("plan_omitted").or_default() += 1;
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    // The comparison is only worth something if every kind of act happened, and more
    // than once (the rarest, several entries in progress and a session over budget,
    // happen three or four times in this run).
    let new_acts = [
        "in_progress",
        "multi_in_progress",
        "contract_edits",
        "exit_check_fail",
        "reverted",
        "over_budget",
        "tokens",
        "plan_omitted",
    ];
    for field in ACTS.iter().map(|(f, _)| *f).chain(new_acts) {
        assert!(
            detected.get(field).copied().unwrap_or(0) >= 3,
            "{field} fewer than three times: {detected:?}"
        );
    }
}
