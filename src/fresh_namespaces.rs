//! Starts a program as the first process of fresh PID and network namespaces, as
//! `unshare --net --pid --fork --kill-child` does, without a launcher in between: the
//! harness's thread clones a child straight into the namespaces (sharing the harness's
//! memory until the child's `execve`, as `posix_spawn` does), so a check on the host
//! costs one program start where `unshare` cost two (its own, and its fork). On this
//! kind of machine a program start is most of what a session costs.
//!
//! The child is its namespace's init: when it ends, the kernel kills whatever it left
//! in there (a process that left its group with `setsid` too), and it is killed when
//! the thread that started it ends (the harness gone).

use std::ffi::{CString, OsStr, OsString};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::ExitStatus;
use std::sync::atomic::{AtomicI32, Ordering};
use std::time::{Duration, Instant};

use nix::libc;

/// Which namespaces the child gets of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Namespaces {
    /// A network namespace (no network but a loopback that is down).
    pub network: bool,
    /// A PID namespace whose init the child is.
    pub pid: bool,
}

impl Namespaces {
    fn clone_flags(self) -> libc::c_int {
        let mut flags = 0;
        if self.network {
            flags |= libc::CLONE_NEWNET;
        }
        if self.pid {
            flags |= libc::CLONE_NEWPID;
        }
        flags
    }
}

/// What to start, and where.
pub struct Start<'a> {
    /// The program's path, started as it is (no `PATH` search).
    pub program: &'a Path,
    /// Its arguments, the first its name.
    pub argv: &'a [OsString],
    /// Its whole environment.
    pub env: &'a [(OsString, OsString)],
    /// Its working directory.
    pub cwd: &'a Path,
    /// Its standard input, output and error.
    pub stdio: [BorrowedFd<'a>; 3],
    /// The namespaces it gets of its own.
    pub namespaces: Namespaces,
}

/// A child started by [`Start::spawn`], the leader of a process group of its own.
#[derive(Debug)]
pub struct NamespacedChild {
    pid: libc::pid_t,
    /// Becomes readable when the child has exited.
    pidfd: OwnedFd,
    status: Option<ExitStatus>,
}

/// What the child reads, prepared by the parent: nothing in the child allocates (the
/// memory is the harness's, whose other threads may hold the allocator's locks).
struct ChildPlan {
    program: CString,
    argv: Vec<*const libc::c_char>,
    envp: Vec<*const libc::c_char>,
    cwd: CString,
    stdio: [RawFd; 3],
    /// The `errno` of the step that failed in the child, 0 when it reached the program.
    failed: AtomicI32,
}

/// Signals are numbered below this (`_NSIG` on Linux).
const SIGNALS: libc::c_int = 65;

/// The child's stack, used until its `execve`.
const CHILD_STACK_BYTES: usize = 64 * 1024;

fn c_string(s: &OsStr) -> std::io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{} holds a NUL byte", s.to_string_lossy()),
        )
    })
}

impl Start<'_> {
    /// Starts the child; `Err` when it could not be started (the namespaces refused,
    /// the program not executable), with the reason the kernel gave.
    #[expect(unsafe_code, reason = "clone(2) and the child's steps before execve")]
    pub fn spawn(&self) -> std::io::Result<NamespacedChild> {
        let argv: Vec<CString> = self
            .argv
            .iter()
            .map(|a| c_string(a))
            .collect::<Result<_, _>>()?;
        let env: Vec<CString> = self
            .env
            .iter()
            .map(|(k, v)| {
                let mut pair = k.clone();
                pair.push("=");
                pair.push(v);
                c_string(&pair)
            })
            .collect::<Result<_, _>>()?;
        let nul_ended = |strings: &[CString]| -> Vec<*const libc::c_char> {
            strings
                .iter()
                .map(|s| s.as_ptr())
                .chain(std::iter::once(std::ptr::null()))
                .collect()
        };
        let plan = ChildPlan {
            program: c_string(self.program.as_os_str())?,
            argv: nul_ended(&argv),
            envp: nul_ended(&env),
            cwd: c_string(self.cwd.as_os_str())?,
            stdio: self.stdio.map(|fd| fd.as_raw_fd()),
            failed: AtomicI32::new(0),
        };
        // Not zeroed: the child writes its frames before it reads them.
        let mut stack = Box::<[u8]>::new_uninit_slice(CHILD_STACK_BYTES);
        // SAFETY: the stack grows down from its end, 16-byte aligned as the ABI asks.
        let top = unsafe { stack.as_mut_ptr().add(CHILD_STACK_BYTES) };
        let top = (top as usize & !15) as *mut libc::c_void;
        // No signal handler of the harness's may run in the child before its exec (it
        // would run on the harness's memory): everything is blocked across the clone,
        // and the child sets every handled signal back to its default first.
        // SAFETY: a sigset_t is plain bits; all zero is a valid (empty) set.
        let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let mut before: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: both sets are valid, owned memory.
        unsafe {
            libc::sigfillset(&mut all);
            libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut before);
        }
        let flags =
            libc::CLONE_VM | libc::CLONE_VFORK | self.namespaces.clone_flags() | libc::SIGCHLD;
        // SAFETY: the child runs `child_main` on its own stack with `plan`, which lives
        // until clone returns: with CLONE_VFORK this thread is suspended until the child
        // has called execve or exited, so neither the plan nor the stack is freed under
        // it. The child calls only async-signal-safe functions.
        let pid = unsafe {
            libc::clone(
                child_main,
                top,
                flags,
                (&plan as *const ChildPlan).cast_mut().cast(),
            )
        };
        let clone_error = std::io::Error::last_os_error();
        // SAFETY: restores this thread's own mask.
        unsafe {
            libc::pthread_sigmask(libc::SIG_SETMASK, &before, std::ptr::null_mut());
        }
        drop(stack);
        if pid < 0 {
            return Err(clone_error);
        }
        let failed = plan.failed.load(Ordering::SeqCst);
        if failed != 0 {
            let mut status = 0;
            // SAFETY: reaps our own child, which has exited.
            unsafe { libc::waitpid(pid, &mut status, 0) };
            return Err(std::io::Error::from_raw_os_error(failed));
        }
        // SAFETY: pidfd_open takes a pid and flags; the child is not reaped yet (only
        // this handle reaps it), so the pid is still ours.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        if fd < 0 {
            let e = std::io::Error::last_os_error();
            // SAFETY: as above, our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, std::ptr::null_mut(), 0);
            }
            return Err(e);
        }
        // SAFETY: a descriptor pidfd_open just returned, owned by nothing else.
        let pidfd = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
        Ok(NamespacedChild {
            pid,
            pidfd,
            status: None,
        })
    }
}

/// The child between clone and execve: its descriptors, directory, process group and
/// signals as `std::process::Command` leaves them, then the program. On a failure the
/// step's errno goes to the parent through the shared plan.
#[expect(unsafe_code, reason = "runs in a clone(CLONE_VM) child before execve")]
extern "C" fn child_main(plan: *mut libc::c_void) -> libc::c_int {
    // SAFETY: the parent passed a pointer to a plan that outlives this child's exec.
    let plan = unsafe { &*(plan as *const ChildPlan) };
    let fail = |plan: &ChildPlan| -> libc::c_int {
        // SAFETY: reading errno and exiting without running the harness's atexit code.
        let errno = unsafe { *libc::__errno_location() };
        plan.failed.store(errno.max(1), Ordering::SeqCst);
        unsafe { libc::_exit(127) }
    };
    // SAFETY: every call below is an async-signal-safe system call wrapper on plain
    // values or on the plan's NUL-ended strings.
    unsafe {
        for sig in 1..SIGNALS {
            let mut action: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(sig, std::ptr::null(), &mut action) == 0
                && action.sa_sigaction != libc::SIG_IGN
                && action.sa_sigaction != libc::SIG_DFL
            {
                action.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
        }
        // Rust ignores SIGPIPE in the harness; a program expects its default.
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        for (target, &fd) in plan.stdio.iter().enumerate() {
            let target = target as RawFd;
            if fd == target {
                if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                    return fail(plan);
                }
            } else if libc::dup2(fd, target) < 0 {
                return fail(plan);
            }
        }
        if libc::chdir(plan.cwd.as_ptr()) < 0 {
            return fail(plan);
        }
        if libc::setpgid(0, 0) < 0 {
            return fail(plan);
        }
        // The thread that started it ends: so does the child.
        if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) < 0 {
            return fail(plan);
        }
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::pthread_sigmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::execve(
            plan.program.as_ptr(),
            plan.argv.as_ptr(),
            plan.envp.as_ptr(),
        );
    }
    fail(plan)
}

impl NamespacedChild {
    /// The child's pid (in the harness's namespace).
    pub fn id(&self) -> u32 {
        self.pid as u32
    }

    /// Waits up to `timeout` for the child to exit; `None` when it is still running.
    pub fn wait_timeout(&mut self, timeout: Duration) -> std::io::Result<Option<ExitStatus>> {
        if let Some(status) = self.status {
            return Ok(Some(status));
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let millis = left.as_millis().min(i32::MAX as u128) as i32;
            let mut poll = libc::pollfd {
                fd: self.pidfd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            #[expect(unsafe_code, reason = "poll on our own pidfd")]
            // SAFETY: one valid pollfd.
            let ready = unsafe { libc::poll(&mut poll, 1, millis) };
            if ready < 0 {
                let e = std::io::Error::last_os_error();
                if e.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if ready > 0 {
                return self.wait().map(Some);
            }
            if left.is_zero() {
                return Ok(None);
            }
        }
    }

    /// Waits for the child to exit.
    pub fn wait(&mut self) -> std::io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let mut status = 0;
        loop {
            #[expect(unsafe_code, reason = "waitpid on our own child")]
            // SAFETY: reaps our own child, once: the status is kept.
            let rc = unsafe { libc::waitpid(self.pid, &mut status, 0) };
            if rc == self.pid {
                let status = ExitStatus::from_raw(status);
                self.status = Some(status);
                return Ok(status);
            }
            let e = std::io::Error::last_os_error();
            if e.kind() != std::io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// Whether this machine lets the harness give a child `namespaces` (as root, or with
/// user namespaces): starts `true` that way once.
pub fn available(namespaces: Namespaces, true_program: &Path) -> bool {
    let null = match std::fs::File::options()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        Ok(null) => null,
        Err(_) => return false,
    };
    let fd = null.as_fd();
    let start = Start {
        program: true_program,
        argv: &[OsString::from("true")],
        env: &[],
        cwd: Path::new("/"),
        stdio: [fd, fd, fd],
        namespaces,
    };
    start
        .spawn()
        .and_then(|mut child| child.wait())
        .is_ok_and(|status| status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOTH: Namespaces = Namespaces {
        network: true,
        pid: true,
    };

    fn here() -> bool {
        let works = available(BOTH, Path::new("/bin/true"));
        if !works {
            eprintln!("skipped: namespaces cannot be made here (not root)");
        }
        works
    }

    /// Starts `argv` (the program by its path) in both namespaces, its output into a
    /// file; returns the child and the file.
    fn start(argv: &[&str], env: &[(&str, &str)]) -> (NamespacedChild, tempfile::NamedTempFile) {
        let out = tempfile::NamedTempFile::new().unwrap();
        let null = std::fs::File::open("/dev/null").unwrap();
        let argv: Vec<OsString> = argv.iter().map(OsString::from).collect();
        let env: Vec<(OsString, OsString)> =
            env.iter().map(|(k, v)| (k.into(), v.into())).collect();
        let dir = std::env::temp_dir();
        let child = Start {
            program: Path::new(&argv[0]),
            argv: &argv,
            env: &env,
            cwd: &dir,
            stdio: [null.as_fd(), out.as_file().as_fd(), out.as_file().as_fd()],
            namespaces: BOTH,
        }
        .spawn()
        .unwrap();
        (child, out)
    }

    #[test]
    fn the_child_is_its_pid_namespaces_init_with_no_network_and_its_own_environment() {
        if !here() {
            return;
        }
        let script = "echo pid $$; cut -d: -f1 /proc/net/dev | tail -n +3; pwd; env | sort";
        let (mut child, out) = start(&["/bin/sh", "-c", script], &[("ONLY", "this")]);
        assert!(child.wait().unwrap().success());
        let printed = std::fs::read_to_string(out.path()).unwrap();
        let lines: Vec<&str> = printed.lines().map(str::trim).collect();
        assert_eq!(lines[0], "pid 1", "{printed}");
        // Interfaces: the namespace's loopback alone.
        assert_eq!(lines[1], "lo", "{printed}");
        let dir = std::fs::canonicalize(std::env::temp_dir()).unwrap();
        assert_eq!(Path::new(lines[2]), dir, "{printed}");
        // What dash adds itself (PWD) aside, the given environment and nothing else.
        let env: Vec<&str> = lines[3..]
            .iter()
            .copied()
            .filter(|l| !l.starts_with("PWD="))
            .collect();
        assert_eq!(env, ["ONLY=this"], "{printed}");
    }

    #[test]
    fn the_child_has_three_descriptors_no_blocked_or_ignored_signal_and_its_own_group() {
        if !here() {
            return;
        }
        // As the binary does first (descriptors the test runner left open would be
        // inherited by any child, however started): each close-on-exec.
        let open: Vec<i32> = std::fs::read_dir("/proc/self/fd")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
            .collect();
        for fd in open.into_iter().filter(|fd| *fd > 2) {
            #[expect(unsafe_code, reason = "fcntl on a descriptor number")]
            // SAFETY: F_SETFD on a number that may be closed by now fails with EBADF,
            // nothing else; no memory is passed.
            unsafe {
                libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
            }
        }
        // Rust ignores SIGPIPE in this process; the child must not inherit that.
        let (mut child, _out) = start(&["/bin/sleep", "30"], &[]);
        let pid = child.id();
        let open = || -> std::collections::BTreeSet<String> {
            std::fs::read_dir(format!("/proc/{pid}/fd"))
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        };
        // The parent goes on once the child has its new memory, a moment before the
        // kernel closes its close-on-exec descriptors.
        let three: std::collections::BTreeSet<String> = ["0", "1", "2"].map(String::from).into();
        let began = Instant::now();
        let mut fds = open();
        while fds != three && began.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(10));
            fds = open();
        }
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid as i32),
            nix::sys::signal::SIGKILL,
        )
        .unwrap();
        let ended = child.wait().unwrap();
        assert_eq!(fds, three, "{fds:?}");
        // The signals as a child the standard library starts has them.
        let mut by_std = std::process::Command::new("/bin/sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let std_status = std::fs::read_to_string(format!("/proc/{}/status", by_std.id())).unwrap();
        by_std.kill().unwrap();
        by_std.wait().unwrap();
        let mask = |status: &str, field: &str| {
            let hex = status
                .lines()
                .find_map(|l| l.strip_prefix(&format!("{field}:")))
                .unwrap()
                .trim()
                .to_string();
            u64::from_str_radix(&hex, 16).unwrap()
        };
        assert_eq!(mask(&status, "SigBlk"), 0, "{status}");
        // glibc's own two signals (32 and 33) aside, which its posix_spawn ignores in
        // the child and which no program is sent.
        let ours = !(0b11u64 << 31);
        assert_eq!(
            mask(&status, "SigIgn") & ours,
            mask(&std_status, "SigIgn") & ours,
            "{status}"
        );
        let sigpipe = 1u64 << (nix::libc::SIGPIPE - 1);
        assert_eq!(mask(&status, "SigIgn") & sigpipe, 0, "{status}");
        // The process group (field 5 of stat, after the parenthesised name) is its own.
        let after_name = &stat[stat.rfind(')').unwrap() + 2..];
        let group: u32 = after_name.split(' ').nth(2).unwrap().parse().unwrap();
        assert_eq!(group, pid);
        assert_eq!(ended.signal(), Some(nix::libc::SIGKILL));
    }

    #[test]
    fn exit_codes_timeouts_and_a_program_that_cannot_start_are_reported() {
        if !here() {
            return;
        }
        let (mut child, _out) = start(&["/bin/sh", "-c", "exit 7"], &[]);
        assert_eq!(child.wait().unwrap().code(), Some(7));
        // Asked again, the same status (the child is reaped once).
        assert_eq!(
            child.wait_timeout(Duration::ZERO).unwrap().unwrap().code(),
            Some(7)
        );
        let (mut child, _out) = start(&["/bin/sleep", "30"], &[]);
        assert_eq!(
            child.wait_timeout(Duration::from_millis(100)).unwrap(),
            None
        );
        nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(child.id() as i32),
            nix::sys::signal::SIGKILL,
        )
        .unwrap();
        let ended = child
            .wait_timeout(Duration::from_secs(10))
            .unwrap()
            .unwrap();
        assert_eq!(ended.signal(), Some(nix::libc::SIGKILL));
        let null = std::fs::File::open("/dev/null").unwrap();
        let refused = |program: &str, cwd: &str| {
            Start {
                program: Path::new(program),
                argv: &[OsString::from("x")],
                env: &[],
                cwd: Path::new(cwd),
                stdio: [null.as_fd(), null.as_fd(), null.as_fd()],
                namespaces: BOTH,
            }
            .spawn()
            .unwrap_err()
        };
        let missing = refused("/nonexistent/loopbench-program", "/");
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound, "{missing}");
        let no_dir = refused("/bin/true", "/nonexistent/loopbench-dir");
        assert_eq!(no_dir.kind(), std::io::ErrorKind::NotFound, "{no_dir}");
    }

    #[test]
    fn the_child_is_killed_when_the_thread_that_started_it_ends() {
        if !here() {
            return;
        }
        let mut child = std::thread::spawn(|| start(&["/bin/sleep", "30"], &[]).0)
            .join()
            .unwrap();
        let ended = child.wait_timeout(Duration::from_secs(10)).unwrap();
        assert_eq!(
            ended.and_then(|s| s.signal()),
            Some(nix::libc::SIGKILL),
            "{ended:?}"
        );
    }
}
