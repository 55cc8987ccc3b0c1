//! `loopbench replay` over many traces: a directory of traces is one arm, two
//! directories give a run that `report` and `compare` read like any other.

use crate::common;

use std::path::{Path, PathBuf};

use common::{loopbench, read_csv, repo_root};
use predicates::prelude::*;
use serde_json::json;

fn latefees() -> PathBuf {
    repo_root().join("suites/examples/tasks/latefees")
}

/// A one-session trace that marks F1 done; with `implement`, it first writes the
/// reference late-fee code, so the claim is true.
fn f1_trace(implement: bool) -> String {
    let mut lines = vec![json!({"op": "session", "n": 1})];
    if implement {
        let gold =
            std::fs::read_to_string(latefees().join("oracle/gold/F1/ledger/fees.py")).unwrap();
        lines.push(json!({"op": "write", "path": "ledger/fees.py", "content": gold}));
    }
    lines.push(json!({"op": "edit", "path": "feature_list.json",
        "old": "\"passes\": false", "new": "\"passes\": true"}));
    lines.push(json!({"op": "run", "cmd": "git add -A && git commit -qm F1"}));
    lines.push(json!({"op": "usage", "turns": 7, "input_tokens": 1000, "output_tokens": 100}));
    lines.push(json!({"op": "end", "status": "completed"}));
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// A directory `name` under `root` holding `careful` implementing and `careless`
/// claim-only traces.
fn trace_dir(root: &Path, name: &str, careful: usize, careless: usize) -> PathBuf {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..careful {
        std::fs::write(dir.join(format!("a{i}.jsonl")), f1_trace(true)).unwrap();
    }
    for i in 0..careless {
        std::fs::write(dir.join(format!("b{i}.jsonl")), f1_trace(false)).unwrap();
    }
    // Not a trace: ignored.
    std::fs::write(dir.join("README.txt"), "notes").unwrap();
    dir
}

#[test]
fn two_directories_are_two_arms_that_report_compares() {
    let tmp = tempfile::tempdir().unwrap();
    let old = trace_dir(tmp.path(), "old-prompt", 1, 3);
    let new = trace_dir(tmp.path(), "new-prompt", 3, 1);
    let out = tmp.path().join("run");
    loopbench()
        .args(["replay"])
        .arg(&old)
        .arg(&new)
        .arg("--task")
        .arg(latefees())
        .args(["--format", "json", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("premature_done"));

    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["arms"], json!(["old-prompt", "new-prompt"]));
    assert_eq!(manifest["baseline"], json!("old-prompt"));
    assert_eq!(manifest["replicates"], json!(4));

    // One trial per trace, replicates in file-name order (a* before b*).
    let sessions = read_csv(&out.join("sessions.csv"));
    let ids: Vec<&str> = sessions.iter().map(|r| r["trial_id"].as_str()).collect();
    assert_eq!(
        ids,
        [
            "old-prompt:latefees:0",
            "old-prompt:latefees:1",
            "old-prompt:latefees:2",
            "old-prompt:latefees:3",
            "new-prompt:latefees:0",
            "new-prompt:latefees:1",
            "new-prompt:latefees:2",
            "new-prompt:latefees:3",
        ]
    );
    let claims: Vec<&str> = sessions
        .iter()
        .map(|r| r["premature_claims"].as_str())
        .collect();
    assert_eq!(claims, ["0", "1", "1", "1", "0", "0", "0", "1"]);
    assert!(sessions.iter().all(|r| r["turns"] == "7"));

    let traces = read_csv(&out.join("traces.csv"));
    assert_eq!(traces.len(), 8);
    assert_eq!(traces[1]["trial_id"], "old-prompt:latefees:1");
    assert!(
        traces[1]["trace"].ends_with("old-prompt/b0.jsonl"),
        "{:?}",
        traces[1]
    );
    assert_eq!(
        traces[1]["blake3"],
        blake3::hash(f1_trace(false).as_bytes()).to_hex().as_str()
    );

    // `report` on the run compares the two arms: 3 of 4 against 1 of 4.
    let printed = loopbench()
        .arg("report")
        .arg(&out)
        .args(["--format", "csv"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let rows: Vec<csv::StringRecord> = csv::Reader::from_reader(printed.as_slice())
        .records()
        .map(Result::unwrap)
        .collect();
    let row = |arm: &str| {
        rows.iter()
            .find(|r| &r[0] == arm && &r[1] == "premature_done")
            .unwrap_or_else(|| panic!("no premature_done row for {arm}: {rows:?}"))
            .clone()
    };
    let (base, new_row) = (row("old-prompt"), row("new-prompt"));
    assert_eq!((&base[2], &base[3]), ("3", "4"));
    assert_eq!((&new_row[2], &new_row[3]), ("1", "4"));
    assert_eq!(&base[7], "", "the baseline row leaves the comparison empty");
    assert_eq!(new_row[7].parse::<f64>().unwrap(), -0.5);
}

#[test]
fn arm_names_and_formats_go_with_the_inputs_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let a = trace_dir(tmp.path(), "a", 1, 0);
    let b = trace_dir(tmp.path(), "b", 0, 1);
    let out = tmp.path().join("run");
    loopbench()
        .arg("replay")
        .arg(&a)
        .arg(&b)
        .arg("--task")
        .arg(latefees())
        .args(["--arm", "json-list", "--arm", "yaml-list"])
        .args(["--format", "json", "--format", "yaml", "--out"])
        .arg(&out)
        .args(["--quiet"])
        .assert()
        .success();
    let sessions = read_csv(&out.join("sessions.csv"));
    let arms: Vec<&str> = sessions.iter().map(|r| r["arm"].as_str()).collect();
    assert_eq!(arms, ["json-list", "yaml-list"]);
    // The JSON trace's edit matches the JSON list and makes a true claim; against a
    // YAML list the same edit finds nothing to replace: a failed action, no claim.
    assert_eq!(sessions[0]["features_verified"], "1");
    assert_eq!(sessions[1]["actions_failed"], "1");
    assert_eq!(sessions[1]["newly_claimed"], "0");
}

#[test]
fn one_arm_name_makes_every_trace_file_a_replicate_of_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = trace_dir(tmp.path(), "t", 2, 1);
    let out = tmp.path().join("run");
    loopbench()
        .arg("replay")
        .arg(dir.join("b0.jsonl"))
        .arg(dir.join("a0.jsonl"))
        .arg(dir.join("a1.jsonl"))
        .arg("--task")
        .arg(latefees())
        .args(["--arm", "march", "--format", "json", "--out"])
        .arg(&out)
        .assert()
        .success();
    let trials = read_csv(&out.join("trials.csv"));
    assert_eq!(trials.len(), 3);
    // Files given one by one keep the command line's order.
    let traces = read_csv(&out.join("traces.csv"));
    assert!(traces[0]["trace"].ends_with("b0.jsonl"));
    assert_eq!(trials[0]["trial_id"], "march:latefees:0");
    assert_eq!(trials[0]["features_verified"], "0");
    assert_eq!(trials[1]["features_verified"], "1");
}

#[test]
fn a_bad_trace_anywhere_exits_2_naming_file_and_line_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let a = trace_dir(tmp.path(), "a", 2, 0);
    let b = trace_dir(tmp.path(), "b", 1, 1);
    std::fs::write(
        b.join("c.jsonl"),
        "{\"op\":\"session\",\"n\":1}\n{\"op\":\"teleport\"}\n",
    )
    .unwrap();
    let out = tmp.path().join("run");
    loopbench()
        .arg("replay")
        .arg(&a)
        .arg(&b)
        .arg("--task")
        .arg(latefees())
        .args(["--format", "json", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("c.jsonl:2:"));
    assert!(!out.exists());
}

#[test]
fn mismatched_arm_or_format_counts_and_empty_directories_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let a = trace_dir(tmp.path(), "a", 1, 0);
    let b = trace_dir(tmp.path(), "b", 1, 0);
    let c = trace_dir(tmp.path(), "c", 1, 0);
    let empty = tmp.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let replay = |extra: &[&str], inputs: &[&Path]| {
        let mut cmd = loopbench();
        cmd.arg("replay").args(inputs).arg("--task").arg(latefees());
        cmd.args(extra).arg("--out").arg(tmp.path().join("never"));
        cmd.assert()
    };
    replay(
        &["--format", "json", "--arm", "x", "--arm", "y"],
        &[&a, &b, &c],
    )
    .code(2)
    .stderr(predicate::str::contains("--arm given 2 times for 3 inputs"));
    replay(&["--format", "json", "--format", "yaml"], &[&a, &b, &c])
        .code(2)
        .stderr(predicate::str::contains(
            "--format given 2 times for 3 arms (a, b, c)",
        ));
    replay(&["--format", "json", "--arm", "x", "--arm", "x"], &[&a, &b])
        .code(2)
        .stderr(predicate::str::contains("arm 'x' is named twice"));
    replay(&["--format", "json"], &[&empty])
        .code(2)
        .stderr(predicate::str::contains("holds no traces"));
    assert!(!tmp.path().join("never").exists());
}

#[test]
fn a_replayed_arm_all_of_whose_sessions_failed_is_named_in_a_warning_and_in_the_summary() {
    let tmp = tempfile::tempdir().unwrap();
    let good = trace_dir(tmp.path(), "good", 2, 0);
    let broken = tmp.path().join("broken");
    std::fs::create_dir_all(&broken).unwrap();
    for i in 0..2 {
        let escape = json!({"op": "write", "path": "../../escaped.txt", "content": "x"});
        let trace = format!("{}\n{escape}\n", json!({"op": "session", "n": 1}));
        std::fs::write(broken.join(format!("t{i}.jsonl")), trace).unwrap();
    }
    let out = tmp.path().join("run");
    let output = loopbench()
        .args(["replay", "--quiet"])
        .arg(&good)
        .arg(&broken)
        .arg("--task")
        .arg(latefees())
        .args(["--format", "json", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    // The bad traces make it exit 2; the arm is named whatever the exit code.
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "warning: arm with no usable sessions: broken (all 2 sessions ended in error)"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("sessions: good"), "{stderr}");
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(md.contains("## Arms with no usable sessions"), "{md}");
    assert!(
        md.contains("broken (all 2 sessions ended in error)"),
        "{md}"
    );
}
