//! The named steps of a trial, each a method of [`Trial`]: `start` (observe the work
//! directory the trial starts from), then per session `next_session`, `prepare_session`
//! (its prompt), `run_agent`, `observe_after`, `judge`, `gate_or_revert` and
//! `record_session`, and at the end `finish` (record the trial). `run_trial` runs them in
//! that order; what one session leaves for the next is a [`TrialState`], so a retry or
//! a task check can run any step on its own.

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::time::Instant;

use rand::RngExt;

use super::gate::Gate;
use super::repo_bundle::{SessionTree, write_bundle};
use super::retry::Backoff;
use super::trial::{Attempt, TrialResult, TrialSpec, harness_at_fault, render_prompt, session_env};
use super::trial_events::Events;
use crate::agent::trajectory::{Act, Entry, SessionTrajectory, Trajectory};
use crate::agent::{
    Agent, Failure, FailureKind, Outcome, SessionContext, SessionKind, SessionRun, Usage,
};
use crate::effects::Channel;
use crate::error::{Error, Result, with_causes};
use crate::events::{EventKind, EventSink};
use crate::feature_list::ListSchema;
use crate::metrics::{
    EndedBy, Evidence, PlanCoverage, SessionEnd, SessionMetrics, observed_changes,
    session_metrics_with_evidence, trial_metrics,
};
use crate::observe::{Check, Observation, Observer, TREE_STORE};
use crate::record::{SessionRecord, TrialEvidence, TrialRecord};
use crate::seed;
use crate::suite::{ExitCheck, Ledger};
use crate::workspace::Workspace;

/// Runs one attempt at a trial in `ws` with `agent`, sending events to `sink`: the
/// steps of [`Trial`] in order, each session's "after" the next one's "before".
pub fn run_trial(
    spec: &TrialSpec<'_>,
    ws: &Workspace,
    agent: &mut dyn Agent,
    observer: &Observer<'_>,
    sink: &mut dyn EventSink,
    run_start: Instant,
) -> Result<Attempt> {
    let trial = Trial {
        spec,
        ws,
        observer,
        events: Events::new(sink, run_start),
    };
    let mut state = match trial.start(agent)? {
        ControlFlow::Continue(state) => state,
        ControlFlow::Break(attempt) => return Ok(attempt),
    };
    'sessions: while let Some(at) = trial.next_session(&mut state, agent)? {
        // A session that failed outside the agent and changed nothing, after sessions
        // of this attempt that were recorded, runs again in place (`again` times so far).
        let mut again = 0;
        loop {
            let prompt = match trial.prepare_session(at, agent)? {
                ControlFlow::Continue(prompt) => prompt,
                ControlFlow::Break(attempt) => return Ok(attempt),
            };
            let mut session = trial.run_agent(at, &prompt, again, agent)?;
            let (after, blind) = trial.observe_after(&state.before, &mut session.run);
            let mut judged = trial.judge(&mut state, after, blind, &mut session.run);
            trial.gate_or_revert(&mut state, &mut session, &mut judged);
            trial.lay_due_step_files(&mut state, &mut session, &mut judged);
            match trial.record_session(&mut state, session, judged, agent, again)? {
                ControlFlow::Continue(Next::Session) => break,
                ControlFlow::Continue(Next::Stop) => break 'sessions,
                ControlFlow::Continue(Next::Again(wait)) => {
                    again += 1;
                    if !trial.wait_to_run_again(&mut state, wait)? {
                        break 'sessions;
                    }
                }
                ControlFlow::Break(attempt) => return Ok(attempt),
            }
        }
    }
    trial.finish(state)
}

/// What the trial loop does after a session is recorded.
pub(crate) enum Next {
    /// Go on to the next session.
    Session,
    /// The trial has had its sessions.
    Stop,
    /// Run the same session again after this wait: it failed outside the agent and
    /// changed nothing, after sessions of the attempt that were recorded.
    Again(std::time::Duration),
}

/// One attempt at a trial: what every step reads.
pub(crate) struct Trial<'t> {
    /// What the trial runs.
    pub spec: &'t TrialSpec<'t>,
    /// Its work directory.
    pub ws: &'t Workspace,
    /// Who observes the work directory.
    pub observer: &'t Observer<'t>,
    /// Where its events go.
    pub events: Events<'t>,
}

/// What a trial carries from one session to the next.
pub(crate) struct TrialState {
    /// The observation the next session starts from: the last one's "after".
    pub before: Observation,
    /// The git tree the trial started from (for `--keep-repos`).
    start_tree: Option<String>,
    /// The hook files the trial started with (the first coding session is judged
    /// against them).
    start_hooks: BTreeMap<String, blake3::Hash>,
    /// Each session's tree, for `--keep-repos`.
    session_trees: Vec<SessionTree>,
    /// How each session ended.
    ends: Vec<SessionEnd>,
    /// What the sessions used so far.
    usage: Usage,
    /// The first rule a session broke that makes the input bad.
    bad_input: Option<String>,
    /// Why the last session that ended in error did.
    trial_error: Option<String>,
    /// How the session before ended.
    previous: Option<Outcome>,
    /// Coding sessions started.
    coding_sessions: u32,
    /// The harness-owned ledger of the `passes` flags.
    gate: Gate,
    /// Which canonical ids the lists have named.
    plan: PlanCoverage,
    /// No new session started because the trial's budget was used up.
    budget_spent: bool,
    /// The last commit that passed the exit check (a reverting arm only).
    last_pass: Option<String>,
    /// When the trial started.
    started: Instant,
    /// The wait before the next rerun of a session that failed outside the agent.
    backoff: Backoff,
    /// The failure outside the agent that ended the trial early, after sessions that
    /// were recorded.
    ended_outside: Option<Failure>,
    /// A coding session of this attempt that was recorded changed what the harness
    /// observes (or could not be observed): a later failure outside the agent must not
    /// take it out of the tables.
    coding_changed: bool,
    /// The trial ended before its sessions were done because its agent was stopped.
    ended_early: bool,
    /// How many features' starting files are in the work directory (a Harbor step's
    /// `workdir/`, laid before the session that works on the step).
    steps_laid: usize,
}

/// A session as the agent ran it.
pub(crate) struct Session {
    /// Its number.
    pub number: u32,
    /// Initializer or coding.
    pub kind: SessionKind,
    /// How the driver says it went (the later steps add notes and may change the
    /// outcome).
    pub run: SessionRun,
    /// Its wall time, without observing it.
    pub wall_ms: u64,
}

/// A session judged: what it left and the metrics of that.
pub(crate) struct Judged {
    /// The observation after the session (after a gate or revert, what the next
    /// session finds).
    pub after: Observation,
    /// Every feature was verified in what the agent left, before any revert.
    pub left_all_verified: bool,
    /// The session's metrics.
    pub metrics: SessionMetrics,
    /// The evidence behind them.
    pub evidence: Evidence,
    /// The session failed outside the agent (`infra`, `auth`) and nothing shows it
    /// changed anything the harness observes: it is left out of the trial's sessions.
    pub left_out: bool,
    /// Something shows the session changed what the harness observes, or the harness
    /// could not observe what it left.
    pub changed: bool,
    /// The harness's own failure ([`harness_at_fault`]) after the session, putting the
    /// tree in order for the next one (an exit check's revert, a step's starting files
    /// and the observation that follows): the session is the agent's as it left it, but
    /// what the next session would find is unknown, so the attempt ends as the
    /// infrastructure's once the session is recorded.
    pub harness_failed: Option<Error>,
}

impl Trial<'_> {
    /// Announces the trial and observes the work directory it starts from. Breaks with
    /// the attempt when the harness's machine has no room to observe it.
    pub(crate) fn start(&self, agent: &mut dyn Agent) -> Result<ControlFlow<Attempt, TrialState>> {
        let (spec, ws) = (self.spec, self.ws);
        let started = Instant::now();
        self.events.emit(EventKind::TrialStarted {
            key: spec.key.clone(),
        })?;
        let before = match self.observer.observe(ws) {
            Ok(before) => before,
            Err(e) if harness_at_fault(&e) => {
                let first = if spec.initializer {
                    (0, SessionKind::Initializer)
                } else {
                    (1, SessionKind::Coding)
                };
                return self
                    .events
                    .harness_failed(spec, first, &e, agent)
                    .map(ControlFlow::Break);
            }
            Err(e) => return Err(e),
        };
        // The initial commit counts as passing the exit check.
        // Only a reverting arm needs the commit to go back to (asking git costs processes).
        let last_pass = self
            .reverts()
            .then(|| crate::git::head(&ws.work_dir))
            .flatten();
        Ok(ControlFlow::Continue(TrialState {
            start_tree: before.git_tree.clone(),
            start_hooks: before.hooks.clone(),
            before,
            session_trees: Vec::new(),
            ends: Vec::new(),
            usage: Usage::default(),
            bad_input: None,
            trial_error: None,
            previous: None,
            coding_sessions: 0,
            gate: Gate::default(),
            plan: PlanCoverage::default(),
            budget_spent: false,
            last_pass,
            started,
            backoff: Backoff::new(spec.infra.backoff),
            ended_outside: None,
            coding_changed: false,
            ended_early: false,
            steps_laid: spec.task.steps_due(|_| false),
        }))
    }

    /// Whether the arm reverts a coding session whose exit check fails.
    fn reverts(&self) -> bool {
        self.spec.exit_check == ExitCheck::Revert
    }

    /// The next session's number and kind, or `None` when the trial has had its
    /// sessions: the most coding sessions, its agent stopped after a coding session
    /// that changed the work, the budget used up, or the agent has no more. A stopped
    /// run is [`Error::Cancelled`], and so is a stopped agent's trial that changed
    /// nothing yet.
    pub(crate) fn next_session(
        &self,
        state: &mut TrialState,
        agent: &mut dyn Agent,
    ) -> Result<Option<(u32, SessionKind)>> {
        let spec = self.spec;
        let initializer = spec.initializer && state.ends.is_empty();
        if !initializer
            && spec
                .max_coding_sessions
                .is_some_and(|max| state.coding_sessions >= max)
        {
            return Ok(None);
        }
        if self.must_stop(state)? {
            return Ok(None);
        }
        if spec.budgets.spent(&state.usage) {
            state.budget_spent = true;
            return Ok(None);
        }
        let Some(session) = agent.next_session() else {
            return Ok(None);
        };
        let kind = if initializer {
            SessionKind::Initializer
        } else {
            state.coding_sessions += 1;
            SessionKind::Coding
        };
        Ok(Some((session, kind)))
    }

    /// Writes the session's prompt where the agent reads it, and gives it back. Breaks
    /// with the attempt when the harness's machine has no room to write it.
    pub(crate) fn prepare_session(
        &self,
        (session, kind): (u32, SessionKind),
        agent: &mut dyn Agent,
    ) -> Result<ControlFlow<Attempt, String>> {
        let prompt = render_prompt(self.spec, kind, session);
        // A new file in place of whatever the last session left there: an open of a FIFO
        // for writing would block the trial for good.
        if let Err(e) = crate::agent_file::replace(&self.ws.prompt_file, prompt.as_bytes()) {
            if !harness_at_fault(&e) {
                return Err(e);
            }
            return self
                .events
                .harness_failed(self.spec, (session, kind), &e, agent)
                .map(ControlFlow::Break);
        }
        Ok(ControlFlow::Continue(prompt))
    }

    /// Runs the session with the agent, interrupting it where the arm's crash rate says.
    /// Only a stopped run is an error: a driver that failed is a session in `error`.
    pub(crate) fn run_agent(
        &self,
        (session, kind): (u32, SessionKind),
        prompt: &str,
        rerun: u32,
        agent: &mut dyn Agent,
    ) -> Result<Session> {
        let spec = self.spec;
        let mut crash = seed::rng(spec.seed, &["crash", &session.to_string()]);
        let interrupt_at = (kind == SessionKind::Coding
            && spec.crash_rate > 0.0
            && crash.random_range(0.0..1.0) < spec.crash_rate)
            .then(|| crash.random_range(0.0..1.0));
        let env = session_env(self.ws, &spec.key, session);
        let started = Instant::now();
        // The session's side-effect tools append through a channel the harness reads
        // while the session runs, and which goes with it.
        let channel = match Channel::open(&self.ws.effects, &self.ws.effects_channel) {
            Ok(channel) => channel,
            Err(e) => {
                let why = format!(
                    "the harness failed: cannot make the effects log's channel '{}': {e}",
                    self.ws.effects_channel.display()
                );
                return Ok(Session {
                    number: session,
                    kind,
                    run: SessionRun::harness_failed(why),
                    wall_ms: 0,
                });
            }
        };
        let run = agent.run_session(&SessionContext {
            workspace: self.ws,
            session,
            kind,
            env: &env,
            prompt,
            turn_budget: spec.turn_budget,
            interrupt_at,
            rerun,
            notify: &|notice| self.events.notify(notice),
        });
        let effects = channel.close();
        // What a session did to its directory is data, never a reason to stop the run:
        // a driver that failed, or a tree that cannot be observed, ends this trial in
        // `error` with the reason, and the other trials go on.
        let mut run = match run {
            Ok(run) => run,
            Err(e @ Error::Cancelled) => return Err(e),
            // The harness's machine ran out of room: its failure, and the trial is tried
            // again (docs/real-ab.md, section 9).
            Err(e) if harness_at_fault(&e) => {
                SessionRun::harness_failed(format!("the harness failed: {}", with_causes(&e)))
            }
            Err(e) => SessionRun::failed(e.to_string()),
        };
        for note in effects.notes {
            run.add_note(note);
        }
        if let Some(why) = effects.error {
            // A flood, or a channel the agent took away: what it did, and the trial
            // ends with it (its lines so far are counted).
            run.outcome = Outcome::Error;
            run.failure = Some(Failure::new(
                FailureKind::Agent,
                crate::agent::short_reason(&why),
            ));
            run.add_note(why);
        }
        let wall_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
        Ok(Session {
            number: session,
            kind,
            run,
            wall_ms,
        })
    }

    /// Observes what the session left. A tree that cannot be observed ends the session
    /// in `error` and is taken to be `before` with nothing vouched for; the flag says
    /// whether that was the harness's own failure (its scratch full), not what the
    /// agent left.
    pub(crate) fn observe_after(
        &self,
        before: &Observation,
        run: &mut SessionRun,
    ) -> (Observation, bool) {
        match self.observer.observe(self.ws) {
            Ok(after) => {
                // What the code the session left did under the checks' limits, and a
                // tree that could not be recorded.
                for note in &after.notes {
                    run.add_note(note.clone());
                }
                (after, false)
            }
            Err(e) => {
                run.outcome = Outcome::Error;
                let why = format!("cannot observe what the session left: {}", with_causes(&e));
                let blind = harness_at_fault(&e);
                if blind && run.failure.as_ref().is_none_or(|f| f.kind.counts()) {
                    // The harness's scratch is full (a copy for a check, its index), or
                    // the engine lost a check's container: not what the agent left, so
                    // not the agent's.
                    let reason = crate::agent::short_reason(&why);
                    run.failure = Some(Failure::new(FailureKind::Infra, reason));
                }
                run.add_note(why);
                let mut after = before.unobserved();
                // The effects are the harness's record, observable whatever the tree.
                after.effects = self.ws.effects.tally();
                (after, blind)
            }
        }
    }

    /// The metrics of what the agent left, before any gate rewrites the list or the
    /// exit check reverts the tree; a session over the arm's budgets, or whose usage
    /// cannot be held to them, is marked so.
    pub(crate) fn judge(
        &self,
        state: &mut TrialState,
        after: Observation,
        blind: bool,
        run: &mut SessionRun,
    ) -> Judged {
        // Whose session it is, before anything (a gate, a revert) writes the tree.
        let changes = observed_changes(&state.before, &after);
        let changed = changes.as_ref().is_none_or(|c| !c.is_empty());
        let left_out = super::trial::is_left_out(run, changes.as_deref(), blind);
        let budgets = self.spec.budgets;
        // What the agent left, before a revert puts the tree back.
        let left_all_verified = after.all_verified();
        if let Some(why) = budgets.unenforceable(&run.usage)
            && run.outcome != Outcome::Error
        {
            run.outcome = Outcome::Error;
            run.error = Some(why);
        }
        let (mut metrics, evidence) =
            session_metrics_with_evidence(&state.before, &after, state.previous);
        state.plan.add(&after);
        if budgets.session_tokens > 0
            && run
                .usage
                .tokens()
                .is_some_and(|t| t > budgets.session_tokens)
        {
            metrics.over_budget = true;
            if run.outcome != Outcome::Error {
                run.outcome = Outcome::OutOfBudget;
            }
        }
        Judged {
            after,
            left_all_verified,
            metrics,
            evidence,
            left_out,
            changed,
            harness_failed: None,
        }
    }

    /// After the initializer, carries its hooks to the first coding session; after a
    /// coding session whose exit check fails on a reverting arm, puts the tree back to
    /// the last passing commit; then, on a gated arm, lets the harness's gate write the
    /// list the next session finds.
    pub(crate) fn gate_or_revert(
        &self,
        state: &mut TrialState,
        session: &mut Session,
        judged: &mut Judged,
    ) {
        let (spec, ws) = (self.spec, self.ws);
        let reverts = self.reverts();
        let (run, kind) = (&mut session.run, session.kind);
        let Judged {
            after,
            metrics,
            harness_failed,
            ..
        } = judged;
        if kind == SessionKind::Initializer {
            // Hooks the initializer planted count in the first coding session.
            after.judge_next_hooks_against(state.start_hooks.clone());
            // The exit check is a coding session's; the initializer's tree still
            // counts as a passing point to revert to when it passes.
            if reverts && metrics.exit_check == Some(true) {
                state.last_pass = crate::git::head(&ws.work_dir).or(state.last_pass.take());
            }
            metrics.exit_check = None;
        } else if run.outcome != Outcome::Error && metrics.exit_check == Some(false) && reverts {
            match super::revert::revert(ws, self.observer, state.last_pass.as_deref()) {
                Ok(reset) => {
                    // The reset leaves the effects log alone: it is the harness's record,
                    // outside the work directory.
                    *after = reset;
                    metrics.reverted = true;
                }
                Err(e) if harness_at_fault(&e) => {
                    run.add_note(format!(
                        "exit check failed and the harness failed to revert the tree: {}",
                        with_causes(&e)
                    ));
                    *harness_failed = Some(e);
                }
                Err(e) => {
                    run.outcome = Outcome::Error;
                    run.add_note(format!("exit check failed and the revert failed: {e}"));
                }
            }
        }
        // Under the status schema the gate also runs after the initializer, so that the
        // first coding session finds its feature `in_progress`.
        if spec.ledger == Ledger::Gate
            && (kind == SessionKind::Coding || spec.schema == ListSchema::Status)
            && run.outcome != Outcome::Error
            && harness_failed.is_none()
        {
            // The next session finds the list as the gate left it; the checks do not
            // read the list, so the rest of the observation still holds.
            let (list, note) = state.gate.apply(
                ws,
                spec.task,
                spec.format,
                spec.schema,
                &state.before,
                after,
                session.number,
                kind == SessionKind::Coding,
            );
            if let Some(note) = note {
                run.add_note(note);
            }
            after.list = list;
        }
        if reverts && kind == SessionKind::Coding && metrics.exit_check == Some(true) {
            // After the gate's own commit, so that a later revert keeps its list.
            state.last_pass = crate::git::head(&ws.work_dir).or(state.last_pass.take());
        }
    }

    /// Before the next session, lays the starting files of the steps the tree now
    /// reaches (each step's `workdir/` before the session that works on it: every step
    /// before it passes, as Harbor runs its steps in order), commits them alone as the
    /// harness, and observes the tree again: what the next session finds. The
    /// session's own metrics are those of what it left.
    pub(crate) fn lay_due_step_files(
        &self,
        state: &mut TrialState,
        session: &mut Session,
        judged: &mut Judged,
    ) {
        let (task, ws) = (self.spec.task, self.ws);
        // Nothing is laid on a tree the harness already failed to put in order.
        if !task.has_step_files() || judged.harness_failed.is_some() {
            return;
        }
        let passing = |id: &str| judged.after.verified.get(id) == Some(&Check::Pass);
        let due = task.steps_due(passing);
        if due <= state.steps_laid {
            return;
        }
        let steps = state.steps_laid..due;
        state.steps_laid = due;
        let ids: Vec<&str> = task.features[steps.clone()]
            .iter()
            .map(|f| f.id.as_str())
            .collect();
        let laid = task
            .lay_step_files_of(&ws.work_dir, steps)
            .and_then(|paths| {
                if !paths.is_empty() {
                    ws.git_commit_paths(
                        &paths,
                        &format!("loopbench: the starting files of {}", ids.join(", ")),
                    )?;
                }
                self.observer.observe(ws)
            });
        match laid {
            Ok(after) => judged.after = after,
            Err(e) if harness_at_fault(&e) => {
                session.run.add_note(format!(
                    "the harness failed laying the starting files of {} for the next session: {}",
                    ids.join(", "),
                    with_causes(&e)
                ));
                judged.harness_failed = Some(e);
            }
            Err(e) => {
                session.run.outcome = Outcome::Error;
                session.run.add_note(format!(
                    "the starting files of {} could not be laid for the next session: {e}",
                    ids.join(", ")
                ));
            }
        }
    }

    /// Records the session: adds it to the trial's totals and emits its record, and says
    /// what the trial does next. A session left out (it failed outside the agent and
    /// changed nothing) is no session of the trial: see [`Trial::leave_out`].
    pub(crate) fn record_session(
        &self,
        state: &mut TrialState,
        session: Session,
        judged: Judged,
        agent: &mut dyn Agent,
        again: u32,
    ) -> Result<ControlFlow<Attempt, Next>> {
        let spec = self.spec;
        let Session {
            number,
            kind,
            run,
            wall_ms,
        } = session;
        let record = SessionRecord {
            key: spec.key.clone(),
            session: number,
            kind,
            outcome: run.outcome,
            metrics: judged.metrics,
            actions_failed: run.actions_failed,
            usage: run.usage,
            wall_ms,
            error: run.error.clone(),
            divergent: run.divergent,
            failure: run.failure.as_ref().map(|f| f.kind),
            failure_reason: run.failure.as_ref().map(|f| f.reason.clone()),
            declared_interrupted: run.declared_interrupted,
            evidence: Some(judged.evidence.clone()),
        };
        if let Some(failure) = run.failure.as_ref().filter(|_| judged.left_out) {
            return self.leave_out(state, record, failure.clone(), agent, again);
        }
        if spec.keep_repo.is_some() {
            state.session_trees.push(SessionTree {
                session: number,
                kind,
                outcome: run.outcome,
                evidence: judged.evidence,
            });
        }
        if run.bad_input && state.bad_input.is_none() {
            state.bad_input = run.error.clone();
        }
        state.usage = state.usage + run.usage;
        if run.outcome == Outcome::Error {
            state.trial_error = run.error.clone();
        }
        state.ends.push(SessionEnd {
            outcome: run.outcome,
            all_verified: judged.left_all_verified,
        });
        state.coding_changed |= kind == SessionKind::Coding && judged.changed;
        self.events
            .emit(EventKind::Trajectory(Box::new(SessionTrajectory {
                trial_id: spec.key.trial_id.clone(),
                session: number,
                trajectory: ended(run.trajectory, run.outcome, run.usage),
            })))?;
        if let Some(truth) = run.truth {
            self.events.emit(EventKind::SimTruth {
                key: spec.key.clone(),
                session: number,
                truth,
            })?;
        }
        self.events
            .emit(EventKind::SessionFinished(Box::new(record)))?;
        if let Some(e) = judged.harness_failed {
            // The next session cannot start from a tree the harness knows.
            let next = (number + 1, SessionKind::Coding);
            return self
                .events
                .harness_failed(spec, next, &e, agent)
                .map(ControlFlow::Break);
        }
        state.previous = Some(run.outcome);
        let done = judged.after.all_verified() || run.outcome == Outcome::DeclaredComplete;
        state.before = judged.after;
        let stop = run.outcome == Outcome::Error || (spec.stop_when_done && done);
        Ok(ControlFlow::Continue(if stop {
            Next::Stop
        } else {
            Next::Session
        }))
    }

    /// Records the trial: writes its bundle when asked to, computes its metrics and
    /// emits its record.
    pub(crate) fn finish(&self, state: TrialState) -> Result<Attempt> {
        let spec = self.spec;
        if let Some(keep) = &spec.keep_repo {
            // Before the trial's record: a trial recorded as finished has its bundle, and
            // one that is not is run again by `resume`.
            let start = state.start_tree.ok_or_else(|| {
                Error::Tool(format!(
                    "--keep-repos: git could not give the tree trial {} started from",
                    spec.key.trial_id
                ))
            })?;
            write_bundle(
                &self.ws.root().join(TREE_STORE),
                &start,
                &format!("loopbench: start task {}", spec.task.name),
                &state.session_trees,
                keep.redactor,
                &keep.out,
            )?;
        }
        let plan_omitted = state
            .plan
            .omitted(spec.task.features.iter().map(|f| f.id.as_str()));
        let mut metrics = trial_metrics(&state.ends, &state.before, state.budget_spent);
        if state.ended_outside.is_some() || state.ended_early {
            metrics.ended_by = EndedBy::Error;
        }
        metrics.plan_omissions = plan_omitted.as_deref().map(crate::metrics::count_of);
        metrics.tokens = state.usage.tokens();
        let record = TrialRecord {
            key: spec.key.clone(),
            metrics,
            usage: state.usage,
            wall_ms: u64::try_from(state.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            error: state.trial_error,
            evidence: TrialEvidence { plan_omitted },
            attempts: spec.attempt,
        };
        self.events
            .emit(EventKind::TrialFinished(Box::new(record.clone())))?;
        Ok(Attempt::Finished(Box::new(TrialResult {
            record,
            ended_outside: state.ended_outside,
            bad_input: state.bad_input,
            kept_work: None,
        })))
    }
}

#[path = "left_out.rs"]
mod left_out;

/// `trajectory` with the session's end as the trial loop recorded it: its outcome and
/// usage, in place of the driver's own end entry (whose summary, the agent's, stays).
fn ended(mut trajectory: Trajectory, outcome: Outcome, usage: Usage) -> Trajectory {
    let summary = match trajectory.last().map(|e| &e.act) {
        Some(Act::End { .. }) => match trajectory.pop().map(|e| e.act) {
            Some(Act::End { summary, .. }) => summary,
            _ => None,
        },
        _ => None,
    };
    trajectory.push(Entry::from(Act::End {
        reason: outcome.as_str().to_string(),
        usage,
        summary,
    }));
    trajectory
}
