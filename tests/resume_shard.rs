//! Crash-safe resume and sharding: the tables of an interrupted-then-resumed run, and of
//! merged shards, are byte-identical to those of an uninterrupted single run.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{loopbench, repo_root};
use predicates::prelude::*;

const TABLES: &[&str] = &["sessions.csv", "trials.csv"];

fn run_args(out: &Path) -> Vec<String> {
    vec![
        "run".into(),
        repo_root()
            .join("suites/seed-replication")
            .display()
            .to_string(),
        "--arms".into(),
        "json,crash".into(),
        "--replicates".into(),
        "2".into(),
        "--seed".into(),
        "5".into(),
        "--quiet".into(),
        "--out".into(),
        out.display().to_string(),
    ]
}

fn reference(tmp: &Path) -> PathBuf {
    let out = tmp.join("reference");
    loopbench().args(run_args(&out)).assert().success();
    out
}

fn assert_same_tables(a: &Path, b: &Path) {
    for table in TABLES {
        assert_eq!(
            std::fs::read_to_string(a.join(table)).unwrap(),
            std::fs::read_to_string(b.join(table)).unwrap(),
            "{table} differs between {} and {}",
            a.display(),
            b.display()
        );
    }
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

#[test]
fn a_run_killed_with_sigkill_then_resumed_equals_an_uninterrupted_run() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = reference(tmp.path());
    let total = lines(&reference.join("sessions.jsonl"));

    let out = tmp.path().join("killed");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("loopbench"))
        .args(run_args(&out))
        .args(["--jobs", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(300);
    while lines(&out.join("sessions.jsonl")) < total / 3 {
        assert!(
            Instant::now() < deadline,
            "the run never got a third of the way"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the run finished before it could be killed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert!(lines(&out.join("sessions.jsonl")) < total);

    loopbench()
        .args(["resume", "--quiet"])
        .arg(&out)
        .assert()
        .success()
        .stderr(predicate::str::contains("resuming"));
    assert_same_tables(&reference, &out);
    // No record lost or duplicated.
    assert_eq!(lines(&out.join("sessions.jsonl")), total);
    assert_eq!(
        lines(&out.join("trials.jsonl")),
        lines(&reference.join("trials.jsonl"))
    );
}

#[test]
fn resume_refuses_a_suite_that_changed_since_the_run_started() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite");
    std::fs::create_dir(&suite).unwrap();
    let shipped = repo_root().join("suites/seed-replication");
    std::fs::copy(shipped.join("suite.toml"), suite.join("suite.toml")).unwrap();
    std::os::unix::fs::symlink(shipped.join("tasks"), suite.join("tasks")).unwrap();
    let out = tmp.path().join("run");
    loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--arms", "json", "--replicates", "1", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(suite.join("suite.toml")).unwrap();
    std::fs::write(
        suite.join("suite.toml"),
        text.replace("crash_rate = 0.25", "crash_rate = 0.5"),
    )
    .unwrap();
    loopbench()
        .arg("resume")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("changed since this run started"));
}

#[test]
fn resume_refuses_a_run_another_loopbench_version_started_and_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    loopbench()
        .arg("run")
        .arg(repo_root().join("suites/seed-replication"))
        .args(["--arms", "json", "--replicates", "1", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    // As a run another version started and a crash cut short: its last trial lost.
    let manifest = out.join("manifest.json");
    let mut fields: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&manifest).unwrap()).unwrap();
    let ours = fields["loopbench_version"].as_str().unwrap().to_string();
    fields["loopbench_version"] = "0.0.1".into();
    std::fs::write(&manifest, fields.to_string()).unwrap();
    let trials = std::fs::read_to_string(out.join("trials.jsonl")).unwrap();
    let kept: Vec<&str> = trials.lines().collect();
    std::fs::write(
        out.join("trials.jsonl"),
        kept[..kept.len() - 1].join("\n") + "\n",
    )
    .unwrap();
    let before: Vec<(String, Vec<u8>)> = ["trials.jsonl", "sessions.jsonl", "manifest.json"]
        .iter()
        .map(|f| (f.to_string(), std::fs::read(out.join(f)).unwrap()))
        .collect();
    loopbench()
        .arg("resume")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "the loopbench version differs (0.0.1 when the run started, {ours} now)"
        )));
    for (file, bytes) in before {
        assert!(
            std::fs::read(out.join(&file)).unwrap() == bytes,
            "{file} changed"
        );
    }
}

#[test]
fn merged_shards_equal_a_single_run_and_mismatched_runs_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let reference = reference(tmp.path());
    let mut shards = Vec::new();
    let slice = "these numbers are of this shard's slice of the trials, not of the study";
    for shard in ["1/2", "2/2"] {
        let out = tmp.path().join(format!("shard-{}", &shard[..1]));
        let printed = loopbench()
            .args(run_args(&out))
            .args(["--shard", shard, "--jobs", "2"])
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        // A shard's verdict compares the arms on its slice: every report of it says so.
        let printed = String::from_utf8(printed).unwrap();
        assert!(
            printed.contains(&format!("(shard {shard}: {slice}")),
            "{printed}"
        );
        for file in ["summary.md", "report.html"] {
            let text = std::fs::read_to_string(out.join(file)).unwrap();
            assert!(text.contains(&format!("shard {shard}: {slice}")), "{file}");
        }
        shards.push(out);
    }
    let merged = tmp.path().join("merged");
    loopbench()
        .arg("merge")
        .args(&shards)
        .arg("--out")
        .arg(&merged)
        .assert()
        .success();
    assert_same_tables(&reference, &merged);
    for file in ["summary.md", "report.html"] {
        let text = std::fs::read_to_string(merged.join(file)).unwrap();
        assert!(
            !text.contains(slice),
            "the merged run's {file} calls itself a shard"
        );
    }
    // A gate on a shard runs, and warns that it judges a slice.
    loopbench()
        .arg("compare")
        .arg(&merged)
        .arg(&shards[0])
        .args(["--metric", "premature_done", "--max-increase", "0.99"])
        .assert()
        .success()
        .stderr(predicates::str::contains(format!("is shard 1/2: {slice}")));

    // A shard of another seed is refused, and so is an incomplete set.
    let other = tmp.path().join("other-seed");
    let mut args = run_args(&other);
    args[7] = "6".into();
    loopbench()
        .args(args)
        .args(["--shard", "2/2"])
        .assert()
        .success();
    loopbench()
        .arg("merge")
        .arg(&shards[0])
        .arg(&other)
        .arg("--out")
        .arg(tmp.path().join("bad"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("seed differs"));
    loopbench()
        .arg("merge")
        .arg(&shards[0])
        .arg("--out")
        .arg(tmp.path().join("partial"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("2/2"));
}

#[test]
fn a_bad_shard_argument_exits_2() {
    loopbench()
        .arg("run")
        .arg(repo_root().join("suites/seed-replication"))
        .args(["--shard", "3/2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("I/N"));
}

/// The lines of `stderr` that warn about too few sessions.
fn power_warnings(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.contains("cannot reliably detect"))
        .map(str::to_string)
        .collect()
}

#[test]
fn the_power_warning_of_a_sharded_run_is_given_once_at_merge_for_the_whole_study() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = repo_root().join("suites/seed-replication");
    let mut shards = Vec::new();
    for i in 1..=2 {
        let out = tmp.path().join(format!("shard-{i}"));
        let done = loopbench()
            .arg("run")
            .arg(&suite)
            .args(["--arms", "json,markdown", "--replicates", "2", "--quiet"])
            .args(["--shard", &format!("{i}/2"), "--out"])
            .arg(&out)
            .assert()
            .success();
        assert_eq!(
            power_warnings(&done.get_output().stderr),
            Vec::<String>::new(),
            "shard {i} warned"
        );
        shards.push(out);
    }
    let merged = loopbench()
        .arg("merge")
        .args(&shards)
        .arg("--out")
        .arg(tmp.path().join("merged"))
        .assert()
        .success();
    let warnings = power_warnings(&merged.get_output().stderr);
    // Once per arm, with the merged study's sessions (summary.csv's n), not a shard's.
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    let summary = common::read_csv(&tmp.path().join("merged/summary.csv"));
    for (warning, arm) in warnings.iter().zip(["json", "markdown"]) {
        let n = &summary
            .iter()
            .find(|r| r["metric"] == "premature_done" && r["arm"] == arm)
            .unwrap()["n"];
        assert!(
            warning.starts_with(&format!(
                "warning: arm '{arm}': premature_done: {n} sessions per arm"
            )),
            "{warning}"
        );
    }
    // The same study run in one go warns the same way.
    let single = loopbench()
        .arg("run")
        .arg(&suite)
        .args([
            "--arms",
            "json,markdown",
            "--replicates",
            "2",
            "--quiet",
            "--out",
        ])
        .arg(tmp.path().join("single"))
        .assert()
        .success();
    assert_eq!(power_warnings(&single.get_output().stderr), warnings);
}
