//! `report`, `compare` and `weekly` refuse a run's CSVs that do not fit the record
//! format (exit 2), naming the file, line and column and what the cell should hold:
//! real runs, edited the way a user or a broken tool would edit them.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use common::{loopbench, repo_root};

/// One replay of the shipped example trace, made once for every test here.
fn source_run() -> &'static Path {
    static RUN: OnceLock<tempfile::TempDir> = OnceLock::new();
    RUN.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let examples = repo_root().join("suites/examples");
        loopbench()
            .arg("replay")
            .arg(examples.join("traces/latefees-every-metric.jsonl"))
            .arg("--task")
            .arg(examples.join("tasks/latefees"))
            .args(["--format", "json", "-q", "--out"])
            .arg(tmp.path().join("run"))
            .assert()
            .success();
        tmp
    })
    .path()
}

/// A copy of the example run's files (manifest and CSVs) at `root/name`.
fn example_run(root: &Path, name: &str) -> PathBuf {
    let out = root.join(name);
    std::fs::create_dir_all(&out).unwrap();
    for entry in std::fs::read_dir(source_run().join("run")).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), out.join(entry.file_name())).unwrap();
        }
    }
    out
}

/// Replaces line `line` (1-based) of `file` by the rows `edit` makes of its cells (no
/// cell of the lines edited here is quoted).
fn edit_line(file: &Path, line: usize, edit: impl Fn(Vec<String>) -> Vec<Vec<String>>) {
    let text = std::fs::read_to_string(file).unwrap();
    let mut out = String::new();
    for (i, l) in text.lines().enumerate() {
        if i + 1 == line {
            let cells: Vec<String> = l.split(',').map(str::to_string).collect();
            for row in edit(cells) {
                out += &row.join(",");
                out.push('\n');
            }
        } else {
            out += l;
            out.push('\n');
        }
    }
    std::fs::write(file, out).unwrap();
}

fn column(file: &Path, name: &str) -> usize {
    let text = std::fs::read_to_string(file).unwrap();
    let header = text.lines().next().unwrap();
    header.split(',').position(|h| h == name).unwrap()
}

/// `report`, `compare` (as the new run and as the base) and `weekly` on `bad` all exit
/// 2 with `message` on stderr.
fn assert_refused_everywhere(tmp: &Path, bad: &Path, message: &str) {
    let good = example_run(tmp, "good");
    let runs: Vec<Vec<std::ffi::OsString>> = vec![
        vec!["report".into(), bad.into()],
        vec![
            "compare".into(),
            good.clone().into(),
            bad.into(),
            "--metric".into(),
            "premature_done".into(),
        ],
        vec![
            "compare".into(),
            bad.into(),
            good.into(),
            "--metric".into(),
            "premature_done".into(),
        ],
        vec![
            "weekly".into(),
            tmp.into(),
            "--out".into(),
            tmp.join("weekly-out").into(),
        ],
    ];
    for args in runs {
        let out = loopbench().args(&args).assert().code(2);
        let stderr = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(!stderr.contains("infer_schema_length"), "{stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

#[test]
fn a_negative_count_is_refused_at_its_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = example_run(tmp.path(), "bad");
    let file = bad.join("sessions.csv");
    let at = column(&file, "tests_removed");
    edit_line(&file, 3, |mut cells| {
        cells[at] = "-3".into();
        vec![cells]
    });
    assert_refused_everywhere(
        tmp.path(),
        &bad,
        &format!(
            "sessions.csv:3: column {} (tests_removed): '-3' is negative; expected a count",
            at + 1
        ),
    );
}

#[test]
fn an_unknown_outcome_is_refused_with_the_outcomes_there_are() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = example_run(tmp.path(), "bad");
    let file = bad.join("sessions.csv");
    let at = column(&file, "outcome");
    edit_line(&file, 4, |mut cells| {
        cells[at] = "finished".into();
        vec![cells]
    });
    assert_refused_everywhere(
        tmp.path(),
        &bad,
        &format!(
            "sessions.csv:4: column {} (outcome): 'finished' is not an outcome; expected one of \
             completed, declared_complete, out_of_budget, interrupted, timeout, error",
            at + 1
        ),
    );
}

#[test]
fn a_session_given_twice_is_refused_naming_both_lines() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = example_run(tmp.path(), "bad");
    edit_line(&bad.join("sessions.csv"), 2, |cells| {
        vec![cells.clone(), cells]
    });
    assert_refused_everywhere(
        tmp.path(),
        &bad,
        "sessions.csv:3: a second row for trial_id 'replay:latefees:0', session '1' (the first \
         is on line 2); each (trial_id, session) has one row",
    );
}

#[test]
fn a_trial_given_twice_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = example_run(tmp.path(), "bad");
    edit_line(&bad.join("trials.csv"), 2, |cells| {
        vec![cells.clone(), cells]
    });
    assert_refused_everywhere(
        tmp.path(),
        &bad,
        "trials.csv:3: a second row for trial_id 'replay:latefees:0' (the first is on line 2); \
         each trial_id has one row",
    );
}

#[test]
fn a_row_missing_a_cell_and_a_word_in_a_count_column_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = example_run(tmp.path(), "bad");
    let file = bad.join("trials.csv");
    let at = column(&file, "features_verified");
    edit_line(&file, 2, |mut cells| {
        cells[at] = "two".into();
        vec![cells]
    });
    loopbench()
        .arg("report")
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "trials.csv:2: column {} (features_verified): 'two' is not a whole number",
            at + 1
        )));
    edit_line(&file, 2, |mut cells| {
        cells.pop();
        vec![cells]
    });
    loopbench()
        .arg("report")
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "trials.csv:2: 16 cells where the header has 17",
        ));
}

#[test]
fn more_premature_claims_than_claims_is_refused_at_its_line_and_column() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = example_run(tmp.path(), "bad");
    let file = bad.join("sessions.csv");
    let (k, n) = (
        column(&file, "premature_claims"),
        column(&file, "newly_claimed"),
    );
    edit_line(&file, 3, |mut cells| {
        cells[n] = "1".into();
        cells[k] = "3".into();
        vec![cells]
    });
    assert_refused_everywhere(
        tmp.path(),
        &bad,
        &format!(
            "sessions.csv:3: column {} (premature_claims): 3 is more than 1 in column {} (newly_claimed)",
            k + 1,
            n + 1
        ),
    );
}

#[test]
fn more_features_verified_than_features_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = example_run(tmp.path(), "bad");
    let file = bad.join("trials.csv");
    let k = column(&file, "features_verified");
    edit_line(&file, 2, |mut cells| {
        cells[k] = "9".into();
        vec![cells]
    });
    assert_refused_everywhere(
        tmp.path(),
        &bad,
        &format!(
            "trials.csv:2: column {} (features_verified): 9 is more than",
            k + 1
        ),
    );
}
