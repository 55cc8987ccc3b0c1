//! The observers against the sim agent's ground truth: over thousands of simulated
//! sessions across every arm, each deliberate act is detected and nothing else.

mod common;

use std::collections::BTreeMap;

use common::{loopbench, read_jsonl, repo_root};
use serde_json::Value;

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
#[ignore = "runs about 2,000 simulated sessions; .ci/run runs it"]
fn every_deliberate_act_is_detected_and_nothing_else() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    loopbench()
        .args(["run"])
        .arg(repo_root().join("suites/seed-replication"))
        .args(["--replicates", "18", "--seed", "7", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
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
    assert!(sessions.len() >= 2_000, "only {} sessions", sessions.len());

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
    assert!(
        disagreements.is_empty(),
        "{} disagreements:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    // The comparison is only worth something if every kind of act happened.
    for (field, _) in ACTS {
        assert!(
            detected.get(field).copied().unwrap_or(0) > 0,
            "no {field} at all: {detected:?}"
        );
    }
}
