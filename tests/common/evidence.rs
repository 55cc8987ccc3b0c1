//! The check that every count of a results directory's sessions.csv is the length of
//! its evidence list in sessions.jsonl, shared by the tests that make such directories.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use super::{read_csv, read_jsonl};

/// Every key of the evidence object, in the order the records write them.
pub const KEYS: &[&str] = &[
    "premature",
    "told_false",
    "newly_verified",
    "regressions",
    "entries_removed",
    "entries_added",
    "desc_edits",
    "step_edits",
    "tests_removed",
    "tests_weakened",
    "dup_side_effects",
    "failed_checks",
    "tree",
    "newly_claimed",
    "flaky",
    "dup_side_effects_unlisted",
];

/// (column of sessions.csv, evidence key) whose count is the length of the list.
const COUNTED: &[(&str, &str)] = &[
    ("newly_claimed", "newly_claimed"),
    ("premature_claims", "premature"),
    ("newly_verified", "newly_verified"),
    ("regressions", "regressions"),
    ("told_false", "told_false"),
    ("desc_edits", "desc_edits"),
    ("step_edits", "step_edits"),
    ("entries_removed", "entries_removed"),
    ("entries_added", "entries_added"),
    ("tests_weakened", "tests_weakened"),
    ("dup_side_effects", "dup_side_effects"),
    ("flaky", "flaky"),
];

/// Checks, for every session of a results directory, that each count of sessions.csv
/// is the length of its evidence list (for `dup_side_effects`, plus the repeated keys
/// left unlisted) (null exactly when the cell is empty), that
/// `tests_removed` is the sum over its files, that `failed_checks` is null exactly when
/// the list-based fields are, and that every key is present. Returns how many sessions
/// had a non-zero count, so that callers can tell the check was not vacuous.
pub fn assert_counts_are_evidence(out: &Path) -> usize {
    let rows = read_csv(&out.join("sessions.csv"));
    let records = read_jsonl(&out.join("sessions.jsonl"));
    assert_eq!(rows.len(), records.len());
    assert!(
        !rows[0].contains_key("evidence"),
        "evidence is not a CSV column"
    );
    let by_key: BTreeMap<(String, String), &Value> = records
        .iter()
        .map(|r| {
            let id = (
                r["trial_id"].as_str().unwrap().to_string(),
                r["session"].to_string(),
            );
            (id, r)
        })
        .collect();
    let mut non_zero = 0;
    for row in &rows {
        let record = by_key[&(row["trial_id"].clone(), row["session"].clone())];
        let evidence = record["evidence"].as_object().expect("an evidence object");
        for key in KEYS {
            assert!(evidence.contains_key(*key), "no '{key}' in {evidence:?}");
        }
        let mut any = false;
        for (column, key) in COUNTED {
            let cell = &row[*column];
            match &evidence[*key] {
                Value::Null => assert_eq!(cell, "", "{column} of {row:?}"),
                Value::Array(list) => {
                    // Repeated side effects past the listed ones are counted, not listed.
                    let unlisted = match *key {
                        "dup_side_effects" => {
                            evidence["dup_side_effects_unlisted"].as_u64().unwrap()
                        }
                        _ => 0,
                    };
                    let count = list.len() as u64 + unlisted;
                    assert_eq!(cell, &count.to_string(), "{column} of {row:?}");
                    any |= !list.is_empty();
                }
                other => panic!("'{key}' is {other}"),
            }
        }
        let removed: u64 = evidence["tests_removed"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["before"].as_u64().unwrap() - t["after"].as_u64().unwrap())
            .sum();
        assert_eq!(row["tests_removed"], removed.to_string(), "{row:?}");
        any |= removed > 0;
        assert_eq!(
            evidence["failed_checks"].is_null(),
            row["premature_claims"].is_empty(),
            "{row:?}"
        );
        non_zero += usize::from(any);
    }
    non_zero
}
