//! Runs shell commands (verify commands, a replayed trace's `run` actions, the sim
//! agent's git calls) with a time limit, so that nothing they started outlives them.
//!
//! Containment, strongest first: under bubblewrap (a [`Layout`]) the command has its
//! own PID namespace, which dies with it; otherwise, where the machine allows it
//! (`unshare` as root), it runs as the first process of a fresh PID namespace, so that
//! even a process that left its process group (`setsid`) is killed when the command
//! ends; failing that, its process group is killed.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use wait_timeout::ChildExt;

use crate::sandbox::{BWRAP, Layout};

/// How long a process group gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandOutcome {
    /// Exit code, `None` when killed by a signal (including our timeout).
    pub code: Option<i32>,
    /// The time limit was reached and the group was killed.
    pub timed_out: bool,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
}

impl CommandOutcome {
    /// Exited 0 within the time limit.
    pub fn success(&self) -> bool {
        !self.timed_out && self.code == Some(0)
    }
}

/// A shell command to run with `sh -c`.
pub struct ShellCommand<'a> {
    /// The command line.
    pub script: &'a str,
    /// Working directory.
    pub cwd: &'a Path,
    /// Variables added to (or overriding) the inherited environment.
    pub env: &'a [(String, OsString)],
    /// Time limit; the whole process group is killed when it is reached.
    pub timeout: Duration,
    /// How the command is kept in.
    pub isolation: Isolation<'a>,
}

/// How a [`ShellCommand`] is kept in.
#[derive(Debug, Clone, Copy)]
pub enum Isolation<'a> {
    /// Its own process group, killed when it ends: for the harness's own trusted
    /// commands (the sim agent's git calls).
    ProcessGroup,
    /// On the host, in a fresh PID namespace (and without network) as far as
    /// [`containment`] allows: for agent-written code when no sandbox is asked for.
    Host,
    /// Under bubblewrap in this layout (no network, own PID namespace); the command's
    /// `cwd` should be the layout's work directory.
    Sandbox(&'a Layout),
}

impl ShellCommand<'_> {
    /// Runs the command with stdin, stdout and stderr connected to /dev/null.
    pub fn run(&self) -> std::io::Result<CommandOutcome> {
        self.run_with(Stdio::null(), Stdio::null())
    }

    /// Runs the command with the given stdout and stderr.
    pub fn run_with(&self, stdout: Stdio, stderr: Stdio) -> std::io::Result<CommandOutcome> {
        let host = containment();
        let mut cmd = match self.isolation {
            Isolation::Sandbox(layout) => {
                let mut c = Command::new(BWRAP);
                c.args(layout.bwrap_args()).args(["sh", "-c", self.script]);
                c
            }
            Isolation::Host if host.pid_namespace || host.network_namespace => {
                let mut c = Command::new("unshare");
                if host.network_namespace {
                    c.arg("--net");
                }
                if host.pid_namespace {
                    c.args(["--pid", "--fork", "--kill-child"]);
                }
                c.args(["--", "sh", "-c", self.script]);
                c
            }
            Isolation::Host | Isolation::ProcessGroup => {
                let mut c = Command::new("sh");
                c.args(["-c", self.script]);
                c
            }
        };
        cmd.current_dir(self.cwd)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            .process_group(0);
        let start = Instant::now();
        let mut child = cmd.spawn()?;
        let pgid = Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX));
        let status = match child.wait_timeout(self.timeout)? {
            Some(status) => {
                // Background jobs the command left behind must not outlive it.
                let _ = killpg(pgid, Signal::SIGKILL);
                return Ok(CommandOutcome {
                    code: status.code(),
                    timed_out: false,
                    elapsed: start.elapsed(),
                });
            }
            None => {
                let _ = killpg(pgid, Signal::SIGTERM);
                match child.wait_timeout(KILL_GRACE)? {
                    Some(status) => status,
                    None => {
                        let _ = killpg(pgid, Signal::SIGKILL);
                        child.wait()?
                    }
                }
            }
        };
        let _ = killpg(pgid, Signal::SIGKILL);
        Ok(CommandOutcome {
            code: status.code(),
            timed_out: true,
            elapsed: start.elapsed(),
        })
    }
}

/// What this machine lets the harness do to contain a command run on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Containment {
    /// `unshare --net` works: no network.
    pub network_namespace: bool,
    /// `unshare --pid --fork --kill-child` works: nothing outlives the command.
    pub pid_namespace: bool,
}

/// Probes, once, what `unshare` can do here (it needs root or user namespaces).
pub fn containment() -> Containment {
    static FOUND: OnceLock<Containment> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let works = |args: &[&str]| {
            Command::new("unshare")
                .args(args)
                .args(["--", "true"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        Containment {
            network_namespace: works(&["--net"]),
            pid_namespace: works(&["--pid", "--fork", "--kill-child"]),
        }
    })
}

/// Whether `unshare --net` works here (it needs root or user namespaces). Probed once.
pub fn network_isolation_available() -> bool {
    containment().network_namespace
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, timeout: Duration) -> CommandOutcome {
        let dir = tempfile::tempdir().unwrap();
        ShellCommand {
            script,
            cwd: dir.path(),
            env: &[],
            timeout,
            isolation: Isolation::ProcessGroup,
        }
        .run()
        .unwrap()
    }

    #[test]
    fn exit_codes_are_reported() {
        assert!(sh("exit 0", Duration::from_secs(10)).success());
        assert_eq!(sh("exit 3", Duration::from_secs(10)).code, Some(3));
    }

    #[test]
    fn a_hanging_command_is_killed_at_the_timeout() {
        let out = sh("sleep 30", Duration::from_millis(200));
        assert!(out.timed_out);
        assert!(!out.success());
        assert!(out.elapsed < Duration::from_secs(10));
    }

    #[test]
    fn a_grandchild_does_not_outlive_its_command() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!("sleep 300 & echo $! > {}; exit 0", pidfile.display());
        ShellCommand {
            script: &script,
            cwd: dir.path(),
            env: &[],
            timeout: Duration::from_secs(10),
            isolation: Isolation::ProcessGroup,
        }
        .run()
        .unwrap();
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        // Reaped by init or a zombie at most: never still sleeping.
        std::thread::sleep(Duration::from_millis(100));
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let running = state
            .split(") ")
            .nth(1)
            .is_some_and(|rest| !rest.starts_with('Z'));
        assert!(!running, "grandchild {pid} still alive: {state}");
    }

    #[test]
    fn a_process_that_left_the_group_does_not_outlive_its_command_where_namespaces_work() {
        if !containment().pid_namespace {
            eprintln!("skipped: unshare --pid does not work here");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!(
            "setsid sh -c 'read -r p _ < /proc/self/stat; echo $p > {}; exec sleep 300' & sleep 0.2; exit 0",
            pidfile.display()
        );
        sh_in(&script, dir.path());
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        std::thread::sleep(Duration::from_millis(100));
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let running = state
            .split(") ")
            .nth(1)
            .is_some_and(|rest| !rest.starts_with('Z'));
        assert!(!running, "setsid process {pid} still alive: {state}");
    }

    fn sh_in(script: &str, cwd: &Path) -> CommandOutcome {
        ShellCommand {
            script,
            cwd,
            env: &[],
            timeout: Duration::from_secs(10),
            isolation: Isolation::Host,
        }
        .run()
        .unwrap()
    }
}
