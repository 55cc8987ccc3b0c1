//! Which program a command agent runs, and whether it can run here: the program
//! resolved (relative to the suite directory, or on the agent's PATH), the file the
//! sandbox executes, what its sandbox query declares (places, and the network targets
//! an arm with `sandbox_network` may reach), the harness's own binary for
//! `$LOOPBENCH_BIN`, and the check before a run that every selected agent can be
//! started (exit 2 otherwise).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::cli_usage::CliFormat;
use crate::error::{Result, SandboxError};
use crate::process::{Isolation, ShellCommand};
use crate::sandbox;
use crate::sandbox::net::NetTarget;
use crate::suite::{AgentDriver, Arm, Sandbox, Suite};

/// The line by which a wrapper says it answers the sandbox query: run with
/// `LOOPBENCH_SANDBOX_QUERY=1`, it prints `ro PATH` and `rw PATH` lines for what its
/// CLI needs (its install directory, its interpreter) and `net HOST:PORT` lines for
/// what it calls (its API), and exits 0 without running it. The query runs inside the
/// sandbox it asks about (the program is the suite's, and the suite may come from
/// anywhere): what it can see there is the allowlist and the program, so a wrapper
/// names the places its links lead to without following them past what is shown
/// (`readlink -m`).
pub const SANDBOX_QUERY_MARKER: &str = "# loopbench: sandbox-query";

/// The line by which a wrapper names the CLI whose output it passes on as its own
/// stdout: `# loopbench: usage claude` (or `codex`, `aider`). The harness reads its own
/// capture of that stdout in this format for the session's usage and failure (see
/// [`output_format`]).
pub const USAGE_MARKER: &str = "# loopbench: usage";

/// The format the harness reads `program`'s stdout in: what its first 4 KiB declare
/// with [`USAGE_MARKER`], else Claude Code's stream-json (a program run directly, such
/// as `claude -p --output-format stream-json`). Read from the program file on the
/// host, which the agent cannot write, never from anything the session wrote.
pub fn output_format(program: &Path) -> CliFormat {
    let head = head_of(program).unwrap_or_default();
    String::from_utf8_lossy(&head)
        .lines()
        .find_map(|l| l.trim().strip_prefix(USAGE_MARKER))
        .and_then(|name| match name.trim() {
            "claude" => Some(CliFormat::Claude),
            "codex" => Some(CliFormat::Codex),
            "aider" => Some(CliFormat::Aider),
            _ => None,
        })
        .unwrap_or(CliFormat::Claude)
}

/// The first 4 KiB of `program`, where its markers stand.
fn head_of(program: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::new();
    std::fs::File::open(program)?
        .take(4096)
        .read_to_end(&mut head)?;
    Ok(head)
}

/// Places a wrapper declares for its sandbox.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Declared {
    /// Shown read-only.
    pub read_only: Vec<PathBuf>,
    /// Shown read-write.
    pub read_write: Vec<PathBuf>,
    /// Reachable through the sandbox's proxy, when the suite gives the agent network.
    pub network: Vec<NetTarget>,
}

/// What `program` declares for its sandbox, asked in a sandbox under `hidden` with
/// `env` (the agent's environment as the session builds it, without the contract: the
/// wrapper declares the API host of a `*_BASE_URL` it finds there): nothing unless its
/// first 4 KiB hold [`SANDBOX_QUERY_MARKER`] (so that no other program is ever asked),
/// else its answer to the query. Asked once per program, environment and run.
pub fn declared_places(
    program: &Path,
    hidden: &sandbox::Hidden,
    env: &[(String, OsString)],
) -> Declared {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    type Key = (PathBuf, Vec<(String, OsString)>);
    static ASKED: OnceLock<Mutex<HashMap<Key, Declared>>> = OnceLock::new();
    let asked = ASKED.get_or_init(Default::default);
    let key = (program.to_path_buf(), env.to_vec());
    if let Some(found) = asked.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return found;
    }
    let found = query_wrapper(program, hidden, env)
        .ok()
        .flatten()
        .unwrap_or_default();
    if let Ok(mut m) = asked.lock() {
        m.insert(key, found.clone());
    }
    found
}

/// Runs the sandbox query of a wrapper that has the marker, never on the host: in the
/// kind of sandbox its sessions get under `hidden` (the allowlist read-only, the
/// program, no network, nothing writable but an empty scratch directory and the private
/// `/tmp`, a built environment with `env`), for at most 20 seconds. `Ok(None)`: no
/// marker.
pub fn query_wrapper(
    program: &Path,
    hidden: &sandbox::Hidden,
    env: &[(String, OsString)],
) -> std::result::Result<Option<Declared>, String> {
    let head = head_of(program).map_err(|e| e.to_string())?;
    if !String::from_utf8_lossy(&head)
        .lines()
        .any(|l| l.trim() == SANDBOX_QUERY_MARKER)
    {
        return Ok(None);
    }
    let dir = crate::fsutil::scratch_dir("loopbench-query-").map_err(|e| e.to_string())?;
    let wrapper = sandboxed_program(program);
    let mut layout = hidden.layout(dir.path(), &[], &[]);
    layout.readable.push(wrapper.clone());
    let mut env = env.to_vec();
    env.extend([
        ("LOOPBENCH_SANDBOX_QUERY".to_string(), "1".into()),
        (
            "LOOPBENCH_QUERIED_PROGRAM".to_string(),
            wrapper.into_os_string(),
        ),
    ]);
    // The environment is built as an agent's is, so that the wrapper declares the API
    // host the CLI will call, not one the harness happens to have exported.
    let (outcome, output) = ShellCommand {
        script: "exec \"$LOOPBENCH_QUERIED_PROGRAM\" </dev/null 2>/dev/null",
        cwd: dir.path(),
        env: &env,
        timeout: std::time::Duration::from_secs(20),
        isolation: Isolation::Sandbox(&layout),
    }
    .run_keeping_tail(64 * 1024)
    .map_err(|e| e.to_string())?;
    if !outcome.success() {
        return Err(format!(
            "its sandbox query (LOOPBENCH_SANDBOX_QUERY=1) exited with {:?}",
            outcome.code
        ));
    }
    let mut declared = Declared::default();
    for line in String::from_utf8_lossy(&output).lines() {
        match line.split_once(' ') {
            Some(("ro", path)) if Path::new(path).is_absolute() => {
                declared.read_only.push(PathBuf::from(path));
            }
            Some(("rw", path)) if Path::new(path).is_absolute() => {
                declared.read_write.push(PathBuf::from(path));
            }
            Some(("net", target)) => {
                let target = NetTarget::parse(target)
                    .map_err(|e| format!("its sandbox query declares a net line {e}"))?;
                declared.network.push(target);
            }
            _ => {}
        }
    }
    Ok(Some(declared))
}

/// The agent's environment as its wrapper's sandbox query sees it: the variables its
/// `pass_env` names, then its `env` table (the agent's and the arm's, merged).
pub(super) fn query_env(
    pass_env: &[String],
    env: &BTreeMap<String, String>,
) -> Vec<(String, OsString)> {
    let mut built = sandbox::passed_env(pass_env);
    built.extend(env.iter().map(|(k, v)| (k.clone(), v.into())));
    built
}

/// What `arm`'s agent may reach, sorted and without repeats: `None` when it has no
/// network (no sandbox, or no `sandbox_network`). An arm that gives it network while
/// neither the suite nor the wrapper names a target is an error (exit 2) at the key.
pub fn reachable(
    suite: &Suite,
    arm: &Arm,
    hidden: &sandbox::Hidden,
) -> Result<Option<Vec<NetTarget>>> {
    let AgentDriver::Command {
        program,
        sandbox: Some(settings),
        env,
        pass_env,
        ..
    } = suite.agent_of(arm)
    else {
        return Ok(None);
    };
    let Some(network) = &settings.network else {
        return Ok(None);
    };
    let env: BTreeMap<String, String> = env
        .iter()
        .chain(&arm.env)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut targets = network.targets.clone();
    if let Some(resolved) = resolve_program(program, &suite.dir, &env) {
        let declared = declared_places(&resolved, hidden, &query_env(pass_env, &env));
        targets.extend(declared.network);
    }
    targets.sort();
    targets.dedup();
    if targets.is_empty() {
        return Err(network.at.error(format!(
            "agent '{}' (arm '{}'): sandbox_network = true, but nothing says what it may \
             reach: its program's sandbox query declares no `net HOST:PORT` line; list the \
             API host instead, e.g. sandbox_network = [\"api.anthropic.com:443\"]",
            arm.agent, arm.name
        )));
    }
    Ok(Some(targets))
}

/// The loopbench binary running this harness (canonical), for `$LOOPBENCH_BIN`.
pub(super) fn harness_binary() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    Some(std::fs::canonicalize(&exe).unwrap_or(exe))
}

/// The file a sandboxed agent program is executed as: its canonical path, so that a
/// symlink (or a `..` on the way) cannot make the sandbox show or run something else than
/// the file the harness checked.
pub(super) fn sandboxed_program(program: &Path) -> PathBuf {
    std::fs::canonicalize(program)
        .unwrap_or_else(|_| std::path::absolute(program).unwrap_or_else(|_| program.to_path_buf()))
}

/// The program of a command agent as it will be executed: a relative path with a `/`
/// is taken relative to `base_dir` (the suite directory), a bare name is looked up on
/// the agent's `PATH` (its env table's, else the harness's).
pub(super) fn resolve_program(
    program: &str,
    base_dir: &Path,
    env: &BTreeMap<String, String>,
) -> Option<PathBuf> {
    let program = if program.contains('/') && Path::new(program).is_relative() {
        base_dir.join(program).to_string_lossy().into_owned()
    } else {
        program.to_string()
    };
    let path = env
        .get("PATH")
        .map(OsString::from)
        .or_else(|| std::env::var_os("PATH"));
    // Absolute, because the agent starts in the work directory: a relative path (a
    // suite given as a relative path, a relative PATH entry) would be looked up there.
    sandbox::find_program(&program, path.as_deref()).map(|p| std::path::absolute(&p).unwrap_or(p))
}

/// What a run of `suite` hides, for asking its wrappers: a wrapper's query runs in a
/// sandbox like its sessions'.
pub fn query_hidden(suite: &Suite) -> sandbox::Hidden {
    sandbox::Hidden::for_run(
        &suite.dir.join("results"),
        suite.tasks.iter().map(|t| t.dir.as_path()),
    )
    .with_limits(suite.limits)
}

/// Checks, before a run starts, that every command agent the selected `arms` use can
/// be started here: its program exists, its sandbox works here when it has one, and an arm
/// that gives it network declares what it may reach. The error (exit 2) names the
/// agent.
pub fn preflight(suite: &Suite, arms: &[usize]) -> Result<()> {
    suite.refuse_imageless_tasks(arms)?;
    if suite.verify_sandbox.confines() {
        suite.verify_sandbox.check(&format!(
            "the suite sets verify_sandbox = \"{}\"",
            suite.verify_sandbox
        ))?;
    }
    let hidden = std::sync::LazyLock::new(|| query_hidden(suite));
    let mut checked = std::collections::BTreeSet::new();
    for &i in arms {
        let Some(arm) = suite.arms.get(i) else {
            continue;
        };
        let driver = suite.agent_of(arm);
        let AgentDriver::Command { sandbox, .. } = driver else {
            continue;
        };
        if checked.insert(arm.agent.as_str()) {
            check_agent(suite, &arm.agent, driver, &hidden)?;
        }
        if sandbox.as_ref().is_some_and(|s| s.network.is_some()) {
            // Per arm: an arm's `env` may point the CLI at another API host.
            reachable(suite, arm, &hidden)?;
        }
    }
    Ok(())
}

/// The checks of [`preflight`] for one command agent.
fn check_agent(
    suite: &Suite,
    agent: &str,
    driver: &AgentDriver,
    hidden: &sandbox::Hidden,
) -> Result<()> {
    let AgentDriver::Command {
        program,
        sandbox,
        env,
        pass_env,
        model_server,
        ..
    } = driver
    else {
        return Ok(());
    };
    if let Some(server) = model_server {
        // A scenario that does not parse fails here, naming its file and line.
        crate::agent::mock_model::Scenario::load(&server.scenario)?;
    }
    let Some(resolved) = resolve_program(program, &suite.dir, env) else {
        return Err(SandboxError::ProgramNotFound {
            agent: agent.to_string(),
            program: program.clone(),
            relative_to: program.contains('/').then(|| suite.dir.clone()),
        }
        .into());
    };
    if let Some(settings) = sandbox {
        settings.kind.check(&format!(
            "agent '{agent}' uses sandbox = \"{}\"",
            settings.kind
        ))?;
        check_suite_places(suite, agent, settings)?;
        check_wrapper(agent, &resolved, hidden, &query_env(pass_env, env))?;
    }
    Ok(())
}

/// The places the suite declares for `agent`'s sandbox exist and may be shown.
fn check_suite_places(suite: &Suite, agent: &str, settings: &Sandbox) -> Result<()> {
    if let Some(missing) = settings.read_write.iter().find(|d| !d.is_dir()) {
        return Err(SandboxError::PlaceNotADirectory {
            agent: agent.to_string(),
            key: settings.read_write_key.to_string(),
            place: missing.clone(),
        }
        .into());
    }
    if let Some(missing) = settings.read_only.iter().find(|d| !d.exists()) {
        return Err(SandboxError::PlaceMissing {
            agent: agent.to_string(),
            place: missing.clone(),
        }
        .into());
    }
    let suite_file = suite.dir.join("suite.toml");
    let declared_in_suite = settings
        .read_only
        .iter()
        .map(|p| ("sandbox_ro", p, false))
        .chain(
            settings
                .read_write
                .iter()
                .map(|p| (settings.read_write_key, p, true)),
        );
    for (key, place, writable) in declared_in_suite {
        check_declared(place, writable).map_err(|why| SandboxError::PlaceRefused {
            suite_file: suite_file.clone(),
            agent: agent.to_string(),
            key: key.to_string(),
            place: place.clone(),
            why,
        })?;
    }
    Ok(())
}

/// The sandboxed program of `agent` (at `resolved`) can be run by the sandbox's user,
/// and the places its sandbox query (asked in a sandbox under `hidden`, with `env`)
/// declares may be shown.
fn check_wrapper(
    agent: &str,
    resolved: &Path,
    hidden: &sandbox::Hidden,
    env: &[(String, OsString)],
) -> Result<()> {
    let wrapper = sandboxed_program(resolved);
    if let Ok(Some(run_as)) = sandbox::RunAs::of_harness()
        && !run_as.user.can_run(&wrapper)
    {
        return Err(SandboxError::ProgramNotRunnable {
            agent: agent.to_string(),
            program: wrapper,
            user: run_as.user.spelled(),
        }
        .into());
    }
    let in_wrapper = |why: String| SandboxError::ProgramRefused {
        agent: agent.to_string(),
        program: resolved.to_path_buf(),
        why,
    };
    let declared = query_wrapper(&wrapper, hidden, env).map_err(in_wrapper)?;
    let lines = declared.iter().flat_map(|d| {
        d.read_only
            .iter()
            .map(|p| ("ro", p, false))
            .chain(d.read_write.iter().map(|p| ("rw", p, true)))
    });
    for (word, place, writable) in lines {
        check_declared(place, writable).map_err(|why| {
            in_wrapper(format!(
                "its sandbox query declares '{word} {}', which {why}",
                place.display()
            ))
        })?;
    }
    Ok(())
}

/// Why a declared place may not be shown (the whole host, a home, a socket place, a
/// place holding answers: see [`sandbox::refused_place`]), or, for a writable one under
/// a root harness, why the sandbox's user cannot write it.
fn check_declared(place: &Path, writable: bool) -> std::result::Result<(), String> {
    if !place.exists() {
        // What does not exist is never bound; the suite's keys were checked above.
        return Ok(());
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    if let Some(why) = sandbox::refused_place(place, home.as_deref()) {
        return Err(why);
    }
    if writable && let Ok(Some(run_as)) = sandbox::RunAs::of_harness() {
        let user = run_as.user;
        if !user.can_write(place) {
            return Err(format!(
                "cannot be written by the sandbox's user {uid}:{gid} (the harness runs as \
                 root, and the sandbox as that user): give it the directory \
                 (chown -R {uid}:{gid} '{}') or leave the key out",
                place.display(),
                uid = user.uid,
                gid = user.gid
            ));
        }
    }
    Ok(())
}

/// Whether an agent is `loopbench sim-agent` run as a command (its numbers are
/// synthetic, and the run's manifest must say so).
pub fn runs_sim_agent(driver: &AgentDriver) -> bool {
    matches!(driver, AgentDriver::Command { args, .. } if args.first().is_some_and(|a| a == "sim-agent"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::suite::CrashMode;
    use std::time::Duration;

    #[test]
    fn a_program_that_is_not_there_is_refused_naming_the_agent_and_where_it_was_looked_for() {
        let dir = tempfile::tempdir().unwrap();
        let task = dir.path().join("t");
        std::fs::create_dir_all(task.join("repo")).unwrap();
        std::fs::write(
            task.join("task.toml"),
            "name = \"t\"\ngoal = \"g\"\ntests = { glob = \"tests/*.sh\", count_pattern = 'x' }\n\n\
             [[feature]]\nid = \"F1\"\ndescription = \"one\"\nverify = \"true\"\n",
        )
        .unwrap();
        std::fs::write(
            dir.path().join("suite.toml"),
            "name = \"s\"\nseed = 1\nreplicates = 1\ntasks = [\"t\"]\n\n\
             [agents.x]\ndriver = \"command\"\nprogram = \"./missing.sh\"\n\n\
             [[arm]]\nname = \"a\"\nagent = \"x\"\nlist_format = \"json\"\n",
        )
        .unwrap();
        let suite = Suite::load(dir.path()).unwrap();
        let err = preflight(&suite, &[0]).unwrap_err();
        assert!(
            matches!(
                &err,
                Error::Sandbox(e) if matches!(
                    &**e,
                    SandboxError::ProgramNotFound { agent, program, relative_to }
                        if agent == "x" && program == "./missing.sh"
                            && relative_to.as_deref() == Some(suite.dir.as_path())
                )
            ),
            "{err:?}"
        );
        assert_eq!(err.exit_code(), crate::exit_code::BAD_INPUT);
    }

    #[test]
    fn a_wrapper_names_the_format_its_stdout_is_read_in_and_anything_else_is_stream_json() {
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("wrapper.sh");
        for (head, format) in [
            (
                "#!/bin/sh\n# loopbench: usage codex\nexec codex\n",
                CliFormat::Codex,
            ),
            (
                "#!/bin/sh\n  # loopbench: usage aider  \n",
                CliFormat::Aider,
            ),
            ("#!/bin/sh\n# loopbench: usage claude\n", CliFormat::Claude),
            ("#!/bin/sh\n# loopbench: usage gemini\n", CliFormat::Claude),
            ("#!/bin/sh\nexec claude -p\n", CliFormat::Claude),
        ] {
            std::fs::write(&program, head).unwrap();
            assert_eq!(output_format(&program), format, "{head}");
        }
        assert_eq!(
            output_format(&dir.path().join("missing")),
            CliFormat::Claude
        );
    }

    #[test]
    fn only_a_sim_agent_command_counts_as_simulated() {
        let command = |args: &[&str]| AgentDriver::Command {
            program: "loopbench".into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            timeout: Duration::from_secs(1),
            sandbox: None,
            env: BTreeMap::new(),
            pass_env: Vec::new(),
            crash: CrashMode::Agent,
            crash_window: Duration::from_secs(1),
            capture_limit: 1024,
            model_server: None,
        };
        assert!(runs_sim_agent(&command(&["sim-agent", "--suite", "s"])));
        assert!(!runs_sim_agent(&command(&["-p"])));
    }
}
