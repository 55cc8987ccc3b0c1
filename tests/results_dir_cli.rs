//! Who may write a results directory, and where output may go: one writer at a time
//! (the lock), a new run only into a new or empty directory, and no output path that
//! replaces a device, a FIFO or anything else that is not a regular file or directory.

use crate::common;

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::command::{arm, script, sh_suite};
use common::{Trace, loopbench, read_csv, sh_task};
use loopbench::run_dir::LOCK_FILE;
use predicates::prelude::*;

/// A suite whose one agent waits, once started, until `root/stop` exists (two minutes
/// at most, so that a failing test leaves nothing running); it touches `root/started`
/// when its first session begins.
fn waiting_suite(root: &Path) -> PathBuf {
    script(
        root,
        "agent.sh",
        &format!(
            "touch '{root}/started'\ni=0\nwhile [ ! -e '{root}/stop' ] && [ $i -lt 2400 ]; do sleep 0.05; i=$((i + 1)); done\n",
            root = root.display()
        ),
    );
    let agents = "[agents.wait]\ndriver = \"command\"\nprogram = \"./agent.sh\"\n";
    sh_suite(root, agents, &arm("wait", "wait", 1, ""))
}

/// `loopbench run SUITE --replicates 2 --out OUT` in the background, once its first
/// agent has started.
fn spawn_run(root: &Path, suite: &Path, out: &Path) -> Child {
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("loopbench"))
        .arg("run")
        .arg(suite)
        .args(["--quiet", "--jobs", "1", "--replicates", "2", "--out"])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !root.join("started").exists() {
        assert!(Instant::now() < deadline, "the agent never started");
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended before its agent started: {status}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child
}

fn is_locked_message(out: &Path) -> impl Predicate<str> {
    predicate::str::contains("another loopbench process")
        .and(predicate::str::contains(out.display().to_string()))
}

#[test]
fn a_second_writer_is_refused_while_a_run_is_alive_and_the_run_ends_intact() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = waiting_suite(tmp.path());
    let out = tmp.path().join("out");
    let child = spawn_run(tmp.path(), &suite, &out);
    let sessions = out.join("sessions.jsonl");
    let inode = std::fs::metadata(&sessions).unwrap().ino();

    // A refused writer answers at once; without the lock it would wait for the agent.
    let refused = Duration::from_secs(60);
    loopbench()
        .arg("resume")
        .arg(&out)
        .timeout(refused)
        .assert()
        .code(2)
        .stderr(is_locked_message(&out));
    loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--replicates", "2", "--out"])
        .arg(&out)
        .timeout(refused)
        .assert()
        .code(2)
        .stderr(is_locked_message(&out));
    loopbench()
        .arg("report")
        .arg(&out)
        .timeout(refused)
        .assert()
        .code(2)
        .stderr(is_locked_message(&out));
    assert_eq!(
        std::fs::metadata(&sessions).unwrap().ino(),
        inode,
        "sessions.jsonl was replaced under the live run"
    );

    std::fs::write(tmp.path().join("stop"), "").unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let trials = read_csv(&out.join("trials.csv"));
    assert_eq!(trials.len(), 2, "{trials:?}");
    assert_eq!(read_csv(&out.join("sessions.csv")).len(), 2);
    // The lock is gone with its process; it is no part of any table or summary.
    loopbench().arg("report").arg(&out).assert().success();
    for file in [
        "sessions.csv",
        "trials.csv",
        "summary.csv",
        "summary.json",
        "summary.md",
    ] {
        let text = std::fs::read_to_string(out.join(file)).unwrap();
        assert!(!text.contains(LOCK_FILE), "{file} mentions the lock file");
    }
}

#[test]
fn a_run_killed_with_sigkill_leaves_its_directory_free_for_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = waiting_suite(tmp.path());
    let out = tmp.path().join("out");
    let mut child = spawn_run(tmp.path(), &suite, &out);
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(out.join(LOCK_FILE).is_file());
    std::fs::write(tmp.path().join("stop"), "").unwrap();
    loopbench()
        .args(["resume", "--quiet"])
        .arg(&out)
        .assert()
        .success();
    assert_eq!(read_csv(&out.join("trials.csv")).len(), 2);
}

/// A directory holding a user's files.
fn users_dir(root: &Path) -> PathBuf {
    let dir = root.join("mine");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("notes.md"), "my notes\n").unwrap();
    std::fs::write(dir.join("summary.md"), "my summary\n").unwrap();
    dir
}

fn assert_untouched(dir: &Path) {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["notes.md", "summary.md"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("notes.md")).unwrap(),
        "my notes\n"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("summary.md")).unwrap(),
        "my summary\n"
    );
}

fn lists_the_users_files(dir: &Path) -> impl Predicate<str> {
    predicate::str::contains(dir.display().to_string())
        .and(predicate::str::contains("notes.md"))
        .and(predicate::str::contains("summary.md"))
}

/// `loopbench replay` of a one-session trace against the sh task into `out`.
fn replay(root: &Path, out: &Path) -> assert_cmd::assert::Assert {
    let task = root.join("shtask");
    if !task.exists() {
        sh_task(root);
    }
    let trace = Trace::new().session(1).end("completed").save(root);
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
fn run_replay_and_merge_refuse_an_out_directory_holding_unrelated_files_and_leave_it_alone() {
    let tmp = tempfile::tempdir().unwrap();
    let mine = users_dir(tmp.path());
    let suite = sh_suite(
        tmp.path(),
        "[agents.ok]\ndriver = \"command\"\nprogram = \"/bin/true\"\n",
        &arm("ok", "ok", 1, ""),
    );
    loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--out"])
        .arg(&mine)
        .assert()
        .code(2)
        .stderr(lists_the_users_files(&mine));
    assert_untouched(&mine);

    replay(tmp.path(), &mine)
        .code(2)
        .stderr(lists_the_users_files(&mine));
    assert_untouched(&mine);

    let shard = tmp.path().join("replayed");
    replay(tmp.path(), &shard).success();
    loopbench()
        .arg("merge")
        .arg(&shard)
        .arg("--out")
        .arg(&mine)
        .assert()
        .code(2)
        .stderr(lists_the_users_files(&mine));
    assert_untouched(&mine);
}

#[test]
fn an_empty_existing_out_directory_takes_a_run() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("empty");
    std::fs::create_dir(&out).unwrap();
    replay(tmp.path(), &out).success();
    assert_eq!(read_csv(&out.join("sessions.csv")).len(), 1);
}

#[test]
fn merge_reads_shards_that_carry_lock_files_and_keeps_them_out_of_its_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let shard = tmp.path().join("replayed");
    replay(tmp.path(), &shard).success();
    assert!(shard.join(LOCK_FILE).is_file());
    let merged = tmp.path().join("merged");
    loopbench()
        .arg("merge")
        .arg(&shard)
        .arg("--out")
        .arg(&merged)
        .assert()
        .success();
    for table in ["sessions.csv", "trials.csv"] {
        assert_eq!(
            std::fs::read(shard.join(table)).unwrap(),
            std::fs::read(merged.join(table)).unwrap(),
            "{table}"
        );
    }
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn is_fifo(path: &Path) -> bool {
    std::fs::symlink_metadata(path)
        .unwrap()
        .file_type()
        .is_fifo()
}

// Devices are tested through FIFOs: a regression must never get the chance to replace
// /dev/null on the machine running the tests (they may run as root). The unit tests of
// the output checks refuse /dev/null itself without writing.
#[test]
fn import_refuses_an_out_path_that_is_a_fifo_and_leaves_it_in_place() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("trace.jsonl");
    mkfifo(&fifo);
    loopbench()
        .args(["import", "claude-code"])
        .arg(common::repo_root().join("tests/data/claude-code/latefees/sess-a.jsonl"))
        .arg("--out")
        .arg(&fifo)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(fifo.display().to_string()))
        .stderr(predicate::str::contains("not a regular file"));
    assert!(is_fifo(&fifo));
}

#[test]
fn report_refuses_to_replace_a_summary_file_that_is_a_fifo() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("replayed");
    replay(tmp.path(), &run).success();
    let summary = run.join("summary.md");
    std::fs::remove_file(&summary).unwrap();
    mkfifo(&summary);
    loopbench()
        .arg("report")
        .arg(&run)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(summary.display().to_string()))
        .stderr(predicate::str::contains("not a regular file"));
    assert!(is_fifo(&summary));
}

#[test]
fn out_directories_that_are_devices_fifos_or_files_are_refused_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("fifo");
    mkfifo(&fifo);
    let file = tmp.path().join("file.txt");
    std::fs::write(&file, "mine\n").unwrap();
    let shard = tmp.path().join("replayed");
    replay(tmp.path(), &shard).success();
    for out in [Path::new("/dev/null"), &fifo, &file] {
        let names_it = || {
            predicate::str::contains(format!("'{}'", out.display()))
                .and(predicate::str::contains("is not a directory"))
        };
        replay(tmp.path(), out).code(2).stderr(names_it());
        loopbench()
            .arg("merge")
            .arg(&shard)
            .arg("--out")
            .arg(out)
            .assert()
            .code(2)
            .stderr(names_it());
        loopbench()
            .arg("weekly")
            .arg(tmp.path())
            .arg("--out")
            .arg(out)
            .assert()
            .code(2)
            .stderr(names_it());
    }
    assert!(is_fifo(&fifo));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "mine\n");
    assert!(
        std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device()
    );
}
