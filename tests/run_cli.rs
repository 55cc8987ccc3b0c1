//! `loopbench run` and `loopbench validate` end to end on real suites.

use crate::common;

use std::path::{Path, PathBuf};

use common::{loopbench, read_csv, read_jsonl, repo_root};
use predicates::prelude::*;

fn shipped() -> PathBuf {
    repo_root().join("suites/seed-replication")
}

/// A copy of the shipped suite whose suite.toml is `edit`ed.
fn edited_suite(dir: &Path, edit: impl Fn(String) -> String) -> PathBuf {
    let suite = dir.join("suite");
    std::fs::create_dir_all(&suite).unwrap();
    let text = std::fs::read_to_string(shipped().join("suite.toml")).unwrap();
    std::fs::write(suite.join("suite.toml"), edit(text)).unwrap();
    std::os::unix::fs::symlink(shipped().join("tasks"), suite.join("tasks")).unwrap();
    suite
}

#[test]
fn validate_accepts_the_shipped_suite() {
    loopbench()
        .arg("validate")
        .arg(shipped())
        .assert()
        .success()
        .stdout(predicate::str::contains("11 arms x 2 tasks"))
        .stdout(predicate::str::contains(
            "task todo: 9 features, goal contract with 2 acceptance and 2 forbidden",
        ));
}

#[test]
fn validate_names_a_misspelled_key_its_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = edited_suite(tmp.path(), |t| {
        t.replacen("session_turns = 60", "sesion_turns = 60", 1)
    });
    common::assert_validate_refuses_at(&suite, "sesion_turns", "sesion_turns");
}

#[test]
fn validate_rejects_an_arm_with_an_undefined_agent_or_a_bad_format() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = edited_suite(tmp.path(), |t| {
        t.replacen("agent = \"sim\"", "agent = \"claude\"", 1)
    });
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("agent 'claude'"));
    let tmp = tempfile::tempdir().unwrap();
    let suite = edited_suite(tmp.path(), |t| {
        t.replacen("list_format = \"json\"", "list_format = \"xml\"", 1)
    });
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("xml"));
}

#[test]
fn validate_of_a_missing_suite_exits_2() {
    loopbench()
        .args(["validate", "/nonexistent/suite"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("/nonexistent/suite"));
}

#[test]
fn run_writes_every_results_file_and_says_the_agent_is_simulated() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    loopbench()
        .arg("run")
        .arg(shipped())
        .args([
            "--arms",
            "json,gate",
            "--replicates",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    for file in [
        "manifest.json",
        "sessions.jsonl",
        "trials.jsonl",
        "sessions.csv",
        "trials.csv",
    ] {
        assert!(out.join(file).is_file(), "{file} missing");
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["simulated"], serde_json::json!(true));
    assert_eq!(manifest["arms"], serde_json::json!(["json", "gate"]));
    let trials = read_jsonl(&out.join("trials.jsonl"));
    assert_eq!(trials.len(), 4);
    let sessions = read_csv(&out.join("sessions.csv"));
    // Session 0 of an arm with an initializer scaffolds.
    assert!(
        sessions
            .iter()
            .any(|s| s["session"] == "0" && s["kind"] == "initializer")
    );
    // A harness-owned gate never tells the next session anything false.
    for s in sessions.iter().filter(|s| s["arm"] == "gate") {
        assert!(
            s["told_false"].is_empty() || s["told_false"] == "0",
            "{s:?}"
        );
    }
}

#[test]
fn the_same_seed_gives_byte_identical_tables_whatever_the_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let run = |jobs: &str, name: &str| {
        let out = tmp.path().join(name);
        loopbench()
            .arg("run")
            .arg(shipped())
            .args([
                "--arms",
                "markdown,crash",
                "--replicates",
                "2",
                "--seed",
                "11",
                "--quiet",
                "--jobs",
                jobs,
                "--out",
            ])
            .arg(&out)
            .assert()
            .success();
        out
    };
    let a = run("1", "a");
    let b = run("2", "b");
    for file in ["sessions.csv", "trials.csv"] {
        assert_eq!(
            std::fs::read(a.join(file)).unwrap(),
            std::fs::read(b.join(file)).unwrap(),
            "{file} differs"
        );
    }
}

#[test]
fn run_with_an_unknown_arm_exits_2_and_lists_the_arms() {
    loopbench()
        .arg("run")
        .arg(shipped())
        .args(["--arms", "jsno", "--out", "/nonexistent/never-written"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("jsno"))
        .stderr(predicate::str::contains("markdown"));
}

#[test]
fn a_task_name_that_is_not_a_simple_name_is_refused_by_validate_run_and_replay_at_its_line() {
    for name in ["../../x", "../../../../x", "..", ".", "a/b", ""] {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("deep/er");
        std::fs::create_dir_all(&root).unwrap();
        common::command::script(&root, "agent.sh", "echo hello\n");
        let agents = "[agents.a]\ndriver = \"command\"\nprogram = \"./agent.sh\"\n";
        let suite =
            common::command::sh_suite(&root, agents, &common::command::arm("a", "a", 1, ""));
        let task_toml = root.join("shtask/task.toml");
        let text = std::fs::read_to_string(&task_toml).unwrap();
        std::fs::write(
            &task_toml,
            text.replacen("name = \"shtask\"", &format!("name = \"{name}\""), 1),
        )
        .unwrap();
        let at = format!("task.toml:1:8: task name '{name}' must be");
        loopbench()
            .arg("validate")
            .arg(&suite)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(&at));
        let out = root.join("out");
        loopbench()
            .arg("run")
            .arg(&suite)
            .args(["--quiet", "--out"])
            .arg(&out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(&at));
        assert!(!out.exists(), "{name}: a refused run writes nothing");
        let trace = common::Trace::new().session(1).end("completed").save(&root);
        loopbench()
            .arg("replay")
            .arg(&trace)
            .arg("--task")
            .arg(root.join("shtask"))
            .args(["--format", "json", "--out"])
            .arg(root.join("replayed"))
            .assert()
            .code(2)
            .stderr(predicate::str::contains(&at));
        let left: Vec<_> = walkdir::WalkDir::new(tmp.path())
            .into_iter()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().starts_with("session-"))
            .map(|e| e.path().display().to_string())
            .collect();
        assert!(left.is_empty(), "{name}: captures written at {left:?}");
    }
}

#[test]
fn a_task_without_oracle_tests_is_a_warning_on_stderr_and_a_test_found_nowhere_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    common::command::script(tmp.path(), "agent.sh", "true\n");
    let agents = "[agents.a]\ndriver = \"command\"\nprogram = \"./agent.sh\"\n";
    let suite =
        common::command::sh_suite(tmp.path(), agents, &common::command::arm("a", "a", 1, ""));
    let task = tmp.path().join("shtask");
    std::fs::remove_dir_all(task.join("oracle")).unwrap();
    let warning = "warning: task 'shtask' has no oracle/tests";
    let unseen =
        "verified then equals self_verified, so tests the agent weakens cannot be detected";
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .success()
        .stdout(predicate::str::contains("warning").not())
        .stderr(predicate::str::contains(warning))
        .stderr(predicate::str::contains(unseen));
    loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--out"])
        .arg(tmp.path().join("out"))
        .assert()
        .success()
        .stdout(predicate::str::contains(warning).not())
        .stderr(predicate::str::contains(warning));
    let trace = common::Trace::new()
        .session(1)
        .end("completed")
        .save(tmp.path());
    loopbench()
        .arg("replay")
        .arg(&trace)
        .arg("--task")
        .arg(&task)
        .args(["--format", "json", "--out"])
        .arg(tmp.path().join("replayed"))
        .assert()
        .success()
        .stderr(predicate::str::contains(warning));

    // The tests lived only in the oracle: every verify now names a test found nowhere.
    std::fs::remove_dir_all(task.join("repo/tests")).unwrap();
    let line = common::line_of(&task.join("task.toml"), "verify = \"sh tests/check_F1.sh\"");
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "task.toml:{line}:10: feature 'F1': verify names test 'tests/check_F1.sh', which is in neither repo/ nor oracle/tests"
        )));
}

#[test]
fn validate_prints_each_arm_in_the_suite_files_own_spellings() {
    let out = common::loopbench()
        .arg("validate")
        .arg(common::repo_root().join("suites/seed-replication"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    let single = text.lines().find(|l| l.contains("arm single:")).unwrap();
    for spelling in [
        "strategy = \"single\"",
        "ledger = \"memo\"",
        "list_format = \"json\"",
        "initializer = true",
    ] {
        assert!(single.contains(spelling), "{spelling} missing: {single}");
    }
    assert!(
        !text.contains("Incremental") && !text.contains("Memo"),
        "{text}"
    );
}
