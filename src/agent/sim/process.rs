//! The simulated agent as an external process (`loopbench sim-agent`) speaking the
//! command driver's contract, so that the command driver can be tested end to end with
//! a real process, and so that a command arm running it reproduces the in-process sim.
//!
//! It runs one session per invocation: the work directory is its cwd, and it reads
//! `LOOPBENCH_SESSION`, `LOOPBENCH_SESSION_KIND`, `LOOPBENCH_ARM`, `LOOPBENCH_TASK`,
//! `LOOPBENCH_TURNS`, `LOOPBENCH_EFFECTS`, `LOOPBENCH_PROMPT_FILE`,
//! `LOOPBENCH_TRIAL_SEED` and, when the harness crashes the session with
//! `crash = "agent"`, `LOOPBENCH_INTERRUPT_AT`. The arm's settings and the task (with
//! the gold files the sim copies) come from `--suite`. What the in-process sim keeps in
//! memory across a trial's sessions (the irreversible actions it took) is kept in
//! `$LOOPBENCH_STATE_DIR/sim-agent.json`. It reports turns, tokens and how the session
//! ended in `$LOOPBENCH_USAGE_FILE`, and prints its ground truth as one JSON line.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::str::FromStr;

use serde_json::json;

use super::{SimAgent, SimMemory};
use crate::agent::Outcome;
use crate::agent::{Agent, SessionContext, SessionKind, SessionRun};
use crate::error::{Error, IoContext, Result, SimAgentError};
use crate::fsutil::write_atomic;
use crate::suite::sim_profile::Profile;
use crate::suite::{Arm, Suite, Task};
use crate::workspace::Workspace;

/// File in `$LOOPBENCH_STATE_DIR` that carries the sim's memory between sessions.
pub const MEMORY_FILE: &str = "sim-agent.json";

/// Runs one session of the arm `arm` (default `$LOOPBENCH_ARM`) of the suite at
/// `suite_file` with the sim profile named `profile`, in the current directory; returns
/// the line it prints: the session, how it ended and its ground truth.
pub fn run_session(
    suite_file: &Path,
    arm: Option<&str>,
    profile: &str,
) -> Result<serde_json::Value> {
    let suite = Suite::load(suite_file)?;
    let (arm, task) = arm_and_task(&suite, arm)?;
    let profile = Profile::named(profile).ok_or_else(|| SimAgentError::UnknownProfile {
        profile: profile.to_string(),
        known: Profile::names(),
    })?;
    let session: u32 = parsed("LOOPBENCH_SESSION")?;
    let kind = match std::env::var("LOOPBENCH_SESSION_KIND").as_deref() {
        Ok("initializer") => SessionKind::Initializer,
        Ok("coding") => SessionKind::Coding,
        _ if session == 0 && arm.initializer => SessionKind::Initializer,
        _ => SessionKind::Coding,
    };
    let turn_budget: u32 = parsed("LOOPBENCH_TURNS")?;
    let trial_seed: u64 = parsed("LOOPBENCH_TRIAL_SEED")?;
    let interrupt_at = interrupt_at()?;
    let work_dir = std::env::current_dir()
        .io_context(|| "sim-agent: cannot read the current directory".to_string())?;
    let workspace = Workspace::existing(
        work_dir,
        PathBuf::from(var("LOOPBENCH_EFFECTS")?),
        PathBuf::from(var("LOOPBENCH_PROMPT_FILE")?),
    );
    let prompt = std::fs::read_to_string(&workspace.prompt_file).unwrap_or_default();
    let state_dir = std::env::var_os("LOOPBENCH_STATE_DIR").map(PathBuf::from);

    let mut agent = SimAgent::new(profile, task, arm, trial_seed)?;
    if let Some(dir) = &state_dir {
        agent.restore(read_memory(&dir.join(MEMORY_FILE))?);
    }
    // The harness's environment contract is this process's environment, which every
    // command the sim runs inherits.
    let env: [(String, OsString); 0] = [];
    let run = agent.run_session(&SessionContext {
        workspace: &workspace,
        session,
        kind,
        env: &env,
        prompt: &prompt,
        turn_budget,
        interrupt_at,
        rerun: 0,
        // One session run by a harness, whose own reporters show what matters: the sim
        // has nothing to say while it works.
        notify: &|_| {},
    })?;
    if let Some(dir) = &state_dir {
        let memory = serde_json::to_vec(&agent.memory())
            .map_err(|e| Error::Tool(format!("sim-agent: cannot encode its memory: {e}")))?;
        write_atomic(&dir.join(MEMORY_FILE), &memory)?;
    }
    let status = status_word(&run)?;
    let report = json!({
        "turns": run.usage.turns,
        "input_tokens": run.usage.input_tokens,
        "output_tokens": run.usage.output_tokens,
        "cost_usd": run.usage.cost_usd,
        "status": status,
    });
    if let Some(path) = std::env::var_os("LOOPBENCH_USAGE_FILE") {
        let path = PathBuf::from(path);
        std::fs::write(&path, format!("{report}\n"))
            .io_context(|| format!("sim-agent: cannot write '{}'", path.display()))?;
    }
    Ok(json!({"session": session, "status": status, "truth": run.truth}))
}

/// The arm (`arm`, default `$LOOPBENCH_ARM`) and the task (`$LOOPBENCH_TASK`) of
/// `suite` that the session runs.
fn arm_and_task<'s>(suite: &'s Suite, arm: Option<&str>) -> Result<(&'s Arm, &'s Task)> {
    let arm_name = match arm {
        Some(a) => a.to_string(),
        None => var("LOOPBENCH_ARM")?,
    };
    let arm = suite
        .arms
        .iter()
        .find(|a| a.name == arm_name)
        .ok_or_else(|| SimAgentError::NoArm {
            suite: suite.name.clone(),
            arm: arm_name.clone(),
        })?;
    let task_name = var("LOOPBENCH_TASK")?;
    let task = suite
        .tasks
        .iter()
        .find(|t| t.name == task_name)
        .ok_or_else(|| SimAgentError::NoTask {
            suite: suite.name.clone(),
            task: task_name.clone(),
        })?;
    Ok((arm, task))
}

/// `$LOOPBENCH_INTERRUPT_AT`, when the harness set it.
fn interrupt_at() -> Result<Option<f64>> {
    match std::env::var("LOOPBENCH_INTERRUPT_AT") {
        Ok(text) => Ok(Some(text.parse::<f64>().map_err(|e| {
            SimAgentError::InterruptAt {
                reason: e.to_string(),
                text,
            }
        })?)),
        Err(_) => Ok(None),
    }
}

/// The status the usage file reports for how the session ended; a session that timed
/// out or failed is an error of the sim.
fn status_word(run: &SessionRun) -> Result<&'static str> {
    Ok(match run.outcome {
        Outcome::Completed => "completed",
        Outcome::DeclaredComplete => "declared_complete",
        Outcome::OutOfBudget => "out_of_budget",
        Outcome::Interrupted => "interrupted",
        Outcome::Timeout | Outcome::Error => {
            return Err(Error::Tool(format!(
                "sim-agent: session ended {} ({})",
                run.outcome.as_str(),
                run.error.clone().unwrap_or_default()
            )));
        }
    })
}

fn var(name: &str) -> Result<String> {
    std::env::var(name).map_err(|_| {
        SimAgentError::Unset {
            var: name.to_string(),
        }
        .into()
    })
}

fn parsed<T: FromStr>(name: &str) -> Result<T>
where
    T::Err: std::fmt::Display,
{
    let text = var(name)?;
    text.trim().parse().map_err(|e: T::Err| {
        SimAgentError::Invalid {
            var: name.to_string(),
            reason: e.to_string(),
            text: text.clone(),
        }
        .into()
    })
}

fn read_memory(path: &Path) -> Result<SimMemory> {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
            SimAgentError::BadMemory {
                file: path.to_path_buf(),
                reason: e.to_string(),
            }
            .into()
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(SimMemory::default()),
        Err(e) => Err(Error::io(format!("cannot read '{}'", path.display()), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_harness_did_not_set_as_the_contract_says_is_named() {
        let unset = "LOOPBENCH_SIM_AGENT_TEST_NEVER_SET";
        match var(unset).unwrap_err() {
            Error::SimAgent(SimAgentError::Unset { var }) => assert_eq!(var, unset),
            other => panic!("{other:?}"),
        }
        // Cargo sets it for every test process, and it is no number.
        match parsed::<u32>("CARGO_PKG_NAME").unwrap_err() {
            Error::SimAgent(SimAgentError::Invalid { var, text, .. }) => {
                assert_eq!(
                    (var.as_str(), text.as_str()),
                    ("CARGO_PKG_NAME", "loopbench")
                );
            }
            other => panic!("{other:?}"),
        }
        let suite_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("suites/seed-replication");
        let suite = Suite::load(&suite_dir).unwrap();
        match arm_and_task(&suite, Some("no-such-arm")).unwrap_err() {
            Error::SimAgent(SimAgentError::NoArm { suite, arm }) => {
                assert_eq!(
                    (suite.as_str(), arm.as_str()),
                    ("seed-replication", "no-such-arm")
                );
            }
            other => panic!("{other:?}"),
        }
        let dir = tempfile::tempdir().unwrap();
        let memory = dir.path().join(MEMORY_FILE);
        std::fs::write(&memory, "[1, 2]").unwrap();
        match read_memory(&memory).unwrap_err() {
            Error::SimAgent(SimAgentError::BadMemory { file, .. }) => assert_eq!(file, memory),
            other => panic!("{other:?}"),
        }
        assert!(read_memory(&dir.path().join("none.json")).is_ok());
    }
}
