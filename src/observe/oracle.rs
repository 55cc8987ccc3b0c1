//! The pristine tests of a task and how they are laid over a scratch copy so that they,
//! and nothing the agent put beside them, are what a check imports.
//!
//! Copying the pristine files over the copy is not enough: Python imports a package
//! `tests/test_a/` (or an extension module `tests/test_a.cpython-311-x86_64-linux-gnu.so`)
//! before the module `tests/test_a.py`, so an agent's package beside a pristine test runs
//! in its place and prints a real "Ran 2 tests ... OK". So the overlay also leaves out of
//! the copy every entry of a directory of pristine tests that the oracle does not have
//! and that Python or pytest could import or read there: symlinks, packages (directories
//! holding an `__init__`), module files (`.py`, `.pyc`, `.so`, `.pyd`, `.pth`, ...) and
//! runner configuration files; and a module named like the tests' directory beside it
//! (`tests.py`). Data files and plain directories stay.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::fsutil::{TreeSnapshot, skipped_with_parents};

/// Suffixes of a file that Python imports as a module or reads as a path file.
const IMPORTABLE_SUFFIXES: &[&str] = &[".py", ".pyc", ".pyo", ".pyw", ".so", ".pyd", ".pth"];

/// Files pytest reads as its configuration where they lie.
const RUNNER_CONFIG: &[&str] = &[
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
];

/// The pristine tests of a task, read once.
#[derive(Debug, Clone)]
pub struct OracleTests {
    /// Directory holding them (`oracle/tests`).
    pub dir: PathBuf,
    /// Where they are laid in the copy, relative to its root.
    pub target: &'static str,
    /// Their files.
    pub snapshot: TreeSnapshot,
    /// The directories they are laid in, relative to the copy's root (`tests` and
    /// every directory of the oracle under it).
    dirs: BTreeSet<String>,
}

impl OracleTests {
    /// Reads `dir` (the task's `oracle/tests`).
    pub fn read(dir: &Path) -> Result<OracleTests> {
        let snapshot = TreeSnapshot::read(dir)?;
        let target = crate::suite::ORACLE_TESTS_AT;
        let mut dirs = BTreeSet::from([target.to_string()]);
        for e in snapshot.others.iter().filter(|e| e.kind == b'd') {
            dirs.insert(format!("{target}/{}", e.path));
        }
        Ok(OracleTests {
            dir: dir.to_path_buf(),
            target,
            snapshot,
            dirs,
        })
    }

    /// The directories the pristine tests are laid in, relative to the copy's root.
    pub fn pristine_dirs(&self) -> &BTreeSet<String> {
        &self.dirs
    }

    /// The path of `path` (relative to a work tree) inside the oracle, when it lies in
    /// the tests' directory.
    fn in_oracle<'p>(&self, path: &'p str) -> Option<&'p str> {
        path.strip_prefix(self.target)?.strip_prefix('/')
    }

    /// Whether the oracle has an entry (a file or a directory) at `path` of a tree.
    fn has(&self, path: &str) -> bool {
        self.dirs.contains(path)
            || self
                .in_oracle(path)
                .is_some_and(|rest| self.snapshot.get(rest).is_some())
    }

    /// Whether a directory of `tree` at `path` is a package (holds an `__init__` file
    /// or symlink).
    fn is_package(tree: &TreeSnapshot, path: &str) -> bool {
        let holds_init = |p: &str| {
            p.strip_prefix(path)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|name| name.starts_with("__init__.") && !name.contains('/'))
        };
        tree.files.iter().any(|f| holds_init(&f.path))
            || tree.links.iter().any(|(p, _)| holds_init(p))
    }

    /// Every entry of `tree` (outermost only) that the overlay leaves out of a check's
    /// copy: see the module documentation.
    pub fn left_out(&self, tree: &TreeSnapshot) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        let beside_tests = |name: &str| {
            name.strip_prefix(self.target)
                .is_some_and(|rest| rest.starts_with('.') && importable(name))
        };
        // An entry the oracle does not have, directly in a directory of pristine tests,
        // or beside the tests' directory and named like it.
        let stray = |path: &str| {
            let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
            if dir.is_empty() {
                beside_tests(name)
            } else {
                self.dirs.contains(dir) && !self.has(path)
            }
        };
        let name_of = |path: &str| path.rsplit('/').next().unwrap_or(path).to_string();
        for f in &tree.files {
            let name = name_of(&f.path);
            if stray(&f.path) && (importable(&name) || RUNNER_CONFIG.contains(&name.as_str())) {
                out.insert(f.path.clone());
            }
        }
        for (path, _) in &tree.links {
            if stray(path) || path == self.target {
                out.insert(path.clone());
            }
        }
        for e in tree.others.iter().filter(|e| e.kind == b'd') {
            if stray(&e.path) && Self::is_package(tree, &e.path) {
                out.insert(e.path.clone());
            }
        }
        out
    }

    /// The entries of `tree` (outermost only) that Python imports in place of a
    /// pristine test module or package: a package or symlink `X` or an extension module
    /// `X.so` / `X.*.so` / `X.pyd` beside the pristine `X.py`; a module `X.*` or a
    /// symlink beside a pristine directory `X` that is no package (a namespace loses to
    /// any module); the same beside the tests' directory itself. These are counted in
    /// `verify_tamper`; everything [`OracleTests::left_out`] is left out of the copy.
    pub fn shadowing_entries(&self, tree: &TreeSnapshot) -> BTreeSet<String> {
        self.left_out(tree)
            .into_iter()
            .filter(|path| {
                let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
                let stem = name.split('.').next().unwrap_or(name);
                let sibling = if dir.is_empty() {
                    stem.to_string()
                } else {
                    format!("{dir}/{stem}")
                };
                let is_dir = tree
                    .others
                    .iter()
                    .any(|e| e.kind == b'd' && e.path == *path);
                let is_link = tree.links.iter().any(|(p, _)| p == path);
                let extension = name.ends_with(".so") || name.ends_with(".pyd");
                let pristine_module = self
                    .in_oracle(&format!("{sibling}.py"))
                    .is_some_and(|rest| self.snapshot.get(rest).is_some());
                let namespace = self.dirs.contains(&sibling)
                    && self
                        .in_oracle(&format!("{sibling}/__init__.py"))
                        .is_none_or(|rest| self.snapshot.get(rest).is_none());
                (pristine_module && (is_dir || is_link || (extension && stem != name)))
                    || (namespace && (importable(name) || is_link))
            })
            .collect()
    }

    /// Whether laying the oracle over `tree` would change nothing, so that `verified`
    /// equals `self_verified` without running anything twice: every pristine file is
    /// there as it is, and nothing that the overlay leaves out.
    pub fn already_in(&self, tree: &TreeSnapshot) -> bool {
        self.snapshot.files.iter().all(|o| {
            tree.get(&format!("{}/{}", self.target, o.path))
                .is_some_and(|f| f.content == o.content && f.executable == o.executable)
        }) && self.left_out(tree).is_empty()
    }

    /// `tree` as a check sees it once the oracle is laid over it: without what
    /// [`OracleTests::left_out`] names, with the pristine files in place.
    pub fn overlay(&self, tree: &TreeSnapshot) -> TreeSnapshot {
        let left_out = self.left_out(tree);
        let kept = if left_out.is_empty() {
            std::borrow::Cow::Borrowed(tree)
        } else {
            std::borrow::Cow::Owned(
                tree.without(|path| skipped_with_parents(path, |p| left_out.contains(p))),
            )
        };
        kept.overlaid(self.target, &self.snapshot)
    }
}

/// Whether a file named `name` is one Python imports or reads as a path file.
fn importable(name: &str) -> bool {
    IMPORTABLE_SUFFIXES.iter().any(|s| name.ends_with(s))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(paths: &[&str]) -> (tempfile::TempDir, TreeSnapshot) {
        let dir = tempfile::tempdir().unwrap();
        for path in paths {
            let p = dir.path().join(path.trim_end_matches('/'));
            if path.ends_with('/') {
                std::fs::create_dir_all(&p).unwrap();
            } else {
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(&p, "x").unwrap();
            }
        }
        let snapshot = TreeSnapshot::read(dir.path()).unwrap();
        (dir, snapshot)
    }

    fn oracle(paths: &[&str]) -> (tempfile::TempDir, OracleTests) {
        let (dir, _) = tree(paths);
        let oracle = OracleTests::read(dir.path()).unwrap();
        (dir, oracle)
    }

    #[test]
    fn what_could_be_imported_instead_of_a_pristine_test_is_left_out_and_shadows_are_named() {
        let (_o, oracle) = oracle(&[
            "__init__.py",
            "test_a.py",
            "unit/__init__.py",
            "unit/test_b.py",
            "data/",
        ]);
        let (work, t) = tree(&[
            "tests/__init__.py",
            "tests/test_a.py",
            "tests/test_a/__init__.py",
            "tests/test_a/evil.py",
            "tests/unit/test_b.cpython-311-x86_64-linux-gnu.so",
            "tests/unit/test_b.py",
            "tests/test_extra.py",
            "tests/conftest.py",
            "tests/pytest.ini",
            "tests/notes.txt",
            "tests/fixtures/sample.csv",
            "tests/data/more.json",
            "tests.py",
            "ledger/__init__.py",
        ]);
        std::os::unix::fs::symlink("../ledger", work.path().join("tests/unit/linked")).unwrap();
        let t2 = TreeSnapshot::read(work.path()).unwrap();
        assert_eq!(
            oracle.left_out(&t2).into_iter().collect::<Vec<_>>(),
            [
                "tests.py",
                "tests/conftest.py",
                "tests/pytest.ini",
                "tests/test_a",
                "tests/test_extra.py",
                "tests/unit/linked",
                "tests/unit/test_b.cpython-311-x86_64-linux-gnu.so",
            ]
        );
        // tests/ is a package in the oracle: tests.py beside it cannot win.
        assert_eq!(
            oracle
                .shadowing_entries(&t2)
                .into_iter()
                .collect::<Vec<_>>(),
            [
                "tests/test_a",
                "tests/unit/test_b.cpython-311-x86_64-linux-gnu.so"
            ]
        );
        assert!(!oracle.already_in(&t));
        let seen = oracle.overlay(&t2);
        assert!(seen.get("tests/test_a/__init__.py").is_none());
        assert!(seen.get("tests/notes.txt").is_some());
        assert!(seen.get("tests/fixtures/sample.csv").is_some());
        assert!(seen.get("ledger/__init__.py").is_some());
    }

    #[test]
    fn beside_a_namespace_tests_directory_a_module_of_its_name_shadows_it() {
        let (_o, oracle) = oracle(&["test_a.py"]);
        let (_w, t) = tree(&["tests/test_a.py", "tests.py", "tests_helper.py"]);
        assert_eq!(
            oracle.shadowing_entries(&t).into_iter().collect::<Vec<_>>(),
            ["tests.py"]
        );
        let (_w, clean) = tree(&["tests/test_a.py", "tests/readme.md", "src/x.py"]);
        assert!(oracle.left_out(&clean).is_empty());
        assert!(oracle.already_in(&clean));
    }
}
