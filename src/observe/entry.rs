//! The harness's pristine entry point for a known test runner (`entry_point.py`) and
//! the sentinel test beside a check that runs through it. A check whose answer is
//! `verified` and that runs unittest or pytest starts the runner through the entry
//! point (`suite::through_entry`), which lies in a directory of its own beside the
//! check's copy, never in it, bound read-only into the sandbox. The entry point notes
//! the runner's assertion and result machinery before any module of the tree is
//! imported, runs the tests with the sentinel last, compares the machinery after the
//! run and reports on a line of its own; [`EntryCheck::findings`] reads that line.
//!
//! The sentinel is drawn from the kernel's random source for each run, not from the
//! trial's seeded generator: an honest tree passes and a changed runner fails whatever
//! the draw, so no table depends on it, and a draw that a seed and the harness's code
//! could reproduce would be one the code under test could predict.

use std::path::{Path, PathBuf};

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{IoContext, Result};
use crate::suite::{Collected, ORACLE_TESTS_AT, RunnerCheck, through_entry};

/// The entry point's source, as the harness writes it beside each check.
pub const ENTRY_SOURCE: &str = include_str!("entry_point.py");

/// The entry point's file name in its directory (beside `check.json`).
const ENTRY_FILE: &str = "loopbench_entry.py";

/// How a finding of a changed runner begins.
pub const RUNNER_CHANGED: &str = "the runner's machinery changed during the run";

/// What begins each line of the entry point's report.
const REPORT_PREFIX: &str = "loopbench-entry ";

/// How a run through the entry point is told apart from anything else that prints:
/// the token of the run's own entry point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntryCheck {
    token: String,
    /// The sentinel's module (its file's stem) and test, to tell its output apart.
    module: String,
    test: String,
}

/// A check laid out to run through the entry point.
#[derive(Debug)]
pub struct Laid {
    /// The verify command with its runs started through the entry point.
    pub command: String,
    /// The directory holding the entry point and `check.json`, to show read-only.
    pub dir: PathBuf,
    /// What the run's report is told apart by.
    pub entry: EntryCheck,
}

/// What the entry point's reports in a run's stderr say.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Findings {
    /// Reports of this run's entry point (one per run of a runner that ended).
    pub reports: u32,
    /// What the reports found changed or wrong: the runner's machinery, the sentinel.
    pub tampered: Vec<String>,
    /// A report says the runner recorded a failure of a test other than the sentinel.
    pub tests_failed: bool,
}

/// Why `command` cannot run through the entry point under `runner`, if it cannot: a
/// run of a runner whose summary is needed is started where the harness cannot put the
/// entry point (a script, a form the harness does not read).
pub fn refused(command: &str, runner: &RunnerCheck) -> Option<String> {
    through_entry(command, runner, "/").is_none().then(|| {
        format!(
            "the command runs {} where the harness cannot start it through its entry point \
             (a script, or a form it does not read), so no pass of it can be vouched for; \
             name the runner in the command (`python3 -m unittest ...`, `pytest ...`) or \
             set verify_runner = \"exit\"",
            runner_names(runner)
        )
    })
}

/// "unittest", "pytest" or "unittest and pytest".
fn runner_names(runner: &RunnerCheck) -> &'static str {
    match (runner.unittest > 0, runner.pytest > 0) {
        (true, true) => "unittest and pytest",
        (true, false) => "unittest",
        _ => "pytest",
    }
}

/// Lays out a run of `command` through the entry point: the entry point and its
/// `check.json` in `dir` (made here: beside the copy, never in it; the harness's, and
/// readable by the sandbox's user), and a sentinel test drawn at random in `tree` (the
/// check's copy) beside the pristine tests. `Ok(Err(why))` when the command cannot run
/// through it ([`refused`]).
pub fn lay_out(
    dir: &Path,
    tree: &Path,
    command: &str,
    runner: &RunnerCheck,
) -> Result<std::result::Result<Laid, String>> {
    let entry_path = dir.join(ENTRY_FILE);
    let Some(entry_text) = entry_path.to_str() else {
        return Ok(Err(format!(
            "the scratch path '{}' is not UTF-8, so no command can name the entry point",
            entry_path.display()
        )));
    };
    let Some(command) = through_entry(command, runner, entry_text) else {
        return Ok(Err(refused(command, runner).unwrap_or_default()));
    };
    let mut rng = ChaCha8Rng::from_seed(
        crate::sandbox::unguessable_seed()
            .io_context(|| "cannot read the kernel's random source".into())?,
    );
    let (beside, package) = sentinel_dir(tree);
    let sentinel = Sentinel::draw(&mut rng, runner, &beside);
    let sentinel_path = beside.join(format!("{}.py", sentinel.module));
    let Some(sentinel_text) = sentinel_path.to_str() else {
        return Ok(Err(format!(
            "the scratch path '{}' is not UTF-8",
            sentinel_path.display()
        )));
    };
    let token = hex(&rng.random::<[u8; 16]>());
    let module = if package.is_empty() {
        sentinel.module.clone()
    } else {
        format!("{package}.{}", sentinel.module)
    };
    let Some(root) = tree.to_str() else {
        return Ok(Err(format!(
            "the scratch path '{}' is not UTF-8",
            tree.display()
        )));
    };
    let check = serde_json::json!({
        "token": token,
        "root": std::path::absolute(root).unwrap_or_else(|_| root.into()),
        "sentinel": {
            "path": sentinel_text,
            "module": module,
            "test": sentinel.test,
            "marker": sentinel.marker,
        },
    });
    let written = (|| -> std::io::Result<()> {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(&beside)?;
        std::fs::write(&sentinel_path, sentinel.source())?;
        std::fs::create_dir(dir)?;
        std::fs::write(&entry_path, ENTRY_SOURCE)?;
        std::fs::write(dir.join("check.json"), check.to_string())?;
        // Under a root harness the check runs as another user: it reads, never writes.
        for (path, mode) in [
            (dir.join("check.json"), 0o644),
            (entry_path.clone(), 0o644),
            (dir.to_path_buf(), 0o755),
        ] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode))?;
        }
        Ok(())
    })();
    written.io_context(|| format!("cannot lay out the entry point in '{}'", dir.display()))?;
    Ok(Ok(Laid {
        command,
        dir: dir.to_path_buf(),
        entry: EntryCheck {
            token,
            module: sentinel.module,
            test: sentinel.test,
        },
    }))
}

/// Where the sentinel lies in `tree`, and its package's dotted name: beside the
/// pristine tests (`tests/`) when that is a directory or nothing, else at the top.
fn sentinel_dir(tree: &Path) -> (PathBuf, &'static str) {
    let tests = tree.join(ORACLE_TESTS_AT);
    match std::fs::symlink_metadata(&tests) {
        Ok(meta) if meta.is_dir() => (tests, ORACLE_TESTS_AT),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (tests, ORACLE_TESTS_AT),
        _ => (tree.to_path_buf(), ""),
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A sentinel test: a module of one test that must fail with its own message.
struct Sentinel {
    module: String,
    class: String,
    test: String,
    marker: String,
    /// Which failing statement, and whether a plain pytest function holds it.
    form: usize,
    numbers: (u32, u32, u32),
}

/// The failing statements a sentinel's test may hold (`{a}`, `{b}`, `{c}` distinct
/// numbers, `{m}` its marker).
const FORMS: &[&str] = &[
    "self.assertEqual({a}, {b}, \"{m}\")",
    "self.assertTrue({a} == {b}, \"{m}\")",
    "self.assertIn({a}, ({b}, {c}), \"{m}\")",
    "assert {a} == {b}, \"{m}\"",
    "self.fail(\"{m}\")",
];

impl Sentinel {
    /// Draws a sentinel whose module `runner`'s own discovery would not take (so that
    /// it runs once, where the entry point puts it) and that `dir` does not hold.
    fn draw(rng: &mut ChaCha8Rng, runner: &RunnerCheck, dir: &Path) -> Sentinel {
        let patterns: Vec<globset::GlobMatcher> = runner
            .collected
            .iter()
            .flatten()
            .filter_map(|c| match c {
                Collected::Under(d) if !d.pattern.is_empty() => globset::Glob::new(&d.pattern)
                    .ok()
                    .map(|g| g.compile_matcher()),
                _ => None,
            })
            .collect();
        // Two words, with an underscore between them or without; a name a discovery
        // would take anyway (after many draws) still runs once: the entry point drops
        // the discovered copy.
        let mut tries = 0u32;
        let module = loop {
            tries += 1;
            let joint = if tries.is_multiple_of(2) { "" } else { "_" };
            let name = format!("{}{joint}{}", word(rng, 3, 6), word(rng, 4, 9));
            let file = format!("{name}.py");
            let discovered = name.starts_with("test")
                || name.ends_with("test")
                || patterns.iter().any(|p| p.is_match(&file));
            if (!discovered || tries > 64) && !dir.join(&file).exists() {
                break name;
            }
        };
        let mut class = word(rng, 5, 10);
        class[..1].make_ascii_uppercase();
        let a = rng.random_range(1000..50_000);
        // Plain functions are pytest's own tests; unittest runs only TestCase classes.
        let forms = FORMS.len() + usize::from(runner.unittest == 0);
        Sentinel {
            module,
            class,
            test: format!("test_{}", word(rng, 4, 10)),
            marker: word(rng, 10, 14),
            form: rng.random_range(0..forms),
            numbers: (a, a + rng.random_range(1..40_000), a + 50_000),
        }
    }

    /// The module's text.
    fn source(&self) -> String {
        let (a, b, c) = self.numbers;
        let statement = |form: &str| {
            form.replace("{a}", &a.to_string())
                .replace("{b}", &b.to_string())
                .replace("{c}", &c.to_string())
                .replace("{m}", &self.marker)
        };
        match FORMS.get(self.form) {
            Some(form) => format!(
                "import unittest\n\n\nclass {}(unittest.TestCase):\n    def {}(self):\n        {}\n",
                self.class,
                self.test,
                statement(form)
            ),
            None => format!(
                "def {}():\n    {}\n",
                self.test,
                statement("assert {a} == {b}, \"{m}\"")
            ),
        }
    }
}

/// Lowercase letters, between `min` and `max` of them.
fn word(rng: &mut ChaCha8Rng, min: usize, max: usize) -> String {
    let len = rng.random_range(min..=max);
    (0..len)
        .map(|_| char::from(b'a' + rng.random_range(0..26u8)))
        .collect()
}

impl EntryCheck {
    /// The check of a run whose entry point was given `token` (for tests of the judge).
    #[cfg(test)]
    pub(super) fn with_token(token: &str) -> EntryCheck {
        EntryCheck {
            token: token.into(),
            module: "abc_defg".into(),
            test: "test_x".into(),
        }
    }

    /// `output` (a run's stdout or stderr) without what the harness's own part of the
    /// run printed: the entry point's report lines and the runner's account of the
    /// sentinel's failure (unittest's `FAIL: test_x (...)` block, pytest's section and
    /// short summary line), so that the end of the output kept for a failing check
    /// shows the tests' own failures.
    pub fn without_own_output(&self, output: &str) -> String {
        let lines: Vec<&str> = output.split_inclusive('\n').collect();
        let bare = |i: usize| lines.get(i).map_or("", |l| l.trim_end());
        let rule = |line: &str, c: char| line.len() >= 10 && line.chars().all(|x| x == c);
        let unittest_header = |line: &str| {
            ["FAIL: ", "ERROR: "].iter().any(|kind| {
                line.strip_prefix(kind)
                    .and_then(|rest| rest.strip_prefix(self.test.as_str()))
                    .is_some_and(|rest| rest.starts_with(" (") && rest.contains(&self.module))
            })
        };
        let pytest_header = |line: &str| {
            line.starts_with("___")
                && line.ends_with("___")
                && (line.contains(&format!(" {} ", self.test))
                    || line.contains(&format!(".{} ", self.test)))
        };
        let mut out = String::with_capacity(output.len());
        let mut i = 0;
        while i < lines.len() {
            let line = bare(i);
            if line.starts_with(REPORT_PREFIX)
                || (line.starts_with("FAILED ") && line.contains(&format!("{}.py::", self.module)))
            {
                i += 1;
                continue;
            }
            if rule(line, '=') && unittest_header(bare(i + 1)) {
                // To the next block's rule, or the rule above "Ran N tests".
                i += 3;
                while i < lines.len()
                    && !rule(bare(i), '=')
                    && !(rule(bare(i), '-') && bare(i + 1).starts_with("Ran "))
                {
                    i += 1;
                }
                continue;
            }
            if pytest_header(line) {
                i += 1;
                // To the next test's section, or the short summary's rule.
                while i < lines.len()
                    && !(bare(i).starts_with("___") && bare(i).ends_with("___"))
                    && !bare(i).starts_with("===")
                {
                    i += 1;
                }
                continue;
            }
            out.push_str(lines[i]);
            i += 1;
        }
        out
    }

    /// What the reports of this run's entry point say in `stderr` (the end of it).
    pub fn findings(&self, stderr: &[u8]) -> Findings {
        let text = String::from_utf8_lossy(stderr);
        let mut found = Findings::default();
        let own = format!("{REPORT_PREFIX}{} ", self.token);
        for line in text.lines() {
            let Some(rest) = line.strip_prefix(&own) else {
                continue;
            };
            found.reports = found.reports.saturating_add(1);
            let field = |key: &str| {
                rest.split(' ')
                    .find_map(|w| w.strip_prefix(key))
                    .unwrap_or("")
                    .to_string()
            };
            // `changed=` is the last field and may hold spaces.
            let changed = rest.split_once(" changed=").map_or("", |(_, c)| c).trim();
            if !changed.is_empty() && changed != "-" {
                found.tampered.push(format!("{RUNNER_CHANGED} ({changed})"));
            }
            // A run whose own tests failed may stop before the sentinel (`-x`,
            // `--failfast`) and fails anyway: its sentinel tells nothing.
            let tests_ok = field("tests=") == "ok";
            let sentinel = match field("sentinel=").as_str() {
                _ if !tests_ok => None,
                "failed" => None,
                "missing" => Some("did not run"),
                "errored" => Some("ended in an error, not in its own failure"),
                "skipped" => Some("was skipped"),
                "expected-failure" => Some("was counted as an expected failure"),
                _ => Some("did not fail: the runner recorded no failure of it"),
            };
            if let Some(why) = sentinel {
                found
                    .tampered
                    .push(format!("the sentinel test, which must fail, {why}"));
            }
            found.tests_failed |= !tests_ok;
        }
        found.tampered.dedup();
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_reports_of_the_runs_own_entry_point_count_and_each_problem_is_named() {
        let check = EntryCheck::with_token("abc");
        let stderr = b"Ran 3 tests\n\nFAILED (failures=1)\n\
            loopbench-entry abc sentinel=failed tests=ok changed=-\n\
            loopbench-entry xyz sentinel=not-failed tests=ok changed=a.b\n\
            loopbench-entry abc sentinel=not-failed tests=ok changed=unittest.case.TestCase.assertEqual,hook pytest_runtest_makereport\n";
        let found = check.findings(stderr);
        assert_eq!(found.reports, 2);
        assert!(!found.tests_failed);
        assert_eq!(
            found.tampered,
            [
                "the runner's machinery changed during the run (unittest.case.TestCase.assertEqual,hook pytest_runtest_makereport)",
                "the sentinel test, which must fail, did not fail: the runner recorded no failure of it",
            ]
        );
        // A run whose tests failed may have stopped before its sentinel (`-x`): only a
        // change of the runner counts then.
        let stopped =
            check.findings(b"loopbench-entry abc sentinel=missing tests=failed changed=-\n");
        assert!(
            stopped.tests_failed && stopped.tampered.is_empty(),
            "{stopped:?}"
        );
        let clean = check.findings(b"loopbench-entry abc sentinel=failed tests=ok changed=-\n");
        assert_eq!(
            clean,
            Findings {
                reports: 1,
                tampered: Vec::new(),
                tests_failed: false
            }
        );
    }

    #[test]
    fn a_sentinel_is_drawn_anew_for_each_check_and_no_discovery_takes_it() {
        let glob = globset::Glob::new("tests/**/*.py")
            .unwrap()
            .compile_matcher();
        let runner = RunnerCheck::of(
            "python3 -m unittest discover -s tests -p '*_*.py'",
            None,
            &glob,
        );
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("tree");
        std::fs::create_dir_all(tree.join("tests")).unwrap();
        let mut seen = std::collections::BTreeSet::new();
        for i in 0..5 {
            let dir = tmp.path().join(format!("entry{i}"));
            let laid = lay_out(
                &dir,
                &tree,
                "python3 -m unittest discover -s tests -p '*_*.py'",
                &runner,
            )
            .unwrap()
            .unwrap();
            assert!(
                laid.command
                    .contains(&format!("{}' unittest discover", ENTRY_FILE))
            );
            let check: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("check.json")).unwrap())
                    .unwrap();
            let path = PathBuf::from(check["sentinel"]["path"].as_str().unwrap());
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            assert!(path.starts_with(tree.join("tests")), "{path:?}");
            // The command's own pattern (`*_*.py`) would take every name drawn with an
            // underscore: none is.
            assert!(!name.contains('_'), "{name}");
            seen.insert(name);
            let text = std::fs::read_to_string(&path).unwrap();
            assert!(
                text.contains(check["sentinel"]["marker"].as_str().unwrap()),
                "{text}"
            );
            assert!(text.contains("unittest.TestCase"), "{text}");
        }
        assert_eq!(seen.len(), 5, "{seen:?}");
    }

    #[test]
    fn the_sentinels_own_output_is_left_out_and_the_tests_output_kept() {
        let check = EntryCheck::with_token("abc");
        let unittest = "E.F\n\
======================================================================\n\
ERROR: test_a (tests.test_a.A.test_a)\n\
----------------------------------------------------------------------\n\
ModuleNotFoundError: No module named 'units.length'\n\
\n\
======================================================================\n\
FAIL: test_x (tests.abc_defg.Q.test_x)\n\
----------------------------------------------------------------------\n\
Traceback (most recent call last):\n\
AssertionError: 1 != 2 : marker\n\
\n\
----------------------------------------------------------------------\n\
Ran 3 tests in 0.001s\n\
\n\
FAILED (failures=1, errors=1)\n\
loopbench-entry abc sentinel=failed tests=failed changed=-\n";
        let kept = check.without_own_output(unittest);
        assert!(
            kept.contains("ModuleNotFoundError: No module named 'units.length'\n\n---"),
            "{kept}"
        );
        assert!(
            !kept.contains("marker") && !kept.contains("loopbench-entry"),
            "{kept}"
        );
        assert!(
            kept.ends_with("Ran 3 tests in 0.001s\n\nFAILED (failures=1, errors=1)\n"),
            "{kept}"
        );
        let pytest = "..F.F\n\
=================================== FAILURES ===================================\n\
_________________________________ test_real __________________________________\n\
E   assert 1 == 2\n\
_________________________________ Q.test_x ___________________________________\n\
E   AssertionError: marker\n\
=========================== short test summary info ============================\n\
FAILED tests/test_a.py::test_real - assert 1 == 2\n\
FAILED tests/abc_defg.py::Q::test_x - AssertionError: marker\n\
2 failed, 3 passed in 0.05s\n";
        let kept = check.without_own_output(pytest);
        assert!(kept.contains("E   assert 1 == 2\n==="), "{kept}");
        assert!(kept.contains("FAILED tests/test_a.py::test_real"), "{kept}");
        assert!(!kept.contains("marker"), "{kept}");
        // Nothing else of a run without the sentinel's output changes.
        let plain = "Ran 2 tests in 0.001s\n\nOK\n";
        assert_eq!(check.without_own_output(plain), plain);
    }
}
