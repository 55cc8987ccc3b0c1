//! What a trial runs and how an attempt at it ends: the spec, the budgets, the
//! attempt's result, each session's environment and prompt. The loop that runs the
//! steps (observe, run a session, observe again, judge, record; each "after" the next
//! "before") is `run_trial` in `steps.rs`, beside the steps.

use std::ffi::OsString;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use super::prompt::{self, PromptVars};
use crate::agent::Outcome;
use crate::agent::{Agent, Failure, FailureKind, SessionKind, SessionRun, Usage};
use crate::error::{Error, Result, with_causes};
use crate::events::{Event, EventKind, EventSink};
use crate::feature_list::{ListFormat, ListSchema};
use crate::record::{SessionRecord, TrialRecord};
use crate::suite::TrialKey;
use crate::suite::{ExitCheck, InfraPolicy, Ledger, Prompts, Task};
use crate::workspace::Workspace;

/// What a trial runs.
pub struct TrialSpec<'a> {
    /// Which trial.
    pub key: TrialKey,
    /// The task.
    pub task: &'a Task,
    /// The list format of the arm.
    pub format: ListFormat,
    /// Session 0 is an initializer session.
    pub initializer: bool,
    /// Stop after this many coding sessions (`None`: when the agent has no more).
    pub max_coding_sessions: Option<u32>,
    /// Stop once every feature is verified or the agent declares the project complete
    /// (a replay plays every recorded session instead).
    pub stop_when_done: bool,
    /// Turn budget of each coding session.
    pub turn_budget: u32,
    /// Probability that the harness interrupts a coding session.
    pub crash_rate: f64,
    /// Who owns the `passes` flags.
    pub ledger: Ledger,
    /// The trial's seed (crash decisions derive from it).
    pub seed: u64,
    /// Prompt templates.
    pub prompts: &'a Prompts,
    /// Set when the run is being stopped: no new session starts.
    pub cancel: Option<&'a AtomicBool>,
    /// Set when the agent's sessions must stop (its credentials were refused, or its
    /// trials failed outside it too often in a row): no new session of it starts.
    pub agent_stop: Option<&'a AtomicBool>,
    /// How a session that failed outside the agent, after sessions of its attempt that
    /// were run, is tried again in place: `infra_retries` times after `infra_backoff`.
    pub infra: InfraPolicy,
    /// What the list holds per entry.
    pub schema: ListSchema,
    /// What happens after a coding session whose exit check fails.
    pub exit_check: ExitCheck,
    /// The arm's budgets.
    pub budgets: Budgets,
    /// `--keep-repos`: where to write the trial's git bundle (one commit per session).
    pub keep_repo: Option<KeepRepo<'a>>,
    /// Which attempt of the trial this is, from 1 (earlier ones failed `infra`).
    pub attempt: u32,
}

/// `--keep-repos` for one trial.
pub struct KeepRepo<'a> {
    /// Where its bundle goes.
    pub out: std::path::PathBuf,
    /// The values passed by `pass_env`, which the bundle must not hold.
    pub redactor: &'a crate::sandbox::Redactor,
}

/// Token and dollar limits of an arm; 0 means no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budgets {
    /// Most tokens one session may use (more: `out_of_budget`, `over_budget`).
    pub session_tokens: u64,
    /// No new session once the trial used this many tokens.
    pub trial_tokens: u64,
    /// No new session once the trial cost this many dollars.
    pub trial_cost_usd: f64,
}

impl Budgets {
    /// The budgets of `arm`.
    pub fn of(arm: &crate::suite::Arm) -> Budgets {
        Budgets {
            session_tokens: arm.session_tokens,
            trial_tokens: arm.trial_tokens,
            trial_cost_usd: arm.trial_cost_usd,
        }
    }

    /// Whether the trial's usage so far leaves no room for another session.
    pub(super) fn spent(&self, usage: &Usage) -> bool {
        (self.trial_tokens > 0 && usage.tokens().unwrap_or(0) >= self.trial_tokens)
            || (self.trial_cost_usd > 0.0 && usage.cost_usd.unwrap_or(0.0) >= self.trial_cost_usd)
    }

    /// Why a session's usage cannot be held to these budgets: a limit is set on what
    /// the agent did not report. Fail closed rather than run an unbounded arm.
    pub(super) fn unenforceable(&self, usage: &Usage) -> Option<String> {
        let tokens = self.session_tokens > 0 || self.trial_tokens > 0;
        if tokens && usage.tokens().is_none() {
            return Some(
                "the arm has a token budget but the agent reported no token usage, so it cannot be enforced".into(),
            );
        }
        if self.trial_cost_usd > 0.0 && usage.cost_usd.is_none() {
            return Some(
                "the arm has trial_cost_usd but the agent reported no cost, so it cannot be enforced".into(),
            );
        }
        None
    }
}

/// How one attempt at a trial ended.
pub enum Attempt {
    /// Every session ran; the trial is recorded.
    Finished(Box<TrialResult>),
    /// A session failed for a cause outside the agent (`infra` or `auth`): the
    /// attempt's sessions went to `failures.jsonl` and no trial record was written.
    Failed(Failure),
}

/// A finished trial.
pub struct TrialResult {
    /// Its record (also emitted).
    pub record: TrialRecord,
    /// The failure outside the agent that ended it early: a session that changed
    /// nothing failed `auth`, or `infra` past its retries, after sessions of the trial
    /// that were counted (they stay counted; the failed session is in `failures.jsonl`).
    pub ended_outside: Option<Failure>,
    /// Set when a session broke a rule that makes the input bad (exit 2).
    pub bad_input: Option<String>,
    /// Where the trial's work directory was kept, when it was asked for.
    pub kept_work: Option<std::path::PathBuf>,
}

/// The session environment contract for one session.
pub fn session_env(ws: &Workspace, key: &TrialKey, session: u32) -> Vec<(String, OsString)> {
    let mut env = crate::git::session_env(&ws.work_dir, &ws.git_config);
    env.extend([
        ("LOOPBENCH_SESSION".into(), session.to_string().into()),
        ("LOOPBENCH_ARM".into(), key.arm.clone().into()),
        ("LOOPBENCH_TASK".into(), key.task.clone().into()),
        (
            "LOOPBENCH_EFFECTS".into(),
            ws.effects_channel.clone().into_os_string(),
        ),
        (
            "LOOPBENCH_PROMPT_FILE".into(),
            ws.prompt_file.clone().into_os_string(),
        ),
    ]);
    env
}

/// Whether `error` is the harness's own failure, never what the agent left: its machine
/// ran out of room (the scratch directory full, no memory or file descriptors), or the
/// container engine did not run a check to its end (it never started the container, or
/// lost it while it ran: a failure of the engine is never the agent's).
pub(super) fn harness_at_fault(error: &Error) -> bool {
    crate::fsutil::out_of_room(error) || error.is_engine_failure()
}

/// An attempt the harness could not carry on with because of its own failure
/// ([`harness_at_fault`]) where no session could run or be observed: one record of the
/// session it could not run, `error` with failure `infra` and the cause, goes to
/// `failures.jsonl` with the sessions the attempt had already run, and the trial is
/// tried again like any other `infra` attempt.
pub fn harness_failed_attempt(
    key: &TrialKey,
    attempt: u32,
    (session, kind): (u32, SessionKind),
    error: &Error,
    agent: Option<&mut dyn Agent>,
    sink: &mut dyn EventSink,
    run_start: Instant,
) -> Result<Attempt> {
    let reason = format!("the harness failed: {}", with_causes(error));
    let failure = Failure::new(FailureKind::Infra, crate::agent::short_reason(&reason));
    let mut emit = |kind| {
        sink.handle(&Event {
            elapsed: run_start.elapsed(),
            kind,
        })
    };
    emit(EventKind::SessionFinished(Box::new(SessionRecord {
        key: key.clone(),
        session,
        kind,
        outcome: Outcome::Error,
        metrics: Default::default(),
        actions_failed: 0,
        usage: Usage::default(),
        wall_ms: 0,
        error: Some(reason.clone()),
        divergent: false,
        failure: Some(FailureKind::Infra),
        failure_reason: Some(failure.reason.clone()),
        declared_interrupted: false,
        evidence: None,
    })))?;
    let captures = match agent {
        Some(agent) => agent.archive_attempt(attempt)?,
        None => None,
    };
    emit(EventKind::AttemptFailed {
        key: key.clone(),
        attempt,
        failure: failure.clone(),
        captures,
    })?;
    Ok(Attempt::Failed(failure))
}

/// Whether a session is left out of its trial: only one that failed outside the agent
/// (`infra`, `auth`) and that nothing shows changed anything the harness observes
/// (`changes`, what [`crate::metrics::observed_changes`] found: empty), or whose
/// observation the harness's own failure prevented (`blind`: its scratch full). Such a
/// session ends in `error`, so that nothing (a gate, a revert) acts on it. Any other
/// session that failed outside the agent is the agent's, counted with its failure and
/// a note, whatever the classification said: a classification is read from the CLI's
/// output, which a tool of the agent may have found a way to write (or to bring about,
/// by sabotaging the CLI's configuration), and a session that made a premature claim
/// must never drop out of the tables by its own report of an outage. An unobservable
/// session (`changes` is `None`) is counted too: nothing shows it changed nothing.
pub(super) fn is_left_out(run: &mut SessionRun, changes: Option<&[&str]>, blind: bool) -> bool {
    let Some(failure) = run.failure.as_ref().filter(|f| !f.kind.counts()) else {
        return false;
    };
    let failed = format!(
        "the session failed {} outside the agent ({})",
        failure.kind, failure.reason
    );
    let note = match changes {
        _ if blind => None,
        Some([]) => None,
        Some(changed) => Some(format!(
            "{failed}, but it changed {}: a session that changed what the harness observes \
             is the agent's, counted",
            changed.join(" and ")
        )),
        None => Some(format!(
            "{failed}, and the harness could not observe what it left: counted as the \
             agent's, since nothing shows it changed nothing"
        )),
    };
    match note {
        None => {
            run.outcome = Outcome::Error;
            true
        }
        Some(note) => {
            run.add_note(note);
            false
        }
    }
}

/// The prompt of session `session` of `kind`, from the arm's templates.
pub(super) fn render_prompt(spec: &TrialSpec<'_>, kind: SessionKind, session: u32) -> String {
    let template = match kind {
        SessionKind::Initializer => spec
            .prompts
            .initializer
            .as_deref()
            .unwrap_or(prompt::DEFAULT_INITIALIZER),
        SessionKind::Coding => spec
            .prompts
            .coding
            .as_deref()
            .unwrap_or(prompt::DEFAULT_CODING),
    };
    prompt::render(
        template,
        &PromptVars {
            task: spec.task,
            format: spec.format,
            ledger: spec.ledger,
            initializer: spec.initializer,
            session,
            turns: spec.turn_budget,
        },
    )
}
