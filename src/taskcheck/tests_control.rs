//! The `tests` control: every test file is counted by `count_pattern` (else removing a
//! test from it goes unseen), and the tests the agent starts with are the pristine
//! tests the truth is judged by.

use std::collections::BTreeMap;

use super::report::Problem;
use crate::error::Result;
use crate::fsutil::TreeSnapshot;
use crate::suite::{ORACLE_TESTS_AT, Task};

/// Whether a test file is left out of the count check: empty, or a package marker.
fn uncounted(path: &str, content: &[u8]) -> bool {
    content.iter().all(u8::is_ascii_whitespace) || path.rsplit('/').next() == Some("__init__.py")
}

/// The problems of the `tests` control for `task`.
pub fn tests_problems(task: &Task) -> Result<Vec<Problem>> {
    // A container task's own checks bring their tests (Harbor's `/tests`): none lie in
    // the work directory, so there is nothing an agent could remove or weaken.
    if task.features.iter().all(|f| f.container.is_some()) && !task.features.is_empty() {
        return Ok(Vec::new());
    }
    let repo = TreeSnapshot::read(&task.repo_dir())?;
    let in_repo: BTreeMap<&str, &[u8]> = repo
        .files
        .iter()
        .filter(|f| task.tests.glob.is_match(&f.path))
        .map(|f| (f.path.as_str(), f.content.as_slice()))
        .collect();
    let oracle = task
        .oracle_tests_dir()
        .map(|dir| TreeSnapshot::read(&dir))
        .transpose()?;
    let in_oracle: Option<BTreeMap<String, &[u8]>> = oracle.as_ref().map(|o| {
        o.files
            .iter()
            .map(|f| {
                (
                    format!("{ORACLE_TESTS_AT}/{}", f.path),
                    f.content.as_slice(),
                )
            })
            .filter(|(p, _)| task.tests.glob.is_match(p))
            .collect()
    });
    let mut problems = uncounted_files(task, &in_repo, in_oracle.as_ref());
    let Some(in_oracle) = in_oracle else {
        problems.push(Problem {
            control: "tests",
            feature: None,
            file: None,
            reason: "the task has no oracle/tests: verified then equals self_verified, so \
                     tests the agent weakens cannot be detected"
                .into(),
            fix: "copy the tests of repo/tests to oracle/tests".into(),
            output: None,
        });
        return Ok(problems);
    };
    problems.extend(pristine_mismatches(&in_repo, &in_oracle));
    Ok(problems)
}

/// A problem of the `tests` control with test file `file`.
fn file_problem(file: &str, reason: String, fix: String) -> Problem {
    Problem {
        control: "tests",
        feature: None,
        file: Some(file.to_string()),
        reason,
        fix,
        output: None,
    }
}

/// No test file at all, or test files in which `count_pattern` finds no test (each
/// file once, the pristine copy where there is one).
fn uncounted_files(
    task: &Task,
    in_repo: &BTreeMap<&str, &[u8]>,
    in_oracle: Option<&BTreeMap<String, &[u8]>>,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut files: BTreeMap<String, &[u8]> =
        in_repo.iter().map(|(p, c)| (p.to_string(), *c)).collect();
    if let Some(o) = in_oracle {
        files.extend(o.iter().map(|(p, c)| (p.clone(), *c)));
    }
    if files.is_empty() {
        problems.push(Problem {
            control: "tests",
            feature: None,
            file: None,
            reason: format!(
                "no file of repo/ or oracle/tests matches tests.glob = \"{}\"",
                task.tests.glob_text
            ),
            fix: "make tests.glob match the test files, so that removed tests are counted".into(),
            output: None,
        });
    }
    for (path, content) in &files {
        if !uncounted(path, content)
            && task
                .tests
                .count_pattern
                .find(&String::from_utf8_lossy(content))
                .is_none()
        {
            problems.push(file_problem(
                path,
                "count_pattern matches nothing".into(),
                format!(
                    "make tests.count_pattern (now '{}') match each test of this file: \
                     otherwise a test removed from it goes unseen",
                    task.tests.count_pattern.as_str()
                ),
            ));
        }
    }
    problems
}

/// The test files under oracle/tests that repo/ lacks, holds in another version, or
/// holds alone.
fn pristine_mismatches(
    in_repo: &BTreeMap<&str, &[u8]>,
    in_oracle: &BTreeMap<String, &[u8]>,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (path, content) in in_repo {
        if !path.starts_with(&format!("{ORACLE_TESTS_AT}/")) {
            continue;
        }
        match in_oracle.get(*path) {
            None => problems.push(file_problem(
                path,
                format!("in repo/ but not in oracle/{path}: the overlay leaves it out of every verified check"),
                format!("copy repo/{path} to oracle/{path}, or delete it from repo/"),
            )),
            Some(pristine) if pristine != content => problems.push(file_problem(
                path,
                format!(
                    "repo/{path} and oracle/{path} differ (first at line {})",
                    first_differing_line(content, pristine)
                ),
                format!(
                    "make repo/{path} the same as oracle/{path}: the agent must start from \
                     the tests its work is judged by"
                ),
            )),
            Some(_) => {}
        }
    }
    for path in in_oracle.keys() {
        if !in_repo.contains_key(path.as_str()) {
            problems.push(file_problem(
                path,
                format!("in oracle/{path} but not in repo/: the agent never sees this test"),
                format!(
                    "copy oracle/{path} to repo/{path} (or keep it hidden on purpose and expect this report)"
                ),
            ));
        }
    }
    problems
}

/// The 1-based number of the first line where `a` and `b` differ.
fn first_differing_line(a: &[u8], b: &[u8]) -> usize {
    let (mut la, mut lb) = (a.split(|&c| c == b'\n'), b.split(|&c| c == b'\n'));
    let mut n = 1;
    loop {
        match (la.next(), lb.next()) {
            (Some(x), Some(y)) if x == y => n += 1,
            _ => return n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_differing_line_is_counted_from_one() {
        assert_eq!(first_differing_line(b"a\nb\nc", b"a\nb\nx"), 3);
        assert_eq!(first_differing_line(b"a", b"b"), 1);
        assert_eq!(first_differing_line(b"a\n", b"a\nb"), 2);
    }

    #[test]
    fn empty_files_and_package_markers_are_not_counted() {
        assert!(uncounted("tests/__init__.py", b"import os\n"));
        assert!(uncounted("tests/test_a.py", b"  \n"));
        assert!(!uncounted("tests/test_a.py", b"x = 1\n"));
    }
}
