//! The trial loop, the same for every agent driver: observe, run a session, observe
//! again, compute the metrics, emit the record; reuse each "after" as the next "before".

use std::cell::RefCell;
use std::ffi::OsString;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rand::RngExt;

use super::gate::Gate;
use super::prompt::{self, PromptVars};
use super::repo_bundle::{SessionTree, write_bundle};
use crate::agent::Outcome;
use crate::agent::{Agent, Failure, FailureKind, SessionContext, SessionKind, SessionRun, Usage};
use crate::error::{Error, Result, with_causes};
use crate::events::{Event, EventKind, EventSink};
use crate::feature_list::{ListFormat, ListSchema};
use crate::metrics::{PlanCoverage, SessionEnd, session_metrics_with_evidence, trial_metrics};
use crate::observe::{Observer, TREE_STORE};
use crate::record::{SessionRecord, TrialEvidence, TrialRecord};
use crate::seed;
use crate::suite::TrialKey;
use crate::suite::{ExitCheck, Ledger, Prompts, Task};
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
    /// What the list holds per entry.
    pub schema: ListSchema,
    /// What happens after a coding session whose exit check fails.
    pub exit_check: ExitCheck,
    /// The arm's budgets.
    pub budgets: Budgets,
    /// `--keep-repos`: where to write the trial's git bundle (one commit per session).
    pub keep_repo: Option<std::path::PathBuf>,
    /// Which attempt of the trial this is, from 1 (earlier ones failed `infra`).
    pub attempt: u32,
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
    fn spent(&self, usage: &Usage) -> bool {
        (self.trial_tokens > 0 && usage.tokens().unwrap_or(0) >= self.trial_tokens)
            || (self.trial_cost_usd > 0.0 && usage.cost_usd.unwrap_or(0.0) >= self.trial_cost_usd)
    }

    /// Why a session's usage cannot be held to these budgets: a limit is set on what
    /// the agent did not report. Fail closed rather than run an unbounded arm.
    fn unenforceable(&self, usage: &Usage) -> Option<String> {
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
            ws.effects_log.clone().into_os_string(),
        ),
        (
            "LOOPBENCH_PROMPT_FILE".into(),
            ws.prompt_file.clone().into_os_string(),
        ),
    ]);
    env
}

/// Runs one attempt at a trial in `ws` with `agent`, sending events to `sink`.
pub fn run_trial(
    spec: &TrialSpec<'_>,
    ws: &Workspace,
    agent: &mut dyn Agent,
    observer: &Observer<'_>,
    sink: &mut dyn EventSink,
    run_start: Instant,
) -> Result<Attempt> {
    // Shared by the loop and the agent's notices, which arrive while a session runs.
    let sink = RefCell::new(sink);
    let emit = |kind| {
        sink.borrow_mut().handle(&Event {
            elapsed: run_start.elapsed(),
            kind,
        })
    };
    let notify = |notice| {
        // A notice that cannot be shown must not stop the trial.
        let _ = emit(EventKind::Notice(notice));
    };
    let trial_start = Instant::now();
    emit(EventKind::TrialStarted {
        key: spec.key.clone(),
    })?;

    let first_session = if spec.initializer { 0 } else { 1 };
    let first_kind = if spec.initializer {
        SessionKind::Initializer
    } else {
        SessionKind::Coding
    };
    let mut before = match observer.observe(ws) {
        Ok(before) => before,
        Err(e) if crate::fsutil::out_of_room(&e) => {
            let mut sink = sink.borrow_mut();
            return harness_failed_attempt(
                &spec.key,
                spec.attempt,
                (first_session, first_kind),
                &e,
                Some(agent),
                &mut **sink,
                run_start,
            );
        }
        Err(e) => return Err(e),
    };
    let start_tree = before.git_tree.clone();
    let start_hooks = before.hooks.clone();
    let mut session_trees: Vec<SessionTree> = Vec::new();
    let mut ends: Vec<SessionEnd> = Vec::new();
    let mut usage = Usage::default();
    let mut bad_input = None;
    let mut trial_error = None;
    let mut previous: Option<Outcome> = None;
    let mut coding_sessions = 0u32;
    let mut gate = Gate::default();
    let mut plan = PlanCoverage::default();
    let mut budget_spent = false;
    // The initial commit counts as passing the exit check.
    // Only a reverting arm needs the commit to go back to (asking git costs processes).
    let reverts = spec.exit_check == ExitCheck::Revert;
    let mut last_pass = reverts.then(|| crate::git::head(&ws.work_dir)).flatten();
    loop {
        let initializer = spec.initializer && ends.is_empty();
        if !initializer
            && spec
                .max_coding_sessions
                .is_some_and(|max| coding_sessions >= max)
        {
            break;
        }
        if spec.cancel.is_some_and(|c| c.load(Ordering::Relaxed)) {
            return Err(Error::Cancelled);
        }
        if spec.budgets.spent(&usage) {
            budget_spent = true;
            break;
        }
        let Some(session) = agent.next_session() else {
            break;
        };
        let kind = if initializer {
            SessionKind::Initializer
        } else {
            coding_sessions += 1;
            SessionKind::Coding
        };
        let prompt = render_prompt(spec, kind, session);
        // A new file in place of whatever the last session left there: an open of a FIFO
        // for writing would block the trial for good.
        if let Err(e) = crate::agent_file::replace(&ws.prompt_file, prompt.as_bytes()) {
            if !crate::fsutil::out_of_room(&e) {
                return Err(e);
            }
            let mut sink = sink.borrow_mut();
            return harness_failed_attempt(
                &spec.key,
                spec.attempt,
                (session, kind),
                &e,
                Some(agent),
                &mut **sink,
                run_start,
            );
        }
        let mut crash = seed::rng(spec.seed, &["crash", &session.to_string()]);
        let interrupt_at = (kind == SessionKind::Coding
            && spec.crash_rate > 0.0
            && crash.random_range(0.0..1.0) < spec.crash_rate)
            .then(|| crash.random_range(0.0..1.0));
        let env = session_env(ws, &spec.key, session);
        let started = Instant::now();
        let run = agent.run_session(&SessionContext {
            workspace: ws,
            session,
            kind,
            env: &env,
            prompt: &prompt,
            turn_budget: spec.turn_budget,
            interrupt_at,
            notify: &notify,
        });
        // What a session did to its directory is data, never a reason to stop the run:
        // a driver that failed, or a tree that cannot be observed, ends this trial in
        // `error` with the reason, and the other trials go on.
        let mut run = match run {
            Ok(run) => run,
            Err(e @ Error::Cancelled) => return Err(e),
            // The harness's machine ran out of room: its failure, and the trial is tried
            // again (docs/real-ab.md, section 9).
            Err(e) if crate::fsutil::out_of_room(&e) => {
                SessionRun::harness_failed(format!("the harness failed: {}", with_causes(&e)))
            }
            Err(e) => SessionRun::failed(e.to_string()),
        };
        let wall_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        let mut after = match observer.observe(ws) {
            Ok(mut after) => {
                after.carry_effects_from(&before);
                // What the code the session left did under the checks' limits.
                for reached in &after.limits_reached {
                    run.add_note(reached.clone());
                }
                after
            }
            Err(e) => {
                run.outcome = Outcome::Error;
                let why = format!("cannot observe what the session left: {}", with_causes(&e));
                if crate::fsutil::out_of_room(&e)
                    && run.failure.as_ref().is_none_or(|f| f.kind.counts())
                {
                    // The harness's scratch is full (a copy for a check, its index): not
                    // what the agent left, so not the agent's.
                    let reason = crate::agent::short_reason(&why);
                    run.failure = Some(Failure::new(FailureKind::Infra, reason));
                }
                run.add_note(why);
                before.unobserved()
            }
        };
        // What the agent left, before a revert puts the tree back.
        let left_all_verified = after.all_verified();
        if let Some(why) = spec.budgets.unenforceable(&run.usage)
            && run.outcome != Outcome::Error
        {
            run.outcome = Outcome::Error;
            run.error = Some(why);
        }
        // The metrics describe what the agent left, before any gate rewrites the list
        // or the exit check reverts the tree.
        let (mut metrics, evidence) = session_metrics_with_evidence(&before, &after, previous);
        plan.add(&after);
        if spec.budgets.session_tokens > 0
            && run
                .usage
                .tokens()
                .is_some_and(|t| t > spec.budgets.session_tokens)
        {
            metrics.over_budget = true;
            if run.outcome != Outcome::Error {
                run.outcome = Outcome::OutOfBudget;
            }
        }
        if kind == SessionKind::Initializer {
            // Hooks the initializer planted count in the first coding session.
            after.judge_next_hooks_against(start_hooks.clone());
            // The exit check is a coding session's; the initializer's tree still
            // counts as a passing point to revert to when it passes.
            if reverts && metrics.exit_check == Some(true) {
                last_pass = crate::git::head(&ws.work_dir).or(last_pass);
            }
            metrics.exit_check = None;
        } else if run.outcome != Outcome::Error
            && metrics.exit_check == Some(false)
            && spec.exit_check == ExitCheck::Revert
        {
            match super::revert::revert(ws, observer, last_pass.as_deref()) {
                Ok(mut reset) => {
                    // The reset leaves the effects log alone: its history goes on.
                    reset.carry_effects_from(&after);
                    after = reset;
                    metrics.reverted = true;
                }
                Err(e) => {
                    run.outcome = Outcome::Error;
                    run.add_note(format!("exit check failed and the revert failed: {e}"));
                }
            }
        }
        if spec.keep_repo.is_some() {
            session_trees.push(SessionTree {
                session,
                kind,
                outcome: run.outcome,
                evidence: evidence.clone(),
            });
        }
        // Under the status schema the gate also runs after the initializer, so that the
        // first coding session finds its feature `in_progress`.
        if spec.ledger == Ledger::Gate
            && (kind == SessionKind::Coding || spec.schema == ListSchema::Status)
            && run.outcome != Outcome::Error
        {
            // The next session finds the list as the gate left it; the checks do not
            // read the list, so the rest of the observation still holds.
            let (list, note) = gate.apply(
                ws,
                spec.task,
                spec.format,
                spec.schema,
                &before,
                &after,
                session,
                kind == SessionKind::Coding,
            );
            if let Some(note) = note {
                run.add_note(note);
            }
            after.list = list;
        }
        if reverts && kind == SessionKind::Coding && metrics.exit_check == Some(true) {
            // After the gate's own commit, so that a later revert keeps its list.
            last_pass = crate::git::head(&ws.work_dir).or(last_pass);
        }
        if run.bad_input && bad_input.is_none() {
            bad_input = run.error.clone();
        }
        usage = usage + run.usage;
        if run.outcome == Outcome::Error {
            trial_error = run.error.clone();
        }
        ends.push(SessionEnd {
            outcome: run.outcome,
            all_verified: left_all_verified,
        });
        if let Some(truth) = run.truth {
            emit(EventKind::SimTruth {
                key: spec.key.clone(),
                session,
                truth,
            })?;
        }
        let record = SessionRecord {
            key: spec.key.clone(),
            session,
            kind,
            outcome: run.outcome,
            metrics,
            actions_failed: run.actions_failed,
            usage: run.usage,
            wall_ms,
            error: run.error,
            divergent: run.divergent,
            failure: run.failure.as_ref().map(|f| f.kind),
            failure_reason: run.failure.as_ref().map(|f| f.reason.clone()),
            evidence: Some(evidence),
        };
        emit(EventKind::SessionFinished(Box::new(record)))?;
        if let Some(failure) = run.failure.filter(|f| !f.kind.counts()) {
            // Nothing of this attempt describes the agent: it goes to failures.jsonl
            // whole, and the trial is tried again from its initial state (or not at
            // all, on a refused key).
            let captures = agent.archive_attempt(spec.attempt)?;
            emit(EventKind::AttemptFailed {
                key: spec.key.clone(),
                attempt: spec.attempt,
                failure: failure.clone(),
                captures,
            })?;
            return Ok(Attempt::Failed(failure));
        }
        previous = Some(run.outcome);
        let done = after.all_verified() || run.outcome == Outcome::DeclaredComplete;
        before = after;
        if run.outcome == Outcome::Error || (spec.stop_when_done && done) {
            break;
        }
    }

    if let Some(out) = &spec.keep_repo {
        // Before the trial's record: a trial recorded as finished has its bundle, and
        // one that is not is run again by `resume`.
        let start = start_tree.ok_or_else(|| {
            Error::Tool(format!(
                "--keep-repos: git could not give the tree trial {} started from",
                spec.key.trial_id
            ))
        })?;
        write_bundle(
            &ws.root().join(TREE_STORE),
            &start,
            &format!("loopbench: start task {}", spec.task.name),
            &session_trees,
            out,
        )?;
    }
    let plan_omitted = plan.omitted(spec.task.features.iter().map(|f| f.id.as_str()));
    let mut metrics = trial_metrics(&ends, &before, budget_spent);
    metrics.plan_omissions = plan_omitted.as_deref().map(crate::metrics::count_of);
    metrics.tokens = usage.tokens();
    let record = TrialRecord {
        key: spec.key.clone(),
        metrics,
        usage,
        wall_ms: u64::try_from(trial_start.elapsed().as_millis()).unwrap_or(u64::MAX),
        error: trial_error,
        evidence: TrialEvidence { plan_omitted },
        attempts: spec.attempt,
    };
    emit(EventKind::TrialFinished(Box::new(record.clone())))?;
    Ok(Attempt::Finished(Box::new(TrialResult {
        record,
        bad_input,
        kept_work: None,
    })))
}

/// An attempt the harness could not carry on with because its machine ran out of room
/// (the scratch directory full, no memory or file descriptors) where no session could
/// run or be observed: one record of the session it could not run, `error` with
/// failure `infra` and the cause, goes to `failures.jsonl` with the sessions the attempt
/// had already run, and the trial is tried again like any other `infra` attempt.
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

fn render_prompt(spec: &TrialSpec<'_>, kind: SessionKind, session: u32) -> String {
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
