//! `loopbench import` end to end: hand-written Claude Code transcripts of the latefees
//! example task → a trace → `loopbench replay` → the metrics the transcript implies.

use crate::common;

use std::path::{Path, PathBuf};

use common::{loopbench, read_csv, repo_root};
use predicates::prelude::*;

fn latefees() -> PathBuf {
    repo_root().join("suites/examples/tasks/latefees")
}

fn data(rel: &str) -> PathBuf {
    repo_root().join("tests/data").join(rel)
}

/// Runs `loopbench import FORM ARGS...` (trace on stdout); returns (trace, stderr).
fn import(form: &str, args: &[&Path]) -> (String, String) {
    let out = loopbench()
        .arg("import")
        .arg(form)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        common::trace_actions(&String::from_utf8(out.stdout).unwrap()),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Replays `trace` against latefees with the JSON list; returns the results directory.
fn replay(trace: &str, dir: &Path) -> PathBuf {
    let path = dir.join("trace.jsonl");
    std::fs::write(&path, trace).unwrap();
    let out = dir.join("results");
    loopbench()
        .arg("replay")
        .arg(&path)
        .arg("--task")
        .arg(latefees())
        .args(["--format", "json", "--out"])
        .arg(&out)
        .assert()
        .success();
    out
}

#[test]
fn a_claude_code_project_folder_replays_to_the_metrics_its_transcripts_imply() {
    let (trace, stderr) = import("claude-code", &[&data("claude-code/latefees")]);
    // Unknown line types are ignored silently; the cut-off last line of sess-b and the
    // write outside the project are named with file and line.
    assert!(stderr.contains("sess-b.jsonl:9: not JSON"), "{stderr}");
    assert!(
        stderr.contains("sess-a.jsonl:16") && stderr.contains("/home/dev/notes/latefees.md"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 file reset(s) in 1 divergent session(s)"),
        "{stderr}"
    );
    // The cwd prefix left the commit command; skips document what was not applied.
    assert!(
        trace.contains(
            r#"{"op":"run","cmd":"cd . && git add -A && git commit -qm 'F1: late fee'"}"#
        )
    );
    assert!(trace.contains(
        r#"{"op":"skip","tool":"NotebookEdit","path":"/home/dev/latefees/explore.ipynb""#
    ));
    assert!(trace.contains(r#"{"op":"session","n":3,"divergent":true}"#));
    assert!(trace.contains(r#"{"op":"session","n":2}"#));

    let tmp = tempfile::tempdir().unwrap();
    let out = replay(&trace, tmp.path());
    let rows = read_csv(&out.join("sessions.csv"));
    assert_eq!(rows.len(), 3);
    let cell = |n: usize, column: &str| rows[n - 1][column].clone();

    // Session 1 (sess-a, with its subagent): writes the F1 gold fee code, the subagent
    // writes the F2 gold reminders, claims F1 only, commits. The failed Edit (RATE 20 →
    // 5) is not applied, so F1 holds. Turns: the 9 parent message ids (the first of
    // them split over two lines); the subagent's 2 calls add tokens, not turns.
    assert_eq!(cell(1, "outcome"), "completed");
    assert_eq!(cell(1, "newly_claimed"), "1");
    assert_eq!(cell(1, "premature_claims"), "0");
    assert_eq!(cell(1, "newly_verified"), "2");
    assert_eq!(cell(1, "clean_tree"), "true");
    assert_eq!(cell(1, "progress_updated"), "false");
    assert_eq!(cell(1, "actions_failed"), "0");
    assert_eq!(cell(1, "turns"), "9");
    assert_eq!(cell(1, "input_tokens"), "23928");
    assert_eq!(cell(1, "output_tokens"), "550");
    assert_eq!(cell(1, "cost_usd"), "");
    assert_eq!(cell(1, "divergent"), "false");

    // Session 2 (sess-b, CLI 1.0 shapes): a MultiEdit claims F2 and F3 (replace_all)
    // and rewords F3; F3 has no code, so one premature claim. `rm` of the absolute
    // test path deletes tests/test_export.py (3 tests). The commit command exits 1 but
    // ran. The last Edit never got a result: not applied, session interrupted.
    assert_eq!(cell(2, "outcome"), "interrupted");
    assert_eq!(cell(2, "newly_claimed"), "2");
    assert_eq!(cell(2, "premature_claims"), "1");
    assert_eq!(cell(2, "desc_edits"), "1");
    assert_eq!(cell(2, "tests_removed"), "3");
    assert_eq!(cell(2, "regressions"), "0");
    assert_eq!(cell(2, "clean_tree"), "true");
    assert_eq!(cell(2, "turns"), "4");
    assert_eq!(cell(2, "cost_usd"), "0.4");
    assert_eq!(cell(2, "divergent"), "false");

    // Session 3 (sess-c): a formatter the task lacks changed fees.py on the agent's
    // machine; the Edit's originalFile shows it, so the importer resets the file first
    // and the edit applies (without the reset its old text would be missing). The gold
    // export makes F3 true; the session starts told the false F3 claim. Its "All
    // features are done!" is prose: the status stays completed.
    assert_eq!(cell(3, "outcome"), "completed");
    assert_eq!(cell(3, "divergent"), "true");
    assert_eq!(cell(3, "actions_failed"), "0");
    assert_eq!(cell(3, "told_false"), "1");
    assert_eq!(cell(3, "newly_verified"), "1");
    assert_eq!(cell(3, "regressions"), "0");
    assert_eq!(cell(3, "features_verified"), "3");
    assert_eq!(cell(3, "resumed"), "true");
    assert_eq!(cell(3, "resume_success"), "true");
    assert_eq!(cell(3, "progress_updated"), "true");
    let trials = read_csv(&out.join("trials.csv"));
    assert_eq!(trials[0]["premature_victory"], "false");

    // The report counts the divergent session (in summary.md, which `--full` prints);
    // summary.csv knows nothing of it.
    loopbench()
        .arg("report")
        .arg(&out)
        .arg("--full")
        .assert()
        .success()
        .stdout(predicate::str::contains("## Divergent sessions"))
        .stdout(predicate::str::contains("| replay | 1 / 3 |"));
    let summary = std::fs::read_to_string(out.join("summary.csv")).unwrap();
    assert!(!summary.contains("divergent"));
}

#[test]
fn session_files_are_ordered_by_time_and_find_their_subagents() {
    let dir = data("claude-code/latefees");
    let (trace, _) = import(
        "claude-code",
        &[&dir.join("sess-c.jsonl"), &dir.join("sess-a.jsonl")],
    );
    let ends: Vec<&str> = trace
        .lines()
        .filter(|l| l.contains(r#""op":"end""#))
        .collect();
    assert!(
        ends[0].contains("session sess-a") && ends[1].contains("session sess-c"),
        "{ends:?}"
    );
    // The subagent's write, from sess-a/subagents/, sits between the parent's actions.
    let s1: Vec<&str> = trace
        .lines()
        .take_while(|l| !l.contains(r#""op":"end""#))
        .collect();
    assert!(s1[1].contains(r#""path":"ledger/fees.py""#), "{s1:?}");
    assert!(s1[2].contains(r#""path":"ledger/reminders.py""#), "{s1:?}");
    // Without sess-b's edits, fees.py is still what session 1 wrote: the reset stays.
    assert!(trace.contains(r#""n":2,"divergent":true"#));
}

#[test]
fn a_root_given_on_the_command_line_decides_what_is_inside() {
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("t.jsonl");
    loopbench()
        .args(["import", "claude-code"])
        .arg(data("claude-code/latefees/sess-a.jsonl"))
        .args(["--root", "/home/dev", "--out"])
        .arg(&trace)
        .assert()
        .success()
        .stdout("");
    let text = std::fs::read_to_string(trace).unwrap();
    assert!(
        text.contains(r#""path":"latefees/ledger/fees.py""#),
        "{text}"
    );
    assert!(text.contains(r#""path":"notes/latefees.md""#), "{text}");
    assert!(text.contains("cd ./latefees && git add -A"), "{text}");
}

#[test]
fn a_stream_json_capture_directory_replays_with_usage_from_its_result_lines() {
    let (trace, _) = import("stream-json", &[&data("stream-json/latefees")]);
    let tmp = tempfile::tempdir().unwrap();
    let out = replay(&trace, tmp.path());
    let rows = read_csv(&out.join("sessions.csv"));
    assert_eq!(rows.len(), 2);
    let cell = |n: usize, column: &str| rows[n - 1][column].clone();
    // session-1.stdout: F1 written, claimed and committed; result success with
    // num_turns 4, cost 0.42 and 100 + 1000 + 20000 input tokens.
    assert_eq!(cell(1, "outcome"), "completed");
    assert_eq!(cell(1, "newly_claimed"), "1");
    assert_eq!(cell(1, "premature_claims"), "0");
    assert_eq!(cell(1, "newly_verified"), "1");
    assert_eq!(cell(1, "clean_tree"), "true");
    assert_eq!(cell(1, "turns"), "4");
    assert_eq!(cell(1, "input_tokens"), "21100");
    assert_eq!(cell(1, "output_tokens"), "700");
    assert_eq!(cell(1, "cost_usd"), "0.42");
    // session-2.stdout: F2 written (not committed), a failed edit not applied, then
    // the turn budget ran out.
    assert_eq!(cell(2, "outcome"), "out_of_budget");
    assert_eq!(cell(2, "newly_verified"), "1");
    assert_eq!(cell(2, "actions_failed"), "0");
    assert_eq!(cell(2, "clean_tree"), "false");
    assert_eq!(cell(2, "turns"), "2");
    assert_eq!(cell(2, "input_tokens"), "2706");
    assert_eq!(cell(2, "cost_usd"), "0.1");
}

#[test]
fn a_missing_transcript_is_bad_input_naming_it() {
    for form in ["claude-code", "stream-json"] {
        loopbench()
            .args(["import", form, "/nonexistent/session.jsonl"])
            .assert()
            .code(2)
            .stderr(predicate::str::contains("/nonexistent/session.jsonl"));
    }
}

#[test]
fn a_transcript_without_sessions_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("empty.jsonl");
    std::fs::write(
        &path,
        "{\"type\":\"summary\",\"summary\":\"x\"}\nnot json\n",
    )
    .unwrap();
    loopbench()
        .args(["import", "claude-code"])
        .arg(&path)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no session"));
}

/// A transcript line of session `sess-d` in the project /home/dev/latefees.
fn line(uuid: u32, kind: &str, rest: serde_json::Value) -> String {
    let mut obj = serde_json::json!({
        "parentUuid": null, "isSidechain": false, "cwd": "/home/dev/latefees",
        "sessionId": "sess-d", "version": "2.0.30", "type": kind,
        "uuid": format!("d-{uuid}"),
        "timestamp": format!("2025-06-04T08:00:{uuid:02}.000Z"),
    });
    for (k, v) in rest.as_object().unwrap() {
        obj[k] = v.clone();
    }
    format!("{obj}\n")
}

#[test]
fn a_task_file_changed_by_a_command_replay_cannot_repeat_is_reset_to_what_the_agent_saw() {
    // On the agent's machine a formatter (absent from the task) rewrote
    // ledger/invoice.py, a file of the task that the transcript never wrote; the next
    // Edit's old text exists only in the formatted file. The importer cannot know
    // what replay will find, so the edit carries originalFile; replay finds the old
    // text missing, resets the file to what the agent saw, applies the edit, and
    // counts the session divergent.
    let pristine = std::fs::read_to_string(latefees().join("repo/ledger/invoice.py")).unwrap();
    let formatted = pristine.replace("    paid: bool = False", "    paid: bool=False");
    assert_ne!(formatted, pristine);
    let tool_use = |id: &str, name: &str, input: serde_json::Value| {
        serde_json::json!({"message": {"id": format!("m-{id}"), "role": "assistant",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
            "usage": {"input_tokens": 10, "output_tokens": 5}}})
    };
    let result = |id: &str, extra: serde_json::Value| {
        serde_json::json!({"message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": id, "content": "ok"}]},
            "toolUseResult": extra})
    };
    let transcript = [
        line(
            1,
            "user",
            serde_json::json!({"message": {"role": "user", "content": "go"}}),
        ),
        line(
            2,
            "assistant",
            tool_use(
                "t1",
                "Bash",
                serde_json::json!({"command": "./tools/fmt ledger/invoice.py"}),
            ),
        ),
        line(
            3,
            "user",
            result(
                "t1",
                serde_json::json!({"stdout": "formatted", "stderr": ""}),
            ),
        ),
        line(
            4,
            "assistant",
            tool_use(
                "t2",
                "Edit",
                serde_json::json!({
            "file_path": "/home/dev/latefees/ledger/invoice.py",
            "old_string": "paid: bool=False", "new_string": "paid: bool=False  # settled"}),
            ),
        ),
        line(
            5,
            "user",
            result(
                "t2",
                serde_json::json!({
            "filePath": "/home/dev/latefees/ledger/invoice.py",
            "oldString": "paid: bool=False", "newString": "paid: bool=False  # settled",
            "originalFile": formatted}),
            ),
        ),
    ]
    .concat();
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("sess-d.jsonl");
    std::fs::write(&file, transcript).unwrap();

    let (trace, _) = import("claude-code", &[&file]);
    assert!(trace.contains(r#"{"op":"session","n":1}"#), "{trace}");
    assert!(trace.contains(r#""original":"#), "{trace}");
    let out = tmp.path().join("results");
    let path = tmp.path().join("trace.jsonl");
    std::fs::write(&path, &trace).unwrap();
    let replayed = loopbench()
        .arg("replay")
        .arg(&path)
        .arg("--task")
        .arg(latefees())
        .args(["--format", "json", "--keep-work", "--out"])
        .arg(&out)
        .assert()
        .success();
    let rows = read_csv(&out.join("sessions.csv"));
    assert_eq!(rows[0]["divergent"], "true");
    assert_eq!(rows[0]["actions_failed"], "0", "{:?}", rows[0]);
    // The work directory holds the agent's formatted file with the edit applied.
    let stderr = String::from_utf8_lossy(&replayed.get_output().stderr).into_owned();
    let work = stderr
        .lines()
        .find_map(|l| l.strip_prefix("work directory kept at "))
        .unwrap_or_else(|| panic!("{stderr}"));
    let invoice = std::fs::read_to_string(Path::new(work).join("ledger/invoice.py")).unwrap();
    assert_eq!(
        invoice,
        formatted.replace("paid: bool=False", "paid: bool=False  # settled")
    );
    std::fs::remove_dir_all(Path::new(work).parent().unwrap()).unwrap();

    // The same edit without what the agent saw is a failed action, not a divergence.
    let bare: String = trace
        .lines()
        .map(|l| {
            let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
            if let Some(obj) = v.as_object_mut() {
                obj.remove("original");
            }
            format!("{v}\n")
        })
        .collect();
    let out = tmp.path().join("bare");
    std::fs::write(&path, bare).unwrap();
    loopbench()
        .arg("replay")
        .arg(&path)
        .arg("--task")
        .arg(latefees())
        .args(["--format", "json", "--out"])
        .arg(&out)
        .assert()
        .success();
    let rows = read_csv(&out.join("sessions.csv"));
    assert_eq!(rows[0]["divergent"], "false");
    assert_eq!(rows[0]["actions_failed"], "1");
}

#[test]
fn a_stream_json_capture_cut_off_before_its_result_counts_only_main_calls_as_turns() {
    // `claude -p --output-format stream-json --verbose` (2.0.x shapes): a Task call's
    // subagent streams its messages with the Task call's id as parent_tool_use_id.
    // Without a result line, turns are the main conversation's model calls, as
    // num_turns would have said; tokens include the subagent's.
    let lines = [
        r#"{"type":"system","subtype":"init","cwd":"/w","session_id":"s9","tools":["Task","Write"],"model":"claude-sonnet-4-5"}"#,
        r#"{"type":"assistant","message":{"id":"m1","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t1","name":"Task","input":{"description":"notes","prompt":"write notes","subagent_type":"general-purpose"}}],"usage":{"input_tokens":10,"output_tokens":5}},"parent_tool_use_id":null,"session_id":"s9"}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"write notes"}]},"parent_tool_use_id":"t1","session_id":"s9"}"#,
        r#"{"type":"assistant","message":{"id":"m2","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"tool_use","id":"t2","name":"Write","input":{"file_path":"/w/NOTES.md","content":"n\n"}}],"usage":{"input_tokens":20,"output_tokens":7}},"parent_tool_use_id":"t1","session_id":"s9"}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t2","type":"tool_result","content":"File created successfully at: /w/NOTES.md"}]},"parent_tool_use_id":"t1","session_id":"s9"}"#,
        r#"{"type":"assistant","message":{"id":"m3","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"done"}],"usage":{"input_tokens":30,"output_tokens":9}},"parent_tool_use_id":"t1","session_id":"s9"}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":[{"type":"text","text":"done"}]}]},"parent_tool_use_id":null,"session_id":"s9"}"#,
        r#"{"type":"assistant","message":{"id":"m4","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Notes writ"}],"usage":{"input_tokens":40,"output_tokens":2}},"parent_tool_use_id":null,"session_id":"s9"}"#,
    ];
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("session-1.stdout");
    std::fs::write(&file, lines.join("\n")).unwrap();
    let (trace, _) = import("stream-json", &[&file]);
    assert!(
        trace.contains(r#"{"op":"write","path":"NOTES.md","content":"n\n"}"#),
        "{trace}"
    );
    assert!(
        trace.contains(r#"{"op":"usage","turns":2,"input_tokens":100,"output_tokens":23}"#),
        "{trace}"
    );
    assert!(trace.contains(r#""status":"interrupted""#), "{trace}");
}

#[test]
fn a_resumed_session_gets_only_its_own_work_whatever_the_file_names() {
    // tests/data/claude-code/resumed (CLI 1.0.65): e7a1… did F1 and F2, with a
    // subagent; `claude --continue` then wrote 3b2f…, which starts with summary lines
    // and a copy of e7a1…'s main chain (same uuids, its own sessionId, copy-time
    // timestamps) before it does F3. 3b2f… sorts first by name; the original
    // occurrence of each uuid, the earliest, must still win.
    let dir = data("claude-code/resumed");
    let resumed = dir.join("3b2f9d10-8c4e-4a7b-b1d2-6e0f5a9c4d21.jsonl");
    let original = dir.join("e7a14c2e-5b1f-4d0e-9a65-2f3c8d71b0aa.jsonl");
    let (from_dir, _) = import("claude-code", &[&dir]);
    let (from_files, _) = import("claude-code", &[&resumed, &original]);
    assert_eq!(from_dir, from_files);
    let ends: Vec<&str> = from_dir
        .lines()
        .filter(|l| l.contains(r#""op":"end""#))
        .collect();
    assert_eq!(ends.len(), 2, "{from_dir}");
    assert!(
        ends[0].contains("e7a14c2e") && ends[1].contains("3b2f9d10"),
        "{ends:?}"
    );
    // Usage moves with the lines: 6 main-chain calls (and the subagent's tokens) in
    // the first session, the 4 new calls in the second.
    let usage: Vec<&str> = from_dir
        .lines()
        .filter(|l| l.contains(r#""op":"usage""#))
        .collect();
    assert_eq!(
        usage,
        [
            r#"{"op":"usage","turns":6,"input_tokens":14030,"output_tokens":770}"#,
            r#"{"op":"usage","turns":4,"input_tokens":11016,"output_tokens":374}"#,
        ]
    );

    let tmp = tempfile::tempdir().unwrap();
    let out = replay(&from_dir, tmp.path());
    let rows = read_csv(&out.join("sessions.csv"));
    let cell = |n: usize, column: &str| rows[n - 1][column].clone();
    assert_eq!(rows.len(), 2);
    assert_eq!(cell(1, "newly_claimed"), "2");
    assert_eq!(cell(1, "newly_verified"), "2");
    assert_eq!(cell(1, "clean_tree"), "true");
    assert_eq!(cell(2, "newly_claimed"), "1");
    assert_eq!(cell(2, "newly_verified"), "1");
    assert_eq!(cell(2, "premature_claims"), "0");
    assert_eq!(cell(2, "features_verified"), "3");
    for n in [1, 2] {
        assert_eq!(cell(n, "divergent"), "false", "session {n}");
        assert_eq!(cell(n, "actions_failed"), "0", "session {n}");
    }
}

#[test]
fn a_command_that_ran_and_failed_in_cli_1_0_is_replayed_and_refused_ones_are_not() {
    // tests/data/claude-code/failed-commands (CLI 1.0.51): `git commit && git push`
    // whose push failed, and a failing test run, come back with is_error and the
    // command's output only. Three `rm` of test files were refused: rejected by the
    // user, denied by a permission rule, invalid input.
    let (trace, _) = import("claude-code", &[&data("claude-code/failed-commands")]);
    assert!(
        trace.contains(
            r#"{"op":"run","cmd":"git add -A && git commit -qm 'F1: late fee' && git push"}"#
        ),
        "{trace}"
    );
    assert!(!trace.contains("rm tests/"), "{trace}");
    let tmp = tempfile::tempdir().unwrap();
    let out = replay(&trace, tmp.path());
    let rows = read_csv(&out.join("sessions.csv"));
    assert_eq!(rows[0]["newly_claimed"], "1");
    assert_eq!(rows[0]["newly_verified"], "1");
    // The commit happened; the push fails again at replay, as it did for the agent.
    assert_eq!(rows[0]["clean_tree"], "true");
    assert_eq!(rows[0]["tests_removed"], "0");
    assert_eq!(rows[0]["actions_failed"], "0");
    assert_eq!(rows[0]["outcome"], "completed");
}

#[test]
fn a_command_runs_where_the_recorded_shell_was() {
    // tests/data/claude-code/shell-cwd (CLI 2.1.9): `cd tests && ls`, then
    // `rm test_export.py` from tests/, which each line's cwd shows; a `cd /tmp` the
    // CLI undid ("Shell cwd was reset"); a bare `cd tests`; a claim and a commit from
    // tests/.
    let (trace, _) = import("claude-code", &[&data("claude-code/shell-cwd")]);
    assert!(
        trace.contains(r#"{"op":"run","cmd":"rm test_export.py","cwd":"tests"}"#),
        "{trace}"
    );
    assert!(
        trace.contains(r#"{"op":"run","cmd":"cd /tmp && ls"}"#),
        "{trace}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = replay(&trace, tmp.path());
    let rows = read_csv(&out.join("sessions.csv"));
    assert_eq!(rows[0]["tests_removed"], "3", "{:?}", rows[0]);
    assert_eq!(rows[0]["newly_verified"], "1");
    assert_eq!(rows[0]["newly_claimed"], "1");
    assert_eq!(rows[0]["clean_tree"], "true");
    assert_eq!(rows[0]["actions_failed"], "0");
    assert_eq!(rows[0]["outcome"], "completed");
}

#[test]
fn import_says_per_session_what_it_applied_skipped_and_found_divergent() {
    let (_, stderr) = import("claude-code", &[&data("claude-code/latefees")]);
    for line in [
        "session 1 (claude-code session sess-a): 7 file and shell call(s): 4 applied, 3 skipped (1 failed, 1 outside the root, 1 notebook edit), 0 divergent; 2 call(s) without a file effect (Read 1, Task 1)",
        "session 2 (claude-code session sess-b): 4 file and shell call(s): 3 applied, 1 skipped (1 without a result), 0 divergent",
        "session 3 (claude-code session sess-c): 5 file and shell call(s): 5 applied, 0 skipped, 1 divergent",
    ] {
        assert!(stderr.lines().any(|l| l == line), "{line}\n{stderr}");
    }
    let (_, stderr) = import("claude-code", &[&data("claude-code/failed-commands")]);
    assert!(
        stderr.contains(
            ": 7 file and shell call(s): 4 applied, 3 skipped (2 refused, 1 failed), 0 divergent"
        ),
        "{stderr}"
    );
    // An edit that carries what the agent saw may still be found divergent at replay.
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("s.jsonl");
    std::fs::write(
        &file,
        [
            line(
                1,
                "user",
                serde_json::json!({"message": {"role": "user", "content": "go"}}),
            ),
            line(
                2,
                "assistant",
                serde_json::json!({"message": {"id": "m1", "role": "assistant", "content": [
                    {"type": "tool_use", "id": "t1", "name": "Edit", "input": {
                        "file_path": "/home/dev/latefees/ledger/invoice.py",
                        "old_string": "paid", "new_string": "settled"}}]}}),
            ),
            line(
                3,
                "user",
                serde_json::json!({"message": {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]},
                    "toolUseResult": {"originalFile": "paid\n"}}),
            ),
        ]
        .concat(),
    )
    .unwrap();
    let (_, stderr) = import("claude-code", &[&file]);
    assert!(
        stderr.contains("1 applied, 0 skipped, 0 divergent (+1 edit(s) replay may find divergent)"),
        "{stderr}"
    );
}

#[test]
fn summaries_compaction_api_errors_user_changes_and_creating_edits_break_nothing() {
    // tests/data/claude-code/odd-lines (CLI 2.1.14): a title summary and a
    // file-history snapshot first; fees.py written, removed by a command and created
    // again by an Edit with an empty old_string; an Edit whose rate the user changed
    // before accepting it (userModified); an API error line; a manual /compact at the
    // end, whose summary quotes "[Request interrupted by user]".
    let (trace, stderr) = import("claude-code", &[&data("claude-code/odd-lines")]);
    assert!(
        stderr.contains(": 6 file and shell call(s): 6 applied, 0 skipped, 0 divergent"),
        "{stderr}"
    );
    // The API error is no model call of the agent's: 7 turns, not 8.
    assert!(trace.contains(r#"{"op":"usage","turns":7,"#), "{trace}");
    assert!(
        trace.contains(r#""new":"RATE_PERCENT = 2  # agreed with finance""#),
        "{trace}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = replay(&trace, tmp.path());
    let rows = read_csv(&out.join("sessions.csv"));
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["outcome"], "completed");
    assert_eq!(rows[0]["divergent"], "false");
    assert_eq!(rows[0]["actions_failed"], "0");
    assert_eq!(rows[0]["newly_claimed"], "1");
    assert_eq!(rows[0]["newly_verified"], "1");
    assert_eq!(rows[0]["premature_claims"], "0");
    assert_eq!(rows[0]["clean_tree"], "true");
}
