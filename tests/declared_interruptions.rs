//! An interruption an agent declares is its word, not an interruption: with
//! `crash_rate = 0`, a session whose agent writes `"status": "interrupted"` to its usage
//! file (or whose CLI logs a turn it abandoned) and exits 0 is not `interrupted`, the
//! next one is not `resumed`, and `resume_success` judges nothing the agent chose. The
//! declaration is kept in the record (`declared_interrupted`). An interruption the
//! harness makes (crash injection) still is one.

use crate::common;

use common::command::{arm, run_ok, script, sh_suite};
use common::loopbench;

/// Builds its session's file and commits; in session 1 it also declares the session
/// interrupted in its usage file, then exits 0.
const DECLARER: &str = r#"echo "f$LOOPBENCH_SESSION" > "src/f$LOOPBENCH_SESSION.txt"
git add -A && git commit -qm "session $LOOPBENCH_SESSION"
if [ "$LOOPBENCH_SESSION" = 1 ]; then
  echo '{"turns": 3, "status": "interrupted"}' > "$LOOPBENCH_USAGE_FILE"
fi
exit 0
"#;

fn jsonl(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_declared_interruption_is_recorded_as_declared_and_never_makes_the_next_session_resumed() {
    let tmp = tempfile::tempdir().unwrap();
    script(tmp.path(), "declarer.sh", DECLARER);
    let agents = "[agents.declarer]\ndriver = \"command\"\nprogram = \"./declarer.sh\"\n";
    let suite = sh_suite(
        tmp.path(),
        agents,
        &arm("declarer", "declarer", 2, "crash_rate = 0.0"),
    );
    let ran = run_ok(&suite, &tmp.path().join("out"));
    let s = &ran.sessions;
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(s[0]["outcome"], "completed", "{:?}", s[0]);
    assert_eq!(s[0]["failure"], "");
    assert_eq!(s[1]["resumed"], "false", "{:?}", s[1]);
    assert_eq!(s[1]["resume_success"], "", "{:?}", s[1]);
    // The declaration is the record's, not a column.
    assert!(!s[0].contains_key("declared_interrupted"));
    let records = jsonl(&ran.out.join("sessions.jsonl"));
    assert_eq!(records[0]["declared_interrupted"], true);
    assert_eq!(records[0]["turns"], 3, "the rest of the usage file is read");
    assert!(
        records[1].get("declared_interrupted").is_none(),
        "written only when true"
    );
    // No session was resumed, so resume_success has nothing to count.
    let summary = std::fs::read_to_string(ran.out.join("summary.csv")).unwrap();
    let row = summary
        .lines()
        .find(|l| l.starts_with("declarer,resume_success,"))
        .unwrap();
    assert!(row.starts_with("declarer,resume_success,0,0,"), "{row}");
    let shown = loopbench()
        .arg("show")
        .arg(&ran.out)
        .arg("declarer:shtask:0")
        .output()
        .unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("the agent declared the session interrupted; the harness neither cut it off nor saw it cut off"),
        "{shown}"
    );
}

#[test]
fn a_codex_turn_the_cli_logged_as_failed_is_a_declaration_too() {
    // The Codex wrapper with a stand-in whose turn failed on a request the agent made
    // (HTTP 400: no failure outside the agent), after it did its work.
    let tmp = common::visible_tempdir();
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    script(
        &bin,
        "codex",
        r#"cat >/dev/null
echo "f$LOOPBENCH_SESSION" > "src/f$LOOPBENCH_SESSION.txt"
git add -A && git commit -qm "session $LOOPBENCH_SESSION"
echo '{"type":"thread.started","thread_id":"t"}'
echo '{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"done"}}'
if [ "$LOOPBENCH_SESSION" = 1 ]; then
  echo '{"type":"turn.failed","error":{"message":"unexpected status 400 Bad Request: prompt too long"}}'
else
  echo '{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":5}}'
fi
"#,
    );
    let wrapper = common::repo_root().join("scripts/agents/codex.sh");
    let agents = format!(
        "[agents.codex]\ndriver = \"command\"\nprogram = \"{}\"\ntimeout = \"60s\"\n",
        wrapper.display()
    );
    let suite = sh_suite(tmp.path(), &agents, &arm("codex", "codex", 2, ""));
    let out = tmp.path().join("out");
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let output = loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let s = common::read_csv(&out.join("sessions.csv"));
    assert_eq!(
        (s[0]["outcome"].as_str(), s[0]["failure"].as_str()),
        ("completed", "")
    );
    assert_eq!(s[1]["resumed"], "false");
    assert_eq!(
        jsonl(&out.join("sessions.jsonl"))[0]["declared_interrupted"],
        true
    );
}

#[test]
fn a_crash_the_harness_injects_into_a_command_agent_still_interrupts_and_the_next_resumes() {
    // `crash = "agent"`: the harness tells the agent when to stop (LOOPBENCH_INTERRUPT_AT);
    // the agent stops there and says so. The harness made that interruption.
    let tmp = tempfile::tempdir().unwrap();
    script(
        tmp.path(),
        "told.sh",
        r#"echo "f$LOOPBENCH_SESSION" > "src/f$LOOPBENCH_SESSION.txt"
if [ -n "${LOOPBENCH_INTERRUPT_AT:-}" ]; then
  echo '{"status": "interrupted"}' > "$LOOPBENCH_USAGE_FILE"
fi
exit 0
"#,
    );
    let agents =
        "[agents.told]\ndriver = \"command\"\nprogram = \"./told.sh\"\ncrash = \"agent\"\n";
    let suite = sh_suite(
        tmp.path(),
        agents,
        &arm("told", "told", 2, "crash_rate = 0.999"),
    );
    let ran = run_ok(&suite, &tmp.path().join("out"));
    let s = &ran.sessions;
    assert_eq!(s[0]["outcome"], "interrupted", "{:?}", s[0]);
    assert_eq!(s[1]["resumed"], "true", "{:?}", s[1]);
    assert!(
        jsonl(&ran.out.join("sessions.jsonl"))[0]
            .get("declared_interrupted")
            .is_none(),
        "a declaration the harness made true is no mere declaration"
    );
}
