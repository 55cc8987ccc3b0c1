//! `replay` runs on the same engine as `run`: `--jobs`, Ctrl-C and `resume` work for
//! it, and the tables do not depend on how many trials ran at once.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{Trace, loopbench, sh_task};

/// `n` traces in `dir/traces`, each of two sessions that write a feature's file, run a
/// short command and commit.
fn traces(dir: &Path, n: usize, pause: &str) -> PathBuf {
    let traces = dir.join("traces");
    std::fs::create_dir_all(&traces).unwrap();
    for i in 0..n {
        let f = i % 3 + 1;
        let text = Trace::new()
            .session(1)
            .write(&format!("src/f{f}.txt"), "x")
            .run(&format!("sleep {pause}; git add -A && git commit -qm s1"))
            .end("completed")
            .session(2)
            .delete(&format!("tests/check_F{f}.sh"))
            .run(&format!("sleep {pause}"))
            .end("completed")
            .text();
        std::fs::write(traces.join(format!("t{i:02}.jsonl")), text).unwrap();
    }
    traces
}

fn replay(traces: &Path, task: &Path, out: &Path, jobs: &str) -> assert_cmd::Command {
    let mut cmd = loopbench();
    cmd.arg("replay")
        .arg(traces)
        .arg("--task")
        .arg(task)
        .args(["--format", "json", "--quiet", "--jobs", jobs, "--out"])
        .arg(out);
    cmd
}

#[test]
fn replay_tables_are_byte_identical_at_jobs_1_and_2() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let traces = traces(tmp.path(), 6, "0");
    let one = tmp.path().join("one");
    let two = tmp.path().join("two");
    replay(&traces, &task, &one, "1").assert().success();
    replay(&traces, &task, &two, "2").assert().success();
    for file in [
        "sessions.csv",
        "trials.csv",
        "summary.csv",
        "summary.json",
        "summary.md",
    ] {
        let a = std::fs::read(one.join(file)).unwrap();
        let b = std::fs::read(two.join(file)).unwrap();
        assert!(a == b, "{file} differs between --jobs 1 and --jobs 2");
    }
    assert_eq!(common::read_csv(&one.join("trials.csv")).len(), 6);
}

#[test]
fn jobs_0_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let traces = traces(tmp.path(), 1, "0");
    replay(&traces, &task, &tmp.path().join("out"), "0")
        .assert()
        .code(2)
        .stderr(predicates::str::contains("at least 1"));
}

#[test]
fn an_interrupted_replay_resumes_to_the_tables_of_an_uninterrupted_one() {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let traces = traces(tmp.path(), 8, "0.4");
    let whole = tmp.path().join("whole");
    replay(&traces, &task, &whole, "2").assert().success();

    let out = tmp.path().join("cut");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("loopbench"))
        .arg("replay")
        .arg(&traces)
        .arg("--task")
        .arg(&task)
        .args(["--format", "json", "--quiet", "--jobs", "2", "--out"])
        .arg(&out)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(out.join("trials.jsonl")).map_or(true, |t| t.lines().count() < 1)
    {
        assert!(Instant::now() < deadline, "no trial finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3), "an interrupted replay exits 3");
    let finished = std::fs::read_to_string(out.join("trials.jsonl")).unwrap();
    assert!(
        finished.lines().count() < 8,
        "the interrupt came too late to test anything"
    );

    loopbench()
        .arg("resume")
        .arg(&out)
        .arg("--quiet")
        .assert()
        .success();
    for file in ["sessions.csv", "trials.csv", "summary.csv"] {
        let a = std::fs::read(whole.join(file)).unwrap();
        let b = std::fs::read(out.join(file)).unwrap();
        assert!(a == b, "{file} differs after resume");
    }
}
