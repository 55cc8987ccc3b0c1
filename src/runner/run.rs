//! Runs a plan: trials concurrently on a bounded pool, events funnelled to the caller's
//! sinks on one thread, so reporters never need to be thread-safe. Every way in (a
//! suite, recorded traces, a resumed run) is a [`Plan`] for the same [`execute`].

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tokio::signal::unix::{Signal, SignalKind, signal};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

use super::plan::{Plan, PlannedTrial, ReplaySet, ReplayStart, Source};
use super::retry::{Backoff, Breaker, stopped, wait_unless_cancelled};
use super::steps::run_trial;
use super::trial::{
    Attempt, Budgets, KeepRepo, TrialResult, TrialSpec, harness_at_fault, harness_failed_attempt,
};
use crate::agent::factory::{self, SuiteTrial};
use crate::agent::replay::RunActions;
use crate::agent::{FailureKind, SessionKind};
use crate::error::{Error, Result};
use crate::events::{Event, EventKind, EventSink};
use crate::notice::Notice;
use crate::observe::{Observer, VerifyCache};
use crate::run_dir::RunDir;
use crate::sandbox::{Hidden, Redactor};
use crate::seed;
use crate::suite::TrialKey;
use crate::suite::{AgentDriver, InfraPolicy, Prompts, Suite};
use crate::workspace::{SpaceBounds, Workspace};

/// How long agents in flight may go on after Ctrl-C before they are signalled.
const INTERRUPT_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// The signals that stop a run: Ctrl-C (SIGINT), and SIGTERM and SIGHUP, which `kill`,
/// `timeout`, Slurm, Kubernetes and a closed terminal send. All three are handled
/// alike, so that a batch engine's stop leaves a resumable run and no agent behind.
struct StopSignals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl StopSignals {
    /// Installs the handlers; from here on none of the three kills the process.
    fn install() -> Result<StopSignals> {
        let install = |kind: SignalKind, name: &str| {
            signal(kind).map_err(|e| Error::io(format!("cannot handle {name}"), e))
        };
        Ok(StopSignals {
            interrupt: install(SignalKind::interrupt(), "SIGINT")?,
            terminate: install(SignalKind::terminate(), "SIGTERM")?,
            hangup: install(SignalKind::hangup(), "SIGHUP")?,
        })
    }

    /// Waits for the next of the three and names it. Cancel-safe: a signal that
    /// arrives while the caller is busy elsewhere is kept for the next call.
    async fn recv(&mut self) -> &'static str {
        tokio::select! {
            Some(()) = self.interrupt.recv() => "Ctrl-C",
            Some(()) = self.terminate.recv() => "SIGTERM",
            Some(()) = self.hangup.recv() => "SIGHUP",
            // Only when the runtime shuts down; never report a signal that did not come.
            else => std::future::pending().await,
        }
    }
}

/// How to run a plan.
pub struct RunOptions {
    /// Trials at once.
    pub jobs: usize,
    /// Trials of the run that an earlier process finished (`resume`): the run's start
    /// event counts them among its trials.
    pub finished_before: usize,
    /// The results directory (command agents capture their output under `agents/`).
    pub run_dir: RunDir,
    /// Write a git bundle of every trial under `repos/` of the results directory.
    pub keep_repos: bool,
    /// Retries and circuit breaker for failures outside the agent.
    pub infra: InfraPolicy,
    /// Attempts an earlier process already made at a trial (`failures.jsonl`, for
    /// `resume`): the next one is numbered after them.
    pub prior_attempts: BTreeMap<String, u32>,
}

/// The default `--jobs`: min(4, cores).
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(4)
}

/// Forwards events from a trial's thread to the collecting loop.
struct ChannelSink<'a> {
    tx: mpsc::UnboundedSender<Event>,
    /// The values passed by `pass_env` or taken by the tasks' templates, replaced in
    /// every record before any sink (the results files, the console, report.html)
    /// sees it.
    redactor: &'a Redactor,
}

impl EventSink for ChannelSink<'_> {
    fn handle(&mut self, event: &Event) -> Result<()> {
        let event = if self.redactor.is_empty() {
            event.clone()
        } else {
            redacted(event, self.redactor)?
        };
        // The receiver only goes away when the run is failing already.
        let _ = self.tx.send(event);
        Ok(())
    }
}

/// `event` with every text of its record redacted.
fn redacted(event: &Event, redactor: &Redactor) -> Result<Event> {
    fn clean<T: serde::Serialize + serde::de::DeserializeOwned>(
        record: &T,
        redactor: &Redactor,
    ) -> Result<T> {
        let mut value = serde_json::to_value(record)
            .map_err(|e| Error::Tool(format!("cannot redact a record: {e}")))?;
        redactor.json(&mut value);
        serde_json::from_value(value)
            .map_err(|e| Error::Tool(format!("cannot redact a record: {e}")))
    }
    let kind = match &event.kind {
        EventKind::SessionFinished(r) => {
            EventKind::SessionFinished(Box::new(clean(&**r, redactor)?))
        }
        EventKind::TrialFinished(r) => EventKind::TrialFinished(Box::new(clean(&**r, redactor)?)),
        EventKind::Trajectory(t) => EventKind::Trajectory(Box::new(clean(&**t, redactor)?)),
        EventKind::AttemptFailed {
            key,
            attempt,
            failure,
            captures,
        } => EventKind::AttemptFailed {
            key: key.clone(),
            attempt: *attempt,
            failure: clean(failure, redactor)?,
            captures: captures.clone(),
        },
        EventKind::SessionLeftOut {
            attempt,
            captures,
            record,
        } => EventKind::SessionLeftOut {
            attempt: *attempt,
            captures: captures.clone(),
            record: Box::new(clean(&**record, redactor)?),
        },
        other => other.clone(),
    };
    Ok(Event {
        elapsed: event.elapsed,
        kind,
    })
}

/// The redactor of every value the run's agents get through `pass_env`, and of every
/// value its tasks took from the harness's environment (`${NAME}` templates).
fn run_redactor(source: &Source) -> Redactor {
    match source {
        Source::Suite(suite) => Redactor::for_names(&suite.secret_names()),
        Source::Replay(set) => Redactor::for_names(set.task.host_variables()),
    }
}

/// How many trials beyond `--jobs` are spawned ahead: the ones waiting out a backoff
/// hold no job slot, so that other trials run meanwhile.
const IN_FLIGHT_SLACK: usize = 16;

/// The finished trials of a run as [`execute`] keeps them: how many, and only those
/// the caller has something to say about (a kept work directory, a bad input), with
/// their index in the plan. Every record is already in the sinks; holding them all
/// would make a run's memory grow with its size.
#[derive(Default)]
struct Finished {
    count: usize,
    notable: Vec<(usize, TrialResult)>,
}

impl Finished {
    fn add(&mut self, index: usize, result: Option<TrialResult>) {
        let Some(result) = result else { return };
        self.count += 1;
        if result.kept_work.is_some() || result.bad_input.is_some() {
            self.notable.push((index, result));
        }
    }
}

/// Runs the trials of `plan`, sending every event to `sink`: the run's start first,
/// counting `options.finished_before`, and its finish last when every trial of the plan
/// ended (not when the run was stopped or cancelled). Returns, in plan order
/// with their index in it, the finished trials that kept their work directory or
/// broke a rule of the input; every record went to `sink`.
pub fn execute(
    plan: &Plan,
    options: &RunOptions,
    sink: &mut dyn EventSink,
    run_start: Instant,
) -> Result<Vec<(usize, TrialResult)>> {
    sink.handle(&Event {
        elapsed: run_start.elapsed(),
        kind: EventKind::RunStarted {
            run_dir: options.run_dir.clone(),
            trials: options.finished_before + plan.trials.len(),
        },
    })?;
    let outcome = execute_trials(plan, options, sink, run_start);
    if outcome.is_ok() {
        sink.handle(&Event {
            elapsed: run_start.elapsed(),
            kind: EventKind::RunFinished,
        })?;
    }
    outcome
}

/// [`execute`] between the run's start and finish events.
fn execute_trials(
    plan: &Plan,
    options: &RunOptions,
    sink: &mut dyn EventSink,
    run_start: Instant,
) -> Result<Vec<(usize, TrialResult)>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.jobs.max(1))
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the runtime", e))?;
    let cache = Arc::new(VerifyCache::default());
    let cancel = Arc::new(AtomicBool::new(false));
    let breaker = Arc::new(Breaker::new(options.infra.circuit));
    let prior = Arc::new(options.prior_attempts.clone());
    let infra = options.infra;
    let outcome = runtime.block_on(async {
        // Before any agent starts, so that a stop never finds one unaccounted for.
        let mut signals = StopSignals::install()?;
        let (tx, mut rx) = mpsc::unbounded_channel();
        let permits = Arc::new(Semaphore::new(options.jobs.max(1)));
        let mut set = JoinSet::new();
        let trials = &plan.trials;
        // What every sandbox of the run hides: the same for all its trials.
        let hidden = Arc::new(match plan.source.as_ref() {
            Source::Suite(s) => {
                Hidden::for_run(options.run_dir.path(), s.tasks.iter().map(|t| t.dir.as_path()))
                    .with_limits(s.limits)
            }
            Source::Replay(r) => Hidden::for_run(options.run_dir.path(), [r.task.dir.as_path()])
                .with_limits(crate::sandbox::Limits::default()),
        });
        let redactor = Arc::new(run_redactor(&plan.source));
        // Trials are spawned as earlier ones finish, never all at once: a run holds a
        // bounded number of them whatever its size.
        let in_flight = options.jobs.max(1) + IN_FLIGHT_SLACK;
        let mut waiting = trials.iter().copied().enumerate();
        let mut tx = Some(tx);
        let mut spawn_next = |set: &mut JoinSet<_>, tx: &mut Option<mpsc::UnboundedSender<Event>>| {
            let Some(sender) = tx.as_ref() else { return };
            let Some((index, trial)) = waiting.next() else {
                // The last trial is out: the events end when the trials' senders do.
                *tx = None;
                return;
            };
            let (source, cache, permits, tx) =
                (plan.source.clone(), cache.clone(), permits.clone(), sender.clone());
            let hidden = hidden.clone();
            let redactor = redactor.clone();
            let cancel = cancel.clone();
            let breaker = breaker.clone();
            let prior = prior.clone();
            let seed = plan.seed;
            let run_dir = options.run_dir.clone();
            let keep_repos = options.keep_repos;
            set.spawn(async move {
                let key = trial_key(&source, trial);
                // One agent's refused key, or its trials failing outside it in a row,
                // stop that agent's sessions only.
                let agent = trial_agent(&source, trial);
                let agent_stop = breaker.stop_flag(&agent);
                let first = prior.get(&key.trial_id).copied().unwrap_or(0) + 1;
                let mut backoff = Backoff::new(infra.backoff);
                let mut wait = None;
                // An attempt that failed `infra` is started again from the task's
                // initial state with the same seed, after a backoff, up to
                // `infra_retries` times; `None`: the trial could not run (its attempts
                // are in failures.jsonl, and `resume` tries it again).
                let mut result: std::result::Result<Result<Option<TrialResult>>, _> = Ok(Ok(None));
                for attempt in first..=first.saturating_add(infra.retries) {
                    // The backoff holds no job slot: other trials run meanwhile.
                    if let Some(delay) = wait.take()
                        && !wait_unless_cancelled(delay, &[&cancel, &agent_stop]).await
                    {
                        result = Ok(Err(Error::Cancelled));
                        break;
                    }
                    let permit = permits.clone().acquire_owned().await;
                    if stopped(&[&cancel, &agent_stop]) {
                        result = Ok(Err(Error::Cancelled));
                        break;
                    }
                    let (source, cache, tx) = (source.clone(), cache.clone(), tx.clone());
                    let (hidden, redactor) = (hidden.clone(), redactor.clone());
                    let (stop, run_dir) = (cancel.clone(), run_dir.clone());
                    let agent_stop = agent_stop.clone();
                    let ran = tokio::task::spawn_blocking(move || {
                        let use_cache = match source.as_ref() {
                            Source::Suite(suite) => suite.verify_cache,
                            Source::Replay(_) => true,
                        };
                        let ctx = RunContext {
                            source: &source,
                            cache: use_cache.then_some(cache.as_ref()),
                            suite_seed: seed,
                            run_dir: &run_dir,
                            hidden: &hidden,
                            cancel: &stop,
                            agent_stop: &agent_stop,
                            infra,
                            run_start,
                            keep_repos,
                            redactor: &redactor,
                        };
                        let mut sink = ChannelSink {
                            tx,
                            redactor: &redactor,
                        };
                        run_attempt(&ctx, trial, attempt, &mut sink)
                    })
                    .await;
                    drop(permit);
                    match ran {
                        Ok(Ok(Attempt::Finished(finished))) => {
                            match &finished.ended_outside {
                                // Ended early by a failure outside the agent, after
                                // sessions that count: finished, and a failure all the
                                // same.
                                Some(failure) => breaker.failed(&agent, &key.trial_id, failure),
                                None => breaker.finished(&agent),
                            }
                            result = Ok(Ok(Some(*finished)));
                            break;
                        }
                        Ok(Ok(Attempt::Failed(failure))) => {
                            breaker.failed(&agent, &key.trial_id, &failure);
                            if failure.kind != FailureKind::Infra {
                                break;
                            }
                            wait = Some(backoff.next(&failure));
                        }
                        Ok(Err(e)) => {
                            result = Ok(Err(e));
                            break;
                        }
                        Err(panic) => {
                            result = Err(panic);
                            break;
                        }
                    }
                }
                (index, result)
            });
        };
        while set.len() < in_flight && tx.is_some() {
            spawn_next(&mut set, &mut tx);
        }
        let mut finished = Finished::default();
        let mut failure: Option<Error> = None;
        let mut cancelled = false;
        let mut aborted = false;
        let mut events_open = true;
        loop {
            if !events_open && set.is_empty() {
                break;
            }
            tokio::select! {
                signal = signals.recv() => {
                    if cancelled {
                        // A second stop: now. Every finished record is already on disk
                        // and `resume` reruns a partial trial; no agent may outlive us,
                        // and trials still running are abandoned with the runtime.
                        crate::agent::command::signal_running_agents(true);
                        aborted = true;
                        break;
                    }
                    cancelled = true;
                    cancel.store(true, Ordering::Relaxed);
                    let stopping = Event {
                        elapsed: run_start.elapsed(),
                        kind: EventKind::Notice(Notice::Stopping {
                            signal,
                            grace: INTERRUPT_GRACE,
                        }),
                    };
                    if failure.is_none() && let Err(e) = sink.handle(&stopping) {
                        failure = Some(e);
                    }
                    tokio::spawn(async {
                        // Sim sessions end on their own; agent processes get a grace
                        // period, then SIGTERM, then SIGKILL to their process groups.
                        tokio::time::sleep(INTERRUPT_GRACE).await;
                        crate::agent::command::signal_running_agents(false);
                        tokio::time::sleep(INTERRUPT_GRACE).await;
                        crate::agent::command::signal_running_agents(true);
                    });
                }
                event = rx.recv(), if events_open => match event {
                    Some(event) => {
                        if failure.is_none() && let Err(e) = sink.handle(&event) {
                            failure = Some(e);
                        }
                    }
                    None => events_open = false,
                },
                Some(joined) = set.join_next(), if !set.is_empty() => {
                    spawn_next(&mut set, &mut tx);
                    match joined {
                        Ok((index, Ok(Ok(result)))) => finished.add(index, result),
                        Ok((_, Ok(Err(Error::Cancelled)))) => {}
                        Ok((_, Ok(Err(e)))) => { failure.get_or_insert(e); }
                        Ok((_, Err(panic))) | Err(panic) => {
                            failure.get_or_insert(Error::Tool(format!("a trial panicked: {panic}")));
                        }
                    }
                }
            }
        }
        if aborted {
            return Err(Error::Cancelled);
        }
        let (hits, runs) = cache.stats();
        if failure.is_none() {
            let stats = Event {
                elapsed: run_start.elapsed(),
                kind: EventKind::Notice(Notice::VerifyCache { hits, runs }),
            };
            failure = sink.handle(&stats).err();
        }
        if let Some(e) = failure {
            return Err(e);
        }
        if let Some(cause) = breaker.cause() {
            // The cause quotes the CLI's own error, which may echo a key it was given.
            let cause = redactor.text(&cause).into_owned();
            return Err(Error::Halted { cause });
        }
        if cancelled && finished.count < trials.len() {
            return Err(Error::Cancelled);
        }
        finished.notable.sort_by_key(|(index, _)| *index);
        Ok(finished.notable)
    });
    // Trials abandoned by a second signal must not hold the command: their blocking
    // threads end with the process.
    runtime.shutdown_background();
    outcome
}

/// What every trial of a run shares.
struct RunContext<'a> {
    source: &'a Source,
    suite_seed: u64,
    run_dir: &'a RunDir,
    hidden: &'a Hidden,
    cache: Option<&'a VerifyCache>,
    cancel: &'a AtomicBool,
    /// Set when the trial's agent must start no new session.
    agent_stop: &'a AtomicBool,
    infra: InfraPolicy,
    run_start: Instant,
    keep_repos: bool,
    /// The values passed by `pass_env` or taken by the tasks' templates (also kept out
    /// of bundles).
    redactor: &'a Redactor,
}

impl<'a> RunContext<'a> {
    /// Where the trial `key` leaves its bundle, when the run keeps them.
    fn bundle_of(&self, key: &TrialKey) -> Option<KeepRepo<'a>> {
        self.keep_repos.then(|| KeepRepo {
            out: self.run_dir.bundle(&key.trial_id),
            redactor: self.redactor,
        })
    }
}

/// Whose sessions a planned trial runs, as the circuit breaker names it: the suite's
/// agent ("agent 'claude'"), or a replay's arm.
fn trial_agent(source: &Source, trial: PlannedTrial) -> String {
    match source {
        Source::Suite(suite) => format!("agent '{}'", suite.arms[trial.arm].agent),
        Source::Replay(set) => format!("the traces of arm '{}'", set.arms[trial.arm].name),
    }
}

/// The key of a planned trial.
fn trial_key(source: &Source, trial: PlannedTrial) -> TrialKey {
    match source {
        Source::Suite(suite) => TrialKey::new(
            &suite.arms[trial.arm].name,
            &suite.tasks[trial.task].name,
            trial.replicate,
        ),
        Source::Replay(set) => {
            TrialKey::new(&set.arms[trial.arm].name, &set.task.name, trial.replicate)
        }
    }
}

/// Runs attempt `attempt` of a trial. A harness that failed before a session could run
/// (its scratch full when the work directory or the observer was made, an engine that
/// lost a container) fails the attempt `infra`: the harness's failure, not the agent's.
fn run_attempt(
    ctx: &RunContext<'_>,
    trial: PlannedTrial,
    attempt: u32,
    sink: &mut dyn EventSink,
) -> Result<Attempt> {
    let outcome = match ctx.source {
        Source::Suite(suite) => run_suite_trial(ctx, suite, trial, attempt, sink),
        Source::Replay(set) => replay_trial(ctx, set, trial, attempt, sink),
    };
    match outcome {
        Err(e) if harness_at_fault(&e) => harness_failed_attempt(
            &trial_key(ctx.source, trial),
            attempt,
            first_session(ctx.source, trial),
            &e,
            None,
            sink,
            ctx.run_start,
        ),
        outcome => outcome,
    }
}

/// The first session a trial of the plan runs, and its kind.
fn first_session(source: &Source, trial: PlannedTrial) -> (u32, SessionKind) {
    match source {
        Source::Suite(suite) if suite.arms[trial.arm].initializer => (0, SessionKind::Initializer),
        Source::Suite(_) => (1, SessionKind::Coding),
        Source::Replay(set) => {
            let arm = &set.arms[trial.arm];
            let trace = &arm.traces[trial.replicate as usize].trace;
            let kind = if arm.start == ReplayStart::Initializer {
                SessionKind::Initializer
            } else {
                SessionKind::Coding
            };
            (trace.sessions.first().map_or(1, |s| s.n), kind)
        }
    }
}

fn run_suite_trial(
    ctx: &RunContext<'_>,
    suite: &Suite,
    trial: PlannedTrial,
    attempt: u32,
    sink: &mut dyn EventSink,
) -> Result<Attempt> {
    let RunContext {
        suite_seed,
        run_dir,
        hidden,
        cache,
        cancel,
        agent_stop,
        infra,
        run_start,
        ..
    } = *ctx;
    let arm = &suite.arms[trial.arm];
    let task = &suite.tasks[trial.task];
    let key = TrialKey::new(&arm.name, &task.name, trial.replicate);
    let trial_key = key.clone();
    let trial_seed = seed::trial_seed(suite_seed, &arm.name, &task.name, trial.replicate);
    let bounds = matches!(suite.agent_of(arm), AgentDriver::Command { .. })
        .then(|| SpaceBounds::of(task, &suite.limits));
    let ws = Workspace::create_bare(task, bounds)?;
    let mut observer = Observer::new(task, arm.list_format, cache, suite.verify_repeats)?
        .with_schema(arm.list_schema)
        .with_clean_tree(suite.clean_tree);
    let container = suite.containers.get(&task.name).cloned();
    match &container {
        Some(c) if suite.verify_sandbox_of(arm) == crate::sandbox::SandboxKind::Container => {
            observer = observer.in_container(c.clone());
        }
        _ if suite.verify_sandbox_of(arm).confines() => {
            observer = observer.sandboxed(hidden.clone());
        }
        _ => {}
    }
    let prompts = suite.prompts_of(arm);
    let spec = TrialSpec {
        keep_repo: ctx.bundle_of(&key),
        key,
        task,
        format: arm.list_format,
        initializer: arm.initializer,
        max_coding_sessions: Some(arm.coding_sessions()),
        stop_when_done: true,
        turn_budget: arm.turn_budget(),
        crash_rate: arm.crash_rate,
        ledger: arm.ledger,
        seed: trial_seed,
        prompts: &prompts,
        cancel: Some(cancel),
        agent_stop: Some(agent_stop),
        infra,
        schema: arm.list_schema,
        exit_check: arm.exit_check,
        budgets: Budgets::of(arm),
        attempt,
    };
    let mut agent = factory::suite_agent(SuiteTrial {
        suite,
        arm,
        task,
        key: trial_key,
        trial_seed,
        attempt,
        run_dir,
        hidden,
    })?;
    run_trial(&spec, &ws, agent.as_mut(), &observer, sink, run_start)
}

/// One trace replayed as a trial: the task materialized with the canonical list, the
/// trace's sessions applied in order, every recorded session played.
fn replay_trial(
    ctx: &RunContext<'_>,
    set: &ReplaySet,
    trial: PlannedTrial,
    attempt: u32,
    sink: &mut dyn EventSink,
) -> Result<Attempt> {
    let arm = &set.arms[trial.arm];
    let trace = &arm.traces[trial.replicate as usize];
    let task = &set.task;
    let mut observer = Observer::new(task, arm.format, ctx.cache, 1)?.with_schema(arm.schema);
    let run_actions = match &set.container {
        // A task made for a container: its checks, and the recorded agent's commands,
        // each in a fresh container of its image, never on the host.
        Some(container) => {
            observer = observer.in_container(container.clone());
            RunActions::Sandboxed(ctx.hidden.clone().in_image(container.clone()))
        }
        None if set.sandbox.confines() => {
            observer = observer.sandboxed(ctx.hidden.clone());
            RunActions::Sandboxed(ctx.hidden.clone())
        }
        None => RunActions::Unsandboxed,
    };
    let mut ws = match arm.start {
        ReplayStart::List => Workspace::create_with(task, arm.format, arm.schema)?,
        ReplayStart::Repo | ReplayStart::Initializer => Workspace::create_bare(task, None)?,
    };
    let prompts = Prompts::default();
    let key = TrialKey::new(&arm.name, &task.name, trial.replicate);
    let spec = TrialSpec {
        keep_repo: ctx.bundle_of(&key),
        key,
        task,
        format: arm.format,
        initializer: arm.start == ReplayStart::Initializer,
        max_coding_sessions: None,
        stop_when_done: false,
        turn_budget: u32::MAX,
        crash_rate: 0.0,
        ledger: arm.ledger,
        seed: 0,
        prompts: &prompts,
        cancel: Some(ctx.cancel),
        agent_stop: Some(ctx.agent_stop),
        infra: ctx.infra,
        schema: arm.schema,
        exit_check: arm.exit_check,
        budgets: Budgets {
            session_tokens: arm.session_tokens,
            ..Budgets::default()
        },
        attempt,
    };
    let mut agent = factory::replay_agent(trace.trace.clone(), run_actions);
    let mut outcome = run_trial(&spec, &ws, agent.as_mut(), &observer, sink, ctx.run_start)?;
    if set.keep_work
        && let Attempt::Finished(result) = &mut outcome
    {
        result.kept_work = Some(ws.keep()?.join("work"));
    }
    Ok(outcome)
}
