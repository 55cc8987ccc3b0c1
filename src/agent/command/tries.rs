//! Running a session's agent: each try builds its command line (the supervisor, unless
//! the sandbox's cgroup holds the whole session; the sandbox's launch, the scripted
//! model server, the agent) and runs it; a try that could not start the agent is tried
//! again, after a growing delay.

use std::ffi::OsString;
use std::fs::File;
use std::path::Path;
use std::process::Command;

use super::{CommandAgent, Ran, SessionFiles, judge};
use crate::agent::command::child::{self, Capture, Ended, Limits};
use crate::agent::command::program::{harness_binary, output_format, sandboxed_program};
use crate::agent::command::supervise::{self, spawn_error};
use crate::agent::{Failure, FailureKind, SessionContext, SessionRun};
use crate::error::{Error, IoContext, Result, with_causes};
use crate::notice::Notice;
use crate::sandbox::Confined;
use crate::sandbox::net::Proxy;
use crate::suite::CrashMode;

impl CommandAgent {
    /// Runs the session, trying again while the agent cannot be started at all. What
    /// keeps the harness from starting it (its capture files, the session's cgroup, the
    /// sandbox's report) is the harness's failure, `infra`.
    pub(super) fn run_tries(
        &self,
        ctx: &SessionContext<'_>,
        files: &SessionFiles,
        env: &[(String, OsString)],
    ) -> SessionRun {
        let tries = self.retry.tries.max(1);
        let mut failures: Vec<String> = Vec::new();
        let mut last_reason = String::new();
        let mut delay = self.retry.first_delay;
        for attempt in 1..=tries {
            let tried = match self.try_once(ctx, files, env) {
                Ok(tried) => tried,
                Err(e) => {
                    return SessionRun::harness_failed(format!(
                        "the harness could not run the session: {}",
                        with_causes(&e)
                    ));
                }
            };
            match tried {
                Ok(ran) => {
                    let planned = judge::Planned {
                        crash_after: self.crash_after(ctx.interrupt_at),
                        agent_crash: self.crash == CrashMode::Agent && ctx.interrupt_at.is_some(),
                        scripted_crash: self.scripted_crash(ctx.session),
                    };
                    let mut run = self.judge(&ran, planned, files);
                    if !failures.is_empty() {
                        let retried = failures.join("; ");
                        run.error = Some(match run.error {
                            Some(e) => format!("{retried}; {e}"),
                            None => retried,
                        });
                    }
                    return run;
                }
                Err(reason) if attempt < tries => {
                    let note = format!(
                        "try {attempt} of {tries} failed: {reason}; retrying in {}",
                        humantime::format_duration(delay)
                    );
                    // A retry must be visible while it happens, not only in the record.
                    (ctx.notify)(Notice::AgentRetry {
                        key: self.key.clone(),
                        session: ctx.session,
                        message: note.clone(),
                    });
                    failures.push(note);
                    std::thread::sleep(delay);
                    delay = delay.saturating_mul(2);
                }
                Err(reason) => {
                    let note = format!("try {attempt} of {tries} failed: {reason}; giving up");
                    last_reason = format!("{reason} ({tries} tries)");
                    (ctx.notify)(Notice::AgentRetry {
                        key: self.key.clone(),
                        session: ctx.session,
                        message: note.clone(),
                    });
                    failures.push(note);
                }
            }
        }
        // The program, its wrapper or its sandbox could not be started: nothing the
        // agent did.
        SessionRun {
            failure: Some(Failure::new(FailureKind::Infra, last_reason)),
            ..SessionRun::failed(failures.join("; "))
        }
    }

    /// One try at running the agent: how it ended, what became of its output and which
    /// of the sandbox's limits it reached. `Ok(Err(..))` is a failure to start it
    /// (retried): known from the spawn, the supervisor, or the sandbox's own report,
    /// never from what the agent printed.
    fn try_once(
        &self,
        ctx: &SessionContext<'_>,
        files: &SessionFiles,
        env: &[(String, OsString)],
    ) -> Result<std::result::Result<Ran, String>> {
        let Some(program) = self.resolve_program() else {
            return Ok(Err(self.not_found()));
        };
        let create =
            |p: &Path| File::create(p).io_context(|| format!("cannot create '{}'", p.display()));
        let capture = Capture {
            stdout: create(&files.stdout)?,
            stderr: create(&files.stderr)?,
            limit: self.capture_limit,
        };
        let stdin = File::open(&ctx.workspace.prompt_file)
            .io_context(|| format!("cannot read '{}'", ctx.workspace.prompt_file.display()))?;
        // Lives until the session's try has ended: dropping it closes every connection
        // the sandbox still holds.
        let proxy = match (&self.sandbox, &self.network) {
            (Some(_), Some(targets)) => Some(Proxy::start(targets.clone(), &files.net_log)?),
            _ => None,
        };
        let confined = match &self.sandbox {
            Some(_) => {
                let socket = proxy.as_ref().map(Proxy::socket);
                Some(Confined::start(
                    &self.layout(ctx, &program, files, socket),
                    Some(ctx.workspace.root()),
                )?)
            }
            None => None,
        };
        // A sandbox whose cgroup holds every process of the session (its PID namespace
        // dies with it, and the cgroup is ended before the session is over) needs no
        // supervisor around it; anything else runs under `loopbench supervise`, a child
        // subreaper that ends whatever the agent left, wherever it went.
        let contained = confined.as_ref().filter(|c| c.holds_everything());
        let mut cmd = match (contained, &confined) {
            (Some(confined), _) => confined.command(),
            (None, confined) => {
                let supervisor = std::env::current_exe().io_context(|| {
                    "cannot find the loopbench binary to supervise the agent".into()
                })?;
                let mut cmd = Command::new(supervisor);
                cmd.args([supervise::SUBCOMMAND, "--status"])
                    .arg(&files.status_file)
                    .arg("--");
                if let Some(confined) = confined {
                    confined.append_to(&mut cmd);
                }
                cmd
            }
        };
        if let Some(proxy) = &proxy {
            self.relay_network(&mut cmd, proxy)?;
        }
        self.serve_model(&mut cmd, ctx, files)?;
        if self.sandbox.is_some() {
            cmd.arg(sandboxed_program(&program));
        } else {
            cmd.arg(&program);
        }
        cmd.args(&self.args)
            .current_dir(&ctx.workspace.work_dir)
            .stdin(stdin);
        match &confined {
            Some(confined) => confined.set_env(&mut cmd, env)?,
            None => {
                cmd.env_clear().envs(env.iter().map(|(k, v)| (k, v)));
            }
        }
        let limits = Limits {
            timeout: self.timeout,
            grace: self.grace,
            crash_after: self.crash_after(ctx.interrupt_at),
            supervised: contained.is_none().then(|| files.status_file.clone()),
        };
        let ran = self.start(cmd, limits, capture, &program, confined.as_ref(), files);
        drop(proxy);
        ran
    }

    /// Why the agent's program cannot be started: it is not found.
    fn not_found(&self) -> String {
        format!(
            "cannot start agent '{}': program '{}' not found{}",
            self.name,
            self.program,
            if self.program.contains('/') {
                String::new()
            } else {
                " on PATH".to_string()
            }
        )
    }

    /// Puts the network relay into `cmd`, in front of the scripted model server and the
    /// agent: inside the sandbox it names itself as their proxy and hands every
    /// connection to `proxy`. With a scripted model server, which listens on the
    /// sandbox's own loopback, the agent reaches that loopback directly.
    fn relay_network(&self, cmd: &mut Command, proxy: &Proxy) -> Result<()> {
        let bin = harness_binary().ok_or_else(|| {
            Error::BadInput("cannot find the loopbench binary to relay the network".into())
        })?;
        cmd.arg(bin)
            .arg("net-relay")
            .arg("--socket")
            .arg(proxy.socket());
        if self.model_server.is_some() {
            cmd.arg("--direct-loopback");
        }
        cmd.arg("--");
        Ok(())
    }

    /// Puts the scripted model server into `cmd`, in front of the agent, when the agent
    /// has one.
    fn serve_model(
        &self,
        cmd: &mut Command,
        ctx: &SessionContext<'_>,
        files: &SessionFiles,
    ) -> Result<()> {
        let (Some(server), Some(log)) = (&self.model_server, &files.model_log) else {
            return Ok(());
        };
        let bin = harness_binary().ok_or_else(|| {
            Error::BadInput("cannot find the loopbench binary to serve the model".into())
        })?;
        cmd.arg(bin)
            .arg("mock-model")
            .arg("--scenario")
            .arg(&server.scenario)
            .arg("--session")
            .arg(ctx.session.to_string())
            // A session run again in place (it failed outside the agent and changed
            // nothing) is the scenario's next attempt at it: a fault scripted for
            // attempt 1 is the first run's.
            .arg("--attempt")
            .arg(self.attempt.saturating_add(ctx.rerun).to_string())
            .arg("--log")
            .arg(log)
            .arg("--home")
            .arg(&files.home)
            .arg("--");
        Ok(())
    }

    /// Runs `cmd` to its end, and tells whether the agent started: the spawn, the
    /// supervisor's report, then the sandbox's; with the sandbox's limits it reached.
    fn start(
        &self,
        cmd: Command,
        limits: Limits,
        capture: Capture,
        program: &Path,
        confined: Option<&Confined>,
        files: &SessionFiles,
    ) -> Result<std::result::Result<Ran, String>> {
        let cannot_start = |e: &dyn std::fmt::Display| {
            format!(
                "cannot start agent '{}' ({}): {e}",
                self.name,
                program.display()
            )
        };
        let supervised = limits.supervised.is_some();
        // As the supervisor's sweep would: whatever is left of the session is killed, and
        // gone, before the session is over (at most as long as the supervisor tried).
        let end_rest = || {
            if let Some(confined) = confined {
                confined.end_everything(supervise::SWEEP_LIMIT);
            }
        };
        let end_rest: Option<&dyn Fn()> = (!supervised).then_some(&end_rest);
        match child::run(cmd, limits, Some(capture), end_rest) {
            Err(e) => Ok(Err(cannot_start(&e))),
            Ok(_) if supervised && let Some(e) = spawn_error(&files.status_file) => {
                Ok(Err(cannot_start(&e)))
            }
            Ok(ran) => {
                let exited = matches!(ran.ended, Ended::Exited(_));
                let limits_reached = match confined.map(|c| c.ended(Some(&files.stderr), exited)) {
                    Some(Err(e)) => return Err(e),
                    Some(Ok(Err(why))) => {
                        return Ok(Err(format!(
                            "cannot start agent '{}' in the sandbox: {why}",
                            self.name
                        )));
                    }
                    Some(Ok(Ok(reached))) => reached,
                    None => Vec::new(),
                };
                Ok(Ok(Ran {
                    ended: ran.ended,
                    captured: ran.captured,
                    limits_reached,
                    output: output_format(program),
                }))
            }
        }
    }
}
