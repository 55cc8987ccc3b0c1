//! Runs a suite's trial plan: trials concurrently on a bounded pool, events funnelled
//! to the caller's sinks on one thread, so reporters never need to be thread-safe.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;

use super::events::{Event, EventSink};
use super::trial::{TrialResult, TrialSpec, run_trial};
use crate::agent::command::CommandAgent;
use crate::agent::sim::{Profile, SimAgent};
use crate::error::{Error, Result};
use crate::observe::{Observer, VerifyCache};
use crate::record::TrialKey;
use crate::seed;
use crate::suite::{AgentDriver, Suite};
use crate::workspace::Workspace;

/// One (arm, task, replicate) of the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedTrial {
    /// Index into `suite.arms`.
    pub arm: usize,
    /// Index into `suite.tasks`.
    pub task: usize,
    /// Replicate number, from 0.
    pub replicate: u32,
}

/// The trial plan in canonical order: arms as in the suite, then tasks, then replicates.
pub fn plan(suite: &Suite, arms: &[usize], replicates: u32) -> Vec<PlannedTrial> {
    let mut out = Vec::new();
    for &arm in arms {
        for task in 0..suite.tasks.len() {
            for replicate in 0..replicates {
                out.push(PlannedTrial {
                    arm,
                    task,
                    replicate,
                });
            }
        }
    }
    out
}

/// How to run a plan.
pub struct RunOptions {
    /// Trials at once.
    pub jobs: usize,
    /// Suite seed (after `--seed`).
    pub seed: u64,
    /// The results directory (command agents capture their output under `agents/`).
    pub run_dir: PathBuf,
}

/// The default `--jobs`: min(4, cores).
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(4)
}

/// Forwards events from a trial's thread to the collecting loop.
struct ChannelSink(mpsc::UnboundedSender<Event>);

impl EventSink for ChannelSink {
    fn handle(&mut self, event: &Event) -> Result<()> {
        // The receiver only goes away when the run is failing already.
        let _ = self.0.send(event.clone());
        Ok(())
    }
}

/// Runs `trials` of `suite`, sending every event to `sink`. Returns the finished trials
/// in plan order.
pub fn execute(
    suite: Arc<Suite>,
    trials: &[PlannedTrial],
    options: &RunOptions,
    sink: &mut dyn EventSink,
    run_start: Instant,
) -> Result<Vec<TrialResult>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.jobs.max(1))
        .enable_all()
        .build()
        .map_err(|e| Error::io("cannot start the runtime", e))?;
    let cache = Arc::new(VerifyCache::default());
    runtime.block_on(async {
        let (tx, mut rx) = mpsc::unbounded_channel();
        let permits = Arc::new(Semaphore::new(options.jobs.max(1)));
        let mut set = JoinSet::new();
        for (index, trial) in trials.iter().copied().enumerate() {
            let (suite, cache, permits, tx) = (suite.clone(), cache.clone(), permits.clone(), tx.clone());
            let seed = options.seed;
            let run_dir = options.run_dir.clone();
            set.spawn(async move {
                let _permit = permits.acquire_owned().await;
                let result = tokio::task::spawn_blocking(move || {
                    let cache = suite.verify_cache.then_some(cache.as_ref());
                    run_one(&suite, trial, seed, &run_dir, cache, &mut ChannelSink(tx), run_start)
                })
                .await;
                (index, result)
            });
        }
        drop(tx);
        let mut results: Vec<Option<TrialResult>> = trials.iter().map(|_| None).collect();
        let mut failure: Option<Error> = None;
        loop {
            tokio::select! {
                Some(event) = rx.recv() => {
                    if failure.is_none() && let Err(e) = sink.handle(&event) {
                        failure = Some(e);
                    }
                }
                Some(joined) = set.join_next() => {
                    match joined {
                        Ok((index, Ok(Ok(result)))) => results[index] = Some(result),
                        Ok((_, Ok(Err(e)))) => { failure.get_or_insert(e); }
                        Ok((_, Err(panic))) | Err(panic) => {
                            failure.get_or_insert(Error::Tool(format!("a trial panicked: {panic}")));
                        }
                    }
                }
                else => break,
            }
        }
        let (hits, runs) = cache.stats();
        tracing_stats(hits, runs);
        match failure {
            Some(e) => Err(e),
            None => Ok(results.into_iter().flatten().collect()),
        }
    })
}

fn run_one(
    suite: &Suite,
    trial: PlannedTrial,
    suite_seed: u64,
    run_dir: &Path,
    cache: Option<&VerifyCache>,
    sink: &mut dyn EventSink,
    run_start: Instant,
) -> Result<TrialResult> {
    let arm = &suite.arms[trial.arm];
    let task = &suite.tasks[trial.task];
    let key = TrialKey::new(&arm.name, &task.name, trial.replicate);
    let trial_key = key.clone();
    let trial_seed = seed::trial_seed(suite_seed, &arm.name, &task.name, trial.replicate);
    let ws = Workspace::create_bare(task)?;
    let observer = Observer::new(task, arm.list_format, cache, suite.verify_repeats)?;
    let spec = TrialSpec {
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
        prompts: &suite.prompts,
    };
    match suite.agent_of(arm) {
        AgentDriver::Sim { profile } => {
            let profile = Profile::named(profile)
                .ok_or_else(|| Error::BadInput(format!("unknown sim profile '{profile}'")))?;
            let mut agent = SimAgent::new(profile, task, arm, trial_seed)?;
            run_trial(&spec, &ws, &mut agent, &observer, sink, run_start)
        }
        AgentDriver::Command { .. } => {
            let mut agent = CommandAgent::for_trial(suite, arm, trial_key, trial_seed, run_dir)?;
            run_trial(&spec, &ws, &mut agent, &observer, sink, run_start)
        }
    }
}

fn tracing_stats(hits: u64, runs: u64) {
    if std::env::var_os("LOOPBENCH_DEBUG").is_some() {
        eprintln!("verify: {runs} commands run, {hits} checks answered from the cache");
    }
}
