//! Many checks in one sandbox: the checks of one observation run one after another
//! inside a single bubblewrap sandbox, under a supervisor the checks cannot reach, so
//! that the namespaces and mounts are made once per observation instead of once per
//! check. Only for a root harness, whose checks run as the unprivileged sandbox user
//! while the supervisor stays uid 0; an ordinary user's checks would share the
//! supervisor's uid (and could signal or trace it), so they keep a sandbox each. The
//! supervisor is the harness's own binary (`batch_supervisor.rs`), the sandbox's pid 1,
//! shown read-only; a process that is not the `loopbench` binary (a library caller)
//! runs every check alone.
//!
//! What keeps one check from touching another or its verdict:
//! - each check's scratch copy lies in a directory of its own, root's and `0711`, whose
//!   name is 128 random bits that only the supervisor knows until that check runs (the
//!   batch's directory is root's and `0711` too: it cannot be listed, and the plan of the
//!   batch is a file of root's, never a command line a check could read);
//! - the supervisor, its results directory (root's, `0700`) and the exit statuses it
//!   writes there belong to uid 0, which a check's user cannot signal, trace or write;
//!   as pid 1 of the sandbox's PID namespace it takes no signal it does not handle from
//!   inside at all;
//! - after each check, every process the check left is killed (`kill -1` by uid 0
//!   with `CAP_KILL`, repeated until nothing is left to kill) and the private `/tmp`
//!   and `/dev/shm` are emptied by the check's user, before the next check starts; a
//!   leftover that cannot be removed ends the batch;
//! - each check's output goes to files of its own, opened by the supervisor; the
//!   pages count against the batch's cgroup (so a batch needs one, with its memory
//!   limit);
//! - a time limit per check, kept by the supervisor as `timeout` kept it, whose expiry
//!   is told from an exit status of 124 (SIGTERM ended it) or 137 (it outlived SIGTERM
//!   and SIGKILL ended it) by the time the check took: a timeout either way, as a check
//!   run alone is once the harness's timer has run out.
//!
//! Anything unexpected (the supervisor's own failure, a missing status, a limit of the
//! cgroup reached) is no verdict: the caller runs those checks again, a sandbox each,
//! which also says which check reached the limit.

use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use super::batch_supervisor::{Plan, PlannedCheck, SUBCOMMAND};
use super::launch::{Launch, Started};
use super::layout::Hidden;
use super::limits::{Cgroup, Enforcement};
use crate::error::{IoContext, Result};
use crate::process_group::Leader;

/// How long the supervisor is given after the batch's deadline to end by itself.
const GRACE: Duration = Duration::from_secs(2);

/// The harness's binary, which supervises each batch inside its sandbox.
static SUPERVISOR: OnceLock<PathBuf> = OnceLock::new();

/// Names `binary` (canonical: the `loopbench` binary, which has the batch supervisor's
/// subcommand) as the supervisor of every batch of this process. The binary sets it
/// for itself; without it, [`Batch::possible`] says no.
pub fn supervise_batches_with(binary: PathBuf) {
    let _ = SUPERVISOR.set(binary);
}

/// One check to run in a batch.
#[derive(Debug, Clone)]
pub struct BatchCheck {
    /// The check's directory: the caller fills `tree/` with its scratch copy.
    pub dir: PathBuf,
    /// The shell command.
    pub command: String,
    /// Its time limit.
    pub timeout: Duration,
}

impl BatchCheck {
    /// The scratch copy the check runs in (its working directory).
    pub fn tree(&self) -> PathBuf {
        self.dir.join("tree")
    }

    /// The throwaway effects log of the check.
    pub fn effects(&self) -> PathBuf {
        self.dir.join("effects.log")
    }
}

/// How one check of a batch ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchRan {
    /// Exit code; `None` when it was stopped by its time limit.
    pub code: Option<i32>,
    /// Stopped by its time limit.
    pub timed_out: bool,
    /// How long it took, to a hundredth of a second.
    pub elapsed: Duration,
    /// The last bytes of its stdout.
    pub stdout: Vec<u8>,
    /// The last bytes of its stderr.
    pub stderr: Vec<u8>,
}

/// How a batch ended.
#[derive(Debug)]
pub enum BatchEnd {
    /// Every check ran: their ends, in order.
    Ran(Vec<BatchRan>),
    /// No verdict from this batch (why): the caller runs the checks one sandbox each.
    Unused(String),
    /// The batch ran past its deadline.
    OutOfTime,
}

/// The checks of one observation, each in a directory of a batch's scratch directory.
#[derive(Debug)]
pub struct Batch {
    scratch: tempfile::TempDir,
    checks: Vec<BatchCheck>,
    supervisor: Option<PathBuf>,
}

impl Batch {
    /// Whether checks under `hidden` can run batched here: a root harness whose
    /// sandboxes have limits the kernel enforces (the cgroup holds the checks' output
    /// pages), and a binary to supervise the batch ([`supervise_batches_with`]).
    pub fn possible(hidden: &Hidden) -> bool {
        SUPERVISOR.get().is_some()
            && hidden.run_as().is_some()
            && hidden.limits().is_some()
            && !matches!(Enforcement::here(), Enforcement::None(_))
    }

    /// An empty batch in a fresh scratch directory (root's, `0711`), with its results
    /// directory (root's, `0700`).
    pub fn new() -> Result<Batch> {
        let scratch = crate::fsutil::scratch_dir("loopbench-batch-")?;
        let results = scratch.path().join("results");
        set_mode(scratch.path(), 0o711)
            .and_then(|()| std::fs::create_dir(&results))
            .and_then(|()| set_mode(&results, 0o700))
            .io_context(|| format!("cannot prepare '{}'", scratch.path().display()))?;
        Ok(Batch {
            scratch,
            checks: Vec::new(),
            supervisor: SUPERVISOR.get().cloned(),
        })
    }

    /// The same batch supervised by `binary` (the `loopbench` binary at another path)
    /// instead of this process's supervisor.
    pub fn supervised_by(mut self, binary: PathBuf) -> Batch {
        self.supervisor = Some(binary);
        self
    }

    /// Adds a check: its directory (root's, `0711`, named by 128 random bits) and an
    /// empty effects log; the caller copies its tree into [`BatchCheck::tree`] (and may
    /// put files of its own, root's, beside it, and change the command to use them).
    pub fn add(&mut self, command: &str, timeout: Duration) -> std::io::Result<&mut BatchCheck> {
        let dir = self.scratch.path().join(unguessable_name()?);
        std::fs::create_dir(&dir)?;
        set_mode(&dir, 0o711)?;
        let check = BatchCheck {
            dir,
            command: command.to_string(),
            timeout,
        };
        std::fs::write(check.effects(), "")?;
        self.checks.push(check);
        Ok(self.checks.last_mut().expect("just pushed"))
    }

    /// Runs every check under `hidden`, one after another, within `deadline`, keeping
    /// the last `tail` bytes of each output.
    pub fn run(
        self,
        hidden: &Hidden,
        deadline: Duration,
        tail: usize,
    ) -> std::io::Result<BatchEnd> {
        let (Some(run_as), Some(limits)) = (hidden.run_as(), hidden.limits()) else {
            return Ok(BatchEnd::Unused("not a root harness with limits".into()));
        };
        if self.checks.is_empty() {
            return Ok(BatchEnd::Ran(Vec::new()));
        }
        for check in &self.checks {
            // The tree and the effects log become the sandbox user's (with `o+x` on
            // the way in); the check's directory stays root's.
            hidden
                .layout(&check.tree(), &[&check.effects()], &[])
                .hand_over()?;
        }
        let Some(supervisor) = &self.supervisor else {
            return Ok(BatchEnd::Unused("no binary to supervise a batch".into()));
        };
        let Some(cgroup) = Cgroup::create(limits)? else {
            return Ok(BatchEnd::Unused("no cgroup can be made here".into()));
        };
        let mut layout = hidden.layout(self.scratch.path(), &[], &[]);
        layout.supervises = true;
        layout.readable.push(supervisor.clone());
        let launch = Launch::in_scratch(cgroup.procs_files()).map_err(std::io::Error::other)?;
        let results = self.scratch.path().join("results");
        let argv = launch.argv_keeping_user(&layout);
        write_plan(&results.join("plan"), &self.checks)?;
        let mut cmd = Command::new(&argv[0]);
        Launch::prepare(&mut cmd);
        cmd.args(&argv[1..])
            .arg(supervisor)
            .arg(SUBCOMMAND)
            .arg(self.scratch.path())
            .arg("--")
            .args(run_as.entry_args());
        let supervisor_err = self.scratch.path().join("supervisor.err");
        let err_file = std::fs::File::create(&supervisor_err)?;
        set_mode(&supervisor_err, 0o600)?;
        let mut base = super::environment::base(Path::new("/tmp"));
        base.push(("PYTHONDONTWRITEBYTECODE".into(), "1".into()));
        cmd.env_clear()
            .envs(base)
            .current_dir(self.scratch.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(err_file);
        // Past the deadline the group is ended: bwrap's death takes the sandbox with it.
        let mut leader = Leader::spawn(&mut cmd)?;
        let Some(status) = leader.wait_timeout(deadline)? else {
            leader.terminate(GRACE)?;
            return Ok(BatchEnd::OutOfTime);
        };
        drop(leader);
        let reached = cgroup.reached();
        if !reached.is_empty() {
            return Ok(BatchEnd::Unused(reached.join("; ")));
        }
        match launch
            .started(Some(&supervisor_err), Some(&cgroup))
            .map_err(std::io::Error::other)?
        {
            Started::Ran(0) => {}
            Started::Ran(code) => {
                let said = std::fs::read_to_string(&supervisor_err).unwrap_or_default();
                return Ok(BatchEnd::Unused(format!(
                    "the supervisor ended with {code} (status {status}): {}",
                    said.trim()
                )));
            }
            Started::Failed(why) => return Ok(BatchEnd::Unused(why)),
        }
        read_results(&results, &self.checks, tail)
    }
}

/// The plan of the batch, read by the supervisor: a file of root's, `0600`.
fn write_plan(path: &Path, checks: &[BatchCheck]) -> std::io::Result<()> {
    let plan = Plan {
        checks: checks
            .iter()
            .map(|check| {
                let secs = check.timeout.as_secs_f64();
                PlannedCheck {
                    dir: check.dir.clone(),
                    seconds: format!("{secs:.2}"),
                    hundredths: (secs * 100.0).ceil() as u64,
                    command: super::host::exec_form(
                        &check.command,
                        std::env::var_os("PATH").as_deref(),
                    )
                    .into_owned()
                    .into(),
                }
            })
            .collect(),
    };
    std::fs::write(path, plan.to_bytes())?;
    set_mode(path, 0o600)
}

/// 32 hex digits from the kernel's random source: a name no check can guess.
fn unguessable_name() -> std::io::Result<String> {
    let bytes = unguessable_seed()?;
    Ok(bytes[..16].iter().map(|b| format!("{b:02x}")).collect())
}

/// 32 bytes from the kernel's random source: what no check can guess or replay (the
/// names of a batch's checks, a check's sentinel test).
pub fn unguessable_seed() -> std::io::Result<[u8; 32]> {
    let mut bytes = [0u8; 32];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// The ends of `checks` from the supervisor's status lines and output files.
fn read_results(results: &Path, checks: &[BatchCheck], tail: usize) -> std::io::Result<BatchEnd> {
    let text = std::fs::read_to_string(results.join("status")).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() != checks.len() {
        return Ok(BatchEnd::Unused(format!(
            "{} statuses for {} checks",
            lines.len(),
            checks.len()
        )));
    }
    let mut ran = Vec::with_capacity(checks.len());
    for (i, line) in lines.iter().enumerate() {
        let Some(status) = Status::parse(line).filter(|s| s.index == i) else {
            return Ok(BatchEnd::Unused(format!(
                "a status line that does not parse: '{line}'"
            )));
        };
        let elapsed_cs = status.end_cs.saturating_sub(status.start_cs);
        let timed_out = stopped_at_its_limit(&status);
        ran.push(BatchRan {
            code: (!timed_out).then_some(status.code),
            timed_out,
            elapsed: Duration::from_millis(elapsed_cs * 10),
            stdout: last_bytes_of(&results.join(format!("{i}.out")), tail)?,
            stderr: last_bytes_of(&results.join(format!("{i}.err")), tail)?,
        });
    }
    Ok(BatchEnd::Ran(ran))
}

/// One line the supervisor wrote after a check.
struct Status {
    index: usize,
    code: i32,
    start_cs: u64,
    end_cs: u64,
    limit_cs: u64,
}

impl Status {
    fn parse(line: &str) -> Option<Status> {
        let words: Vec<&str> = line.split(' ').collect();
        let [index, code, start, end, limit] = words.as_slice() else {
            return None;
        };
        Some(Status {
            index: index.parse().ok()?,
            code: code.parse().ok()?,
            start_cs: hundredths(start)?,
            end_cs: hundredths(end)?,
            limit_cs: limit.parse().ok()?,
        })
    }
}

/// Whether the supervisor stopped the check at its time limit: 124 when SIGTERM ended
/// it, 137 when it outlived SIGTERM and SIGKILL ended it. A check may exit with either
/// code itself, or kill itself: only one that ran its whole time was stopped.
fn stopped_at_its_limit(status: &Status) -> bool {
    let elapsed_cs = status.end_cs.saturating_sub(status.start_cs);
    matches!(status.code, 124 | 137) && elapsed_cs + 1 >= status.limit_cs
}

/// `/proc/uptime`'s seconds with two decimals, in hundredths.
fn hundredths(text: &str) -> Option<u64> {
    let (whole, frac) = text.split_once('.')?;
    (frac.len() == 2).then_some(())?;
    Some(whole.parse::<u64>().ok()? * 100 + frac.parse::<u64>().ok()?)
}

/// The last `limit` bytes of a file.
fn last_bytes_of(path: &Path, limit: usize) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(limit as u64)))?;
    let mut out = Vec::new();
    file.take(limit as u64).read_to_end(&mut out)?;
    Ok(out)
}

fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// `word` as one word of a POSIX shell command: in single quotes, each of its own
/// single quotes closed, escaped and reopened.
pub fn shell_quote(word: &[u8]) -> Vec<u8> {
    let mut quoted = vec![b'\''];
    for &byte in word {
        if byte == b'\'' {
            quoted.extend_from_slice(br"'\''");
        } else {
            quoted.push(byte);
        }
    }
    quoted.push(b'\'');
    quoted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_lines_parse_and_a_forged_124_is_no_timeout() {
        let s = Status::parse("2 124 100.25 101.00 500").unwrap();
        assert_eq!(
            (s.index, s.code, s.start_cs, s.end_cs, s.limit_cs),
            (2, 124, 10025, 10100, 500)
        );
        assert!(Status::parse("2 124 100.2 101.00 500").is_none());
        assert!(Status::parse("2 x 100.25 101.00 500").is_none());
        assert!(Status::parse("2 0 100.25 101.00").is_none());
        // Stopped at the limit: SIGTERM ended it, or SIGKILL two seconds later; the same
        // codes before the limit are the check's own.
        let stopped = |line: &str| stopped_at_its_limit(&Status::parse(line).unwrap());
        assert!(stopped("0 124 100.00 105.00 500"));
        assert!(stopped("0 137 100.00 107.01 500"));
        assert!(!stopped("0 124 100.00 101.00 500"));
        assert!(!stopped("0 137 100.00 100.10 500"));
        assert!(!stopped("0 143 100.00 105.00 500"));
        assert!(!stopped("0 1 100.00 105.00 500"));
        assert_eq!(shell_quote(b"it's"), br"'it'\''s'");
    }

    #[test]
    fn the_plan_gives_the_supervisor_each_path_and_command_byte_for_byte() {
        use std::os::unix::ffi::OsStrExt;
        let tmp = tempfile::tempdir().unwrap();
        let dir = std::ffi::OsStr::from_bytes(b"/scratch/\xff it's").to_owned();
        let checks = [BatchCheck {
            dir: dir.clone().into(),
            command: "echo 'a b' \"$HOME\"\nexit 3".into(),
            timeout: Duration::from_millis(1500),
        }];
        let path = tmp.path().join("plan");
        write_plan(&path, &checks).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let plan = Plan::from_bytes(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(
            plan.checks,
            [PlannedCheck {
                dir: dir.into(),
                seconds: "1.50".into(),
                hundredths: 150,
                command: "echo 'a b' \"$HOME\"\nexit 3".into(),
            }]
        );
    }
}
