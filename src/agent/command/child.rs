//! One agent process in its own process group, waited for with a time limit and an
//! optional crash moment; whatever ends it, nothing of its group is left running. Run
//! under `loopbench supervise` (see [`super::supervise`]), nothing it started at all is.

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use wait_timeout::ChildExt;

/// How long an agent's process group gets between SIGTERM and SIGKILL at its timeout:
/// long enough for an agent CLI to flush its transcript.
pub const KILL_GRACE: Duration = Duration::from_secs(5);

/// Limits of one run.
#[derive(Debug, Clone)]
pub struct Limits {
    /// SIGTERM to the group after this long, SIGKILL `grace` later.
    pub timeout: Duration,
    /// Between SIGTERM and SIGKILL.
    pub grace: Duration,
    /// SIGKILL to the group after this long: an injected crash.
    pub crash_after: Option<Duration>,
    /// The command is `loopbench supervise --status FILE -- ...` with this FILE: the
    /// group is ended by SIGUSR1 to the supervisor (which then kills everything the
    /// agent started, and reports the agent's status in FILE) instead of SIGKILL.
    pub supervised: Option<std::path::PathBuf>,
}

/// Longest a supervisor may take to end everything after SIGUSR1 before its group is
/// killed outright.
const SUPERVISOR_GRACE: Duration = Duration::from_secs(15);

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    /// It exited (or died of a signal nobody here sent).
    Exited(ExitStatus),
    /// It reached its timeout and the group was killed.
    TimedOut,
    /// The injected crash killed the group.
    Crashed,
}

/// Process groups of agents now running, so that an interrupted run can stop them.
static RUNNING: Mutex<BTreeSet<i32>> = Mutex::new(BTreeSet::new());

/// Sends SIGTERM (or, with `force`, the signal that ends everything: SIGUSR1, which
/// a supervisor turns into SIGKILL for every process of the session, and which kills
/// an unsupervised agent too) to the process group of every agent session in flight.
/// For a run that is being interrupted: each session then ends as its agent died
/// (`interrupted` after a kill, or however the agent reports it).
pub fn signal_running_agents(force: bool) {
    let signal = if force {
        Signal::SIGUSR1
    } else {
        Signal::SIGTERM
    };
    let groups: Vec<i32> = RUNNING
        .lock()
        .map(|g| g.iter().copied().collect())
        .unwrap_or_default();
    for pgid in groups {
        let _ = killpg(Pid::from_raw(pgid), signal);
    }
}

/// Spawns `cmd` as the leader of a new process group and waits for it within `limits`.
/// Returns the spawn error unchanged (the caller decides whether to retry).
pub fn run(mut cmd: Command, limits: Limits) -> std::io::Result<(Ended, Duration)> {
    if let Some(file) = &limits.supervised {
        // A status left from an earlier try must not be read as this one's.
        let _ = std::fs::remove_file(file);
    }
    cmd.process_group(0);
    let start = Instant::now();
    let mut child = cmd.spawn()?;
    let raw = i32::try_from(child.id()).unwrap_or(i32::MAX);
    let pgid = Pid::from_raw(raw);
    if let Ok(mut g) = RUNNING.lock() {
        g.insert(raw);
    }
    let ended = wait(&mut child, pgid, start, &limits);
    // Whatever ended the leader, the rest of its group (background jobs, grandchildren)
    // must not outlive the session.
    let _ = killpg(pgid, Signal::SIGKILL);
    if let Ok(mut g) = RUNNING.lock() {
        g.remove(&raw);
    }
    let ended = match (ended?, &limits.supervised) {
        (Ended::Exited(own), Some(file)) => {
            Ended::Exited(super::supervise::read_status(file).unwrap_or(own))
        }
        (ended, _) => ended,
    };
    Ok((ended, start.elapsed()))
}

/// Ends the group at once: SIGUSR1 to a supervisor (which kills everything the agent
/// started, wherever it went), SIGKILL to the group otherwise or when it does not end.
fn end_group(child: &mut std::process::Child, pgid: Pid, limits: &Limits) -> std::io::Result<()> {
    if limits.supervised.is_some() {
        let _ = nix::sys::signal::kill(pgid, Signal::SIGUSR1);
        if child.wait_timeout(SUPERVISOR_GRACE)?.is_some() {
            return Ok(());
        }
    }
    let _ = killpg(pgid, Signal::SIGKILL);
    child.wait()?;
    Ok(())
}

fn wait(
    child: &mut std::process::Child,
    pgid: Pid,
    start: Instant,
    limits: &Limits,
) -> std::io::Result<Ended> {
    let deadline = start + limits.timeout;
    let crash_at = limits.crash_after.map(|d| start + d);
    loop {
        let now = Instant::now();
        let next = crash_at.map_or(deadline, |c| c.min(deadline));
        if now >= next {
            break;
        }
        if let Some(status) = child.wait_timeout(next - now)? {
            return Ok(Ended::Exited(status));
        }
    }
    if crash_at.is_some_and(|c| c <= deadline) {
        end_group(child, pgid, limits)?;
        return Ok(Ended::Crashed);
    }
    let _ = killpg(pgid, Signal::SIGTERM);
    if child.wait_timeout(limits.grace)?.is_none() {
        end_group(child, pgid, limits)?;
    }
    Ok(Ended::TimedOut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, limits: Limits) -> (Ended, Duration) {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        run(cmd, limits).unwrap()
    }

    fn limits(timeout_ms: u64) -> Limits {
        Limits {
            timeout: Duration::from_millis(timeout_ms),
            grace: Duration::from_millis(300),
            crash_after: None,
            supervised: None,
        }
    }

    #[test]
    fn an_exit_code_is_returned_as_it_is() {
        match sh("exit 3", limits(10_000)).0 {
            Ended::Exited(s) => assert_eq!(s.code(), Some(3)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_process_that_ignores_sigterm_is_killed_after_the_grace() {
        let (ended, elapsed) = sh("trap '' TERM; while :; do sleep 0.05; done", limits(200));
        assert_eq!(ended, Ended::TimedOut);
        assert!(elapsed >= Duration::from_millis(450), "{elapsed:?}");
        assert!(elapsed < Duration::from_secs(5), "{elapsed:?}");
    }

    #[test]
    fn a_crash_moment_before_the_timeout_kills_the_group() {
        let mut l = limits(10_000);
        l.crash_after = Some(Duration::from_millis(100));
        let (ended, elapsed) = sh("sleep 30", l);
        assert_eq!(ended, Ended::Crashed);
        assert!(elapsed < Duration::from_secs(5));
    }

    #[test]
    fn a_crash_moment_after_the_timeout_is_a_timeout() {
        let mut l = limits(100);
        l.crash_after = Some(Duration::from_secs(20));
        assert_eq!(sh("sleep 30", l).0, Ended::TimedOut);
    }

    #[test]
    fn a_process_that_ends_before_its_crash_moment_just_exits() {
        let mut l = limits(10_000);
        l.crash_after = Some(Duration::from_secs(20));
        assert!(matches!(sh("true", l).0, Ended::Exited(s) if s.success()));
    }

    #[test]
    fn a_spawn_error_is_returned() {
        let cmd = Command::new("/nonexistent/agent");
        assert!(run(cmd, limits(1000)).is_err());
    }
}
