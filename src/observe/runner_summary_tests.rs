//! Tests of `runner_summary`: the summaries of unittest and pytest as printed, with
//! and without sentinels, and the tests a command's runs collect.

use super::*;

fn unittest(runs: u32) -> RunnerCheck {
    RunnerCheck {
        unittest: runs,
        pytest: 0,
        collected: None,
    }
}

const OK3: &str = "...\n----------------------------------------------------------------------\nRan 3 tests in 0.001s\n\nOK\n";

#[test]
fn a_unittest_pass_needs_its_summary_with_every_named_test_passed() {
    let c = unittest(1);
    assert_eq!(missing_evidence(&c, Some(3), 0, b"", OK3.as_bytes()), None);
    assert_eq!(missing_evidence(&c, None, 0, b"", OK3.as_bytes()), None);
    let short = missing_evidence(&c, Some(4), 0, b"", OK3.as_bytes())
        .unwrap()
        .why;
    assert!(
        short.contains("reports 3 tests passed where the test files the command runs hold 4"),
        "{short}"
    );
    let none = missing_evidence(&c, Some(3), 0, b"Ran 3 tests in 0.1s\n\nOK\n", b"")
        .unwrap()
        .why;
    assert!(none.contains("0 unittest summaries"), "{none}");
    let failed = "Ran 3 tests in 0.001s\n\nFAILED (failures=1)\n";
    assert!(missing_evidence(&c, Some(3), 0, b"", failed.as_bytes()).is_some());
    let skipped = "Ran 3 tests in 0.001s\n\nOK (skipped=1)\n";
    let why = missing_evidence(&c, Some(3), 0, b"", skipped.as_bytes())
        .unwrap()
        .why;
    assert!(why.contains("1 of 3 tests that ran did not pass"), "{why}");
    let empty = "Ran 0 tests in 0.000s\n\nNO TESTS RAN\n";
    assert!(missing_evidence(&c, None, 0, b"", empty.as_bytes()).is_some());
    let zero = "Ran 0 tests in 0.000s\n\nOK\n";
    assert!(missing_evidence(&c, None, 0, b"", zero.as_bytes()).is_some());
}

#[test]
fn two_runs_need_two_summaries() {
    let both = format!("{OK3}{OK3}");
    assert_eq!(
        missing_evidence(&unittest(2), Some(6), 0, b"", both.as_bytes()),
        None
    );
    assert!(missing_evidence(&unittest(2), None, 0, b"", OK3.as_bytes()).is_some());
    let mixed = RunnerCheck {
        unittest: 1,
        pytest: 1,
        collected: None,
    };
    let pytest_out = b"2 passed in 0.01s\n";
    assert_eq!(
        missing_evidence(&mixed, Some(5), 0, pytest_out, OK3.as_bytes()),
        None
    );
    assert!(missing_evidence(&mixed, Some(5), 0, b"", OK3.as_bytes()).is_some());
}

#[test]
fn counts_too_large_for_a_count_are_held_at_the_largest_and_never_wrap() {
    let huge = "Ran 99999999999999999999999 tests in 0.1s\n\nOK\n";
    let why = missing_evidence(&unittest(1), Some(2), 0, b"", huge.as_bytes())
        .unwrap()
        .why;
    assert!(
        why.contains(&format!("reports {MAX_COUNT} tests passed")),
        "{why}"
    );
    let twice = format!("Ran {} tests in 0.1s\n\nOK\n", u64::MAX).repeat(2);
    let why = missing_evidence(&unittest(2), Some(2), 0, b"", twice.as_bytes())
        .unwrap()
        .why;
    assert!(
        why.contains(&format!("reports {MAX_COUNT} tests passed")),
        "{why}"
    );
    let skipped = "Ran 3 tests in 0.1s\n\nOK (skipped=99999999999999999999999)\n";
    assert!(missing_evidence(&unittest(1), None, 0, b"", skipped.as_bytes()).is_some());
    let pytest = RunnerCheck {
        unittest: 0,
        pytest: 1,
        collected: None,
    };
    let out = format!(
        "{m} passed, {m} passed, {m} skipped in 0.1s\n",
        m = u64::MAX
    );
    assert!(missing_evidence(&pytest, Some(1), 0, out.as_bytes(), b"").is_some());
}

fn tree(files: &[&str]) -> (tempfile::TempDir, TreeSnapshot) {
    let dir = tempfile::tempdir().unwrap();
    for path in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, "def test_a(): pass\ndef test_b(): pass\n").unwrap();
    }
    let snapshot = TreeSnapshot::read(dir.path()).unwrap();
    (dir, snapshot)
}

fn count(command: &str, tree: &TreeSnapshot) -> Option<u64> {
    let glob = globset::GlobBuilder::new("tests/**/*.py")
        .literal_separator(true)
        .build()
        .unwrap()
        .compile_matcher();
    let check = RunnerCheck::of(command, None, &glob);
    expected_tests(&check, tree, &Regex::new(r"(?m)^\s*def test_").unwrap())
}

#[test]
fn discovery_counts_the_files_the_runner_would_take() {
    let (_d, t) = tree(&[
        "tests/__init__.py",
        "tests/test_a.py",
        "tests/unit/__init__.py",
        "tests/unit/test_b.py",
        "tests/plain/test_c.py",
        "tests/helper_test.py",
        "tests/test-d.py",
        "ledger/__init__.py",
        "ledger/test_e.py",
        "notes/test_f.py",
        ".venv/test_g.py",
    ]);
    // unittest enters packages only and takes module names matching its pattern.
    assert_eq!(count("python3 -m unittest discover -s tests", &t), Some(4));
    assert_eq!(
        count("python3 -m unittest discover -s tests -p '*_test.py'", &t),
        Some(2)
    );
    // From the top: tests/ and ledger/ are packages, notes/ is not.
    assert_eq!(count("python3 -m unittest", &t), Some(6));
    // pytest enters every directory but hidden ones and takes test_*.py, *_test.py.
    assert_eq!(count("pytest tests", &t), Some(8));
    assert_eq!(count("pytest", &t), Some(12));
    assert_eq!(count("pytest tests/unit", &t), Some(2));
    assert_eq!(count("pytest tests/missing", &t), None);
    assert_eq!(count("pytest -p xdist -n 2 tests/unit", &t), Some(2));
    // Selected tests cannot be counted.
    assert_eq!(count("pytest -k b tests", &t), None);
}

#[test]
fn pytest_configuration_that_chooses_files_makes_a_directory_uncountable() {
    let (d, _) = tree(&["tests/test_a.py"]);
    std::fs::write(d.path().join("pytest.ini"), "[pytest]\ntestpaths = other\n").unwrap();
    let t = TreeSnapshot::read(d.path()).unwrap();
    assert_eq!(count("pytest tests", &t), None);
    assert_eq!(count("pytest tests/test_a.py", &t), Some(2));
    std::fs::write(
        d.path().join("pytest.ini"),
        "[pytest]\nxfail_strict = true\n",
    )
    .unwrap();
    let t = TreeSnapshot::read(d.path()).unwrap();
    assert_eq!(count("pytest tests", &t), Some(2));
}

#[test]
fn a_pass_always_needs_at_least_one_test() {
    let zero = "Ran 0 tests in 0.000s\n\nOK\n";
    assert!(missing_evidence(&unittest(1), Some(0), 0, b"", zero.as_bytes()).is_some());
}

proptest::proptest! {
    #[test]
    fn the_summary_reader_never_panics_on_what_the_code_under_test_prints(
        lines in proptest::collection::vec(
            proptest::prop_oneof![
                "Ran [0-9]{1,25} tests? in 0\\.[0-9]s",
                "(OK|FAILED|NO TESTS RAN)( \\((skipped|failures|expected failures)=[0-9]{1,25}\\))?",
                "=* ?([0-9]{1,25} (passed|failed|skipped|error|errors|xfailed|warning|deselected), ){0,4}[0-9]{1,25} passed in [0-9.]{1,4}s ?=*",
                ".{0,40}",
            ],
            0..12,
        ),
        unittest in 0u32..3,
        pytest in 0u32..3,
        expected in proptest::option::of(proptest::prelude::any::<u64>()),
    ) {
        let text = lines.join("\n");
        let check = RunnerCheck { unittest, pytest, collected: None };
        let _ = missing_evidence(&check, expected, 0, text.as_bytes(), text.as_bytes());
    }
}

#[test]
fn pytest_summaries_are_read_with_and_without_rules() {
    let c = RunnerCheck {
        unittest: 0,
        pytest: 1,
        collected: None,
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
        let why = missing_evidence(&c, expected, 0, out.as_bytes(), b"");
        assert_eq!(why.is_none(), pass, "{out}: {why:?}");
    }
}

#[test]
fn each_sentinel_is_one_failure_and_one_test_beyond_the_tests_counted() {
    let one = "F..\nRan 3 tests in 0.001s\n\nFAILED (failures=1)\n";
    assert_eq!(
        missing_evidence(&unittest(1), Some(2), 1, b"", one.as_bytes()),
        None
    );
    let why = missing_evidence(&unittest(1), Some(3), 1, b"", one.as_bytes())
        .unwrap()
        .why;
    assert!(
        why.contains("reports 2 tests passed where the test files the command runs hold 3"),
        "{why}"
    );
    let two = "FF.\nRan 3 tests in 0.001s\n\nFAILED (failures=1, errors=1)\n";
    let why = missing_evidence(&unittest(1), Some(2), 1, b"", two.as_bytes())
        .unwrap()
        .why;
    assert!(
        why.contains("summary reports a failure (2 ran, 1 passed)"),
        "{why}"
    );
    // A summary without the sentinel's failure was not the run it claims to be.
    let ok = "Ran 2 tests in 0.001s\n\nOK\n";
    let why = missing_evidence(&unittest(1), Some(2), 1, b"", ok.as_bytes())
        .unwrap()
        .why;
    assert!(
        why.contains("shows 0 failures where the sentinel test, which must fail, ran 1 time"),
        "{why}"
    );
    let both = format!("{one}{one}");
    assert_eq!(
        missing_evidence(&unittest(2), Some(4), 2, b"", both.as_bytes()),
        None
    );
    let pytest = RunnerCheck {
        unittest: 0,
        pytest: 1,
        collected: None,
    };
    let out = b"..F\n1 failed, 2 passed in 0.05s\n";
    assert_eq!(missing_evidence(&pytest, Some(2), 1, out, b""), None);
    let skipped = b"1 failed, 1 passed, 1 skipped in 0.05s\n";
    let why = missing_evidence(&pytest, None, 1, skipped, b"")
        .unwrap()
        .why;
    assert!(why.contains("1 of 2 tests that ran did not pass"), "{why}");
}
