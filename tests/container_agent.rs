//! A command agent's sessions in containers of the task's image (`sandbox =
//! "container"`), against a real engine, as root: an engine that loses a session's
//! container is the infrastructure's failure, never the agent's. A task without an
//! image under such an agent, and such an agent asking for the network, are refused
//! (no engine needed). Each test that needs an engine skips, saying why, where none
//! answers.

use crate::common;

use std::process::Command;

use common::command::{arm, live_processes_with_arg, script};
use common::loopbench;
use predicates::prelude::*;

/// The task of these tests: [`common::sh_task`] in the base image, its checks allowed
/// the internet (never its agent), at most 64 processes.
const ENVIRONMENT: &str = "\n[environment]\nimage = \"docker.io/library/ubuntu:24.04\"\npids = 64\nallow_internet = true\n";

fn container_agent(name: &str, program: &str) -> String {
    format!(
        "[agents.{name}]\ndriver = \"command\"\nprogram = \"./{program}\"\nsandbox = \"container\"\ntimeout = \"60s\"\n"
    )
}

#[test]
fn a_task_without_an_image_under_a_container_agent_is_refused_naming_the_task_and_the_arm() {
    // No engine needed: refused before anything runs.
    let tmp = tempfile::tempdir().unwrap();
    let agents = container_agent("boxed", "agent.sh");
    script(tmp.path(), "agent.sh", "exit 0\n");
    let suite = common::command::sh_suite(tmp.path(), &agents, &arm("a", "boxed", 1, ""));
    for command in ["validate", "run"] {
        let out = tmp.path().join("out");
        let mut cmd = loopbench();
        cmd.arg(command).arg(&suite);
        if command == "run" {
            cmd.arg("--out").arg(&out);
        }
        cmd.assert()
            .code(2)
            .stderr(predicate::str::contains("arm 'a' (agent 'boxed')"))
            .stderr(predicate::str::contains("task 'shtask'"))
            .stderr(predicate::str::contains("names no image"));
        assert!(!out.exists());
    }
}

#[test]
fn an_agent_in_a_container_asking_for_the_network_is_refused_at_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let agents =
        container_agent("boxed", "agent.sh") + "sandbox_network = [\"api.example.com:443\"]\n";
    script(tmp.path(), "agent.sh", "exit 0\n");
    let suite = common::command::sh_suite(tmp.path(), &agents, &arm("a", "boxed", 1, ""));
    let line = std::fs::read_to_string(suite.join("suite.toml"))
        .unwrap()
        .lines()
        .position(|l| l.starts_with("sandbox_network"))
        .unwrap()
        + 1;
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!("suite.toml:{line}:")))
        .stderr(predicate::str::contains(
            "an agent's session in a container never reaches the network",
        ));
}

#[test]
fn an_engine_that_loses_the_session_s_container_is_the_infrastructure_s_failure_never_the_agent_s()
{
    let Some(engine) = crate::container_sandbox::engine() else {
        return;
    };
    let tmp = common::visible_tempdir();
    let agents = container_agent("boxed", "agent.sh");
    script(tmp.path(), "agent.sh", "cat >/dev/null\nsleep 30\n");
    let arms = arm("a", "boxed", 1, "");
    let suite = common::command::sh_suite(tmp.path(), &agents, &arms);
    let file = suite.join("suite.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace("replicates = 1", "replicates = 1\ninfra_retries = 0"),
    )
    .unwrap();
    let toml = suite.join("shtask/task.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, text + ENVIRONMENT).unwrap();
    let out = tmp.path().join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_loopbench"))
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // The engine's client of each session dies, as it does when the engine fails
    // under it, until the harness gives up; its container is left running.
    let label = format!("--label=loopbench.harness={}", child.id());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        for pid in live_processes_with_arg(&label) {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let cmdline = String::from_utf8_lossy(&cmdline).into_owned();
            let program = cmdline.split('\0').next().unwrap_or_default();
            if program.ends_with(engine) && cmdline.contains("agent.sh") {
                let _ = Command::new("kill")
                    .args(["-KILL", &pid.to_string()])
                    .status();
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    // The run is not complete: the trial could not run, and `resume` retries it.
    assert_eq!(status.code(), Some(3), "{stderr}");
    let failures = std::fs::read_to_string(out.join("failures.jsonl")).unwrap();
    let record: serde_json::Value = serde_json::from_str(failures.lines().next().unwrap()).unwrap();
    assert_eq!(record["failure"], "infra", "{failures}");
    assert!(
        record["error"].as_str().unwrap().contains("in the sandbox"),
        "{failures}"
    );
    let sessions = std::fs::read_to_string(out.join("sessions.jsonl")).unwrap_or_default();
    assert!(sessions.trim().is_empty(), "{sessions}");
    // The containers its dead clients left are gone with their sessions.
    let left = Command::new(engine)
        .args(["ps", "--all", "--quiet", "--filter"])
        .arg(label.trim_start_matches("--"))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "containers left: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}
