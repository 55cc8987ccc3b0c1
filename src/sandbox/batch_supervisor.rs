//! The supervisor of a batch of checks (`batch.rs`), on the far side of the sandbox: the
//! harness's own binary (`loopbench batch-supervise`), the sandbox's first process (pid
//! 1 of its PID namespace, bubblewrap's `--as-pid-1`), uid 0 with `CAP_KILL` and the
//! capabilities of the switch to the sandbox's user. It runs each check in turn as the
//! sandbox's user, under a time limit it keeps itself, clears away what the check left,
//! and writes the check's exit status where no check can write.
//!
//! It stands where a shell ran under bubblewrap's own pid 1 and started a `timeout` for
//! every check: the same statuses, outputs and clearing, two processes fewer a check
//! and one a batch. So each check's exit status is the one `timeout -k 2 SECS` gave
//! that shell (a unit test holds the two side by side): its own exit code; 128 + N when
//! a signal N ended it; 124 once its time limit has passed and SIGTERM (and SIGCONT) went
//! to it and its process group, unless SIGKILL ended it then; 137 when it outlived the
//! two seconds after that, when SIGKILL goes to it and its group. A core it dumped is
//! said on its stderr as `timeout` said it. As pid 1 it reaps every process a check
//! orphans while the check runs, as bubblewrap's pid 1 did.
//!
//! The plan is a file of root's (`0600`, in the batch's `results/`, `0700`) that only
//! this side reads: [`Plan`], its fields separated by NUL bytes (paths as their bytes).

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use nix::sys::signal::{SigSet, Signal, kill};
use nix::sys::signalfd::{SfdFlags, SignalFd};
use nix::sys::wait::{WaitPidFlag, WaitStatus, waitpid};
use nix::unistd::Pid;

/// The subcommand name (hidden from `--help`).
pub const SUBCOMMAND: &str = "batch-supervise";

/// After a check's time limit, how long it has between SIGTERM and SIGKILL (`timeout
/// -k 2`).
const KILL_AFTER: Duration = Duration::from_secs(2);

/// The most rounds of `kill -1` after a check before its processes count as
/// outliving every kill.
const SWEEP_ROUNDS: u32 = 100_000;

/// Run as the sandbox's user over a private directory (`$1`) that is not empty: removes
/// every entry but the ways to the places shown inside it (the rest of the arguments:
/// the batch's own directory, this binary).
const CLEAR_AS_USER: &str = r#"d=$1; shift
for f in "$d"/* "$d"/.[!.]* "$d"/..?*; do
  for k in "$@"; do case "$k/" in "$f"/*) continue 2 ;; esac; done
  rm -rf -- "$f"
done"#;

/// One check of the plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedCheck {
    /// Its directory, holding `tree/` and `effects.log`.
    pub dir: PathBuf,
    /// Its time limit in seconds, to a hundredth (`%.2f`).
    pub seconds: String,
    /// Its time limit in hundredths, rounded up: the status line's last field.
    pub hundredths: u64,
    /// The shell command.
    pub command: OsString,
}

/// What the supervisor is to run: each check, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The checks.
    pub checks: Vec<PlannedCheck>,
}

impl Plan {
    /// The plan as its file holds it: the number of checks, then each check's
    /// directory, seconds, hundredths and command, each field ended by a NUL byte.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let mut field = |bytes: &[u8]| {
            out.extend_from_slice(bytes);
            out.push(0);
        };
        field(self.checks.len().to_string().as_bytes());
        for check in &self.checks {
            field(check.dir.as_os_str().as_bytes());
            field(check.seconds.as_bytes());
            field(check.hundredths.to_string().as_bytes());
            field(check.command.as_bytes());
        }
        out
    }

    /// The plan of [`Plan::to_bytes`]; `None` for anything else.
    pub fn from_bytes(bytes: &[u8]) -> Option<Plan> {
        let body = bytes.strip_suffix(&[0])?;
        let mut fields = body.split(|&b| b == 0);
        let count: usize = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
        let mut checks = Vec::with_capacity(count.min(1 << 16));
        for _ in 0..count {
            let dir = PathBuf::from(OsStr::from_bytes(fields.next()?));
            let seconds = std::str::from_utf8(fields.next()?).ok()?.to_string();
            seconds
                .parse::<f64>()
                .ok()
                .filter(|s| s.is_finite() && *s >= 0.0)?;
            let hundredths = std::str::from_utf8(fields.next()?).ok()?.parse().ok()?;
            let command = OsString::from_vec(fields.next()?.to_vec());
            checks.push(PlannedCheck {
                dir,
                seconds,
                hundredths,
                command,
            });
        }
        fields.next().is_none().then_some(Plan { checks })
    }
}

/// Why the supervisor stopped before the end of its plan: its exit code and what it
/// says on its stderr. The harness then takes no verdict from the batch.
struct Stop(i32, String);

/// Runs the batch in `top` (its plan in `top/results/plan`), switching to the sandbox's
/// user with `switch` (a program and its arguments, to be followed by the check's);
/// returns the exit code: 0 when every check ran and was cleared away.
pub fn supervise_batch(top: &Path, switch: &[OsString]) -> i32 {
    match run(top, switch) {
        Ok(()) => 0,
        Err(Stop(code, why)) => {
            eprintln!("{why}");
            code
        }
    }
}

fn run(top: &Path, switch: &[OsString]) -> Result<(), Stop> {
    let results = top.join("results");
    let plan = std::fs::read(results.join("plan"))
        .ok()
        .and_then(|bytes| Plan::from_bytes(&bytes))
        .ok_or_else(|| Stop(95, "cannot read the plan".into()))?;
    if switch.is_empty() {
        return Err(Stop(95, "no switch to the sandbox's user".into()));
    }
    // The places shown inside the private `/tmp` and `/dev/shm`, whose ways there are
    // no check's leftovers: the batch's directory, and this binary.
    let mut shown = vec![top.to_path_buf()];
    shown.extend(std::env::current_exe().ok());
    // What it kills and removes is a check's only in a fresh sandbox of its own: the
    // first process of its PID namespace, `/tmp` and `/dev/shm` empty. Started anywhere
    // else (by hand, on a host), it touches nothing.
    if nix::unistd::getpid().as_raw() != 1 {
        return Err(Stop(95, "not the first process of a sandbox".into()));
    }
    for dir in ["/tmp", "/dev/shm"] {
        if !empty(Path::new(dir), &shown) {
            return Err(Stop(95, format!("{dir} of the sandbox is not empty")));
        }
    }
    let mut children = Children::new().map_err(|e| Stop(95, format!("cannot wait: {e}")))?;
    let mut status = File::create(results.join("status")).map_err(|e| Stop(95, format!("{e}")))?;
    for (i, check) in plan.checks.iter().enumerate() {
        let tree = check.dir.join("tree");
        // A tree that cannot be entered would read as the check failing: no verdict.
        if !tree.is_dir() {
            return Err(Stop(96, format!("cannot find {}", tree.display())));
        }
        let t0 = uptime()?;
        let code = run_check(i, check, &results, switch, &mut children)?;
        let t1 = uptime()?;
        sweep(&shown, switch, &mut children)?;
        writeln!(status, "{i} {code} {t0} {t1} {}", check.hundredths)
            .map_err(|e| Stop(95, format!("cannot write a status: {e}")))?;
    }
    Ok(())
}

/// The first field of `/proc/uptime`, as it stands (seconds, two decimals).
fn uptime() -> Result<String, Stop> {
    std::fs::read_to_string("/proc/uptime")
        .ok()
        .and_then(|t| t.split_whitespace().next().map(str::to_string))
        .ok_or_else(|| Stop(95, "cannot read /proc/uptime".into()))
}

/// How far a check's time limit has gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Within its limit.
    Running,
    /// Past it: SIGTERM went to it and its group.
    Terminated,
}

/// Runs check `i` as the sandbox's user in its tree, its output in `results/i.out` and
/// `results/i.err`; its exit status as `timeout` gave it.
fn run_check(
    i: usize,
    check: &PlannedCheck,
    results: &Path,
    switch: &[OsString],
    children: &mut Children,
) -> Result<i32, Stop> {
    let cannot = |e: std::io::Error| Stop(95, format!("cannot start check {i}: {e}"));
    let tree = check.dir.join("tree");
    let err_path = results.join(format!("{i}.err"));
    let out = File::create(results.join(format!("{i}.out"))).map_err(cannot)?;
    let err = File::create(&err_path).map_err(cannot)?;
    let limit = check
        .seconds
        .parse::<f64>()
        .map(Duration::from_secs_f64)
        .map_err(|e| Stop(95, format!("check {i}: {e}")))?;
    let mut cmd = as_user(switch);
    cmd.arg("sh")
        .arg("-c")
        .arg(&check.command)
        .current_dir(&tree)
        // As the shell that ran `cd` into the tree left the environment.
        .env_remove("OLDPWD")
        .env("PWD", &tree)
        .env("LOOPBENCH_EFFECTS", check.dir.join("effects.log"))
        .stdout(out)
        .stderr(err)
        // `timeout` made a process group of the check, which it signals whole.
        .process_group(0);
    let child = cmd.spawn().map_err(cannot)?;
    let pid = Pid::from_raw(i32::try_from(child.id()).map_err(|_| Stop(95, "pid".into()))?);
    // Reaped below with every orphan, not through `child`.
    drop(child);
    let mut phase = Phase::Running;
    let mut deadline = Instant::now() + limit;
    loop {
        if let Some(ended) = children.reap_until(pid, deadline)? {
            return Ok(exit_code(ended, phase, &err_path));
        }
        match phase {
            Phase::Running => {
                for signal in [Signal::SIGTERM, Signal::SIGCONT] {
                    let _ = kill(pid, signal);
                    let _ = kill(Pid::from_raw(-pid.as_raw()), signal);
                }
                phase = Phase::Terminated;
                deadline = Instant::now() + KILL_AFTER;
            }
            Phase::Terminated => {
                // `timeout` sent SIGKILL to its whole group, itself included.
                let _ = kill(pid, Signal::SIGKILL);
                let _ = kill(Pid::from_raw(-pid.as_raw()), Signal::SIGKILL);
                children.reap_until(pid, Instant::now() + Duration::from_secs(3600))?;
                return Ok(128 + Signal::SIGKILL as i32);
            }
        }
    }
}

/// The exit status `timeout` gave a check that ended as `ended` in `phase`; a core it
/// dumped is said at the end of its stderr (`err_path`), as `timeout` said it.
fn exit_code(ended: Ended, phase: Phase, err_path: &Path) -> i32 {
    match ended {
        Ended::Exited(_) if phase == Phase::Terminated => 124,
        Ended::Exited(code) => code,
        Ended::Signaled(signal, dumped) => {
            if dumped {
                let said = std::fs::OpenOptions::new()
                    .append(true)
                    .open(err_path)
                    .and_then(|mut f| f.write_all(b"timeout: the monitored command dumped core\n"));
                drop(said);
            }
            match phase {
                Phase::Terminated if signal != Signal::SIGKILL as i32 => 124,
                _ => 128 + signal,
            }
        }
    }
}

/// How a child ended: its exit code, or the signal that ended it and whether it
/// dumped a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ended {
    Exited(i32),
    Signaled(i32, bool),
}

/// Every child of this process, the checks' orphans included, reaped as they end;
/// woken by SIGCHLD, which is blocked and read from a descriptor.
struct Children {
    sigchld: SignalFd,
}

impl Children {
    fn new() -> nix::Result<Children> {
        let mut mask = SigSet::empty();
        mask.add(Signal::SIGCHLD);
        // The checks get an empty mask: `Command` resets it in the child.
        mask.thread_block()?;
        let sigchld = SignalFd::with_flags(&mask, SfdFlags::SFD_NONBLOCK | SfdFlags::SFD_CLOEXEC)?;
        Ok(Children { sigchld })
    }

    /// Reaps every child that has ended: how `pid` ended, when it has, and how many
    /// were reaped.
    fn reap(&mut self, pid: Option<Pid>) -> (Option<Ended>, usize) {
        let mut found = None;
        let mut reaped = 0;
        loop {
            let ended = match waitpid(None, Some(WaitPidFlag::WNOHANG | WaitPidFlag::__WALL)) {
                Ok(WaitStatus::Exited(p, code)) => (p, Ended::Exited(code)),
                Ok(WaitStatus::Signaled(p, signal, dumped)) => {
                    (p, Ended::Signaled(signal as i32, dumped))
                }
                Ok(WaitStatus::StillAlive) | Err(_) => return (found, reaped),
                Ok(_) => continue,
            };
            reaped += 1;
            if Some(ended.0) == pid {
                found = Some(ended.1);
            }
        }
    }

    /// Reaps children until `pid` has ended (how it ended) or `deadline` has come
    /// (`None`).
    fn reap_until(&mut self, pid: Pid, deadline: Instant) -> Result<Option<Ended>, Stop> {
        loop {
            if let (Some(ended), _) = self.reap(Some(pid)) {
                return Ok(Some(ended));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            self.wait_for_sigchld(deadline - now)?;
        }
    }

    /// Waits at most `longest` for a SIGCHLD, and takes every one pending.
    fn wait_for_sigchld(&mut self, longest: Duration) -> Result<(), Stop> {
        // Rounded up, so that a deadline is never met a millisecond early.
        let ms = longest.as_micros().div_ceil(1000);
        let timeout = PollTimeout::try_from(ms).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(self.sigchld.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(_) | Err(Errno::EINTR) => {}
            Err(e) => return Err(Stop(95, format!("cannot wait: {e}"))),
        }
        while let Ok(Some(_)) = self.sigchld.read_signal() {}
        Ok(())
    }
}

/// After a check: every process left in the sandbox is killed (again, until none is
/// left: `kill -1` by pid 1 reaches every other process), then `/tmp` and `/dev/shm`
/// are emptied by the sandbox's user but for the ways to the places `shown` there, and
/// its System V objects removed. What cannot be cleared away stops the batch.
fn sweep(shown: &[PathBuf], switch: &[OsString], children: &mut Children) -> Result<(), Stop> {
    let mut rounds = 0;
    // A process killed is still there until it is reaped: the kills go on until
    // nothing is left to kill.
    while kill(Pid::from_raw(-1), Signal::SIGKILL).is_ok() {
        rounds += 1;
        if rounds >= SWEEP_ROUNDS {
            return Err(Stop(
                97,
                "processes of a check outlived 100000 kills".into(),
            ));
        }
        if children.reap(None).1 == 0 {
            children.wait_for_sigchld(Duration::from_millis(10))?;
        }
    }
    children.reap(None);
    for dir in ["/tmp", "/dev/shm"] {
        let dir = Path::new(dir);
        if !empty(dir, shown) {
            let mut rm = as_user(switch);
            rm.args(["sh", "-c", CLEAR_AS_USER, "sh"])
                .arg(dir)
                .args(shown)
                .stderr(Stdio::null());
            run_helper(rm, children)?;
            if !empty(dir, shown) {
                return Err(Stop(
                    97,
                    format!("a check left {} not empty", dir.display()),
                ));
            }
        }
    }
    for kind in ["shm", "msg", "sem"] {
        if sysv_objects(kind)? {
            let mut ipcrm = as_user(switch);
            ipcrm
                .arg("ipcrm")
                .arg(format!("--all={kind}"))
                .stderr(Stdio::null());
            run_helper(ipcrm, children)?;
            if sysv_objects(kind)? {
                return Err(Stop(97, format!("a check left System V {kind} objects")));
            }
        }
    }
    Ok(())
}

/// A command that runs as the sandbox's user, its stdin and stdout nothing.
fn as_user(switch: &[OsString]) -> Command {
    let mut cmd = Command::new(&switch[0]);
    cmd.args(&switch[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null());
    // Through fork and exec, which a hook before exec makes sure of: glibc's
    // posix_spawn leaves its internal signals (32 and 33) ignored in the child, and an
    // ignored signal stays ignored across exec, into the check. Forked, the check has
    // the dispositions this process was given, as the shell and `timeout` passed theirs
    // on (but SIGPIPE, which the standard library puts back).
    // SAFETY: the hook does nothing at all.
    #[expect(unsafe_code, reason = "pre_exec: the child is forked, not spawned")]
    unsafe {
        cmd.pre_exec(|| Ok(()));
    }
    cmd
}

/// Runs a helper of the sweep to its end (its own exit status does not count: what it
/// left is looked at again).
fn run_helper(mut cmd: Command, children: &mut Children) -> Result<(), Stop> {
    let child = cmd
        .spawn()
        .map_err(|e| Stop(97, format!("cannot clear what a check left: {e}")))?;
    let pid = Pid::from_raw(i32::try_from(child.id()).map_err(|_| Stop(95, "pid".into()))?);
    drop(child);
    children.reap_until(pid, Instant::now() + Duration::from_secs(3600))?;
    Ok(())
}

/// Whether the private directory `dir` holds nothing but the ways to the places
/// `shown`; a directory that cannot be read is not empty.
fn empty(dir: &Path, shown: &[PathBuf]) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    let with_slash = |p: &Path| {
        let mut bytes = p.as_os_str().as_bytes().to_vec();
        bytes.push(b'/');
        bytes
    };
    let shown: Vec<Vec<u8>> = shown.iter().map(|p| with_slash(p)).collect();
    for entry in entries {
        let Ok(entry) = entry else { return false };
        let path = with_slash(&dir.join(entry.file_name()));
        if !shown.iter().any(|s| s.starts_with(&path)) {
            return false;
        }
    }
    true
}

/// Whether the sandbox's IPC namespace holds System V objects of `kind` (`shm`, `msg`,
/// `sem`): lines of `/proc/sysvipc/KIND` past its header.
fn sysv_objects(kind: &str) -> Result<bool, Stop> {
    let text = std::fs::read(format!("/proc/sysvipc/{kind}"))
        .map_err(|e| Stop(97, format!("cannot read /proc/sysvipc/{kind}: {e}")))?;
    Ok(text.iter().filter(|&&b| b == b'\n').count() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_reads_back_byte_for_byte_and_nothing_else_reads() {
        let plan = Plan {
            checks: vec![
                PlannedCheck {
                    dir: PathBuf::from(OsStr::from_bytes(b"/scratch/\xff it's")),
                    seconds: "1.50".into(),
                    hundredths: 150,
                    command: "echo 'a b' \"$HOME\"\nexit 3".into(),
                },
                PlannedCheck {
                    dir: "/s/b".into(),
                    seconds: "20.00".into(),
                    hundredths: 2000,
                    command: String::new().into(),
                },
            ],
        };
        let bytes = plan.to_bytes();
        assert_eq!(Plan::from_bytes(&bytes), Some(plan));
        assert_eq!(Plan::from_bytes(b"0\0"), Some(Plan { checks: Vec::new() }));
        let joined = |fields: &[&str]| {
            let mut bytes = fields.join("\x00").into_bytes();
            bytes.push(0);
            bytes
        };
        for bad in [
            bytes[..bytes.len() - 1].to_vec(),
            joined(&["1", "/d", "1.00", "100"]),
            joined(&["1", "/d", "x", "100", "c"]),
            joined(&["1", "/d", "-1", "100", "c"]),
            joined(&["0", "extra"]),
            Vec::new(),
        ] {
            let bad = bad.as_slice();
            assert_eq!(Plan::from_bytes(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn only_the_ways_to_the_places_shown_are_no_leftover() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("tmp");
        std::fs::create_dir_all(dir.join("scratch/batch")).unwrap();
        std::fs::write(dir.join("loopbench"), "").unwrap();
        let shown = [dir.join("scratch/batch/x"), dir.join("loopbench")];
        assert!(empty(&dir, &shown));
        assert!(!empty(&dir, &shown[..1]));
        // A name that is only a prefix of the way is a leftover.
        std::fs::write(dir.join("scratc"), "").unwrap();
        assert!(!empty(&dir, &shown));
        std::fs::remove_file(dir.join("scratc")).unwrap();
        std::os::unix::fs::symlink("/nowhere", dir.join(".hidden")).unwrap();
        assert!(!empty(&dir, &shown));
        assert!(!empty(&tmp.path().join("missing"), &shown));
    }

    /// The exit statuses the shell saw of `timeout -k 2 SECS` around each of these
    /// checks, and what this supervisor gives for the same ends.
    #[test]
    fn each_end_gives_the_status_timeout_gave() {
        let err = tempfile::NamedTempFile::new().unwrap();
        let cases = [
            ("exit 5", Ended::Exited(5), Phase::Running),
            ("exit 124", Ended::Exited(124), Phase::Running),
            ("kill -TERM $$", Ended::Signaled(15, false), Phase::Running),
            ("kill -KILL $$", Ended::Signaled(9, false), Phase::Running),
            ("sleep 5", Ended::Signaled(15, false), Phase::Terminated),
            (
                "trap 'exit 9' TERM; sleep 5 & wait",
                Ended::Exited(9),
                Phase::Terminated,
            ),
            (
                "trap 'kill -KILL $$' TERM; sleep 5 & wait",
                Ended::Signaled(9, false),
                Phase::Terminated,
            ),
        ];
        for (script, ended, phase) in cases {
            let out = Command::new("sh")
                .args([
                    "-c",
                    "( exec timeout -k 2 0.30 sh -c \"$1\" ) </dev/null >/dev/null 2>&1; echo $?",
                    "sh",
                    script,
                ])
                .output()
                .unwrap();
            let timeout: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
            assert_eq!(
                exit_code(ended, phase, err.path()),
                timeout,
                "{script}: {ended:?} in {phase:?}"
            );
        }
        assert_eq!(std::fs::read(err.path()).unwrap(), b"");
        assert_eq!(
            exit_code(Ended::Signaled(11, true), Phase::Running, err.path()),
            139
        );
        assert_eq!(
            std::fs::read(err.path()).unwrap(),
            b"timeout: the monitored command dumped core\n"
        );
    }
}
