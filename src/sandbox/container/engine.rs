//! The OCI engine behind the container sandbox: `podman` or `docker`, whichever answers
//! `info` (a suite may name one), found once per process. The engine is the harness's
//! own tool, so its command line runs with the harness's environment (its
//! configuration: `CONTAINERS_CONF`, `DOCKER_HOST`); what runs inside a container gets
//! only the environment the harness builds for it ([`super::ContainerRun`]).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use serde::Deserialize;

use crate::process_group::Leader;

/// How long the engine may take to answer `info`.
const INFO_TIMEOUT: Duration = Duration::from_secs(30);

/// How much of an engine call's output is kept for its caller and its error messages.
const CALL_OUTPUT_BYTES: u64 = 64 * 1024;

/// An OCI engine's command line, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineName {
    /// Podman (rootful or rootless).
    Podman,
    /// Docker, with its daemon.
    Docker,
}

impl EngineName {
    /// Every engine, in the order one is looked for when the suite names none.
    pub const ALL: [EngineName; 2] = [EngineName::Podman, EngineName::Docker];

    /// The program's name, as a suite and the manifest spell it.
    pub fn name(self) -> &'static str {
        match self {
            EngineName::Podman => "podman",
            EngineName::Docker => "docker",
        }
    }
}

impl std::fmt::Display for EngineName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// An engine that answered `info`: its name and program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Engine {
    /// Which engine.
    pub name: EngineName,
    /// The program, as found on the harness's `PATH`.
    pub program: PathBuf,
}

/// What one call of the engine's command line left.
#[derive(Debug)]
pub struct Called {
    /// Its exit code; `None`: killed (its time limit).
    pub code: Option<i32>,
    /// The start of its stdout.
    pub stdout: String,
    /// The start of its stderr.
    pub stderr: String,
}

impl Called {
    /// Exited 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }

    /// The engine's own reason, for a message: the last non-empty line of stderr.
    pub fn reason(&self) -> String {
        let said = self
            .stderr
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty());
        match (said, self.code) {
            (Some(line), _) => line.to_string(),
            (None, Some(code)) => format!("exit {code}, no message"),
            (None, None) => "it did not answer in time".to_string(),
        }
    }
}

impl Engine {
    /// The engine to use: `named`, when it answers `info`, else the first of
    /// [`EngineName::ALL`] that does. `Err` says which engines were asked and what
    /// each said, for an exit-2 message. Each engine is probed once per process.
    pub fn find(named: Option<EngineName>) -> std::result::Result<Engine, String> {
        let candidates: Vec<EngineName> = match named {
            Some(n) => vec![n],
            None => EngineName::ALL.to_vec(),
        };
        let mut said = Vec::new();
        for name in candidates {
            match probe(name) {
                Ok(engine) => return Ok(engine),
                Err(why) => said.push(format!("{name}: {why}")),
            }
        }
        Err(format!(
            "no container engine answers `info` ({}); install podman (with runc) or start \
             docker's daemon",
            said.join("; ")
        ))
    }

    /// A command of this engine, with the harness's environment.
    pub fn command(&self) -> Command {
        Command::new(&self.program)
    }

    /// Runs `args` with the engine, up to `timeout`, keeping the start of its output.
    pub fn call<S: AsRef<OsStr>>(&self, args: &[S], timeout: Duration) -> std::io::Result<Called> {
        let mut cmd = self.command();
        cmd.args(args);
        call(&mut cmd, timeout)
    }
}

/// Probes `name` once per process: found on `PATH` and `info` exits 0.
fn probe(name: EngineName) -> std::result::Result<Engine, String> {
    static PROBED: OnceLock<Mutex<HashMap<EngineName, std::result::Result<Engine, String>>>> =
        OnceLock::new();
    let memo = PROBED.get_or_init(|| Mutex::new(HashMap::new()));
    let mut memo = memo
        .lock()
        .map_err(|_| "the engine's probe failed".to_string())?;
    memo.entry(name)
        .or_insert_with(|| {
            let program =
                super::super::host::find_program(name.name(), std::env::var_os("PATH").as_deref())
                    .ok_or_else(|| "not installed (not on PATH)".to_string())?;
            let engine = Engine { name, program };
            match engine.call(&["info"], INFO_TIMEOUT) {
                Ok(called) if called.ok() => Ok(engine),
                Ok(called) => Err(format!("`{name} info` failed: {}", called.reason())),
                Err(e) => Err(format!("cannot run '{}': {e}", engine.program.display())),
            }
        })
        .clone()
}

/// Runs `cmd` (stdin closed) up to `timeout`, its output in files so that a long one
/// never blocks it; the first [`CALL_OUTPUT_BYTES`] of each are kept.
pub(super) fn call(cmd: &mut Command, timeout: Duration) -> std::io::Result<Called> {
    let out = tempfile::tempfile()?;
    let err = tempfile::tempfile()?;
    cmd.stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(err.try_clone()?);
    let mut leader = Leader::spawn(cmd)?;
    let status = match leader.wait_timeout(timeout)? {
        Some(status) => Some(status),
        None => {
            leader.kill_and_wait()?;
            None
        }
    };
    drop(leader);
    Ok(Called {
        code: status.and_then(|s| s.code()),
        stdout: start_of(out)?,
        stderr: start_of(err)?,
    })
}

/// The first [`CALL_OUTPUT_BYTES`] of a file written from its start, as text.
fn start_of(mut file: std::fs::File) -> std::io::Result<String> {
    use std::io::{Read, Seek};
    file.rewind()?;
    let mut bytes = Vec::new();
    file.take(CALL_OUTPUT_BYTES).read_to_end(&mut bytes)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_engine_named_but_absent_is_refused_with_its_name() {
        let err = probe_absent();
        assert!(err.contains("docker") || err.contains("podman"), "{err}");
    }

    fn probe_absent() -> String {
        // Whatever this machine has, the message of a failed search names the engine.
        match Engine::find(Some(EngineName::Docker)) {
            Ok(engine) => engine.name.to_string(),
            Err(why) => why,
        }
    }

    #[test]
    fn a_call_keeps_its_output_and_exit_code() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo out; echo 'first\nlast words' >&2; exit 3"]);
        let called = call(&mut cmd, Duration::from_secs(10)).unwrap();
        assert_eq!(called.code, Some(3));
        assert_eq!(called.stdout, "out\n");
        assert_eq!(called.reason(), "last words");
    }

    #[test]
    fn a_call_past_its_time_is_killed() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "sleep 30"]);
        let called = call(&mut cmd, Duration::from_millis(200)).unwrap();
        assert_eq!(called.code, None);
        assert_eq!(called.reason(), "it did not answer in time");
    }
}
