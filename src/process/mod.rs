//! Runs shell commands (verify commands, a replayed trace's `run` actions, the sim
//! agent's git calls) with a time limit, so that nothing they started outlives them.
//!
//! Containment, strongest first: in the sandbox (a [`Layout`], started through
//! [`Confined`]) the command has its own PID namespace, which dies with it; otherwise,
//! where the machine allows it (as root), it runs as the first process of fresh PID and
//! network namespaces ([`fresh_namespaces`]), so that even a process that left its
//! process group (`setsid`) is killed when the command ends; failing that, its process
//! group is killed.

use std::ffi::OsString;
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crate::error::SandboxError;
use crate::fresh_namespaces::{self, Namespaces};
use crate::process_group::Leader;
use crate::sandbox::container::{Container, ContainerRun, Ran};
use crate::sandbox::{Confined, Layout};

mod tail;

use tail::Tail;
pub use tail::last_bytes;

/// How long a process group gets between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(2);

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutcome {
    /// Exit code, `None` when killed by a signal (including our timeout).
    pub code: Option<i32>,
    /// The time limit was reached and the group was killed.
    pub timed_out: bool,
    /// Wall time from spawn to exit.
    pub elapsed: Duration,
    /// The sandbox's limits the command reached (`max_pids`, `max_memory`), each as a
    /// sentence.
    pub limits_reached: Vec<String>,
    /// The process id of the command's first process, as the harness saw it.
    pub pid: u32,
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
    /// The environment: for the harness's own commands ([`Isolation::ProcessGroup`])
    /// added to the inherited one; for agent-written code the only variables besides
    /// `PATH`, `LANG`, `TERM` and `HOME` (an empty directory outside the tree unless
    /// given here).
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
    /// In the sandbox of this layout (no network, own PID namespace); the command's
    /// `cwd` should be the layout's work directory.
    Sandbox(&'a Layout),
    /// In a fresh container (its own PID namespace, removed when the command ends); the
    /// command runs in the container's working directory, with the built environment
    /// and `env` over the container's own.
    Container(&'a ContainerRun),
}

/// The sandbox a [`ShellCommand`] started, asked afterwards whether the program ran.
enum Started {
    Confined(Confined),
    Container(Container),
}

/// How a [`ShellCommand`]'s first process is started.
enum Launch {
    /// By the standard library.
    Command(Command),
    /// Cloned into namespaces of its own ([`fresh_namespaces`]).
    Namespaced {
        program: std::path::PathBuf,
        argv: Vec<OsString>,
        namespaces: Namespaces,
    },
}

/// Where a command's output goes.
enum Sink {
    /// `/dev/null`.
    Null,
    /// A pipe the harness reads.
    Pipe(std::io::PipeWriter),
}

/// A command's first process once started, and its sandbox.
struct Spawned {
    leader: Leader,
    started: Option<Started>,
}

/// Why a command could not be started, and whether it was to start without a shell.
struct SpawnRefused {
    error: std::io::Error,
    direct: bool,
}

impl Sink {
    /// A copy for a child (the harness keeps its own until the child is started).
    fn to_stdio(&self) -> std::io::Result<Stdio> {
        Ok(match self {
            Sink::Null => Stdio::null(),
            Sink::Pipe(writer) => Stdio::from(writer.try_clone()?),
        })
    }

    fn to_fd(&self) -> std::io::Result<std::os::fd::OwnedFd> {
        Ok(match self {
            Sink::Null => dev_null()?.into(),
            Sink::Pipe(writer) => writer.try_clone()?.into(),
        })
    }
}

fn dev_null() -> std::io::Result<std::fs::File> {
    std::fs::File::options()
        .read(true)
        .write(true)
        .open("/dev/null")
}

impl ShellCommand<'_> {
    /// Runs the command with stdin, stdout and stderr connected to /dev/null.
    pub fn run(&self) -> std::io::Result<CommandOutcome> {
        self.run_with(Sink::Null, Sink::Null)
    }

    /// Runs the command and keeps the last `limit` bytes of what it wrote, stdout
    /// then stderr (see [`Tail`]). The pipes are read as the command writes, so that
    /// a check printing without end costs `limit` bytes of memory, never more.
    pub fn run_keeping_tail(&self, limit: usize) -> std::io::Result<(CommandOutcome, Vec<u8>)> {
        let (outcome, mut both, stderr) = self.run_keeping_tails(limit)?;
        both.extend_from_slice(&stderr);
        Ok((outcome, last_bytes(&both, limit).to_vec()))
    }

    /// Runs the command and keeps the last `limit` bytes of stdout and of stderr, each
    /// on its own (a test runner's summary is at the end of one of them).
    pub fn run_keeping_tails(
        &self,
        limit: usize,
    ) -> std::io::Result<(CommandOutcome, Vec<u8>, Vec<u8>)> {
        let (out_reader, out_writer) = std::io::pipe()?;
        let (err_reader, err_writer) = std::io::pipe()?;
        let stdout = Tail::read_in_background(out_reader, limit);
        let stderr = Tail::read_in_background(err_reader, limit);
        // The writers move into the command and are closed when it has been spawned
        // and waited for, so the readers see the end once the command's group is gone.
        let outcome = self.run_with(Sink::Pipe(out_writer), Sink::Pipe(err_writer))?;
        Ok((outcome, stdout.finish(), stderr.finish()))
    }

    /// Runs the command with the given stdout and stderr.
    fn run_with(&self, stdout: Sink, stderr: Sink) -> std::io::Result<CommandOutcome> {
        // Agent-written code sees a built environment, never the harness's own. Its
        // HOME is an empty place outside the tree, so that nothing a tool keeps in ~
        // lands in the work directory: the sandbox's private /tmp, or on the host a
        // directory of its own that goes with the command.
        let host_home = match self.isolation {
            Isolation::Host => {
                Some(crate::fsutil::scratch_dir("loopbench-home-").map_err(std::io::Error::other)?)
            }
            _ => None,
        };
        let home = host_home.as_ref().map(|h| h.path());
        let start = Instant::now();
        // A program the kernel would not start (its interpreter gone) is the shell's
        // to report, as before: exit 126 or 127, never the harness's error.
        let spawned = match self.spawn(true, home, &stdout, &stderr) {
            Err(refused) if refused.direct => self.spawn(false, home, &stdout, &stderr),
            spawned => spawned,
        }
        .map_err(|refused| refused.error)?;
        // The harness's copies of the writers close here: the readers see the end once
        // the command's group is gone.
        drop((stdout, stderr));
        let Spawned {
            mut leader,
            started,
        } = spawned;
        let pid = u32::try_from(leader.group().raw()).unwrap_or_default();
        let (status, timed_out) = match leader.wait_timeout(self.timeout)? {
            Some(status) => (status, false),
            None => (leader.terminate(KILL_GRACE)?, true),
        };
        drop(leader);
        let mut code = status.code();
        let limits_reached = match &started {
            Some(Started::Confined(confined)) => confined
                .ended(None, !timed_out)
                .map_err(std::io::Error::other)?
                .map_err(|why| {
                    if confined.is_container() {
                        // The engine's failure (a replayed command's container lost).
                        std::io::Error::other(SandboxError::ContainerLost {
                            command: self.script.to_string(),
                            why,
                        })
                    } else {
                        std::io::Error::other(format!("the sandbox could not start: {why}"))
                    }
                })?,
            // The engine's word on the container, never its client's exit status (125
            // to 127 are the engine's own failures as well as a program's).
            Some(Started::Container(container)) if !timed_out => match container.ran() {
                Ran::Never(why) => {
                    return Err(std::io::Error::other(SandboxError::ContainerLost {
                        command: self.script.to_string(),
                        why,
                    }));
                }
                Ran::Exited { code: exited, oom } => {
                    code = Some(exited);
                    if oom {
                        vec!["the container's memory limit ended it".to_string()]
                    } else {
                        Vec::new()
                    }
                }
            },
            _ => Vec::new(),
        };
        // A container goes with its handle, whatever became of its client.
        drop(started);
        Ok(CommandOutcome {
            code,
            timed_out,
            elapsed: start.elapsed(),
            limits_reached,
            pid,
        })
    }

    /// Starts the command, its first process the leader of a group of its own (and its
    /// sandbox, if any, started). `direct_allowed`: whether a one-command script may
    /// start its program without `sh -c` ([`Self::command`]).
    fn spawn(
        &self,
        direct_allowed: bool,
        home: Option<&Path>,
        stdout: &Sink,
        stderr: &Sink,
    ) -> Result<Spawned, SpawnRefused> {
        let refused = |direct| move |error| SpawnRefused { error, direct };
        let (launch, started_directly, started) =
            self.command(direct_allowed).map_err(refused(false))?;
        let refused = refused(started_directly);
        let built = match self.isolation {
            Isolation::Host | Isolation::Sandbox(_) => {
                let home = home.unwrap_or(Path::new("/tmp"));
                // Python's byte-code caches are no work of the agent's: a replayed test
                // run must not leave `__pycache__` in the tree it measures.
                let mut built = crate::sandbox::base_env(home);
                built.push(("PYTHONDONTWRITEBYTECODE".into(), "1".into()));
                built.retain(|(k, _)| !self.env.iter().any(|(e, _)| e == k));
                built.extend(self.env.iter().cloned());
                if started_directly {
                    // What the shell would have exported.
                    let given = built
                        .iter()
                        .find(|(k, _)| k == "PWD")
                        .map(|(_, v)| v.clone());
                    let pwd = crate::sandbox::shell_pwd(self.cwd, given.as_deref());
                    built.retain(|(k, _)| k != "PWD");
                    built.push(("PWD".into(), pwd));
                }
                Some(built)
            }
            Isolation::ProcessGroup | Isolation::Container(_) => None,
        };
        let leader = match launch {
            Launch::Command(mut cmd) => {
                match (&built, &started) {
                    (Some(built), Some(Started::Confined(confined))) => confined
                        .set_env(&mut cmd, built)
                        .map_err(|e| refused(std::io::Error::other(e)))?,
                    (Some(built), _) => {
                        cmd.env_clear().envs(built.iter().map(|(k, v)| (k, v)));
                    }
                    (None, _) => {
                        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
                        if started_directly {
                            let given = self.variable("PWD");
                            cmd.env("PWD", crate::sandbox::shell_pwd(self.cwd, given.as_deref()));
                        }
                    }
                }
                cmd.current_dir(self.cwd)
                    .stdin(Stdio::null())
                    .stdout(stdout.to_stdio().map_err(refused)?)
                    .stderr(stderr.to_stdio().map_err(refused)?);
                Leader::spawn(&mut cmd).map_err(refused)?
            }
            Launch::Namespaced {
                program,
                argv,
                namespaces,
            } => {
                let env: Vec<(OsString, OsString)> = built
                    .unwrap_or_default()
                    .into_iter()
                    .map(|(k, v)| (OsString::from(k), v))
                    .collect();
                let stdin = dev_null().map_err(refused)?;
                let stdout = stdout.to_fd().map_err(refused)?;
                let stderr = stderr.to_fd().map_err(refused)?;
                Leader::spawn_namespaced(&fresh_namespaces::Start {
                    program: &program,
                    argv: &argv,
                    env: &env,
                    cwd: self.cwd,
                    stdio: [stdin.as_fd(), stdout.as_fd(), stderr.as_fd()],
                    namespaces,
                })
                .map_err(refused)?
            }
        };
        Ok(Spawned { leader, started })
    }

    /// What runs the script as its isolation says: in the sandbox (with its confined
    /// start), in namespaces of its own where the host contains commands that way, or
    /// in a plain shell.
    /// On the host, a script that is one command of a program the kernel can start
    /// ([`crate::sandbox::direct_command`]) is started without `sh -c` around it (a
    /// process start fewer); `.1` says so.
    fn command(&self, direct_allowed: bool) -> std::io::Result<(Launch, bool, Option<Started>)> {
        let host = containment();
        let path = self.variable("PATH");
        // One search of PATH for both forms.
        let simple = crate::sandbox::simple_command(self.script, path.as_deref());
        let script = simple
            .as_ref()
            .map_or(std::borrow::Cow::Borrowed(self.script), |c| {
                c.exec_form().into()
            });
        let script = script.as_ref();
        let on_host = matches!(self.isolation, Isolation::Host | Isolation::ProcessGroup);
        let direct = simple.filter(|c| direct_allowed && on_host && c.starts_without_shell());
        let started_directly = direct.is_some();
        let (launch, started) = match self.isolation {
            Isolation::Sandbox(layout) => {
                let confined = Confined::start(layout, None).map_err(std::io::Error::other)?;
                let mut c = confined.command();
                c.args(["sh", "-c", script]);
                (Launch::Command(c), Some(Started::Confined(confined)))
            }
            Isolation::Container(run) => {
                let mut run = run.clone();
                let mut env = vec![
                    ("HOME".to_string(), OsString::from("/tmp")),
                    ("LANG".into(), "C.UTF-8".into()),
                    ("PYTHONDONTWRITEBYTECODE".into(), "1".into()),
                ];
                env.extend(self.env.iter().cloned());
                for (k, v) in env {
                    run.env.retain(|(e, _)| *e != k);
                    run.env.push((k, v));
                }
                let argv: Vec<OsString> = vec!["sh".into(), "-c".into(), self.script.into()];
                let (c, container) = run.start(&argv)?;
                (Launch::Command(c), Some(Started::Container(container)))
            }
            Isolation::Host if host.pid_namespace || host.network_namespace => {
                let (program, argv) = match &direct {
                    Some(direct) => (
                        direct.program.clone(),
                        direct.words.iter().map(OsString::from).collect(),
                    ),
                    // The shell the command's PATH leads to, as `unshare sh` found it.
                    None => (
                        crate::sandbox::find_program("sh", path.as_deref())
                            .filter(|sh| sh.is_absolute())
                            .unwrap_or_else(|| on_path("sh")),
                        ["sh", "-c", script].map(OsString::from).to_vec(),
                    ),
                };
                let namespaces = Namespaces {
                    network: host.network_namespace,
                    pid: host.pid_namespace,
                };
                let launch = Launch::Namespaced {
                    program,
                    argv,
                    namespaces,
                };
                (launch, None)
            }
            Isolation::Host | Isolation::ProcessGroup => match &direct {
                Some(direct) => {
                    let mut c = Command::new(&direct.program);
                    c.arg0(&direct.words[0]).args(&direct.words[1..]);
                    (Launch::Command(c), None)
                }
                None => {
                    let mut c = Command::new(on_path("sh"));
                    c.args(["-c", script]);
                    (Launch::Command(c), None)
                }
            },
        };
        Ok((launch, started_directly, started))
    }

    /// The value of `name` the command's environment has: its own, else the harness's.
    fn variable(&self, name: &str) -> Option<OsString> {
        self.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var_os(name))
    }
}

/// `name` as found on the harness's `PATH` (the bare name when it is not there): a bare
/// name in a command whose environment is replaced makes the standard library fork the
/// whole harness to search it, instead of spawning without a copy.
fn on_path(name: &str) -> std::path::PathBuf {
    crate::sandbox::find_program(name, std::env::var_os("PATH").as_deref())
        .unwrap_or_else(|| name.into())
}

/// What this machine lets the harness do to contain a command run on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Containment {
    /// A network namespace of the command's own can be made: no network.
    pub network_namespace: bool,
    /// A PID namespace whose init the command is can be made: nothing outlives it.
    pub pid_namespace: bool,
}

/// Probes, once, which namespaces the harness can give a command here (it needs root
/// or user namespaces).
pub fn containment() -> Containment {
    static FOUND: OnceLock<Containment> = OnceLock::new();
    *FOUND.get_or_init(|| {
        let true_program = on_path("true");
        let works =
            |network, pid| fresh_namespaces::available(Namespaces { network, pid }, &true_program);
        // As root both at once: one program start.
        if works(true, true) {
            return Containment {
                network_namespace: true,
                pid_namespace: true,
            };
        }
        Containment {
            network_namespace: works(true, false),
            pid_namespace: works(false, true),
        }
    })
}

/// Whether a command can be given a network namespace of its own here (it needs root
/// or user namespaces). Probed once.
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
        // Reaped by init or a zombie at most: never still sleeping.
        let (pid, state) = still_running(&pidfile);
        assert!(state.is_none(), "grandchild {pid} still alive: {state:?}");
    }

    /// The process whose pid `pidfile` holds, a moment later: its `stat` line while it
    /// runs (a zombie is not running).
    fn still_running(pidfile: &Path) -> (i32, Option<String>) {
        let pid: i32 = std::fs::read_to_string(pidfile)
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
        (pid, running.then_some(state))
    }

    #[test]
    fn a_process_that_left_the_group_does_not_outlive_its_command_where_namespaces_work() {
        if !containment().pid_namespace {
            eprintln!("skipped: PID namespaces cannot be made here");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let pidfile = dir.path().join("pid");
        let script = format!(
            "setsid sh -c 'read -r p _ < /proc/self/stat; echo $p > {}; exec sleep 300' & sleep 0.2; exit 0",
            pidfile.display()
        );
        sh_in(&script, dir.path());
        let (pid, state) = still_running(&pidfile);
        assert!(
            state.is_none(),
            "setsid process {pid} still alive: {state:?}"
        );
    }

    #[test]
    fn a_command_started_without_a_shell_sees_what_it_saw_under_one() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("work");
        std::fs::create_dir(&cwd).unwrap();
        std::fs::write(
            cwd.join("t.sh"),
            "for a in \"$0\" \"$@\"; do echo \"[$a]\"; done; pwd; env | sort; exit 3\n",
        )
        .unwrap();
        let env = [("CHECK_VAR".to_string(), OsString::from("x"))];
        let run = |script: &str, isolation| {
            let (outcome, out, err) = ShellCommand {
                script,
                cwd: &cwd,
                env: &env,
                timeout: Duration::from_secs(10),
                isolation,
            }
            .run_keeping_tails(1 << 20)
            .unwrap();
            let out = String::from_utf8(out).unwrap();
            // HOME differs from run to run on the host (a directory of each command's).
            let out: Vec<String> = out
                .lines()
                .filter(|l| !l.starts_with("HOME="))
                .map(String::from)
                .collect();
            (outcome.code, out, err)
        };
        for isolation in [Isolation::Host, Isolation::ProcessGroup] {
            let path = std::env::var_os("PATH");
            for script in ["sh t.sh a b", "sh t.sh 'a b' '' x'$y'"] {
                assert!(crate::sandbox::direct_command(script, path.as_deref()).is_some());
                // `true;` keeps the shell in between.
                let direct = run(script, isolation);
                let shelled = run(&format!("true; {script}"), isolation);
                assert_eq!(direct.0, Some(3));
                assert_eq!(direct, shelled, "{isolation:?} {script}");
                assert!(direct.1.iter().any(|l| l == "CHECK_VAR=x"), "{direct:?}");
            }
            let quoted = run("sh t.sh 'a b' '' x'$y'", isolation);
            assert_eq!(quoted.1[..4], ["[t.sh]", "[a b]", "[]", "[x$y]"]);
        }
    }

    #[test]
    fn a_program_the_kernel_refuses_is_the_shells_to_report_as_before() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let tool = bin.join("broken-tool");
        std::fs::write(&tool, "#!/nonexistent/interpreter\necho ran\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([bin, "/usr/bin".into(), "/bin".into()]).unwrap();
        let env = [("PATH".to_string(), path.clone())];
        assert!(crate::sandbox::direct_command("broken-tool", Some(&path)).is_some());
        for isolation in [Isolation::Host, Isolation::ProcessGroup] {
            let run = |script: &str| {
                ShellCommand {
                    script,
                    cwd: dir.path(),
                    env: &env,
                    timeout: Duration::from_secs(10),
                    isolation,
                }
                .run_keeping_tail(4096)
                .unwrap()
            };
            let (direct, _) = run("broken-tool");
            let (shelled, _) = run("true; broken-tool");
            assert!(matches!(direct.code, Some(126 | 127)), "{direct:?}");
            assert_eq!(direct.code, shelled.code, "{isolation:?}");
        }
    }

    #[test]
    fn the_kept_tail_is_the_end_of_stdout_then_stderr_and_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let (outcome, tail) = ShellCommand {
            script: "printf 'out-start '; printf 'out-end '; printf 'err-end' >&2; exit 4",
            cwd: dir.path(),
            env: &[],
            timeout: Duration::from_secs(10),
            isolation: Isolation::ProcessGroup,
        }
        .run_keeping_tail(20)
        .unwrap();
        assert_eq!(outcome.code, Some(4));
        assert_eq!(String::from_utf8(tail).unwrap(), "tart out-end err-end");
    }

    #[test]
    fn a_command_printing_megabytes_keeps_only_its_last_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let (outcome, tail) = ShellCommand {
            script: "head -c 5000000 /dev/zero | tr '\\0' a; echo END",
            cwd: dir.path(),
            env: &[],
            timeout: Duration::from_secs(30),
            isolation: Isolation::ProcessGroup,
        }
        .run_keeping_tail(2048)
        .unwrap();
        assert!(outcome.success());
        assert_eq!(tail.len(), 2048);
        assert!(tail.ends_with(b"aaaEND\n"));
    }

    #[test]
    fn a_cut_inside_a_character_starts_at_the_next_one() {
        let text = "é".repeat(10);
        let tail = last_bytes(text.as_bytes(), 5);
        assert_eq!(std::str::from_utf8(tail).unwrap(), "éé");
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
