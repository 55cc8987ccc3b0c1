//! `loopbench replay` end to end: the shipped example, bad input, confinement of paths,
//! and the guarantees of observation.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{Trace, loopbench, read_csv, read_jsonl, replay_ok, repo_root, sh_task};
use loopbench::feature_list::ListFormat::Json;
use predicates::prelude::*;
use serde_json::json;

fn example_task() -> std::path::PathBuf {
    repo_root().join("suites/examples/tasks/latefees")
}

fn example_trace() -> std::path::PathBuf {
    repo_root().join("suites/examples/traces/latefees-every-metric.jsonl")
}

#[test]
fn shipped_example_reports_claim_test_removal_rewording_and_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let r = replay_ok(&example_trace(), &example_task(), Json, tmp.path());
    // Session 2 claims F2 (its pristine test fails), deletes tests/test_export.py
    // (three tests), rewords F3, repeats a reminder and is interrupted.
    assert_eq!(r.s(2, "outcome"), json!("interrupted"));
    assert_eq!(r.s(2, "premature_claims"), json!(1));
    assert_eq!(r.s(2, "tests_removed"), json!(3));
    assert_eq!(r.s(2, "desc_edits"), json!(1));
    assert_eq!(r.s(2, "step_edits"), json!(1));
    assert_eq!(r.s(2, "dup_side_effects"), json!(1));
    assert_eq!(r.s(2, "clean_tree"), json!(false));
    assert_eq!(r.s(2, "actions_failed"), json!(1));
    // Session 3 resumes, makes the claim true, and is told the false claim.
    assert_eq!(r.s(3, "resumed"), json!(true));
    assert_eq!(r.s(3, "told_false"), json!(1));
    assert_eq!(r.s(3, "newly_verified"), json!(1));
    assert_eq!(r.s(3, "resume_success"), json!(true));
    // Session 4 weakens the export tests and claims F3; session 5 breaks F1.
    assert_eq!(r.s(4, "tests_weakened"), json!(1));
    assert_eq!(r.s(4, "premature_claims"), json!(1));
    assert_eq!(r.s(4, "entries_added"), json!(1));
    assert_eq!(r.s(5, "regressions"), json!(1));
    assert_eq!(r.s(5, "entries_removed"), json!(1));
    // Session 6 mangles the list and declares victory.
    assert_eq!(r.s(6, "list_parse_ok"), json!(false));
    assert_eq!(r.trials[0]["premature_victory"], json!(true));
    assert_eq!(r.trials[0]["turns"], json!(41));

    // The CSV says the same as the JSONL.
    let rows = read_csv(&r.out.join("sessions.csv"));
    assert_eq!(rows.len(), 6);
    let csv = |n: usize, col: &str| rows[n - 1][col].clone();
    assert_eq!(csv(2, "premature_claims"), "1");
    assert_eq!(csv(2, "tests_removed"), "3");
    assert_eq!(csv(2, "desc_edits"), "1");
    assert_eq!(csv(2, "outcome"), "interrupted");
    assert_eq!(csv(3, "resumed"), "true");
    assert_eq!(csv(3, "resume_success"), "true");
    assert_eq!(csv(1, "resume_success"), "");
    assert_eq!(csv(6, "newly_claimed"), "");
    assert_eq!(csv(6, "list_parse_ok"), "false");
    let trials = read_csv(&r.out.join("trials.csv"));
    assert_eq!(trials[0]["premature_victory"], "true");
    assert_eq!(trials[0]["ended_by"], "declared_complete");
}

#[test]
fn every_csv_cell_matches_its_jsonl_record() {
    let tmp = tempfile::tempdir().unwrap();
    let r = replay_ok(&example_trace(), &example_task(), Json, tmp.path());
    let rows = read_csv(&r.out.join("sessions.csv"));
    for (row, record) in rows.iter().zip(&r.sessions) {
        for (column, cell) in row {
            let expected = match &record[column] {
                serde_json::Value::Null => String::new(),
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            assert_eq!(cell, &expected, "column {column}");
        }
    }
}

#[test]
fn the_manifest_describes_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let r = replay_ok(&example_trace(), &example_task(), Json, tmp.path());
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(r.out.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["driver"], json!("replay"));
    assert_eq!(manifest["simulated"], json!(false));
    assert_eq!(manifest["tasks"], json!(["latefees"]));
    assert!(manifest["finished"].is_string());
    assert!(manifest["suite_hash"].as_str().unwrap().len() == 64);
}

fn replay_cmd(trace: &Path, task: &Path, out: &Path) -> assert_cmd::assert::Assert {
    loopbench()
        .arg("replay")
        .arg(trace)
        .arg("--task")
        .arg(task)
        .args(["--format", "json", "--out"])
        .arg(out)
        .assert()
}

#[test]
fn a_sandbox_that_cannot_be_confined_refuses_the_replay_instead_of_checking_on_the_host() {
    // As root, the sandbox runs as an unprivileged user; a setting that names root (or
    // anything else the harness cannot use) leaves no confined sandbox to make. Before,
    // a failed confinement check read as "no bwrap" and the checks ran on the host.
    if !loopbench::sandbox::bwrap_works() || !nix::unistd::geteuid().is_root() {
        eprintln!("skipping: needs a root harness where bwrap works");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // No `run` action: only the checks would have run, on the host, silently.
    let trace = tmp.path().join("no-run-actions.jsonl");
    let text = std::fs::read_to_string(example_trace()).unwrap();
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("\"op\": \"run\""))
        .collect();
    std::fs::write(&trace, kept.join("\n") + "\n").unwrap();
    let out = tmp.path().join("out");
    loopbench()
        .arg("replay")
        .arg(&trace)
        .arg("--task")
        .arg(example_task())
        .args(["--format", "json", "--out"])
        .arg(&out)
        .env("LOOPBENCH_SANDBOX_USER", "0:0")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "replay runs checks and `run` actions under bubblewrap, but LOOPBENCH_SANDBOX_USER: \
             expected UID:GID, two numbers other than 0, got '0:0'",
        ));
    assert!(!out.join("sessions.csv").exists());
}

#[test]
fn a_replay_of_an_earlier_version_resumes_in_the_sandbox_its_manifest_names() {
    // Earlier manifests said `verify_sandboxed: true` alone: a resume that read it as
    // no sandbox would run the rest of the traces' commands on the host.
    if !loopbench::sandbox::bwrap_works() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: bwrap does not work here"
        );
        eprintln!("skipping: bwrap does not work here");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    replay_cmd(&example_trace(), &example_task(), &out).success();
    let sessions = std::fs::read_to_string(out.join("sessions.jsonl")).unwrap();
    let manifest_file = out.join("manifest.json");
    let mut manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest_file).unwrap()).unwrap();
    assert_eq!(manifest["verify_sandbox"], json!("bwrap"));
    assert_eq!(manifest["verify_sandboxed"], json!(true));
    // The run as an earlier version left it when it was killed before its one trial
    // was recorded.
    manifest.as_object_mut().unwrap().remove("verify_sandbox");
    std::fs::write(&manifest_file, manifest.to_string()).unwrap();
    for records in ["sessions.jsonl", "trials.jsonl"] {
        std::fs::write(out.join(records), "").unwrap();
    }
    loopbench().arg("resume").arg(&out).assert().success();
    let resumed: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest_file).unwrap()).unwrap();
    assert_eq!(resumed["verify_sandbox"], json!("bwrap"), "{resumed}");
    let again = std::fs::read_to_string(out.join("sessions.jsonl")).unwrap();
    assert_eq!(again.lines().count(), sessions.lines().count());
}

#[test]
fn a_run_action_that_reaches_a_limit_of_the_sandbox_says_so_in_its_session() {
    let enforcement = loopbench::sandbox::Enforcement::here();
    if !loopbench::sandbox::bwrap_works()
        || matches!(enforcement, loopbench::sandbox::Enforcement::None(_))
    {
        eprintln!("skipping: no sandbox with limits here");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    // More processes at once than a replay's sandbox allows (max_pids = 1024).
    let trace = Trace::new()
        .session(1)
        .run("for i in $(seq 1100); do sleep 5 & done; exit 0")
        .end("completed")
        .save(tmp.path());
    let replayed = replay_ok(&trace, &task, Json, tmp.path());
    let error = replayed.sessions[0]["error"].as_str().unwrap_or_default();
    assert!(
        error.contains(
            "line 2: 'for i in $(seq 1100); do sleep 5 & done; exit 0' reached max_pids = 1024"
        ),
        "{error}"
    );
}

#[test]
fn a_trace_writing_above_the_work_directory_exits_2_names_the_path_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let victim = format!("loopbench-escape-{}", std::process::id());
    let rel = format!("../../{victim}");
    let trace = Trace::new()
        .session(1)
        .write("src/f1.txt", "ok")
        .write(&rel, "escaped")
        .end("completed")
        .save(tmp.path());
    let out = tmp.path().join("results");
    replay_cmd(&trace, &task, &out)
        .code(2)
        .stderr(predicate::str::contains(rel.as_str()));
    assert!(!Path::new("/tmp").join(&victim).exists());
    // The trial is recorded as an error, not lost.
    let sessions = read_jsonl(&out.join("sessions.jsonl"));
    assert_eq!(sessions[0]["outcome"], json!("error"));
    let trials = read_jsonl(&out.join("trials.jsonl"));
    assert_eq!(trials[0]["ended_by"], json!("error"));
}

#[test]
fn a_trace_writing_an_absolute_path_exits_2_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let target = tmp.path().join("outside.txt");
    let trace = Trace::new()
        .session(1)
        .write(target.to_str().unwrap(), "escaped")
        .end("completed")
        .save(tmp.path());
    replay_cmd(&trace, &task, &tmp.path().join("results"))
        .code(2)
        .stderr(predicate::str::contains(target.to_str().unwrap()));
    assert!(!target.exists());
}

#[test]
fn a_trace_writing_through_a_symlink_that_leads_outside_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let outside = tmp.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let trace = Trace::new()
        .session(1)
        .run(&format!("ln -s {} link", outside.display()))
        .write("link/planted.txt", "escaped")
        .end("completed")
        .save(tmp.path());
    replay_cmd(&trace, &task, &tmp.path().join("results"))
        .code(2)
        .stderr(predicate::str::contains("link/planted.txt"));
    assert!(!outside.join("planted.txt").exists());
}

#[test]
fn a_malformed_line_3_exits_2_names_line_3_and_writes_no_results() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let trace = tmp.path().join("bad.jsonl");
    std::fs::write(
        &trace,
        "{\"op\":\"session\",\"n\":1}\n{\"op\":\"run\",\"cmd\":\"true\"}\n{\"op\":\"write\",\"path\":\"a\"\n",
    )
    .unwrap();
    let out = tmp.path().join("results");
    replay_cmd(&trace, &task, &out)
        .code(2)
        .stderr(predicate::str::contains("bad.jsonl:3:"));
    assert!(!out.exists());
}

#[test]
fn a_missing_trace_or_task_exits_2_with_a_message() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    replay_cmd(&tmp.path().join("nope.jsonl"), &task, &tmp.path().join("r"))
        .code(2)
        .stderr(predicate::str::contains("nope.jsonl"));
    let trace = Trace::new().session(1).save(tmp.path());
    replay_cmd(&trace, &tmp.path().join("no-task"), &tmp.path().join("r"))
        .code(2)
        .stderr(predicate::str::contains("no-task"));
}

#[test]
fn a_task_with_a_misspelled_key_exits_2_naming_key_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let toml = std::fs::read_to_string(task.join("task.toml")).unwrap();
    std::fs::write(
        task.join("task.toml"),
        toml.replacen("verify =", "verfiy =", 1),
    )
    .unwrap();
    let trace = Trace::new().session(1).save(tmp.path());
    replay_cmd(&trace, &task, &tmp.path().join("r"))
        .code(2)
        .stderr(predicate::str::contains("task.toml:10:"))
        .stderr(predicate::str::contains("verfiy"));
}

#[test]
fn results_already_in_the_out_directory_are_never_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let trace = Trace::new().session(1).end("completed").save(tmp.path());
    let out = tmp.path().join("results");
    replay_cmd(&trace, &task, &out).success();
    let before = std::fs::read(out.join("sessions.jsonl")).unwrap();
    replay_cmd(&trace, &task, &out)
        .code(2)
        .stderr(predicate::str::contains("already holds results"));
    assert_eq!(std::fs::read(out.join("sessions.jsonl")).unwrap(), before);
}

#[test]
fn each_feature_is_verified_once_per_observation_and_after_is_reused_as_before() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    // No oracle: one verify per feature per observation. Each run leaves a mark outside.
    std::fs::remove_dir_all(task.join("oracle")).unwrap();
    let counter = tmp.path().join("verify-runs.log");
    let toml = std::fs::read_to_string(task.join("task.toml"))
        .unwrap()
        .replace(
            "verify = \"sh tests/",
            &format!("verify = \"echo x >> {} && sh tests/", counter.display()),
        );
    std::fs::write(task.join("task.toml"), toml).unwrap();
    let trace = Trace::new()
        .session(1)
        .write("src/a.txt", "1")
        .end("completed")
        .session(2)
        .write("src/b.txt", "2")
        .end("completed")
        .save(tmp.path());
    // The count is kept outside the tree, which a sandboxed check cannot write: this
    // test measures how often checks run, so it runs them on the host.
    loopbench()
        .arg("replay")
        .arg(&trace)
        .arg("--task")
        .arg(&task)
        .args(["--format", "json", "--unsandboxed", "--out"])
        .arg(tmp.path().join("results"))
        .assert()
        .success();
    let runs = std::fs::read_to_string(&counter).unwrap().lines().count();
    // 3 features x 3 observations (before 1, after 1 = before 2, after 2).
    assert_eq!(runs, 9);
}

#[test]
fn an_edit_whose_old_text_is_missing_is_a_failed_action_and_the_trial_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let trace = Trace::new()
        .session(1)
        .op(json!({"op":"edit","path":"feature_list.json","old":"no such text","new":"x"}))
        .write("src/f1.txt", "x")
        .end("completed")
        .session(2)
        .end("completed")
        .save(tmp.path());
    let r = replay_ok(&trace, &task, Json, tmp.path());
    assert_eq!(r.s(1, "actions_failed"), json!(1));
    assert_eq!(r.s(1, "outcome"), json!("completed"));
    assert!(r.s(1, "error").as_str().unwrap().contains("line 2"));
    assert_eq!(r.s(1, "newly_verified"), json!(1));
    assert_eq!(r.sessions.len(), 2);
}

#[test]
fn observing_never_changes_the_work_directory_byte_for_byte() {
    use loopbench::observe::{Observer, VerifyCache};
    use loopbench::suite::Task;
    use loopbench::workspace::Workspace;

    let tmp = tempfile::tempdir().unwrap();
    let task = Task::load(&example_task()).unwrap();
    let ws = Workspace::create(&task, Json).unwrap();
    // A weakened test makes the observer lay the oracle over a copy; python would
    // leave __pycache__ behind if it ran in the work directory.
    std::fs::write(
        ws.work_dir.join("tests/test_export.py"),
        "import unittest\n",
    )
    .unwrap();
    std::fs::write(ws.work_dir.join("PROGRESS.md"), "notes\n").unwrap();
    let _ = tmp;
    let snapshot = |root: &Path| -> BTreeMap<String, (Vec<u8>, u32)> {
        use std::os::unix::fs::PermissionsExt;
        walkdir::WalkDir::new(root)
            .into_iter()
            .map(|e| e.unwrap())
            .map(|e| {
                let meta = std::fs::symlink_metadata(e.path()).unwrap();
                let bytes = if meta.is_file() {
                    std::fs::read(e.path()).unwrap()
                } else {
                    vec![]
                };
                (
                    e.path().strip_prefix(root).unwrap().display().to_string(),
                    (bytes, meta.permissions().mode()),
                )
            })
            .collect()
    };
    let before = snapshot(&ws.work_dir);
    let cache = VerifyCache::default();
    let observer = Observer::new(&task, Json, Some(&cache), 1).unwrap();
    let observation = observer.observe(&ws).unwrap();
    assert_eq!(snapshot(&ws.work_dir), before);
    // And it did run the checks: the weakened test still cannot make F3 verified.
    assert_eq!(observation.features_verified(), 0);
    assert!(!observation.clean_tree());
}

#[test]
fn a_run_action_starts_in_its_cwd_which_is_confined_like_a_path() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    // The recorded shell had `cd`'d into src/: a bare file name lands there.
    let trace = Trace::new()
        .session(1)
        .op(json!({"op":"run","cmd":"echo x > f1.txt","cwd":"src"}))
        .op(json!({"op":"run","cmd":"echo x > f2.txt","cwd":"./src/"}))
        .op(json!({"op":"run","cmd":"echo x > never.txt","cwd":"no/such/dir"}))
        .op(json!({"op":"run","cmd":"git add -A && git commit -qm f1","cwd":"."}))
        .end("completed")
        .save(tmp.path());
    let r = replay_ok(&trace, &task, Json, tmp.path());
    assert_eq!(r.s(1, "newly_verified"), json!(2));
    assert_eq!(r.s(1, "clean_tree"), json!(true));
    // A directory that is not there fails that action; the trial goes on.
    assert_eq!(r.s(1, "actions_failed"), json!(1));
    let error = r.s(1, "error");
    assert!(
        error.as_str().unwrap().contains("line 4")
            && error.as_str().unwrap().contains("no/such/dir"),
        "{error}"
    );

    // Leaving the work directory is an error of the trace, as for a path.
    for (n, bad) in ["..", "/tmp", "src/../.."].iter().enumerate() {
        let dir = tmp.path().join(format!("bad-{n}"));
        std::fs::create_dir(&dir).unwrap();
        let trace = Trace::new()
            .session(1)
            .op(json!({"op":"run","cmd":"echo escaped > escaped.txt","cwd":bad}))
            .end("completed")
            .save(&dir);
        let out = dir.join("results");
        replay_cmd(&trace, &task, &out)
            .code(2)
            .stderr(predicate::str::contains(*bad));
        let sessions = read_jsonl(&out.join("sessions.jsonl"));
        assert_eq!(sessions[0]["outcome"], json!("error"), "{bad}");
        assert!(!tmp.path().join("escaped.txt").exists());
    }
}
