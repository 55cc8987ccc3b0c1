//! The positive evidence a pass of a known runner needs: its own summary, in which
//! every test passed and as many ran as the test files the command names hold by the
//! task's count pattern. An exit status alone can be forged by the code under test
//! (`os._exit(0)` at import, a package that shadows the runner); a summary can be
//! forged only by code that prints one with the right count, which the README says.

use regex::Regex;

use crate::fsutil::TreeSnapshot;
use crate::suite::{NamedTest, RunnerCheck};

/// How much of each of stdout and stderr is kept to look for summaries in: far more
/// than a summary, so that output after one (or a first run's summary before a second
/// run's output) is still read.
pub const SUMMARY_TAIL_BYTES: usize = 64 * 1024;

/// One run's summary as the runner printed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Summary {
    /// Tests that ran (skipped ones included, deselected ones not).
    ran: u64,
    /// Tests that passed (not skipped, not an expected failure).
    passed: u64,
    /// The runner called the run a success.
    ok: bool,
}

/// The tests the check should see pass on `tree`: the matches of `pattern` in the
/// files the command names. `None` when that cannot be told: the runner is not known
/// to name files, or a dotted name goes on past a module file into a class or a
/// method, or names a package or nothing that exists in `tree`.
pub fn expected_tests(check: &RunnerCheck, tree: &TreeSnapshot, pattern: &Regex) -> Option<u64> {
    let named = check.named.as_ref()?;
    let mut total: u64 = 0;
    for test in named {
        let file = module_file(test, tree)?;
        let text = String::from_utf8_lossy(&file.content);
        let count = u64::try_from(pattern.find_iter(&text).count()).unwrap_or(u64::MAX);
        total = total.saturating_add(count);
    }
    Some(total)
}

/// The file a named test is, when it is exactly one whole test file of `tree`.
fn module_file<'t>(
    test: &NamedTest,
    tree: &'t TreeSnapshot,
) -> Option<&'t crate::fsutil::TreeFile> {
    match test.paths.as_slice() {
        [path] => tree.get(path),
        // A dotted name: (file, directory) for each prefix, shortest first; a shorter
        // prefix that is a file makes the rest a class or a method inside it.
        pairs => {
            let files: Vec<&String> = pairs.iter().step_by(2).collect();
            let (full, shorter) = files.split_last()?;
            if shorter.iter().any(|f| tree.get(f).is_some()) {
                return None;
            }
            tree.get(full)
        }
    }
}

/// Why a run of a verify command that exited 0 is not a pass; `None` when it is (or
/// when the check needs no runner's summary). `expected` is [`expected_tests`] on the
/// tree the check saw.
pub fn missing_evidence(
    check: &RunnerCheck,
    expected: Option<u64>,
    stdout: &[u8],
    stderr: &[u8],
) -> Option<String> {
    if check.exit_only() {
        return None;
    }
    let mut summaries = Vec::new();
    let mut names = Vec::new();
    for (name, runs, found, wanted) in [
        (
            "unittest",
            check.unittest,
            unittest_summaries(&String::from_utf8_lossy(stderr)),
            "'Ran N tests' and 'OK' on stderr",
        ),
        (
            "pytest",
            check.pytest,
            pytest_summaries(&String::from_utf8_lossy(stdout)),
            "'N passed in ...' on stdout",
        ),
    ] {
        if runs == 0 {
            continue;
        }
        let n = u32::try_from(found.len()).unwrap_or(u32::MAX);
        if n < runs {
            return Some(format!(
                "exit 0, but {n} {name} summar{} ({wanted}) where the command runs {name} {runs} time{}: the runner did not finish",
                if n == 1 { "y" } else { "ies" },
                if runs == 1 { "" } else { "s" },
            ));
        }
        summaries.extend(found);
        names.push(name);
    }
    let name = names.join(" and ");
    if let Some(bad) = summaries.iter().find(|s| !s.ok) {
        return Some(format!(
            "exit 0, but the {name} summary reports a failure ({} ran, {} passed)",
            bad.ran, bad.passed
        ));
    }
    let ran: u64 = summaries.iter().map(|s| s.ran).sum();
    let passed: u64 = summaries.iter().map(|s| s.passed).sum();
    if passed < ran {
        return Some(format!(
            "exit 0, but {} of {ran} tests that ran did not pass (skipped or expected to fail)",
            ran - passed
        ));
    }
    match expected {
        Some(n) if passed != n => Some(format!(
            "exit 0, but {name} reports {passed} test{} passed where the test files the command names hold {n}",
            if passed == 1 { "" } else { "s" }
        )),
        None if passed == 0 => Some(format!("exit 0, but {name} ran no test")),
        _ => None,
    }
}

fn number_after(text: &str, key: &str) -> u64 {
    text.find(key)
        .and_then(|at| {
            let digits: String = text[at + key.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .unwrap_or(0)
}

/// The summaries of unittest's text runner: a line `Ran N tests in 0.001s`, then (after
/// a blank line) `OK`, `OK (skipped=1)`, `FAILED (failures=1)` or `NO TESTS RAN`.
fn unittest_summaries(stderr: &str) -> Vec<Summary> {
    let lines: Vec<&str> = stderr.lines().map(str::trim_end).collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rest) = line.strip_prefix("Ran ") else {
            continue;
        };
        let Some((count, tail)) = rest.split_once(' ') else {
            continue;
        };
        let (Ok(ran), true) = (
            count.parse::<u64>(),
            tail.starts_with("test in ") || tail.starts_with("tests in "),
        ) else {
            continue;
        };
        let result = lines[i + 1..]
            .iter()
            .find(|l| !l.is_empty())
            .copied()
            .unwrap_or("");
        let ok = result == "OK" || result.starts_with("OK (");
        let not_passed = number_after(result, "skipped=")
            .saturating_add(number_after(result, "expected failures="));
        found.push(Summary {
            ran,
            passed: if ok {
                ran.saturating_sub(not_passed)
            } else {
                0
            },
            ok,
        });
    }
    found
}

/// The summaries of pytest: its last line, `==== 2 passed, 1 skipped in 0.12s ====`
/// (or without the rules under `-q`), or `no tests ran in 0.01s`.
fn pytest_summaries(stdout: &str) -> Vec<Summary> {
    let mut found = Vec::new();
    for line in stdout.lines() {
        let line = line.trim().trim_matches('=').trim();
        let Some((counts, time)) = line.rsplit_once(" in ") else {
            continue;
        };
        let timed = time
            .split_whitespace()
            .next()
            .and_then(|t| t.strip_suffix('s'))
            .is_some_and(|t| t.parse::<f64>().is_ok());
        if !timed {
            continue;
        }
        if counts == "no tests ran" {
            found.push(Summary {
                ran: 0,
                passed: 0,
                ok: false,
            });
            continue;
        }
        let mut summary = Summary {
            ran: 0,
            passed: 0,
            ok: true,
        };
        let mut parsed = true;
        for part in counts.split(", ") {
            let Some((n, what)) = part.split_once(' ') else {
                parsed = false;
                break;
            };
            let Ok(n) = n.parse::<u64>() else {
                parsed = false;
                break;
            };
            match what {
                "passed" => {
                    summary.passed += n;
                    summary.ran += n;
                }
                "failed" | "error" | "errors" => {
                    summary.ok = false;
                    summary.ran += n;
                }
                "skipped" | "xfailed" | "xpassed" => summary.ran += n,
                "deselected" | "warning" | "warnings" | "rerun" => {}
                _ => {
                    parsed = false;
                    break;
                }
            }
        }
        if parsed {
            found.push(summary);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unittest(runs: u32) -> RunnerCheck {
        RunnerCheck {
            unittest: runs,
            pytest: 0,
            named: None,
        }
    }

    const OK3: &str = "...\n----------------------------------------------------------------------\nRan 3 tests in 0.001s\n\nOK\n";

    #[test]
    fn a_unittest_pass_needs_its_summary_with_every_named_test_passed() {
        let c = unittest(1);
        assert_eq!(missing_evidence(&c, Some(3), b"", OK3.as_bytes()), None);
        assert_eq!(missing_evidence(&c, None, b"", OK3.as_bytes()), None);
        let short = missing_evidence(&c, Some(4), b"", OK3.as_bytes()).unwrap();
        assert!(
            short.contains("reports 3 tests passed where the test files the command names hold 4"),
            "{short}"
        );
        let none = missing_evidence(&c, Some(3), b"Ran 3 tests in 0.1s\n\nOK\n", b"").unwrap();
        assert!(none.contains("0 unittest summaries"), "{none}");
        let failed = "Ran 3 tests in 0.001s\n\nFAILED (failures=1)\n";
        assert!(missing_evidence(&c, Some(3), b"", failed.as_bytes()).is_some());
        let skipped = "Ran 3 tests in 0.001s\n\nOK (skipped=1)\n";
        let why = missing_evidence(&c, Some(3), b"", skipped.as_bytes()).unwrap();
        assert!(why.contains("1 of 3 tests that ran did not pass"), "{why}");
        let empty = "Ran 0 tests in 0.000s\n\nNO TESTS RAN\n";
        assert!(missing_evidence(&c, None, b"", empty.as_bytes()).is_some());
        let zero = "Ran 0 tests in 0.000s\n\nOK\n";
        assert!(missing_evidence(&c, None, b"", zero.as_bytes()).is_some());
    }

    #[test]
    fn two_runs_need_two_summaries() {
        let both = format!("{OK3}{OK3}");
        assert_eq!(
            missing_evidence(&unittest(2), Some(6), b"", both.as_bytes()),
            None
        );
        assert!(missing_evidence(&unittest(2), None, b"", OK3.as_bytes()).is_some());
        let mixed = RunnerCheck {
            unittest: 1,
            pytest: 1,
            named: None,
        };
        let pytest_out = b"2 passed in 0.01s\n";
        assert_eq!(
            missing_evidence(&mixed, Some(5), pytest_out, OK3.as_bytes()),
            None
        );
        assert!(missing_evidence(&mixed, Some(5), b"", OK3.as_bytes()).is_some());
    }

    #[test]
    fn pytest_summaries_are_read_with_and_without_rules() {
        let c = RunnerCheck {
            unittest: 0,
            pytest: 1,
            named: None,
        };
        for (out, expected, pass) in [
            ("..\n===== 2 passed in 0.12s =====\n", Some(2), true),
            ("2 passed, 1 warning in 0.01s\n", Some(2), true),
            ("1 failed, 1 passed in 0.01s\n", None, false),
            ("2 passed, 1 skipped in 0.01s\n", None, false),
            ("no tests ran in 0.01s\n", None, false),
            ("2 passed in 0.01s\n", Some(3), false),
            ("nothing here\n", None, false),
        ] {
            let why = missing_evidence(&c, expected, out.as_bytes(), b"");
            assert_eq!(why.is_none(), pass, "{out}: {why:?}");
        }
    }
}
