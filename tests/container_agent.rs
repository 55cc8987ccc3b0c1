//! A command agent's sessions in containers of the task's image (`sandbox =
//! "container"`), against a real engine, as root: one run in which a hostile agent
//! attacks its container (the oracle and the pristine tests, the task and results
//! directories, a secret in the harness's environment and home, another trial's work
//! directory, writing outside its work directory, the network although the task allows
//! its checks the internet, a process left to outlive the session, a fork storm) and
//! an honest one implements two features over two sessions, whose records say what
//! the files say; an engine that loses a session's container is the infrastructure's
//! failure, never the agent's. A task without an image under such an agent, and such
//! an agent asking for the network, are refused (no engine needed). Each test that
//! needs an engine skips, saying why, where none answers.

use crate::common;

use std::process::Command;

use common::command::{Ran, arm, live_processes_with_arg, script, unique_sleep_seconds};
use common::read_csv;
use predicates::prelude::*;

/// What the hostile agent prints on stderr, on one line: `HELD name` for each attack
/// its container stopped, `LEAK name` for each it did not. `@TASK@`, `@OUT@`,
/// `@HOST_HOME@` and `@MARKER@` are replaced by the test.
const HOSTILE: &str = r#"#!/bin/bash
cat >/dev/null
said=""
probe() { if eval "$2" >/dev/null 2>&1; then said="$said LEAK $1"; else said="$said HELD $1"; fi; }
probe oracle 'cat @TASK@/oracle/tests/check_F1.sh'
probe pristine-tests 'ls /tests/check_F1.sh || ls @TASK@/oracle/tests'
probe task-dir 'ls @TASK@/task.toml'
probe results 'ls @OUT@'
probe host-home-file 'cat @HOST_HOME@/.ssh/id_ed25519'
probe root-home 'ls /root/.cargo'
probe environment 'env | grep -q tok-harness-secret'
probe write-system 'touch /etc/loopbench-hostile'
probe write-harness 'touch "$LOOPBENCH_BIN"'
probe network 'exec 3<>/dev/tcp/1.1.1.1/53'
probe interface 'ls /sys/class/net | grep -qv "^lo$"'
probe capability 'grep -q "CapEff:[[:space:]]*0*[1-9a-f]" /proc/self/status'
# Writes outside the work directory that the test looks for on the host.
mkdir -p @TASK@ @OUT@ 2>/dev/null
echo x > @TASK@/planted 2>/dev/null
echo x > @OUT@/planted 2>/dev/null
# Another trial's work directory (two run at once): each trial leaves a mark in its
# own, waits for the other's, and looks for any mark but its own, and for any trial's
# scratch directory beside its own.
echo x > "mark-$LOOPBENCH_TRIAL_SEED"
sleep 2
probe other-trial 'find / \( -path /proc -o -path /sys -o -path /app \) -prune -o -name "mark-*" -print | grep -q .'
own=$(dirname "$LOOPBENCH_USAGE_FILE")
probe other-scratch 'ls -A "$(dirname "$own")" | grep -qvx "$(basename "$own")"'
forked=$(python3 -c '
import os, time
n = 0
for _ in range(1500):
    try:
        if os.fork() == 0:
            os.close(1)
            time.sleep(60)
            os._exit(0)
        n += 1
    except OSError:
        break
print(n)
' 2>/dev/null)
if [ "${forked:-0}" -gt 0 ] && [ "$forked" -le 64 ]; then said="$said HELD fork"; else said="$said LEAK fork($forked)"; fi
(setsid sleep @MARKER@ >/dev/null 2>&1 &)
echo "ATTACKS:$said" >&2
"#;

/// An honest agent, but for one claim: F1 in its first session, F2 in its second, each
/// with its list entry flagged, committed, and Claude Code's stream-json result on
/// stdout. Its second session also flags F3, which it never wrote.
const HONEST: &str = r#"#!/bin/sh
cat >/dev/null
n=$LOOPBENCH_SESSION
mkdir -p src
echo done > "src/f$n.txt"
entry() { flag=false; [ "$1" -le "$n" ] || [ "$n" = 2 ] && flag=true; printf '  {"id": "F%s", "category": "functional", "description": "file %s exists", "steps": ["create src/f%s.txt", "look at it"], "passes": %s}' "$1" "$1" "$1" "$flag"; }
{ echo '['; entry 1; echo ','; entry 2; echo ','; entry 3; echo; echo ']'; } > feature_list.json
git add -A && git commit -qm "F$n"
echo "inside: $(pwd) $(id -u)" >&2
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":4,"total_cost_usd":0.5,"usage":{"input_tokens":100,"output_tokens":20}}'
"#;

/// The task of these tests: [`common::sh_task`] in the base image, its checks allowed
/// the internet (never its agent), at most 64 processes.
const ENVIRONMENT: &str = "\n[environment]\nimage = \"docker.io/library/ubuntu:24.04\"\npids = 64\nallow_internet = true\n";

fn container_agent(name: &str, program: &str) -> String {
    format!(
        "[agents.{name}]\ndriver = \"command\"\nprogram = \"./{program}\"\nsandbox = \"container\"\ntimeout = \"60s\"\n"
    )
}

#[test]
fn a_hostile_agent_in_its_container_reaches_nothing_and_an_honest_one_is_measured_as_its_files_say()
{
    let Some(engine) = crate::container_sandbox::engine() else {
        return;
    };
    let tmp = common::visible_tempdir();
    let root = tmp.path().join("suite");
    std::fs::create_dir_all(&root).unwrap();
    let out = tmp.path().join("out");
    let host_home = tmp.path().join("home");
    std::fs::create_dir_all(host_home.join(".ssh")).unwrap();
    std::fs::write(host_home.join(".ssh/id_ed25519"), "SECRET-SSH-KEY-CANARY\n").unwrap();
    let marker = unique_sleep_seconds();
    let task = root.join("shtask");
    let hostile = HOSTILE
        .replace("@TASK@", &task.display().to_string())
        .replace("@OUT@", &out.display().to_string())
        .replace("@HOST_HOME@", &host_home.display().to_string())
        .replace("@MARKER@", &marker);
    // Written over a script of the helper's, to keep its mode but run under bash.
    script(&root, "hostile.sh", "");
    std::fs::write(root.join("hostile.sh"), &hostile).unwrap();
    script(&root, "honest.sh", HONEST.trim_start_matches("#!/bin/sh\n"));
    let agents = container_agent("hostile", "hostile.sh") + &container_agent("honest", "honest.sh");
    let arms = arm("hostile", "hostile", 1, "") + &arm("honest", "honest", 2, "");
    let suite = common::command::sh_suite(&root, &agents, &arms);
    let file = suite.join("suite.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("replicates = 1", "replicates = 2")).unwrap();
    let toml = task.join("task.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, text + ENVIRONMENT).unwrap();

    let child = Command::new(env!("CARGO_BIN_EXE_loopbench"))
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--jobs", "2", "--out"])
        .arg(&out)
        .env("HOME", &host_home)
        .env("LB_HOSTILE_TOKEN", "tok-harness-secret-4711")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its containers carry its pid (other tests' may run meanwhile).
    let harness = child.id();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "run failed: {stderr}");
    let ran = Ran {
        out: out.clone(),
        sessions: read_csv(&out.join("sessions.csv")),
        trials: read_csv(&out.join("trials.csv")),
        stderr,
    };

    for replicate in 0..2 {
        let said = ran.capture(&format!("hostile:shtask:{replicate}"), 1, "stderr");
        let attacks = said
            .lines()
            .find_map(|l| l.strip_prefix("ATTACKS:"))
            .unwrap_or_else(|| panic!("the hostile agent did not finish: {said}"));
        assert!(!attacks.contains("LEAK"), "{attacks}");
        for attack in [
            "oracle",
            "pristine-tests",
            "task-dir",
            "results",
            "host-home-file",
            "root-home",
            "environment",
            "write-system",
            "write-harness",
            "network",
            "interface",
            "capability",
            "other-trial",
            "other-scratch",
            "fork",
        ] {
            assert!(
                attacks.contains(&format!("HELD {attack}")),
                "{attack}: {attacks}"
            );
        }
    }
    for hostile in ran.arm("hostile") {
        assert_eq!(hostile["failure"], "", "{hostile:?}");
    }
    // Nothing it wrote outside its work directory reached the host.
    assert!(!task.join("planted").exists());
    assert!(!out.join("planted").exists());
    for needle in ["SECRET-SSH-KEY-CANARY", "tok-harness-secret-4711"] {
        let text = std::fs::read_to_string(out.join("sessions.jsonl")).unwrap();
        assert!(!text.contains(needle), "{needle} in the records");
    }
    // Nothing of a session outlives it: no process, no container.
    assert!(live_processes_with_arg(&marker).is_empty());
    let left = Command::new(engine)
        .args([
            "ps",
            "--all",
            "--quiet",
            "--filter",
            &format!("label=loopbench.harness={harness}"),
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "containers left: {}",
        String::from_utf8_lossy(&left.stdout)
    );

    // The honest agent, at /app as the sandbox's user, is measured by its files: one
    // feature verified after its first session, two after its second, whose claim of
    // the third is premature; its usage read from its stream-json.
    for replicate in 0..2 {
        let trial = format!("honest:shtask:{replicate}");
        let said = ran.capture(&trial, 1, "stderr");
        assert!(said.contains("inside: /app 65534"), "{said}");
        let sessions: Vec<_> = ran
            .sessions
            .iter()
            .filter(|s| s["trial_id"] == trial)
            .collect();
        assert_eq!(sessions.len(), 2, "{sessions:?}");
        for (s, verified) in sessions.iter().zip(["1", "2"]) {
            assert_eq!(s["features_verified"], verified, "{s:?}");
            assert_eq!(s["newly_verified"], "1", "{s:?}");
            assert_eq!(s["failure"], "", "{s:?}");
            assert_eq!(s["outcome"], "completed", "{s:?}");
            assert_eq!(s["clean_tree"], "true", "{s:?}");
            assert_eq!(s["unobservable"], "false", "{s:?}");
            assert_eq!(
                (&*s["turns"], &*s["input_tokens"], &*s["output_tokens"]),
                ("4", "100", "20"),
                "{s:?}"
            );
        }
        let second = sessions[1];
        assert_eq!(second["newly_claimed"], "2", "{second:?}");
        assert_eq!(second["premature_claims"], "1", "{second:?}");
    }
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
        common::validate_or_run(command, &suite, &out)
            .assert()
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
    common::assert_validate_refuses_at(
        &suite,
        "sandbox_network",
        "an agent's session in a container never reaches the network",
    );
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

/// A command agent over the Harbor example's two steps: the count in its first
/// session, the reset in its second, saying what it finds each time.
const STEPWISE: &str = r#"cat >/dev/null
echo "files: $(ls -A | grep -v '^.git$' | tr '\n' ' ')" >&2
echo "status: $(git status --porcelain | wc -l)" >&2
echo "log: $(git log --format=%s | tr '\n' '|')" >&2
if [ "$LOOPBENCH_SESSION" = 1 ]; then
  printf '#!/bin/sh\nn=$(cat /app/.count 2>/dev/null || echo 0)\nn=$((n + 1))\necho "$n" > /app/.count\necho "$n"\n' > counter.sh
else
  printf '#!/bin/sh\nif [ "$1" = reset ]; then echo 0 > /app/.count; exit 0; fi\nn=$(cat /app/.count 2>/dev/null || echo 0)\nn=$((n + 1))\necho "$n" > /app/.count\necho "$n"\n' > counter.sh
fi
printf '.count\n' > .gitignore
git add -A && git commit -qm "session $LOOPBENCH_SESSION"
"#;

#[test]
fn a_steps_starting_files_are_laid_before_the_session_that_works_on_it() {
    if crate::container_sandbox::engine().is_none() {
        return;
    }
    let tmp = common::visible_tempdir();
    let root = tmp.path().join("suite");
    loopbench::fsutil::copy_tree(
        &common::repo_root().join("suites/examples/harbor-steps/counter"),
        &root.join("counter"),
        false,
    )
    .unwrap();
    script(&root, "stepwise.sh", STEPWISE);
    std::fs::write(
        root.join("suite.toml"),
        format!(
            "name = \"steps\"\nseed = 1\nreplicates = 1\ntasks = [\"counter\"]\n\n{}\n{}",
            container_agent("stepwise", "stepwise.sh"),
            arm("a", "stepwise", 2, "")
        ),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let ran = common::command::run_ok(&root, &out);
    let first = ran.capture("a:counter:0", 1, "stderr");
    let second = ran.capture("a:counter:0", 2, "stderr");
    // The reset step's NOTES.md is not there while the count is worked on; it is,
    // committed by the harness, once the count passes.
    assert!(!first.contains("NOTES.md"), "{first}");
    assert!(first.contains("status: 0"), "{first}");
    assert!(second.contains("NOTES.md"), "{second}");
    assert!(second.contains("status: 0"), "{second}");
    assert!(
        second.contains("log: loopbench: the starting files of reset|session 1|"),
        "{second}"
    );
    let sessions = ran.arm("a");
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    for (s, verified) in sessions.iter().zip(["1", "2"]) {
        assert_eq!(s["features_verified"], verified, "{s:?}");
        assert_eq!(s["clean_tree"], "true", "{s:?}");
        assert_eq!(s["failure"], "", "{s:?}");
    }
}

#[test]
fn a_session_past_its_timeout_leaves_no_process_and_no_container() {
    let Some(engine) = crate::container_sandbox::engine() else {
        return;
    };
    let tmp = common::visible_tempdir();
    let marker = unique_sleep_seconds();
    let agents = container_agent("stuck", "stuck.sh").replace("\"60s\"", "\"2s\"");
    script(
        tmp.path(),
        "stuck.sh",
        &format!("cat >/dev/null\ntrap '' TERM\n(setsid sleep {marker} &)\nsleep 300\n"),
    );
    let suite = common::command::sh_suite(tmp.path(), &agents, &arm("a", "stuck", 1, ""));
    let toml = suite.join("shtask/task.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(&toml, text + ENVIRONMENT).unwrap();
    let out = tmp.path().join("out");
    let child = Command::new(env!("CARGO_BIN_EXE_loopbench"))
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--out"])
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let harness = child.id();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let sessions = read_csv(&out.join("sessions.csv"));
    assert_eq!(sessions[0]["outcome"], "timeout", "{sessions:?}");
    assert_eq!(sessions[0]["failure"], "", "{sessions:?}");
    assert!(live_processes_with_arg(&marker).is_empty());
    let left = Command::new(engine)
        .args(["ps", "--all", "--quiet", "--filter"])
        .arg(format!("label=loopbench.harness={harness}"))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "containers left: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}
