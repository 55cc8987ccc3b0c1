//! Tests of `hooks`: every kind of hook on real trees, symlinks followed as an
//! importer follows them, and the runner's stand-ins.

use super::*;
use std::os::unix::fs::PermissionsExt;

fn write_tree(dir: &std::path::Path, files: &[(&str, &str, u32)]) {
    for (path, content, mode) in files {
        let p = dir.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, content).unwrap();
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(*mode)).unwrap();
    }
}

fn tree(files: &[(&str, &str, u32)]) -> TreeSnapshot {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), files);
    TreeSnapshot::read(dir.path()).unwrap()
}

fn paths(programs: &[&str], roots: &[&str]) -> CheckPaths {
    CheckPaths {
        programs: programs.iter().map(|p| p.to_string()).collect(),
        roots: roots.iter().map(|r| r.to_string()).collect(),
    }
}

fn hooks(t: &TreeSnapshot, programs: &[&str]) -> Vec<String> {
    hook_files(t, &paths(programs, &[""]), None)
        .into_keys()
        .collect()
}

#[test]
fn every_kind_of_hook_is_found_and_ordinary_files_are_not() {
    let t = tree(&[
        ("os.py", "", 0o644),
        ("json.cpython-311-x86_64-linux-gnu.so", "", 0o644),
        ("unittest/__init__.py", "", 0o644),
        ("unittest/main.py", "", 0o644),
        ("pytest.py", "", 0o644),
        ("pluggy/__init__.py", "", 0o644),
        ("src/sitecustomize.py", "", 0o644),
        ("usercustomize.py", "", 0o644),
        ("lib/evil.pth", "", 0o644),
        ("sub/conftest.py", "", 0o644),
        ("tox.ini", "", 0o644),
        ("pytest.toml", "", 0o644),
        ("setup.cfg", "[tool:pytest]\naddopts = -p no:x\n", 0o644),
        ("pyproject.toml", "[tool.pytest.ini_options]\n", 0o644),
        ("bin/python3", "#!/bin/sh\nexit 0\n", 0o755),
        ("run_checks.sh", "exit 0\n", 0o644),
        // Not hooks:
        ("ledger/os.py", "", 0o644),
        ("json/data.txt", "", 0o644),
        ("init.sh", "", 0o755),
        ("bin/python3.txt", "", 0o755),
        ("notes/python3", "not executable", 0o644),
        ("other/setup.cfg", "[metadata]\n", 0o644),
        ("pyproject2/pyproject.toml", "[project]\n", 0o644),
        ("README.md", "", 0o644),
        ("__pycache__/os.cpython-311.pyc", "", 0o644),
    ]);
    assert_eq!(
        hooks(&t, &["python3", "./run_checks.sh"]),
        [
            "bin/python3",
            "json.cpython-311-x86_64-linux-gnu.so",
            "lib/evil.pth",
            "os.py",
            "pluggy/__init__.py",
            "pyproject.toml",
            "pytest.py",
            "pytest.toml",
            "run_checks.sh",
            "setup.cfg",
            "src/sitecustomize.py",
            "sub/conftest.py",
            "tox.ini",
            "unittest/__init__.py",
            "unittest/main.py",
            "usercustomize.py",
        ]
    );
}

#[test]
fn a_symlinked_shadow_package_is_found_with_the_files_it_leads_to() {
    let dir = tempfile::tempdir().unwrap();
    write_tree(
        dir.path(),
        &[
            ("vendor/ut/__init__.py", "", 0o644),
            ("vendor/ut/__main__.py", "print('Ran 2 tests')", 0o644),
            ("decoy/x.py", "", 0o644),
            ("real_init.py", "", 0o644),
        ],
    );
    std::os::unix::fs::symlink("vendor/ut", dir.path().join("unittest")).unwrap();
    // A package whose __init__ is a link.
    std::fs::create_dir(dir.path().join("argparse")).unwrap();
    std::os::unix::fs::symlink("../real_init.py", dir.path().join("argparse/__init__.py")).unwrap();
    // A link out of the tree, judged by its name alone.
    std::os::unix::fs::symlink("/nonexistent/x", dir.path().join("traceback.py")).unwrap();
    let t = TreeSnapshot::read(dir.path()).unwrap();
    let found = hook_files(&t, &paths(&[], &[""]), None);
    assert_eq!(
        found.keys().collect::<Vec<_>>(),
        [
            "argparse/__init__.py",
            "traceback.py",
            "unittest",
            "unittest/__init__.py",
            "unittest/__main__.py",
        ]
    );
    // What the link leads to is part of it: a change there is a change of the hook.
    std::fs::write(
        dir.path().join("vendor/ut/__main__.py"),
        "print('Ran 3 tests')",
    )
    .unwrap();
    let changed = hook_files(
        &TreeSnapshot::read(dir.path()).unwrap(),
        &paths(&[], &[""]),
        None,
    );
    assert_eq!(
        tampered(&found, &changed),
        ["unittest", "unittest/__main__.py"]
    );
}

#[test]
fn a_pythonpath_directory_of_a_verify_command_is_a_top_level_too() {
    let t = tree(&[
        ("src/unittest/__init__.py", "", 0o644),
        ("src/unittest/__main__.py", "", 0o644),
        ("src/ledger/os.py", "", 0o644),
        ("app/json.py", "", 0o644),
    ]);
    assert!(hooks(&t, &[]).is_empty());
    let from = CheckPaths::of(
        [
            "PYTHONPATH=src python3 -m unittest tests.a",
            "cd app && python3 -m unittest",
        ],
        None,
    );
    assert_eq!(from.roots, ["", "app", "src"]);
    assert_eq!(
        hook_files(&t, &from, None).into_keys().collect::<Vec<_>>(),
        [
            "app/json.py",
            "src/unittest/__init__.py",
            "src/unittest/__main__.py"
        ]
    );
}

#[test]
fn only_new_or_changed_hooks_count() {
    let before = tree(&[("os.py", "a", 0o644), ("conftest.py", "x", 0o644)]);
    let after = tree(&[
        ("os.py", "a", 0o755),
        ("conftest.py", "x", 0o644),
        ("sitecustomize.py", "", 0o644),
    ]);
    let none = paths(&[], &[""]);
    let (b, a) = (
        hook_files(&before, &none, None),
        hook_files(&after, &none, None),
    );
    assert_eq!(tampered(&b, &a), ["os.py", "sitecustomize.py"]);
    let removed = tree(&[("os.py", "a", 0o644)]);
    let removed = hook_files(&removed, &none, None);
    assert!(
        tampered(&b, &removed).is_empty(),
        "a removed hook is not counted"
    );
}

#[test]
fn the_programs_are_the_first_words_after_assignments() {
    assert_eq!(
        verify_programs([
            "PYTHONPATH=src python3 -m unittest",
            "sh tests/a.sh",
            "sh tests/b.sh"
        ]),
        ["python3", "sh"]
    );
}

#[test]
fn a_stand_in_for_the_runner_is_found_at_any_import_root_and_only_for_its_runner() {
    let unittest = RunnerCheck {
        unittest: 1,
        pytest: 0,
        collected: None,
    };
    let pytest = RunnerCheck {
        unittest: 0,
        pytest: 1,
        collected: None,
    };
    let roots = ["".to_string(), "src".to_string()];
    let t = tree(&[("unittest/__init__.py", "", 0o644)]);
    assert_eq!(
        runner_stand_in(&t, &roots, &unittest).as_deref(),
        Some("unittest")
    );
    assert_eq!(runner_stand_in(&t, &roots, &pytest), None);
    assert_eq!(runner_stand_in(&t, &roots, &RunnerCheck::EXIT), None);
    let t = tree(&[("src/pluggy.py", "", 0o644), ("lib/unittest.py", "", 0o644)]);
    assert_eq!(
        runner_stand_in(&t, &roots, &pytest).as_deref(),
        Some("src/pluggy.py")
    );
    assert_eq!(runner_stand_in(&t, &roots, &unittest), None);
    // A namespace directory loses to the real package: no stand-in.
    let t = tree(&[("unittest/__main__.py", "", 0o644)]);
    assert_eq!(runner_stand_in(&t, &roots, &unittest), None);
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/elsewhere", dir.path().join("unittest")).unwrap();
    let t = TreeSnapshot::read(dir.path()).unwrap();
    assert_eq!(
        runner_stand_in(&t, &roots, &unittest).as_deref(),
        Some("unittest")
    );
}

#[test]
fn links_that_leave_the_tree_are_told_from_links_that_stay_in_it() {
    let case = |links: &[(&str, &str)]| {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub/deep")).unwrap();
        std::fs::write(dir.path().join("sub/deep/f.txt"), "x").unwrap();
        for (path, target) in links {
            std::os::unix::fs::symlink(target, dir.path().join(path)).unwrap();
        }
        links_lead_outside(&TreeSnapshot::read(dir.path()).unwrap())
    };
    assert!(!case(&[]));
    assert!(!case(&[
        ("a", "sub/deep/f.txt"),
        ("sub/b", "../sub/deep"),
        ("c", "gone")
    ]));
    assert!(case(&[("a", "/etc/passwd")]));
    assert!(case(&[("sub/a", "../../x")]));
    // Through a link that goes down, `..` goes up from where it really is.
    assert!(case(&[("a", "."), ("b", "a/a/../..")]));
    assert!(!case(&[("a", "sub/deep"), ("b", "a/../..")]));
    assert!(case(&[("a", "sub/deep"), ("b", "a/../../..")]));
    assert!(case(&[("a", "b"), ("b", "a")]));
}
