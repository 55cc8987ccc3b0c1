//! `loopbench mock-model`: starts the scripted model server of one session on
//! 127.0.0.1 and, when given a command, runs the agent CLI pointed at it, in the same
//! network namespace (inside the sandbox, where the host's loopback is out of reach).
//!
//! The CLI gets `ANTHROPIC_BASE_URL`, `OPENAI_BASE_URL`, `LOOPBENCH_MODEL_URL` (the
//! `/v1` endpoint, for wrappers that configure a provider, such as Codex) and dummy API
//! keys. At a scripted crash the CLI's request is left unanswered, and after
//! [`CRASH_GRACE`] its process group is killed (SIGKILL) and the usage
//! file says `interrupted`; at a scripted declaration of completion the usage file the
//! wrapper wrote gains `"status": "declared_complete"`: a real CLI has no way of its own
//! to say so.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

use super::script::{Ending, Scenario, ScriptedSession};
use super::server::Server;
use crate::error::{Error, IoContext, Result};

/// The dummy API key handed to the CLI.
pub const API_KEY: &str = "loopbench-mock-key";

/// What to serve and run.
#[derive(Debug, Clone)]
pub struct Launch {
    /// The scenario file.
    pub scenario: PathBuf,
    /// The session to serve.
    pub session: u32,
    /// The attempt of the trial (from 1), for faults that apply in some attempts only.
    pub attempt: u32,
    /// Where the served log is appended.
    pub log: Option<PathBuf>,
    /// Where every request body is kept.
    pub requests_dir: Option<PathBuf>,
    /// `HOME` of the CLI (created when missing).
    pub home: Option<PathBuf>,
    /// Port to listen on; 0 picks a free one.
    pub port: u16,
    /// The agent command; empty: serve until interrupted.
    pub command: Vec<String>,
}

/// How long the CLI waits for its answer at a scripted crash before it is killed. A
/// CLI writes its transcript behind its requests: Claude Code 2.1, killed the moment its
/// next request arrived, had lost the last one or two tool results from its transcript
/// in 9 runs of 10, though it had carried them out; given 1 s it had written them in 9
/// runs of 9. So the crash models a model call that hangs until the session is killed,
/// and a transcript of it holds everything the CLI did.
pub const CRASH_GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// The exit code of a CLI killed at a scripted crash (as a shell reports SIGKILL).
pub const CRASH_EXIT: i32 = 128 + 9;

/// Runs the server (and the command) and returns the exit code: the command's, or
/// [`CRASH_EXIT`] at a scripted crash.
pub fn launch(args: &Launch) -> Result<i32> {
    let session = scripted_session(args)?;
    let ending = session.ending;
    let work_dir =
        std::env::current_dir().io_context(|| "cannot read the current directory".into())?;
    let log = open_log(args)?;
    for dir in args.requests_dir.iter().chain(&args.home) {
        std::fs::create_dir_all(dir).io_context(|| format!("cannot create '{}'", dir.display()))?;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .io_context(|| "cannot start the server's runtime".into())?;
    let server = Server::new(
        session,
        args.attempt,
        work_dir,
        log,
        args.requests_dir.clone(),
    );
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
            .await
            .io_context(|| format!("cannot listen on 127.0.0.1:{}", args.port))?;
        let port = listener
            .local_addr()
            .io_context(|| "cannot read the server's address".into())?
            .port();
        let serving = tokio::spawn(server.clone().serve(listener));
        if args.command.is_empty() {
            eprintln!(
                "mock-model: serving session {} of '{}' at http://127.0.0.1:{port} (Ctrl-C ends)",
                args.session,
                args.scenario.display()
            );
            let _ = tokio::signal::ctrl_c().await;
            serving.abort();
            server.log_summary(&server.summary());
            return Ok(crate::exit_code::OK);
        }
        let code = run_cli(&args.command, port, args.home.as_deref(), &server).await?;
        serving.abort();
        let summary = server.summary();
        server.log_summary(&summary);
        let usage_file = std::env::var_os("LOOPBENCH_USAGE_FILE").map(PathBuf::from);
        if summary.crashed {
            if let Some(file) = &usage_file {
                std::fs::write(file, "{\"status\":\"interrupted\"}\n")
                    .io_context(|| format!("cannot write '{}'", file.display()))?;
            }
            return Ok(CRASH_EXIT);
        }
        if ending == Ending::DeclaredComplete
            && summary.finished
            && let Some(file) = &usage_file
        {
            declare_complete(file)?;
        }
        Ok(code)
    })
}

/// The session of the scenario that `args` name.
fn scripted_session(args: &Launch) -> Result<ScriptedSession> {
    let scenario = Scenario::load(&args.scenario)?;
    scenario.session(args.session).cloned().ok_or_else(|| {
        Error::BadInput(format!(
            "scenario '{}' has no session {} (it scripts {})",
            args.scenario.display(),
            args.session,
            scenario
                .sessions
                .iter()
                .map(|s| s.n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })
}

/// The served log, opened to append, when `args` name one.
fn open_log(args: &Launch) -> Result<Option<std::fs::File>> {
    let Some(path) = &args.log else {
        return Ok(None);
    };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .io_context(|| format!("cannot open the served log '{}'", path.display()))
        .map(Some)
}

/// Runs the CLI against the server on `port`; kills its process group at the crash.
async fn run_cli(
    command: &[String],
    port: u16,
    home: Option<&Path>,
    server: &std::sync::Arc<Server>,
) -> Result<i32> {
    let base = format!("http://127.0.0.1:{port}");
    let mut cmd = tokio::process::Command::new(&command[0]);
    cmd.args(&command[1..])
        .env("ANTHROPIC_BASE_URL", &base)
        .env("ANTHROPIC_API_KEY", API_KEY)
        .env("OPENAI_BASE_URL", format!("{base}/v1"))
        .env("OPENAI_API_BASE", format!("{base}/v1"))
        .env("OPENAI_API_KEY", API_KEY)
        .env("LOOPBENCH_MODEL_URL", format!("{base}/v1"))
        .env("LOOPBENCH_MODEL_API_KEY", API_KEY)
        // Nothing but the scripted server is there to talk to.
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .process_group(0)
        .kill_on_drop(true);
    if let Some(home) = home {
        cmd.env("HOME", home);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::BadInput(format!("cannot start '{}': {e}", command[0])))?;
    let pid = child.id();
    tokio::select! {
        status = child.wait() => {
            let status = status.io_context(|| format!("cannot wait for '{}'", command[0]))?;
            use std::os::unix::process::ExitStatusExt;
            Ok(status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(9)))
        }
        () = server.crash.notified() => {
            // The CLI's transcript may still be behind its requests: let it catch up while
            // it waits for the answer (or exit on its own), then kill.
            let _ = tokio::time::timeout(CRASH_GRACE, child.wait()).await;
            if let Some(pid) = pid {
                crate::process_group::Group::led_by(pid).kill();
            }
            let _ = child.wait().await;
            Ok(CRASH_EXIT)
        }
    }
}

/// Adds `"status": "declared_complete"` to the usage file the wrapper wrote.
fn declare_complete(file: &Path) -> Result<()> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let mut map = match serde_json::from_str::<Value>(text.trim()) {
        Ok(Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    map.insert("status".into(), Value::String("declared_complete".into()));
    std::fs::write(file, format!("{}\n", Value::Object(map)))
        .io_context(|| format!("cannot write '{}'", file.display()))
}
