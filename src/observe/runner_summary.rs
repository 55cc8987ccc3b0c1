//! The positive evidence a pass of a known runner needs: its own summary, in which
//! every test passed and as many ran as the test files the command names hold by the
//! task's count pattern. An exit status alone can be forged by the code under test
//! (`os._exit(0)` at import, a package that shadows the runner); a summary can be
//! forged only by code that prints one with the right count, which the README says.

use regex::Regex;

use crate::agent::{MAX_COUNT, add_counts};
use crate::fsutil::{TreeFile, TreeSnapshot};
use crate::suite::{Collected, Discovery, NamedTest, RunnerCheck, VerifyRunner};

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
    /// Tests that failed or ended in an error.
    failed: u64,
    /// The runner called the run a success.
    ok: bool,
}

/// Why a run that exited 0 is not a pass, by its runner's summaries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lacking {
    /// The reason, a sentence that starts "exit 0, but".
    pub why: String,
    /// The runner printed fewer summaries than the command runs it: it did not finish.
    pub unfinished: bool,
}

/// The tests the check should see pass on `tree`: the matches of `pattern` in the
/// files the command names, and in the files its runners find by themselves under a
/// directory ([`discovered`]). `None` when that cannot be told: the runner is not known
/// to name files, a dotted name goes on past a module file into a class or a method,
/// or names a package or nothing that exists in `tree`, or a runner's discovery meets
/// something the harness cannot count.
pub fn expected_tests(check: &RunnerCheck, tree: &TreeSnapshot, pattern: &Regex) -> Option<u64> {
    let collected = check.collected.as_ref()?;
    let mut total: u64 = 0;
    for tests in collected {
        let count = match tests {
            Collected::Named(test) => matches_in(module_file(test, tree)?, pattern),
            Collected::Under(discovery) => discovered(discovery, tree, pattern)?,
        };
        total = add_counts(total, count);
    }
    Some(total)
}

/// The matches of `pattern` in one file.
fn matches_in(file: &TreeFile, pattern: &Regex) -> u64 {
    let text = String::from_utf8_lossy(&file.content);
    u64::try_from(pattern.find_iter(&text).count()).unwrap_or(MAX_COUNT)
}

/// The matches of `pattern` in the files `discovery`'s runner takes under its
/// directory of `tree`:
/// - unittest (`discover`): files whose name is a module name (`[_a-z]\w*\.py`) and
///   matches its pattern, in the directory and in every package below it (a directory
///   with `__init__.py`; others are not entered);
/// - pytest: files named `test_*.py` or `*_test.py` anywhere below it, but not in
///   directories it does not enter by default (`.*`, `build`, `dist`, `CVS`, `_darcs`,
///   `node_modules`, `venv`, `*.egg`, `{arch}`, a virtual environment); a named path
///   that is a file is that file.
///
/// `None` when the directory is not in the tree, when a symlink stands where a test
/// file could be (what it leads to is not counted), and for pytest when a configuration
/// file of the tree could choose other files (`python_files`, `testpaths`,
/// `norecursedirs`, `addopts`, ...).
pub fn discovered(discovery: &Discovery, tree: &TreeSnapshot, pattern: &Regex) -> Option<u64> {
    let dir = discovery.dir.as_str();
    let under = |path: &str| -> Option<String> {
        if dir.is_empty() {
            Some(path.to_string())
        } else {
            path.strip_prefix(dir)?
                .strip_prefix('/')
                .map(str::to_string)
        }
    };
    let is_dir = dir.is_empty() || tree.others.iter().any(|e| e.kind == b'd' && e.path == dir);
    let pytest = discovery.runner != VerifyRunner::Unittest;
    if pytest {
        if let Some(file) = tree.get(dir) {
            return Some(matches_in(file, pattern));
        }
        if pytest_configured(tree, dir) {
            return None;
        }
    }
    if !is_dir {
        return None;
    }
    let names = if pytest {
        globset::GlobSetBuilder::new()
            .add(globset::Glob::new("test_*.py").ok()?)
            .add(globset::Glob::new("*_test.py").ok()?)
            .build()
            .ok()?
    } else {
        globset::GlobSetBuilder::new()
            .add(globset::Glob::new(&discovery.pattern).ok()?)
            .build()
            .ok()?
    };
    let entered = |rel: &str| -> bool {
        let parts: Vec<&str> = rel.split('/').collect();
        let mut at = dir.to_string();
        parts[..parts.len() - 1].iter().all(|part| {
            at = if at.is_empty() {
                (*part).to_string()
            } else {
                format!("{at}/{part}")
            };
            if pytest {
                !pytest_skips(part, &at, tree)
            } else {
                let init = format!("{at}/__init__.py");
                tree.get(&init).is_some() || tree.links.iter().any(|(p, _)| *p == init)
            }
        })
    };
    let takes = |rel: &str| -> bool {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        names.is_match(name) && (pytest || is_module_file_name(name)) && entered(rel)
    };
    if tree
        .links
        .iter()
        .any(|(path, _)| under(path).is_some_and(|rel| takes(&rel)))
    {
        return None;
    }
    let mut total = 0;
    for file in &tree.files {
        if under(&file.path).is_some_and(|rel| takes(&rel)) {
            total = add_counts(total, matches_in(file, pattern));
        }
    }
    Some(total)
}

/// unittest's `VALID_MODULE_NAME`: `[_a-z]\w*\.py`, ignoring case.
fn is_module_file_name(name: &str) -> bool {
    name.strip_suffix(".py").is_some_and(|stem| {
        let mut chars = stem.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_alphanumeric() || c == '_')
    })
}

/// Whether pytest, by default, does not enter the directory `name` (at `path`).
fn pytest_skips(name: &str, path: &str, tree: &TreeSnapshot) -> bool {
    const SKIPPED: &[&str] = &[
        "build",
        "dist",
        "CVS",
        "_darcs",
        "node_modules",
        "venv",
        "{arch}",
    ];
    let venv = ["bin/activate", "Scripts/activate"]
        .iter()
        .any(|script| tree.get(&format!("{path}/{script}")).is_some());
    name.starts_with('.') || name.ends_with(".egg") || SKIPPED.contains(&name) || venv
}

/// Whether a pytest configuration file at the top of `tree`, or in `dir` or a directory
/// above it, sets something that chooses which files pytest collects.
fn pytest_configured(tree: &TreeSnapshot, dir: &str) -> bool {
    const FILES: &[&str] = &[
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "tox.ini",
        "setup.cfg",
        "pyproject.toml",
    ];
    const KEYS: &[&str] = &[
        "python_files",
        "testpaths",
        "norecursedirs",
        "addopts",
        "python_classes",
        "python_functions",
        "collect_ignore",
    ];
    let mut dirs = vec![String::new()];
    let mut at = String::new();
    for part in dir.split('/').filter(|p| !p.is_empty()) {
        at = if at.is_empty() {
            part.to_string()
        } else {
            format!("{at}/{part}")
        };
        dirs.push(at.clone());
    }
    dirs.iter().any(|d| {
        FILES.iter().any(|name| {
            let path = if d.is_empty() {
                (*name).to_string()
            } else {
                format!("{d}/{name}")
            };
            tree.links.iter().any(|(p, _)| *p == path)
                || tree.get(&path).is_some_and(|f| {
                    let text = String::from_utf8_lossy(&f.content);
                    KEYS.iter().any(|k| text.contains(k))
                })
        })
    })
}

/// The file a named test is, when it is exactly one whole test file of `tree`.
fn module_file<'t>(test: &NamedTest, tree: &'t TreeSnapshot) -> Option<&'t TreeFile> {
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
/// tree the check saw. `sentinels`: how many sentinel tests ran with the tests, each
/// of which must be, in the summaries, a failure beyond the tests counted (0 unless
/// the check ran through the entry point: then one per run of a runner).
pub fn missing_evidence(
    check: &RunnerCheck,
    expected: Option<u64>,
    sentinels: u32,
    stdout: &[u8],
    stderr: &[u8],
) -> Option<Lacking> {
    let lacking = |why: String| Lacking {
        why,
        unfinished: false,
    };
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
            return Some(Lacking {
                why: format!(
                    "exit 0, but {n} {name} summar{} ({wanted}) where the command runs {name} {runs} time{}: the runner did not finish",
                    if n == 1 { "y" } else { "ies" },
                    if runs == 1 { "" } else { "s" },
                ),
                unfinished: true,
            });
        }
        summaries.extend(found);
        names.push(name);
    }
    let name = names.join(" and ");
    // The numbers are the code under test's to print: summed held at MAX_COUNT.
    let sum = |count: fn(&Summary) -> u64| summaries.iter().fold(0, |t, s| add_counts(t, count(s)));
    let (mut ran, passed, failed) = (sum(|s| s.ran), sum(|s| s.passed), sum(|s| s.failed));
    if sentinels == 0 {
        if let Some(bad) = summaries.iter().find(|s| !s.ok) {
            return Some(lacking(format!(
                "exit 0, but the {name} summary reports a failure ({} ran, {} passed)",
                bad.ran, bad.passed
            )));
        }
    } else {
        // Each run's sentinel is one failure, and one test that ran, of its summary.
        let sentinels = u64::from(sentinels);
        ran = ran.saturating_sub(sentinels);
        if failed > sentinels {
            return Some(lacking(format!(
                "exit 0, but the {name} summary reports a failure ({ran} ran, {passed} passed)"
            )));
        }
        if failed < sentinels {
            return Some(lacking(format!(
                "exit 0, but the {name} summary shows {failed} failure{} where the sentinel test, which must fail, ran {sentinels} time{}",
                if failed == 1 { "" } else { "s" },
                if sentinels == 1 { "" } else { "s" },
            )));
        }
    }
    if passed < ran {
        return Some(lacking(format!(
            "exit 0, but {} of {ran} tests that ran did not pass (skipped or expected to fail)",
            ran - passed
        )));
    }
    match expected {
        _ if passed == 0 => Some(lacking(format!("exit 0, but {name} ran no test"))),
        Some(n) if passed != n => Some(lacking(format!(
            "exit 0, but {name} reports {passed} test{} passed where the test files the command runs hold {n}",
            if passed == 1 { "" } else { "s" }
        ))),
        _ => None,
    }
}

/// The number right after `key` in `text` (0 when there is none), held at
/// [`MAX_COUNT`]: a number too long for a count is as large as a count gets, never 0.
fn number_after(text: &str, key: &str) -> u64 {
    text.find(key)
        .map(|at| count_of(&text[at + key.len()..]))
        .unwrap_or(0)
}

/// The decimal digits at the start of `text` as a count held at [`MAX_COUNT`]; 0 when
/// there are none.
fn count_of(text: &str) -> u64 {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return 0;
    }
    text[..digits]
        .parse::<u64>()
        .map_or(MAX_COUNT, |n| n.min(MAX_COUNT))
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
        let digits = !count.is_empty() && count.bytes().all(|b| b.is_ascii_digit());
        if !digits || !(tail.starts_with("test in ") || tail.starts_with("tests in ")) {
            continue;
        }
        let ran = count_of(count);
        let result = lines[i + 1..]
            .iter()
            .find(|l| !l.is_empty())
            .copied()
            .unwrap_or("");
        let ok = result == "OK" || result.starts_with("OK (");
        let failed = if result.starts_with("FAILED (") {
            number_after(result, "failures=").saturating_add(number_after(result, "errors="))
        } else {
            0
        };
        let not_passed = number_after(result, "skipped=")
            .saturating_add(number_after(result, "expected failures="))
            .saturating_add(number_after(result, "unexpected successes="))
            .saturating_add(failed);
        found.push(Summary {
            ran,
            passed: if ok || result.starts_with("FAILED (") {
                ran.saturating_sub(not_passed)
            } else {
                0
            },
            failed,
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
                failed: 0,
                ok: false,
            });
            continue;
        }
        let mut summary = Summary {
            ran: 0,
            passed: 0,
            failed: 0,
            ok: true,
        };
        let mut parsed = true;
        for part in counts.split(", ") {
            let Some((n, what)) = part.split_once(' ') else {
                parsed = false;
                break;
            };
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
                parsed = false;
                break;
            }
            let n = count_of(n);
            match what {
                "passed" => {
                    summary.passed = add_counts(summary.passed, n);
                    summary.ran = add_counts(summary.ran, n);
                }
                "failed" | "error" | "errors" => {
                    summary.ok = false;
                    summary.ran = add_counts(summary.ran, n);
                    summary.failed = add_counts(summary.failed, n);
                }
                "skipped" | "xfailed" | "xpassed" => summary.ran = add_counts(summary.ran, n),
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
#[path = "runner_summary_tests.rs"]
mod tests;
