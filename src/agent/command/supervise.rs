//! `loopbench supervise`: the process an agent session runs under, so that nothing the
//! agent started outlives its session. (A session in a bubblewrap sandbox with a cgroup
//! of its own needs none: its PID namespace and its cgroup hold everything it starts,
//! and the harness ends the cgroup once the sandbox is gone.)
//!
//! A process group is not enough: an agent can leave it (`setsid sleep 600 &`, a daemon
//! that double-forks). The supervisor is a *child subreaper*: every process the agent
//! orphans is re-parented to it instead of to init. It runs the agent as its child, in
//! its own process group (which the harness signals as before: SIGTERM at the time
//! limit reaches the agent directly). When the agent has exited, or when the harness
//! asks it to end everything (SIGUSR1, instead of SIGKILL to the group, which would
//! kill the supervisor first), it kills whatever is left, its own process group and
//! every process re-parented to it, until nothing remains, and writes the agent's wait
//! status to a file for the harness. When the harness itself dies, the kernel sends
//! the supervisor SIGUSR1 (parent-death signal), so the same clean-up happens.
//!
//! SIGTERM, SIGINT and SIGHUP do not stop the supervisor: they are for the agent,
//! which shares its process group.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::sys::wait::{WaitPidFlag, waitpid};
use nix::unistd::{Pid, getpgrp, getpid};
use wait_timeout::ChildExt;

/// The subcommand name (hidden from `--help`).
pub const SUBCOMMAND: &str = "supervise";

/// How often the supervisor looks at its flags while the agent runs.
const POLL: Duration = Duration::from_millis(50);
/// Longest the clean-up keeps killing new processes (a fork bomb) before it gives up.
pub const SWEEP_LIMIT: Duration = Duration::from_secs(10);

/// Runs `program args` under supervision and writes its raw wait status to
/// `status_file`. Returns the supervisor's exit code: 0 when the status was written.
pub fn supervise(program: &str, args: &[String], status_file: &Path) -> i32 {
    let _ = nix::sys::prctl::set_child_subreaper(true);
    let end_all = Arc::new(AtomicBool::new(false));
    let ignored = Arc::new(AtomicBool::new(false));
    let registered =
        signal_hook::flag::register(Signal::SIGUSR1 as i32, end_all.clone()).and_then(|_| {
            [Signal::SIGTERM, Signal::SIGINT, Signal::SIGHUP]
                .into_iter()
                .try_for_each(|s| signal_hook::flag::register(s as i32, ignored.clone()).map(drop))
        });
    if registered.is_err() {
        return 70;
    }
    let parent = nix::unistd::getppid();
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGUSR1);
    if nix::unistd::getppid() != parent {
        // The harness died before the death signal was set up.
        end_all.store(true, Ordering::SeqCst);
    }

    let mut child = match Command::new(program).args(args).spawn() {
        Ok(child) => child,
        Err(e) => {
            // 127 as a shell reports a program it cannot run; the harness reads the file.
            let _ = crate::agent_file::replace(status_file, format!("spawn {e}\n").as_bytes());
            return 127;
        }
    };
    let status = loop {
        if end_all.load(Ordering::SeqCst) {
            sweep(Some(child.id()));
            break child.wait().ok();
        }
        match child.wait_timeout(POLL) {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
    };
    sweep(None);
    let raw = status.map_or(Signal::SIGKILL as i32, |s| s.into_raw());
    // Replaced, not opened: the agent may have left a FIFO there.
    match crate::agent_file::replace(status_file, format!("{raw}\n").as_bytes()) {
        Ok(()) => 0,
        Err(_) => 70,
    }
}

/// Kills every process left of the session, the agent `first` included when given:
/// members of this process group and processes re-parented to this one, again and
/// again until there are none (each kill can orphan more), reaping as it goes.
fn sweep(first: Option<u32>) {
    if let Some(pid) = first.and_then(|p| i32::try_from(p).ok()) {
        let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
    }
    let me = getpid();
    let group = getpgrp();
    let start = Instant::now();
    loop {
        let left = session_processes(me, group);
        for pid in &left {
            let _ = kill(*pid, Signal::SIGKILL);
        }
        // Reap whatever has died; a child that is still dying is seen next round.
        while let Ok(status) = waitpid(Pid::from_raw(-1), Some(WaitPidFlag::WNOHANG)) {
            if status == nix::sys::wait::WaitStatus::StillAlive {
                break;
            }
        }
        if left.is_empty() || start.elapsed() > SWEEP_LIMIT {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Processes other than `me` whose parent is `me` or whose process group is `group`.
fn session_processes(me: Pid, group: Pid) -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|&pid| pid != me.as_raw())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // The command name may hold spaces and parentheses: fields follow the last ')'.
            let rest = &stat[stat.rfind(')')? + 1..];
            let mut fields = rest.split_whitespace();
            let state = fields.next()?;
            let ppid: i32 = fields.next()?.parse().ok()?;
            let pgrp: i32 = fields.next()?.parse().ok()?;
            let ours = ppid == me.as_raw() || pgrp == group.as_raw();
            // A zombie cannot be killed, only reaped (which the caller does).
            (ours && (state != "Z" || ppid == me.as_raw())).then(|| Pid::from_raw(pid))
        })
        .collect()
}

/// Reads the wait status a supervisor wrote; `None` when it wrote none (it was killed).
pub fn read_status(status_file: &Path) -> Option<std::process::ExitStatus> {
    let text = status_text(status_file)?;
    text.trim()
        .parse::<i32>()
        .ok()
        .map(std::process::ExitStatus::from_raw)
}

/// Why the supervisor could not start the agent, when that is what its file says.
pub fn spawn_error(status_file: &Path) -> Option<String> {
    let text = status_text(status_file)?;
    text.strip_prefix("spawn ").map(|e| e.trim().to_string())
}

/// The text of a supervisor's status file, read without blocking on whatever stands
/// there (it lies outside the work directory, where an unsandboxed agent can still
/// reach it); `None` when it is missing or not a small regular file.
fn status_text(status_file: &Path) -> Option<String> {
    match crate::agent_file::read(status_file, 4096, crate::agent_file::Links::Refuse) {
        Ok(crate::agent_file::AgentFile::Bytes(bytes)) => String::from_utf8(bytes).ok(),
        _ => None,
    }
}
