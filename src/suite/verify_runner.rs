//! Which test runner a verify command runs and which tests it runs, so that a pass can
//! need the runner's own summary and not only an exit status, which the code under
//! test can forge (`os._exit(0)` at import, a top-level `unittest/` package that
//! shadows the runner).
//!
//! A command runs a known runner when one of its simple commands (the script of `sh -c`
//! included) is `python… -m unittest …`, `python… -m pytest …` or `pytest …`, behind
//! any variable assignments, wrappers and interpreter options (`runner_command`). The
//! tests it runs are known when every run names test files the way `named_tests` reads
//! them (a dotted module under `tests`, or a file under `tests/`), or leaves them to
//! the runner's own discovery under a directory (`unittest discover -s DIR -p PAT`, no
//! test argument at all, `pytest DIR`), whose files are then counted by the runner's
//! rules on the tree the check sees. They are unknown, and a pass then needs only a
//! summary in which every test passed and at least one ran, when an option selects
//! among the tests (`-k`, pytest's `-m`, `--deselect`, `--lf`, `--ignore`, ...), a node
//! id with `::` or a dotted name that goes on into a class or method (found when the
//! check runs), a `cd` anywhere in the command, or any argument the harness cannot read
//! as a test file or a directory.

use globset::GlobMatcher;

use super::named_tests::{NamedTest, named_test};
use super::runner_command::{
    VerifyRunner, expanded_commands, relative_dir, runner_of, unrecognized_runs,
};

/// Tests one run of a runner collects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Collected {
    /// A test file or module the command names.
    Named(NamedTest),
    /// Every test file the runner finds by itself under a directory.
    Under(Discovery),
}

/// The test files a runner finds by itself under a directory of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Discovery {
    /// The runner, whose rules say which files and directories it takes.
    pub runner: VerifyRunner,
    /// The directory, `/`-separated and relative to the work directory (`""` for it).
    pub dir: String,
    /// unittest's file-name pattern (`-p`, `test*.py` unless given); empty for pytest,
    /// whose default `test_*.py` and `*_test.py` are used.
    pub pattern: String,
}

/// unittest's default discovery pattern.
pub const UNITTEST_PATTERN: &str = "test*.py";

/// What a pass of one verify command needs besides exit status 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerCheck {
    /// Runs of unittest the command makes: at least this many unittest summaries are
    /// needed.
    pub unittest: u32,
    /// Runs of pytest the command makes: at least this many pytest summaries.
    pub pytest: u32,
    /// The tests the runs collect, whose matches of the task's `count_pattern` must
    /// add up to the tests that passed; `None` when the harness cannot tell which
    /// tests the command runs (then the summaries are needed, every test in them passed
    /// and at least one ran, but their number is not checked).
    pub collected: Option<Vec<Collected>>,
}

impl RunnerCheck {
    /// Exit status only.
    pub const EXIT: RunnerCheck = RunnerCheck {
        unittest: 0,
        pytest: 0,
        collected: Some(Vec::new()),
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
        let commands = expanded_commands(command);
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
        let mut collected = (!runs.is_empty() && !changes_directory).then(Vec::new);
        for (runner, args) in &runs {
            let these = match runner {
                VerifyRunner::Unittest => unittest_collects(args, glob),
                _ => pytest_collects(args, glob),
            };
            match (collected.as_mut(), these) {
                (Some(all), Some(these)) => all.extend(these),
                _ => collected = None,
            }
        }
        RunnerCheck {
            unittest,
            pytest,
            collected,
        }
    }
}

/// Why a pass of `command` will be judged by its exit status alone although it seems
/// to run a test runner: the parts of it that mention `unittest` or `pytest` in which
/// no run of a known runner is recognized, when `setting` (the feature's or the
/// task's `verify_runner`) does not name one. Or, when `setting` names a runner that
/// the command is not seen to start, why no check of it can pass: the harness starts
/// the runner through its entry point, which it cannot put in front of a script.
/// `None` when nothing is amiss.
pub fn unrecognized_runner(command: &str, setting: Option<VerifyRunner>) -> Option<String> {
    if let Some(runner @ (VerifyRunner::Unittest | VerifyRunner::Pytest)) = setting {
        let started = expanded_commands(command)
            .iter()
            .any(|words| runner_of(words).is_some_and(|(r, _)| r == runner));
        return (!started).then(|| {
            format!(
                "'{command}' is not seen to start {runner} (verify_runner = \"{runner}\"), so \
                 loopbench cannot start it through its entry point and no check of it can \
                 pass; start the runner in the command (`python3 -m {runner} ...`) or set \
                 verify_runner = \"exit\" (a pass is then its exit status alone, which the \
                 code under test can forge)"
            )
        });
    }
    if setting.is_some() {
        return None;
    }
    let missed = unrecognized_runs(command);
    (!missed.is_empty()).then(|| {
        format!(
            "'{}' mentions a test runner that loopbench does not recognize, so a pass is \
             judged by its exit status alone (which the code under test can forge); set \
             verify_runner = \"unittest\" or \"pytest\" (or \"exit\" to keep it so)",
            missed.join("', '")
        )
    })
}

/// unittest's options whose value is the next word (and that select no test).
const UNITTEST_VALUED: &[&str] = &["--durations"];

/// The tests one run of unittest collects (its arguments `args`), `None` when they
/// cannot be told.
fn unittest_collects(args: &[(String, bool)], glob: &GlobMatcher) -> Option<Vec<Collected>> {
    if args.first().is_some_and(|(w, _)| w == "discover") {
        return unittest_discover(&args[1..]).map(|d| vec![Collected::Under(d)]);
    }
    let mut named = Vec::new();
    let mut words = args.iter();
    while let Some((word, quoted)) = words.next() {
        if word.starts_with('-') {
            let option = word.split('=').next().unwrap_or(word);
            if option == "-k" || (option.starts_with("-k") && !option.starts_with("--")) {
                return None;
            }
            if UNITTEST_VALUED.contains(&word.as_str()) {
                words.next();
            }
            continue;
        }
        named.push(Collected::Named(named_test(word.clone(), *quoted, glob)?));
    }
    if named.is_empty() {
        // No test named: unittest discovers from its directory with its defaults.
        named.push(Collected::Under(Discovery {
            runner: VerifyRunner::Unittest,
            dir: String::new(),
            pattern: UNITTEST_PATTERN.into(),
        }));
    }
    Some(named)
}

/// `unittest discover`'s arguments: `-s`/`--start-directory`, `-p`/`--pattern`,
/// `-t`/`--top-level-directory` (or the same three as positional words).
fn unittest_discover(args: &[(String, bool)]) -> Option<Discovery> {
    let mut start = None;
    let mut pattern = None;
    let mut top = None;
    let mut positional = Vec::new();
    let mut words = args.iter();
    while let Some((word, _)) = words.next() {
        let (option, attached) = match word.split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v.to_string())),
            _ => (word.as_str(), None),
        };
        let slot = match option {
            "-s" | "--start-directory" => &mut start,
            "-p" | "--pattern" => &mut pattern,
            "-t" | "--top-level-directory" => &mut top,
            o if o.starts_with("-k") && !o.starts_with("--") => return None,
            o if o.starts_with("--durations") => {
                if attached.is_none() {
                    words.next();
                }
                continue;
            }
            o if o.len() > 2 && !o.starts_with("--") && "-s-p-t".contains(&o[..2]) => {
                // `-stests`: the value attached to a one-letter option.
                let value = Some(o[2..].to_string());
                match &o[..2] {
                    "-s" => start = value,
                    "-p" => pattern = value,
                    _ => top = value,
                }
                continue;
            }
            o if o.starts_with('-') => continue,
            _ => {
                positional.push(word.clone());
                continue;
            }
        };
        *slot = match attached {
            Some(v) => Some(v),
            None => Some(words.next()?.0.clone()),
        };
    }
    let mut positional = positional.into_iter();
    let start = start
        .or_else(|| positional.next())
        .unwrap_or_else(|| ".".into());
    let pattern = pattern
        .or_else(|| positional.next())
        .unwrap_or_else(|| UNITTEST_PATTERN.into());
    if let Some(top) = top.or_else(|| positional.next()) {
        relative_dir(&top)?;
    }
    Some(Discovery {
        runner: VerifyRunner::Unittest,
        dir: relative_dir(&start)?,
        pattern,
    })
}

/// pytest's options that choose some of the tests it would collect, so that their
/// number is not the files': with one, the count is unknown.
const PYTEST_SELECTING: &[&str] = &[
    "-k",
    "-m",
    "--deselect",
    "--lf",
    "--last-failed",
    "--sw",
    "--stepwise",
    "--pyargs",
    "--ignore",
    "--ignore-glob",
    "--doctest-modules",
    "--doctest-glob",
    "--trace-config",
];

/// pytest's options that change its configuration (and so, for a directory, which
/// files it collects).
const PYTEST_CONFIGURING: &[&str] = &[
    "-c",
    "--config-file",
    "-o",
    "--override-ini",
    "--rootdir",
    "--confcutdir",
];

/// pytest's (and its common plugins') options whose value is the next word.
const PYTEST_VALUED: &[&str] = &[
    "-c",
    "--config-file",
    "-o",
    "--override-ini",
    "-W",
    "--pythonwarnings",
    "-k",
    "-m",
    "-p",
    "-n",
    "--numprocesses",
    "-r",
    "--tb",
    "--rootdir",
    "--basetemp",
    "--durations",
    "--durations-min",
    "--confcutdir",
    "--deselect",
    "--ignore",
    "--ignore-glob",
    "--maxfail",
    "--import-mode",
    "--capture",
    "--color",
    "--code-highlight",
    "--verbosity",
    "--show-capture",
    "--junitxml",
    "--junit-xml",
    "--junit-prefix",
    "--doctest-glob",
    "--doctest-report",
    "--log-level",
    "--log-file",
    "--log-format",
    "--log-date-format",
    "--log-cli-level",
    "--log-file-level",
    "--log-file-format",
    "--log-file-date-format",
    "--log-auto-indent",
    "--cov",
    "--cov-report",
    "--cov-config",
    "--cov-fail-under",
    "--timeout",
    "--dist",
    "--tx",
    "--max-worker-restart",
    "--reruns",
    "--reruns-delay",
    "--count",
    "--randomly-seed",
];

/// The tests one run of pytest collects (its arguments `args`), `None` when they
/// cannot be told.
fn pytest_collects(args: &[(String, bool)], glob: &GlobMatcher) -> Option<Vec<Collected>> {
    let mut collected = Vec::new();
    let mut configured = false;
    let mut words = args.iter();
    while let Some((word, quoted)) = words.next() {
        if word.starts_with('-') && word != "-" {
            let option = word.split('=').next().unwrap_or(word);
            let one_letter = |letter: &str| option.starts_with(letter) && !option.starts_with("--");
            if PYTEST_SELECTING.contains(&option) || one_letter("-k") || one_letter("-m") {
                return None;
            }
            configured |=
                PYTEST_CONFIGURING.contains(&option) || one_letter("-c") || one_letter("-o");
            if PYTEST_VALUED.contains(&word.as_str()) {
                words.next();
            }
            continue;
        }
        if word.contains("::") {
            return None;
        }
        if let Some(test) = named_test(word.clone(), *quoted, glob) {
            collected.push(Collected::Named(test));
            continue;
        }
        // A directory (or a file the glob does not take, found so when counted).
        if *quoted || word.ends_with(".py") {
            return None;
        }
        collected.push(Collected::Under(Discovery {
            runner: VerifyRunner::Pytest,
            dir: relative_dir(word)?,
            pattern: String::new(),
        }));
    }
    if collected.is_empty() {
        // No argument: pytest collects from its directory.
        collected.push(Collected::Under(Discovery {
            runner: VerifyRunner::Pytest,
            dir: String::new(),
            pattern: String::new(),
        }));
    }
    let discovers = collected.iter().any(|c| matches!(c, Collected::Under(_)));
    (!(configured && discovers)).then_some(collected)
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

    /// What each run collects: the word of a named test, or `dir/pattern` of a
    /// discovery (`runner:dir` for pytest).
    fn words(check: &RunnerCheck) -> Option<Vec<String>> {
        check.collected.as_ref().map(|n| {
            n.iter()
                .map(|c| match c {
                    Collected::Named(t) => t.word.clone(),
                    Collected::Under(d) if d.runner == VerifyRunner::Unittest => {
                        format!("{}/{}", d.dir, d.pattern)
                    }
                    Collected::Under(d) => format!("pytest:{}", d.dir),
                })
                .collect()
        })
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
        let c = check("python3 -W error -X dev -m unittest tests.test_a");
        assert_eq!(words(&c), Some(vec!["tests.test_a".to_string()]));
        let c = check("pytest -n 4 -p no:cacheprovider -r a tests/test_a.py");
        assert_eq!(words(&c), Some(vec!["tests/test_a.py".to_string()]));
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
        for command in [
            "env -i timeout 60 python3 -m unittest tests.test_a",
            "timeout -s KILL 60 python3 -m unittest tests.test_a",
            "bash -c 'python3 -m unittest tests.test_a'",
            "coverage run -m unittest tests.test_a",
            "uv run python3 -m unittest tests.test_a",
        ] {
            let c = check(command);
            assert_eq!(c.unittest, 1, "{command}");
            assert_eq!(
                words(&c),
                Some(vec!["tests.test_a".to_string()]),
                "{command}"
            );
        }
    }

    #[test]
    fn discovery_and_directories_collect_by_the_runners_rules() {
        for (command, want) in [
            ("python3 -m unittest", "/test*.py"),
            ("python3 -m unittest -v", "/test*.py"),
            ("python3 -m unittest discover", "/test*.py"),
            ("python3 -m unittest discover -s tests", "tests/test*.py"),
            (
                "python3 -m unittest discover -s ./tests/ -p '*_test.py'",
                "tests/*_test.py",
            ),
            (
                "python3 -m unittest discover --start-directory=tests -t .",
                "tests/test*.py",
            ),
            (
                "python3 -m unittest discover tests 'check_*.py' .",
                "tests/check_*.py",
            ),
            (
                "python3 -m unittest discover -stests -pt*.py",
                "tests/t*.py",
            ),
            ("pytest", "pytest:"),
            ("pytest tests/", "pytest:tests"),
            ("uv run pytest -q -n 4 tests", "pytest:tests"),
        ] {
            let c = check(command);
            assert_eq!(words(&c), Some(vec![want.to_string()]), "{command}");
        }
    }

    #[test]
    fn the_tests_are_unknown_when_the_command_selects_or_moves() {
        for command in [
            "python3 -m unittest -k late tests.test_late_fee",
            "python3 -m unittest discover -s tests -k late",
            "python3 -m unittest discover -s /abs/tests",
            "python3 -m pytest tests/test_a.py::test_one",
            "pytest -m slow tests/test_a.py",
            "pytest -k 'late and fee' tests/",
            "pytest --ignore tests/x tests/",
            "pytest -c other.ini tests/",
            "pytest src/test_app.py",
            "python3 -m unittest ledger.tests.test_a",
            "cd tests && python3 -m unittest test_a",
        ] {
            let c = check(command);
            assert!(!c.exit_only(), "{command}");
            assert_eq!(c.collected, None, "{command}");
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
        assert_eq!((c.unittest, c.pytest, c.collected), (1, 0, None));
    }

    #[test]
    fn a_runner_that_is_mentioned_but_not_recognized_is_warned_about_unless_named() {
        let why = unrecognized_runner("python3 -c 'import unittest; unittest.main()'", None);
        assert!(why.unwrap().contains("verify_runner"));
        assert!(unrecognized_runner("./check.sh --pytest", Some(VerifyRunner::Exit)).is_none());
        assert!(unrecognized_runner("timeout 9 python3 -W error -m unittest", None).is_none());
        assert!(unrecognized_runner("sh tests/a.sh", None).is_none());
        // A runner named but started where the entry point cannot go fails every check.
        let why = unrecognized_runner("./run_tests.sh", Some(VerifyRunner::Unittest)).unwrap();
        assert!(
            why.contains("cannot start it through its entry point"),
            "{why}"
        );
        assert!(unrecognized_runner("bash -c 'pytest -q'", Some(VerifyRunner::Pytest)).is_none());
    }
}
