//! `loopbench import codex` end to end: Codex CLI rollouts and `codex exec --json`
//! captures of the latefees example task (tests/data/codex) → a trace → `loopbench
//! replay` → the metrics the transcripts imply. Older CLI shapes are checked against
//! traces derived by hand from the transcript (`tests/data/codex/*.expected.jsonl`).

use crate::common;

use std::path::{Path, PathBuf};

use common::{loopbench, read_csv, repo_root};

/// Runs `loopbench import ARGS...` from the repository root (so that paths in the
/// trace's summaries are as the expected traces write them); returns (exit code,
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
    std::fs::read_to_string(repo_root().join("tests/data/codex").join(name)).unwrap()
}

/// Replays `trace` against latefees with the Markdown list; returns the session rows.
fn replay(trace: &str, dir: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let path = dir.join("trace.jsonl");
    std::fs::write(&path, trace).unwrap();
    let out = dir.join("results");
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
fn a_cli_0_4x_rollout_with_shell_argv_calls_and_json_outputs_imports_to_its_hand_derived_trace() {
    let (trace, stderr) = imported(&["codex", "tests/data/codex/v0.4x"]);
    assert_eq!(trace, expected("v0.4x.expected.jsonl"));
    // The other project's session is left out and named; the rejected push and the
    // command cut off by the abort are counted, not applied.
    assert!(
        stderr.contains("rollout-2025-10-02T11-00-00-0199a23c-5d6e-7f83-b0a1-4c2d3e4f5a03.jsonl: left out: its cwd /home/dev/other is not under the root /home/dev/latefees"),
        "{stderr}"
    );
    assert!(
        stderr.contains("7 file and shell call(s): 6 applied, 1 skipped (1 refused), 0 divergent"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "3 file and shell call(s): 2 applied, 1 skipped (1 without a result), 0 divergent"
        ),
        "{stderr}"
    );
}

#[test]
fn a_cli_0_13x_rollout_with_exec_command_and_task_events_imports_to_its_hand_derived_trace() {
    let (trace, stderr) = imported(&["codex", "tests/data/codex/v0.13x"]);
    assert_eq!(trace, expected("v0.13x.expected.jsonl"));
    assert!(
        stderr.contains("9 file and shell call(s): 8 applied, 1 skipped (1 failed), 1 divergent; 2 call(s) without a file effect (update_plan 1, write_stdin 1)"),
        "{stderr}"
    );
    assert!(
        stderr.contains(":22: apply_patch found divergent: its patch does not match what the transcript says ledger/fees.py held"),
        "{stderr}"
    );
}

#[test]
fn the_exec_tools_nested_command_and_patches_are_imported_from_their_item_events() {
    let (trace, stderr) = imported(&["codex", "tests/data/codex/exec-tool"]);
    assert_eq!(trace, expected("exec-tool.expected.jsonl"));
    assert!(
        stderr.contains(
            "4 applied, 0 skipped, 0 divergent; 2 call(s) without a file effect (exec 2)"
        ),
        "{stderr}"
    );
}

#[test]
fn sessions_come_in_time_order_whatever_order_the_files_are_given_and_root_picks_the_project() {
    let dir = "tests/data/codex/v0.4x/";
    let first =
        format!("{dir}rollout-2025-10-02T09-00-00-0199a1b2-7c3d-7e41-9a55-0d2f1e6b8c01.jsonl");
    let second =
        format!("{dir}rollout-2025-10-02T10-30-00-0199a21f-0b4e-7d22-8f61-5a7c3b9e2d02.jsonl");
    let other =
        format!("{dir}rollout-2025-10-02T11-00-00-0199a23c-5d6e-7f83-b0a1-4c2d3e4f5a03.jsonl");
    let (trace, _) = imported(&["codex", &other, &second, &first]);
    assert_eq!(trace, expected("v0.4x.expected.jsonl"));
    // --root chooses the other project: the latefees sessions are left out.
    let (trace, stderr) = imported(&["codex", dir, "--root", "/home/dev/other"]);
    assert!(
        trace.starts_with(
            "{\"op\":\"session\",\"n\":1}\n{\"op\":\"run\",\"cmd\":\"touch other.txt\"}\n"
        ),
        "{trace}"
    );
    assert_eq!(trace.matches("\"op\":\"session\"").count(), 1, "{trace}");
    assert_eq!(stderr.matches("left out").count(), 2, "{stderr}");
}

#[test]
fn the_real_dry_run_rollouts_replay_to_the_scenarios_acts_and_the_cli_s_own_usage() {
    let (trace, stderr) = imported(&["tests/data/codex/latefees"]);
    assert!(stderr.starts_with("detected format: codex\n"), "{stderr}");
    let tmp = tempfile::tempdir().unwrap();
    let rows = replay(&trace, tmp.path());
    assert_eq!(rows.len(), 7, "the initializer and six coding sessions");
    let col = |n: usize, k: &str| rows[n - 1][k].clone();
    assert_eq!(
        (col(2, "newly_verified"), col(2, "premature_claims")),
        ("1".into(), "0".into())
    );
    assert_eq!(
        col(3, "premature_claims"),
        "1",
        "F3 claimed without its code"
    );
    assert_eq!(
        (col(4, "desc_edits"), col(4, "tests_removed")),
        ("1".into(), "3".into())
    );
    assert_eq!(
        (col(5, "outcome"), col(5, "dup_side_effects")),
        ("interrupted".into(), "1".into())
    );
    assert_eq!(
        (col(6, "resumed"), col(6, "resume_success")),
        ("true".into(), "true".into())
    );
    assert_eq!(
        (col(7, "outcome"), col(7, "features_verified")),
        ("completed".into(), "3".into())
    );
    for n in 1..=7 {
        assert_eq!(col(n, "divergent"), "false", "session {n}");
        assert_eq!(col(n, "actions_failed"), "0", "session {n}");
    }
    // Usage is what the rollouts' token counts say (they equal the `codex exec --json`
    // totals the live run recorded): model calls and cumulative tokens, once each.
    assert_eq!(
        (
            col(2, "turns"),
            col(2, "input_tokens"),
            col(2, "output_tokens")
        ),
        ("7".into(), "70960".into(), "298".into())
    );
}

#[test]
fn exec_json_captures_import_with_their_file_changes_skipped_and_the_sessions_divergent() {
    let (trace, stderr) = imported(&["codex", "tests/data/codex/latefees-exec-json"]);
    assert!(
        stderr.contains(
            "4 skip(s); 0 file reset(s), 4 other divergent call(s) in 4 divergent session(s)"
        ),
        "{stderr}"
    );
    assert_eq!(trace.matches(r#""divergent":true"#).count(), 4, "{trace}");
    assert!(trace.contains(r#"{"op":"skip","tool":"file_change","path":"/home/dev/latefees/FEATURES.md","reason":"codex exec --json records the files a patch changed, not their content: import the session's rollout file for its edits"}"#));
    // Item ids restart in every capture (item_0, item_1...): every capture's commands are
    // imported, the commands of the quoted `/bin/bash -lc` lines unquoted.
    assert_eq!(trace.matches(r#""op":"run""#).count(), 23, "{trace}");
    assert!(
        trace.contains(r#"{"op":"run","cmd":"rm -- 'tests/test_export.py'"}"#),
        "{trace}"
    );
    // Usage as the command driver reads the capture; the killed session is interrupted.
    assert!(
        trace.contains(r#"{"op":"usage","turns":7,"input_tokens":70960,"output_tokens":298}"#),
        "{trace}"
    );
    let statuses: Vec<&str> = trace
        .lines()
        .filter_map(|l| l.split(r#""status":""#).nth(1))
        .map(|s| s.split('"').next().unwrap())
        .collect();
    assert_eq!(
        statuses,
        [
            "completed",
            "completed",
            "completed",
            "completed",
            "interrupted",
            "completed",
            "completed"
        ]
    );
}

#[test]
fn a_failed_patch_is_not_applied_a_failing_command_is_and_a_killed_session_is_interrupted() {
    let (trace, stderr) = imported(&["codex", "tests/data/codex/failed-patch"]);
    assert!(
        !trace.contains("TWO"),
        "the failed patch is not applied: {trace}"
    );
    assert!(trace.contains(r#"{"op":"edit","path":"notes/a.txt","old":"two\n","new":"2\n"}"#));
    assert!(trace.contains(r#"{"op":"run","cmd":"cat notes/a.txt && false"}"#));
    assert!(
        stderr.contains("5 file and shell call(s): 4 applied, 1 skipped (1 failed), 0 divergent"),
        "{stderr}"
    );
    assert!(
        trace.contains(r#"{"op":"end","status":"interrupted""#),
        "{trace}"
    );
}

fn scratch_copy(dir: &Path, from: &str) -> PathBuf {
    let to = dir.join(Path::new(from).file_name().unwrap());
    std::fs::copy(repo_root().join(from), &to).unwrap();
    to
}

#[test]
fn a_file_of_another_format_is_refused_with_its_file_line_and_what_was_expected() {
    for (file, line, found) in [
        (
            "tests/data/aider/failed-edit/.aider.chat.history.md",
            2,
            "found an aider chat history (import it with `loopbench import aider`)",
        ),
        (
            "tests/data/claude-code/latefees/sess-a.jsonl",
            1,
            "a line of a claude-code transcript (import it with `loopbench import claude-code`)",
        ),
        (
            "tests/data/stream-json/latefees/session-2.stdout",
            1,
            "a line of a stream-json transcript (import it with `loopbench import stream-json`)",
        ),
    ] {
        let (code, trace, stderr) = import(&["codex", file]);
        assert_eq!(code, 2, "{file}: {stderr}");
        assert!(trace.is_empty());
        assert!(
            stderr.contains(&format!("{file}:{line}: expected a Codex rollout line")),
            "{stderr}"
        );
        assert!(stderr.contains(found), "{stderr}");
    }
}

#[test]
fn a_broken_line_inside_a_rollout_is_bad_input_and_a_cut_off_last_line_is_dropped_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let rollout = scratch_copy(
        tmp.path(),
        "tests/data/codex/v0.13x/rollout-2026-06-10T08-00-00-019e5c2a-1f3b-7c40-9d12-6a8b4c2e0f11.jsonl",
    );
    let text = std::fs::read_to_string(&rollout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    // The last line cut in the middle, as a crash while writing leaves it.
    let last = lines.len();
    let cut = format!(
        "{}\n{}",
        lines[..last - 1].join("\n"),
        &lines[last - 1][..20]
    );
    std::fs::write(&rollout, &cut).unwrap();
    let path = rollout.to_str().unwrap();
    let (trace, stderr) = imported(&["codex", path]);
    assert!(
        stderr.contains(&format!(
            "{path}:{last}: the last line is cut off (text that is not JSON"
        )),
        "{stderr}"
    );
    // Without it, the second turn never completed: still interrupted.
    assert!(trace.contains(r#""status":"interrupted""#), "{trace}");
    // The same cut inside the file is not a crash's: bad input naming the line.
    let broken = format!(
        "{}\n{}\n{}\n",
        lines[..5].join("\n"),
        &lines[5][..20],
        lines[6..].join("\n")
    );
    std::fs::write(&rollout, broken).unwrap();
    let (code, _, stderr) = import(&["codex", path]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains(&format!("{path}:6: expected a Codex rollout line")),
        "{stderr}"
    );
}

#[test]
fn rollouts_and_captures_of_the_same_sessions_are_not_imported_together() {
    let (code, _, stderr) = import(&[
        "codex",
        "tests/data/codex/latefees",
        "tests/data/codex/latefees-exec-json",
    ]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("mix Codex rollouts and `codex exec --json` captures"),
        "{stderr}"
    );
}

#[test]
fn auto_names_the_format_it_found_and_a_mix_of_formats_is_an_error_naming_the_choices() {
    let (_, stderr) = imported(&["--format", "auto", "tests/data/codex/exec-tool"]);
    assert!(stderr.starts_with("detected format: codex\n"), "{stderr}");
    let (code, _, stderr) = import(&["tests/data/codex", "tests/data/claude-code/latefees"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("transcripts of more than one format: claude-code"),
        "{stderr}"
    );
    assert!(
        stderr.contains("import one with `loopbench import claude-code|codex PATH...`"),
        "{stderr}"
    );
    // A format named with --format is used as given, like the subcommand.
    let (trace, _) = imported(&["--format", "codex", "tests/data/codex/exec-tool"]);
    assert_eq!(trace, expected("exec-tool.expected.jsonl"));
}
