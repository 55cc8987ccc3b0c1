//! Unit tests of the tool-call mapping and the divergence rule.

use serde_json::{Value, json};

use super::*;

const ROOT: Option<&str> = Some("/w");

fn call(id: &str, name: &str, input: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        input,
        origin: format!("t.jsonl:{id}"),
        cwd: None,
        seq: 0,
    }
}

/// `call` made while the agent's shell was in `cwd`.
fn call_in(cwd: &str, id: &str, name: &str, input: Value) -> ToolCall {
    ToolCall {
        cwd: Some(cwd.into()),
        ..call(id, name, input)
    }
}

fn ok(result: Option<Value>) -> ToolOutcome {
    ToolOutcome {
        is_error: false,
        text: "ok".into(),
        result,
    }
}

fn err(text: &str) -> ToolOutcome {
    ToolOutcome {
        is_error: true,
        text: text.into(),
        result: None,
    }
}

fn map(calls: &[(ToolCall, Option<ToolOutcome>)]) -> (Mapped, Tally, Vec<String>) {
    let results: HashMap<String, ToolOutcome> = calls
        .iter()
        .filter_map(|(c, o)| o.clone().map(|o| (c.id.clone(), o)))
        .collect();
    let calls: Vec<ToolCall> = calls.iter().map(|(c, _)| c.clone()).collect();
    let mut tally = Tally::default();
    let mut notes = Vec::new();
    let m = map_calls(
        &calls,
        &results,
        ROOT,
        &mut Known::new(),
        &mut tally,
        &mut notes,
    );
    (m, tally, notes)
}

fn write(path: &str, content: &str) -> Line {
    Line::Write {
        path: path.into(),
        content: content.into(),
    }
}

fn edit(path: &str, old: &str, new: &str, all: bool) -> Line {
    Line::Edit {
        path: path.into(),
        old: old.into(),
        new: new.into(),
        all,
        original: None,
    }
}

#[test]
fn write_edit_multiedit_and_bash_become_actions() {
    let (m, tally, notes) = map(&[
        (
            call(
                "1",
                "Write",
                json!({"file_path": "/w/a.py", "content": "x = 1\n"}),
            ),
            Some(ok(None)),
        ),
        (
            call(
                "2",
                "Edit",
                json!({"file_path": "/w/a.py", "old_string": "1", "new_string": "2", "replace_all": true}),
            ),
            Some(ok(None)),
        ),
        (
            call(
                "3",
                "MultiEdit",
                json!({"file_path": "b.py", "edits": [
                {"old_string": "", "new_string": "y = 1\n"},
                {"old_string": "y", "new_string": "z"}]}),
            ),
            Some(ok(None)),
        ),
        (
            call("4", "Bash", json!({"command": "rm /w/t.py"})),
            Some(ok(None)),
        ),
        (
            call("5", "Read", json!({"file_path": "/w/a.py"})),
            Some(ok(None)),
        ),
    ]);
    assert_eq!(
        m.lines,
        vec![
            write("a.py", "x = 1\n"),
            edit("a.py", "1", "2", true),
            write("b.py", "y = 1\n"),
            edit("b.py", "y", "z", false),
            Line::Run {
                cmd: "rm ./t.py".into(),
                cwd: None,
            },
        ]
    );
    assert!(!m.divergent && !m.unanswered);
    assert_eq!(tally.actions, 5);
    assert_eq!(tally.ignored.get("Read"), Some(&1));
    assert!(notes.is_empty());
}

#[test]
fn failed_calls_are_not_applied_but_a_failing_command_ran() {
    let (m, tally, _) = map(&[
        (
            call(
                "1",
                "Edit",
                json!({"file_path": "/w/a", "old_string": "q", "new_string": "r"}),
            ),
            Some(err(
                "<tool_use_error>String to replace not found in file.</tool_use_error>",
            )),
        ),
        (
            call("2", "Write", json!({"file_path": "/w/a", "content": "c"})),
            Some(err("The user doesn't want to proceed")),
        ),
        (
            call("3", "Bash", json!({"command": "false"})),
            Some(err("Error: Exit code 1")),
        ),
        (
            call("4", "Bash", json!({"command": "rm -rf x"})),
            Some(err("Permission to use Bash has been denied.")),
        ),
    ]);
    assert_eq!(
        m.lines,
        vec![Line::Run {
            cmd: "false".into(),
            cwd: None,
        }]
    );
    assert_eq!(tally.failed, 3);
}

#[test]
fn a_call_without_a_result_is_not_applied_and_marks_the_session() {
    let (m, tally, _) = map(&[(
        call("1", "Write", json!({"file_path": "/w/a", "content": "c"})),
        None,
    )]);
    assert!(m.lines.is_empty());
    assert!(m.unanswered);
    assert_eq!(tally.unanswered, 1);
}

#[test]
fn paths_outside_the_root_and_notebook_edits_are_recorded_skips() {
    let (m, tally, notes) = map(&[
        (
            call("1", "Write", json!({"file_path": "/etc/x", "content": "c"})),
            Some(ok(None)),
        ),
        (
            call(
                "2",
                "NotebookEdit",
                json!({"notebook_path": "/w/n.ipynb", "new_source": "1"}),
            ),
            Some(ok(None)),
        ),
        (
            call("3", "Edit", json!({"file_path": "/w/a"})),
            Some(ok(None)),
        ),
    ]);
    assert_eq!(tally.skipped, 3);
    assert_eq!(
        m.lines[0],
        Line::Skip {
            tool: Some("Write".into()),
            path: Some("/etc/x".into()),
            reason: Some("outside the root /w".into()),
            rejected: false,
        }
    );
    assert!(matches!(&m.lines[1], Line::Skip { tool: Some(t), .. } if t == "NotebookEdit"));
    assert_eq!(notes.len(), 1);
    assert!(
        notes[0].contains("t.jsonl:1") && notes[0].contains("/etc/x"),
        "{notes:?}"
    );
}

#[test]
fn an_original_file_that_differs_from_the_model_is_written_first_and_marks_divergence() {
    // The agent wrote a.py, then a command (invisible to the importer) changed it, then
    // the agent edited what it saw.
    let (m, tally, _) = map(&[
        (
            call(
                "1",
                "Write",
                json!({"file_path": "/w/a", "content": "v1\n"}),
            ),
            Some(ok(None)),
        ),
        (
            call("2", "Bash", json!({"command": "sed -i s/v1/v2/ a"})),
            Some(ok(None)),
        ),
        (
            call(
                "3",
                "Edit",
                json!({"file_path": "/w/a", "old_string": "v2", "new_string": "v3"}),
            ),
            Some(ok(Some(
                json!({"originalFile": "v2\n", "oldString": "v2", "newString": "v3"}),
            ))),
        ),
        // The model now says v3, which is what the next edit saw: no second reset.
        (
            call(
                "4",
                "Edit",
                json!({"file_path": "/w/a", "old_string": "v3", "new_string": "v4"}),
            ),
            Some(ok(Some(json!({"originalFile": "v3\n"})))),
        ),
    ]);
    assert!(m.divergent);
    assert_eq!(tally.resets, 1);
    assert_eq!(
        m.lines[2..],
        [
            write("a", "v2\n"),
            edit("a", "v2", "v3", false),
            edit("a", "v3", "v4", false)
        ]
    );
}

#[test]
fn an_original_file_of_an_unknown_file_is_not_reset_but_kept_for_replay() {
    // The importer cannot know what replay will find in a file the transcript never
    // wrote: no reset now, but the edit carries what the agent saw, for replay to fall
    // back to if the old text is missing there. Later edits of that call do not.
    let (m, tally, _) = map(&[
        (
            call(
                "1",
                "Edit",
                json!({"file_path": "/w/a", "old_string": "x", "new_string": "y"}),
            ),
            Some(ok(Some(json!({"originalFile": "x\n"})))),
        ),
        (
            call(
                "2",
                "MultiEdit",
                json!({"file_path": "/w/b", "edits": [
                    {"old_string": "p", "new_string": "q"},
                    {"old_string": "q", "new_string": "r"}
                ]}),
            ),
            Some(ok(Some(json!({"originalFile": "p\n"})))),
        ),
        (
            call(
                "3",
                "Edit",
                json!({"file_path": "/w/a", "old_string": "y", "new_string": "z"}),
            ),
            Some(ok(Some(json!({"originalFile": "y\n"})))),
        ),
    ]);
    assert!(!m.divergent);
    assert_eq!(tally.resets, 0);
    let with_original = |line: Line, original: &str| match line {
        Line::Edit {
            path,
            old,
            new,
            all,
            ..
        } => Line::Edit {
            path,
            old,
            new,
            all,
            original: Some(original.into()),
        },
        other => other,
    };
    assert_eq!(
        m.lines,
        vec![
            with_original(edit("a", "x", "y", false), "x\n"),
            with_original(edit("b", "p", "q", false), "p\n"),
            edit("b", "q", "r", false),
            // Known by now (the model followed the first edit): no fallback needed.
            edit("a", "y", "z", false),
        ]
    );
}

#[test]
fn a_user_modified_edit_applies_what_the_result_says() {
    let (m, _, _) = map(&[(
        call(
            "1",
            "Edit",
            json!({"file_path": "/w/a", "old_string": "x", "new_string": "y"}),
        ),
        Some(ok(Some(
            json!({"oldString": "x", "newString": "z", "userModified": true}),
        ))),
    )]);
    assert_eq!(m.lines, vec![edit("a", "x", "z", false)]);
}

#[test]
fn an_errored_command_ran_unless_its_result_is_a_refusal() {
    let bash = |id: &str, cmd: &str| call(id, "Bash", json!({ "command": cmd }));
    let with_result = |text: &str, result: Value| ToolOutcome {
        is_error: true,
        text: text.into(),
        result: Some(result),
    };
    let (m, tally, _) = map(&[
        // CLI 1.0.x: the command's output only, no "Exit code N".
        (
            bash("1", "git commit -qm x && git push"),
            Some(with_result(
                "fatal: No configured push destination.",
                json!("Error: fatal: No configured push destination."),
            )),
        ),
        (bash("2", "false"), Some(err(""))),
        (
            bash("3", "rm a"),
            Some(err(
                "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
            )),
        ),
        (
            bash("4", "rm b"),
            Some(err(
                "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you how to proceed.",
            )),
        ),
        (
            bash("5", "rm c"),
            Some(err(
                "Permission to use Bash with command rm c has been denied.",
            )),
        ),
        (
            bash("6", "rm d"),
            Some(err(
                "<tool_use_error>InputValidationError: Bash failed due to the following issue:\nThe required parameter `command` is missing</tool_use_error>",
            )),
        ),
        (
            bash("7", "rm e"),
            Some(err(
                "PreToolUse:Bash hook error: [~/.claude/hooks/guard.sh]: rm is not allowed here",
            )),
        ),
        (
            bash("8", "rm f"),
            Some(err("[Request interrupted by user for tool use]")),
        ),
        // The text says nothing, the structured result says who refused.
        (
            bash("9", "rm g"),
            Some(with_result(
                "",
                json!("Error: Permission to use Bash has been denied."),
            )),
        ),
    ]);
    let ran: Vec<&str> = m
        .lines
        .iter()
        .filter_map(|l| match l {
            Line::Run { cmd, .. } => Some(cmd.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(ran, ["git commit -qm x && git push", "false"]);
    // Not applied: seven; refused by the user, a rule or a hook: all but the invalid one.
    assert_eq!(tally.failed, 7);
    assert_eq!(tally.refused, 6);
}

#[test]
fn a_command_runs_where_its_shell_was_and_relative_paths_start_there() {
    let run = |cmd: &str, cwd: Option<&str>| Line::Run {
        cmd: cmd.into(),
        cwd: cwd.map(str::to_string),
    };
    let (m, tally, notes) = map(&[
        (
            call_in("/w", "1", "Bash", json!({"command": "cd tests && ls"})),
            Some(ok(None)),
        ),
        (
            call_in(
                "/w/tests",
                "2",
                "Bash",
                json!({"command": "rm test_x.py /w/tests/y.py"}),
            ),
            Some(ok(None)),
        ),
        (
            call_in(
                "/w/tests/unit",
                "3",
                "Write",
                json!({"file_path": "a.py", "content": "a"}),
            ),
            Some(ok(None)),
        ),
        (
            call_in(
                "/w/tests",
                "4",
                "Write",
                json!({"file_path": "/w/b.py", "content": "b"}),
            ),
            Some(ok(None)),
        ),
        // A leading cd to an absolute directory makes the start irrelevant.
        (
            call_in(
                "/w/tests",
                "5",
                "Bash",
                json!({"command": "cd /w/src && rm /w/src/old.py"}),
            ),
            Some(ok(None)),
        ),
        (
            call_in(
                "/w/tests",
                "6",
                "Bash",
                json!({"command": "cd /w && git add -A"}),
            ),
            Some(ok(None)),
        ),
        // Outside the root, the shell's commands do not touch the work directory.
        (
            call_in(
                "/tmp/scratch",
                "7",
                "Bash",
                json!({"command": "rm -rf build"}),
            ),
            Some(ok(None)),
        ),
        (
            call_in(
                "/w/tests",
                "8",
                "Write",
                json!({"file_path": "../../x", "content": "x"}),
            ),
            Some(ok(None)),
        ),
    ]);
    assert_eq!(
        m.lines[..6],
        [
            run("cd tests && ls", None),
            run("rm test_x.py ../tests/y.py", Some("tests")),
            write("tests/unit/a.py", "a"),
            write("b.py", "b"),
            run("cd ./src && rm ../src/old.py", None),
            run("cd . && git add -A", None),
        ]
    );
    assert!(
        matches!(&m.lines[6], Line::Skip { tool: Some(t), reason: Some(r), .. }
            if t == "Bash" && r.contains("/tmp/scratch")),
        "{:?}",
        m.lines[6]
    );
    assert!(matches!(&m.lines[7], Line::Skip { tool: Some(t), .. } if t == "Write"));
    assert_eq!(tally.skipped, 2);
    assert_eq!(notes.len(), 2, "{notes:?}");
}

#[test]
fn an_edit_that_creates_the_file_never_resets_it() {
    // A command removed a.py (invisible here); an Edit with an empty old_string
    // creates it again, its originalFile empty: no reset, no divergence.
    let (m, tally, _) = map(&[
        (
            call(
                "1",
                "Write",
                json!({"file_path": "/w/a.py", "content": "v1\n"}),
            ),
            Some(ok(None)),
        ),
        (
            call("2", "Bash", json!({"command": "rm a.py"})),
            Some(ok(None)),
        ),
        (
            call(
                "3",
                "Edit",
                json!({"file_path": "/w/a.py", "old_string": "", "new_string": "v2\n"}),
            ),
            Some(ok(Some(
                json!({"oldString": "", "newString": "v2\n", "originalFile": ""}),
            ))),
        ),
    ]);
    assert!(!m.divergent);
    assert_eq!(tally.resets, 0);
    assert_eq!(m.lines[2], write("a.py", "v2\n"));
}

#[test]
fn a_write_applies_what_its_result_says_was_written() {
    let (m, _, _) = map(&[(
        call(
            "1",
            "Write",
            json!({"file_path": "/w/a", "content": "proposed"}),
        ),
        Some(ok(Some(
            json!({"type": "create", "filePath": "/w/a", "content": "accepted"}),
        ))),
    )]);
    assert_eq!(m.lines, vec![write("a", "accepted")]);
}
