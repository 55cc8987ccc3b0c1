//! The bubblewrap sandbox for everything an agent wrote: the agent itself
//! (`sandbox = "bwrap"`), the verify commands that run its tests, and a replayed
//! trace's `run` actions. Each gets a read-only view of the system, one writable tree
//! (the work directory, or a scratch copy of it), no network, and the run directory,
//! every task's `oracle/` and the other trials hidden.
//!
//! The mount layout, in order (later mounts cover earlier ones):
//!
//! | mount | why |
//! | --- | --- |
//! | `--ro-bind / /` | the system, read-only |
//! | `--dev /dev`, `--proc /proc` | a private /dev (which also hides /dev/shm) and /proc |
//! | `--tmpfs /tmp` | a private, empty, throw-away /tmp |
//! | `--tmpfs` over the scratch root | the work directories of other trials |
//! | `--tmpfs` over each hidden directory | the run directory, every task's `oracle/` |
//! | `--bind` work directory | the one persistent writable tree |
//! | `--bind` effects log, usage file, state dir | harness files the agent writes, outside the work directory |
//! | `--ro-bind` prompt file | read-only |
//! | `--ro-bind` the program, the loopbench binary | only when they lie in a hidden place (a checkout under /tmp) |
//!
//! plus `--unshare-all` (no network unless `sandbox_network = true` adds `--share-net`;
//! own PID namespace), `--die-with-parent` (the
//! sandbox dies with the harness) and `--new-session` (no keystrokes pushed into the
//! harness's terminal). Under `--new-session` the agent leaves the harness's process
//! group; a timeout's SIGTERM reaches bwrap, whose death takes the whole PID namespace
//! with it, so nothing survives either way.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Error, Result};
use crate::lines::{BoundedLines, Line};

/// The program bubblewrap is run as.
pub const BWRAP: &str = "bwrap";

/// The places every sandbox of a run hides: the scratch root (every trial's work
/// directory and every scratch copy), the run directory and every task's `oracle/`.
/// Canonical paths, so that a symlink cannot lead around them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hidden {
    dirs: Vec<PathBuf>,
}

impl Hidden {
    /// The hidden places of a run writing to `run_dir` over tasks in `task_dirs`.
    pub fn for_run<'a>(run_dir: &Path, task_dirs: impl IntoIterator<Item = &'a Path>) -> Hidden {
        let mut dirs = vec![crate::fsutil::scratch_root(), run_dir.to_path_buf()];
        dirs.extend(task_dirs.into_iter().map(|t| t.join("oracle")));
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let mut dirs: Vec<PathBuf> = dirs
            .iter()
            .filter(|p| p.is_dir())
            .map(|p| canon(p))
            .collect();
        dirs.sort();
        dirs.dedup();
        Hidden { dirs }
    }

    /// The directories, canonical.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// A layout with `tree` as its one writable tree and working directory, plus
    /// `writable_files` and `writable_dirs` outside it (they must exist); everything
    /// else read-only, hidden places empty, no network. A verify command's scratch copy
    /// or a replayed `run` action.
    pub fn layout(&self, tree: &Path, writable_files: &[&Path], writable_dirs: &[&Path]) -> Layout {
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        Layout {
            work_dir: abs(tree),
            start_dir: None,
            writable_files: writable_files.iter().map(|f| abs(f)).collect(),
            writable_dirs: writable_dirs.iter().map(|d| abs(d)).collect(),
            readable_files: Vec::new(),
            hidden: self.dirs.clone(),
            share_net: false,
        }
    }
}

/// Paths of one sandboxed process.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The work directory: writable, the agent's cwd.
    pub work_dir: PathBuf,
    /// Where the process starts instead, inside `work_dir` (a replayed `run` action
    /// whose shell had `cd`'d into a subdirectory); `None`: `work_dir`.
    pub start_dir: Option<PathBuf>,
    /// Files outside the work directory the agent may write (they must exist).
    pub writable_files: Vec<PathBuf>,
    /// Directories outside the work directory the agent may write.
    pub writable_dirs: Vec<PathBuf>,
    /// Files the agent may read although they lie in a hidden place.
    pub readable_files: Vec<PathBuf>,
    /// Directories whose content the agent must not see.
    pub hidden: Vec<PathBuf>,
    /// Keep the host's network (an agent CLI that calls its API needs it).
    pub share_net: bool,
}

impl Layout {
    /// bwrap's arguments up to and including `--`, to be followed by the program and
    /// its arguments.
    pub fn bwrap_args(&self) -> Vec<OsString> {
        let mut a: Vec<OsString> = Vec::new();
        let mut push = |flag: &str, paths: &[&Path]| {
            a.push(flag.into());
            for p in paths {
                a.push(p.as_os_str().to_owned());
            }
        };
        let root = Path::new("/");
        push("--ro-bind", &[root, root]);
        push("--dev", &[Path::new("/dev")]);
        push("--proc", &[Path::new("/proc")]);
        push("--tmpfs", &[Path::new("/tmp")]);
        for dir in &self.hidden {
            push("--tmpfs", &[dir]);
        }
        push("--bind", &[&self.work_dir, &self.work_dir]);
        for f in self.writable_files.iter().chain(&self.writable_dirs) {
            push("--bind", &[f, f]);
        }
        for f in &self.readable_files {
            push("--ro-bind", &[f, f]);
        }
        for flag in ["--unshare-all", "--die-with-parent", "--new-session"] {
            push(flag, &[]);
        }
        if self.share_net {
            push("--share-net", &[]);
        }
        push(
            "--chdir",
            &[self.start_dir.as_ref().unwrap_or(&self.work_dir)],
        );
        push("--", &[]);
        a
    }

    /// Whether `path` lies in a place this layout hides from the agent.
    pub fn hides(&self, path: &Path) -> bool {
        path.starts_with("/tmp")
            || path.starts_with("/dev")
            || self.hidden.iter().any(|h| path.starts_with(h))
    }
}

/// Checks that bwrap is installed and can create its namespaces here, for the agent
/// `agent`. The error (exit 2) names the agent and how to install bwrap.
pub fn check_bwrap(agent: &str) -> Result<()> {
    check_bwrap_for(&format!("agent '{agent}' uses sandbox = \"bwrap\""))
}

/// [`check_bwrap`] for whatever `needs` says wants the sandbox ("the suite sets
/// verify_sandbox = \"bwrap\"").
pub fn check_bwrap_for(needs: &str) -> Result<()> {
    let Some(bwrap) = find_program(BWRAP, std::env::var_os("PATH").as_deref()) else {
        return Err(Error::BadInput(format!(
            "{needs}, but bwrap is not installed \
             (on Debian or Ubuntu: apt-get install bubblewrap)"
        )));
    };
    let out = Command::new(&bwrap)
        .args(["--ro-bind", "/", "/", "--unshare-all", "--die-with-parent"])
        .args(["--new-session", "--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| {
            Error::BadInput(format!(
                "{needs}, but '{}' cannot be run: {e}",
                bwrap.display()
            ))
        })?;
    if !out.status.success() {
        return Err(Error::BadInput(format!(
            "{needs}, but bwrap cannot create its namespaces \
             on this machine: {} (user namespaces may be disabled, e.g. inside a container)",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

/// Whether bwrap is installed and works here. Probed once.
pub fn bwrap_works() -> bool {
    static WORKS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *WORKS.get_or_init(|| check_bwrap_for("probe").is_ok())
}

/// Resolves a program name as `execvp` would: a name with a `/` is taken as it is, a
/// bare name is looked up in `path` (`$PATH`). `None` when there is no executable file.
pub fn find_program(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    if program.is_empty() {
        return None;
    }
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

/// Why a sandboxed run failed before the agent started: bwrap reports its own setup
/// errors on stderr as `bwrap: ...` and exits 1.
pub fn setup_failure(code: Option<i32>, stderr_file: &Path) -> Option<String> {
    if code != Some(1) {
        return None;
    }
    // Only the first line matters, and the agent may have written gigabytes after it.
    let file = std::fs::File::open(stderr_file).ok()?;
    let mut lines = BoundedLines::new(std::io::BufReader::new(file), 4096);
    let Ok(Some((_, Line::Text(first)))) = lines.next_line() else {
        return None;
    };
    let first = String::from_utf8_lossy(first).into_owned();
    first.starts_with("bwrap: ").then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout {
            work_dir: "/dev/shm/t1/work".into(),
            start_dir: None,
            writable_files: vec!["/dev/shm/t1/effects.log".into()],
            writable_dirs: vec!["/dev/shm/t1/state".into()],
            readable_files: vec!["/dev/shm/t1/prompt.md".into()],
            hidden: vec!["/srv/run".into(), "/srv/suite/tasks/a/oracle".into()],
            share_net: false,
        }
    }

    #[test]
    fn the_network_is_shared_only_when_asked() {
        let has_share_net = |l: Layout| l.bwrap_args().iter().any(|a| a == "--share-net");
        assert!(!has_share_net(layout()));
        let netted = Layout {
            share_net: true,
            ..layout()
        };
        let args = netted.bwrap_args();
        let at = |s: &str| args.iter().position(|a| a == s).unwrap();
        assert!(
            at("--unshare-all") < at("--share-net"),
            "share-net must come after unshare-all"
        );
    }

    #[test]
    fn hidden_places_are_covered_before_the_work_directory_is_bound() {
        let args: Vec<String> = layout()
            .bwrap_args()
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        let at = |s: &str| args.iter().position(|a| a == s).unwrap();
        assert_eq!(&args[..3], ["--ro-bind", "/", "/"]);
        assert!(at("/srv/run") < at("/dev/shm/t1/work"));
        assert!(at("/srv/suite/tasks/a/oracle") < at("/dev/shm/t1/work"));
        for flag in ["--unshare-all", "--die-with-parent", "--new-session"] {
            assert!(args.contains(&flag.to_string()), "{flag}");
        }
        assert_eq!(args.last().unwrap(), "--");
        let chdir = at("--chdir");
        assert_eq!(args[chdir + 1], "/dev/shm/t1/work");
        let inside = Layout {
            start_dir: Some("/dev/shm/t1/work/tests".into()),
            ..layout()
        };
        let args = inside.bwrap_args();
        let chdir = args.iter().position(|a| a == "--chdir").unwrap();
        assert_eq!(args[chdir + 1], "/dev/shm/t1/work/tests");
    }

    #[test]
    fn programs_are_found_on_the_path_or_taken_as_given() {
        let sh = find_program("sh", std::env::var_os("PATH").as_deref()).unwrap();
        assert!(sh.ends_with("sh"));
        assert_eq!(
            find_program("no-such-agent-xyz", Some("/usr/bin".as_ref())),
            None
        );
        assert_eq!(find_program("/nonexistent/agent", None), None);
        assert_eq!(find_program("sh", None), None);
    }

    #[test]
    fn only_bwraps_own_complaint_is_a_setup_failure() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("err");
        std::fs::write(&f, "bwrap: execvp agent: No such file or directory\n").unwrap();
        assert!(setup_failure(Some(1), &f).is_some());
        assert!(setup_failure(Some(2), &f).is_none());
        std::fs::write(&f, "agent: something failed\n").unwrap();
        assert!(setup_failure(Some(1), &f).is_none());
    }
}
