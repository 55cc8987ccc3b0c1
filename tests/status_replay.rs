//! The status-ledger, exit-check and budget fields (`in_progress`, `contract_edits`,
//! `exit_check`, `reverted`, `over_budget`, the trial's `plan_omissions`) and their
//! rates, each triggered and not triggered by a hand-written trace, under every list
//! format and both schemas, with the null rules.

use crate::common;

use common::{Trace, read_jsonl, sh_entries, sh_task};
use loopbench::feature_list::{
    Contract, Entry, ListFormat, ListSchema, RenderOptions, Status, render_with,
};
use serde_json::{Value, json};

const FORMATS: [ListFormat; 3] = [ListFormat::Json, ListFormat::Markdown, ListFormat::Yaml];
const SCHEMAS: [ListSchema; 2] = [ListSchema::Passes, ListSchema::Status];

/// What one replay wrote.
struct Run {
    sessions: Vec<Value>,
    trials: Vec<Value>,
    summary: Vec<Value>,
}

impl Run {
    fn s(&self, n: usize, field: &str) -> Value {
        self.sessions[n - 1]
            .get(field)
            .cloned()
            .unwrap_or_else(|| panic!("session record has no field {field}"))
    }

    /// `(k, n)` of `metric` in summary.json.
    fn rate(&self, metric: &str) -> (u64, u64) {
        let row = self
            .summary
            .iter()
            .find(|r| r["metric"] == metric)
            .unwrap_or_else(|| panic!("no {metric} in summary.json"));
        (row["k"].as_u64().unwrap(), row["n"].as_u64().unwrap())
    }
}

/// Replays `trace` on the sh task under `format` and `schema` with extra `args`.
fn replay(trace: &Trace, format: ListFormat, schema: ListSchema, args: &[&str]) -> Run {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let out = tmp.path().join("results");
    common::loopbench()
        .arg("replay")
        .arg(trace.save(tmp.path()))
        .arg("--task")
        .arg(&task)
        .args(["--format", format.as_str(), "--schema", schema.as_str()])
        .args(["--quiet", "--unsandboxed", "--out"])
        .arg(&out)
        .args(args)
        .assert()
        .success();
    Run {
        sessions: read_jsonl(&out.join("sessions.jsonl")),
        trials: read_jsonl(&out.join("trials.jsonl")),
        summary: serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap())
            .unwrap(),
    }
}

/// The contract the harness renders for the sh task (its goal, no lists).
fn task_contract() -> Contract {
    Contract {
        goal: "three files".into(),
        ..Contract::default()
    }
}

/// An action writing the whole list in `format` and `schema`.
fn list(format: ListFormat, schema: ListSchema, contract: &Contract, entries: &[Entry]) -> Value {
    let text = render_with(format, schema, contract, entries, &RenderOptions::default());
    json!({"op": "write", "path": format.file_name(), "content": text})
}

/// The sh entries with the given states (the rest pending), as the schema writes them.
fn with_states(schema: ListSchema, states: &[(&str, Status)]) -> Vec<Entry> {
    let mut entries = sh_entries();
    for e in &mut entries {
        if let Some((_, s)) = states.iter().find(|(id, _)| *id == e.id) {
            match schema {
                ListSchema::Status => e.set_state(*s),
                ListSchema::Passes => e.passes = s.is_done(),
            }
        }
    }
    entries
}

/// A list text that no parser of the status schema, and no JSON or YAML parser, reads.
/// The Markdown parser of the passes schema reads anything (an unknown line is prose).
fn garbage(format: ListFormat) -> Value {
    json!({"op": "write", "path": format.file_name(), "content": "{{{ nonsense\n## Features\n- [x] **F1** (in_progress) bad\n: : :\n"})
}

fn parses_anything(format: ListFormat, schema: ListSchema) -> bool {
    format == ListFormat::Markdown && schema == ListSchema::Passes
}

/// A session that leaves PROGRESS.md and commits, so that its exit check can pass.
fn tidy(trace: Trace) -> Trace {
    trace.write("PROGRESS.md", "notes\n").commit()
}

#[test]
fn in_progress_counts_entries_in_progress_under_the_status_schema_only() {
    let two = [("F1", Status::InProgress), ("F2", Status::InProgress)];
    let one = [("F1", Status::InProgress), ("F2", Status::Blocked)];
    for format in FORMATS {
        for schema in SCHEMAS {
            let c = task_contract();
            let trace = Trace::new()
                .session(1)
                .op(list(format, schema, &c, &with_states(schema, &two)))
                .end("completed")
                .session(2)
                .op(list(format, schema, &c, &with_states(schema, &one)))
                .end("completed")
                .session(3)
                .end("completed")
                .session(4)
                .op(garbage(format))
                .end("completed");
            let r = replay(&trace, format, schema, &[]);
            let at = format!("{format}/{schema}");
            match schema {
                ListSchema::Status => {
                    assert_eq!(r.s(1, "in_progress"), json!(2), "{at}");
                    assert_eq!(r.s(2, "in_progress"), json!(1), "{at}");
                    // Untouched, the list still holds one in progress.
                    assert_eq!(r.s(3, "in_progress"), json!(1), "{at}");
                    assert_eq!(r.s(4, "in_progress"), Value::Null, "{at}: unparseable");
                    assert_eq!(r.rate("multi_in_progress"), (1, 3), "{at}");
                }
                ListSchema::Passes => {
                    for n in 1..=4 {
                        assert_eq!(r.s(n, "in_progress"), Value::Null, "{at} session {n}");
                    }
                    assert_eq!(r.rate("multi_in_progress"), (0, 0), "{at}");
                }
            }
        }
    }
}

#[test]
fn contract_edits_sees_goal_acceptance_and_forbidden_changes_but_not_trailing_space() {
    let base = Contract {
        goal: "three files".into(),
        acceptance: vec!["every check passes".into(), "no test is edited".into()],
        forbidden: vec!["editing tests/".into()],
    };
    let padded = Contract {
        goal: "three files  ".into(),
        ..base.clone()
    };
    let reordered = Contract {
        acceptance: vec!["no test is edited".into(), "every check passes".into()],
        ..base.clone()
    };
    let reworded = Contract {
        goal: "three files, roughly".into(),
        ..base.clone()
    };
    let unforbidden = Contract {
        forbidden: vec![],
        ..base.clone()
    };
    for format in FORMATS {
        for schema in SCHEMAS {
            let e = sh_entries();
            let trace = Trace::new()
                // 1: the task's goal gains acceptance and forbidden lists: a change.
                .session(1)
                .op(list(format, schema, &base, &e))
                .end("completed")
                // 2: trailing whitespace on the goal only.
                .session(2)
                .op(list(format, schema, &padded, &e))
                .end("completed")
                .session(3)
                .op(list(format, schema, &reordered, &e))
                .end("completed")
                .session(4)
                .op(list(format, schema, &reworded, &e))
                .end("completed")
                .session(5)
                .op(list(format, schema, &unforbidden, &e))
                .end("completed")
                .session(6)
                .end("completed")
                .session(7)
                .op(garbage(format))
                .end("completed");
            let r = replay(&trace, format, schema, &[]);
            let at = format!("{format}/{schema}");
            match schema {
                ListSchema::Status => {
                    let got: Vec<Value> = (1..=7).map(|n| r.s(n, "contract_edits")).collect();
                    assert_eq!(
                        got,
                        [
                            json!(1),
                            json!(0),
                            json!(1),
                            json!(1),
                            json!(1),
                            json!(0),
                            Value::Null
                        ],
                        "{at}"
                    );
                    assert_eq!(r.rate("contract_edit"), (4, 6), "{at}");
                }
                ListSchema::Passes => {
                    for n in 1..=7 {
                        assert_eq!(r.s(n, "contract_edits"), Value::Null, "{at} session {n}");
                    }
                    assert_eq!(r.rate("contract_edit"), (0, 0), "{at}");
                }
            }
        }
    }
}

#[test]
fn the_exit_check_needs_a_clean_tree_notes_a_parsing_list_and_self_verified_claims() {
    for format in FORMATS {
        for schema in SCHEMAS {
            let c = task_contract();
            let done = [("F1", Status::Completed)];
            let trace = tidy(Trace::new().session(1).write("src/f1.txt", "one").op(list(
                format,
                schema,
                &c,
                &with_states(schema, &done),
            )))
            .end("completed")
            // 2: uncommitted work.
            .session(2)
            .write("src/f2.txt", "two")
            .end("completed")
            // 3: committed, but PROGRESS.md holds only whitespace.
            .session(3)
            .write("PROGRESS.md", "  \n")
            .commit()
            .end("completed")
            // 4: a claim whose check fails (F3 is not there).
            .session(4)
            .op(list(
                format,
                schema,
                &c,
                &with_states(
                    schema,
                    &[("F1", Status::Completed), ("F3", Status::Completed)],
                ),
            ))
            .write("PROGRESS.md", "F3 done\n")
            .commit()
            .end("completed")
            // 5: the list no longer parses.
            .session(5)
            .op(garbage(format))
            .commit()
            .end("completed");
            let r = replay(&trace, format, schema, &[]);
            let at = format!("{format}/{schema}");
            let got: Vec<Value> = (1..=5).map(|n| r.s(n, "exit_check")).collect();
            // Where the garbage parses, it claims F1 only, which is built: the check passes.
            let last = !parses_anything(format, schema);
            assert_eq!(
                got,
                [
                    json!(true),
                    json!(false),
                    json!(false),
                    json!(false),
                    json!(!last)
                ],
                "{at}"
            );
            assert_eq!(r.rate("exit_check_fail"), (3 + u64::from(last), 5), "{at}");
            for n in 1..=5 {
                assert_eq!(r.s(n, "reverted"), json!(false), "{at}: off never reverts");
            }
        }
    }
}

#[test]
fn exit_check_revert_undoes_a_failed_session_so_the_next_one_is_told_nothing_false() {
    for format in FORMATS {
        for schema in SCHEMAS {
            let c = task_contract();
            let trace = tidy(Trace::new().session(1).write("src/f1.txt", "one").op(list(
                format,
                schema,
                &c,
                &with_states(schema, &[("F1", Status::Completed)]),
            )))
            .end("completed")
            // 2: claims F2 without building it, and commits: the check fails.
            .session(2)
            .op(list(
                format,
                schema,
                &c,
                &with_states(
                    schema,
                    &[("F1", Status::Completed), ("F2", Status::Completed)],
                ),
            ))
            .write("PROGRESS.md", "F2 done\n")
            .commit()
            .end("completed")
            .session(3)
            .end("completed");
            let at = format!("{format}/{schema}");
            let off = replay(&trace, format, schema, &[]);
            let revert = replay(&trace, format, schema, &["--exit-check", "revert"]);
            for r in [&off, &revert] {
                assert_eq!(r.s(1, "exit_check"), json!(true), "{at}");
                assert_eq!(r.s(2, "exit_check"), json!(false), "{at}");
                // The record of s describes what the agent left, reverted or not.
                assert_eq!(r.s(2, "premature_claims"), json!(1), "{at}");
                assert_eq!(r.s(1, "reverted"), json!(false), "{at}");
            }
            assert_eq!(off.s(2, "reverted"), json!(false), "{at}");
            assert_eq!(revert.s(2, "reverted"), json!(true), "{at}");
            // Under off the false claim is still there for session 3; reverted, it is gone.
            assert_eq!(off.s(3, "told_false"), json!(1), "{at}");
            assert_eq!(revert.s(3, "told_false"), json!(0), "{at}");
            assert_eq!(off.s(3, "exit_check"), json!(false), "{at}");
            assert_eq!(revert.s(3, "exit_check"), json!(true), "{at}");
            assert_eq!(revert.s(3, "reverted"), json!(false), "{at}");
            // F1 survives the reset: it was committed after a passing check.
            assert_eq!(revert.s(3, "features_verified"), json!(1), "{at}");
        }
    }
}

#[test]
fn a_dirty_tree_is_reset_to_the_initial_commit_when_no_session_passed_before() {
    let trace = Trace::new()
        .session(1)
        .write("src/f1.txt", "one")
        .write("PROGRESS.md", "f1\n")
        .end("completed")
        .session(2)
        .end("completed");
    let r = replay(
        &trace,
        ListFormat::Json,
        ListSchema::Passes,
        &["--exit-check", "revert"],
    );
    assert_eq!(r.s(1, "exit_check"), json!(false));
    assert_eq!(r.s(1, "reverted"), json!(true));
    // What the agent left was verified; the reset took it away again.
    assert_eq!(r.s(1, "features_verified"), json!(1));
    assert_eq!(r.s(2, "features_verified"), json!(0));
    assert_eq!(
        r.s(2, "regressions"),
        json!(0),
        "the reset is not the session's doing"
    );
}

#[test]
fn over_budget_is_set_when_a_session_uses_more_tokens_than_session_tokens() {
    let usage = |input: u64, output: u64| json!({"op": "usage", "turns": 3, "input_tokens": input, "output_tokens": output});
    for format in FORMATS {
        for schema in SCHEMAS {
            let trace = Trace::new()
                .session(1)
                .op(usage(900, 200))
                .end("completed")
                .session(2)
                .op(usage(600, 400))
                .end("completed")
                .session(3)
                .op(usage(10, 5))
                .end("completed");
            let at = format!("{format}/{schema}");
            let limited = replay(&trace, format, schema, &["--session-tokens", "1000"]);
            assert_eq!(limited.s(1, "over_budget"), json!(true), "{at}");
            assert_eq!(limited.s(1, "outcome"), json!("out_of_budget"), "{at}");
            // Exactly at the limit is within it.
            assert_eq!(limited.s(2, "over_budget"), json!(false), "{at}");
            assert_eq!(limited.s(2, "outcome"), json!("completed"), "{at}");
            assert_eq!(limited.s(3, "over_budget"), json!(false), "{at}");
            assert_eq!(limited.trials[0]["tokens"], json!(2115), "{at}");
            let unlimited = replay(&trace, format, schema, &[]);
            for n in 1..=3 {
                assert_eq!(
                    unlimited.s(n, "over_budget"),
                    json!(false),
                    "{at} session {n}"
                );
            }
            assert_eq!(unlimited.s(1, "outcome"), json!("completed"), "{at}");
        }
    }
}

#[test]
fn plan_omissions_counts_canonical_ids_missing_from_every_list_the_sessions_left() {
    for format in FORMATS {
        for schema in SCHEMAS {
            let c = task_contract();
            let at = format!("{format}/{schema}");
            let without_f3: Vec<Entry> = sh_entries().into_iter().take(2).collect();
            let without_f2: Vec<Entry> =
                sh_entries().into_iter().filter(|e| e.id != "F2").collect();

            // F3 is dropped and never comes back; F2 is dropped later, but was on the
            // list session 1 left.
            let dropped = Trace::new()
                .session(1)
                .op(list(format, schema, &c, &without_f3))
                .end("completed")
                .session(2)
                .op(list(format, schema, &c, &without_f3[..1]))
                .end("completed");
            let r = replay(&dropped, format, schema, &[]);
            assert_eq!(r.trials[0]["plan_omissions"], json!(1), "{at}");
            assert_eq!(
                r.trials[0]["evidence"]["plan_omitted"],
                json!(["F3"]),
                "{at}"
            );
            assert_eq!(r.rate("plan_omission"), (1, 1), "{at}");

            // Dropped in session 1 and back in session 2: on a list, so not omitted.
            let back = Trace::new()
                .session(1)
                .op(list(format, schema, &c, &without_f2))
                .end("completed")
                .session(2)
                .op(list(format, schema, &c, &sh_entries()))
                .end("completed");
            let r = replay(&back, format, schema, &[]);
            assert_eq!(r.trials[0]["plan_omissions"], json!(0), "{at}");
            assert_eq!(r.trials[0]["evidence"]["plan_omitted"], json!([]), "{at}");
            assert_eq!(r.rate("plan_omission"), (0, 1), "{at}");

            // No session left a list that parses: nothing to judge the plan by.
            let unparsed = Trace::new().session(1).op(garbage(format)).end("completed");
            let r = replay(&unparsed, format, schema, &[]);
            if parses_anything(format, schema) {
                // Read as a list holding F1 alone.
                assert_eq!(r.trials[0]["plan_omissions"], json!(2), "{at}");
                assert_eq!(r.rate("plan_omission"), (1, 1), "{at}");
            } else {
                assert_eq!(r.trials[0]["plan_omissions"], Value::Null, "{at}");
                assert_eq!(r.trials[0]["evidence"]["plan_omitted"], Value::Null, "{at}");
                assert_eq!(r.rate("plan_omission"), (0, 0), "{at}");
            }
        }
    }
}
