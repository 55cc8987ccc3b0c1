//! Files that can hook a check: a module or package named like a standard-library
//! module or the runner where Python imports from (the top of the tree, a `PYTHONPATH`
//! directory or a `cd` directory of a verify command, a directory of pristine tests),
//! `sitecustomize.py`, `usercustomize.py`, `*.pth`, `conftest.py`, the runners'
//! configuration files, an executable named like the program of a verify command, and
//! an entry that Python imports in place of a pristine test module (a package
//! `tests/test_a/` beside `tests/test_a.py`). Symlinks that resolve inside the tree are
//! followed, as an importer follows them: `unittest -> vendor/ut` is a package
//! `unittest/` with the files of `vendor/ut/`. A session that creates or changes one
//! outside the pristine tests is counted in `verify_tamper`: the check ran code it did
//! not ask for.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;

use super::oracle::OracleTests;
use super::shadowed_names::{PYTEST_RUNNER, UNITTEST_RUNNER, shadows};
use crate::fsutil::{TreeFile, TreeSnapshot};
use crate::suite::RunnerCheck;

/// Files that Python or pytest load by their name wherever they lie.
const LOADED_BY_NAME: &[&str] = &[
    "sitecustomize.py",
    "usercustomize.py",
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "pytest.toml",
    ".pytest.toml",
    "tox.ini",
];

/// Suffixes of a file that Python imports as a module.
const MODULE_SUFFIXES: &[&str] = &[".py", ".pyc", ".so", ".pyd", ".pyw"];

/// Directories of bytecode and runner caches: never copied into a check's scratch
/// copy (Python and pytest rebuild them), so nothing in them can hook a check.
pub const TOOL_CACHES: &[&str] = &["__pycache__", ".pytest_cache"];

/// Whether `path` lies in (or is) a directory of [`TOOL_CACHES`].
pub fn in_tool_cache(path: &str) -> bool {
    path.split('/').any(|part| TOOL_CACHES.contains(&part))
}

/// Where the checks' Python imports from and which programs they start: what decides,
/// besides a file's own name, whether it can hook a check.
#[derive(Debug, Clone, Default)]
pub struct CheckPaths {
    /// The programs the verify commands start (the first word that is not a variable
    /// assignment), as the commands spell them.
    pub programs: Vec<String>,
    /// Directories relative to the work directory (`""` for itself) from which a
    /// check's Python imports before the standard library: the top, every
    /// `PYTHONPATH` directory and `cd` directory of a verify command, and every
    /// directory of pristine tests (pytest and `unittest discover -s` import from
    /// there).
    pub roots: Vec<String>,
}

impl CheckPaths {
    /// The paths of checks running `commands` with `oracle`'s tests laid over.
    pub fn of<'a>(
        commands: impl IntoIterator<Item = &'a str>,
        oracle: Option<&OracleTests>,
    ) -> CheckPaths {
        let commands: Vec<&str> = commands.into_iter().collect();
        let mut roots = vec![String::new()];
        for command in &commands {
            roots.extend(crate::suite::import_roots(command));
        }
        if let Some(oracle) = oracle {
            roots.extend(oracle.pristine_dirs().iter().cloned());
        }
        roots.sort();
        roots.dedup();
        CheckPaths {
            programs: verify_programs(commands),
            roots,
        }
    }
}

/// The programs the verify commands start (the first word that is not a variable
/// assignment), as the commands spell them.
pub fn verify_programs<'a>(commands: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut programs: Vec<String> = commands
        .into_iter()
        .filter_map(|c| {
            c.split_whitespace()
                .find(|w| {
                    !w.split_once('=')
                        .is_some_and(|(n, _)| !n.is_empty() && !n.contains('/'))
                })
                .map(str::to_string)
        })
        .collect();
    programs.sort();
    programs.dedup();
    programs
}

/// One entry of a tree as an importer sees it.
struct Seen<'t> {
    path: String,
    what: What<'t>,
}

enum What<'t> {
    /// A regular file of the tree.
    File(&'t TreeFile),
    /// A symlink: its target, and a hash of what it leads to inside the tree (nothing
    /// when it leads outside or nowhere).
    Link(&'t OsStr, Option<blake3::Hash>),
    /// A regular file reached through a symlink (a link to it, or to a directory above
    /// it).
    Through(&'t TreeFile),
}

/// How many symlinks one resolution follows before it gives up (a loop).
const MAX_HOPS: u32 = 16;

/// The tree's lookups by path.
struct Index<'t> {
    files: HashMap<&'t str, &'t TreeFile>,
    links: HashMap<&'t str, &'t OsStr>,
    dirs: BTreeSet<&'t str>,
}

/// What a path resolves to inside the tree.
enum Target<'t> {
    File(&'t TreeFile),
    Dir(String),
}

impl<'t> Index<'t> {
    fn of(tree: &'t TreeSnapshot) -> Index<'t> {
        Index {
            files: tree.files.iter().map(|f| (f.path.as_str(), f)).collect(),
            links: tree
                .links
                .iter()
                .map(|(p, t)| (p.as_str(), t.as_os_str()))
                .collect(),
            dirs: tree
                .others
                .iter()
                .filter(|e| e.kind == b'd')
                .map(|e| e.path.as_str())
                .collect(),
        }
    }

    /// What the link at `path` with `target` resolves to inside the tree; `None` when
    /// it leads outside (an absolute target, `..` past the top), nowhere, or loops.
    fn resolve_link(&self, path: &str, target: &OsStr, hops: u32) -> Option<Target<'t>> {
        let target = target.to_str()?;
        if target.starts_with('/') || hops > MAX_HOPS {
            return None;
        }
        let parent = path.rsplit_once('/').map_or("", |(p, _)| p);
        let joined = if parent.is_empty() {
            target.to_string()
        } else {
            format!("{parent}/{target}")
        };
        self.resolve(&joined, hops + 1)
    }

    /// What the relative `path` resolves to, following links on the way.
    fn resolve(&self, path: &str, hops: u32) -> Option<Target<'t>> {
        let mut at: Vec<String> = Vec::new();
        let parts: Vec<&str> = path.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            match *part {
                "" | "." => continue,
                ".." => {
                    at.pop()?;
                    continue;
                }
                p => at.push(p.to_string()),
            }
            let here = at.join("/");
            if let Some(target) = self.links.get(here.as_str()) {
                let resolved = self.resolve_link(&here, target, hops)?;
                let last = parts[i + 1..].iter().all(|p| p.is_empty() || *p == ".");
                match resolved {
                    Target::File(f) if last => return Some(Target::File(f)),
                    Target::File(_) => return None,
                    Target::Dir(dir) => {
                        at = dir
                            .split('/')
                            .filter(|p| !p.is_empty())
                            .map(str::to_string)
                            .collect();
                    }
                }
            }
        }
        let here = at.join("/");
        if let Some(file) = self.files.get(here.as_str()) {
            Some(Target::File(file))
        } else if here.is_empty() || self.dirs.contains(here.as_str()) {
            Some(Target::Dir(here))
        } else {
            None
        }
    }
}

/// Whether a symlink of `tree` leads outside it (an absolute target, `..` past the
/// top, through another link that does, or round a loop): what a check reads through
/// it can change while the tree stays the same, so no cached answer may stand for it.
pub fn links_lead_outside(tree: &TreeSnapshot) -> bool {
    if tree.links.is_empty() {
        return false;
    }
    let index = Index::of(tree);
    tree.links
        .iter()
        .any(|(path, target)| index.escapes(path, target, 0))
}

impl Index<'_> {
    /// Whether the link at `path` with `target` leads outside the tree (see
    /// [`links_lead_outside`]); a link that leads nowhere inside it does not.
    fn escapes(&self, path: &str, target: &OsStr, hops: u32) -> bool {
        let mut parent: Vec<String> = path.split('/').map(str::to_string).collect();
        parent.pop();
        self.real_target(parent, target, hops).is_none()
    }

    /// The real path, as components under the top, that `target` of a link in the real
    /// directory `dir` leads to, resolving every link on the way as the kernel does;
    /// `None` when it leaves the tree (or loops).
    fn real_target(&self, mut at: Vec<String>, target: &OsStr, hops: u32) -> Option<Vec<String>> {
        let target = target.to_str()?;
        if target.starts_with('/') || hops > MAX_HOPS {
            return None;
        }
        for part in target.split('/') {
            match part {
                "" | "." => {}
                ".." => {
                    at.pop()?;
                }
                p => {
                    at.push(p.to_string());
                    if let Some(next) = self.links.get(at.join("/").as_str()) {
                        at.pop();
                        at = self.real_target(at, next, hops + 1)?;
                    }
                }
            }
        }
        Some(at)
    }
}

/// Every entry of `tree` as an importer sees it: its files and links, and through each
/// link that resolves inside the tree, the file it leads to or the files of the
/// directory it leads to, at the link's path.
fn seen_entries(tree: &TreeSnapshot) -> Vec<Seen<'_>> {
    let mut seen: Vec<Seen<'_>> = tree
        .files
        .iter()
        .map(|f| Seen {
            path: f.path.clone(),
            what: What::File(f),
        })
        .collect();
    if tree.links.is_empty() {
        return seen;
    }
    let index = Index::of(tree);
    for (path, target) in &tree.links {
        let resolved = index.resolve_link(path, target, 0);
        let mut through = Vec::new();
        let leads_to = match &resolved {
            None => None,
            Some(Target::File(f)) => {
                through.push((path.clone(), *f));
                Some(file_hash(f, b"F"))
            }
            Some(Target::Dir(dir)) => {
                let mut h = blake3::Hasher::new();
                for f in &tree.files {
                    let rest = if dir.is_empty() {
                        Some(f.path.as_str())
                    } else {
                        f.path
                            .strip_prefix(dir.as_str())
                            .and_then(|r| r.strip_prefix('/'))
                    };
                    if let Some(rest) = rest {
                        h.update(rest.as_bytes());
                        h.update(file_hash(f, b"F").as_bytes());
                        through.push((format!("{path}/{rest}"), f));
                    }
                }
                Some(h.finalize())
            }
        };
        seen.push(Seen {
            path: path.clone(),
            what: What::Link(target, leads_to),
        });
        seen.extend(through.into_iter().map(|(path, f)| Seen {
            path,
            what: What::Through(f),
        }));
    }
    seen
}

fn file_hash(f: &TreeFile, tag: &[u8]) -> blake3::Hash {
    let mut h = blake3::Hasher::new();
    h.update(tag);
    h.update(if f.executable { b"X" } else { b"-" });
    h.update(&f.content);
    h.finalize()
}

/// `(directory, name)` of a `/`-separated path; the directory of a top-level entry is
/// `""`.
fn split_parent(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

/// The name of the entry at `path` when it lies directly in one of `roots`.
fn name_at_root<'p>(path: &'p str, roots: &[String]) -> Option<&'p str> {
    let (dir, name) = split_parent(path);
    roots.iter().any(|r| r == dir).then_some(name)
}

/// The name of a module file without its suffixes (`json.cpython-311-x86_64-linux-gnu.so`
/// → `json`), when `name` has a module suffix.
fn module_stem(name: &str) -> Option<&str> {
    MODULE_SUFFIXES
        .iter()
        .any(|suffix| name.ends_with(suffix))
        .then(|| name.split('.').next().unwrap_or(name))
}

/// Every file of `tree` that can hook a check, with a hash of what it is (content and
/// execute bit, or a symlink's target and what it leads to), so that two observations
/// tell which were created or changed between them. A file that holds exactly a
/// pristine test of `oracle` is never counted, and neither is anything in a
/// [`TOOL_CACHES`] directory, which no check sees.
pub fn hook_files(
    tree: &TreeSnapshot,
    paths: &CheckPaths,
    oracle: Option<&OracleTests>,
) -> BTreeMap<String, blake3::Hash> {
    let seen = seen_entries(tree);
    let packages = shadowing_packages(&seen, &paths.roots);
    let pristine_shadows = oracle
        .map(|o| o.shadowing_entries(tree))
        .unwrap_or_default();
    let hooks = |path: &str, content: Option<&[u8]>, executable: bool| {
        let name = split_parent(path).1;
        let shadow_module = name_at_root(path, &paths.roots)
            .and_then(module_stem)
            .is_some_and(shadows);
        let in_package = packages.iter().any(|p| {
            path == p
                || path
                    .strip_prefix(p.as_str())
                    .is_some_and(|rest| rest.starts_with('/'))
        });
        let section =
            |header: &str| content.is_some_and(|c| String::from_utf8_lossy(c).contains(header));
        let runner_config = (name == "setup.cfg" && section("[tool:pytest]"))
            || (name == "pyproject.toml" && section("[tool.pytest"));
        // A program named with a slash is that file of the tree; a bare name is
        // whatever executable of that name a `PATH` entry inside the tree offers.
        let program = paths.programs.iter().any(|p| {
            if p.contains('/') {
                path == p.trim_start_matches("./")
            } else {
                executable && name == p
            }
        });
        let displaces_pristine =
            crate::fsutil::skipped_with_parents(path, |p| pristine_shadows.contains(p));
        shadow_module
            || in_package
            || LOADED_BY_NAME.contains(&name)
            || name.ends_with(".pth")
            || runner_config
            || program
            || displaces_pristine
    };
    let mut found = BTreeMap::new();
    for entry in &seen {
        if in_tool_cache(&entry.path) {
            continue;
        }
        let hash = match &entry.what {
            What::File(f) => {
                if !hooks(&entry.path, Some(&f.content), f.executable) || is_pristine(f, oracle) {
                    continue;
                }
                file_hash(f, b"F")
            }
            What::Through(f) => {
                if !hooks(&entry.path, Some(&f.content), f.executable) {
                    continue;
                }
                file_hash(f, b"T")
            }
            What::Link(target, leads_to) => {
                // A link is followed by whoever imports or runs it: judged by its name
                // (and by what it leads to, through the entries above).
                if !hooks(&entry.path, None, true) {
                    continue;
                }
                link_hash(target, *leads_to)
            }
        };
        found.insert(entry.path.clone(), hash);
    }
    found
}

/// Packages at an import root named like a module they shadow: a directory holding an
/// `__init__` (a file, a link, or reached through a link), or a link of that name.
fn shadowing_packages(seen: &[Seen<'_>], roots: &[String]) -> BTreeSet<String> {
    seen.iter()
        .filter_map(|e| {
            let (dir, name) = split_parent(&e.path);
            let package = if name.starts_with("__init__.") {
                dir
            } else if matches!(e.what, What::Link(..)) {
                &e.path
            } else {
                return None;
            };
            name_at_root(package, roots)
                .is_some_and(shadows)
                .then(|| package.to_string())
        })
        .collect()
}

/// Whether `f` holds exactly the pristine test of `oracle` at its place.
fn is_pristine(f: &TreeFile, oracle: Option<&OracleTests>) -> bool {
    oracle.is_some_and(|o| {
        f.path
            .strip_prefix(o.target)
            .and_then(|rest| rest.strip_prefix('/'))
            .and_then(|rest| o.snapshot.get(rest))
            .is_some_and(|p| p.content == f.content && p.executable == f.executable)
    })
}

/// The hash of a link: its target and the hash of what it leads to.
fn link_hash(target: &OsStr, leads_to: Option<blake3::Hash>) -> blake3::Hash {
    let mut h = blake3::Hasher::new();
    h.update(b"L");
    h.update(target.as_encoded_bytes());
    if let Some(to) = leads_to {
        h.update(to.as_bytes());
    }
    h.finalize()
}

/// The module or package of `tree`, at one of `roots`, that stands in for a module of
/// the runner a summary is needed from (`unittest`; `pytest` and the packages it
/// imports), as its path: the summary of such a run is no evidence, whatever it says.
/// `None` when the check needs no summary or nothing stands in.
pub fn runner_stand_in(
    tree: &TreeSnapshot,
    roots: &[String],
    check: &RunnerCheck,
) -> Option<String> {
    let mut names: Vec<&str> = Vec::new();
    if check.unittest > 0 {
        names.extend(UNITTEST_RUNNER);
    }
    if check.pytest > 0 {
        names.extend(PYTEST_RUNNER);
    }
    if names.is_empty() {
        return None;
    }
    seen_entries(tree).into_iter().find_map(|e| {
        let (dir, name) = split_parent(&e.path);
        if !roots.iter().any(|r| r == dir) {
            // `unittest/__init__.py` at a root: its directory stands in.
            let (up, package) = split_parent(dir);
            let init = name.starts_with("__init__.");
            return (init && roots.iter().any(|r| r == up) && names.contains(&package))
                .then(|| dir.to_string());
        }
        let stem = match e.what {
            What::Link(..) => name.split('.').next().unwrap_or(name),
            _ => module_stem(name)?,
        };
        names.contains(&stem).then(|| e.path.clone())
    })
}

/// The hook files of `after` that are new or changed since `before`, in path order.
pub fn tampered(
    before: &BTreeMap<String, blake3::Hash>,
    after: &BTreeMap<String, blake3::Hash>,
) -> Vec<String> {
    after
        .iter()
        .filter(|(path, hash)| before.get(*path) != Some(*hash))
        .map(|(path, _)| path.clone())
        .collect()
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
