//! Whose failure a session was, where the agent's exit status alone would mislead, with
//! command agents that are small scripts: a CLI's own max-turns ending and a crash the
//! scripted model server carries out are nobody's failure; a retried trial starts from
//! a clean HOME and keeps the failed attempt's captures apart; a harness whose scratch
//! filesystem is full fails `infra` (the trial is not counted, `resume` finishes it);
//! `merge` of a shard whose trials could not run says so and exits 3.

use crate::common;

use std::path::Path;
use std::process::Output;

use common::command::{arm, script, sh_suite};
use common::{loopbench, read_csv};
use serde_json::Value;

fn run_in(suite: &Path, out: &Path, extra: &[&str]) -> Output {
    loopbench()
        .arg("run")
        .arg(suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

fn failures(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("failures.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn agent(name: &str, program: &str, extra: &str) -> String {
    format!(
        "[agents.{name}]\ndriver = \"command\"\nprogram = \"./{program}\"\ntimeout = \"60s\"\n{extra}\n"
    )
}

#[test]
fn a_clis_max_turns_ending_is_out_of_budget_and_no_failure() {
    let tmp = tempfile::tempdir().unwrap();
    // Claude Code exits 1 when it stops at --max-turns, with this result line.
    script(
        tmp.path(),
        "cli.sh",
        r#"echo "f$LOOPBENCH_SESSION" > "src/f$LOOPBENCH_SESSION.txt"
echo '{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":3,"total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":5}}'
exit 1
"#,
    );
    let suite = sh_suite(
        tmp.path(),
        &agent("cli", "cli.sh", ""),
        &arm("cli", "cli", 2, ""),
    );
    let out = tmp.path().join("out");
    let output = run_in(&suite, &out, &[]);
    assert!(output.status.success(), "{output:?}");
    let sessions = read_csv(&out.join("sessions.csv"));
    assert_eq!(sessions.len(), 2);
    for s in &sessions {
        assert_eq!(
            (s["outcome"].as_str(), s["failure"].as_str()),
            ("out_of_budget", ""),
            "{s:?}"
        );
        assert_eq!(s["turns"], "3");
        assert!(
            s["error"].contains("exit"),
            "the exit status stays in the notes: {s:?}"
        );
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!stderr.contains("failed `agent`"), "{stderr}");
}

/// A stand-in for Claude Code: one model call to the scripted server, which answers
/// it (the session completes) or leaves it unanswered at the scenario's crash.
const ONE_CALL: &str = r#"
import json, os, sys, urllib.request
body = json.dumps({"model": "m", "stream": False, "max_tokens": 10,
                   "tools": [{"name": "Bash"}, {"name": "Write"}],
                   "messages": [{"role": "user", "content": "go"}]}).encode()
request = urllib.request.Request(os.environ["ANTHROPIC_BASE_URL"] + "/v1/messages", body,
                                 {"content-type": "application/json"})
answer = json.load(urllib.request.urlopen(request, timeout=60))
print(answer["content"][0]["text"])
"#;

#[test]
fn the_scenarios_crash_is_the_harnesss_plan_and_no_failure() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("one_call.py"), ONE_CALL).unwrap();
    script(
        tmp.path(),
        "cli.sh",
        "exec python3 \"$(dirname \"$0\")/one_call.py\"\n",
    );
    std::fs::write(
        tmp.path().join("scenario.jsonl"),
        concat!(
            "{\"op\":\"session\",\"n\":1}\n",
            "{\"op\":\"end\",\"status\":\"interrupted\"}\n",
            "{\"op\":\"session\",\"n\":2}\n",
            "{\"op\":\"end\",\"status\":\"completed\",\"summary\":\"done\"}\n",
        ),
    )
    .unwrap();
    let agents = agent(
        "cli",
        "cli.sh",
        "model_server = { scenario = \"scenario.jsonl\" }",
    );
    let suite = sh_suite(tmp.path(), &agents, &arm("cli", "cli", 2, ""));
    let out = tmp.path().join("out");
    let output = run_in(&suite, &out, &[]);
    assert!(output.status.success(), "{output:?}");
    let sessions = read_csv(&out.join("sessions.csv"));
    assert_eq!(
        (
            sessions[0]["outcome"].as_str(),
            sessions[0]["failure"].as_str()
        ),
        ("interrupted", ""),
        "{:?}",
        sessions[0]
    );
    assert!(
        sessions[0]["error"].contains("the scenario's crash"),
        "{:?}",
        sessions[0]
    );
    assert_eq!(
        (
            sessions[1]["outcome"].as_str(),
            sessions[1]["resumed"].as_str()
        ),
        ("completed", "true")
    );
}

/// Claude Code's stream-json lines for a 529 that outlasted its retries.
const OVERLOADED: &str = r#"{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":529,"result":"API Error: 529 overloaded","num_turns":1}"#;

#[test]
fn a_retry_starts_from_a_clean_home_and_keeps_the_failed_attempts_captures_apart() {
    let tmp = tempfile::tempdir().unwrap();
    script(
        tmp.path(),
        "cli.sh",
        &format!(
            r#"if [ -e "$HOME/seen" ]; then echo "home: used"; else echo "home: fresh"; fi
touch "$HOME/seen"
if [ -e "$0.fault" ] && [ "$LOOPBENCH_SESSION" = 1 ]; then
  rm -f "$0.fault"
  echo '{OVERLOADED}'
  exit 1
fi
echo "f$LOOPBENCH_SESSION" > "src/f$LOOPBENCH_SESSION.txt"
"#
        ),
    );
    std::fs::write(tmp.path().join("cli.sh.fault"), "").unwrap();
    let suite = sh_suite(
        tmp.path(),
        &format!("infra_backoff = \"10ms\"\n\n{}", agent("cli", "cli.sh", "")),
        &arm("cli", "cli", 2, ""),
    );
    let out = tmp.path().join("out");
    let output = run_in(&suite, &out, &[]);
    assert!(output.status.success(), "{output:?}");
    let trial = out.join("agents/cli:shtask:0");
    let read = |p: &str| std::fs::read_to_string(trial.join(p)).unwrap();
    // The counted attempt: its own HOME, found fresh by its first session. (The fault is
    // in the first session: after a session that changed the work, the failed session
    // would run again in place instead, in the HOME the sessions before it left;
    // tests/infra_failures.rs.)
    assert_eq!(read("session-1.stdout"), "home: fresh\n");
    assert_eq!(read("session-2.stdout"), "home: used\n");
    // The failed attempt, as it was: its captures, its HOME, named in failures.jsonl.
    let failed = failures(&out);
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["captures"], "agents/cli:shtask:0/attempt-1");
    let first = read("attempt-1/session-1.stdout");
    assert!(
        first.starts_with("home: fresh\n") && first.contains("\"api_error_status\":529"),
        "{first}"
    );
    assert!(trial.join("attempt-1/home/seen").is_file());
    assert_eq!(read_csv(&out.join("trials.csv"))[0]["attempts"], "2");
}

/// Runs `script` (sh, with `$SCRATCH` a fresh 1 MiB tmpfs and `$LOOPBENCH` the binary)
/// in a mount namespace of its own: as root with `unshare --mount`, otherwise in a user
/// namespace too. `None` when no such namespace can be made here (under CI=true that
/// fails the test).
fn with_small_scratch(dir: &Path, script: &str) -> Option<Output> {
    let scratch = dir.join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let uid = std::process::Command::new("id").arg("-u").output().unwrap();
    let root = String::from_utf8_lossy(&uid.stdout).trim() == "0";
    let mut cmd = std::process::Command::new("unshare");
    if !root {
        cmd.args(["--user", "--map-root-user"]);
    }
    let output = cmd
        .args(["--mount", "sh", "-c"])
        .arg(format!(
            "mount -t tmpfs -o size=1m tmpfs \"$SCRATCH\" || exit 99\n{script}"
        ))
        .env("SCRATCH", &scratch)
        .env("LOOPBENCH", env!("CARGO_BIN_EXE_loopbench"))
        .current_dir(dir)
        .output()
        .unwrap();
    if output.status.code() == Some(99) || (!output.status.success() && output.stdout.is_empty()) {
        let why = String::from_utf8_lossy(&output.stderr);
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: cannot mount a small tmpfs in a namespace: {why}"
        );
        if output.status.code() == Some(99) || why.contains("unshare") {
            eprintln!("skipping: cannot mount a small tmpfs in a namespace here: {why}");
            return None;
        }
    }
    Some(output)
}

fn exit_code_of(output: &Output) -> i32 {
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("exit "))
        .and_then(|c| c.trim().parse().ok())
        .unwrap_or_else(|| panic!("no exit code: {output:?}"))
}

#[test]
fn a_full_scratch_when_the_trial_starts_is_the_harnesss_failure_and_resume_finishes_it() {
    let tmp = tempfile::tempdir().unwrap();
    script(
        tmp.path(),
        "cli.sh",
        "echo \"f$LOOPBENCH_SESSION\" > \"src/f$LOOPBENCH_SESSION.txt\"\n",
    );
    sh_suite(
        tmp.path(),
        &format!(
            "infra_retries = 0\ninfra_backoff = \"10ms\"\n\n{}",
            agent("cli", "cli.sh", "")
        ),
        &arm("cli", "cli", 2, ""),
    );
    // The scratch has 16 KiB left: not enough for the trial's work directory.
    let Some(output) = with_small_scratch(
        tmp.path(),
        "dd if=/dev/zero of=\"$SCRATCH/other-tenant\" bs=4k count=252 2>/dev/null\n\
         LOOPBENCH_TMPDIR=\"$SCRATCH\" \"$LOOPBENCH\" run . --quiet --jobs 1 --out out >/dev/null 2>err\n\
         echo \"exit $?\"; cat err >&2",
    ) else {
        return;
    };
    let out = tmp.path().join("out");
    assert_eq!(exit_code_of(&output), 3, "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("arm 'cli': 1 trial could not run (1 × infra: the harness failed"),
        "{stderr}"
    );
    let failed = failures(&out);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(failed[0]["failure"], "infra");
    assert!(
        failed[0]["error"]
            .as_str()
            .unwrap()
            .contains("No space left on device"),
        "{failed:?}"
    );
    assert!(read_csv(&out.join("sessions.csv")).is_empty());
    // Room again: resume runs the trial as its attempt 2.
    let resumed = loopbench()
        .args(["resume", "--quiet", "--jobs", "1"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{resumed:?}");
    assert_eq!(read_csv(&out.join("trials.csv"))[0]["attempts"], "2");
    assert_eq!(read_csv(&out.join("sessions.csv")).len(), 2);
}

#[test]
fn a_scratch_filled_while_a_session_runs_fails_its_observation_infra_not_the_agent() {
    let tmp = tempfile::tempdir().unwrap();
    // Another process on the machine fills the harness's scratch during session 1 (the
    // stand-in does it, from outside its work directory, once).
    script(
        tmp.path(),
        "cli.sh",
        r#"echo "f$LOOPBENCH_SESSION" > "src/f$LOOPBENCH_SESSION.txt"
if [ ! -e "$0.filled" ]; then
  touch "$0.filled"
  dd if=/dev/zero of="$FILL" bs=4k 2>/dev/null
fi
exit 0
"#,
    );
    let fill = tmp.path().join("scratch/other-tenant");
    sh_suite(
        tmp.path(),
        &format!(
            "infra_retries = 0\ninfra_backoff = \"10ms\"\n\n{}",
            agent(
                "cli",
                "cli.sh",
                &format!("env = {{ FILL = \"{}\" }}", fill.display())
            )
        ),
        &arm("cli", "cli", 2, ""),
    );
    let Some(output) = with_small_scratch(
        tmp.path(),
        "LOOPBENCH_TMPDIR=\"$SCRATCH\" \"$LOOPBENCH\" run . --quiet --jobs 1 --out out >/dev/null 2>err\n\
         echo \"exit $?\"; cat err >&2",
    ) else {
        return;
    };
    let out = tmp.path().join("out");
    assert_eq!(exit_code_of(&output), 3, "{output:?}");
    let failed = failures(&out);
    assert_eq!(failed.len(), 1, "{failed:?}");
    assert_eq!(
        (failed[0]["session"].as_u64(), failed[0]["failure"].as_str()),
        (Some(1), Some("infra"))
    );
    let reason = failed[0]["failure_reason"].as_str().unwrap();
    assert!(
        reason.starts_with("cannot observe what the session left"),
        "{reason}"
    );
    assert!(
        failed[0]["error"]
            .as_str()
            .unwrap()
            .contains("No space left on device"),
        "{failed:?}"
    );
    // Nothing of it was counted; once there is room, resume finishes the trial.
    assert!(read_csv(&out.join("sessions.csv")).is_empty());
    let resumed = loopbench()
        .args(["resume", "--quiet", "--jobs", "1"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{resumed:?}");
    let sessions = read_csv(&out.join("sessions.csv"));
    assert_eq!(sessions.len(), 2);
    assert!(sessions.iter().all(|s| s["failure"].is_empty()));
}

#[test]
fn merging_a_shard_whose_trials_could_not_run_names_them_and_exits_3() {
    let tmp = tempfile::tempdir().unwrap();
    script(
        tmp.path(),
        "ok.sh",
        "echo f > \"src/f$LOOPBENCH_SESSION.txt\"\n",
    );
    script(
        tmp.path(),
        "broken.sh",
        "exec agent-cli-that-is-not-installed-loopbench\n",
    );
    let agents = format!(
        "infra_retries = 0\ninfra_backoff = \"10ms\"\n\n{}{}",
        agent("ok", "ok.sh", ""),
        agent("broken", "broken.sh", "")
    );
    let suite = sh_suite(
        tmp.path(),
        &agents,
        &(arm("ok", "ok", 1, "") + &arm("broken", "broken", 1, "")),
    );
    let shard1 = tmp.path().join("s1");
    let shard2 = tmp.path().join("s2");
    let one = run_in(&suite, &shard1, &["--shard", "1/2"]);
    let two = run_in(&suite, &shard2, &["--shard", "2/2"]);
    // Each arm has one trial: shard 1 runs ok's, shard 2 broken's.
    assert!(one.status.success(), "{one:?}");
    assert_eq!(two.status.code(), Some(3), "{two:?}");
    let merged = tmp.path().join("merged");
    let output = loopbench()
        .arg("merge")
        .arg(&shard1)
        .arg(&shard2)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("arm 'broken': 1 trial could not run (1 × infra: exit 127"),
        "{stderr}"
    );
    assert_eq!(read_csv(&merged.join("trials.csv")).len(), 1);
    assert_eq!(failures(&merged).len(), 1);
}
