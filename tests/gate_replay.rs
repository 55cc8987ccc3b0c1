//! `replay --ledger gate`: the harness's gate rewrites the list after each replayed
//! session as it did in a gated arm's trial, its writes are never counted as the
//! recorded agent's, the manifest keeps the ledger, and `resume` replays the rest with
//! it (a manifest edited to another ledger is refused: the ledger is part of the
//! replay's content hash).

use crate::common;

use std::path::{Path, PathBuf};

use common::{Trace, claim, loopbench, read_jsonl, sh_entries, sh_task, write_list};
use loopbench::feature_list::ListFormat;
use serde_json::{Value, json};

/// Session 1 builds F1 and commits without touching the list; session 2 claims F1 and
/// F2 (F2 unbuilt); session 3 does nothing.
fn trace() -> Trace {
    Trace::new()
        .session(1)
        .write("src/f1.txt", "one")
        .commit()
        .end("completed")
        .session(2)
        .op(write_list(
            ListFormat::Json,
            &claim(claim(sh_entries(), "F1"), "F2"),
        ))
        .end("completed")
        .session(3)
        .end("completed")
}

/// Replays the trace of `root` on the sh task there with `args`; the results directory.
fn replay(root: &Path, name: &str, args: &[&str]) -> PathBuf {
    let out = root.join(name);
    loopbench()
        .arg("replay")
        .arg(root.join("trace.jsonl"))
        .arg("--task")
        .arg(root.join("shtask"))
        .args(["--format", "json", "--quiet", "--unsandboxed", "--out"])
        .arg(&out)
        .args(args)
        .assert()
        .success();
    out
}

/// Field `field` of every session, in order.
fn column(sessions: &[Value], field: &str) -> Vec<Value> {
    sessions.iter().map(|s| s[field].clone()).collect()
}

#[test]
fn the_gates_writes_reach_the_next_session_and_never_count_as_the_agents() {
    let tmp = tempfile::tempdir().unwrap();
    sh_task(tmp.path());
    trace().save(tmp.path());
    let memo = read_jsonl(&replay(tmp.path(), "memo", &[]).join("sessions.jsonl"));
    let gate_dir = replay(tmp.path(), "gate", &["--ledger", "gate"]);
    let gate = read_jsonl(&gate_dir.join("sessions.jsonl"));

    // The agent's claims are the agent's under both ledgers: F1 and F2 in session 2
    // under memo; under the gate F1 was already set by the harness, so the agent
    // claimed F2 alone. F2 is premature either way.
    assert_eq!(
        column(&memo, "newly_claimed"),
        [json!(0), json!(2), json!(0)]
    );
    assert_eq!(
        column(&gate, "newly_claimed"),
        [json!(0), json!(1), json!(0)]
    );
    for sessions in [&memo, &gate] {
        assert_eq!(
            column(sessions, "premature_claims"),
            [json!(0), json!(1), json!(0)]
        );
        assert_eq!(
            column(sessions, "features_verified"),
            [json!(1), json!(1), json!(1)]
        );
    }
    // Session 3 starts from the list the agent left (F2 claimed, unverified) under memo,
    // from the gate's (F2 reset) under the gate; the gate's edits are no entry or
    // description edits of the next session.
    assert_eq!(column(&memo, "told_false"), [json!(0), json!(0), json!(1)]);
    assert_eq!(column(&gate, "told_false"), [json!(0), json!(0), json!(0)]);
    for field in [
        "desc_edits",
        "step_edits",
        "entries_removed",
        "entries_added",
    ] {
        assert_eq!(
            column(&gate, field),
            [json!(0), json!(0), json!(0)],
            "{field}"
        );
    }
    let manifest: Value =
        serde_json::from_slice(&std::fs::read(gate_dir.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["replay"]["ledger"], json!("gate"), "{manifest}");
    let memo_manifest: Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("memo/manifest.json")).unwrap())
            .unwrap();
    assert!(
        memo_manifest["replay"].get("ledger").is_none(),
        "a memo replay's manifest reads as before the option: {memo_manifest}"
    );
    assert_ne!(manifest["suite_hash"], memo_manifest["suite_hash"]);
    // An export names it with the replay's other settings.
    let inspect = tmp.path().join("inspect");
    loopbench()
        .arg("export")
        .arg(&gate_dir)
        .args(["--to", "inspect", "--out"])
        .arg(&inspect)
        .assert()
        .success();
    let log = std::fs::read_dir(&inspect)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let log: Value = serde_json::from_slice(&std::fs::read(log.path()).unwrap()).unwrap();
    assert_eq!(log["eval"]["task_args"]["ledger"], json!("gate"));
}

#[test]
fn a_gated_replay_resumes_with_its_ledger_and_refuses_a_manifest_edited_to_another() {
    let tmp = tempfile::tempdir().unwrap();
    sh_task(tmp.path());
    trace().save(tmp.path());
    let out = replay(tmp.path(), "gate", &["--ledger", "gate"]);
    let sessions = read_jsonl(&out.join("sessions.jsonl"));
    let manifest_file = out.join("manifest.json");
    let manifest = std::fs::read_to_string(&manifest_file).unwrap();

    // The replay as it was when killed before its one trial was recorded.
    let forget = || {
        for records in ["sessions.jsonl", "trials.jsonl"] {
            std::fs::write(out.join(records), "").unwrap();
        }
    };
    forget();
    loopbench()
        .args(["resume", "--quiet"])
        .arg(&out)
        .assert()
        .success();
    let again = read_jsonl(&out.join("sessions.jsonl"));
    for field in ["newly_claimed", "premature_claims", "told_false"] {
        assert_eq!(column(&again, field), column(&sessions, field), "{field}");
    }

    // The same directory with its ledger edited to memo would go on as another
    // experiment: refused, naming the content hash that no longer holds.
    forget();
    let mut edited: Value = serde_json::from_str(&manifest).unwrap();
    edited["replay"]["ledger"] = json!("memo");
    std::fs::write(&manifest_file, edited.to_string()).unwrap();
    let refused = loopbench()
        .args(["resume", "--quiet"])
        .arg(&out)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&refused.get_output().stderr).into_owned();
    assert!(
        stderr.contains("changed since this replay started"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("sessions.jsonl")).unwrap(),
        ""
    );
}
