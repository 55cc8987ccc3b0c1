//! Runs shell commands in their own process group with a time limit, so that a timeout
//! or a finished command never leaves grandchildren behind.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use wait_timeout::ChildExt;

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
    /// Run without network access where the machine allows it (`unshare -n`).
    pub no_network: bool,
}

impl ShellCommand<'_> {
    /// Runs the command with stdin, stdout and stderr connected to /dev/null.
    pub fn run(&self) -> std::io::Result<CommandOutcome> {
        self.run_with(Stdio::null(), Stdio::null())
    }

    /// Runs the command with the given stdout and stderr.
    pub fn run_with(&self, stdout: Stdio, stderr: Stdio) -> std::io::Result<CommandOutcome> {
        let mut cmd = if self.no_network && network_isolation_available() {
            let mut c = Command::new("unshare");
            c.args(["--net", "--", "sh", "-c", self.script]);
            c
        } else {
            let mut c = Command::new("sh");
            c.args(["-c", self.script]);
            c
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

/// Whether `unshare --net` works here (it needs root or user namespaces). Probed once.
pub fn network_isolation_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        Command::new("unshare")
            .args(["--net", "--", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
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
            no_network: false,
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
            no_network: false,
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
}
