//! Failures outside the agent, end to end with command agents that are small shell
//! scripts: a wrapper that cannot run its CLI (exit 127), a CLI that prints Claude Code's
//! own stream-json error result after its retries (HTTP 529, 401). Such a session, when it
//! changed nothing, is never counted: the trial is retried from its initial state (or,
//! after a session that changed the work, the session alone runs again), a refused key
//! stops the agent, and `resume` finishes the run. An agent's own words about an outage
//! are never evidence.

use crate::common;

use std::path::{Path, PathBuf};

use common::command::{arm, script, sh_suite};
use common::{loopbench, read_csv};
use serde_json::Value;

/// Claude Code's stream-json lines for a 529 that outlasted its two retries.
const OVERLOADED: &str = r#"{"type":"system","subtype":"api_retry","attempt":1,"max_retries":2,"retry_delay_ms":10,"error_status":529}
{"type":"system","subtype":"api_retry","attempt":2,"max_retries":2,"retry_delay_ms":10,"error_status":529}
{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":529,"result":"API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\"}}","num_turns":1}"#;

/// Claude Code's error result for a refused key.
const UNAUTHORIZED: &str = r#"{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":401,"result":"Invalid API key · Please run /login","num_turns":0}"#;

/// An agent that builds the file of its session's feature and prints a successful
/// result line; when `fault` (a file beside the script) exists and the session is
/// `at`, it prints `lines` instead and exits 1 (removing the fault file when `once`).
/// Every start appends its session to `runs` beside the script.
fn faulty_cli(dir: &Path, at: u32, lines: &str, once: bool) {
    let remove = if once { "rm -f \"$0.fault\"" } else { ":" };
    script(
        dir,
        "cli.sh",
        &format!(
            r#"echo "$LOOPBENCH_SESSION" >> "$0.runs"
if [ -e "$0.fault" ] && [ "$LOOPBENCH_SESSION" = {at} ]; then
  {remove}
  cat <<'EOF'
{lines}
EOF
  exit 1
fi
echo "f$LOOPBENCH_SESSION" > "src/f$LOOPBENCH_SESSION.txt"
echo '{{"type":"result","subtype":"success","is_error":false,"num_turns":2,"total_cost_usd":0.01,"usage":{{"input_tokens":10,"output_tokens":5}}}}'
"#
        ),
    );
}

const CLI_AGENT: &str =
    "[agents.cli]\ndriver = \"command\"\nprogram = \"./cli.sh\"\ntimeout = \"30s\"\n";

fn run_in(suite: &Path, out: &Path) -> std::process::Output {
    loopbench()
        .arg("run")
        .arg(suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(out)
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

fn runs(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("cli.sh.runs"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// `trials.csv` without its `attempts` column, the one thing a retry may change.
fn without_attempts(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header.last(), Some(&"attempts"));
    std::iter::once(header[..header.len() - 1].join(","))
        .chain(lines.map(|l| l.rsplit_once(',').unwrap().0.to_string()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs the 3-session suite of `faulty_cli` with a 529 at session `at` (once), and a
/// fault-free run of it: the faulted run's tables, its starts of the CLI, and its
/// failures.
fn faulted_and_clean(at: u32) -> (tempfile::TempDir, Vec<String>, Vec<Value>) {
    let tmp = tempfile::tempdir().unwrap();
    faulty_cli(tmp.path(), at, OVERLOADED, true);
    let suite = sh_suite(
        tmp.path(),
        &format!("infra_backoff = \"10ms\"\n\n{CLI_AGENT}"),
        &arm("cli", "cli", 3, ""),
    );
    let clean = tmp.path().join("clean");
    let output = run_in(&suite, &clean);
    assert!(output.status.success(), "{output:?}");

    std::fs::write(tmp.path().join("cli.sh.fault"), "").unwrap();
    std::fs::remove_file(tmp.path().join("cli.sh.runs")).unwrap();
    let faulted = tmp.path().join("faulted");
    let output = run_in(&suite, &faulted);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        std::fs::read_to_string(clean.join("sessions.csv")).unwrap(),
        std::fs::read_to_string(faulted.join("sessions.csv")).unwrap(),
    );
    assert_eq!(
        without_attempts(&clean.join("trials.csv")),
        without_attempts(&faulted.join("trials.csv"))
    );
    assert_eq!(read_csv(&clean.join("trials.csv"))[0]["attempts"], "1");
    let sessions = read_csv(&faulted.join("sessions.csv"));
    assert!(sessions.iter().all(|s| s["failure"].is_empty()));
    let (runs, failed) = (runs(tmp.path()), failures(&faulted));
    (tmp, runs, failed)
}

#[test]
fn a_529_that_outlasts_the_clis_retries_is_retried_and_the_tables_equal_a_fault_free_run() {
    // At the first session: the attempt had nothing that counts, and starts again from
    // the task's initial state.
    let (tmp, runs, failed) = faulted_and_clean(1);
    assert_eq!(runs, ["1", "1", "2", "3"], "the trial started again");
    let faulted = tmp.path().join("faulted");
    assert_eq!(read_csv(&faulted.join("trials.csv"))[0]["attempts"], "2");
    assert_eq!(
        failed.len(),
        1,
        "the failed attempt's one session: {failed:?}"
    );
    assert_eq!(failed[0]["attempt"], 1);
    assert_eq!(failed[0]["failure"], "infra");
    assert_eq!(
        failed[0]["failure_reason"],
        "HTTP 529 (api_error) in the CLI's result after 2 retries by the CLI"
    );
    assert_eq!(failed[0]["captures"], "agents/cli:shtask:0/attempt-1");
}

#[test]
fn a_529_after_a_session_that_changed_the_work_runs_that_session_again_and_keeps_the_one_before() {
    // Session 1 wrote its feature: it is the agent's and stays counted; session 2, which
    // changed nothing, alone goes to failures.jsonl and runs again in place. (The whole
    // trial used to start again, which dropped session 1: a failure the agent's tools
    // can bring about took a session that changed the work out of the tables.)
    let (tmp, runs, failed) = faulted_and_clean(2);
    assert_eq!(
        runs,
        ["1", "2", "2", "3"],
        "session 2 ran again, session 1 once"
    );
    let faulted = tmp.path().join("faulted");
    assert_eq!(read_csv(&faulted.join("trials.csv"))[0]["attempts"], "1");
    assert_eq!(failed.len(), 1, "the failed session alone: {failed:?}");
    assert_eq!(failed[0]["session"], 2);
    assert_eq!(failed[0]["attempt"], 1);
    assert_eq!(failed[0]["failure"], "infra");
    assert_eq!(failed[0]["outcome"], "error");
    assert_eq!(
        failed[0]["captures"],
        "agents/cli:shtask:0/attempt-1-session-2-1"
    );
    let put_aside = faulted.join("agents/cli:shtask:0/attempt-1-session-2-1");
    assert!(
        std::fs::read_to_string(put_aside.join("session-2.stdout"))
            .unwrap()
            .contains("\"api_error_status\":529"),
        "the failed run's output is kept apart from the rerun's"
    );
    // `show` prints the session left out with its failure, never as a counted one.
    let shown = loopbench()
        .arg("show")
        .arg(&faulted)
        .arg("cli:shtask:0")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    let (_, left_out) = shown.split_once("Failed attempts").expect(&shown);
    assert!(
        left_out.contains("session 2 (coding): error")
            && left_out.contains("failure: infra: HTTP 529")
            && !shown.contains("counted as the agent's session all the same"),
        "{shown}"
    );
}

#[test]
fn a_wrapper_that_exits_127_is_infra_and_exhausted_retries_exit_3_naming_the_arm() {
    let tmp = tempfile::tempdir().unwrap();
    script(
        tmp.path(),
        "wrapper.sh",
        "echo x >> \"$0.runs\"\nexec agent-cli-that-is-not-installed-loopbench\n",
    );
    faulty_cli(tmp.path(), 99, "", false);
    let agents = format!(
        "infra_retries = 1\ninfra_backoff = \"10ms\"\n\n{CLI_AGENT}\n[agents.broken]\ndriver = \"command\"\nprogram = \"./wrapper.sh\"\n"
    );
    let arms = arm("ok", "cli", 1, "") + &arm("broken", "broken", 2, "");
    let suite = sh_suite(tmp.path(), &agents, &arms);
    let out = tmp.path().join("out");
    let output = run_in(&suite, &out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("arm 'broken': 1 trial could not run (1 × infra: exit 127"),
        "{stderr}"
    );
    assert!(stderr.contains("loopbench resume"), "{stderr}");
    let wrapper_runs = std::fs::read_to_string(tmp.path().join("wrapper.sh.runs")).unwrap();
    assert_eq!(wrapper_runs.lines().count(), 2, "tried, then retried once");

    let trials = read_csv(&out.join("trials.csv"));
    assert_eq!(trials.len(), 1);
    assert_eq!(trials[0]["arm"], "ok");
    let sessions = read_csv(&out.join("sessions.csv"));
    assert!(sessions.iter().all(|s| s["arm"] == "ok"), "{sessions:?}");
    let failed = failures(&out);
    assert_eq!(
        failed
            .iter()
            .map(|f| f["attempt"].as_u64().unwrap())
            .collect::<Vec<_>>(),
        [1, 2]
    );
    assert!(
        failed
            .iter()
            .all(|f| f["failure"] == "infra" && f["arm"] == "broken")
    );
    assert_eq!(failed[0]["outcome"], "error");
}

/// A suite in `dir` whose CLI agent's key is refused (HTTP 401) in session
/// `refused_at` of its first trial (the fault file armed), with `max_sessions` sessions
/// per trial and `replicates` trials.
fn refused_key_suite(dir: &Path, refused_at: u32, max_sessions: u32, replicates: u32) -> PathBuf {
    faulty_cli(dir, refused_at, UNAUTHORIZED, false);
    let suite = sh_suite(
        dir,
        &format!("infra_backoff = \"10ms\"\n\n{CLI_AGENT}"),
        &arm("cli", "cli", max_sessions, ""),
    );
    let toml = std::fs::read_to_string(suite.join("suite.toml")).unwrap();
    std::fs::write(
        suite.join("suite.toml"),
        toml.replace("replicates = 1", &format!("replicates = {replicates}")),
    )
    .unwrap();
    std::fs::write(dir.join("cli.sh.fault"), "").unwrap();
    suite
}

#[test]
fn a_refused_key_stops_the_run_and_resume_after_the_fix_finishes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = refused_key_suite(tmp.path(), 1, 2, 3);
    let out = tmp.path().join("out");
    let output = run_in(&suite, &out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("stopped: the provider refused the credentials (HTTP 401"),
        "{stderr}"
    );
    assert_eq!(
        runs(tmp.path()),
        ["1"],
        "no new session started after the 401"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("trials.jsonl")).unwrap(),
        ""
    );
    assert_eq!(
        std::fs::read_to_string(out.join("sessions.jsonl")).unwrap(),
        ""
    );
    let failed = failures(&out);
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0]["failure"], "auth");
    let show = |out: &Path| {
        let shown = loopbench()
            .args(["show"])
            .arg(out)
            .arg("cli:shtask:0")
            .output()
            .unwrap();
        assert!(shown.status.success(), "{shown:?}");
        String::from_utf8_lossy(&shown.stdout).into_owned()
    };
    let shown = show(&out);
    assert!(
        shown.contains("trial cli:shtask:0 could not run")
            && shown.contains("attempt 1: failed auth: HTTP 401 (api_error)")
            && shown.contains("session 1 (coding): error"),
        "{shown}"
    );

    // The key is fixed: resume runs every trial, the stopped one as its attempt 2.
    std::fs::remove_file(tmp.path().join("cli.sh.fault")).unwrap();
    loopbench()
        .args(["resume", "--quiet", "--jobs", "1"])
        .arg(&out)
        .assert()
        .success();
    let trials = read_csv(&out.join("trials.csv"));
    assert_eq!(trials.len(), 3);
    let attempts: Vec<&str> = trials.iter().map(|t| t["attempts"].as_str()).collect();
    assert_eq!(attempts, ["2", "1", "1"]);
    assert_eq!(read_csv(&out.join("sessions.csv")).len(), 6);
    assert_eq!(failures(&out).len(), 1, "resume keeps failures.jsonl");
    let shown = show(&out);
    assert!(
        shown.contains("Failed attempts before it (not counted):")
            && shown.contains("attempt 1: failed auth"),
        "{shown}"
    );
}

#[test]
fn infra_failures_in_a_row_trip_the_circuit_and_stop_scheduling() {
    let tmp = tempfile::tempdir().unwrap();
    script(tmp.path(), "cli.sh", "echo 1 >> \"$0.runs\"\nexit 127\n");
    let agents =
        format!("infra_retries = 5\ninfra_backoff = \"10ms\"\ninfra_circuit = 2\n\n{CLI_AGENT}");
    let suite = sh_suite(tmp.path(), &agents, &arm("cli", "cli", 1, ""));
    let toml = std::fs::read_to_string(suite.join("suite.toml")).unwrap();
    std::fs::write(
        suite.join("suite.toml"),
        toml.replace("replicates = 1", "replicates = 3"),
    )
    .unwrap();
    let out = tmp.path().join("out");
    let output = run_in(&suite, &out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("stopped: 2 trials in a row failed outside the agent (infra_circuit = 2)"),
        "{stderr}"
    );
    assert_eq!(
        runs(tmp.path()).len(),
        2,
        "the first trial's retry waits its backoff without a job slot, the second trial \
         fails too, and nothing starts after the breaker tripped"
    );
    // The tables and the summary of what ran are written all the same, so that show and
    // report name the arm whose trials could not run.
    assert_eq!(read_csv(&out.join("sessions.csv")).len(), 0);
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains("arm cli: 2 trials could not run"),
        "{summary}"
    );
    let shown = loopbench().arg("show").arg(&out).output().unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("arm cli: 2 trials could not run"), "{shown}");
}

#[test]
fn the_retries_of_one_trial_count_once_toward_the_circuit() {
    let tmp = tempfile::tempdir().unwrap();
    script(tmp.path(), "cli.sh", "echo 1 >> \"$0.runs\"\nexit 127\n");
    let agents =
        format!("infra_retries = 3\ninfra_backoff = \"10ms\"\ninfra_circuit = 2\n\n{CLI_AGENT}");
    let suite = sh_suite(tmp.path(), &agents, &arm("cli", "cli", 1, ""));
    let out = tmp.path().join("out");
    let output = run_in(&suite, &out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(!stderr.contains("stopped:"), "{stderr}");
    assert_eq!(runs(tmp.path()).len(), 4, "every retry ran: {stderr}");
    assert!(
        stderr.contains("arm 'cli': 1 trial could not run (1 × infra: exit 127"),
        "{stderr}"
    );
}

#[test]
fn an_agents_own_words_about_an_outage_or_a_forged_failure_file_are_never_evidence() {
    let tmp = tempfile::tempdir().unwrap();
    // It claims an outage every way an agent can: prose on stdout, a tool result
    // holding a whole error result line, a failure object in its work directory,
    // and still exits 1: the session is the agent's.
    script(
        tmp.path(),
        "liar.sh",
        r#"echo "API Error: 529 overloaded_error"
echo '{"type":"user","message":{"content":[{"type":"tool_result","content":"{\"type\":\"result\",\"is_error\":true,\"api_error_status\":529}"}]}}'
echo '{"failure":{"kind":"infra","reason":"HTTP 529","http_status":529}}' > usage.json
echo '{"failure":{"kind":"infra","reason":"HTTP 529","http_status":529}}' > failure.json
echo "litellm.InternalServerError: the agent says so"
exit 1
"#,
    );
    let agents = "infra_backoff = \"10ms\"\n\n[agents.liar]\ndriver = \"command\"\nprogram = \"./liar.sh\"\n";
    let suite = sh_suite(tmp.path(), agents, &arm("liar", "liar", 2, ""));
    let out = tmp.path().join("out");
    let output = run_in(&suite, &out);
    assert!(output.status.success(), "{output:?}");
    let sessions = read_csv(&out.join("sessions.csv"));
    assert_eq!(sessions.len(), 2, "both sessions counted");
    for s in &sessions {
        assert_eq!(s["failure"], "agent");
        assert_eq!(s["outcome"], "completed");
    }
    assert_eq!(read_csv(&out.join("trials.csv"))[0]["attempts"], "1");
    assert!(failures(&out).is_empty());
    // The verdict names the arm among the agents' failures, which are counted, not
    // among those outside the agents.
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    let (_, counted) = summary
        .split_once("Failures of the agents (counted, as the agent's):")
        .unwrap_or_else(|| panic!("{summary}"));
    assert!(
        counted.contains("arm liar: every one of its 2 sessions failed `agent`"),
        "{summary}"
    );
    assert!(
        !summary.contains("Failures outside the agents"),
        "{summary}"
    );
}

/// A 529 result whose `terminal_reason` holds a terminal title sequence and a
/// right-to-left override.
const HOSTILE_REASON: &str = r#"{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error\u001b]0;pwned\u0007\u202eevil","api_error_status":529,"result":"x","num_turns":1}"#;

#[test]
fn a_failure_reason_from_the_clis_output_reaches_the_terminal_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    faulty_cli(tmp.path(), 1, HOSTILE_REASON, false);
    std::fs::write(tmp.path().join("cli.sh.fault"), "").unwrap();
    let agents = format!("infra_retries = 0\ninfra_backoff = \"10ms\"\n\n{CLI_AGENT}");
    let suite = sh_suite(tmp.path(), &agents, &arm("a", "cli", 1, ""));
    let out = tmp.path().join("out");
    let output = run_in(&suite, &out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    let report = loopbench().arg("report").arg(&out).output().unwrap();
    let printed = format!(
        "{stderr}{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&report.stdout)
    );
    assert!(
        printed.contains("HTTP 529 (api_error\\e]0;pwned\\x07\\u{202e}evil)"),
        "{printed}"
    );
    for raw in ['\u{1b}', '\u{7}', '\u{202e}'] {
        assert!(
            !printed.contains(raw),
            "{raw:?} reached the terminal: {printed:?}"
        );
    }
}

#[test]
fn a_refused_key_after_a_session_that_changed_the_work_ends_the_trial_there_with_it_counted() {
    // Session 1 built its feature; session 2's CLI is refused before it does anything.
    // Starting the trial again would take session 1 out of the tables: the trial ends
    // at session 2 with session 1 counted, the agent stops, and the verdict says so.
    let tmp = tempfile::tempdir().unwrap();
    let suite = refused_key_suite(tmp.path(), 2, 3, 2);
    let out = tmp.path().join("out");
    let output = run_in(&suite, &out);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("stopped: the provider refused the credentials (HTTP 401"),
        "{stderr}"
    );
    assert_eq!(
        runs(tmp.path()),
        ["1", "2"],
        "no rerun of a refused key, no trial 1"
    );
    let trials = read_csv(&out.join("trials.csv"));
    assert_eq!(trials.len(), 1);
    assert_eq!(trials[0]["ended_by"], "error");
    assert_eq!(trials[0]["attempts"], "1");
    assert!(
        trials[0]["error"].starts_with("session 2 failed auth outside the agent"),
        "{:?}",
        trials[0]
    );
    let sessions = read_csv(&out.join("sessions.csv"));
    assert_eq!(sessions.len(), 1, "session 1 counted: {sessions:?}");
    assert_eq!(sessions[0]["newly_verified"], "1");
    let failed = failures(&out);
    assert_eq!(failed.len(), 1);
    assert_eq!(
        (failed[0]["session"].as_u64(), failed[0]["failure"].as_str()),
        (Some(2), Some("auth"))
    );
    let summary = std::fs::read_to_string(out.join("summary.md")).unwrap();
    assert!(
        summary.contains(
            "arm cli: 1 trial ended early at a session that failed outside the agent after \
             sessions that count, counted as far as it went (1 × auth: HTTP 401 (api_error) in the CLI's result)"
        ),
        "{summary}"
    );
    // The key is fixed: resume runs the trial that never started; the one that ended
    // early stays as it was.
    std::fs::remove_file(tmp.path().join("cli.sh.fault")).unwrap();
    loopbench()
        .args(["resume", "--quiet", "--jobs", "1"])
        .arg(&out)
        .assert()
        .success();
    let trials = read_csv(&out.join("trials.csv"));
    assert_eq!(trials.len(), 2);
    assert_eq!(trials[1]["ended_by"], "all_verified", "{trials:?}");
}
