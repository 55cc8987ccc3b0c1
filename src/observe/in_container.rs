//! A check in a fresh container of the task's image, never the agent's: the scratch
//! copy of the work directory (the pristine tests laid over it, as on the host) mounted
//! at the task's `workdir`. A loopbench task's verify command runs there as it would in
//! the bubblewrap sandbox; a container task's own check (Harbor's `tests/test.sh`) gets
//! its tests dirs merged at `/tests` (read-only), `/logs/verifier` a writable
//! directory of the harness's, its `env` and its timeout, the network only where the
//! task allows it, and passes on the reward it wrote ([`super::judge_reward`]), never on
//! its exit status.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::error::{IoContext, Result, SandboxError};
use crate::process::{Isolation, ShellCommand};
use crate::sandbox::container::{Mount, TaskContainer, container_user};
use crate::suite::{ContainerCheck, TESTS_AT};

use super::reward::{REWARD_DIR, RewardVerdict, judge_reward};

/// Where a check runs when its task runs in a container.
#[derive(Debug, Clone, Copy)]
pub struct InContainer<'a> {
    /// The task's containers.
    pub task: &'a TaskContainer,
    /// The feature's own check, when the task has one (a Harbor step); `None`: its
    /// verify command.
    pub check: Option<&'a ContainerCheck>,
}

/// How one run in a container ended: like a command's, and for a check judged by its
/// reward, that verdict.
pub struct RanInContainer {
    /// How the command ended.
    pub outcome: crate::process::CommandOutcome,
    /// The end of its stdout.
    pub stdout: Vec<u8>,
    /// The end of its stderr.
    pub stderr: Vec<u8>,
    /// The reward's verdict, for a check judged by it.
    pub reward: Option<RewardVerdict>,
}

impl InContainer<'_> {
    /// Runs `command` in a fresh container over `tree` (a scratch copy in `scratch`,
    /// its own directory), with `env` and, readable at their own paths, `readable`
    /// (the entry point's directory); `writable_files` (the throwaway effects log) at
    /// their own paths too. Keeps `tail` bytes of each output.
    #[expect(clippy::too_many_arguments, reason = "one run's whole description")]
    pub fn run(
        &self,
        scratch: &Path,
        tree: &Path,
        command: &str,
        env: &[(String, OsString)],
        readable: &[PathBuf],
        writable_files: &[PathBuf],
        timeout: Duration,
        tail: usize,
    ) -> Result<RanInContainer> {
        let mut mounts = vec![Mount {
            host: tree.to_path_buf(),
            target: self.task.workdir.clone().into(),
            writable: true,
        }];
        // The entry point names the tree and its sentinel by their host paths: where it
        // runs, the tree is shown there too (the same directory, so one tree).
        if !readable.is_empty() {
            mounts.push(Mount {
                host: tree.to_path_buf(),
                target: tree.to_path_buf(),
                writable: true,
            });
        }
        let mut handed: Vec<PathBuf> = vec![tree.to_path_buf()];
        mounts.extend(readable.iter().map(|p| Mount {
            host: p.clone(),
            target: p.clone(),
            writable: false,
        }));
        mounts.extend(writable_files.iter().map(|p| Mount {
            host: p.clone(),
            target: p.clone(),
            writable: true,
        }));
        handed.extend(writable_files.iter().cloned());
        let mut env = env.to_vec();
        let mut network = false;
        let mut timeout = timeout;
        let logs = scratch.join("logs-verifier");
        if let Some(check) = self.check {
            let tests = scratch.join("tests");
            std::fs::create_dir_all(&tests)
                .io_context(|| format!("cannot create '{}'", tests.display()))?;
            for dir in &check.tests {
                crate::fsutil::copy_tree(dir, &tests, true)?;
            }
            std::fs::create_dir_all(&logs)
                .io_context(|| format!("cannot create '{}'", logs.display()))?;
            mounts.push(Mount {
                host: tests,
                target: TESTS_AT.into(),
                writable: false,
            });
            mounts.push(Mount {
                host: logs.clone(),
                target: REWARD_DIR.into(),
                writable: true,
            });
            handed.push(logs.clone());
            env.extend(check.env.iter().map(|(k, v)| (k.clone(), v.into())));
            network = true;
            timeout = timeout.min(check.timeout);
        }
        if let Some(user) = container_user() {
            let paths: Vec<&Path> = handed.iter().map(PathBuf::as_path).collect();
            user.hand_over(&paths).io_context(|| {
                format!(
                    "cannot hand '{}' over to the sandbox's user",
                    tree.display()
                )
            })?;
        }
        let run = self.task.run(mounts, Vec::new(), network);
        let (outcome, stdout, stderr) = ShellCommand {
            script: command,
            cwd: scratch,
            env: &env,
            timeout,
            isolation: Isolation::Container(&run),
        }
        .run_keeping_tails(tail)
        .map_err(|e| SandboxError::or_io(e, || format!("cannot run '{command}' in a container")))?;
        let reward = match self.check {
            Some(check) if !outcome.timed_out => {
                let read = |name: &str| std::fs::read_to_string(logs.join(name)).ok();
                let mut verdict = judge_reward(
                    read("reward.txt").as_deref(),
                    read("reward.json").as_deref(),
                    check.min_reward,
                );
                if let RewardVerdict::Failed { reason } = &mut verdict
                    && !self.task.allow_internet
                    && wanted_network(&stdout, &stderr)
                {
                    reason.push_str(
                        "; the check tried to reach the network, which the task does not allow \
                         (allow_internet)",
                    );
                }
                Some(verdict)
            }
            _ => None,
        };
        Ok(RanInContainer {
            outcome,
            stdout,
            stderr,
            reward,
        })
    }
}

/// Whether a check's output says it failed to reach the network (the words of the
/// resolver, curl, apt and pip when there is none).
fn wanted_network(stdout: &[u8], stderr: &[u8]) -> bool {
    const SAID: [&str; 6] = [
        "Temporary failure in name resolution",
        "Could not resolve",
        "Network is unreachable",
        "Failed to establish a new connection",
        "Name or service not known",
        "Could not connect to",
    ];
    [stdout, stderr].iter().any(|bytes| {
        let text = String::from_utf8_lossy(bytes);
        SAID.iter().any(|s| text.contains(s))
    })
}
