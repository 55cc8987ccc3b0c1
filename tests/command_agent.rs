//! The `command` agent driver end to end: real agent processes (shell scripts and
//! `loopbench sim-agent`) run by `loopbench run`.

use crate::common;

use std::path::{Path, PathBuf};

use common::command::{
    Ran, arm, live_processes_with_arg, run_ok, run_ok_measured, script, sh_suite,
    unique_sleep_seconds,
};
use common::{loopbench, repo_root};
use loopbench::sandbox::{bwrap_works, find_program};
use predicates::prelude::*;

/// A suite over the shipped `invoicer` task whose arms all use `agent` (`sim`, or `cmd`:
/// `loopbench sim-agent` as a command agent with the same settings).
fn invoicer_suite(dir: &Path, agent: &str) -> PathBuf {
    std::fs::create_dir_all(dir.join("tasks")).unwrap();
    std::os::unix::fs::symlink(
        repo_root().join("suites/seed-replication/tasks/invoicer"),
        dir.join("tasks/invoicer"),
    )
    .unwrap();
    let text = format!(
        r#"name = "sim-vs-command"
seed = 20260704
replicates = 2
tasks = ["tasks/invoicer"]

[agents.sim]
driver = "sim"
profile = "calibrated"

[agents.cmd]
driver = "command"
program = "{bin}"
args = ["sim-agent", "--suite", "{dir}", "--profile", "calibrated"]
timeout = "5m"
crash = "agent"

[[arm]]
name = "json"
agent = "{agent}"
list_format = "json"
max_sessions = 14

[[arm]]
name = "crash"
agent = "{agent}"
list_format = "markdown"
max_sessions = 14
crash_rate = 0.3

[[arm]]
name = "single"
agent = "{agent}"
list_format = "yaml"
strategy = "single"
initializer = false
crash_rate = 0.3
"#,
        bin = env!("CARGO_BIN_EXE_loopbench"),
        dir = dir.display(),
    );
    std::fs::write(dir.join("suite.toml"), text).unwrap();
    dir.to_path_buf()
}

#[test]
fn a_command_arm_running_sim_agent_gives_byte_identical_tables_to_the_in_process_sim() {
    // The trial seed derives from the arm name, so the comparison is the
    // same arms run once on each driver rather than two differently named arms.
    let tmp = tempfile::tempdir().unwrap();
    let run = |agent: &str| {
        let suite = invoicer_suite(&tmp.path().join(agent), agent);
        let out = tmp.path().join(format!("out-{agent}"));
        loopbench()
            .arg("run")
            .arg(&suite)
            .args(["--quiet", "--out"])
            .arg(&out)
            .assert()
            .success();
        out
    };
    let sim = run("sim");
    let cmd = run("cmd");
    for file in ["sessions.csv", "trials.csv"] {
        let a = std::fs::read_to_string(sim.join(file)).unwrap();
        let b = std::fs::read_to_string(cmd.join(file)).unwrap();
        assert!(a == b, "{file} differs:\n--- sim\n{a}\n--- command\n{b}");
    }
    let sessions = common::read_csv(&cmd.join("sessions.csv"));
    assert!(
        sessions.len() > 20,
        "too few sessions to compare: {}",
        sessions.len()
    );
    assert!(
        sessions.iter().any(|s| s["outcome"] == "interrupted"),
        "no crash was exercised"
    );
    assert!(sessions.iter().any(|s| s["resumed"] == "true"));
    assert!(sessions.iter().any(|s| s["outcome"] == "declared_complete"));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(cmd.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["driver"], "command");
    assert_eq!(
        manifest["simulated"], true,
        "sim-agent numbers are synthetic"
    );
    let truth =
        std::fs::read_to_string(cmd.join("agents/json:invoicer:0/session-1.stdout")).unwrap();
    assert!(truth.contains("\"truth\""), "{truth}");
}

#[test]
fn a_hanging_agent_and_its_sleeping_grandchild_are_killed_at_the_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let marker = unique_sleep_seconds();
    script(
        tmp.path(),
        "hang.sh",
        "sleep \"$MARKER\" &\necho $! > \"$OUT/grandchild.pid\"\nwhile :; do sleep 0.2; done\n",
    );
    let agents = format!(
        "[agents.hang]\ndriver = \"command\"\nprogram = \"./hang.sh\"\ntimeout = \"1s\"\nenv = {{ MARKER = \"{marker}\", OUT = \"{}\" }}\n",
        tmp.path().display()
    );
    let suite = sh_suite(tmp.path(), &agents, &arm("hang", "hang", 1, ""));
    let ran = run_ok(&suite, &tmp.path().join("out"));
    let s = &ran.sessions[0];
    assert_eq!(s["outcome"], "timeout");
    assert!(s["error"].contains("timed out after 1s"), "{}", s["error"]);
    assert!(
        tmp.path().join("grandchild.pid").is_file(),
        "the grandchild never started"
    );
    let left = live_processes_with_arg(&marker);
    assert!(left.is_empty(), "still running after the session: {left:?}");
}

#[test]
fn the_prompt_arrives_on_stdin_with_the_environment_contract_and_the_work_directory_as_cwd() {
    let tmp = tempfile::tempdir().unwrap();
    script(
        tmp.path(),
        "look.sh",
        concat!(
            "n=$LOOPBENCH_SESSION\n",
            "cat > \"$OUT/stdin-$n\"\n",
            "env > \"$OUT/env-$n\"\n",
            "pwd > \"$OUT/pwd-$n\"\n",
            "cp \"$LOOPBENCH_PROMPT_FILE\" \"$OUT/prompt-$n\"\n",
            "echo seen >> \"$LOOPBENCH_STATE_DIR/seen\"\n",
            "wc -l < \"$LOOPBENCH_STATE_DIR/seen\" | tr -d ' ' > \"$OUT/seen-$n\"\n",
        ),
    );
    let agents = format!(
        "[agents.look]\ndriver = \"command\"\nprogram = \"./look.sh\"\ntimeout = \"30s\"\nenv = {{ OUT = \"{}\", LOOPBENCH_SESSION = \"99\" }}\n",
        tmp.path().display()
    );
    let suite = sh_suite(
        tmp.path(),
        &agents,
        &arm("look", "look", 2, "session_turns = 17"),
    );
    let ran = run_ok(&suite, &tmp.path().join("out"));
    assert_eq!(ran.sessions.len(), 2);
    let read = |name: &str| std::fs::read_to_string(tmp.path().join(name)).unwrap();
    let stdin = read("stdin-1");
    assert!(!stdin.is_empty());
    assert_eq!(stdin, read("prompt-1"), "stdin is the rendered prompt");
    assert!(
        read("pwd-1").trim_end().ends_with("/work"),
        "{}",
        read("pwd-1")
    );
    let env = read("env-2");
    for line in [
        "LOOPBENCH_SESSION=2",
        "LOOPBENCH_ARM=look",
        "LOOPBENCH_TASK=shtask",
        "LOOPBENCH_TURNS=17",
        "LOOPBENCH_SESSION_KIND=coding",
        "GIT_AUTHOR_NAME=loopbench",
    ] {
        assert!(
            env.lines().any(|l| l == line),
            "{line} missing from:\n{env}"
        );
    }
    for var in [
        "LOOPBENCH_EFFECTS=",
        "LOOPBENCH_PROMPT_FILE=",
        "LOOPBENCH_USAGE_FILE=",
        "LOOPBENCH_STATE_DIR=",
        "LOOPBENCH_TRIAL_SEED=",
    ] {
        let value = env
            .lines()
            .find_map(|l| l.strip_prefix(var))
            .unwrap_or_else(|| panic!("{var} missing"));
        assert!(
            !value.contains("/work/"),
            "{var}{value} is inside the work directory"
        );
    }
    assert!(!env.contains("LOOPBENCH_INTERRUPT_AT"));
    assert_eq!(
        read("seen-2").trim(),
        "2",
        "the state directory lasts the whole trial"
    );
}

#[test]
fn usage_and_a_declared_completion_come_from_the_usage_file() {
    let tmp = tempfile::tempdir().unwrap();
    script(
        tmp.path(),
        "done.sh",
        "printf '{\"turns\": 5, \"input_tokens\": 100, \"output_tokens\": 20, \"cost_usd\": 0.5, \"status\": \"declared_complete\", \"model\": \"m\"}' > \"$LOOPBENCH_USAGE_FILE\"\n",
    );
    let agents = "[agents.done]\ndriver = \"command\"\nprogram = \"./done.sh\"\n";
    let suite = sh_suite(tmp.path(), agents, &arm("done", "done", 3, ""));
    let ran = run_ok(&suite, &tmp.path().join("out"));
    assert_eq!(
        ran.sessions.len(),
        1,
        "a declared completion ends the trial"
    );
    let s = &ran.sessions[0];
    assert_eq!(s["outcome"], "declared_complete");
    assert_eq!(
        (
            &*s["turns"],
            &*s["input_tokens"],
            &*s["output_tokens"],
            &*s["cost_usd"]
        ),
        ("5", "100", "20", "0.5")
    );
    assert_eq!(s["error"], "");
    assert_eq!(ran.trials[0]["ended_by"], "declared_complete");
    assert_eq!(ran.trials[0]["premature_victory"], "true");
}

#[test]
fn usage_comes_from_claude_code_stream_json_when_no_usage_file_is_written() {
    let tmp = tempfile::tempdir().unwrap();
    script(
        tmp.path(),
        "claude.sh",
        concat!(
            "echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"x\"}'\n",
            "echo 'a stray line'\n",
            "echo '{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"num_turns\":7,",
            "\"total_cost_usd\":0.25,\"usage\":{\"input_tokens\":10,\"cache_creation_input_tokens\":90,",
            "\"cache_read_input_tokens\":900,\"output_tokens\":55}}'\n",
        ),
    );
    let agents = "[agents.claude]\ndriver = \"command\"\nprogram = \"./claude.sh\"\nargs = [\"-p\", \"--output-format\", \"stream-json\"]\n";
    let suite = sh_suite(tmp.path(), agents, &arm("claude", "claude", 1, ""));
    let ran = run_ok(&suite, &tmp.path().join("out"));
    let s = &ran.sessions[0];
    assert_eq!(s["outcome"], "completed");
    assert_eq!(
        (
            &*s["turns"],
            &*s["input_tokens"],
            &*s["output_tokens"],
            &*s["cost_usd"]
        ),
        ("7", "1000", "55", "0.25")
    );
    assert!(
        ran.capture("claude:shtask:0", 1, "stdout")
            .contains("\"num_turns\":7")
    );
}

#[test]
fn a_nonzero_exit_is_data_recorded_with_its_exit_code_and_never_retried() {
    let tmp = tempfile::tempdir().unwrap();
    script(
        tmp.path(),
        "fail.sh",
        "echo '{\"turns\": 2}' > \"$LOOPBENCH_USAGE_FILE\"\necho oops >&2\necho run >> \"$OUT/runs\"\nexit 3\n",
    );
    let agents = format!(
        "[agents.fail]\ndriver = \"command\"\nprogram = \"./fail.sh\"\nenv = {{ OUT = \"{}\" }}\n",
        tmp.path().display()
    );
    let suite = sh_suite(tmp.path(), &agents, &arm("fail", "fail", 2, ""));
    let ran = run_ok(&suite, &tmp.path().join("out"));
    assert_eq!(
        ran.sessions.len(),
        2,
        "the trial goes on after a failing session"
    );
    for s in &ran.sessions {
        assert_eq!(s["outcome"], "completed");
        assert_eq!(s["error"], "agent exited with code 3");
        assert_eq!(s["turns"], "2");
    }
    let runs = std::fs::read_to_string(tmp.path().join("runs")).unwrap();
    assert_eq!(runs.lines().count(), 2, "one run per session");
    assert_eq!(ran.capture("fail:shtask:0", 2, "stderr"), "oops\n");
}

#[test]
fn a_killed_crash_interrupts_the_session_and_the_next_session_resumes() {
    let tmp = tempfile::tempdir().unwrap();
    script(tmp.path(), "slow.sh", "sleep 5\n");
    let agents = "[agents.slow]\ndriver = \"command\"\nprogram = \"./slow.sh\"\ntimeout = \"30s\"\ncrash_window = \"300ms\"\n";
    let suite = sh_suite(
        tmp.path(),
        agents,
        &arm("slow", "slow", 2, "crash_rate = 0.99"),
    );
    let started = std::time::Instant::now();
    let ran = run_ok(&suite, &tmp.path().join("out"));
    assert!(started.elapsed() < std::time::Duration::from_secs(8));
    let first = &ran.sessions[0];
    assert_eq!(first["outcome"], "interrupted");
    assert!(
        first["error"].starts_with("crash injected"),
        "{}",
        first["error"]
    );
    assert_eq!(ran.sessions[1]["resumed"], "true");
}

#[test]
fn an_agent_program_that_vanishes_is_retried_with_backoff_then_recorded_as_an_infra_failure() {
    // A program that cannot be started says nothing about the agent: the session is
    // `infra`, its attempt goes to failures.jsonl, never to the tables, and with no
    // trial retries left the run is not complete (exit 3).
    let tmp = tempfile::tempdir().unwrap();
    script(tmp.path(), "once.sh", "rm -f \"$0\"\n");
    let agents =
        "infra_retries = 0\n\n[agents.once]\ndriver = \"command\"\nprogram = \"./once.sh\"\n";
    let suite = sh_suite(tmp.path(), agents, &arm("once", "once", 3, ""));
    let out = tmp.path().join("out");
    let output = loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(common::read_csv(&out.join("sessions.csv")).is_empty());
    assert!(common::read_csv(&out.join("trials.csv")).is_empty());
    let failed: Vec<serde_json::Value> = std::fs::read_to_string(out.join("failures.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(failed.len(), 2, "the attempt's two sessions: {failed:?}");
    assert_eq!(failed[0]["outcome"], "completed");
    assert_eq!(failed[0]["attempt"], 1);
    let failed = &failed[1];
    assert_eq!(failed["outcome"], "error");
    assert_eq!(failed["failure"], "infra");
    assert_eq!(
        failed["failure_reason"],
        "cannot start agent 'once': program './once.sh' not found (3 tries)"
    );
    let error = failed["error"].as_str().unwrap();
    assert!(error.contains("try 1 of 3 failed"), "{error}");
    assert!(error.contains("retrying in 200ms"), "{error}");
    assert!(error.contains("retrying in 400ms"), "{error}");
    assert!(error.contains("try 3 of 3 failed"), "{error}");
    assert!(error.contains("program './once.sh' not found"), "{error}");
    assert_eq!(stderr.matches("retrying in").count(), 2, "{stderr}");
    assert!(
        stderr.contains(
            "warning: arm 'once': 1 trial could not run (1 × infra: cannot start agent 'once'"
        ),
        "{stderr}"
    );
}

#[test]
fn a_missing_agent_program_is_refused_before_the_run_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let agents =
        "[agents.ghost]\ndriver = \"command\"\nprogram = \"no-such-agent-loopbench-test\"\n";
    let suite = sh_suite(tmp.path(), agents, &arm("ghost", "ghost", 1, ""));
    let out = tmp.path().join("out");
    loopbench()
        .arg("run")
        .arg(&suite)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("agent 'ghost'"))
        .stderr(predicate::str::contains("not found on PATH"));
    assert!(!out.exists());
}

#[test]
fn a_missing_bwrap_is_a_clear_error_naming_the_agent() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty-path");
    std::fs::create_dir(&empty).unwrap();
    let agents =
        "[agents.boxed]\ndriver = \"command\"\nprogram = \"/bin/sh\"\nsandbox = \"bwrap\"\n";
    let suite = sh_suite(tmp.path(), agents, &arm("boxed", "boxed", 1, ""));
    for command in ["validate", "run"] {
        loopbench()
            .arg(command)
            .arg(&suite)
            .env("PATH", &empty)
            .assert()
            .code(2)
            .stderr(predicate::str::contains("agent 'boxed'"))
            .stderr(predicate::str::contains("apt-get install bubblewrap"));
    }
}

/// Tries what a sandbox must prevent. Prints one line per probe; exits with the number
/// of probes that got through.
const PROBE: &str = r#"breaches=0
probe() {
  name=$1; open=$2; closed=$3; shift 3
  if "$@" >/dev/null 2>&1; then echo "$name: $open"; breaches=$((breaches + 1)); else echo "$name: $closed"; fi
}
probe oracle readable hidden cat "$ORACLE/tests/check_F1.sh"
probe network reachable unreachable python3 -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 2)' "$PORT"
probe run-dir visible hidden test -e "$RUN_DIR/manifest.json"
probe system writable read-only touch "$SUITE_DIR/breach-$LOOPBENCH_ARM"
echo probe > sandbox-probe.txt && echo "work: writable"
echo '{"turns": 1}' > "$LOOPBENCH_USAGE_FILE"
exit $breaches
"#;

#[test]
fn under_bwrap_the_oracle_and_the_network_are_out_of_reach_and_the_run_records_it() {
    assert!(
        find_program("bwrap", std::env::var_os("PATH").as_deref()).is_some(),
        "bwrap is not installed (apt-get install bubblewrap; .ci/run does)"
    );
    if !bwrap_works() {
        eprintln!("skipping: bwrap cannot create namespaces on this machine");
        return;
    }
    // Outside /tmp, so that the oracle is hidden by its own mount, not by the private /tmp.
    let tmp = common::visible_tempdir();
    // The place the probe tries to write must lie outside /tmp wherever the checkout
    // is: under bwrap /tmp is a private tmpfs, where any write succeeds harmlessly.
    let system = tempfile::tempdir_in("/var/tmp").unwrap();
    // As root the sandbox runs as an unprivileged user, which may write only what it is
    // given: a root user hands the CLI's writable directory over, as the README says.
    if nix::unistd::geteuid().is_root() {
        let user = loopbench::sandbox::SandboxUser::default();
        user.hand_over(&[system.path()]).unwrap();
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    script(tmp.path(), "probe.sh", PROBE);
    let out = tmp.path().join("out");
    let env = format!(
        "env = {{ ORACLE = \"{oracle}\", PORT = \"{port}\", RUN_DIR = \"{run}\", SUITE_DIR = \"{suite}\" }}",
        oracle = tmp.path().join("shtask/oracle").display(),
        run = out.display(),
        suite = system.path().display(),
    );
    let agents = format!(
        "[agents.boxed]\ndriver = \"command\"\nprogram = \"./probe.sh\"\nsandbox = \"bwrap\"\n{env}\n\n[agents.open]\ndriver = \"command\"\nprogram = \"./probe.sh\"\n{env}\n\n[agents.netted]\ndriver = \"command\"\nprogram = \"./probe.sh\"\nsandbox = \"bwrap\"\nsandbox_network = [\"127.0.0.1:{port}\"]\nsandbox_writable = [\"{system}\"]\n{env}\n",
        system = system.path().display(),
    );
    let arms = arm("boxed", "boxed", 1, "")
        + &arm("open", "open", 1, "")
        + &arm("netted", "netted", 1, "");
    let suite = sh_suite(tmp.path(), &agents, &arms);
    let ran: Ran = run_ok(&suite, &out);

    let boxed = ran.capture("boxed:shtask:0", 1, "stdout");
    for line in [
        "oracle: hidden",
        "network: unreachable",
        "run-dir: hidden",
        "system: read-only",
        "work: writable",
    ] {
        assert!(
            boxed.contains(line),
            "sandboxed probe: {line} missing from\n{boxed}"
        );
    }
    let s = ran.arm("boxed")[0];
    assert_eq!(s["outcome"], "completed");
    assert_eq!(s["error"], "", "no probe got through the sandbox");
    assert_eq!(
        s["turns"], "1",
        "the usage file outside the work directory is writable"
    );

    // The same probe without the sandbox gets through, so the probes do probe.
    let open = ran.capture("open:shtask:0", 1, "stdout");
    for line in [
        "oracle: readable",
        "network: reachable",
        "run-dir: visible",
        "system: writable",
    ] {
        assert!(
            open.contains(line),
            "open probe: {line} missing from\n{open}"
        );
    }
    assert_eq!(ran.arm("open")[0]["error"], "agent exited with code 4");

    // A real agent CLI's sandbox: one writable config directory let through, the oracle
    // and the run directory still hidden. Its network is its own namespace: even the
    // service its arm declares is out of a raw socket's reach (only the harness's
    // proxy reaches it: tests/sandbox_network.rs).
    let netted = ran.capture("netted:shtask:0", 1, "stdout");
    for line in [
        "oracle: hidden",
        "network: unreachable",
        "run-dir: hidden",
        "system: writable",
    ] {
        assert!(
            netted.contains(line),
            "networked sandbox probe: {line} missing from\n{netted}"
        );
    }
    assert_eq!(ran.arm("netted")[0]["error"], "agent exited with code 1");
    // Only the unsandboxed probe and the one given the directory left their mark.
    assert!(system.path().join("breach-open").exists());
    assert!(system.path().join("breach-netted").exists());
    assert!(!system.path().join("breach-boxed").exists());
    drop(listener);
}

#[test]
fn sandbox_settings_without_the_sandbox_or_a_missing_writable_directory_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let agents =
        "[agents.x]\ndriver = \"command\"\nprogram = \"/bin/sh\"\nsandbox_network = true\n";
    let suite = sh_suite(tmp.path(), agents, &arm("x", "x", 1, ""));
    common::assert_validate_refuses_at(
        &suite,
        "sandbox_network",
        "agent 'x': sandbox_network needs sandbox = \"bwrap\"",
    );
    if !bwrap_works() {
        return;
    }
    let agents = "[agents.x]\ndriver = \"command\"\nprogram = \"/bin/sh\"\nsandbox = \"bwrap\"\nsandbox_writable = [\"~/no-such-dir-for-loopbench\"]\n";
    let suite = sh_suite(tmp.path(), agents, &arm("x", "x", 1, ""));
    loopbench()
        .arg("run")
        .arg(&suite)
        .arg("--out")
        .arg(tmp.path().join("never"))
        .env("HOME", tmp.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "agent 'x': sandbox_writable: '{}' is not a directory",
            tmp.path().join("no-such-dir-for-loopbench").display()
        )));
    assert!(!tmp.path().join("never").exists());
}

#[test]
fn declared_places_showing_the_host_a_home_sockets_or_answers_are_refused() {
    if !bwrap_works() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: no bwrap"
        );
        return;
    }
    let tmp = common::visible_tempdir();
    let home = tmp.path().join("home");
    let copy = tmp.path().join("study/copy-of-shtask");
    let tools = tmp.path().join("tools");
    for dir in [home.join(".cli"), copy.join("oracle/tests"), tools.clone()] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(copy.join("task.toml"), "name = \"copy\"\n").unwrap();
    let study = tmp.path().join("study");
    let cases: Vec<(String, String, String)> = vec![
        ("sandbox_ro".into(), "/".into(), "is the whole host".into()),
        (
            "sandbox_ro".into(),
            "/root".into(),
            "is a home directory".into(),
        ),
        (
            "sandbox_ro".into(),
            "~".into(),
            "is a home directory".into(),
        ),
        (
            "sandbox_rw".into(),
            "/run".into(),
            "lies in /run, the kernel's".into(),
        ),
        (
            "sandbox_ro".into(),
            study.display().to_string(),
            format!("holds {}, a task's oracle", copy.join("oracle").display()),
        ),
    ];
    for (key, place, why) in cases {
        let agents = format!(
            "[agents.x]\ndriver = \"command\"\nprogram = \"/bin/sh\"\nsandbox = \"bwrap\"\n{key} = [\"{place}\"]\n"
        );
        let suite = sh_suite(tmp.path(), &agents, &arm("x", "x", 1, ""));
        let shown = if place == "~" {
            home.display().to_string()
        } else {
            place.clone()
        };
        for command in ["validate", "run"] {
            loopbench()
                .arg(command)
                .arg(&suite)
                .env("HOME", &home)
                .assert()
                .code(2)
                .stderr(predicate::str::contains(format!(
                    "{}: agent 'x': {key}: '{shown}' {why}",
                    suite.join("suite.toml").display()
                )));
        }
    }
    // A place inside the home, holding no answer, is what the keys are for.
    let agents = format!(
        "[agents.x]\ndriver = \"command\"\nprogram = \"/bin/sh\"\nsandbox = \"bwrap\"\nsandbox_ro = [\"~/.cli\", \"{}\"]\n",
        tools.display()
    );
    let suite = sh_suite(tmp.path(), &agents, &arm("x", "x", 1, ""));
    loopbench()
        .arg("validate")
        .arg(&suite)
        .env("HOME", &home)
        .assert()
        .success();
    // A wrapper's own declaration is held to the same rules.
    let wrapper = script(
        tmp.path(),
        "wrapper.sh",
        "# loopbench: sandbox-query\nif [ -n \"$LOOPBENCH_SANDBOX_QUERY\" ]; then echo 'ro /'; exit 0; fi\n",
    );
    let agents =
        "[agents.x]\ndriver = \"command\"\nprogram = \"./wrapper.sh\"\nsandbox = \"bwrap\"\n";
    let suite = sh_suite(tmp.path(), agents, &arm("x", "x", 1, ""));
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "agent 'x': program '{}': its sandbox query declares 'ro /', which is the whole host",
            wrapper.display()
        )));
}

#[test]
fn as_root_a_writable_place_the_sandbox_user_cannot_write_is_refused_with_the_fix() {
    if !bwrap_works() || !nix::unistd::geteuid().is_root() {
        eprintln!("skipping: only a root harness runs its sandbox as another user");
        return;
    }
    let tmp = common::visible_tempdir();
    let state = tmp.path().join("cli-state");
    std::fs::create_dir(&state).unwrap();
    std::fs::set_permissions(&state, std::os::unix::fs::PermissionsExt::from_mode(0o700)).unwrap();
    let agents = format!(
        "[agents.x]\ndriver = \"command\"\nprogram = \"/bin/sh\"\nsandbox = \"bwrap\"\nsandbox_rw = [\"{}\"]\n",
        state.display()
    );
    let suite = sh_suite(tmp.path(), &agents, &arm("x", "x", 1, ""));
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "sandbox_rw: '{}' cannot be written by the sandbox's user 65534:65534",
            state.display()
        )))
        .stderr(predicate::str::contains("chown -R 65534:65534"));
    loopbench::sandbox::SandboxUser::default()
        .hand_over(&[&state])
        .unwrap();
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "agents and checks run as 65534:65534 (the harness runs as root)",
        ));
    // A program only root may run would fail in the sandbox with exit 126: refused.
    let private = script(tmp.path(), "private.sh", "exit 0\n");
    std::fs::set_permissions(
        &private,
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let agents =
        "[agents.x]\ndriver = \"command\"\nprogram = \"./private.sh\"\nsandbox = \"bwrap\"\n";
    let suite = sh_suite(tmp.path(), agents, &arm("x", "x", 1, ""));
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(format!(
            "agent 'x': program '{}' cannot be read and executed by the sandbox's user 65534:65534",
            std::fs::canonicalize(&private).unwrap().display()
        )));
}

#[test]
fn validate_names_the_line_of_an_unknown_crash_mode() {
    let tmp = tempfile::tempdir().unwrap();
    let agents = "[agents.x]\ndriver = \"command\"\nprogram = \"/bin/sh\"\ncrash = \"explode\"\n";
    let suite = sh_suite(tmp.path(), agents, &arm("x", "x", 1, ""));
    common::assert_validate_refuses_at(&suite, "crash =", "crash must be \"kill\" or \"agent\"");
}

#[test]
fn an_agent_printing_200_mb_is_captured_up_to_its_cap_and_the_harness_stays_small() {
    let tmp = tempfile::tempdir().unwrap();
    script(
        tmp.path(),
        "loud.sh",
        concat!(
            "echo '{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"loud\"}'\n",
            "for i in 1 2 3 4 5; do echo \"line $i\"; done\n",
            "head -c 200000000 /dev/zero | tr '\\0' 'x'\n",
            "echo\n",
            "echo '{\"type\":\"result\",\"subtype\":\"success\",\"num_turns\":3,\"total_cost_usd\":0.01,",
            "\"usage\":{\"input_tokens\":1,\"output_tokens\":2}}'\n",
            "echo 'stderr stays small' >&2\n",
        ),
    );
    let agents = "[agents.loud]\ndriver = \"command\"\nprogram = \"./loud.sh\"\ntimeout = \"5m\"\ncapture_limit = \"1MiB\"\n";
    let suite = sh_suite(tmp.path(), agents, &arm("loud", "loud", 1, ""));
    let (ran, peak_kib) = run_ok_measured(&suite, &tmp.path().join("out"));
    let stdout = ran.out.join("agents/loud:shtask:0/session-1.stdout");
    let size = std::fs::metadata(&stdout).unwrap().len();
    assert!(size <= 1024 * 1024, "the capture holds {size} bytes");
    let s = &ran.sessions[0];
    assert_eq!(s["outcome"], "completed");
    assert!(
        s["error"].contains("stdout capture cap of 1 MiB reached"),
        "{}",
        s["error"]
    );
    assert_eq!(
        s["turns"], "3",
        "the last line, which reports the usage, is kept past the cap"
    );
    let head = ran.capture("loud:shtask:0", 1, "stdout");
    assert!(head.starts_with("{\"type\":\"system\""), "the head is kept");
    assert_eq!(
        ran.capture("loud:shtask:0", 1, "stderr"),
        "stderr stays small\n"
    );
    assert!(
        peak_kib < 150 * 1024,
        "the harness grew to {peak_kib} KiB while the agent wrote 200 MB"
    );
}

#[test]
fn a_secret_at_the_end_of_a_250_mb_file_in_home_is_redacted_and_the_harness_stays_small() {
    let tmp = common::visible_tempdir();
    script(
        tmp.path(),
        "big-home.sh",
        "head -c 250000000 /dev/zero | tr '\\0' x > \"$HOME/big.log\"\necho \"key $LB_BIG_KEY\" >> \"$HOME/big.log\"\n",
    );
    let agents = "[agents.big]\ndriver = \"command\"\nprogram = \"./big-home.sh\"\ntimeout = \"5m\"\npass_env = [\"LB_BIG_KEY\"]\n";
    let suite = sh_suite(tmp.path(), agents, &arm("big", "big", 1, ""));
    let (ran, peak_kib) = common::command::run_ok_measured_with(
        &suite,
        &tmp.path().join("out"),
        &[("LB_BIG_KEY", "sk-big-secret-31337")],
    );
    let log = ran.out.join("agents/big:shtask:0/home/big.log");
    assert_eq!(std::fs::metadata(&log).unwrap().len(), 250_000_000 + 26);
    let mut tail = std::fs::File::open(&log).unwrap();
    std::io::Seek::seek(&mut tail, std::io::SeekFrom::End(-40)).unwrap();
    let mut end = String::new();
    std::io::Read::read_to_string(&mut tail, &mut end).unwrap();
    assert!(end.ends_with("xkey [redacted LB_BIG_KEY]\n"), "{end:?}");
    assert!(
        peak_kib < 150 * 1024,
        "the harness grew to {peak_kib} KiB redacting a 250 MB file"
    );
}

#[test]
fn a_home_past_max_home_bytes_is_emptied_and_ends_the_trial_with_the_limit_as_reason() {
    let tmp = tempfile::tempdir().unwrap();
    script(
        tmp.path(),
        "fill-home.sh",
        "mkdir -p \"$HOME/.cache\" && head -c 3000000 /dev/zero > \"$HOME/.cache/blob\"\n",
    );
    let agents = "[agents.fill]\ndriver = \"command\"\nprogram = \"./fill-home.sh\"\n";
    let suite = sh_suite(tmp.path(), agents, &arm("fill", "fill", 3, ""));
    let text = std::fs::read_to_string(suite.join("suite.toml")).unwrap();
    std::fs::write(
        suite.join("suite.toml"),
        text.replace("tasks = [", "max_home_bytes = \"2MiB\"\ntasks = ["),
    )
    .unwrap();
    let ran = run_ok(&suite, &tmp.path().join("out"));
    assert_eq!(
        ran.sessions.len(),
        1,
        "the trial went on: {:?}",
        ran.sessions
    );
    let s = &ran.sessions[0];
    assert_eq!(s["outcome"], "error", "{s:?}");
    assert_eq!(s["failure"], "agent", "{s:?}");
    assert!(
        s["error"].contains("reached max_home_bytes = 2097152"),
        "{}",
        s["error"]
    );
    let home = ran.out.join("agents/fill:shtask:0/home");
    assert_eq!(std::fs::read_dir(&home).unwrap().count(), 0);
}

#[test]
fn a_passed_key_quoted_by_the_failure_that_stops_the_run_is_redacted_on_stderr() {
    let tmp = tempfile::tempdir().unwrap();
    script(
        tmp.path(),
        "refused.sh",
        // The CLI's own error result (a usage file's `failure` is never taken).
        "printf '{\"type\":\"result\",\"is_error\":true,\"terminal_reason\":\"api_error\",\"result\":\"Invalid API key: the provider refused key %s\"}\\n' \"$LB_AUTH_KEY\"\nexit 1\n",
    );
    let agents = "[agents.refused]\ndriver = \"command\"\nprogram = \"./refused.sh\"\npass_env = [\"LB_AUTH_KEY\"]\n";
    let suite = sh_suite(tmp.path(), agents, &arm("refused", "refused", 1, ""));
    let out = tmp.path().join("out");
    let output = loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--out"])
        .arg(&out)
        .env("LB_AUTH_KEY", "sk-auth-secret-4711")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("the provider refused key [redacted LB_AUTH_KEY]"),
        "{stderr}"
    );
    assert!(!stderr.contains("sk-auth-secret-4711"), "{stderr}");
    for file in ["failures.jsonl", "sessions.jsonl"] {
        let text = std::fs::read_to_string(out.join(file)).unwrap_or_default();
        assert!(!text.contains("sk-auth-secret-4711"), "{file}: {text}");
    }
}

#[test]
fn a_check_that_outlasts_observe_timeout_is_stopped_at_the_deadline() {
    let tmp = tempfile::tempdir().unwrap();
    script(
        tmp.path(),
        "slow-test.sh",
        "printf '# test: a\\n# test: b\\nsleep 40\\n' > tests/check_F1.sh\n",
    );
    let agents = "[agents.slow]\ndriver = \"command\"\nprogram = \"./slow-test.sh\"\n";
    let suite = sh_suite(tmp.path(), agents, &arm("slow", "slow", 1, ""));
    let task = suite.join("shtask/task.toml");
    let text = std::fs::read_to_string(&task).unwrap();
    std::fs::write(
        &task,
        format!("verify_timeout = \"60s\"\nobserve_timeout = \"2s\"\n{text}"),
    )
    .unwrap();
    let started = std::time::Instant::now();
    let ran = run_ok(&suite, &tmp.path().join("out"));
    let elapsed = started.elapsed();
    let s = &ran.sessions[0];
    assert_eq!(s["outcome"], "error", "{s:?}");
    assert!(
        s["error"].contains("observe_timeout = 2s"),
        "{}",
        s["error"]
    );
    assert!(
        elapsed < std::time::Duration::from_secs(20),
        "the check ran on past the observation's deadline: {elapsed:?}"
    );
}

#[test]
fn validate_names_the_line_of_a_capture_limit_that_is_no_size() {
    let tmp = tempfile::tempdir().unwrap();
    for (value, message) in [
        (
            "\"lots\"",
            "capture_limit: expected a size like \"64MiB\" or a number of bytes, got 'lots'",
        ),
        ("0", "capture_limit: must be at least 1 byte"),
        (
            "-5",
            "capture_limit: expected a size like \"64MiB\" or a number of bytes, got -5",
        ),
    ] {
        let agents = format!(
            "[agents.x]\ndriver = \"command\"\nprogram = \"/bin/sh\"\ncapture_limit = {value}\n"
        );
        let suite = sh_suite(tmp.path(), &agents, &arm("x", "x", 1, ""));
        let line = common::line_of(&suite.join("suite.toml"), "capture_limit");
        loopbench()
            .arg("validate")
            .arg(&suite)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("suite.toml:{line}:17:")))
            .stderr(predicate::str::contains(format!("agent 'x': {message}")));
    }
}

#[test]
fn validate_refuses_a_command_agent_whose_program_cannot_be_found() {
    let tmp = tempfile::tempdir().unwrap();
    let agents = "[agents.ghost]\ndriver = \"command\"\nprogram = \"./no-such-agent.sh\"\n";
    let suite = sh_suite(tmp.path(), agents, &arm("ghost", "ghost", 1, ""));
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("agent 'ghost'"))
        .stderr(predicate::str::contains("'./no-such-agent.sh' not found"));
}

#[test]
fn a_relative_agent_program_is_found_beside_the_suite_when_run_from_another_directory() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("suite");
    let elsewhere = tmp.path().join("elsewhere");
    std::fs::create_dir_all(&suite).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    script(&suite, "agent.sh", "echo ran > ran.txt\n");
    let agents = "[agents.local]\ndriver = \"command\"\nprogram = \"./agent.sh\"\n";
    sh_suite(&suite, agents, &arm("local", "local", 1, ""));
    // The suite is named relative to the working directory, which is neither the
    // suite's nor the agent's (the agent starts in its work directory).
    loopbench()
        .current_dir(&elsewhere)
        .args(["validate", "../suite"])
        .assert()
        .success();
    let out = tmp.path().join("out");
    let output = loopbench()
        .current_dir(&elsewhere)
        .args(["run", "../suite", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let sessions = common::read_csv(&out.join("sessions.csv"));
    assert_eq!(sessions.len(), 1);
    assert_eq!(
        sessions[0]["outcome"], "completed",
        "{}",
        sessions[0]["error"]
    );
}

#[test]
fn resume_refuses_an_agent_program_that_vanished_before_anything_runs_or_is_rewritten() {
    let tmp = tempfile::tempdir().unwrap();
    let agent = script(tmp.path(), "agent.sh", "exit 0\n");
    let agents = "[agents.local]\ndriver = \"command\"\nprogram = \"./agent.sh\"\n";
    let suite = sh_suite(tmp.path(), agents, &arm("local", "local", 1, ""));
    let out = tmp.path().join("out");
    loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--replicates", "2", "--out"])
        .arg(&out)
        .assert()
        .success();
    // As if the run had been interrupted during its second trial, with a torn line.
    let trials = out.join("trials.jsonl");
    let first = std::fs::read_to_string(&trials)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    std::fs::write(&trials, format!("{first}\n{{\"torn")).unwrap();
    let before = std::fs::read(&trials).unwrap();
    std::fs::remove_file(&agent).unwrap();
    loopbench()
        .args(["resume", "--quiet"])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("agent 'local'"))
        .stderr(predicate::str::contains("'./agent.sh' not found"));
    assert_eq!(std::fs::read(&trials).unwrap(), before);
}

#[test]
fn an_arm_whose_agent_never_starts_is_named_in_a_warning_in_the_summary_and_compare_exits_2() {
    let tmp = tempfile::tempdir().unwrap();
    script(tmp.path(), "ok.sh", "exit 0\n");
    // Found and executable, so the preflight passes, but exec fails: no interpreter.
    let broken = tmp.path().join("broken.sh");
    std::fs::write(&broken, "#!/nonexistent/loopbench-interpreter\n").unwrap();
    std::fs::set_permissions(&broken, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let agents = "infra_retries = 1\ninfra_backoff = \"0s\"\n\n\
                  [agents.ok]\ndriver = \"command\"\nprogram = \"./ok.sh\"\n\n\
                  [agents.broken]\ndriver = \"command\"\nprogram = \"./broken.sh\"\n";
    let arms = arm("good", "ok", 1, "") + &arm("bad", "broken", 1, "");
    let suite = sh_suite(tmp.path(), agents, &arms);
    let out = tmp.path().join("out");
    let output = loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--replicates", "2", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    // Its sessions never ran, so they are `infra`, not counted, and the run is not
    // complete: the arm is named with why, on stderr and in summary.md.
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains(
            "warning: arm 'bad': 2 trials could not run (2 × infra: cannot start agent 'broken'"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("arm 'good'"), "{stderr}");
    let md = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        md.contains("- arm bad: 2 trials could not run (2 × infra: cannot start agent 'broken'"),
        "{md}"
    );
    assert!(md.contains("it has no counted trial: no data"), "{md}");
    assert!(!md.contains("arm good"), "{md}");
    // An arm with no data is never a pass.
    loopbench()
        .arg("compare")
        .arg(&out)
        .arg(&out)
        .args(["--metric", "premature_done"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "no data for arm 'bad' (2 trials could not run)",
        ));
    // The tables keep their columns.
    let header = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert_eq!(
        header.lines().next().unwrap(),
        "arm,metric,k,n,rate,ci_low,ci_high,diff,diff_ci_low,diff_ci_high,p,p_holm,boot_ci_low,boot_ci_high,p_cmh,p_cmh_holm,diff_mh,diff_mh_ci_low,diff_mh_ci_high,p_homogeneity"
    );
}
