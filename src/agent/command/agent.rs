//! The `command` driver: each session runs an external agent CLI in the work directory,
//! with the prompt on stdin, the session environment contract, and its output
//! captured in the run directory.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::capture::Captured;
use super::child::{Ended, KILL_GRACE};
use super::cli_usage::CliFormat;
use super::program::{harness_binary, resolve_program, sandboxed_program};
use crate::agent::mock_model::Scenario;
use crate::agent::{Agent, SessionContext, SessionRun};
use crate::agent::{Failure, FailureKind, Outcome};
use crate::error::{Error, IoContext, Result, with_causes};
use crate::run_dir::RunDir;
use crate::sandbox::net::NetTarget;
use crate::sandbox::{self, Hidden, Layout, Redactor};
use crate::suite::TrialKey;
use crate::suite::{AgentDriver, Arm, CrashMode, ModelServer, Sandbox, Suite};

/// File name of the usage report, beside the work directory.
pub const USAGE_FILE: &str = "usage.json";
/// Directory an agent may keep state in across the sessions of a trial, in the trial's
/// own directory.
pub const STATE_DIR: &str = "state";
/// The served log of session N is `session-N.model.jsonl`, in the trial's own directory
/// while the session runs, then in `agents/<trial>/`.
pub const MODEL_LOG_SUFFIX: &str = "model.jsonl";
/// The network log of session N (what the sandbox's proxy let through and refused) is
/// `agents/<trial>/session-N.net.log`.
pub const NET_LOG_SUFFIX: &str = "net.log";
/// The HOME of every session of a trial: `home/` in the trial's own directory (a CLI
/// keeps its configuration and transcripts there, never in the harness's own home),
/// copied to `agents/<trial>/home/` after each session.
pub const MODEL_HOME: &str = "home";
/// Where the session's supervisor writes the agent's wait status, beside the work
/// directory (the agent is never told of it).
const SUPERVISOR_STATUS_FILE: &str = "supervisor.status";

/// How often a session is tried when the agent cannot be started at all.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Tries in all (at least 1).
    pub tries: u32,
    /// Wait before the second try; it doubles before each further one.
    pub first_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            tries: 3,
            first_delay: Duration::from_millis(200),
        }
    }
}

/// Runs the sessions of one trial with an external agent.
pub struct CommandAgent {
    name: String,
    program: String,
    args: Vec<String>,
    env: BTreeMap<String, String>,
    pass_env: Vec<String>,
    redactor: Redactor,
    limits: sandbox::Limits,
    timeout: Duration,
    crash: CrashMode,
    crash_window: Duration,
    capture_limit: u64,
    sandbox: Option<Box<Sandbox>>,
    /// What the sandbox's proxy lets the agent reach; `None`: no network.
    network: Option<Vec<NetTarget>>,
    model_server: Option<ModelServer>,
    base_dir: PathBuf,
    hidden: Hidden,
    key: TrialKey,
    trial_seed: u64,
    /// Which attempt at the trial this agent runs (from 1).
    attempt: u32,
    capture_dir: PathBuf,
    retry: RetryPolicy,
    grace: Duration,
    next: u32,
}

impl CommandAgent {
    /// The agent of `arm` (which must use the command driver) for one trial. Its output
    /// goes to the run's captures of the trial (`agents/<trial_id>/`); a relative `program` with a `/` is taken
    /// relative to the suite directory, a bare name is looked up on `PATH`. `hidden`:
    /// what its sandbox hides (the run's, computed once); `attempt`: which attempt at
    /// the trial it runs (the scripted model server's faults may name attempts).
    pub fn for_trial(
        suite: &Suite,
        arm: &Arm,
        key: TrialKey,
        trial_seed: u64,
        attempt: u32,
        run_dir: &RunDir,
        hidden: &Hidden,
    ) -> Result<CommandAgent> {
        let AgentDriver::Command {
            program,
            args,
            timeout,
            sandbox,
            env,
            pass_env,
            crash,
            crash_window,
            capture_limit,
            model_server,
        } = suite.agent_of(arm)
        else {
            return Err(Error::BadInput(format!(
                "arm '{}' does not use a command agent",
                arm.name
            )));
        };
        // Absolute: the agent and the model server run in the work directory.
        let capture_dir = std::path::absolute(run_dir.agent_captures(&key.trial_id))
            .io_context(|| format!("cannot resolve '{}'", run_dir.path().display()))?;
        attempt_dirs::clear_unrecorded(&capture_dir)?;
        let network = super::program::reachable(suite, arm, hidden)?;
        Ok(CommandAgent {
            name: arm.agent.clone(),
            program: program.clone(),
            args: args.clone(),
            // The arm's table over the agent's: model A vs model B is two arms of one agent.
            env: env
                .iter()
                .chain(&arm.env)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            pass_env: pass_env.clone(),
            // The run's secrets: its tasks' values from the host may reach the session
            // too (a task's `env`).
            redactor: Redactor::for_names(&suite.secret_names()),
            limits: suite.limits,
            timeout: *timeout,
            crash: *crash,
            crash_window: *crash_window,
            capture_limit: *capture_limit,
            sandbox: sandbox.clone(),
            network,
            model_server: model_server.clone(),
            base_dir: suite.dir.clone(),
            hidden: hidden.clone(),
            capture_dir,
            key,
            trial_seed,
            attempt,
            retry: RetryPolicy::default(),
            grace: KILL_GRACE,
            next: if arm.initializer { 0 } else { 1 },
        })
    }

    /// The program as it will be executed, `None` when there is no such executable.
    fn resolve_program(&self) -> Option<PathBuf> {
        resolve_program(&self.program, &self.base_dir, &self.env)
    }

    /// Whether the scripted model server's scenario ends session `n` in a crash (the
    /// server then kills the CLI and exits with `CRASH_EXIT`).
    fn scripted_crash(&self, n: u32) -> bool {
        self.model_server.as_ref().is_some_and(|server| {
            Scenario::load(&server.scenario).is_ok_and(|scenario| {
                scenario
                    .session(n)
                    .is_some_and(|s| s.ending == crate::agent::mock_model::script::Ending::Crash)
            })
        })
    }

    /// The moment of an injected crash: `interrupt_at × min(timeout, crash_window)`.
    fn crash_after(&self, interrupt_at: Option<f64>) -> Option<Duration> {
        let f = interrupt_at?;
        (self.crash == CrashMode::Kill).then(|| {
            self.timeout
                .min(self.crash_window)
                .mul_f64(f.clamp(0.0, 1.0))
        })
    }

    /// The session's environment, built: `PATH`, `LANG`, `TERM`, the trial's `HOME`,
    /// the variables named by `pass_env`, the agent's and the arm's tables, and the
    /// contract. Nothing else of the harness's environment reaches the agent.
    fn session_env(
        &self,
        ctx: &SessionContext<'_>,
        usage_file: &Path,
        state_dir: &Path,
        home: &Path,
    ) -> Vec<(String, OsString)> {
        let mut env = sandbox::base_env(home);
        env.extend(sandbox::passed_env(&self.pass_env));
        env.extend(self.env.iter().map(|(k, v)| (k.clone(), v.into())));
        // The contract comes last, so a suite's env table cannot override it.
        env.extend(ctx.env.iter().cloned());
        env.extend([
            ("LOOPBENCH_TURNS".into(), ctx.turn_budget.to_string().into()),
            ("LOOPBENCH_SESSION_KIND".into(), ctx.kind.as_str().into()),
            (
                "LOOPBENCH_USAGE_FILE".into(),
                usage_file.as_os_str().to_owned(),
            ),
            (
                "LOOPBENCH_STATE_DIR".into(),
                state_dir.as_os_str().to_owned(),
            ),
            (
                "LOOPBENCH_TRIAL_SEED".into(),
                self.trial_seed.to_string().into(),
            ),
        ]);
        if let Some(bin) = harness_binary() {
            env.push(("LOOPBENCH_BIN".into(), bin.into_os_string()));
        }
        if self.crash == CrashMode::Agent
            && let Some(f) = ctx.interrupt_at
        {
            // `{}` prints the shortest text that parses back to the same f64.
            env.push(("LOOPBENCH_INTERRUPT_AT".into(), f.to_string().into()));
        }
        env
    }

    /// The sandbox of one session: the host's allowlist, the agent's own files bound at
    /// the paths its environment names, its program and the harness's binary readable
    /// (canonical paths, so that a symlink cannot lead elsewhere), what the agent
    /// table and its wrapper declare (`sandbox_ro`, `sandbox_rw`), and the network
    /// proxy's socket when the agent has one.
    fn layout(
        &self,
        ctx: &SessionContext<'_>,
        program: &Path,
        files: &SessionFiles,
        proxy_socket: Option<&Path>,
    ) -> Layout {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let mut layout = self.hidden.layout(
            &ctx.workspace.work_dir,
            &[&files.usage_file],
            &[
                &files.state_dir,
                &files.home,
                ctx.workspace
                    .git_config
                    .parent()
                    .unwrap_or(&ctx.workspace.work_dir),
            ],
        );
        layout.limits = Some(self.limits);
        layout.readable.push(abs(&ctx.workspace.prompt_file));
        layout.read_by_user.push(abs(&ctx.workspace.prompt_file));
        // The effects log's channel: a FIFO bound read-only, which the agent can write
        // (its mode) but neither read, remove, rename nor change (the mount).
        layout.readable.push(abs(&ctx.workspace.effects_channel));
        if let (Some(server), Some(log)) = (&self.model_server, &files.model_log) {
            // The scripted server runs inside the sandbox: it reads its scenario and
            // appends to its log.
            layout.readable.push(abs(&server.scenario));
            layout.writable_files.push(abs(log));
        }
        layout
            .writable_files
            .extend(proxy_socket.map(Path::to_path_buf));
        if let Some(sandbox) = &self.sandbox {
            let declared = super::program::declared_places(
                program,
                &self.hidden,
                &super::program::query_env(&self.pass_env, &self.env),
            );
            let exists = |p: &&PathBuf| p.exists();
            layout.readable.extend(
                sandbox
                    .read_only
                    .iter()
                    .chain(&declared.read_only)
                    .filter(exists)
                    .map(|p| canon(p)),
            );
            layout.declared_rw.extend(
                sandbox
                    .read_write
                    .iter()
                    .chain(&declared.read_write)
                    .filter(exists)
                    .map(|p| canon(p)),
            );
        }
        layout.readable.push(sandboxed_program(program));
        if let Some(bin) = harness_binary().map(|b| canon(&b)) {
            layout.readable.push(bin);
        }
        layout
    }

    /// Creates the capture directory, the state directory, HOME and a fresh, empty
    /// usage file. What the agent keeps across sessions (HOME, the state directory, the
    /// served model log) lies in the trial's own directory, in scratch and bounded,
    /// never in the run directory: the run directory gets copies after the session.
    fn prepare(&self, ctx: &SessionContext<'_>) -> Result<SessionFiles> {
        let root = ctx.workspace.root().to_path_buf();
        let own = &ctx.workspace.own_dir;
        let model_log_name = format!("session-{}.{MODEL_LOG_SUFFIX}", ctx.session);
        let files = SessionFiles {
            status_file: root.join(SUPERVISOR_STATUS_FILE),
            usage_file: root.join(USAGE_FILE),
            state_dir: own.join(STATE_DIR),
            stdout: self
                .capture_dir
                .join(format!("session-{}.stdout", ctx.session)),
            stderr: self
                .capture_dir
                .join(format!("session-{}.stderr", ctx.session)),
            model_log: self
                .model_server
                .as_ref()
                .map(|_| own.join(&model_log_name)),
            model_log_copy: self.capture_dir.join(&model_log_name),
            home: own.join(MODEL_HOME),
            home_copy: self.capture_dir.join(MODEL_HOME),
            net_log: self
                .capture_dir
                .join(format!("session-{}.{NET_LOG_SUFFIX}", ctx.session)),
        };
        for dir in [&self.capture_dir, &files.state_dir, &files.home] {
            std::fs::create_dir_all(dir)
                .io_context(|| format!("cannot create '{}'", dir.display()))?;
        }
        // A new empty file, whatever the last session left there (a FIFO would block).
        crate::agent_file::replace(&files.usage_file, b"")?;
        if let Some(log) = &files.model_log {
            // The sandbox binds only what exists; a retried start begins the log anew.
            crate::agent_file::replace(log, b"")?;
        }
        Ok(files)
    }
}

/// Where one session's files are.
struct SessionFiles {
    status_file: PathBuf,
    usage_file: PathBuf,
    state_dir: PathBuf,
    stdout: PathBuf,
    stderr: PathBuf,
    /// The scripted model server's log of what it served, with `model_server`.
    model_log: Option<PathBuf>,
    /// Where the run directory keeps a copy of it.
    model_log_copy: PathBuf,
    /// The agent's HOME, kept for the trial (a CLI's configuration and transcripts).
    home: PathBuf,
    /// Where the run directory keeps a copy of it after each session.
    home_copy: PathBuf,
    /// What the network proxy let through and refused, when the agent has network.
    net_log: PathBuf,
}

/// What one try that started the agent left.
struct Ran {
    ended: Ended,
    captured: Vec<Captured>,
    /// The sandbox's limits the session reached, each as a sentence for its record.
    limits_reached: Vec<String>,
    /// The format its stdout is read in (the program's [`super::program::USAGE_MARKER`]).
    output: CliFormat,
}

impl Agent for CommandAgent {
    fn next_session(&mut self) -> Option<u32> {
        let n = self.next;
        self.next += 1;
        Some(n)
    }

    fn archive_attempt(&mut self, attempt: u32) -> Result<Option<String>> {
        let archived = attempt_dirs::archive(&self.capture_dir, attempt)?;
        Ok(archived.map(|name| format!("agents/{}/{name}", self.key.trial_id)))
    }

    fn archive_session(
        &mut self,
        session: u32,
        attempt: u32,
        again: u32,
    ) -> Result<Option<String>> {
        let archived = attempt_dirs::archive_session(&self.capture_dir, attempt, session, again)?;
        Ok(archived.map(|name| format!("agents/{}/{name}", self.key.trial_id)))
    }

    fn run_session(&mut self, ctx: &SessionContext<'_>) -> Result<SessionRun> {
        let files = match self.prepare(ctx) {
            Ok(files) => files,
            // The agent can replace what `prepare` renews (its state directory, the
            // usage file), so only a full disk or the like is surely the harness's.
            Err(e) if crate::fsutil::out_of_room(&e) => {
                return Ok(SessionRun::harness_failed(format!(
                    "the harness could not prepare the session: {}",
                    with_causes(&e)
                )));
            }
            Err(e) => return Err(e),
        };
        let env = self.session_env(ctx, &files.usage_file, &files.state_dir, &files.home);
        let started = std::time::SystemTime::now();
        let mut run = self.run_tries(ctx, &files, &env);
        for over in self.bounds_reached(ctx, &files)? {
            run.add_note(over.clone());
            run.outcome = Outcome::Error;
            run.failure = Some(Failure::new(FailureKind::Agent, over));
        }
        // The copies for audit and `import`, within max_home_bytes: what the agent's own
        // directory holds is bounded by it, and one past it was emptied above.
        match self.copy_out(&files) {
            Ok(()) => {}
            Err(e) if crate::fsutil::out_of_room(&e) => {
                run = SessionRun::harness_failed(format!(
                    "the harness could not store the session's output: {}",
                    with_causes(&e)
                ));
            }
            // What the agent left in its HOME could not be read (a file it made
            // unreadable to the harness's user): the agent's doing, and the trial ends.
            Err(e) => {
                let why = format!(
                    "its HOME could not be copied to the run directory: {}",
                    with_causes(&e)
                );
                run.add_note(why.clone());
                run.outcome = Outcome::Error;
                run.failure = Some(Failure::new(FailureKind::Agent, why));
            }
        }
        // What the session left in the run directory (captures, the CLI's transcripts
        // and logs in its HOME) must not keep a value passed by `pass_env`. Read in
        // chunks, only what this session changed, and no more than it may have left.
        let cap = self
            .limits
            .max_home_bytes
            .saturating_add(self.capture_limit.saturating_mul(2));
        let redacted = self
            .redactor
            .files_under(&self.capture_dir, Some(started), cap)
            .io_context(|| format!("cannot redact '{}'", self.capture_dir.display()));
        match redacted {
            Ok(removed) => {
                if !removed.is_empty() {
                    run.add_note(format!(
                        "{} files the session left were removed unread: more than {cap} \
                         bytes to redact",
                        removed.len()
                    ));
                }
            }
            Err(e) if crate::fsutil::out_of_room(&e) => {
                run = SessionRun::harness_failed(format!(
                    "the harness could not store the session's output: {}",
                    with_causes(&e)
                ));
            }
            Err(e) => return Err(e),
        }
        if let Some(error) = &run.error {
            run.error = Some(self.redactor.text(error).into_owned());
        }
        Ok(run)
    }
}

impl CommandAgent {
    /// The bounds of the trial's places that the session reached, each as a sentence
    /// for its record (the trial ends with it). Where the kernel bounds them (a tmpfs of
    /// their own), a place left full is one whose writes the kernel refused; elsewhere
    /// a place is measured now, after the session. The agent's own directory past its
    /// bound is emptied (HOME, state directory, model log), as the sentence says.
    fn bounds_reached(
        &self,
        ctx: &SessionContext<'_>,
        files: &SessionFiles,
    ) -> Result<Vec<String>> {
        use crate::fsutil::Fill;
        let mut reached = Vec::new();
        // Full: the kernel held the place to its bound while the session ran (a tmpfs
        // of its own); Over: a plain directory, measured now.
        let refused = "while the session ran; the kernel refused further writes";
        if let Some(work) = ctx.workspace.bounded_work() {
            let how = match work.fill() {
                Fill::Within => None,
                Fill::Full => Some(format!("the agent filled it {refused}")),
                Fill::Over => Some("it held more after the session".to_string()),
            };
            if let Some(how) = how {
                reached.push(format!(
                    "reached the work directory's bound of {} bytes (twice max_tree_bytes, \
                     .git included): {how}",
                    work.bound().bytes
                ));
            }
        }
        let fill = match ctx.workspace.bounded_own() {
            Some(own) => own.fill(),
            None => Fill::Within,
        };
        if fill != Fill::Within {
            for dir in [&files.home, &files.state_dir] {
                crate::fsutil::remove_tree(dir);
                std::fs::create_dir_all(dir)
                    .io_context(|| format!("cannot empty '{}'", dir.display()))?;
            }
            if let Some(log) = &files.model_log {
                crate::agent_file::replace(log, b"")?;
            }
            let how = match fill {
                Fill::Full => format!("filled their bound {refused}"),
                _ => "held more after the session".to_string(),
            };
            reached.push(format!(
                "reached max_home_bytes = {}: the agent's HOME, state directory and git \
                 configuration (and the model log) {how}; HOME and the state directory were \
                 emptied",
                self.limits.max_home_bytes,
            ));
        }
        Ok(reached)
    }

    /// Copies the session's HOME (in place of the last copy) and its model log into the
    /// run directory. A HOME that is not a directory (an unsandboxed agent may replace
    /// it) is copied as an empty one: a link is never followed out.
    fn copy_out(&self, files: &SessionFiles) -> Result<()> {
        crate::fsutil::remove_if_present(&files.home_copy)?;
        if std::fs::symlink_metadata(&files.home).is_ok_and(|m| m.is_dir()) {
            crate::fsutil::copy_tree(&files.home, &files.home_copy, false)?;
        } else {
            std::fs::create_dir_all(&files.home_copy)
                .io_context(|| format!("cannot create '{}'", files.home_copy.display()))?;
        }
        if let Some(log) = &files.model_log {
            crate::fsutil::remove_if_present(&files.model_log_copy)?;
            if let crate::fsutil::Opened::Regular(mut from, meta) =
                crate::fsutil::open_regular(log, false)
                    .io_context(|| format!("cannot read '{}'", log.display()))?
            {
                let mut to = std::fs::File::create(&files.model_log_copy)
                    .io_context(|| format!("cannot create '{}'", files.model_log_copy.display()))?;
                std::io::copy(&mut std::io::Read::take(&mut from, meta.len()), &mut to)
                    .io_context(|| format!("cannot copy '{}'", files.model_log_copy.display()))?;
            }
            // Its copy is the log from now on: the trial's scratch keeps none of it.
            crate::fsutil::remove_if_present(log)?;
        }
        Ok(())
    }
}

#[path = "attempt_dirs.rs"]
mod attempt_dirs;
#[path = "judge.rs"]
mod judge;
#[path = "tries.rs"]
mod tries;

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;
