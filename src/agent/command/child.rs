//! One agent process in its own process group, waited for with a time limit and an
//! optional crash moment; whatever ends it, nothing of its group is left running. Its
//! stdout and stderr can be captured into files, each up to a cap. Run under
//! `loopbench supervise` (see [`super::supervise`]), or in a sandbox whose cgroup holds
//! everything it starts (ended by the caller's `end_rest`), nothing it started at all
//! is left.

use std::collections::BTreeMap;
use std::fs::File;
use std::process::{Command, ExitStatus};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use nix::sys::signal::Signal;

use super::capture::{Captured, Copier};
use crate::process_group::{Group, Leader};

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

/// How long the captured streams may stay open once the process group is gone: its
/// members close them as they die; a process that left the group may hold them longer.
const DRAIN: Duration = Duration::from_secs(2);

/// Where a run's stdout and stderr go: each into its file, at most `limit` bytes.
#[derive(Debug)]
pub struct Capture {
    /// The stdout capture file.
    pub stdout: File,
    /// The stderr capture file.
    pub stderr: File,
    /// Cap of each stream.
    pub limit: u64,
}

/// A finished run.
#[derive(Debug)]
pub struct Ran {
    /// How it ended.
    pub ended: Ended,
    /// stdout and stderr, when they were captured.
    pub captured: Vec<Captured>,
}

/// Process groups of agents now running, each with the signal that ends everything
/// of it, so that an interrupted run can stop them.
static RUNNING: Mutex<BTreeMap<Group, Signal>> = Mutex::new(BTreeMap::new());

/// Sends SIGTERM (or, with `force`, the signal that ends everything: SIGUSR1 to a
/// supervised session, which its supervisor turns into SIGKILL for every process of the
/// session, SIGKILL to the sandbox of any other) to the process group of every agent
/// session in flight. For a run that is being interrupted: each session then ends as
/// its agent died (`interrupted` after a kill, or however the agent reports it).
pub fn signal_running_agents(force: bool) {
    let groups: Vec<(Group, Signal)> = RUNNING
        .lock()
        .map(|g| g.iter().map(|(g, s)| (*g, *s)).collect())
        .unwrap_or_default();
    for (group, ends_all) in groups {
        group.signal(if force { ends_all } else { Signal::SIGTERM });
    }
}

/// Spawns `cmd` as the leader of a new process group and waits for it within `limits`.
/// With `capture`, its stdout and stderr are pipes read by one thread each into the
/// capture files (so that the agent never blocks on a full pipe, however much it
/// prints); they are read to their end, or for [`DRAIN`] after the group is killed.
/// `end_rest`: what ends every process the session left outside the group once the
/// leader is gone (a sandbox's cgroup), before the capture is drained; `None` under a
/// supervisor, or where the group is all. Returns the spawn error unchanged (the caller
/// decides whether to retry).
pub fn run(
    mut cmd: Command,
    limits: Limits,
    capture: Option<Capture>,
    end_rest: Option<&dyn Fn()>,
) -> std::io::Result<Ran> {
    if let Some(file) = &limits.supervised {
        // A status left from an earlier try must not be read as this one's.
        let _ = std::fs::remove_file(file);
    }
    let mut copiers = Vec::new();
    if let Some(capture) = capture {
        // The copiers start before the agent, so that a failure to start one leaves no
        // agent behind; the write ends go to the child and are closed here with `cmd`.
        let (out_r, out_w) = std::io::pipe()?;
        let (err_r, err_w) = std::io::pipe()?;
        copiers.push(Copier::start(
            "stdout",
            out_r,
            capture.stdout,
            capture.limit,
        )?);
        copiers.push(Copier::start(
            "stderr",
            err_r,
            capture.stderr,
            capture.limit,
        )?);
        cmd.stdout(out_w).stderr(err_w);
    }
    let start = Instant::now();
    let spawned = Leader::spawn(&mut cmd);
    // Our copies of the pipes' write ends, or the copiers never see the end.
    drop(cmd);
    let mut leader = spawned?;
    let group = leader.group();
    let ends_all = if limits.supervised.is_some() {
        Signal::SIGUSR1
    } else {
        Signal::SIGKILL
    };
    if let Ok(mut g) = RUNNING.lock() {
        g.insert(group, ends_all);
    }
    let ended = wait(&mut leader, start, &limits);
    // Whatever ended the leader, the rest of its group (background jobs, grandchildren)
    // must not outlive the session, nor anything it started elsewhere.
    drop(leader);
    if let Some(end_rest) = end_rest {
        end_rest();
    }
    if let Ok(mut g) = RUNNING.lock() {
        g.remove(&group);
    }
    let drain_until = Instant::now() + DRAIN;
    let captured = copiers
        .into_iter()
        .map(|c| c.finish(drain_until.saturating_duration_since(Instant::now())))
        .collect();
    let ended = match (ended?, &limits.supervised) {
        (Ended::Exited(own), Some(file)) => {
            Ended::Exited(super::supervise::read_status(file).unwrap_or(own))
        }
        (ended, _) => ended,
    };
    Ok(Ran { ended, captured })
}

/// Ends the group at once: SIGUSR1 to a supervisor (which kills everything the agent
/// started, wherever it went), SIGKILL to the group otherwise or when it does not end.
fn end_group(leader: &mut Leader, limits: &Limits) -> std::io::Result<()> {
    if limits.supervised.is_some() {
        // To the supervisor itself, not its group: it ends the agent's processes.
        leader.signal_leader(Signal::SIGUSR1);
        if leader.wait_timeout(SUPERVISOR_GRACE)?.is_some() {
            return Ok(());
        }
    }
    leader.kill_and_wait().map(drop)
}

fn wait(leader: &mut Leader, start: Instant, limits: &Limits) -> std::io::Result<Ended> {
    let deadline = start + limits.timeout;
    let crash_at = limits.crash_after.map(|d| start + d);
    loop {
        let now = Instant::now();
        let next = crash_at.map_or(deadline, |c| c.min(deadline));
        if now >= next {
            break;
        }
        if let Some(status) = leader.wait_timeout(next - now)? {
            return Ok(Ended::Exited(status));
        }
    }
    if crash_at.is_some_and(|c| c <= deadline) {
        end_group(leader, limits)?;
        return Ok(Ended::Crashed);
    }
    leader.group().signal(Signal::SIGTERM);
    if leader.wait_timeout(limits.grace)?.is_none() {
        end_group(leader, limits)?;
    }
    Ok(Ended::TimedOut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, limits: Limits) -> (Ended, Duration) {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        let start = Instant::now();
        let ran = run(cmd, limits, None, None).unwrap();
        (ran.ended, start.elapsed())
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

    fn captured_sh(
        script: &str,
        limit: u64,
        dir: &std::path::Path,
    ) -> (Ran, Duration, Vec<u8>, Vec<u8>) {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", script]);
        let capture = Capture {
            stdout: File::create(dir.join("out")).unwrap(),
            stderr: File::create(dir.join("err")).unwrap(),
            limit,
        };
        let start = Instant::now();
        let ran = run(cmd, limits(30_000), Some(capture), None).unwrap();
        let elapsed = start.elapsed();
        let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
        (ran, elapsed, read("out"), read("err"))
    }

    #[test]
    fn a_loud_agent_never_blocks_on_its_pipe_and_its_capture_stops_at_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let (ran, _, out, err) = captured_sh(
            "head -c 20000000 /dev/zero; echo done >&2",
            1000,
            dir.path(),
        );
        assert!(
            matches!(ran.ended, Ended::Exited(s) if s.success()),
            "{ran:?}"
        );
        assert!(out.len() <= 1000, "{}", out.len());
        assert_eq!(err, b"done\n");
        let [stdout, stderr] = &ran.captured[..] else {
            panic!("{ran:?}");
        };
        assert_eq!(stdout.total, 20_000_000);
        assert!(stdout.note().is_some());
        assert_eq!(stderr.note(), None);
    }

    #[test]
    fn a_process_that_left_the_group_cannot_hold_the_session_open_through_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("escaped.pid");
        let script = format!(
            "setsid sh -c 'echo $$ > {p}; exec sleep 30' &\nwhile [ ! -s {p} ]; do sleep 0.05; done\necho hi",
            p = pidfile.display()
        );
        let (ran, elapsed, out, _) = captured_sh(&script, 1000, dir.path());
        let pid: i32 = std::fs::read_to_string(&pidfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), Signal::SIGKILL);
        assert!(
            matches!(ran.ended, Ended::Exited(s) if s.success()),
            "{ran:?}"
        );
        assert!(elapsed < DRAIN + Duration::from_secs(5), "{elapsed:?}");
        assert_eq!(out, b"hi\n");
        assert!(ran.captured.iter().all(|c| c.held_open), "{ran:?}");
    }

    #[test]
    fn a_spawn_error_is_returned() {
        let cmd = Command::new("/nonexistent/agent");
        assert!(run(cmd, limits(1000), None, None).is_err());
    }
}
