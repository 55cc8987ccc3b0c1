//! `loopbench import atif` of trajectories whose calls are Codex's tools: each maps as
//! `loopbench import codex` maps it (one implementation: src/import/codex/tool.rs,
//! outcome.rs and map.rs). The trajectory is written the way Harbor's Codex converter
//! (harbor 0.26.0, `harbor/agents/installed/codex.py`) writes a rollout's calls: a
//! `function_call`'s arguments parsed from their JSON string, a custom tool's freeform
//! input as `{"input": ...}`, the calls of one model request bundled in one step with
//! their results matched by `source_call_id`, a JSON output's `metadata` (its
//! `exit_code`) under the step's `extra.tool_call_details.ID`, and the session's cwd as
//! `agent.extra.cwd`.

use crate::common;

use common::loopbench;
use serde_json::{Value, json};

/// One call of a bundled step: (id, name, arguments, output, metadata).
type Call<'a> = (&'a str, &'a str, Value, &'a str, Option<Value>);

/// An agent step of `calls`, as the converter bundles one model request's calls.
fn step(id: u64, calls: &[Call]) -> Value {
    let mut details = serde_json::Map::new();
    for (call, _, args, _, metadata) in calls {
        let mut detail = json!({"raw_arguments": args.to_string(), "item_type": "function_call"});
        if let Some(metadata) = metadata {
            detail["metadata"] = metadata.clone();
        }
        details.insert(call.to_string(), detail);
    }
    json!({
        "step_id": id,
        "timestamp": format!("2026-12-02T03:08:{id:02}.000Z"),
        "source": "agent",
        "model_name": "gpt-5.5",
        "message": "",
        "tool_calls": calls.iter().map(|(call, name, args, _, _)| json!({
            "tool_call_id": call, "function_name": name, "arguments": args
        })).collect::<Vec<_>>(),
        "observation": {"results": calls.iter().map(|(call, _, _, output, _)| json!({
            "source_call_id": call, "content": output
        })).collect::<Vec<_>>()},
        "llm_call_count": 1,
        "extra": {"api_call_id": format!("api_call_{id}"), "tool_call_details": details}
    })
}

const RAN: &str = "Chunk ID: d8d05b\nWall time: 0.0000 seconds\nProcess exited with code 0\nOriginal token count: 0\nOutput:\n";
const PATCHED: &str =
    "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\n";

fn patch(body: &str) -> Value {
    json!({ "input": format!("*** Begin Patch\n{body}*** End Patch\n") })
}

#[test]
fn codex_s_tools_in_a_converter_s_trajectory_map_as_import_codex_maps_them() {
    let steps = json!([
        {"step_id": 1, "source": "user", "message": "Implement F1."},
        step(2, &[
            ("c1", "exec_command", json!({"cmd": "ls", "workdir": "tests", "yield_time_ms": 30000}), RAN, None),
            ("c2", "apply_patch", patch("*** Add File: ledger/fees.py\n+RATE = 2\n+DAYS = 30\n"), PATCHED, None),
        ]),
        step(3, &[("c3", "apply_patch", patch("*** Update File: ledger/fees.py\n@@\n-RATE = 2\n+RATE = 3\n"), PATCHED, None)]),
        // Not applied: Codex says the patch did not match.
        step(4, &[("c4", "apply_patch", patch("*** Update File: ledger/fees.py\n@@\n-NOPE\n+YES\n"),
            "apply_patch verification failed: Failed to find expected lines in /home/dev/latefees/ledger/fees.py:\nNOPE", None)]),
        // CLI 0.4x: an argv, and the exit code the converter took out of the JSON output.
        step(5, &[
            ("c5", "shell", json!({"command": ["bash", "-lc", "python3 -m unittest -q"]}), "FAILED (failures=1)\n", Some(json!({"exit_code": 1, "duration_seconds": 0.3}))),
            ("c6", "shell", json!({"command": ["rm", "-rf", "tests"]}), "exec command rejected by user", Some(json!({"exit_code": -1}))),
        ]),
        // Lines added to a file whose content the transcript never showed.
        step(6, &[("c7", "apply_patch", patch("*** Update File: README.md\n@@\n+## Late fees\n"), PATCHED, None)]),
        step(7, &[
            ("c8", "update_plan", json!({"plan": [{"step": "F1", "status": "completed"}]}), "Plan updated", None),
            ("c9", "apply_patch", patch("*** Delete File: ledger/old.py\n"), PATCHED, None),
        ]),
        // apply_patch run through the shell, in a `cd`: Codex applies it as a patch.
        step(8, &[("c10", "exec_command", json!({"cmd": "cd ledger && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: x.py\n+X = 1\n*** End Patch\nEOF"}), PATCHED, None)]),
    ]);
    let doc = json!({
        "schema_version": "ATIF-v1.7",
        "session_id": "01a234b9-09df-7820-98d8-58ca4000196e",
        "agent": {"name": "codex", "version": "0.171.0", "model_name": "gpt-5.5",
                  "extra": {"originator": "codex_exec", "cwd": "/home/dev/latefees"}},
        "steps": steps,
    });
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("trajectory.json");
    std::fs::write(&file, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let out = loopbench()
        .args(["import", "atif"])
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let trace = String::from_utf8(out.stdout).unwrap();
    let actions: Vec<Value> = common::trace_actions(&trace)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let appends = "a chunk that appends to README.md, whose content the transcript does not show";
    let expected = [
        json!({"op": "session", "n": 1, "divergent": true}),
        json!({"op": "run", "cmd": "ls", "cwd": "tests"}),
        json!({"op": "write", "path": "ledger/fees.py", "content": "RATE = 2\nDAYS = 30\n"}),
        json!({"op": "edit", "path": "ledger/fees.py", "old": "RATE = 2\n", "new": "RATE = 3\n"}),
        json!({"op": "run", "cmd": "python3 -m unittest -q"}),
    ];
    assert_eq!(actions[..5], expected, "{trace}");
    let skip = &actions[5];
    assert_eq!(
        (&skip["op"], &skip["path"], &skip["reason"]),
        (&json!("skip"), &json!("README.md"), &json!(appends)),
        "{trace}"
    );
    assert_eq!(
        actions[6..8],
        [
            json!({"op": "delete", "path": "ledger/old.py"}),
            json!({"op": "write", "path": "ledger/x.py", "content": "X = 1\n"}),
        ],
        "{trace}"
    );
    // Each agent step is one model request (`llm_call_count`).
    assert_eq!(actions[8], json!({"op": "usage", "turns": 7}), "{trace}");
    assert_eq!(actions[9]["op"], "end", "{trace}");
    assert_eq!(actions.len(), 10, "{trace}");
    // The failed patch and the refused command are counted, not applied; update_plan
    // has no file effect.
    assert!(
        stderr.contains("2 failed call(s) (1 refused)") && stderr.contains("update_plan 1"),
        "{stderr}"
    );
}
