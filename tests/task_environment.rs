//! `[environment]` in `task.toml`: read and validated with file and line like the rest
//! of the file, and a task that has one refused by every command that would run it
//! outside the container sandbox (exit 2, naming the task and saying to set the
//! container sandbox, nothing written): a task never runs half on the host.

use crate::common;

use std::path::{Path, PathBuf};

use common::command::{arm, sh_suite};
use common::{Trace, loopbench, sh_task};
use loopbench::suite::{Image, Task};
use predicates::prelude::*;

/// The [`sh_task`] fixture with `table` appended to its `task.toml`.
fn task_with(root: &Path, table: &str) -> PathBuf {
    let dir = sh_task(root);
    let file = dir.join("task.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}\n{table}")).unwrap();
    dir
}

/// The line of `task.toml` in `dir` that holds `needle` (1-based).
fn line_of(dir: &Path, needle: &str) -> usize {
    let text = std::fs::read_to_string(dir.join("task.toml")).unwrap();
    text.lines().position(|l| l.contains(needle)).unwrap() + 1
}

#[test]
fn an_environment_table_is_read_with_its_defaults() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = task_with(
        tmp.path(),
        "[environment]\nimage = \"ubuntu:24.04\"\ncpus = 1.5\nmemory_mb = 2048\n\
         env = { LANG = \"C.UTF-8\" }\n",
    );
    let task = Task::load(&dir).unwrap();
    let env = task.environment.as_ref().unwrap();
    assert_eq!(env.image, Image::Reference("ubuntu:24.04".into()));
    assert_eq!(env.workdir, "/app");
    assert_eq!(env.cpus, Some(1.5));
    assert_eq!(env.memory_mb, Some(2048));
    assert_eq!(env.pids, None);
    assert!(!env.allow_internet);
    assert_eq!(env.env["LANG"], "C.UTF-8");
    assert!(task.needs_container().is_some());

    let dir = task_with(
        &tmp.path().join("b"),
        "[environment]\ndockerfile = \"env/Dockerfile\"\nworkdir = \"/work\"\npids = 64\nallow_internet = true\n",
    );
    std::fs::create_dir_all(dir.join("env")).unwrap();
    std::fs::write(dir.join("env/Dockerfile"), "FROM ubuntu:24.04\n").unwrap();
    let task = Task::load(&dir).unwrap();
    let env = task.environment.as_ref().unwrap();
    assert_eq!(env.image, Image::Dockerfile(dir.join("env/Dockerfile")));
    assert_eq!((env.workdir.as_str(), env.pids), ("/work", Some(64)));
    assert!(env.allow_internet);
}

#[test]
fn a_task_without_an_environment_runs_on_the_host_as_before() {
    let tmp = tempfile::tempdir().unwrap();
    let task = Task::load(&sh_task(tmp.path())).unwrap();
    assert!(task.environment.is_none() && task.needs_container().is_none());
}

#[test]
fn each_wrong_environment_names_its_file_line_and_what_was_expected() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "[environment]\nimage = \"ubuntu:24.04\"\nnetwork = true\n",
            "network = true",
            "unknown field `network`",
        ),
        (
            "[environment]\nimage = \"ubuntu\"\ndockerfile = \"Dockerfile\"\n",
            "dockerfile =",
            "both an image and a dockerfile",
        ),
        (
            "[environment]\nworkdir = \"/app\"\n",
            "[environment]",
            "names no image",
        ),
        (
            "[environment]\nimage = \"ubuntu 24.04\"\n",
            "image =",
            "is not an image reference",
        ),
        (
            "[environment]\ndockerfile = \"../Dockerfile\"\n",
            "dockerfile =",
            "relative to the task directory",
        ),
        (
            "[environment]\ndockerfile = \"env/Dockerfile\"\n",
            "dockerfile =",
            "is not a file",
        ),
        (
            "[environment]\nimage = \"ubuntu\"\nworkdir = \"app\"\n",
            "workdir =",
            "must be an absolute path",
        ),
        (
            "[environment]\nimage = \"ubuntu\"\nworkdir = \"/\"\n",
            "workdir =",
            "must be an absolute path",
        ),
        (
            "[environment]\nimage = \"ubuntu\"\ncpus = 0\n",
            "cpus =",
            "cpus must be a number above 0",
        ),
        (
            "[environment]\nimage = \"ubuntu\"\nmemory_mb = 0\n",
            "memory_mb =",
            "memory_mb must be at least 1",
        ),
        (
            "[environment]\nimage = \"ubuntu\"\npids = -1\n",
            "pids =",
            "",
        ),
        (
            "[environment]\nimage = \"ubuntu\"\nenv = { \"1X\" = \"a\" }\n",
            "env =",
            "'1X' is not an environment variable name",
        ),
        (
            "[environment]\nimage = \"ubuntu\"\nallow_internet = \"yes\"\n",
            "allow_internet =",
            "",
        ),
    ];
    for (i, (table, at, expected)) in cases.iter().enumerate() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = task_with(tmp.path(), table);
        let line = line_of(&dir, at);
        common::assert_task_refused_at(&dir, line, expected, i);
    }
}

const CONTAINER: &str = "[environment]\nimage = \"ubuntu:24.04\"\n";

/// What every refusal says.
fn refusal() -> impl Predicate<str> {
    predicate::str::contains("task 'shtask'")
        .and(predicate::str::contains("runs in a container of its image"))
        .and(predicate::str::contains("sandbox = \"container\""))
}

#[test]
fn run_refuses_a_container_task_before_anything_runs_or_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = tmp.path().join("agent-ran");
    let agents = format!(
        "[agents.sh]\ndriver = \"command\"\nprogram = \"/bin/sh\"\nargs = [\"-c\", \"touch {}\"]\n",
        marker.display()
    );
    let suite = sh_suite(tmp.path(), &agents, &arm("a", "sh", 1, ""));
    let toml = suite.join("shtask/task.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, format!("{text}\n{CONTAINER}")).unwrap();
    // validate reads it.
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "container of image 'ubuntu:24.04'",
        ));
    let out = tmp.path().join("results");
    loopbench()
        .arg("run")
        .arg(&suite)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(refusal());
    assert!(!out.exists(), "a refused run wrote {}", out.display());
    assert!(!marker.exists(), "the agent ran");
}

#[test]
fn check_task_outside_a_container_and_an_unsandboxed_replay_refuse_a_container_task() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = task_with(tmp.path(), CONTAINER);
    loopbench()
        .arg("check-task")
        .arg(&dir)
        .args(["--sandbox", "none"])
        .assert()
        .code(2)
        .stderr(refusal());
    let trace = Trace::new()
        .session(1)
        .write("src/f1.txt", "ok")
        .end("completed")
        .save(tmp.path());
    // A replay runs such a task in its containers only (tests/container_runs.rs): on
    // the host, never.
    let out = tmp.path().join("results");
    loopbench()
        .arg("replay")
        .arg(&trace)
        .arg("--task")
        .arg(&dir)
        .args(["--format", "json", "--unsandboxed", "--out"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("task 'shtask'")
                .and(predicate::str::contains("runs in a container of its image"))
                .and(predicate::str::contains(
                    "would run its trace's `run` actions and checks under no sandbox",
                )),
        );
    assert!(!out.exists(), "a refused replay wrote {}", out.display());
}
