//! The trials of an agent in flight when a failure outside it stops that agent (a refused
//! key in another of its trials): one that had a coding session change the work ends
//! there with its sessions counted, whether it was about to start its next session or
//! waiting to run a failed one again, so that nothing a session's tools can bring about
//! in another trial takes a session that changed the work out of the tables; `resume`
//! runs the trial that could not, and leaves the ones that ended as they are.

use crate::common;

use std::path::Path;

use common::command::{arm, script, sh_suite};
use common::{loopbench, read_csv};
use serde_json::Value;

/// Claude Code's error result for an overload that outlasted its retries.
const OVERLOADED: &str = r#"{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":529,"result":"API Error: 529 overloaded","num_turns":1}"#;

/// Claude Code's error result for a refused key.
const UNAUTHORIZED: &str = r#"{"type":"result","subtype":"success","is_error":true,"terminal_reason":"api_error","api_error_status":401,"result":"Invalid API key · Please run /login","num_turns":0}"#;

/// One CLI for three arms of one agent, run side by side. `again`: session 1 builds its
/// feature, session 2 fails 529 (once) and waits its backoff to run again. `next`:
/// session 1 builds its feature and ends only once the refused key is in
/// failures.jsonl. `refused`: while `fault` lies beside the script, its first session
/// waits for both, then its key is refused. Every start appends `ARM SESSION` to
/// `runs` beside the script.
fn cli(dir: &Path, out: &Path) {
    let wait = |what: &str| {
        format!("i=0; while ! {{ {what}; }} && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done")
    };
    let refused = wait("[ -e \"$0.again2\" ] && [ -e \"$0.next1\" ]");
    let failures = out.join("failures.jsonl");
    let auth = wait(&format!("grep -qs '\"auth\"' '{}'", failures.display()));
    script(
        dir,
        "cli.sh",
        &format!(
            r#"echo "$LOOPBENCH_ARM $LOOPBENCH_SESSION" >> "$0.runs"
case "$LOOPBENCH_ARM $LOOPBENCH_SESSION" in
"again 2")
  if [ ! -e "$0.again2" ]; then
    touch "$0.again2"
    echo '{OVERLOADED}'
    exit 1
  fi ;;
"next 1")
  echo f1 > src/f1.txt
  touch "$0.next1"
  {auth}
  # The breaker trips once the refused attempt is back from its thread.
  sleep 2 ;;
"refused 1")
  if [ -e "$0.fault" ]; then
    {refused}
    echo '{UNAUTHORIZED}'
    exit 1
  fi ;;
esac
echo "f$LOOPBENCH_SESSION" > "src/f$LOOPBENCH_SESSION.txt"
echo '{{"type":"result","subtype":"success","is_error":false,"num_turns":2,"total_cost_usd":0.01,"usage":{{"input_tokens":10,"output_tokens":5}}}}'
"#
        ),
    );
}

fn runs(dir: &Path) -> Vec<String> {
    let mut runs: Vec<String> = std::fs::read_to_string(dir.join("cli.sh.runs"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect();
    runs.sort();
    runs
}

fn failures(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("failures.jsonl"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_stopped_agents_trials_that_changed_the_work_end_counted_and_resume_runs_the_rest() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    cli(tmp.path(), &out);
    // A backoff far longer than the test: the stop, not its end, ends the wait.
    let agents = "infra_backoff = \"10m\"\n\n[agents.cli]\ndriver = \"command\"\nprogram = \"./cli.sh\"\ntimeout = \"90s\"\n";
    let arms =
        arm("again", "cli", 3, "") + &arm("next", "cli", 3, "") + &arm("refused", "cli", 3, "");
    let suite = sh_suite(tmp.path(), agents, &arms);
    std::fs::write(tmp.path().join("cli.sh.fault"), "").unwrap();
    let output = loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--jobs", "3", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("stopped: the provider refused the credentials (HTTP 401")
            && stderr.contains("agent 'cli' started no new session"),
        "{stderr}"
    );
    assert_eq!(
        runs(tmp.path()),
        ["again 1", "again 2", "next 1", "refused 1"],
        "no session started after the stop, and the failed one did not run again"
    );
    let trials = read_csv(&out.join("trials.csv"));
    let arms: Vec<&str> = trials.iter().map(|t| t["arm"].as_str()).collect();
    assert_eq!(arms, ["again", "next"], "{trials:?}");
    for t in &trials {
        assert_eq!(t["ended_by"], "error", "{t:?}");
        assert_eq!(t["attempts"], "1", "{t:?}");
        assert!(
            t["error"].starts_with("its agent started no new session"),
            "{t:?}"
        );
    }
    let sessions = read_csv(&out.join("sessions.csv"));
    let counted: Vec<(&str, &str, &str)> = sessions
        .iter()
        .map(|s| {
            (
                s["arm"].as_str(),
                s["session"].as_str(),
                s["newly_verified"].as_str(),
            )
        })
        .collect();
    assert_eq!(counted, [("again", "1", "1"), ("next", "1", "1")]);
    let mut failed: Vec<(String, u64, String)> = failures(&out)
        .iter()
        .map(|f| {
            (
                f["arm"].as_str().unwrap().to_string(),
                f["session"].as_u64().unwrap(),
                f["failure"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    failed.sort();
    assert_eq!(
        failed,
        [
            ("again".to_string(), 2, "infra".to_string()),
            ("refused".to_string(), 1, "auth".to_string())
        ]
    );

    // The key is fixed: resume runs the trial that never ran; the two that ended stay.
    std::fs::remove_file(tmp.path().join("cli.sh.fault")).unwrap();
    let resumed = loopbench()
        .args(["resume", "--quiet", "--jobs", "1"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        resumed.status.success(),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let after = read_csv(&out.join("trials.csv"));
    assert_eq!(after.len(), 3, "{after:?}");
    assert_eq!(&after[..2], &trials[..]);
    assert_eq!(after[2]["arm"], "refused");
    assert_eq!(after[2]["attempts"], "2");
    assert_eq!(read_csv(&out.join("sessions.csv")).len(), 5);
}
