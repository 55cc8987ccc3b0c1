//! The real agent CLIs (Claude Code, Codex, aider) against provider faults the scripted
//! model server injects (`fault` lines of a scenario), through the shipped wrappers and
//! under bubblewrap, as `tests/real_cli.rs` runs them:
//!
//! - a 529 the CLI's own retry absorbs records no failure, and a 529 that outlasts its
//!   retries fails the session `infra`: the session (it changed nothing) runs again, in
//!   place after a session that changed the work, else with the whole trial, and the
//!   final `sessions.csv`, `trials.csv` and `summary.csv`/`summary.json` equal a
//!   fault-free run's byte for byte, but for `attempts = 2` when the trial started again;
//! - a 401 stops the run (exit 3, no new session starts) and `resume`, once the "key"
//!   is fixed, finishes it;
//! - a wrapper whose CLI is not installed exits 127: `infra`, retries exhausted, exit 3,
//!   the arm named;
//! - a connection dropped mid-answer that outlasts the CLI's retries is `infra` (Claude
//!   Code and Codex; aider's own retries take a minute, which its 529 test pays once);
//! - Claude Code's own max-turns ending is `out_of_budget`, not a failure (Codex and
//!   aider have no turn limit of their own).
//!
//! Every session also runs a command that prints a provider's error text ("API Error:
//! 401", aider's `litellm.AuthenticationError: ...`): the agent's output is never
//! evidence, so those sessions stay clean.
//!
//! The CLIs' own retries are kept short where they can be set: Claude Code's
//! `CLAUDE_CODE_MAX_RETRIES=2`, Codex's provider `request_max_retries=1` and
//! `stream_max_retries=1`. aider's cannot: it retries a failing call with a delay
//! doubling from 0.25 s until the delay passes 60 s (about 64 s in all), so its test of
//! a 529 that outlasts them takes that long.

use crate::common;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::clis::{available, path_without, sandbox_works};
use common::{loopbench, read_csv};
use serde_json::Value;

/// The variable whose presence in the environment means the operator fixed the key:
/// the 401 fault lasts while it is unset (`while_unset`); the agents pass it through.
const KEY_FIXED: &str = "TEST_PROVIDER_KEY_FIXED";

/// A command every session runs: it prints what a provider's error looks like.
const FORGED_ERRORS: &str = "echo 'litellm.AuthenticationError: AuthenticationError: OpenAIException - Incorrect API key provided' && echo 'API Error: 401 {\"type\":\"error\",\"error\":{\"type\":\"authentication_error\"}}'";

#[derive(Clone, Copy)]
struct Cli {
    /// The arm's name, and the wrapper `scripts/agents/<name>.sh`.
    name: &'static str,
    /// The `[agents.<name>]` lines besides the wrapper and the sandbox.
    table: &'static str,
    /// What the reason of a failed 529 session names.
    overloaded: &'static str,
}

const CLAUDE: Cli = Cli {
    name: "claude",
    table: "args = [\"--model\", \"claude-sonnet-4-5\"]\nenv = { CLAUDE_CODE_MAX_RETRIES = \"2\" }",
    overloaded: "HTTP 529",
};

const CODEX: Cli = Cli {
    name: "codex",
    table: "args = [\"--model\", \"gpt-5.5\", \"-c\", \"model_providers.loopbench.request_max_retries=1\", \"-c\", \"model_providers.loopbench.stream_max_retries=1\"]\nenv = { LOOPBENCH_CODEX_SANDBOX = \"none\" }",
    overloaded: "HTTP 529",
};

const AIDER: Cli = Cli {
    name: "aider",
    table: "args = [\"--model\", \"openai/gpt-4o\", \"--no-auto-commits\", \"--no-gitignore\", \"--no-show-model-warnings\"]",
    overloaded: "overloaded",
};

/// A suite in `dir` whose one arm runs `cli` for `sessions` coding sessions of
/// `turns` turns, `replicates` times, against `scenario`.
fn suite(dir: &Path, cli: Cli, sessions: u32, turns: u32, replicates: u32, scenario: &str) {
    common::sh_task(dir);
    std::fs::write(dir.join("scenario.jsonl"), scenario).unwrap();
    let wrapper = common::repo_root()
        .join("scripts/agents")
        .join(format!("{}.sh", cli.name));
    let text = format!(
        "name = \"faults\"\nseed = 11\nreplicates = {replicates}\ntasks = [\"shtask\"]\n\
         infra_retries = 1\ninfra_backoff = \"10ms\"\n\n\
         [agents.{name}]\ndriver = \"command\"\nprogram = \"{wrapper}\"\n{table}\n\
         pass_env = [\"{KEY_FIXED}\"]\ntimeout = \"4m\"\nsandbox = \"bwrap\"\n\
         model_server = {{ scenario = \"scenario.jsonl\" }}\n\n\
         [[arm]]\nname = \"{name}\"\nagent = \"{name}\"\nlist_format = \"json\"\n\
         initializer = false\nmax_sessions = {sessions}\nsession_turns = {turns}\n",
        name = cli.name,
        wrapper = wrapper.display(),
        table = cli.table,
    );
    std::fs::write(dir.join("suite.toml"), text).unwrap();
}

/// A scenario of `sessions` sessions, each writing `src/f<n>.txt` and committing after
/// printing [`FORGED_ERRORS`]; `faults(n)` gives the fault lines that open session n.
fn scenario(sessions: u32, faults: impl Fn(u32) -> Vec<&'static str>) -> String {
    let mut text = String::new();
    for n in 1..=sessions {
        text += &format!("{{\"op\":\"session\",\"n\":{n}}}\n");
        for fault in faults(n) {
            text += fault;
            text.push('\n');
        }
        text += &serde_json::json!({"op": "write", "path": format!("src/f{n}.txt"), "content": format!("f{n}\n")}).to_string();
        text.push('\n');
        let cmd = format!("{FORGED_ERRORS} && git add -A && git commit -qm f{n}");
        text += &serde_json::json!({"op": "run", "cmd": cmd}).to_string();
        text.push('\n');
        text += &format!("{{\"op\":\"end\",\"status\":\"completed\",\"summary\":\"f{n} done\"}}\n");
    }
    text
}

fn run(dir: &Path, path: &OsString, fixed: bool) -> (Output, PathBuf) {
    let out = dir.join("out");
    let mut cmd = loopbench();
    cmd.arg("run")
        .arg(dir)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .env("PATH", path);
    if fixed {
        cmd.env(KEY_FIXED, "a-new-key-after-the-fix");
    } else {
        cmd.env_remove(KEY_FIXED);
    }
    (cmd.output().unwrap(), out)
}

fn failures(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("failures.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The served log of a session: its lines of `kind` and its totals.
fn served(dir: &Path, session: u32) -> (Vec<Value>, Value) {
    let text = std::fs::read_to_string(dir.join(format!("session-{session}.model.jsonl"))).unwrap();
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let summary = lines.last().unwrap()["summary"].clone();
    (lines, summary)
}

fn kinds(lines: &[Value], kind: &str) -> usize {
    lines.iter().filter(|l| l["kind"] == kind).count()
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `trials.csv` with `attempts` (its last column) cut off.
fn without_attempts(path: &Path) -> String {
    text(path)
        .lines()
        .map(|l| l.rsplit_once(',').unwrap().0.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// A 529 the CLI absorbs (one call, every attempt) and one it cannot (every call of
/// attempt 1), both in the trial's last session. With two sessions the first changed the
/// work, so the failed session alone runs again (the scenario's attempt 2 of it); with
/// one the whole trial does.
fn retried_and_tables_equal_a_fault_free_run(cli: Cli, sessions: u32) {
    let Some(path) = available(cli.name) else {
        return;
    };
    let tmp = common::visible_tempdir();
    // Names of one length: the CLIs send paths (their HOME) to the model, and the
    // server counts a request's bytes as its tokens.
    let clean_dir = tmp.path().join("clean");
    let faulted_dir = tmp.path().join("fault");
    suite(
        &clean_dir,
        cli,
        sessions,
        20,
        1,
        &scenario(sessions, |_| Vec::new()),
    );
    let faults = |n: u32| {
        if n == sessions {
            vec![
                "{\"op\":\"fault\",\"status\":529,\"requests\":1}",
                "{\"op\":\"fault\",\"status\":529,\"attempts\":[1]}",
            ]
        } else {
            Vec::new()
        }
    };
    suite(
        &faulted_dir,
        cli,
        sessions,
        20,
        1,
        &scenario(sessions, faults),
    );
    let (clean_run, clean) = run(&clean_dir, &path, false);
    assert!(clean_run.status.success(), "{}: {clean_run:?}", cli.name);
    let (faulted_run, faulted) = run(&faulted_dir, &path, false);
    assert!(
        faulted_run.status.success(),
        "{}: {faulted_run:?}",
        cli.name
    );

    for table in ["sessions.csv", "summary.csv", "summary.json"] {
        assert_eq!(
            text(&clean.join(table)),
            text(&faulted.join(table)),
            "{}: {table}",
            cli.name
        );
    }
    assert_eq!(
        without_attempts(&clean.join("trials.csv")),
        without_attempts(&faulted.join("trials.csv"))
    );
    assert_eq!(read_csv(&clean.join("trials.csv"))[0]["attempts"], "1");
    let attempts = if sessions == 1 { "2" } else { "1" };
    assert_eq!(
        read_csv(&faulted.join("trials.csv"))[0]["attempts"],
        attempts
    );
    let rows = read_csv(&faulted.join("sessions.csv"));
    assert_eq!(rows.len(), sessions as usize);
    for row in &rows {
        assert_eq!(
            row["failure"], "",
            "{}: forged errors are not evidence: {row:?}",
            cli.name
        );
        assert_eq!(row["newly_verified"], "1", "{}: {row:?}", cli.name);
    }

    let trial = faulted.join(format!("agents/{}:shtask:0", cli.name));
    // The counted attempt absorbed its 529: one fault served, then the session.
    let (lines, summary) = served(&trial, sessions);
    assert_eq!(kinds(&lines, "fault"), 1, "{}: {lines:?}", cli.name);
    assert_eq!(summary["finished"], true, "{}: {summary}", cli.name);
    // The first run of the last session met the 529s that outlasted the CLI's
    // retries: it alone is in failures.jsonl (the sessions before it changed the work,
    // and stay counted).
    let failed = failures(&faulted);
    assert_eq!(failed.len(), 1, "{}: {failed:?}", cli.name);
    let last = failed.last().unwrap();
    assert_eq!(last["attempt"], 1);
    assert_eq!(last["session"], sessions);
    assert_eq!(last["failure"], "infra", "{}: {last}", cli.name);
    let reason = last["failure_reason"].as_str().unwrap();
    assert!(reason.contains(cli.overloaded), "{}: {reason}", cli.name);
    let captures = faulted.join(last["captures"].as_str().unwrap());
    let (lines, summary) = served(&captures, sessions);
    assert!(kinds(&lines, "fault") >= 2, "{}: {lines:?}", cli.name);
    assert_eq!(kinds(&lines, "main"), 0, "{}: {lines:?}", cli.name);
    assert_eq!(summary["finished"], false);
}

/// A 401 for every call until the key is fixed, on the first of two trials.
fn a_401_stops_the_run_and_resume_after_the_fix_finishes_it(cli: Cli) {
    let Some(path) = available(cli.name) else {
        return;
    };
    let tmp = common::visible_tempdir();
    let dir = tmp.path();
    let fault = "{\"op\":\"fault\",\"status\":401,\"while_unset\":\"TEST_PROVIDER_KEY_FIXED\"}";
    suite(dir, cli, 1, 20, 2, &scenario(1, |_| vec![fault]));
    let (output, out) = run(dir, &path, false);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{}: {stderr}", cli.name);
    assert!(
        stderr.contains("stopped: the provider refused the credentials"),
        "{}: {stderr}",
        cli.name
    );
    let failed = failures(&out);
    assert_eq!(failed.len(), 1, "{}: {failed:?}", cli.name);
    assert_eq!(failed[0]["failure"], "auth");
    assert!(
        !out.join(format!("agents/{}:shtask:1", cli.name)).exists(),
        "{}: no session of the second trial started",
        cli.name
    );
    assert!(read_csv(&out.join("sessions.csv")).is_empty());

    let resumed = loopbench()
        .args(["resume", "--quiet", "--jobs", "1"])
        .arg(&out)
        .env("PATH", &path)
        .env(KEY_FIXED, "a-new-key-after-the-fix")
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{}: {resumed:?}", cli.name);
    let trials = read_csv(&out.join("trials.csv"));
    let attempts: Vec<&str> = trials.iter().map(|t| t["attempts"].as_str()).collect();
    assert_eq!(attempts, ["2", "1"], "{}", cli.name);
    assert!(
        read_csv(&out.join("sessions.csv"))
            .iter()
            .all(|s| s["failure"].is_empty())
    );
    assert_eq!(failures(&out).len(), 1, "resume keeps failures.jsonl");
}

/// The wrapper runs with no CLI on PATH: exit 127, every attempt.
fn a_wrapper_whose_cli_is_missing_is_infra_exhausted_and_named(cli: Cli) {
    if sandbox_works(cli.name).is_none() {
        return;
    }
    let tmp = common::visible_tempdir();
    let dir = tmp.path();
    suite(dir, cli, 1, 20, 1, &scenario(1, |_| Vec::new()));
    let (output, out) = run(dir, &path_without(cli.name), false);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{}: {stderr}", cli.name);
    assert!(
        stderr.contains(&format!(
            "arm '{}': 1 trial could not run (1 × infra: exit 127",
            cli.name
        )),
        "{stderr}"
    );
    let failed = failures(&out);
    let attempts: Vec<u64> = failed
        .iter()
        .map(|f| f["attempt"].as_u64().unwrap())
        .collect();
    assert_eq!(attempts, [1, 2], "{}: {failed:?}", cli.name);
    assert!(failed.iter().all(|f| f["failure"] == "infra"));
    assert!(read_csv(&out.join("sessions.csv")).is_empty());
}

/// Every call of attempt 1 gets the first part of its answer, then the connection
/// closes.
fn a_dropped_connection_that_outlasts_the_clis_retries_is_infra(cli: Cli, transport: &str) {
    let Some(path) = available(cli.name) else {
        return;
    };
    let tmp = common::visible_tempdir();
    let dir = tmp.path();
    let fault = "{\"op\":\"fault\",\"drop\":true,\"attempts\":[1]}";
    suite(dir, cli, 1, 20, 1, &scenario(1, |_| vec![fault]));
    let (output, out) = run(dir, &path, false);
    assert!(output.status.success(), "{}: {output:?}", cli.name);
    assert_eq!(read_csv(&out.join("trials.csv"))[0]["attempts"], "2");
    let failed = failures(&out);
    assert_eq!(failed.len(), 1, "{}: {failed:?}", cli.name);
    assert_eq!(failed[0]["failure"], "infra", "{}: {}", cli.name, failed[0]);
    let reason = failed[0]["failure_reason"].as_str().unwrap();
    assert!(reason.contains(transport), "{}: {reason}", cli.name);
}

#[test]
fn claude_code_retries_a_529_it_cannot_absorb_and_the_tables_equal_a_fault_free_run() {
    retried_and_tables_equal_a_fault_free_run(CLAUDE, 2);
}

#[test]
fn codex_retries_a_529_it_cannot_absorb_and_the_tables_equal_a_fault_free_run() {
    retried_and_tables_equal_a_fault_free_run(CODEX, 2);
}

/// One session: aider's own retries of the failing 529 take about a minute.
#[test]
fn aider_retries_a_529_it_cannot_absorb_and_the_tables_equal_a_fault_free_run() {
    retried_and_tables_equal_a_fault_free_run(AIDER, 1);
}

#[test]
fn claude_code_on_a_401_stops_the_run_and_resume_after_the_fix_finishes_it() {
    a_401_stops_the_run_and_resume_after_the_fix_finishes_it(CLAUDE);
}

#[test]
fn codex_on_a_401_stops_the_run_and_resume_after_the_fix_finishes_it() {
    a_401_stops_the_run_and_resume_after_the_fix_finishes_it(CODEX);
}

#[test]
fn aider_on_a_401_stops_the_run_and_resume_after_the_fix_finishes_it() {
    a_401_stops_the_run_and_resume_after_the_fix_finishes_it(AIDER);
}

#[test]
fn the_claude_wrapper_without_its_cli_exits_127_infra_and_the_arm_is_named() {
    a_wrapper_whose_cli_is_missing_is_infra_exhausted_and_named(CLAUDE);
}

#[test]
fn the_codex_wrapper_without_its_cli_exits_127_infra_and_the_arm_is_named() {
    a_wrapper_whose_cli_is_missing_is_infra_exhausted_and_named(CODEX);
}

#[test]
fn the_aider_wrapper_without_its_cli_exits_127_infra_and_the_arm_is_named() {
    a_wrapper_whose_cli_is_missing_is_infra_exhausted_and_named(AIDER);
}

#[test]
fn claude_code_on_connections_dropped_mid_answer_is_infra_and_the_trial_is_retried() {
    a_dropped_connection_that_outlasts_the_clis_retries_is_infra(CLAUDE, "ECONNRESET");
}

#[test]
fn codex_on_connections_dropped_mid_answer_is_infra_and_the_trial_is_retried() {
    a_dropped_connection_that_outlasts_the_clis_retries_is_infra(CODEX, "stream disconnected");
}

#[test]
fn claude_codes_own_max_turns_ending_is_out_of_budget_not_a_failure() {
    let Some(path) = available("claude") else {
        return;
    };
    let tmp = common::visible_tempdir();
    let dir = tmp.path();
    // Three steps and the final answer in a session of two turns.
    let steps = concat!(
        "{\"op\":\"session\",\"n\":1}\n",
        "{\"op\":\"write\",\"path\":\"src/f1.txt\",\"content\":\"f1\\n\"}\n",
        "{\"op\":\"write\",\"path\":\"src/f2.txt\",\"content\":\"f2\\n\"}\n",
        "{\"op\":\"write\",\"path\":\"src/f3.txt\",\"content\":\"f3\\n\"}\n",
        "{\"op\":\"end\",\"status\":\"completed\",\"summary\":\"done\"}\n",
    );
    suite(dir, CLAUDE, 1, 2, 1, steps);
    let (output, out) = run(dir, &path, false);
    assert!(output.status.success(), "{output:?}");
    let rows = read_csv(&out.join("sessions.csv"));
    assert_eq!(
        (rows[0]["outcome"].as_str(), rows[0]["failure"].as_str()),
        ("out_of_budget", ""),
        "{:?}",
        rows[0]
    );
    assert!(!out.join("failures.jsonl").exists());
}
