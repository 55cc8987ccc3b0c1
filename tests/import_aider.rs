//! `loopbench import aider` end to end: aider chat histories of the latefees example
//! task (tests/data/aider) → a trace → `loopbench replay` → the metrics the history
//! implies. Histories are checked against traces derived by hand from them
//! (`tests/data/aider/*.expected.jsonl`).

use crate::common;

use common::{loopbench, read_csv, repo_root};

/// Runs `loopbench import ARGS...` from the repository root; returns (exit code,
/// stdout, stderr).
fn import(args: &[&str]) -> (i32, String, String) {
    let out = loopbench()
        .arg("import")
        .args(args)
        .current_dir(repo_root())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn imported(args: &[&str]) -> (String, String) {
    let (code, trace, stderr) = import(args);
    assert_eq!(code, 0, "{stderr}");
    (common::trace_actions(&trace), stderr)
}

fn expected(name: &str) -> String {
    std::fs::read_to_string(repo_root().join("tests/data/aider").join(name)).unwrap()
}

/// The sessions of `trace` replayed over the latefees example task.
fn replayed_sessions(trace: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("trace.jsonl");
    std::fs::write(&path, trace).unwrap();
    let out = tmp.path().join("results");
    loopbench()
        .arg("replay")
        .arg(&path)
        .arg("--task")
        .arg(repo_root().join("suites/examples/tasks/latefees"))
        .args(["--format", "markdown", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    read_csv(&out.join("sessions.csv"))
}

#[test]
fn a_failed_search_replace_block_is_a_skip_and_the_replys_other_blocks_are_applied() {
    let (trace, stderr) = imported(&[
        "aider",
        "tests/data/aider/failed-edit/.aider.chat.history.md",
    ]);
    assert_eq!(trace, expected("failed-edit.expected.jsonl"));
    assert!(
        stderr.contains("5 file and shell call(s): 4 applied, 1 skipped (1 failed), 0 divergent"),
        "{stderr}"
    );
}

#[test]
fn a_block_that_failed_to_match_and_its_confirmed_retry_import_as_the_retry_alone() {
    // PROGRESS.md in Markdown: the failed block's lines end in two spaces (a line break)
    // with a blank line after, and hold `####` headings, as aider's listing of it quotes
    // them. Neither ends that listing nor reads as the user's words.
    let (trace, stderr) = imported(&[
        "aider",
        "tests/data/aider/failed-retry/.aider.chat.history.md",
    ]);
    assert_eq!(trace, expected("failed-retry.expected.jsonl"));
    assert!(
        stderr.contains("4 file and shell call(s): 3 applied, 1 skipped (1 failed), 0 divergent"),
        "{stderr}"
    );
    // Replayed: the edits aider confirmed, no failed action, no error.
    let rows = replayed_sessions(&trace);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["actions_failed"], "0");
    assert_eq!(rows[0]["error"], "");
    assert_eq!(rows[0]["divergent"], "false");
    assert_eq!(rows[0]["outcome"], "completed");
}

#[test]
fn whole_file_edits_commits_user_commands_and_undo_import_and_udiff_edits_are_divergent() {
    let (trace, stderr) = imported(&["aider", "tests/data/aider/whole-udiff"]);
    assert_eq!(trace, expected("whole-udiff.expected.jsonl"));
    assert!(
        stderr.contains(
            ".aider.chat.history.md:89: the last line is cut off (no newline at its end), dropped"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "3 file and shell call(s): 2 applied, 1 skipped (1 not reconstructable), 1 divergent"
        ),
        "{stderr}"
    );
}

#[test]
fn the_real_dry_run_history_replays_to_the_scenarios_acts() {
    let (trace, stderr) = imported(&["tests/data/aider/latefees/.aider.chat.history.md"]);
    assert!(stderr.starts_with("detected format: aider\n"), "{stderr}");
    let rows = replayed_sessions(&trace);
    assert_eq!(rows.len(), 7);
    let col = |n: usize, k: &str| rows[n - 1][k].clone();
    // aider runs an answer's commands again after the next answer: two reminders.
    assert_eq!(
        (col(2, "newly_verified"), col(2, "dup_side_effects")),
        ("1".into(), "1".into())
    );
    assert_eq!(col(3, "premature_claims"), "1");
    assert_eq!(
        (col(4, "desc_edits"), col(4, "tests_removed")),
        ("1".into(), "3".into())
    );
    // The crash landed while aider waited for the model's answer to failing tests.
    assert_eq!(
        (col(5, "outcome"), col(5, "dup_side_effects")),
        ("interrupted".into(), "1".into())
    );
    assert_eq!(
        (col(6, "resumed"), col(6, "resume_success")),
        ("true".into(), "true".into())
    );
    assert_eq!(col(7, "features_verified"), "3");
    for n in 1..=7 {
        assert_eq!(col(n, "divergent"), "false", "session {n}");
        assert_eq!(col(n, "actions_failed"), "0", "session {n}");
    }
    // One turn per "Tokens:" line; the counts as aider printed them (rounded).
    assert_eq!(
        (
            col(2, "turns"),
            col(2, "input_tokens"),
            col(2, "output_tokens")
        ),
        ("3".into(), "12500".into(), "517".into())
    );
    assert_eq!(col(2, "cost_usd"), "0.04");
}

#[test]
fn a_file_of_another_format_is_refused_with_its_file_line_and_what_was_expected() {
    let rollout = "tests/data/codex/v0.4x/rollout-2025-10-02T09-00-00-0199a1b2-7c3d-7e41-9a55-0d2f1e6b8c01.jsonl";
    let (code, trace, stderr) = import(&["aider", rollout]);
    assert_eq!(code, 2, "{stderr}");
    assert!(trace.is_empty());
    assert!(
        stderr.contains(&format!("{rollout}:1: expected an aider chat history (its first line \"# aider chat started at ...\"); found a JSON object with \"type\": \"session_meta\", a line of a codex transcript (import it with `loopbench import codex`)")),
        "{stderr}"
    );
    let tmp = tempfile::tempdir().unwrap();
    let notes = tmp.path().join("NOTES.md");
    std::fs::write(&notes, "# Notes\n\nnothing here\n").unwrap();
    let (code, _, stderr) = import(&["aider", notes.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("NOTES.md:1: expected an aider chat history")
            && stderr.contains("\"# Notes\""),
        "{stderr}"
    );
    let empty = tmp.path().join("empty.md");
    std::fs::write(&empty, "\n\n").unwrap();
    let (code, _, stderr) = import(&["aider", empty.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("is empty: expected an aider chat history"),
        "{stderr}"
    );
    // A directory without a history says so.
    let (code, _, stderr) = import(&["aider", tmp.path().to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("holds no .aider.chat.history.md"),
        "{stderr}"
    );
}

#[test]
fn root_makes_absolute_paths_relative_and_rewrites_commands_that_name_it() {
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join(".aider.chat.history.md");
    std::fs::write(
        &history,
        "\n# aider chat started at 2026-01-05 09:00:00\n\n\
         > Main model: gpt-4o with diff edit format  \n\n\
         #### add a note  \n\n\
         /home/dev/latefees/NOTES.md\n```\n<<<<<<< SEARCH\n=======\nhello\n>>>>>>> REPLACE\n```\n\n\
         > Tokens: 100 sent, 9 received. Cost: $0.00 message, $0.00 session.  \n\
         > /home/dev/latefees/NOTES.md  \n\
         > Create new file? (Y)es/(N)o [Yes]: y  \n\
         > Applied edit to /home/dev/latefees/NOTES.md  \n\
         > Running cat /home/dev/latefees/NOTES.md  \n",
    )
    .unwrap();
    let (trace, _) = imported(&[
        "aider",
        history.to_str().unwrap(),
        "--root",
        "/home/dev/latefees",
    ]);
    assert!(
        trace.contains(r#"{"op":"write","path":"NOTES.md","content":"hello\n"}"#),
        "{trace}"
    );
    assert!(
        trace.contains(r#"{"op":"run","cmd":"cat ./NOTES.md"}"#),
        "{trace}"
    );
}

#[test]
fn edits_aider_applied_stay_applied_when_the_model_is_asked_again_before_any_command() {
    // The reply's edit is applied; the tests fail, aider hands that back, and the model's
    // second reply changes nothing. Nothing ran in between to flush the first reply.
    let tmp = tempfile::tempdir().unwrap();
    let history = tmp.path().join(".aider.chat.history.md");
    std::fs::write(
        &history,
        "\n# aider chat started at 2026-01-05 09:00:00\n\n\
         > Main model: gpt-4o with diff edit format  \n\n\
         #### add a note  \n\n\
         NOTES.md\n```\n<<<<<<< SEARCH\n=======\nhello\n>>>>>>> REPLACE\n```\n\n\
         > Tokens: 100 sent, 9 received. Cost: $0.00 message, $0.00 session.  \n\
         > NOTES.md  \n\
         > Create new file? (Y)es/(N)o [Yes]: y  \n\
         > Applied edit to NOTES.md  \n\
         > Added 12 lines of output to the chat.  \n\
         > Attempt to fix test errors? (Y)es/(N)o [Yes]: y  \n\n\
         The tests fail for another reason.\n\n\
         > Tokens: 200 sent, 7 received. Cost: $0.00 message, $0.00 session.  \n",
    )
    .unwrap();
    let (trace, stderr) = imported(&["aider", history.to_str().unwrap()]);
    assert!(
        trace.contains(r#"{"op":"write","path":"NOTES.md","content":"hello\n"}"#),
        "{trace}\n{stderr}"
    );
    assert!(trace.contains(r#""status":"completed""#), "{trace}");
}
