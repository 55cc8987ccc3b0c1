//! `clean_tree` as git and the clean-state rule read it: a session that commits its work
//! and keeps only git-ignored scratch files (a note, a build output) ends clean and
//! passes its exit check, and those files are counted on their own (`ignored_seen`, with
//! their paths in the evidence and in `show`); a suite's `clean_tree = "strict"` counts
//! them as uncommitted work. Real runs of a command agent over the sh task.

use crate::common;

use std::path::Path;

use common::command::{Ran, arm, run_ok, script, sh_suite};
use common::pytask::{LIST, agent};
use common::{Trace, claim, loopbench, replay_sh, sh_entries, write_list};
use loopbench::feature_list::ListFormat::Json;
use serde_json::json;

/// Session 1 does F1, writes its notes and a `.gitignore` that ignores `scratch/` and
/// `*.o`, leaves a note and a build output there, and commits everything else.
const SCRATCH_NOTES: &str = r#"
if [ "$LOOPBENCH_SESSION" = 1 ]; then
  echo done > src/f1.txt
  list true F1
  echo "f1 done" > PROGRESS.md
  printf 'scratch/\n*.o\n' > .gitignore
  mkdir -p scratch
  echo "try the other approach next" > scratch/notes.txt
  echo object > src/f1.o
  git add -A && git commit -qm f1
  test -z "$(git status --porcelain)" && echo "git status: clean"
fi
"#;

/// Runs one agent doing `body` in a suite of its own under `tmp/name`, with the suite's
/// `clean_tree` reading when given.
fn run_with(tmp: &Path, name: &str, clean_tree: Option<&str>, body: &str) -> Ran {
    let dir = tmp.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    script(&dir, "agent.sh", &format!("{LIST}{body}"));
    let top = clean_tree.map_or(String::new(), |c| format!("clean_tree = \"{c}\"\n"));
    let suite = sh_suite(
        &dir,
        &format!("{top}{}", agent("a", "agent.sh")),
        &arm("a", "a", 1, ""),
    );
    run_ok(&suite, &dir.join("out"))
}

fn first_session(ran: &Ran) -> &std::collections::BTreeMap<String, String> {
    ran.sessions
        .iter()
        .find(|s| s["session"] == "1")
        .unwrap_or_else(|| panic!("no session 1: {:?}", ran.sessions))
}

fn evidence(ran: &Ran) -> serde_json::Value {
    let text = std::fs::read_to_string(ran.out.join("sessions.jsonl")).unwrap();
    let line = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["session"] == 1)
        .unwrap();
    line["evidence"].clone()
}

/// What `loopbench show` prints of the one trial.
fn shown(ran: &Ran) -> String {
    let out = loopbench()
        .args(["show"])
        .arg(&ran.out)
        .arg("a:shtask:0")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn ignored_scratch_files_leave_the_tree_clean_as_git_status_says_and_are_counted() {
    let tmp = common::visible_tempdir();
    let ran = run_with(tmp.path(), "git", None, SCRATCH_NOTES);
    assert!(
        ran.capture("a:shtask:0", 1, "stdout")
            .contains("git status: clean"),
        "the agent's own git status calls the tree clean"
    );
    let s = first_session(&ran);
    assert_eq!(s["clean_tree"], "true", "{s:?}");
    assert_eq!(s["exit_check"], "true", "{s:?}");
    // The build output is ignored too, and a check reads it as much as the note.
    assert_eq!(s["ignored_seen"], "2", "{s:?}");
    assert_eq!(
        evidence(&ran)["ignored_seen"],
        serde_json::json!(["scratch/notes.txt", "src/f1.o"])
    );

    let shown = shown(&ran);
    assert!(
        shown.contains(
            "2 git-ignored files were in the tree the checks saw (a commit leaves them out): scratch/notes.txt, src/f1.o"
        ),
        "{shown}"
    );
    assert!(
        shown.contains("clean exit: everything committed"),
        "{shown}"
    );
}

#[test]
fn a_replayed_session_that_only_adds_ignored_files_ends_clean_and_counts_them() {
    let trace = Trace::new()
        .session(1)
        .write("src/f1.txt", "done\n")
        .op(write_list(Json, &claim(sh_entries(), "F1")))
        .write("PROGRESS.md", "f1 done\n")
        .write(".gitignore", "scratch/\n")
        .commit()
        .end("completed")
        .session(2)
        .write("scratch/notes.txt", "next: F2\n")
        .end("completed");
    let r = replay_sh(&trace, Json);
    assert_eq!(r.s(1, "clean_tree"), json!(true));
    assert_eq!(r.s(1, "ignored_seen"), json!(0));
    assert_eq!(r.s(2, "clean_tree"), json!(true));
    assert_eq!(r.s(2, "exit_check"), json!(true));
    assert_eq!(r.s(2, "ignored_seen"), json!(1));
}

#[test]
fn the_strict_reading_counts_ignored_files_a_check_reads_as_uncommitted() {
    let tmp = common::visible_tempdir();
    let ran = run_with(tmp.path(), "strict", Some("strict"), SCRATCH_NOTES);
    let s = first_session(&ran);
    assert_eq!(s["clean_tree"], "false", "{s:?}");
    assert_eq!(s["exit_check"], "false", "{s:?}");
    assert_eq!(s["ignored_seen"], "2", "{s:?}");
}

#[test]
fn files_the_checks_never_read_are_not_counted_even_when_strict() {
    let tmp = common::visible_tempdir();
    // `verify_ignores` puts `scratch/` and `*.o` out of every check's sight.
    let dir = tmp.path().join("unseen");
    std::fs::create_dir_all(&dir).unwrap();
    script(&dir, "agent.sh", &format!("{LIST}{SCRATCH_NOTES}"));
    let suite = sh_suite(
        &dir,
        &format!("clean_tree = \"strict\"\n{}", agent("a", "agent.sh")),
        &arm("a", "a", 1, ""),
    );
    let task = dir.join("shtask/task.toml");
    let toml = std::fs::read_to_string(&task).unwrap();
    std::fs::write(
        &task,
        toml.replacen(
            "\n[[feature]]",
            "verify_ignores = [\"scratch/**\", \"**/*.o\"]\n\n[[feature]]",
            1,
        ),
    )
    .unwrap();
    let ran = run_ok(&suite, &dir.join("out"));
    let s = first_session(&ran);
    assert_eq!(s["ignored_seen"], "0", "{s:?}");
    assert_eq!(s["clean_tree"], "true", "{s:?}");
    assert_eq!(s["exit_check"], "true", "{s:?}");
}

#[test]
fn a_bad_clean_tree_word_is_bad_input_naming_the_key() {
    let tmp = common::visible_tempdir();
    let dir = tmp.path();
    script(dir, "agent.sh", "true\n");
    let suite = sh_suite(
        dir,
        &format!("clean_tree = \"loose\"\n{}", agent("a", "agent.sh")),
        &arm("a", "a", 1, ""),
    );
    let out = loopbench().arg("validate").arg(&suite).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("suite.toml")
            && stderr.contains("clean_tree must be \"git\" or \"strict\""),
        "{stderr}"
    );
}

#[test]
fn a_tree_the_harness_cannot_record_is_not_clean_and_the_record_says_why() {
    let tmp = common::visible_tempdir();
    // Session 1 does F1, commits it, and leaves a directory git refuses in any case.
    let body = r#"
if [ "$LOOPBENCH_SESSION" = 1 ]; then
  echo done > src/f1.txt
  list true F1
  git add -A && git commit -qm f1
  mkdir .GIT && echo x > .GIT/notes
fi
"#;
    let ran = run_with(tmp.path(), "unrecorded", None, body);
    let s = first_session(&ran);
    assert_eq!(s["clean_tree"], "false", "{s:?}");
    assert_eq!(
        s["outcome"], "completed",
        "the agent's session, observed: {s:?}"
    );
    let text = std::fs::read_to_string(ran.out.join("sessions.jsonl")).unwrap();
    let record = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|r| r["session"] == 1)
        .unwrap();
    let error = record["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("the work directory's tree could not be recorded, so it is not clean")
            && error.contains(".GIT"),
        "{record}"
    );
    let shown = shown(&ran);
    assert!(shown.contains("could not be recorded"), "{shown}");
}
