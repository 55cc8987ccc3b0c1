//! `loopbench compare` as a CI gate: exit 1 on a real regression, 0 on the same rates or
//! a wobble within `--max-increase`, 2 on bad input.

use crate::common;
use crate::common::csvgen;

use std::path::{Path, PathBuf};

use common::loopbench;
use csvgen::{ArmSpec, write_csvs};
use predicates::prelude::*;

/// A run with arms json and markdown; json has `json_premature` premature sessions of 240.
fn run(root: &Path, name: &str, json_premature: u64) -> PathBuf {
    let dir = root.join(name);
    write_csvs(
        &dir,
        &[
            ArmSpec::new("json", 20, 12).with("premature_claims", json_premature),
            ArmSpec::new("markdown", 20, 12).with("premature_claims", 44),
        ],
    );
    dir
}

#[test]
fn a_really_worse_json_arm_is_a_regression_and_exits_1() {
    let tmp = tempfile::tempdir().unwrap();
    let base = run(tmp.path(), "base", 22);
    let new = run(tmp.path(), "new", 44);
    let out = loopbench()
        .arg("compare")
        .arg(&base)
        .arg(&new)
        .args(["--metric", "premature_done", "--metric", "test_removal"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(out).unwrap();
    assert!(md.contains("## premature_done"), "{md}");
    assert!(md.contains("## test_removal"), "{md}");
    let json_line = md.lines().find(|l| l.starts_with("| json")).unwrap();
    assert!(json_line.contains("**REGRESSION**"), "{md}");
    assert!(
        json_line.contains("22 / 240") && json_line.contains("44 / 240"),
        "{md}"
    );
    let markdown_line = md.lines().find(|l| l.starts_with("| markdown")).unwrap();
    assert!(
        markdown_line.trim_end_matches([' ', '|']).ends_with("| ok"),
        "{markdown_line}"
    );
    assert!(md.contains("**Result: 1 regression.**"), "{md}");
}

#[test]
fn the_same_rates_exit_0() {
    let tmp = tempfile::tempdir().unwrap();
    let base = run(tmp.path(), "base", 22);
    let new = run(tmp.path(), "new", 22);
    loopbench()
        .arg("compare")
        .arg(&base)
        .arg(&new)
        .args(["--metric", "premature_done"])
        .assert()
        .code(0)
        .stdout(predicate::str::contains("**Result: no regression.**"));
}

#[test]
fn a_small_wobble_within_max_increase_exits_0_and_beyond_it_with_significance_1() {
    let tmp = tempfile::tempdir().unwrap();
    let base = run(tmp.path(), "base", 22);
    let wobble = run(tmp.path(), "wobble", 26);
    loopbench()
        .arg("compare")
        .arg(&base)
        .arg(&wobble)
        .args(["--metric", "premature_done", "--max-increase", "0.02"])
        .assert()
        .code(0);
    // 26 vs 22 of 240 is 1.7 points: within 0.02 even at a loose alpha.
    loopbench()
        .arg("compare")
        .arg(&base)
        .arg(&wobble)
        .args([
            "--metric",
            "premature_done",
            "--max-increase",
            "0.02",
            "--alpha",
            "0.5",
        ])
        .assert()
        .code(0);
    // Without a bound, the wobble is an increase but not a significant one.
    loopbench()
        .arg("compare")
        .arg(&base)
        .arg(&wobble)
        .args(["--metric", "premature_done"])
        .assert()
        .code(0);
}

#[test]
fn a_missing_run_an_unknown_metric_and_a_bad_alpha_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let base = run(tmp.path(), "base", 22);
    loopbench()
        .arg("compare")
        .arg(&base)
        .arg(tmp.path().join("nope"))
        .args(["--metric", "premature_done"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("nope"));
    loopbench()
        .arg("compare")
        .arg(&base)
        .arg(&base)
        .args(["--metric", "premature"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("unknown --metric 'premature'"));
    loopbench()
        .arg("compare")
        .arg(&base)
        .arg(&base)
        .args(["--metric", "premature_done", "--alpha", "5"])
        .assert()
        .code(2);
}

#[test]
fn a_judged_arm_without_data_for_the_metric_exits_2_naming_arm_metric_and_run() {
    let tmp = tempfile::tempdir().unwrap();
    let base = run(tmp.path(), "base", 22);
    let new = run(tmp.path(), "new", 22);
    // No session of either run was resumed: resume_success has n = 0 on both sides.
    loopbench()
        .arg("compare")
        .arg(&base)
        .arg(&new)
        .args(["--metric", "resume_success"])
        .assert()
        .code(2)
        .stdout("")
        .stderr(predicate::str::contains(
            "arm 'json' has no data for resume_success in either run",
        ))
        .stderr(predicate::str::contains(base.display().to_string()))
        .stderr(predicate::str::contains("not a pass"));

    // The new run's markdown arm has no coding session at all.
    let empty = tmp.path().join("empty");
    write_csvs(
        &empty,
        &[
            ArmSpec::new("json", 20, 12).with("premature_claims", 22),
            ArmSpec::new("markdown", 20, 0),
        ],
    );
    loopbench()
        .arg("compare")
        .arg(&base)
        .arg(&empty)
        .args(["--metric", "premature_done"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "arm 'markdown' has no data for premature_done in the new run '{}'",
            empty.display()
        )))
        .stderr(predicate::str::contains("arm 'json'").not());
}

#[test]
fn compare_prints_json_and_junit_and_appends_a_github_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let base = run(tmp.path(), "base", 22);
    let new = run(tmp.path(), "new", 44);
    let compare = |format: &str| {
        loopbench()
            .arg("compare")
            .arg(&base)
            .arg(&new)
            .args(["--metric", "premature_done", "--format", format])
            .assert()
            .code(1)
            .get_output()
            .stdout
            .clone()
    };
    let json: serde_json::Value = serde_json::from_slice(&compare("json")).unwrap();
    let rows = json.as_array().unwrap();
    // The named metric's verdicts, then those of `unobservable`, judged for every arm
    // compared, named or not.
    assert_eq!(rows.len(), 4);
    for row in &rows[2..] {
        assert_eq!(row["metric"], "unobservable");
        assert_eq!(row["regression"], false);
    }
    let json_row = rows.iter().find(|r| r["arm"] == "json").unwrap();
    assert_eq!(json_row["metric"], "premature_done");
    assert_eq!(json_row["base_k"], 22);
    assert_eq!(json_row["new_k"], 44);
    assert_eq!(json_row["regression"], true);
    let markdown_row = rows.iter().find(|r| r["arm"] == "markdown").unwrap();
    assert_eq!(markdown_row["regression"], false);

    let xml = String::from_utf8(compare("junit")).unwrap();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let cases: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("testcase"))
        .collect();
    assert_eq!(
        cases.len(),
        4,
        "one test case per arm and metric, unobservable's too"
    );
    let failed: Vec<&str> = cases
        .iter()
        .filter(|c| c.children().any(|k| k.has_tag_name("failure")))
        .filter_map(|c| c.attribute("name"))
        .collect();
    assert_eq!(failed, ["json"]);
    assert_eq!(doc.root_element().attribute("failures"), Some("1"));

    let summary = tmp.path().join("step-summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    loopbench()
        .arg("compare")
        .arg(&base)
        .arg(&new)
        .args(["--metric", "premature_done", "--github-summary"])
        .env("GITHUB_STEP_SUMMARY", &summary)
        .assert()
        .code(1);
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.starts_with("earlier step\n"), "{text}");
    assert!(text.contains("**REGRESSION**"), "{text}");
    loopbench()
        .arg("compare")
        .arg(&base)
        .arg(&new)
        .args(["--metric", "premature_done", "--github-summary"])
        .env_remove("GITHUB_STEP_SUMMARY")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("GITHUB_STEP_SUMMARY"));
}

#[test]
fn a_negative_max_increase_parses_and_is_refused_in_the_projects_words() {
    let tmp = tempfile::tempdir().unwrap();
    let base = run(tmp.path(), "base", 22);
    loopbench()
        .arg("compare")
        .arg(&base)
        .arg(&base)
        .args(["--metric", "premature_done", "--max-increase", "-1"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--max-increase must be a rate change",
        ));
}

#[test]
fn an_arm_the_new_run_lacks_is_named_as_not_judged_and_arms_judges_a_subset_on_purpose() {
    let tmp = tempfile::tempdir().unwrap();
    let base = run(tmp.path(), "base", 22);
    // The new run reruns json only, the arm under test.
    let new = tmp.path().join("new");
    write_csvs(
        &new,
        &[ArmSpec::new("json", 20, 12).with("premature_claims", 22)],
    );
    let compare = |extra: &[&str]| {
        let mut cmd = loopbench();
        cmd.arg("compare")
            .arg(&base)
            .arg(&new)
            .args(["--metric", "premature_done"])
            .args(extra);
        cmd
    };
    compare(&[])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Only in the base run (not compared): markdown.",
        ))
        .stderr(predicate::str::contains(format!(
            "warning: not judged: the new run '{}' has no arm 'markdown' of the base run",
            new.display()
        )));
    // Judging only json on purpose: a pass, with no word of the arm left out.
    let md = compare(&["--arms", "json"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(md).unwrap();
    assert!(md.contains("| json"), "{md}");
    assert!(!md.contains("markdown"), "{md}");
    // An arm named that either run lacks is refused, naming the run.
    compare(&["--arms", "json,markdown"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--arms: arm 'markdown' is not in the new run",
        ));
    compare(&["--arms", ","]).assert().code(2);
    // An arm only the new run has has nothing to regress against: noted, not judged.
    loopbench()
        .arg("compare")
        .arg(&new)
        .arg(&base)
        .args(["--metric", "premature_done"])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "Only in the new run (not compared): markdown.",
        ));
}
