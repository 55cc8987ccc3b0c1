//! `loopbench import atif` end to end: ATIF trajectories (hand-written in the shape of
//! Harbor's Claude Code trajectories, and loopbench's own export) → a trace → `loopbench
//! replay`, with the rules every importer follows; and trajectories that try to make the
//! importer read what it must not, loop, or claim absurd usage.

use crate::common;

use std::path::{Path, PathBuf};

use common::{loopbench, read_csv, repo_root};
use serde_json::{Value, json};

fn latefees_task() -> PathBuf {
    repo_root().join("suites/examples/tasks/latefees")
}

fn fixture() -> PathBuf {
    repo_root().join("tests/data/atif/latefees")
}

/// `loopbench import atif ARGS...`: (exit code, trace, stderr).
fn import(args: &[&Path]) -> (i32, String, String) {
    let out = loopbench()
        .args(["import", "atif"])
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn write_json(path: &Path, value: &Value) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap()).unwrap();
}

/// A trajectory of `steps`, more fields from `more`.
fn trajectory(steps: Value, more: Value) -> Value {
    let mut doc = json!({"schema_version": "ATIF-v1.8", "agent": {"name": "x", "version": "1"}, "steps": steps});
    for (k, v) in more.as_object().unwrap() {
        doc[k] = v.clone();
    }
    doc
}

/// An agent step of one call and its result.
fn call_step(id: u64, call: &str, name: &str, args: Value, result: Value) -> Value {
    let mut step = json!({"step_id": id, "source": "agent", "message": "",
        "tool_calls": [{"tool_call_id": call, "function_name": name, "arguments": args}]});
    if !result.is_null() {
        step["observation"] = json!({"results": [result]});
    }
    step
}

#[test]
fn a_harbor_shaped_claude_code_chain_imports_by_the_rules_and_replays() {
    let (code, trace, stderr) = import(&[&fixture()]);
    assert_eq!(code, 0, "{stderr}");
    let actions = common::trace_actions(&trace);
    let lines: Vec<Value> = actions
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ops: Vec<&str> = lines.iter().map(|l| l["op"].as_str().unwrap()).collect();
    // Session 1: the Write, the Edit, the commit (the Read has no file effect); session
    // 2: only the test run (the failed Edit is not applied, the Write outside the
    // project is a skip, the unanswered Bash call cuts the session off).
    assert_eq!(
        ops,
        [
            "session", "write", "edit", "run", "usage", "end", "session", "run", "skip", "usage",
            "end"
        ],
        "{actions}"
    );
    assert_eq!(lines[1]["path"], "ledger/fees.py");
    assert_eq!(lines[2]["path"], "feature_list.json");
    assert_eq!(
        lines[3]["cmd"],
        "cd . && git add -A && git commit -qm 'F1: late fee'"
    );
    assert_eq!(
        lines[4],
        json!({"op": "usage", "turns": 5, "input_tokens": 29000, "output_tokens": 475, "cost_usd": 0.0412})
    );
    assert_eq!(lines[5]["status"], "completed");
    assert_eq!(lines[7]["cwd"], "tests");
    assert_eq!(lines[8]["reason"], "outside the root /home/dev/latefees");
    assert_eq!(
        lines[9],
        json!({"op": "usage", "turns": 4, "input_tokens": 17600, "output_tokens": 195})
    );
    assert_eq!(lines[10]["status"], "interrupted");
    // Harbor's placeholder messages are no text of the agent's; its own are kept.
    assert!(!trace.contains("Executed Write"), "{trace}");
    assert!(trace.contains(r#"{"op":"say","text":"I'll add the late fee module."}"#));
    assert!(
        stderr.contains("1 call(s) without a result") && stderr.contains("no file effect: Read 1"),
        "{stderr}"
    );

    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("trace.jsonl");
    std::fs::write(&path, &trace).unwrap();
    let out = tmp.path().join("results");
    loopbench()
        .arg("replay")
        .arg(&path)
        .arg("--task")
        .arg(latefees_task())
        .args(["--format", "json", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    let sessions = read_csv(&out.join("sessions.csv"));
    assert_eq!(sessions[0]["newly_verified"], "1");
    assert_eq!(sessions[0]["newly_claimed"], "1");
    assert_eq!(sessions[0]["premature_claims"], "0");
    assert_eq!(sessions[0]["clean_tree"], "true");
    assert_eq!(sessions[1]["outcome"], "interrupted");
    assert_eq!(sessions[1]["input_tokens"], "17600");
}

#[test]
fn copied_context_is_not_applied_again_and_an_embedded_subagent_s_calls_are() {
    let tmp = tempfile::tempdir().unwrap();
    let write = |id: u64, call: &str, path: &str| {
        call_step(
            id,
            call,
            "Write",
            json!({"file_path": path, "content": "x\n"}),
            json!({"source_call_id": call, "content": "ok"}),
        )
    };
    let mut copied = write(1, "c1", "copied.txt");
    copied["is_copied_context"] = json!(true);
    let mut delegate = call_step(
        2,
        "t1",
        "Task",
        json!({"prompt": "write b"}),
        json!({"source_call_id": "t1", "content": "done",
               "subagent_trajectory_ref": [{"trajectory_id": "sub-1"}, {"trajectory_path": "elsewhere.json"}]}),
    );
    delegate["message"] = json!("delegating");
    let doc = trajectory(
        json!([copied, delegate, write(3, "w3", "a.txt")]),
        json!({"subagent_trajectories": [trajectory(json!([write(1, "s1", "b.txt")]), json!({"trajectory_id": "sub-1"}))]}),
    );
    let file = tmp.path().join("t.json");
    write_json(&file, &doc);
    let (code, trace, stderr) = import(&[&file]);
    assert_eq!(code, 0, "{stderr}");
    let actions = common::trace_actions(&trace);
    assert!(!actions.contains("copied.txt"), "{actions}");
    let b = actions.find(r#""path":"b.txt""#).expect(&actions);
    let a = actions.find(r#""path":"a.txt""#).expect(&actions);
    assert!(
        b < a,
        "the subagent's write comes at its reference: {actions}"
    );
    assert!(
        actions.starts_with(r#"{"op":"session","n":1,"divergent":true}"#),
        "a subagent in another file is not read, so the session is divergent: {actions}"
    );
    assert!(actions.contains("elsewhere.json"), "{actions}");
    assert!(stderr.contains("found divergent"), "{stderr}");
}

#[test]
fn a_continuation_outside_the_trajectory_s_folder_a_loop_or_a_missing_file_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let secret = tmp.path().join("secret.json");
    write_json(&secret, &trajectory(json!([]), json!({})));
    let cases = [
        (
            json!("../secret.json"),
            "is not a file beside the trajectory",
        ),
        (
            json!(secret.display().to_string()),
            "is not a file beside the trajectory",
        ),
        (json!("missing.json"), "is not a file"),
        (json!("a.json"), "comes back to itself"),
    ];
    for (i, (reference, expected)) in cases.iter().enumerate() {
        let dir = tmp.path().join(format!("case-{i}"));
        let a = dir.join("a.json");
        write_json(
            &a,
            &trajectory(json!([]), json!({"continued_trajectory_ref": reference})),
        );
        let (code, _, stderr) = import(&[&a]);
        assert_eq!(code, 2, "case {i}: {stderr}");
        assert!(stderr.contains(expected), "case {i}: {stderr}");
        assert!(stderr.contains("a.json"), "case {i}: {stderr}");
    }
}

#[test]
fn a_file_that_is_no_trajectory_is_refused_naming_it_and_usage_out_of_range_is_left_out() {
    let tmp = tempfile::tempdir().unwrap();
    let other = tmp.path().join("other.json");
    write_json(&other, &json!({"schema_version": "2.0", "steps": []}));
    let (code, _, stderr) = import(&[&other]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("other.json': expected an ATIF trajectory")
            && stderr.contains("\"schema_version\": \"2.0\""),
        "{stderr}"
    );
    let huge = tmp.path().join("huge.json");
    write_json(
        &huge,
        &trajectory(
            json!([{"step_id": 1, "source": "agent", "message": "hi"}]),
            json!({"final_metrics": {"total_prompt_tokens": u64::MAX, "total_cost_usd": -1.0}}),
        ),
    );
    let (code, trace, stderr) = import(&[&huge]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("usage left out"), "{stderr}");
    assert!(trace.contains(r#"{"op":"usage"}"#), "{trace}");
}
