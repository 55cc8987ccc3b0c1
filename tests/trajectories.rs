//! Every session's trajectory in `trajectories.jsonl`, from each source: the importers'
//! transcripts (Claude Code session files, stream-json captures, Codex rollouts, aider
//! histories) replayed, and the simulated agent. Entries come in the transcript's
//! order with their kinds, every file edit the metrics saw is an entry, and what is
//! written is masked and cut.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;

use common::{loopbench, read_csv, repo_root};

/// `loopbench import FORM INPUT` from the repository root: the whole trace.
fn import(form: &str, input: &str) -> String {
    let out = loopbench()
        .args(["import", form, input])
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Replays `trace` against latefees in `format`; returns the results directory.
fn replay(trace: &str, dir: &Path, format: &str) -> PathBuf {
    let path = dir.join("trace.jsonl");
    std::fs::write(&path, trace).unwrap();
    let out = dir.join("results");
    loopbench()
        .arg("replay")
        .arg(&path)
        .arg("--task")
        .arg(repo_root().join("suites/examples/tasks/latefees"))
        .args(["--format", format, "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    out
}

/// The lines of `trajectories.jsonl`, in order.
fn trajectories(out: &Path) -> Vec<Value> {
    std::fs::read_to_string(out.join("trajectories.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn kinds(line: &Value) -> Vec<String> {
    line["trajectory"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect()
}

/// The trace's file actions of each session, as (op, path), in order.
fn trace_edits(trace: &str) -> Vec<Vec<(String, String)>> {
    let mut sessions: Vec<Vec<(String, String)>> = Vec::new();
    for line in trace.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        match v["op"].as_str().unwrap() {
            "session" => sessions.push(Vec::new()),
            op @ ("write" | "edit" | "delete") => sessions
                .last_mut()
                .unwrap()
                .push((op.to_string(), v["path"].as_str().unwrap().to_string())),
            _ => {}
        }
    }
    sessions
}

/// The `edit` entries of each session's trajectory, as (op, path), in order.
fn trajectory_edits(lines: &[Value]) -> Vec<Vec<(String, String)>> {
    lines
        .iter()
        .map(|line| {
            line["trajectory"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|e| e["kind"] == "edit")
                .map(|e| {
                    (
                        e["op"].as_str().unwrap().to_string(),
                        e["path"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .collect()
}

/// Every file action of the trace is an edit entry of its session, in order, and each
/// session ends with its outcome as `sessions.csv` has it.
fn assert_edits_and_ends(trace: &str, out: &Path) -> Vec<Value> {
    let lines = trajectories(out);
    let rows = read_csv(&out.join("sessions.csv"));
    assert_eq!(lines.len(), rows.len());
    assert_eq!(trajectory_edits(&lines), trace_edits(trace));
    for (line, row) in lines.iter().zip(&rows) {
        assert_eq!(line["session"].to_string(), row["session"]);
        let last = line["trajectory"].as_array().unwrap().last().unwrap();
        assert_eq!(last["kind"], "end");
        assert_eq!(last["reason"].as_str().unwrap(), row["outcome"]);
    }
    lines
}

/// The position of the first entry of `kind` whose `field` holds `needle`.
fn position(line: &Value, kind: &str, field: &str, needle: &str) -> usize {
    line["trajectory"]
        .as_array()
        .unwrap()
        .iter()
        .position(|e| e["kind"] == kind && e[field].to_string().contains(needle))
        .unwrap_or_else(|| panic!("no {kind} with {field} ~ {needle} in {line}"))
}

#[test]
fn a_claude_code_project_replays_to_its_texts_calls_results_and_edits_in_order() {
    let trace = import("claude-code", "tests/data/claude-code/latefees");
    let tmp = tempfile::tempdir().unwrap();
    let out = replay(&trace, tmp.path(), "json");
    let lines = assert_edits_and_ends(&trace, &out);
    let first = &lines[0];
    let k = kinds(first);
    // The Write call, the write as applied, its result; the agent's words; the end.
    assert_eq!(&k[..3], ["tool_call", "edit", "tool_result"], "{k:?}");
    assert!(k.contains(&"message".to_string()), "{k:?}");
    // The feature list's edit sits between its call and its result.
    let edit = position(first, "edit", "path", "feature_list.json");
    assert_eq!(first["trajectory"][edit - 1]["kind"], "tool_call");
    assert_eq!(first["trajectory"][edit + 1]["kind"], "tool_result");
    // A failed Edit: its result is an error, and no edit entry follows its call.
    let failed = first["trajectory"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "tool_result" && e["error"] == true)
        .unwrap();
    assert!(
        failed["output"]
            .as_str()
            .unwrap()
            .contains("tool_use_error")
    );
    // A command: its call, the command as replay ran it with its exit status, its result.
    let command = position(first, "command", "cmd", "git commit");
    assert_eq!(first["trajectory"][command]["exit"], 0);
    assert_eq!(first["trajectory"][command - 1]["tool"], "Bash");
}

#[test]
fn a_stream_json_capture_replays_to_its_calls_results_and_edits_in_order() {
    let trace = import("stream-json", "tests/data/stream-json/latefees");
    let tmp = tempfile::tempdir().unwrap();
    let out = replay(&trace, tmp.path(), "json");
    let lines = assert_edits_and_ends(&trace, &out);
    for line in &lines {
        let k = kinds(line);
        // Every call is answered by its result, later, with the same id.
        for (i, e) in line["trajectory"].as_array().unwrap().iter().enumerate() {
            if e["kind"] == "tool_call" {
                let answered = line["trajectory"].as_array().unwrap()[i..]
                    .iter()
                    .any(|r| r["kind"] == "tool_result" && r["id"] == e["id"]);
                assert!(answered, "{k:?}");
            }
        }
    }
    assert!(kinds(&lines[0]).contains(&"tool_call".to_string()));
}

#[test]
fn codex_rollouts_replay_to_their_calls_results_and_edits_in_order() {
    let trace = import("codex", "tests/data/codex/v0.4x");
    let tmp = tempfile::tempdir().unwrap();
    let out = replay(&trace, tmp.path(), "markdown");
    let lines = assert_edits_and_ends(&trace, &out);
    let first = &lines[0];
    // apply_patch: its call, the write, its result; a refused push: a call and an
    // error-free result but no command.
    let patch = position(first, "tool_call", "tool", "apply_patch");
    assert_eq!(first["trajectory"][patch + 1]["kind"], "edit");
    assert_eq!(first["trajectory"][patch + 2]["kind"], "tool_result");
    let push = position(first, "tool_call", "input", "git push");
    assert_eq!(first["trajectory"][push + 1]["kind"], "tool_result");
    assert!(
        !first["trajectory"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["kind"] == "command" && e["cmd"].to_string().contains("git push"))
    );
}

#[test]
fn an_aider_history_replays_to_the_users_words_the_replies_and_the_block_aider_rejected() {
    let trace = import(
        "aider",
        "tests/data/aider/failed-retry/.aider.chat.history.md",
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = replay(&trace, tmp.path(), "markdown");
    let lines = assert_edits_and_ends(&trace, &out);
    assert_eq!(
        kinds(&lines[0]),
        [
            "message", "message", "edit", "rejected", "message", "edit", "message", "command",
            "end"
        ]
    );
    let t = lines[0]["trajectory"].as_array().unwrap();
    assert_eq!(t[0]["from"], "user");
    assert_eq!(t[3]["by_agent"], true);
    assert_eq!(t[3]["path"], "PROGRESS.md");
    assert!(t[5]["failed"].is_null(), "the retry applied: {}", t[5]);
}

#[test]
fn a_simulated_agents_trajectory_holds_every_file_it_changed_and_its_commits() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    loopbench()
        .args(["run"])
        .arg(repo_root().join("suites/seed-replication"))
        .args([
            "--arms",
            "json,crash",
            "--replicates",
            "1",
            "--seed",
            "3",
            "--quiet",
        ])
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let lines = trajectories(&out);
    let sessions: Vec<Value> = std::fs::read_to_string(out.join("sessions.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), sessions.len());
    let mut claimed = 0;
    for (line, session) in lines.iter().zip(&sessions) {
        assert_eq!(line["trial_id"], session["trial_id"]);
        assert_eq!(line["session"], session["session"]);
        let t = line["trajectory"].as_array().unwrap();
        assert_eq!(t.last().unwrap()["reason"], session["outcome"]);
        // A session that claimed an entry wrote its list: an edit entry of the list.
        let newly = session["evidence"]["newly_claimed"].as_array();
        if newly.is_some_and(|n| !n.is_empty()) {
            claimed += 1;
            assert!(
                t.iter().any(|e| {
                    let path = e["path"].as_str().unwrap_or("");
                    e["kind"] == "edit"
                        && (path.starts_with("feature_list.") || path == "FEATURES.md")
                }),
                "{line}"
            );
        }
        // Removed tests: the test file's delete or rewrite is there.
        for removed in session["evidence"]["tests_removed"].as_array().unwrap() {
            let path = removed["path"].as_str().unwrap();
            assert!(
                t.iter().any(|e| e["kind"] == "edit" && e["path"] == path),
                "{path}: {line}"
            );
        }
    }
    assert!(claimed > 0);
    assert!(
        lines
            .iter()
            .flat_map(|l| l["trajectory"].as_array().unwrap())
            .any(|e| e["kind"] == "command" && e["cmd"].to_string().contains("git"))
    );
}

#[test]
fn the_sim_agent_logs_a_pid_for_each_process_its_commands_start_directly() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let log = tmp.path().join("pids");
    loopbench()
        .args(["run"])
        .arg(repo_root().join("suites/seed-replication"))
        .args(["--arms", "json", "--replicates", "1", "--quiet", "--out"])
        .arg(&out)
        .env("LOOPBENCH_SIM_PID_LOG", &log)
        .assert()
        .success();
    let pids: Vec<u32> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    // A commit is `git add -A && git commit ...`: two processes when the add
    // succeeded; any other command, one.
    let commands: Vec<Value> = trajectories(&out)
        .iter()
        .flat_map(|l| l["trajectory"].as_array().unwrap().clone())
        .filter(|e| e["kind"] == "command")
        .collect();
    let expected: usize = commands
        .iter()
        .map(|c| {
            let commit = c["cmd"].as_str().unwrap().starts_with("git add -A && ");
            if commit && c["exit"] == 0 { 2 } else { 1 }
        })
        .sum();
    assert!(commands.len() > 5, "{commands:?}");
    assert_eq!(pids.len(), expected, "{pids:?}");
    let mut distinct = pids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), pids.len(), "{pids:?}");
    assert!(pids.iter().all(|p| *p > 1 && *p != std::process::id()));
}

#[test]
fn secrets_are_masked_and_long_texts_cut_with_the_cut_named() {
    let dump = "HOME=/root\nANTHROPIC_API_KEY=sk-ant-api03-AAAAbbbbCCCCddddEEEE\nGH_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ\n";
    let long = "x".repeat(20_000);
    let lines = [
        serde_json::json!({"op": "session", "n": 1}),
        serde_json::json!({"op": "call", "tool": "Bash", "id": "t1", "input": {"command": "env"}}),
        serde_json::json!({"op": "output", "id": "t1", "output": dump}),
        serde_json::json!({"op": "say", "text": "curl -H 'Authorization: Bearer abcdefgh12345678'"}),
        serde_json::json!({"op": "write", "path": "big.txt", "content": long}),
        serde_json::json!({"op": "run", "cmd": "head -c 9000 /dev/zero | tr '\\0' y; echo GH_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ"}),
        serde_json::json!({"op": "end", "status": "completed"}),
    ];
    let trace: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("trace.jsonl");
    std::fs::write(&path, trace).unwrap();
    let out = tmp.path().join("results");
    let mut replay = loopbench();
    replay
        .arg("replay")
        .arg(&path)
        .arg("--task")
        .arg(repo_root().join("suites/examples/tasks/latefees"))
        .args(["--format", "json", "--quiet", "--out"])
        .arg(&out);
    if !loopbench::sandbox::bwrap_works() {
        replay.arg("--unsandboxed");
    }
    replay.assert().success();
    let text = std::fs::read_to_string(out.join("trajectories.jsonl")).unwrap();
    for secret in ["sk-ant-api03", "ghp_0123", "abcdefgh12345678"] {
        assert!(!text.contains(secret), "{secret} in {text}");
    }
    let line: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    let t = line["trajectory"].as_array().unwrap();
    assert_eq!(
        t[1]["output"],
        "HOME=/root\nANTHROPIC_API_KEY=[masked]\nGH_TOKEN=[masked]\n"
    );
    assert_eq!(t[2]["text"], "curl -H 'Authorization: Bearer [masked]'");
    assert_eq!(t[3]["new"].as_str().unwrap().len(), 8192);
    assert_eq!(t[3]["cut"]["new"], 20_000);
    // A command's output is kept from its end, its full length unknown.
    let output = t[4]["output"].as_str().unwrap();
    assert_eq!(t[4]["cut"]["output"], 0);
    assert!(output.ends_with("GH_TOKEN=[masked]\n"), "{output}");
}

#[test]
fn show_prints_a_sessions_entries_one_a_line_with_the_counted_ones_marked() {
    let mut trace = import("claude-code", "tests/data/claude-code/latefees");
    // The agent's words carry a terminal escape: show prints it escaped.
    trace = trace.replacen(
        "\n",
        "\n{\"op\":\"say\",\"text\":\"\\u001b[2J\\u001b]0;owned\\u0007 cleared\"}\n",
        1,
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = replay(&trace, tmp.path(), "json");
    let trial = "replay:latefees:0";
    let shown = loopbench()
        .arg("show")
        .arg(&out)
        .args([trial, "--trajectory", "--session", "1"])
        .output()
        .unwrap();
    assert!(shown.status.success());
    let text = String::from_utf8(shown.stdout).unwrap();
    assert!(text.starts_with("session 1 (coding, "), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{7}'),
        "{text}"
    );
    assert!(text.contains("cleared"), "{text}");
    // The write of the feature list is marked with the entry it changed.
    let marked: Vec<&str> = text.lines().filter(|l| l.starts_with('*')).collect();
    assert!(
        marked.iter().any(|l| l.contains("feature_list.json")),
        "{text}"
    );
    assert!(
        text.contains("F1: passes false → true: marked passing here"),
        "{text}"
    );
    // One line per entry, numbered.
    let entries = text
        .lines()
        .filter(|l| l.len() > 5 && l[1..5].trim().parse::<usize>().is_ok());
    let lines = trajectories(&out);
    assert_eq!(
        entries.count(),
        lines[0]["trajectory"].as_array().unwrap().len()
    );
    // As data: the same entries, the marks beside them.
    let json = loopbench()
        .arg("show")
        .arg(&out)
        .args([trial, "--trajectory", "--json"])
        .output()
        .unwrap();
    assert!(json.status.success());
    let value: Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value.as_array().unwrap().len(), lines.len());
    let marks: Vec<&Value> = value[0]["trajectory"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|e| e["marks"].as_array().unwrap())
        .collect();
    assert!(marks.iter().any(|m| m["feature"] == "F1"), "{value}");
    // A session the trial does not have is bad input naming it.
    let missing = loopbench()
        .arg("show")
        .arg(&out)
        .args([trial, "--trajectory", "--session", "99"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no session 99"));
}
