//! One command in a fresh container: the engine's `run` arguments from what the
//! container shows, lets write and limits, and afterwards whether the program ran.
//!
//! Deny by default, as the bubblewrap sandbox is: no capability (`--cap-drop=ALL`,
//! `no-new-privileges`), no network unless asked (`--network=none`; only a check's
//! container may be given the network, never an agent's), the engine's limits on
//! processes, memory and CPUs, a non-root user under a root harness (the sandbox's
//! user, who is handed what the container may write), the environment built and passed
//! in a file of the harness's (values never on a command line, and the engine's own
//! environment left as it is), and only the places named mounted. The
//! program is PID 1 of the container's own PID namespace, so that everything it started
//! dies with it; the container is named, and removed (`kill`, `rm -f`) when its handle
//! is dropped, however the command ended: nothing outlives it.
//!
//! Whether the program ran is the engine's word, never the program's: the container's
//! state after it ended (`inspect`: `exited` with the exit code; a container that was
//! created but never started is a failure of the engine or the image).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use super::engine::{Called, Engine};
use crate::sandbox::SandboxUser;

/// How long the engine may take to report on or remove a container.
const ENGINE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long the harness waits, after a container's program was killed by a signal, for
/// the engine to remove the container it may be removing (podman takes about 0.15 s
/// here from the kill to the removal).
const REMOVAL_GRACE: Duration = Duration::from_secs(2);
/// The label every container of the harness carries (its value: the harness's pid).
pub const LABEL: &str = "loopbench.harness";

/// A place of the host shown in the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// The host path (it must exist).
    pub host: PathBuf,
    /// Where it appears inside.
    pub target: PathBuf,
    /// Whether the container may write it.
    pub writable: bool,
}

/// What one container may use.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ContainerLimits {
    /// Processes and threads at once (`--pids-limit`).
    pub pids: u64,
    /// Bytes of memory, swap included (`--memory`, `--memory-swap`).
    pub memory: u64,
    /// CPUs (`--cpus`); `None`: no limit.
    pub cpus: Option<f64>,
}

/// One command to run in a fresh container.
#[derive(Debug, Clone)]
pub struct ContainerRun {
    /// The engine.
    pub engine: Engine,
    /// The image (its id, so that what ran is what was recorded).
    pub image: String,
    /// The places shown.
    pub mounts: Vec<Mount>,
    /// The whole environment inside (besides what the image sets).
    pub env: Vec<(String, OsString)>,
    /// The working directory inside.
    pub workdir: String,
    /// Whether the container reaches the network.
    pub network: bool,
    /// Its limits.
    pub limits: ContainerLimits,
    /// The user it runs as; `None`: the image's (a harness that is not root, whose
    /// engine maps the container's root to the harness's own user).
    pub user: Option<SandboxUser>,
    /// Whether the program reads the client's stdin (an agent's prompt); otherwise its
    /// stdin is empty.
    pub stdin: bool,
    /// The size of a private `/tmp` of its own (a tmpfs); `None`: the image's `/tmp`.
    pub tmp_bytes: Option<u64>,
}

/// How a container's program went, from the engine's report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran {
    /// The program ran and exited with this code; `oom`: the memory limit killed it.
    Exited {
        /// Its exit code.
        code: i32,
        /// The engine says the memory limit ended it.
        oom: bool,
    },
    /// The engine has no exit of the program to report: it could not create or start
    /// the container, or lost it (removed, killed by the engine) while it ran.
    Never(String),
}

/// A started container's handle: removes the container when dropped.
#[derive(Debug)]
pub struct Container {
    engine: Engine,
    name: String,
    env_file: tempfile::NamedTempFile,
}

impl ContainerRun {
    /// Names a fresh container and the command that runs `argv` in it (the engine's
    /// client, the built environment in a file beside it). The handle removes the
    /// container, and the file, when dropped. A value holding a newline cannot be
    /// passed that way, and is an error.
    pub fn start(&self, argv: &[OsString]) -> std::io::Result<(Command, Container)> {
        let (words, container) = self.prepare()?;
        container.write_env(&self.env)?;
        let mut cmd = self.engine.command();
        cmd.args(&words[1..]);
        cmd.args(argv);
        Ok((cmd, container))
    }

    /// Names a fresh container and the words that start it, to be followed by the
    /// program and its arguments: the engine's program, its `run` arguments, an
    /// environment file of the harness's (empty until [`Container::write_env`]) and the
    /// image. The handle removes the container, and the file, when dropped.
    pub fn prepare(&self) -> std::io::Result<(Vec<OsString>, Container)> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        static CLEARED: std::sync::Once = std::sync::Once::new();
        CLEARED.call_once(|| remove_dead_leftovers(&self.engine));
        let name = crate::sandbox::fresh_name(&NEXT);
        let env_file = tempfile::NamedTempFile::new()?;
        let mut words: Vec<OsString> = vec![self.engine.program.clone().into_os_string()];
        words.extend(self.args(&name));
        words.push("--env-file".into());
        words.push(env_file.path().as_os_str().to_owned());
        words.push(self.image.clone().into());
        Ok((
            words,
            Container {
                engine: self.engine.clone(),
                name,
                env_file,
            },
        ))
    }

    /// The engine's `run` arguments before the environment file and the image, for a
    /// container named `name`.
    pub fn args(&self, name: &str) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "run".into(),
            format!("--name={name}").into(),
            format!("--label={LABEL}={}", std::process::id()).into(),
            "--pull=never".into(),
            format!("--interactive={}", self.stdin).into(),
            "--cap-drop=ALL".into(),
            "--security-opt=no-new-privileges".into(),
            format!("--pids-limit={}", self.limits.pids).into(),
            format!("--memory={}", self.limits.memory).into(),
            format!("--memory-swap={}", self.limits.memory).into(),
            "--hostname=loopbench".into(),
        ];
        if !self.network {
            args.push("--network=none".into());
        }
        if let Some(cpus) = self.limits.cpus {
            args.push(format!("--cpus={cpus}").into());
        }
        if let Some(user) = self.user {
            args.push(format!("--user={}", user.spelled()).into());
        }
        if let Some(bytes) = self.tmp_bytes {
            args.push(format!("--tmpfs=/tmp:rw,nosuid,nodev,size={bytes},mode=1777").into());
        }
        for m in &self.mounts {
            let mut spec = OsString::from("type=bind,source=");
            spec.push(&m.host);
            spec.push(",target=");
            spec.push(&m.target);
            if !m.writable {
                spec.push(",readonly");
            }
            args.push("--mount".into());
            args.push(spec);
        }
        args.push(format!("--workdir={}", self.workdir).into());
        args
    }
}

impl Container {
    /// The container's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file the environment inside is written to.
    #[cfg(test)]
    pub(super) fn env_file(&self) -> &std::path::Path {
        self.env_file.path()
    }

    /// Writes the whole environment inside into the container's environment file, before
    /// the container starts. A value holding a newline cannot be passed that way, and
    /// is an error.
    pub fn write_env(&self, env: &[(String, OsString)]) -> std::io::Result<()> {
        std::fs::write(self.env_file.path(), env_file_text(env)?)
    }

    /// How the program went, from the engine's report on the container (asked once the
    /// engine's client has ended).
    pub fn ran(&self) -> Ran {
        let called =
            match self.inspect("{{.State.Status}} {{.State.ExitCode}} {{.State.OOMKilled}}") {
                Ok(c) => c,
                Err(e) => {
                    return Ran::Never(format!(
                        "cannot ask {} of the container: {e}",
                        self.engine.name
                    ));
                }
            };
        if !called.ok() {
            return Ran::Never(format!(
                "{} has no report on the container (it never made it, or removed it while it \
                 ran): {}",
                self.engine.name,
                called.reason()
            ));
        }
        match parse_state(&called.stdout) {
            Some(Ran::Exited { code, oom: false })
                if code > 128 && self.removed_after_a_while() =>
            {
                Ran::Never(format!(
                    "{} lost the container while its program ran: it was killed (exit \
                     {code}), then removed",
                    self.engine.name
                ))
            }
            Some(ran) => ran,
            None => Ran::Never(format!(
                "{} created the container but never started its program (state '{}')",
                self.engine.name,
                called.stdout.trim()
            )),
        }
    }

    /// Whether the engine removes the container within [`REMOVAL_GRACE`], as it does
    /// one it lost: it kills a container before it removes it, so a program killed by a
    /// signal may be one whose container is going. One the engine keeps is the program's
    /// end.
    fn removed_after_a_while(&self) -> bool {
        std::thread::sleep(REMOVAL_GRACE);
        match self.inspect("{{.State.Status}}") {
            Ok(called) => !called.ok() || called.stdout.trim() == "removing",
            Err(_) => true,
        }
    }

    /// The engine's report on the container, in `format` (a Go template).
    fn inspect(&self, format: &str) -> std::io::Result<Called> {
        self.engine.call(
            &["container", "inspect", "--format", format, &self.name],
            ENGINE_TIMEOUT,
        )
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        // Killed first: `rm -f` of some engines waits for a stop timeout.
        let _ = self.engine.call(&["kill", &self.name], ENGINE_TIMEOUT);
        let _ = self
            .engine
            .call(&["rm", "--force", &self.name], ENGINE_TIMEOUT);
    }
}

/// Removes the containers a harness left that is no longer running (killed before it
/// could remove them): named `loopbench-<pid>-…`, whose process is gone. Best effort,
/// once per process, before its first container.
fn remove_dead_leftovers(engine: &Engine) {
    let filter = format!("label={LABEL}");
    let Ok(listed) = engine.call(
        &["ps", "--all", "--filter", &filter, "--format", "{{.Names}}"],
        ENGINE_TIMEOUT,
    ) else {
        return;
    };
    let dead: Vec<&str> = listed
        .stdout
        .lines()
        .map(str::trim)
        .filter(|name| {
            name.strip_prefix("loopbench-")
                .and_then(|rest| rest.split('-').next())
                .and_then(|pid| pid.parse::<u32>().ok())
                .is_some_and(|pid| {
                    pid != std::process::id()
                        && !std::path::Path::new(&format!("/proc/{pid}")).exists()
                })
        })
        .collect();
    if !dead.is_empty() {
        let mut args = vec!["rm", "--force"];
        args.extend(dead);
        let _ = engine.call(&args, ENGINE_TIMEOUT);
    }
}

/// `NAME=VALUE` lines of an engine's `--env-file`; a value with a newline is refused.
fn env_file_text(env: &[(String, OsString)]) -> std::io::Result<String> {
    let mut text = String::new();
    for (k, v) in env {
        let v = v.to_string_lossy();
        if v.contains('\n') || k.contains(['\n', '=']) {
            return Err(std::io::Error::other(format!(
                "the environment variable '{k}' cannot be passed to a container: its name \
                 or value holds a newline"
            )));
        }
        text.push_str(&format!("{k}={v}\n"));
    }
    Ok(text)
}

/// [`Ran::Exited`] from `STATUS CODE OOM` of a container that ran, `None` otherwise.
fn parse_state(text: &str) -> Option<Ran> {
    let mut words = text.split_whitespace();
    let status = words.next()?;
    let code: i32 = words.next()?.parse().ok()?;
    let oom = words.next() == Some("true");
    matches!(status, "exited" | "stopped" | "dead").then_some(Ran::Exited { code, oom })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::container::EngineName;

    fn run() -> ContainerRun {
        ContainerRun {
            engine: Engine {
                name: EngineName::Podman,
                program: "/usr/bin/podman".into(),
            },
            image: "sha256:abc".into(),
            mounts: vec![
                Mount {
                    host: "/tmp/w".into(),
                    target: "/app".into(),
                    writable: true,
                },
                Mount {
                    host: "/tmp/t".into(),
                    target: "/tests".into(),
                    writable: false,
                },
            ],
            env: vec![("SECRET".into(), "s3cret".into())],
            workdir: "/app".into(),
            network: false,
            limits: ContainerLimits {
                pids: 64,
                memory: 1 << 28,
                cpus: Some(0.5),
            },
            user: Some(SandboxUser::default()),
            stdin: false,
            tmp_bytes: None,
        }
    }

    /// A container of a stand-in engine in `dir` whose `container inspect` prints each
    /// of `states` in turn, then fails as for a container that is not there; `kill`
    /// and `rm` succeed. The file `dir/asked` counts the inspections.
    fn stand_in(dir: &std::path::Path, states: &[&str]) -> Container {
        let program = dir.join("engine");
        let mut script = String::from(
            "#!/bin/sh\n[ \"$1\" = container ] || exit 0\nn=$(cat \"$0.n\" 2>/dev/null || echo 0)\n\
             echo $((n + 1)) > \"$0.n\"; cp \"$0.n\" \"$(dirname \"$0\")/asked\"\ncase $n in\n",
        );
        for (i, state) in states.iter().enumerate() {
            script.push_str(&format!("{i}) echo '{state}'; exit 0;;\n"));
        }
        script.push_str("esac\necho 'Error: no such container' >&2\nexit 125\n");
        std::fs::write(&program, script).unwrap();
        std::fs::set_permissions(
            &program,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        Container {
            engine: Engine {
                name: EngineName::Podman,
                program,
            },
            name: "loopbench-test".into(),
            env_file: tempfile::NamedTempFile::new().unwrap(),
        }
    }

    fn asked(dir: &std::path::Path) -> String {
        std::fs::read_to_string(dir.join("asked"))
            .unwrap()
            .trim()
            .to_string()
    }

    #[test]
    fn a_program_killed_in_a_container_the_engine_then_removes_is_a_lost_container() {
        let dir = tempfile::tempdir().unwrap();
        let ran = stand_in(dir.path(), &["exited 137 false"]).ran();
        let Ran::Never(why) = ran else {
            panic!("{ran:?}")
        };
        assert!(
            why.contains("lost the container") && why.contains("137"),
            "{why}"
        );
        let dir = tempfile::tempdir().unwrap();
        let ran = stand_in(dir.path(), &["exited 137 false", "removing"]).ran();
        assert!(matches!(ran, Ran::Never(_)), "{ran:?}");
    }

    #[test]
    fn a_killed_program_whose_container_is_kept_and_an_exit_of_its_own_are_the_programs() {
        let dir = tempfile::tempdir().unwrap();
        let kept = stand_in(dir.path(), &["exited 137 false", "exited 137 false"]);
        assert_eq!(
            kept.ran(),
            Ran::Exited {
                code: 137,
                oom: false
            }
        );
        assert_eq!(asked(dir.path()), "2");
        // Out of memory, or an exit below 129: the engine's word at once.
        let dir = tempfile::tempdir().unwrap();
        let oom = stand_in(dir.path(), &["exited 137 true"]);
        assert_eq!(
            oom.ran(),
            Ran::Exited {
                code: 137,
                oom: true
            }
        );
        assert_eq!(asked(dir.path()), "1");
        let dir = tempfile::tempdir().unwrap();
        let failed = stand_in(dir.path(), &["exited 1 false"]);
        assert_eq!(
            failed.ran(),
            Ran::Exited {
                code: 1,
                oom: false
            }
        );
        assert_eq!(asked(dir.path()), "1");
    }

    #[test]
    fn a_container_has_no_capability_network_or_value_on_its_command_line() {
        let args: Vec<String> = run()
            .args("c1")
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        for want in [
            "--cap-drop=ALL",
            "--security-opt=no-new-privileges",
            "--network=none",
            "--pids-limit=64",
            "--memory=268435456",
            "--memory-swap=268435456",
            "--cpus=0.5",
            "--user=65534:65534",
            "type=bind,source=/tmp/w,target=/app",
            "type=bind,source=/tmp/t,target=/tests,readonly",
            "--workdir=/app",
        ] {
            assert!(args.iter().any(|a| a == want), "{want} in {args:?}");
        }
        assert!(!args.iter().any(|a| a.contains("s3cret")), "{args:?}");
        let (cmd, container) = run().start(&["true".into()]).unwrap();
        let all: Vec<String> = cmd
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(all[all.len() - 2], "sha256:abc", "{all:?}");
        assert!(!all.iter().any(|a| a.contains("s3cret")), "{all:?}");
        assert_eq!(
            std::fs::read_to_string(container.env_file.path()).unwrap(),
            "SECRET=s3cret\n"
        );
        assert!(
            cmd.get_envs().next().is_none(),
            "the engine's environment is its own"
        );
        drop(container);
        let open = ContainerRun {
            network: true,
            ..run()
        };
        assert!(!open.args("c2").iter().any(|a| a == "--network=none"));
    }

    #[test]
    fn only_a_container_that_exited_ran() {
        assert_eq!(
            parse_state("exited 3 false\n"),
            Some(Ran::Exited {
                code: 3,
                oom: false
            })
        );
        assert_eq!(
            parse_state("exited 137 true"),
            Some(Ran::Exited {
                code: 137,
                oom: true
            })
        );
        assert_eq!(parse_state("created 0 false"), None);
        assert_eq!(parse_state(""), None);
    }
}
