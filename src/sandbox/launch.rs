//! Starting a sandbox so that the harness knows, from bubblewrap itself and never from
//! what the program printed, whether the program ever ran. A small launcher shell on the
//! host execs bwrap with `--json-status-fd` on a file the sandbox cannot see; bwrap
//! writes `{"exit-code": N}` there only after the program it started has exited, so a
//! status without it is a sandbox that could not be set up (a missing bind source, a
//! program that cannot be executed, no namespaces).
//!
//! bwrap also gets the harness's seccomp filter (`--seccomp`, from a file beside the
//! status file; [`super::keyring`]) and the command that starts the launcher a fresh
//! session keyring ([`Launch::prepare`]): no sandbox reaches a kernel keyring.
//!
//! Inside, before the program, a second small shell moves itself into the session's
//! cgroups (their `cgroup.procs` files are the only part of /sys the sandbox shows), so
//! that the cgroups hold the sandboxed processes alone: a memory limit the agent reaches
//! can never kill bwrap's own monitor, whose report says whether the agent ran. Under a
//! root harness it then switches to the sandbox's user ([`Layout::entry_args`]).
//!
//! [`Confined`] is the one start-up sequence of both sandboxes: where the layout carries
//! a task's image, its other arm starts a fresh container of it instead, whose engine
//! reports whether the program ran (`container/confined.rs`).

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::container::ConfinedContainer;
use super::host::{BWRAP, find_program};
use super::layout::Layout;
use super::limits::Cgroup;
use crate::error::{IoContext, Result};

/// The launcher on the host: `$1` is the status file, `$2` the seccomp filter, `$3`
/// bwrap, then its arguments. bwrap closes both descriptors before the program runs.
/// bwrap makes the parents of mount points under the umask it inherits, and a
/// harness's umask of 027 or 077 would make them walls for the sandbox's user of a
/// root harness: so bwrap, and what runs in the sandbox, get 022.
const LAUNCHER: &str = r#"umask 022; status=$1; filter=$2; bwrap=$3; shift 3
exec "$bwrap" --json-status-fd 3 --seccomp 4 "$@" 3>"$status" 4<"$filter"
"#;

/// The first program inside the sandbox: moves itself (`0` is the writer) into each
/// cgroup whose `cgroup.procs` file precedes `--`, then execs the program after it. A
/// cgroup it cannot join ends it with [`JOIN_FAILED`] before the program runs; the
/// harness tells that apart from the program's own exit by the cgroup never having
/// held a process.
const INSIDE: &str = r#"while [ "$#" -gt 0 ] && [ "$1" != -- ]; do
  printf '0\n' > "$1" || exit 125
  shift
done
shift
exec "$@"
"#;

/// The exit status of [`INSIDE`] when a cgroup cannot be joined.
pub const JOIN_FAILED: i32 = 125;

/// How a sandboxed program's start went, read from bwrap's status file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Started {
    /// The program ran and exited with this code (128 + N for signal N).
    Ran(i32),
    /// The sandbox could not be set up, or the program could not be executed: the
    /// program never ran. The reason: the launcher's, else bwrap's own first line.
    Failed(String),
}

/// One sandboxed start: the launcher's argument vector and where bwrap reports.
#[derive(Debug)]
pub struct Launch {
    status: PathBuf,
    filter: PathBuf,
    cgroup_procs: Vec<PathBuf>,
    _scratch: Option<tempfile::TempDir>,
}

impl Launch {
    /// A start reporting to `status` (a path the sandbox does not show), joining the
    /// cgroups whose `cgroup.procs` files are `cgroup_procs` first. The seccomp
    /// filter is written beside `status`.
    pub fn new(status: PathBuf, cgroup_procs: Vec<PathBuf>) -> Result<Launch> {
        let filter = status.with_extension("seccomp");
        write_filter(&filter)?;
        Ok(Launch {
            status,
            filter,
            cgroup_procs,
            _scratch: None,
        })
    }

    /// A start reporting to a fresh file under the scratch root, which every sandbox
    /// covers with its own private `/dev/shm` or `/tmp`.
    pub fn in_scratch(cgroup_procs: Vec<PathBuf>) -> Result<Launch> {
        let scratch = crate::fsutil::scratch_dir("loopbench-bwrap-")?;
        let mut launch = Launch::new(scratch.path().join("status.json"), cgroup_procs)?;
        launch._scratch = Some(scratch);
        Ok(launch)
    }

    /// What a command whose arguments hold a launch needs before it is spawned: a
    /// fresh, empty session keyring for it and everything it starts (bwrap does not
    /// namespace keyrings). Every caller of [`Launch::argv`] and
    /// [`Launch::argv_keeping_user`] calls this on the command.
    pub fn prepare(cmd: &mut std::process::Command) {
        super::keyring::fresh_session_keyring(cmd);
    }

    /// The program and arguments that start `layout`'s sandbox, to be followed by the
    /// sandboxed program and its arguments.
    pub fn argv(&self, layout: &Layout) -> Vec<OsString> {
        let mut argv = self.argv_keeping_user(layout);
        // Joined as whoever bwrap started; then the switch to the sandbox's user.
        argv.extend(layout.entry_args());
        argv
    }

    /// [`Launch::argv`] without the switch to the sandbox's user: the program after it
    /// runs as whoever bwrap started (uid 0 under a root harness), as the supervisor of
    /// a batch of checks does, which switches each check itself.
    pub fn argv_keeping_user(&self, layout: &Layout) -> Vec<OsString> {
        let bwrap = find_program(BWRAP, std::env::var_os("PATH").as_deref())
            .unwrap_or_else(|| PathBuf::from(BWRAP));
        let mut layout = layout.clone();
        layout
            .writable_files
            .extend(self.cgroup_procs.iter().cloned());
        let mut argv: Vec<OsString> = vec![
            "/bin/sh".into(),
            "-c".into(),
            LAUNCHER.into(),
            "loopbench-sandbox".into(),
            self.status.clone().into_os_string(),
            self.filter.clone().into_os_string(),
            bwrap.into_os_string(),
        ];
        argv.extend(layout.bwrap_args());
        if !self.cgroup_procs.is_empty() {
            argv.extend([
                "/bin/sh".into(),
                "-c".into(),
                INSIDE.into(),
                "loopbench-cgroup".into(),
            ]);
            argv.extend(self.cgroup_procs.iter().map(|p| p.clone().into_os_string()));
            argv.push("--".into());
        }
        argv
    }

    /// What bwrap reported once the launcher is gone; `stderr`, the file the
    /// sandbox's stderr went to, gives bwrap's own reason when the program never ran
    /// (nothing else wrote to it then). `cgroup`: the session's, whose never having
    /// held a process tells a failed join from the program's own exit status.
    pub fn started(&self, stderr: Option<&Path>, cgroup: Option<&Cgroup>) -> Result<Started> {
        let text = std::fs::read_to_string(&self.status)
            .or_else(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    Ok(String::new())
                } else {
                    Err(e)
                }
            })
            .io_context(|| format!("cannot read '{}'", self.status.display()))?;
        Ok(match parse_status(&text, || stderr.and_then(first_line)) {
            Started::Ran(JOIN_FAILED) if cgroup.is_some_and(|c| !c.held_a_process()) => {
                Started::Failed("the sandbox could not join the session's cgroup".into())
            }
            other => other,
        })
    }
}

/// One command started in a sandbox: the start-up sequence every confined command goes
/// through (an agent's session, a check, a replayed `run` action), and, once it has
/// ended, whether the sandbox ran it and which of the layout's limits it reached.
///
/// [`Confined::start`] hands what the sandbox may write (and the files its user must
/// read) over to the sandbox's user, then makes the sandbox the layout asks for: under
/// bubblewrap, the command's cgroup with the layout's limits and the [`Launch`] that
/// reports whether the program ran; in a task's image (the layout's `image`), a fresh
/// container of it ([`ConfinedContainer`]), whose engine reports. The command then
/// begins with [`Confined::command`], or carries the sandbox's words inside another
/// program's command line ([`Confined::append_to`]: the supervisor of a session), and
/// gets its built environment from [`Confined::set_env`].
#[derive(Debug)]
pub struct Confined {
    how: How,
    words: Vec<OsString>,
}

/// Which sandbox a [`Confined`] command starts in.
#[derive(Debug)]
enum How {
    Bwrap {
        launch: Launch,
        cgroup: Option<Cgroup>,
    },
    Container(Box<ConfinedContainer>),
}

impl Confined {
    /// Prepares the start of a command in `layout`'s sandbox. `report_dir`: where
    /// bubblewrap reports whether the program ran (a directory the sandbox does not
    /// show, its last report removed first); `None`: a fresh scratch directory. A
    /// container's engine reports by itself.
    pub fn start(layout: &Layout, report_dir: Option<&Path>) -> Result<Confined> {
        layout.hand_over().io_context(|| {
            format!(
                "cannot hand '{}' over to the sandbox's user",
                layout.work_dir.display()
            )
        })?;
        if let Some(run_as) = &layout.run_as
            && !layout.read_by_user.is_empty()
        {
            let read: Vec<&Path> = layout.read_by_user.iter().map(PathBuf::as_path).collect();
            run_as
                .user
                .hand_over(&read)
                .io_context(|| "cannot hand the prompt over to the sandbox's user".into())?;
        }
        if let Some(image) = &layout.image {
            let container = ConfinedContainer::new(layout, image)
                .io_context(|| "cannot prepare the session's container".into())?;
            let words = container.words().to_vec();
            return Ok(Confined {
                how: How::Container(Box::new(container)),
                words,
            });
        }
        let cgroup = layout
            .limits
            .map(Cgroup::create)
            .transpose()
            .io_context(|| "cannot create the sandbox's cgroup".into())?
            .flatten();
        let procs = cgroup.as_ref().map(Cgroup::procs_files).unwrap_or_default();
        let launch = match report_dir {
            Some(dir) => {
                let status = dir.join(STATUS_FILE);
                crate::fsutil::remove_if_present(&status)?;
                Launch::new(status, procs)?
            }
            None => Launch::in_scratch(procs)?,
        };
        let words = launch.argv(layout);
        Ok(Confined {
            how: How::Bwrap { launch, cgroup },
            words,
        })
    }

    /// Whether the sandbox is a container of a task's image (whose engine's report
    /// says whether the program ran), not bubblewrap.
    pub fn is_container(&self) -> bool {
        matches!(self.how, How::Container(_))
    }

    /// A command that starts the sandbox, to be given the confined program and its
    /// arguments.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.words[0]);
        if matches!(self.how, How::Bwrap { .. }) {
            Launch::prepare(&mut cmd);
        }
        cmd.args(&self.words[1..]);
        cmd
    }

    /// Puts the words that start the sandbox into `cmd` (which runs them: a
    /// supervisor), to be followed by the confined program and its arguments.
    pub fn append_to(&self, cmd: &mut Command) {
        if matches!(self.how, How::Bwrap { .. }) {
            Launch::prepare(cmd);
        }
        cmd.args(&self.words);
    }

    /// Gives the confined program `env`, the whole environment built for it, and
    /// nothing of the harness's: bubblewrap passes on the environment of `cmd` (the
    /// command that starts it), which is replaced; a container gets it in a file of the
    /// harness's, and `cmd` (the engine's client) keeps the harness's own.
    pub fn set_env(&self, cmd: &mut Command, env: &[(String, OsString)]) -> Result<()> {
        match &self.how {
            How::Bwrap { .. } => {
                cmd.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
                Ok(())
            }
            How::Container(container) => container
                .set_env(env)
                .io_context(|| "cannot write the container's environment".into()),
        }
    }

    /// Whether every process the confined command starts is in a cgroup of its own
    /// (bubblewrap with the layout's limits, where the machine makes cgroups): then
    /// [`Confined::end_everything`] ends all of it, wherever it went, and no supervisor
    /// is needed around the sandbox.
    pub fn holds_everything(&self) -> bool {
        matches!(
            self.how,
            How::Bwrap {
                cgroup: Some(_),
                ..
            }
        )
    }

    /// Kills every process left of the confined command and waits until none is, at
    /// most `within`; `false` when some process was still there then (or the command
    /// has no cgroup of its own to end: [`Confined::holds_everything`]).
    pub fn end_everything(&self, within: std::time::Duration) -> bool {
        match &self.how {
            How::Bwrap {
                cgroup: Some(cgroup),
                ..
            } => cgroup.end_all(within),
            _ => false,
        }
    }

    /// How the confined command went, once it has ended: `Err` with the reason when the
    /// sandbox never ran the program (asked only of a command that `exited` by itself:
    /// a killed sandbox reports nothing), else the layout's limits it reached, each as
    /// a sentence. `stderr`: the file the sandbox's stderr went to, which holds
    /// bubblewrap's own reason when the program never ran.
    pub fn ended(
        &self,
        stderr: Option<&Path>,
        exited: bool,
    ) -> Result<std::result::Result<Vec<String>, String>> {
        match &self.how {
            How::Container(container) => Ok(container.ended(exited)),
            How::Bwrap { launch, cgroup } => {
                if exited && let Started::Failed(why) = launch.started(stderr, cgroup.as_ref())? {
                    return Ok(Err(why));
                }
                Ok(Ok(cgroup.as_ref().map(Cgroup::reached).unwrap_or_default()))
            }
        }
    }
}

/// The file a [`Confined`] start given a report directory reports in.
const STATUS_FILE: &str = "bwrap.status";

/// Writes the sandbox's seccomp filter to `path`, replacing what is there.
fn write_filter(path: &Path) -> Result<()> {
    let bytes = super::keyring::keyring_filter().map_err(crate::error::Error::Tool)?;
    crate::fsutil::remove_if_present(path)?;
    std::fs::write(path, bytes).io_context(|| format!("cannot write '{}'", path.display()))
}

/// [`Started`] from the status file's JSON documents.
fn parse_status(text: &str, bwrap_said: impl FnOnce() -> Option<String>) -> Started {
    for doc in serde_json::Deserializer::from_str(text).into_iter::<serde_json::Value>() {
        let Ok(doc) = doc else { break };
        if let Some(code) = doc.get("exit-code").and_then(serde_json::Value::as_i64) {
            return Started::Ran(i32::try_from(code).unwrap_or(i32::MAX));
        }
    }
    Started::Failed(
        bwrap_said().unwrap_or_else(|| "the sandbox could not start (bwrap gave no reason)".into()),
    )
}

/// The first line of a file, at most 4 KiB of it.
fn first_line(path: &Path) -> Option<String> {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(4096)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    let line = text.lines().next()?.trim().to_string();
    (!line.is_empty()).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_exit_code_from_bwrap_says_the_program_ran() {
        let ran = "{ \"child-pid\": 8256, \"mnt-namespace\": 4026532179 }\n{ \"exit-code\": 7 }\n";
        assert_eq!(parse_status(ran, || None), Started::Ran(7));
        let failed = "{ \"child-pid\": 8261, \"mnt-namespace\": 4026532180 }\n";
        assert_eq!(
            parse_status(failed, || Some("bwrap: Can't find source path /x".into())),
            Started::Failed("bwrap: Can't find source path /x".into())
        );
        assert!(matches!(parse_status("", || None), Started::Failed(_)));
        assert!(matches!(
            parse_status("{\"exit-co", || None),
            Started::Failed(_)
        ));
    }
}
