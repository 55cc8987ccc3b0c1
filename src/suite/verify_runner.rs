//! Which test runner a verify command runs and which test files it names, so that a
//! pass can need the runner's own summary and not only an exit status, which the code
//! under test can forge (`os._exit(0)` at import, a top-level `unittest/` package that
//! shadows the runner).
//!
//! A command runs a known runner when one of its simple commands is `python… -m
//! unittest …`, `python… -m pytest …` or `pytest …` (the program's file name is looked
//! at, so `/usr/bin/python3.12` counts too). The tests it runs are known when every
//! argument of every such run names a test file the way `named_tests` reads it (a
//! dotted module under `tests`, or a file under `tests/`) and no option selects among
//! the tests (`-k`, pytest's `-m`, `--deselect`, `--lf`, ...); a node id with `::` or a
//! dotted name that goes on into a class or method (found when the check runs) makes
//! them unknown, and so do `discover`, no argument at all, a `cd` anywhere in the
//! command and any argument the harness cannot read as a test file.

use globset::GlobMatcher;

use super::named_tests::{NamedTest, named_test, simple_commands};
use super::setting::setting;

setting! {
    /// `verify_runner` of a task or a feature: whose summary a pass of the verify
    /// command needs besides exit status 0.
    pub enum VerifyRunner ("verify_runner") {
        /// `python3 -m unittest`: the "Ran N tests" line and then "OK" on stderr.
        Unittest = "unittest",
        /// pytest: its summary line ("N passed in 0.1s") on stdout.
        Pytest = "pytest",
        /// The exit status alone.
        Exit = "exit",
    }
}

/// What a pass of one verify command needs besides exit status 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerCheck {
    /// Runs of unittest the command makes: at least this many unittest summaries are
    /// needed.
    pub unittest: u32,
    /// Runs of pytest the command makes: at least this many pytest summaries.
    pub pytest: u32,
    /// The test files the runs name, whose matches of the task's `count_pattern` must
    /// add up to the tests that passed; `None` when the harness cannot tell which
    /// tests the command runs (then the summaries are needed, every test in them passed
    /// and at least one ran, but their number is not checked).
    pub named: Option<Vec<NamedTest>>,
}

impl RunnerCheck {
    /// Exit status only.
    pub const EXIT: RunnerCheck = RunnerCheck {
        unittest: 0,
        pytest: 0,
        named: Some(Vec::new()),
    };

    /// Whether a pass needs no runner's summary.
    pub fn exit_only(&self) -> bool {
        self.unittest == 0 && self.pytest == 0
    }

    /// The check of `command` under `setting` (the feature's `verify_runner`, else the
    /// task's; `None`: every run of a known runner the command makes). A setting
    /// naming a runner the command is not seen to run still needs one summary of it
    /// (the command may run it through a script).
    pub fn of(command: &str, setting: Option<VerifyRunner>, glob: &GlobMatcher) -> RunnerCheck {
        let commands = simple_commands(command);
        let runs: Vec<(VerifyRunner, &[(String, bool)])> = commands
            .iter()
            .filter_map(|c| runner_of(c))
            .filter(|(r, _)| setting.is_none_or(|chosen| chosen == *r))
            .collect();
        let count = |runner| {
            u32::try_from(runs.iter().filter(|(r, _)| *r == runner).count()).unwrap_or(u32::MAX)
        };
        let (mut unittest, mut pytest) =
            (count(VerifyRunner::Unittest), count(VerifyRunner::Pytest));
        match setting {
            Some(VerifyRunner::Exit) => return RunnerCheck::EXIT,
            Some(VerifyRunner::Unittest) => unittest = unittest.max(1),
            Some(VerifyRunner::Pytest) => pytest = pytest.max(1),
            None if runs.is_empty() => return RunnerCheck::EXIT,
            None => {}
        }
        let changes_directory = commands
            .iter()
            .flatten()
            .any(|(w, quoted)| !quoted && (w == "cd" || w == "pushd"));
        let mut named = (!runs.is_empty() && !changes_directory).then(Vec::new);
        for (runner, args) in &runs {
            match (named.as_mut(), named_by(*runner, args, glob)) {
                (Some(all), Some(these)) => all.extend(these),
                _ => named = None,
            }
        }
        RunnerCheck {
            unittest,
            pytest,
            named,
        }
    }
}

/// Words that run the command after them (with their own options first).
const WRAPPERS: &[&str] = &["env", "exec", "command", "nice", "nohup", "timeout"];

/// The runner one simple command runs and its arguments, if it runs one: its program
/// (after variable assignments and wrappers such as `env` or `timeout 60`) is pytest,
/// or a Python interpreter given `-m unittest` or `-m pytest`.
fn runner_of(words: &[(String, bool)]) -> Option<(VerifyRunner, &[(String, bool)])> {
    let base = |w: &str| w.rsplit('/').next().unwrap_or(w).to_string();
    let mut i = 0;
    while let Some((word, _)) = words.get(i) {
        let assignment = word
            .split_once('=')
            .is_some_and(|(name, _)| !name.is_empty() && !name.contains('/'));
        if assignment || word.starts_with('-') {
            i += 1;
        } else if WRAPPERS.contains(&base(word).as_str()) {
            // `timeout` takes its duration first.
            i += if base(word) == "timeout" { 2 } else { 1 };
        } else {
            break;
        }
    }
    let (word, quoted) = words.get(i)?;
    if *quoted {
        return None;
    }
    let name = base(word);
    if name == "pytest" || name == "py.test" {
        return Some((VerifyRunner::Pytest, &words[i + 1..]));
    }
    let python = name
        .strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'));
    if !python {
        return None;
    }
    // The interpreter's own options come before `-m`.
    let mut j = i + 1;
    while words
        .get(j)
        .is_some_and(|(w, _)| w.starts_with('-') && w != "-m" && w != "-c")
    {
        j += 1;
    }
    if words.get(j).is_some_and(|(w, _)| w == "-m") {
        match words.get(j + 1).map(|(w, _)| w.as_str()) {
            Some("unittest") => return Some((VerifyRunner::Unittest, &words[j + 2..])),
            Some("pytest") => return Some((VerifyRunner::Pytest, &words[j + 2..])),
            _ => {}
        }
    }
    None
}

/// Options that choose some of the tests, so that their number is not the files'.
const SELECTING: &[&str] = &[
    "-k",
    "-m",
    "--deselect",
    "--lf",
    "--last-failed",
    "--ff",
    "--failed-first",
    "--sw",
    "--stepwise",
    "--pyargs",
    "-p",
];

/// Options whose value is the next word (and names no test).
const TAKES_VALUE: &[&str] = &[
    "-c",
    "-o",
    "-W",
    "--tb",
    "--rootdir",
    "--basetemp",
    "--durations",
    "--confcutdir",
];

/// The test files one run names, `None` when it is not certain which tests it runs.
fn named_by(
    runner: VerifyRunner,
    args: &[(String, bool)],
    glob: &GlobMatcher,
) -> Option<Vec<NamedTest>> {
    let mut named = Vec::new();
    let mut args = args.iter();
    while let Some((word, quoted)) = args.next() {
        if word.starts_with('-') {
            let option = word.split('=').next().unwrap_or(word);
            let selects = SELECTING.contains(&option)
                || (option.starts_with("-k") && !option.starts_with("--"))
                || (runner == VerifyRunner::Pytest && option.starts_with("-m"));
            if selects {
                return None;
            }
            if TAKES_VALUE.contains(&word.as_str()) {
                args.next();
            }
            continue;
        }
        if word.contains("::") || word == "discover" {
            return None;
        }
        named.push(named_test(word.clone(), *quoted, glob)?);
    }
    (!named.is_empty()).then_some(named)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob() -> GlobMatcher {
        globset::GlobBuilder::new("tests/**/*.py")
            .literal_separator(true)
            .build()
            .unwrap()
            .compile_matcher()
    }

    fn check(command: &str) -> RunnerCheck {
        RunnerCheck::of(command, None, &glob())
    }

    fn words(check: &RunnerCheck) -> Option<Vec<String>> {
        check
            .named
            .as_ref()
            .map(|n| n.iter().map(|t| t.word.clone()).collect())
    }

    #[test]
    fn unittest_and_pytest_runs_are_found_with_the_files_they_name() {
        let c = check("python3 -m unittest -q tests.test_late_fee");
        assert_eq!((c.unittest, c.pytest), (1, 0));
        assert_eq!(words(&c), Some(vec!["tests.test_late_fee".to_string()]));
        let c =
            check("PYTHONPATH=src /usr/bin/python3.12 -B -m pytest -q tests/test_a.py --tb short");
        assert_eq!((c.unittest, c.pytest), (0, 1));
        assert_eq!(words(&c), Some(vec!["tests/test_a.py".to_string()]));
        let c = check("pytest tests/test_a.py && pytest -q tests/test_b.py");
        assert_eq!((c.unittest, c.pytest), (0, 2));
        assert_eq!(words(&c).unwrap().len(), 2);
        let c = check("python3 -m unittest tests.test_a && python3 -m pytest tests/test_b.py");
        assert_eq!((c.unittest, c.pytest), (1, 1));
        assert_eq!(words(&c).unwrap().len(), 2);
    }

    #[test]
    fn a_command_without_a_known_runner_is_judged_by_its_exit_status() {
        for command in [
            "sh tests/test_fee.sh",
            "true",
            "python3 tests/run.py",
            "echo pytest",
            "python3 -c 'import unittest'",
        ] {
            assert_eq!(check(command), RunnerCheck::EXIT, "{command}");
        }
        let c = check("env -i timeout 60 python3 -m unittest tests.test_a");
        assert_eq!(c.unittest, 1);
    }

    #[test]
    fn the_tests_are_unknown_when_the_command_selects_discovers_or_moves() {
        for command in [
            "python3 -m unittest",
            "python3 -m unittest discover -s tests",
            "python3 -m unittest -k late tests.test_late_fee",
            "python3 -m pytest tests/test_a.py::test_one",
            "pytest -m slow tests/test_a.py",
            "pytest tests/",
            "python3 -m unittest ledger.tests.test_a",
            "cd tests && python3 -m unittest test_a",
        ] {
            let c = check(command);
            assert!(!c.exit_only(), "{command}");
            assert_eq!(c.named, None, "{command}");
        }
    }

    #[test]
    fn the_setting_chooses_the_runner_whose_summary_is_needed() {
        let both = "python3 -m unittest tests.test_a && pytest tests/test_b.py";
        let c = RunnerCheck::of(both, Some(VerifyRunner::Pytest), &glob());
        assert_eq!((c.unittest, c.pytest), (0, 1));
        assert_eq!(words(&c), Some(vec!["tests/test_b.py".to_string()]));
        let c = RunnerCheck::of(both, Some(VerifyRunner::Exit), &glob());
        assert_eq!(c, RunnerCheck::EXIT);
        let c = RunnerCheck::of("./run_tests.sh", Some(VerifyRunner::Unittest), &glob());
        assert_eq!((c.unittest, c.pytest, c.named), (1, 0, None));
    }
}
