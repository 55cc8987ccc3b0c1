//! The one way the harness starts a process it must be able to end completely: as the
//! leader of a new process group, so that a signal to the group reaches everything the
//! process started that stayed in it (background jobs, grandchildren), and so that when
//! the leader is gone, however it ended, the rest of its group is killed too.
//!
//! Verify commands and trace `run` actions (`process`), agent sessions
//! (`agent::command::child`), the harness's git calls (`git`) and the agent
//! CLI around the scripted model server all end their process groups through here.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use wait_timeout::ChildExt;

use crate::fresh_namespaces::{NamespacedChild, Start};

/// A process group, named by its leader's pid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Group(Pid);

impl Group {
    /// The group `pid` leads (the pid of a child spawned with `process_group(0)`).
    pub fn led_by(pid: u32) -> Group {
        Group(Pid::from_raw(i32::try_from(pid).unwrap_or(i32::MAX)))
    }

    /// The group id as the kernel has it.
    pub fn raw(self) -> i32 {
        self.0.as_raw()
    }

    /// Sends `signal` to every process of the group. A group that is already gone is
    /// not an error: ending it is what was wanted.
    pub fn signal(self, signal: Signal) {
        let _ = killpg(self.0, signal);
    }

    /// SIGKILL to every process of the group.
    pub fn kill(self) {
        self.signal(Signal::SIGKILL);
    }
}

/// A child spawned as the leader of a new process group. Dropping it kills the group,
/// so that nothing the child left behind outlives the handle.
#[derive(Debug)]
pub struct Leader {
    child: LeaderChild,
    group: Group,
}

/// The leader as it was started: by the standard library, or cloned into namespaces of
/// its own.
#[derive(Debug)]
enum LeaderChild {
    Std(Child),
    Namespaced(NamespacedChild),
}

impl Leader {
    /// Spawns `cmd` as the leader of a new process group.
    pub fn spawn(cmd: &mut Command) -> std::io::Result<Leader> {
        let child = cmd.process_group(0).spawn()?;
        let group = Group::led_by(child.id());
        Ok(Leader {
            child: LeaderChild::Std(child),
            group,
        })
    }

    /// Starts `start` in namespaces of its own, the leader of a new process group.
    pub fn spawn_namespaced(start: &Start) -> std::io::Result<Leader> {
        let child = start.spawn()?;
        let group = Group::led_by(child.id());
        Ok(Leader {
            child: LeaderChild::Namespaced(child),
            group,
        })
    }

    /// The leader's process group.
    pub fn group(&self) -> Group {
        self.group
    }

    /// Sends `signal` to the leader alone (a supervisor that ends its group itself).
    pub fn signal_leader(&self, signal: Signal) {
        let _ = nix::sys::signal::kill(self.group.0, signal);
    }

    /// Waits for the leader up to `timeout`; `None` when it is still running.
    pub fn wait_timeout(&mut self, timeout: Duration) -> std::io::Result<Option<ExitStatus>> {
        match &mut self.child {
            LeaderChild::Std(child) => child.wait_timeout(timeout),
            LeaderChild::Namespaced(child) => child.wait_timeout(timeout),
        }
    }

    /// Waits for the leader to exit.
    pub fn wait(&mut self) -> std::io::Result<ExitStatus> {
        match &mut self.child {
            LeaderChild::Std(child) => child.wait(),
            LeaderChild::Namespaced(child) => child.wait(),
        }
    }

    /// Ends the group at a time limit: SIGTERM to the group, then after `grace` (if the
    /// leader has not exited) SIGKILL, and returns the leader's status.
    pub fn terminate(&mut self, grace: Duration) -> std::io::Result<ExitStatus> {
        self.group.signal(Signal::SIGTERM);
        if let Some(status) = self.wait_timeout(grace)? {
            return Ok(status);
        }
        self.kill_and_wait()
    }

    /// SIGKILL to the group, then waits for the leader.
    pub fn kill_and_wait(&mut self) -> std::io::Result<ExitStatus> {
        self.group.kill();
        self.wait()
    }
}

impl Drop for Leader {
    fn drop(&mut self) {
        // Background jobs and grandchildren of a leader that exited must not outlive it.
        self.group.kill();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn alive(pid: i32) -> bool {
        nix::sys::signal::kill(Pid::from_raw(pid), None).is_ok()
    }

    /// A leader that runs `before`, starts a background job, writes the job's pid (so
    /// that `before` has run when this returns) and then runs `after`.
    fn leader_with_job(before: &str, after: &str) -> (Leader, i32) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pid");
        let mut cmd = Command::new("sh");
        cmd.args([
            "-c",
            &format!("{before}; sleep 30 & echo $! > {}; {after}", file.display()),
        ]);
        let leader = Leader::spawn(&mut cmd).unwrap();
        let start = Instant::now();
        let pid = loop {
            if let Some(pid) = std::fs::read_to_string(&file)
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok())
            {
                break pid;
            }
            assert!(start.elapsed() < Duration::from_secs(10));
            std::thread::sleep(Duration::from_millis(10));
        };
        (leader, pid)
    }

    /// Waits for `pid` to be gone (a killed process is reaped by init, not at once).
    fn gone_soon(pid: i32) -> bool {
        let start = Instant::now();
        while alive(pid) {
            // A zombie whose parent (the exited leader) is gone is reaped by init.
            if start.elapsed() > Duration::from_secs(5) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    #[test]
    fn dropping_a_leader_that_exited_kills_its_background_job() {
        let (mut leader, job) = leader_with_job(":", "exit 0");
        assert!(leader.wait().unwrap().success());
        assert!(alive(job), "the job runs until the handle goes");
        drop(leader);
        assert!(gone_soon(job));
    }

    #[test]
    fn terminate_kills_a_leader_that_ignores_sigterm_after_the_grace() {
        let (mut leader, job) = leader_with_job("trap '' TERM", "while :; do sleep 0.05; done");
        let start = Instant::now();
        let status = leader.terminate(Duration::from_millis(300)).unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(9), "{status:?}");
        // wait_timeout may come back a little early; the SIGKILL came after the grace.
        assert!(
            start.elapsed() >= Duration::from_millis(250),
            "{:?}",
            start.elapsed()
        );
        // The job ignores SIGTERM too (inherited), so only the SIGKILL ended it.
        assert!(gone_soon(job));
    }

    #[test]
    fn terminate_returns_the_status_of_a_leader_that_exits_on_sigterm() {
        let (mut leader, _job) =
            leader_with_job("trap 'exit 7' TERM", "while :; do sleep 0.05; done");
        let status = leader.terminate(Duration::from_secs(10)).unwrap();
        assert_eq!(status.code(), Some(7));
    }
}
