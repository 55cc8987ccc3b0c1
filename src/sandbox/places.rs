//! Which host places a sandbox may show beyond the system: a declared place
//! (`sandbox_ro`, `sandbox_rw`, a wrapper's `ro`/`rw` line) is refused when it is the
//! whole host, a home, a place of the kernel or of host sockets, or when it holds
//! answers; and the search, at the start of a run, for answers inside every place that
//! is shown: a task's `oracle/`, a loopbench results directory, another trial's scratch
//! directory, and a host socket (a read-only bind does not keep a client from
//! connecting to a socket it shows). What the search finds is masked in a shown
//! toolchain or system directory, and refused in a declared place.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// How many levels below a shown place the search for answers looks.
pub const SEARCH_DEPTH: usize = 4;
/// How many entries of one shown place the search reads at most.
pub const SEARCH_ENTRIES: usize = 50_000;
/// The system directories the search covers (the rest of `/usr` is the package
/// manager's, and too large to search at every start).
pub const SEARCHED_SYSTEM_DIRS: &[&str] = &["/etc", "/usr/local", "/usr/src"];
/// Host places no sandbox shows, nor anything inside them: the kernel's and the
/// sockets of host services.
const KERNEL_PLACES: &[&str] = &["/proc", "/sys", "/dev", "/run"];
/// The prefixes of the harness's scratch directories (a harness process's, a trial's
/// work directory, a verify copy): another run's are answers too.
const SCRATCH_PREFIXES: &[&str] = &[
    crate::fsutil::PROCESS_DIR_PREFIX,
    "loopbench-trial-",
    "loopbench-verify-",
];

/// What a search found that a sandbox must not show, with what it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The place to hide.
    pub path: PathBuf,
    /// "a task's oracle", "a loopbench results directory", "a trial's scratch directory".
    pub what: &'static str,
}

/// Why `place` may not be shown to a sandbox as declared, or `None`. `home` is the
/// harness's `$HOME`. The place must exist (it is canonicalized first, so that a
/// symlink cannot lead around the rules).
pub fn refused_place(place: &Path, home: Option<&Path>) -> Option<String> {
    let canon = std::fs::canonicalize(place).unwrap_or_else(|_| place.to_path_buf());
    if canon == Path::new("/") {
        return Some("is the whole host".into());
    }
    if let Some(k) = KERNEL_PLACES.iter().find(|k| canon.starts_with(k)) {
        return Some(format!(
            "lies in {k}, the kernel's or the host services' (sockets) place"
        ));
    }
    let home = home.and_then(|h| std::fs::canonicalize(h).ok());
    let homes: Vec<&Path> = [Path::new("/root"), Path::new("/home")]
        .into_iter()
        .chain(home.as_deref())
        .collect();
    let is_home = homes.contains(&canon.as_path()) || canon.parent() == Some(Path::new("/home"));
    if is_home {
        return Some(
            "is a home directory (show the directories the CLI needs inside it instead)".into(),
        );
    }
    if let Some(h) = homes.iter().find(|h| h.starts_with(&canon)) {
        return Some(format!("holds the home directory {}", h.display()));
    }
    answers_inside(&canon)
        .first()
        .map(|a| format!("holds {}, {}", a.path.display(), a.what))
}

/// Every answer within [`SEARCH_DEPTH`] levels of `dir` (breadth first, at most
/// [`SEARCH_ENTRIES`] entries, symlinks not followed): the `oracle/` of a directory
/// holding a `task.toml`, a directory holding a run's `manifest.json` beside its
/// `sessions.jsonl` or `trials.jsonl`, a directory named like the harness's scratch
/// directories, a Unix socket. Nothing below an answer is searched.
pub fn answers_inside(dir: &Path) -> Vec<Answer> {
    use std::os::unix::fs::FileTypeExt;
    let mut found = Vec::new();
    let mut queue = VecDeque::from([(dir.to_path_buf(), 0usize)]);
    let mut read = 0usize;
    while let Some((current, depth)) = queue.pop_front() {
        let Ok(entries) = std::fs::read_dir(&current) else {
            continue;
        };
        let mut names = Vec::new();
        let mut subdirs = Vec::new();
        for entry in entries.flatten() {
            read += 1;
            if read > SEARCH_ENTRIES {
                return found;
            }
            let name = entry.file_name();
            match entry.file_type() {
                Ok(t) if t.is_dir() => subdirs.push(entry.path()),
                Ok(t) if t.is_socket() => found.push(Answer {
                    path: entry.path(),
                    what: "a host socket",
                }),
                _ => {}
            }
            names.push(name);
        }
        let has = |n: &str| names.iter().any(|x| x == n);
        let has_dir = |n: &str| {
            subdirs
                .iter()
                .any(|d| d.file_name().is_some_and(|x| x == n))
        };
        if has("manifest.json") && (has("sessions.jsonl") || has("trials.jsonl")) {
            found.push(Answer {
                path: current,
                what: "a loopbench results directory",
            });
            continue;
        }
        if has("task.toml") && has_dir("oracle") {
            found.push(Answer {
                path: current.join("oracle"),
                what: "a task's oracle",
            });
        }
        if depth >= SEARCH_DEPTH {
            continue;
        }
        subdirs.sort();
        for sub in subdirs {
            let name = sub.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            if name == "oracle" && has("task.toml") {
                continue;
            }
            if SCRATCH_PREFIXES.iter().any(|p| name.starts_with(p)) {
                found.push(Answer {
                    path: sub,
                    what: "a trial's scratch directory",
                });
                continue;
            }
            queue.push_back((sub, depth + 1));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(paths: &[&str]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for p in paths {
            let path = root.path().join(p);
            if let Some(dir) = p.strip_suffix('/') {
                std::fs::create_dir_all(root.path().join(dir)).unwrap();
            } else {
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, "x").unwrap();
            }
        }
        root
    }

    #[test]
    fn task_copies_runs_and_scratch_directories_are_found_within_the_search_depth() {
        let t = tree(&[
            "lib/copy/task.toml",
            "lib/copy/oracle/gold/F1/f.txt",
            "lib/copy/repo/src/a.txt",
            "share/results/s/run1/manifest.json",
            "share/results/s/run1/sessions.jsonl",
            "share/results/s/run1/agents/x/home/",
            "tmp/loopbench-trial-abc/work/",
            "a/b/c/d/e/task.toml",
            "a/b/c/d/e/oracle/",
            "plain/oracle/",
        ]);
        let r = t.path();
        let found: Vec<(PathBuf, &str)> = answers_inside(r)
            .into_iter()
            .map(|a| (a.path.strip_prefix(r).unwrap().to_path_buf(), a.what))
            .collect();
        assert!(
            found.contains(&("lib/copy/oracle".into(), "a task's oracle")),
            "{found:?}"
        );
        assert!(found.contains(&(
            "share/results/s/run1".into(),
            "a loopbench results directory"
        )));
        assert!(found.contains(&(
            "tmp/loopbench-trial-abc".into(),
            "a trial's scratch directory"
        )));
        // Five levels down: beyond the search. An `oracle` without a task beside it is
        // just a name.
        assert_eq!(found.len(), 3, "{found:?}");
        // A service's socket: a read-only bind would still let a client connect.
        let _listening = std::os::unix::net::UnixListener::bind(r.join("lib/agent.sock")).unwrap();
        let found = answers_inside(r);
        assert!(
            found
                .iter()
                .any(|a| a.path == r.join("lib/agent.sock") && a.what == "a host socket"),
            "{found:?}"
        );
    }

    #[test]
    fn the_host_a_home_a_socket_place_or_a_place_holding_answers_is_refused() {
        let t = tree(&[
            "study/tasks/t/task.toml",
            "study/tasks/t/oracle/",
            "tools/bin/x",
        ]);
        let home = t.path().join("study");
        for (place, why) in [
            ("/", "whole host"),
            ("/root", "home directory"),
            ("/home", "home directory"),
            ("/run", "sockets"),
            ("/proc/self", "kernel"),
        ] {
            let refused = refused_place(Path::new(place), None).unwrap_or_default();
            assert!(refused.contains(why), "{place}: {refused}");
        }
        assert!(
            refused_place(&home, Some(&home))
                .unwrap()
                .contains("home directory")
        );
        assert!(
            refused_place(t.path(), Some(&home))
                .unwrap()
                .contains("holds the home directory")
        );
        let tasks = t.path().join("study/tasks");
        assert!(
            refused_place(&tasks, None)
                .unwrap()
                .contains("a task's oracle")
        );
        assert_eq!(refused_place(&t.path().join("tools"), Some(&home)), None);
    }
}
