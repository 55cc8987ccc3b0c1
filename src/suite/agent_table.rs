//! `[agents.NAME]` tables of `suite.toml`: how each agent's sessions are executed (the
//! built-in sim, or a command agent with its sandbox, crash mode, capture limit and
//! scripted model server), read and checked.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::setting::setting;
use super::toml_error::KeyAt;
use crate::error::{Error, Result};
use crate::sandbox::SandboxKind;
use crate::sandbox::net::NetTarget;

/// Default `crash_window` of a command agent: a typical session's length, so that a
/// crash lands inside sessions that are much shorter than their timeout.
pub const DEFAULT_CRASH_WINDOW: Duration = Duration::from_secs(10 * 60);

/// Default `capture_limit` of a command agent: what is kept of each of its stdout and
/// stderr per session. Enough for any transcript worth reading, small enough that a
/// runaway agent cannot fill the disk or the harness's memory.
pub const DEFAULT_CAPTURE_LIMIT: u64 = 64 * 1024 * 1024;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct AgentFile {
    driver: DriverKind,
    profile: Option<Spanned<String>>,
    program: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    timeout: Option<Spanned<String>>,
    sandbox: Option<Spanned<SandboxKind>>,
    /// `true`, `false`, or a list of `"HOST:PORT"`.
    sandbox_network: Option<Spanned<toml::Value>>,
    /// Read-write places of the sandbox.
    sandbox_rw: Option<Spanned<Vec<String>>>,
    /// The older name of `sandbox_rw`.
    sandbox_writable: Option<Spanned<Vec<String>>>,
    sandbox_ro: Option<Spanned<Vec<String>>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    /// Names of the harness's variables the agent gets (API keys), redacted wherever
    /// the harness stores or prints their values.
    pass_env: Option<Spanned<Vec<String>>>,
    crash: Option<CrashMode>,
    crash_window: Option<Spanned<String>>,
    /// A size like "64MiB" or a number of bytes.
    capture_limit: Option<Spanned<toml::Value>>,
    /// `{ scenario = "..." }`: run the CLI against the scripted model server.
    model_server: Option<Spanned<ModelServerFile>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ModelServerFile {
    scenario: String,
}

setting! {
    /// How the harness crashes a command agent's session (`crash_rate`).
    pub enum CrashMode ("crash") {
        /// SIGKILL to the agent's process group at a random moment of the session.
        Kill = "kill",
        /// The harness only tells the agent (`LOOPBENCH_INTERRUPT_AT`); the agent cuts its
        /// own session short and reports `interrupted`. For deterministic model agents such
        /// as `loopbench sim-agent`.
        Agent = "agent",
    }
}

setting! {
    /// The `driver` of an agent.
    enum DriverKind ("driver") {
        /// The built-in simulated agent.
        Sim = "sim",
        /// Any agent CLI.
        Command = "command",
    }
}

/// How sessions of an agent are executed.
#[derive(Debug, Clone, PartialEq)]
pub enum AgentDriver {
    /// The built-in simulated agent with a named behaviour profile.
    Sim {
        /// Profile name (see `agent::sim`).
        profile: String,
    },
    /// Any agent CLI: the prompt on stdin, the work directory as cwd.
    Command {
        /// Program to run.
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Per-session time limit.
        timeout: Duration,
        /// The sandbox its sessions run in, or none.
        sandbox: Option<Box<Sandbox>>,
        /// Extra environment.
        env: BTreeMap<String, String>,
        /// Names of the harness's variables passed to the agent.
        pass_env: Vec<String>,
        /// How a crash is injected.
        crash: CrashMode,
        /// The span of a session a killed crash falls in: the moment is
        /// `interrupt_at × min(timeout, crash_window)`.
        crash_window: Duration,
        /// Bytes kept of each of stdout and stderr per session.
        capture_limit: u64,
        /// The scripted model server the CLI is pointed at, when the agent names one.
        model_server: Option<ModelServer>,
    },
}

/// `model_server = { scenario = "..." }` of a command agent: each session runs under
/// `loopbench mock-model`, which serves the scenario's session to the CLI on
/// 127.0.0.1 inside the agent's own network namespace (the sandbox's, when it has one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelServer {
    /// The scenario file (canonical; written relative to the suite directory, inside it).
    pub scenario: PathBuf,
}

/// A command agent's `sandbox` (any kind but `none`). A real agent CLI needs its API
/// (`sandbox_network`) and its install directory (`sandbox_ro`, or declared by its
/// wrapper); nothing else of the host is shown beyond the system's allowlist.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Sandbox {
    /// Which sandbox (never [`SandboxKind::None`]).
    pub kind: SandboxKind,
    /// Network out of the sandbox's own namespace, through the harness's proxy, to
    /// declared targets only; `None`: no network at all.
    pub network: Option<Network>,
    /// Places outside the work directory the agent may write (`~` is `$HOME`).
    pub read_write: Vec<PathBuf>,
    /// Places outside the work directory the agent may read (`~` is `$HOME`).
    pub read_only: Vec<PathBuf>,
    /// How the suite spelled the read-write list (`sandbox_rw`, or the older
    /// `sandbox_writable`), for messages.
    pub read_write_key: &'static str,
}

/// `sandbox_network = true` or `["HOST:PORT", ...]`: the agent reaches the targets
/// listed here and those its wrapper's sandbox query declares (`net HOST:PORT`), and
/// nothing else. `true` lists none here; with none declared either, the suite is
/// refused (never the whole internet).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Network {
    /// The targets the suite lists, sorted, without repeats.
    pub targets: Vec<NetTarget>,
    /// Where the key is written, for the error when nothing at all is declared.
    pub at: KeyAt,
}

impl AgentDriver {
    /// The driver's name as written in `suite.toml`.
    pub fn name(&self) -> &'static str {
        match self {
            AgentDriver::Sim { .. } => "sim",
            AgentDriver::Command { .. } => "command",
        }
    }
}

/// The driver an `[agents.NAME]` table declares, each of its keys checked against it.
pub(super) fn agent_driver(
    suite_dir: &Path,
    name: &str,
    spec: &Spanned<AgentFile>,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
    at: &dyn Fn(std::ops::Range<usize>) -> KeyAt,
) -> Result<AgentDriver> {
    match spec.get_ref().driver {
        DriverKind::Sim => sim_driver(name, spec, err),
        DriverKind::Command => command_driver(suite_dir, name, spec, err, at),
    }
}

/// The error of a key that does not apply to the table's driver.
fn misplaced(
    name: &str,
    spec: &Spanned<AgentFile>,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
    (key, driver): (&str, &str),
) -> Error {
    err(
        spec.span(),
        format!("agent '{name}': '{key}' does not apply to driver '{driver}'"),
    )
}

/// `driver = "sim"`: a known profile, and none of the keys of a command.
fn sim_driver(
    name: &str,
    spec: &Spanned<AgentFile>,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<AgentDriver> {
    let a = spec.get_ref();
    let misplaced = |key: &str, driver: &str| misplaced(name, spec, err, (key, driver));
    if a.program.is_some() {
        return Err(misplaced("program", "sim"));
    }
    if a.sandbox.is_some() {
        return Err(misplaced("sandbox", "sim"));
    }
    if a.crash.is_some() {
        return Err(misplaced("crash", "sim"));
    }
    if a.crash_window.is_some() {
        return Err(misplaced("crash_window", "sim"));
    }
    if a.capture_limit.is_some() {
        return Err(misplaced("capture_limit", "sim"));
    }
    if a.model_server.is_some() {
        return Err(misplaced("model_server", "sim"));
    }
    if a.pass_env.is_some() {
        return Err(misplaced("pass_env", "sim"));
    }
    let profile = a
        .profile
        .as_ref()
        .map_or_else(|| "calibrated".to_string(), |p| p.get_ref().clone());
    if !super::sim_profile::Profile::exists(&profile) {
        let span = a.profile.as_ref().map_or(spec.span(), Spanned::span);
        return Err(err(
            span,
            format!(
                "agent '{name}': unknown sim profile '{profile}' (known: {})",
                super::sim_profile::Profile::names().join(", ")
            ),
        ));
    }
    Ok(AgentDriver::Sim { profile })
}

/// `driver = "command"`: its program, timeout, sandbox, environment, crash and capture
/// settings and scripted model server, in the order their errors are reported.
fn command_driver(
    suite_dir: &Path,
    name: &str,
    spec: &Spanned<AgentFile>,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
    at: &dyn Fn(std::ops::Range<usize>) -> KeyAt,
) -> Result<AgentDriver> {
    let a = spec.get_ref();
    if a.profile.is_some() {
        return Err(misplaced(name, spec, err, ("profile", "command")));
    }
    let Some(program) = a.program.clone() else {
        return Err(err(
            spec.span(),
            format!("agent '{name}': driver 'command' needs 'program'"),
        ));
    };
    let timeout = match &a.timeout {
        None => Duration::from_secs(30 * 60),
        Some(t) => humantime::parse_duration(t.get_ref()).map_err(|e| {
            err(
                t.span(),
                format!("agent '{name}': timeout: expected a duration like \"30m\": {e}"),
            )
        })?,
    };
    let sandbox = sandbox_of(name, a, err, at)?;
    let pass_env = a
        .pass_env
        .as_ref()
        .map(Spanned::get_ref)
        .cloned()
        .unwrap_or_default();
    if let (Some(bad), Some(spanned)) = (
        pass_env
            .iter()
            .find(|n| n.is_empty() || n.contains('=') || n.starts_with("LOOPBENCH_")),
        &a.pass_env,
    ) {
        return Err(err(
            spanned.span(),
            format!(
                "agent '{name}': pass_env: '{bad}' is not a variable the harness can \
                 pass (expected a name without '=', not one of the LOOPBENCH_ contract)"
            ),
        ));
    }
    let crash = a.crash.unwrap_or(CrashMode::Kill);
    let crash_window = crash_window_of(name, a, err)?;
    let capture_limit = match &a.capture_limit {
        None => DEFAULT_CAPTURE_LIMIT,
        Some(v) => capture_limit(v.get_ref())
            .map_err(|e| err(v.span(), format!("agent '{name}': capture_limit: {e}")))?,
    };
    let model_server = model_server_of(suite_dir, name, a, err)?;
    Ok(AgentDriver::Command {
        program,
        args: a.args.clone(),
        timeout,
        sandbox,
        env: a.env.clone(),
        pass_env,
        crash,
        crash_window,
        capture_limit,
        model_server,
    })
}

/// The sandbox of a command agent, `None` without a `sandbox` that confines (and then
/// no sandbox key may be given).
fn sandbox_of(
    name: &str,
    a: &AgentFile,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
    at: &dyn Fn(std::ops::Range<usize>) -> KeyAt,
) -> Result<Option<Box<Sandbox>>> {
    let kind = a.sandbox.as_ref().map(|k| *k.get_ref()).unwrap_or_default();
    if !kind.confines() {
        let stray = [
            (
                "sandbox_network",
                a.sandbox_network.as_ref().map(Spanned::span),
            ),
            ("sandbox_rw", a.sandbox_rw.as_ref().map(Spanned::span)),
            (
                "sandbox_writable",
                a.sandbox_writable.as_ref().map(Spanned::span),
            ),
            ("sandbox_ro", a.sandbox_ro.as_ref().map(Spanned::span)),
        ];
        if let Some((key, Some(span))) = stray.into_iter().find(|(_, s)| s.is_some()) {
            return Err(err(
                span,
                format!(
                    "agent '{name}': {key} needs sandbox = {}",
                    SandboxKind::confining_names()
                ),
            ));
        }
    }
    let places = |list: &Option<Spanned<Vec<String>>>| -> Vec<PathBuf> {
        list.as_ref()
            .map(|w| w.get_ref().iter().map(|p| expand_home(p)).collect())
            .unwrap_or_default()
    };
    if let (Some(_), Some(older)) = (&a.sandbox_rw, &a.sandbox_writable) {
        return Err(err(
            older.span(),
            format!(
                "agent '{name}': sandbox_writable is the older name of sandbox_rw; \
                 give one of them"
            ),
        ));
    }
    let (read_write_key, read_write) = match &a.sandbox_writable {
        Some(_) => ("sandbox_writable", places(&a.sandbox_writable)),
        None => ("sandbox_rw", places(&a.sandbox_rw)),
    };
    let network = match &a.sandbox_network {
        Some(value) => network_of(name, value, err, at)?,
        None => None,
    };
    // An agent's container never reaches the network, whatever its task allows: only
    // a check's container may.
    if let (true, Some(_), Some(value)) = (kind.needs_image(), &network, &a.sandbox_network) {
        return Err(err(
            value.span(),
            format!(
                "agent '{name}': sandbox_network: an agent's session in a container never \
                 reaches the network (only a check's container may, where its task sets \
                 allow_internet); leave the key out, or use sandbox = \"bwrap\" with its \
                 proxy"
            ),
        ));
    }
    Ok(kind.confines().then(|| {
        Box::new(Sandbox {
            kind,
            network,
            read_write,
            read_only: places(&a.sandbox_ro),
            read_write_key,
        })
    }))
}

/// `sandbox_network`: `false` (no network), `true` (what the wrapper declares) or a
/// non-empty list of `"HOST:PORT"`.
fn network_of(
    name: &str,
    value: &Spanned<toml::Value>,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
    at: &dyn Fn(std::ops::Range<usize>) -> KeyAt,
) -> Result<Option<Network>> {
    let bad = |why: String| {
        err(
            value.span(),
            format!("agent '{name}': sandbox_network: {why}"),
        )
    };
    let listed = match value.get_ref() {
        toml::Value::Boolean(false) => return Ok(None),
        toml::Value::Boolean(true) => Vec::new(),
        toml::Value::Array(items) if items.is_empty() => {
            return Err(bad(
                "an empty list reaches nothing: write false, or list what the agent may \
                 reach (\"HOST:PORT\")"
                    .into(),
            ));
        }
        toml::Value::Array(items) => items
            .iter()
            .map(|item| match item {
                toml::Value::String(text) => NetTarget::parse(text),
                other => Err(format!("{other} is not a \"HOST:PORT\" string")),
            })
            .collect::<std::result::Result<Vec<_>, _>>()
            .map_err(bad)?,
        other => {
            return Err(bad(format!(
                "expected true, false or a list of \"HOST:PORT\", got {other}"
            )));
        }
    };
    let mut targets = listed;
    targets.sort();
    targets.dedup();
    Ok(Some(Network {
        targets,
        at: at(value.span()),
    }))
}

/// `crash_window`, longer than zero; its default when not given.
fn crash_window_of(
    name: &str,
    a: &AgentFile,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<Duration> {
    Ok(match &a.crash_window {
        None => DEFAULT_CRASH_WINDOW,
        Some(w) => match humantime::parse_duration(w.get_ref()) {
            Ok(d) if !d.is_zero() => d,
            Ok(_) => {
                return Err(err(
                    w.span(),
                    format!("agent '{name}': crash_window must be longer than zero"),
                ));
            }
            Err(e) => {
                return Err(err(
                    w.span(),
                    format!("agent '{name}': crash_window: expected a duration like \"10m\": {e}"),
                ));
            }
        },
    })
}

/// `model_server`: a scenario file inside the suite directory (what it scripts is
/// served to the agent), made canonical.
fn model_server_of(
    suite_dir: &Path,
    name: &str,
    a: &AgentFile,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<Option<ModelServer>> {
    Ok(match &a.model_server {
        None => None,
        Some(m) => {
            let rel = &m.get_ref().scenario;
            let scenario = super::confined::inside(suite_dir, rel).map_err(|why| {
                err(
                    m.span(),
                    format!(
                        "agent '{name}': model_server.scenario: '{rel}' leads outside the \
                         suite directory ({why}); a scenario must lie inside it"
                    ),
                )
            })?;
            if !scenario.is_file() {
                return Err(err(
                    m.span(),
                    format!(
                        "agent '{name}': model_server: scenario '{}' is not a file",
                        scenario.display()
                    ),
                ));
            }
            Some(ModelServer { scenario })
        }
    })
}

/// A `capture_limit`: a positive number of bytes, or a string such as "64MiB", "500 KB"
/// or "1GiB" (SI units are powers of 1000, IEC units powers of 1024; any case).
pub(super) fn capture_limit(value: &toml::Value) -> std::result::Result<u64, String> {
    const EXPECTED: &str = "expected a size like \"64MiB\" or a number of bytes";
    let bytes = match value {
        toml::Value::Integer(n) => u64::try_from(*n).map_err(|_| format!("{EXPECTED}, got {n}"))?,
        toml::Value::String(text) => {
            parse_size(text).ok_or_else(|| format!("{EXPECTED}, got '{text}'"))?
        }
        other => return Err(format!("{EXPECTED}, got {other}")),
    };
    if bytes == 0 {
        return Err("must be at least 1 byte".into());
    }
    Ok(bytes)
}

/// "64MiB" → 67108864; `None` when it is no size.
fn parse_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let n: u64 = digits.parse().ok()?;
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1000,
        "kib" => 1 << 10,
        "mb" => 1000 * 1000,
        "mib" => 1 << 20,
        "gb" => 1000 * 1000 * 1000,
        "gib" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(factor)
}

/// `~` or `~/x` with `$HOME` in front; any other path as it is.
fn expand_home(path: &str) -> PathBuf {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    match (path.strip_prefix('~'), home()) {
        (Some(""), Some(h)) => h,
        (Some(rest), Some(h)) if rest.starts_with('/') => h.join(&rest[1..]),
        _ => PathBuf::from(path),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_take_si_and_iec_units_in_any_case() {
        assert_eq!(parse_size("64MiB"), Some(64 << 20));
        assert_eq!(parse_size(" 500 kb "), Some(500_000));
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        assert_eq!(parse_size("2GB"), Some(2_000_000_000));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("10B"), Some(10));
        for bad in ["", "MiB", "1.5MiB", "-1", "12 parsecs", "99999999999999GiB"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_capture_limit_is_a_positive_count_or_a_size() {
        assert_eq!(capture_limit(&toml::Value::Integer(1)), Ok(1));
        assert_eq!(
            capture_limit(&toml::Value::String("1MiB".into())),
            Ok(1 << 20)
        );
        assert!(capture_limit(&toml::Value::Integer(0)).is_err());
        assert!(capture_limit(&toml::Value::Boolean(true)).is_err());
    }
}
