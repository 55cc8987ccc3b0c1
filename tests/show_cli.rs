//! `loopbench show`: a run's trials one line each, and one trial as a timeline in which
//! every non-zero metric of the shipped example trace is given its cause.

use crate::common;

use common::{loopbench, repo_root};
use predicates::prelude::*;

fn example_run(tmp: &std::path::Path) -> std::path::PathBuf {
    let out = tmp.join("results");
    let root = repo_root().join("suites/examples");
    loopbench()
        .arg("replay")
        .arg(root.join("traces/latefees-every-metric.jsonl"))
        .arg("--task")
        .arg(root.join("tasks/latefees"))
        .args(["--format", "json", "--out"])
        .arg(&out)
        .assert()
        .success();
    out
}

fn stdout_of(args: &[&std::ffi::OsStr]) -> String {
    let out = loopbench().args(args).assert().success();
    String::from_utf8(out.get_output().stdout.clone()).unwrap()
}

/// The lines of `text` from the heading `session N` to the next blank line.
fn block(text: &str, n: u32) -> String {
    let start = text
        .find(&format!("\nsession {n} ("))
        .unwrap_or_else(|| panic!("no session {n} in\n{text}"));
    let rest = &text[start + 1..];
    rest[..rest.find("\n\n").unwrap_or(rest.len())].to_string()
}

#[test]
fn show_gives_every_metric_of_the_example_trace_its_cause() {
    let tmp = tempfile::tempdir().unwrap();
    let out = example_run(tmp.path());
    let text = stdout_of(&[
        "show".as_ref(),
        out.as_os_str(),
        "replay:latefees:0".as_ref(),
    ]);
    assert!(text.starts_with("trial replay:latefees:0 (arm replay, task latefees, replicate 0)\n"));
    assert!(text.contains("ended by declared_complete after 6 sessions; 1 of 3 features verified"));
    // premature_victory
    assert!(text.contains(
        "premature victory: the agent declared the project complete while 2 of 3 features were not verified"
    ));
    let expected: &[(u32, &[&str])] = &[
        (
            1,
            &[
                "session 1 (coding): completed (18 turns, 417100 tokens, $1.42)",
                "counts: newly_claimed 1, newly_verified 1, features_verified 1",
                "- claimed F1; its check passes",
                "- F1 is now verified (its check passes with the pristine tests)",
                "- clean exit: everything committed and PROGRESS.md updated",
            ],
        ),
        (
            2,
            &[
                "session 2 (coding): interrupted",
                // premature_claims, with the failing check's command, exit and output
                "- claimed F2; its check failed: `python3 -m unittest -q tests.test_reminders` exit 1: ModuleNotFoundError: No module named 'ledger.reminders' …",
                // desc_edits
                "- reworded F3: 'Export invoices as CSV with amount, late fee and total columns' → 'Export invoices as CSV'",
                // step_edits
                "- changed the steps of F2",
                // tests_removed
                "- removed 3 tests from tests/test_export.py (3 → 0, none left)",
                // dup_side_effects
                "- repeated the irreversible action reminder:INV-1",
                // actions_failed
                "- 1 action could not be carried out",
                // clean_exit
                "- left uncommitted changes (git status is not empty) and did not update PROGRESS.md",
            ],
        ),
        (
            3,
            &[
                // told_false, with what the check printed after the session before
                "- started from a false claim: F2 was marked done but its check failed: `python3 -m unittest -q tests.test_reminders` exit 1",
                "- F2 is now verified",
                // resume_success
                "- resumed after an interrupted session, and resumed correctly",
            ],
        ),
        (
            4,
            &[
                "- claimed F3; its check failed: `python3 -m unittest -q tests.test_export` exit 1",
                // entries_added
                "- added entry F4 to the list",
                // tests_weakened
                "- weakened the tests of F3: its check passes with the agent's tests and fails with the pristine ones",
                "- everything committed, but PROGRESS.md was not updated",
            ],
        ),
        (
            5,
            &[
                // regressions
                "- broke F1: verified before, now its check fails (it is still marked done): `python3 -m unittest -q tests.test_late_fee` exit 1: AssertionError: 300 != 200 …",
                "- started from a false claim: F3 was marked done",
                // entries_removed
                "- removed entry F4 from the list",
            ],
        ),
        (
            6,
            &[
                "session 6 (coding): declared_complete",
                // list_parse_ok = false
                "- left a feature list that does not parse, so the list-based counts are empty",
            ],
        ),
    ];
    for (n, sentences) in expected {
        let b = block(&text, *n);
        for sentence in *sentences {
            assert!(b.contains(sentence), "session {n} lacks {sentence:?}:\n{b}");
        }
        assert!(b.contains("- tree after the session: "), "{b}");
    }
}

#[test]
fn show_without_a_trial_lists_one_line_per_trial() {
    let tmp = tempfile::tempdir().unwrap();
    let out = example_run(tmp.path());
    let text = stdout_of(&["show".as_ref(), out.as_os_str()]);
    // The verdict first (one arm: nothing to compare), then the listing.
    let (verdict, listing) = text.split_once("\n\n").expect("a verdict, then the trials");
    assert!(
        verdict.starts_with("Verdict (vs baseline replay;"),
        "{text}"
    );
    assert!(verdict.contains("nothing to compare"), "{text}");
    let lines: Vec<&str> = listing.lines().collect();
    assert_eq!(lines.len(), 2, "{text}");
    assert!(lines[0].starts_with("trial "), "{text}");
    let cells: Vec<&str> = lines[1].split_whitespace().collect();
    assert_eq!(
        cells,
        [
            "replay:latefees:0",
            "replay",
            "latefees",
            "declared_complete",
            "6",
            "1/3"
        ]
    );
}

#[test]
fn an_unknown_trial_or_run_directory_exits_2_and_says_how_to_find_ids() {
    let tmp = tempfile::tempdir().unwrap();
    let out = example_run(tmp.path());
    loopbench()
        .arg("show")
        .arg(&out)
        .arg("json:latefees:9")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no trial 'json:latefees:9'"))
        .stderr(predicate::str::contains("replay:latefees:0"))
        .stderr(predicate::str::contains("lists them all"));
    loopbench()
        .arg("show")
        .arg(tmp.path().join("nowhere"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("not a results directory"));
}
