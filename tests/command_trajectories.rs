//! A command agent's trajectory, whatever its CLI: the harness reads its own capture of
//! the CLI's output in the format the agent's program declares (`# loopbench: usage
//! codex`, `aider`; Claude Code's stream-json otherwise) into entries, and every
//! session ends with its end (its outcome and usage as the session's record has them).
//! The agents here print real captures of the CLIs (tests/data), one a session.

use std::path::Path;

use serde_json::Value;

use crate::common;

use common::command::{Ran, arm, run_ok, script, sh_suite};
use common::repo_root;

/// Runs an arm of `sessions` sessions whose agent prints `captures[i]` (paths under
/// tests/data) in session i + 1, its program declaring `usage` as its output format.
fn replaying(tmp: &Path, usage: &str, captures: &[&str]) -> Ran {
    for (i, capture) in captures.iter().enumerate() {
        std::fs::copy(
            repo_root().join(capture),
            tmp.join(format!("capture-{}.stdout", i + 1)),
        )
        .unwrap();
    }
    script(
        tmp,
        "cli.sh",
        &format!(
            "# loopbench: usage {usage}\ncat \"{}/capture-$LOOPBENCH_SESSION.stdout\"\n",
            tmp.display()
        ),
    );
    let agents = "[agents.cli]\ndriver = \"command\"\nprogram = \"./cli.sh\"\n";
    let suite = sh_suite(tmp, agents, &arm("cli", "cli", captures.len() as u32, ""));
    run_ok(&suite, &tmp.join("out"))
}

/// The lines of `trajectories.jsonl`, in order.
fn trajectories(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("trajectories.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn kinds(line: &Value) -> Vec<&str> {
    line["trajectory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect()
}

fn entries<'a>(line: &'a Value, kind: &str) -> Vec<&'a Value> {
    line["trajectory"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == kind)
        .collect()
}

/// Each session's trajectory ends with its end: its outcome and usage as
/// `sessions.csv` has them.
fn assert_ends(ran: &Ran, lines: &[Value]) {
    assert_eq!(
        lines.len(),
        ran.sessions.len(),
        "a line per counted session"
    );
    for (line, row) in lines.iter().zip(&ran.sessions) {
        assert_eq!(line["session"].to_string(), row["session"]);
        let end = line["trajectory"].as_array().unwrap().last().unwrap();
        assert_eq!(end["kind"], "end", "{line}");
        assert_eq!(end["reason"], row["outcome"].as_str(), "{line}");
        for field in ["turns", "input_tokens", "output_tokens"] {
            let said = end["usage"][field]
                .as_u64()
                .map(|n| n.to_string())
                .unwrap_or_default();
            assert_eq!(said, row[field], "session {}: {field}", row["session"]);
        }
    }
}

#[test]
fn a_codex_exec_json_capture_gives_its_commands_results_file_changes_and_message_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    // Session 1 of the real dry run, then session 4, which the scenario's crash cut
    // off mid-turn: what Codex printed before is what it did.
    let ran = replaying(
        tmp.path(),
        "codex",
        &[
            "tests/data/codex/latefees-exec-json/session-1.stdout",
            "tests/data/codex/latefees-exec-json/session-4.stdout",
        ],
    );
    let lines = trajectories(&ran.out);
    assert_ends(&ran, &lines);
    assert_eq!(ran.sessions[0]["turns"], "7", "the capture's usage is read");
    let call_result = ["tool_call", "tool_result"];
    let mut want: Vec<&str> = [call_result, call_result].concat();
    want.push("edit");
    want.extend([call_result, call_result, call_result].concat());
    want.extend(["message", "end"]);
    assert_eq!(kinds(&lines[0]), want);
    let calls = entries(&lines[0], "tool_call");
    assert_eq!(calls[0]["tool"], "shell");
    assert_eq!(
        calls[1]["input"]["command"],
        "/bin/bash -lc 'python3 -m unittest -q tests.test_late_fee'"
    );
    let results = entries(&lines[0], "tool_result");
    assert!(results.iter().all(|r| r["exit"] == 0), "{results:?}");
    assert_eq!(results[1]["id"], calls[1]["id"]);
    assert!(
        results[1]["output"]
            .as_str()
            .unwrap()
            .contains("Ran 3 tests"),
        "the command's output"
    );
    // The file Codex's own patch changed, by the path Codex named.
    let edits = entries(&lines[0], "edit");
    assert_eq!(edits[0]["path"], "/home/dev/latefees/FEATURES.md");
    assert_eq!(edits[0]["op"], "edit");
    assert_eq!(
        entries(&lines[0], "message")[0]["text"],
        "F1 done and tested."
    );
    assert_eq!(
        kinds(&lines[1]),
        [
            "tool_call",
            "tool_result",
            "tool_call",
            "tool_result",
            "end"
        ]
    );
}

#[test]
fn aiders_output_gives_the_edits_it_applied_and_the_commands_it_ran_in_order() {
    let tmp = tempfile::tempdir().unwrap();
    let ran = replaying(
        tmp.path(),
        "aider",
        &["tests/data/aider/latefees-stdout/session-1.stdout"],
    );
    let lines = trajectories(&ran.out);
    assert_ends(&ran, &lines);
    assert_eq!(
        kinds(&lines[0]),
        [vec!["edit"; 3], vec!["command"; 6], vec!["end"]].concat()
    );
    let edits: Vec<&str> = entries(&lines[0], "edit")
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(edits, ["FEATURES.md", "ledger/fees.py", "PROGRESS.md"]);
    let commands: Vec<&str> = entries(&lines[0], "command")
        .iter()
        .map(|e| e["cmd"].as_str().unwrap())
        .collect();
    let answer = [
        "python3 -m unittest -q tests.test_late_fee",
        "bin/send_reminder INV-1",
        "git add -A && git commit -qm 'F1: late fee'",
    ];
    // aider runs an answer's commands again after the next answer.
    assert_eq!(commands, [answer, answer].concat());
    // The model's reply is not read from aider's output: nothing is made up of it.
    assert!(entries(&lines[0], "message").is_empty());
}

#[test]
fn a_block_aider_failed_to_match_is_a_step_aider_rejected_before_its_confirmed_retry() {
    let tmp = tempfile::tempdir().unwrap();
    let ran = replaying(
        tmp.path(),
        "aider",
        &["tests/data/aider/failed-retry-stdout/session-1.stdout"],
    );
    let lines = trajectories(&ran.out);
    assert_ends(&ran, &lines);
    assert_eq!(kinds(&lines[0]), ["rejected", "edit", "end"]);
    let rejected = &lines[0]["trajectory"][0];
    assert_eq!(rejected["path"], "PROGRESS.md");
    assert_eq!(rejected["by_agent"], true);
    assert_eq!(
        rejected["reason"],
        "SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in PROGRESS.md"
    );
    assert_eq!(lines[0]["trajectory"][1]["path"], "PROGRESS.md");
}
