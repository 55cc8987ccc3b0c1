//! A plan: the trials of a run in canonical order, and what drives them (a suite's
//! agents, or recorded traces). `run`, `replay` and `resume` build plans from plain
//! values; one [`super::execute`] runs every plan.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use crate::agent::trace::Trace;
use crate::feature_list::ListFormat;
use crate::suite::{Suite, Task, TrialKey};

/// One (arm, task, replicate) of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlannedTrial {
    /// Index into the source's arms.
    pub arm: usize,
    /// Index into the source's tasks.
    pub task: usize,
    /// Replicate number, from 0.
    pub replicate: u32,
}

/// A deterministic slice `index/count` (1-based) of a plan: every `count`-th trial,
/// so that each shard gets a similar mix of arms and tasks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// 1-based shard number.
    pub index: u32,
    /// Number of shards.
    pub count: u32,
}

impl std::str::FromStr for Shard {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Shard, String> {
        let bad = || format!("expected a shard as I/N with 1 <= I <= N, got '{s}'");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: u32 = i.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || count == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

// A manifest keeps a shard as the `I/N` the command line takes.
impl serde::Serialize for Shard {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Shard {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Shard, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl Shard {
    /// The trials of `plan` that belong to this shard.
    pub fn slice(&self, plan: Vec<PlannedTrial>) -> Vec<PlannedTrial> {
        plan.into_iter()
            .enumerate()
            .filter(|(i, _)| (*i as u64) % u64::from(self.count) == u64::from(self.index - 1))
            .map(|(_, t)| t)
            .collect()
    }
}

/// One recorded trace of a replay arm.
#[derive(Debug, Clone)]
pub struct TraceFile {
    /// Where it was read from.
    pub path: PathBuf,
    /// The parsed trace.
    pub trace: Trace,
}

/// One arm of a replay: its traces, one per trial, in replicate order.
#[derive(Debug, Clone)]
pub struct ReplayArm {
    /// Arm name.
    pub name: String,
    /// The list format the trials start with.
    pub format: ListFormat,
    /// The list schema the trials start with and are read under.
    pub schema: crate::feature_list::ListSchema,
    /// What the harness does after a session whose exit check fails.
    pub exit_check: crate::suite::ExitCheck,
    /// Who owns the list's `passes` (or `status`): the recorded agent, or the harness,
    /// which rewrites them from what it verified after each session as a gated arm's
    /// trial did.
    pub ledger: crate::suite::Ledger,
    /// Most tokens one session may use (0: no limit).
    pub session_tokens: u64,
    /// What the trials start from.
    pub start: ReplayStart,
    /// The traces.
    pub traces: Vec<TraceFile>,
}

/// What a replayed trial starts from (`replay --start`).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    clap::ValueEnum,
)]
#[serde(rename_all = "lowercase")]
pub enum ReplayStart {
    /// The task's repository with the canonical feature list written and committed: a
    /// recording made where the list existed.
    #[default]
    List,
    /// The task's repository alone, as a suite's trial starts: the agent writes the
    /// list (an arm with `initializer = false`).
    Repo,
    /// The task's repository alone, and each trace's first session is the initializer,
    /// as in an arm with `initializer = true`.
    Initializer,
}

impl ReplayStart {
    /// Its name on the command line and in the manifest.
    pub fn as_str(self) -> &'static str {
        match self {
            ReplayStart::List => "list",
            ReplayStart::Repo => "repo",
            ReplayStart::Initializer => "initializer",
        }
    }
}

/// Recorded traces replayed against one task.
#[derive(Debug, Clone)]
pub struct ReplaySet {
    /// The task the traces ran against.
    pub task: Task,
    /// The arms, in canonical order.
    pub arms: Vec<ReplayArm>,
    /// The sandbox verify commands and `run` actions execute in (`none`: on the host,
    /// as the user asked with `--unsandboxed`, or where no sandbox works and no trace
    /// runs commands).
    pub sandbox: crate::sandbox::SandboxKind,
    /// Keep each trial's work directory after it ends.
    pub keep_work: bool,
    /// The task's containers, made ready, when it runs in them (`sandbox` is then
    /// `container`): its checks and the traces' `run` actions each in a fresh one.
    pub container: Option<std::sync::Arc<crate::sandbox::container::TaskContainer>>,
}

/// What drives a plan's trials.
#[derive(Debug)]
pub enum Source {
    /// A suite: each trial runs its arm's agent from the task's repository.
    Suite(Suite),
    /// Recorded traces: each trial replays one trace.
    Replay(ReplaySet),
}

/// The trials of a run and what drives them.
#[derive(Debug, Clone)]
pub struct Plan {
    /// What drives the trials.
    pub source: Arc<Source>,
    /// The trials, in canonical order: arms, then tasks, then replicates.
    pub trials: Vec<PlannedTrial>,
    /// The run's seed, from which each trial's is derived (0 for recorded traces,
    /// which decide nothing at random).
    pub seed: u64,
}

impl Plan {
    /// Every trial of `arms` (indices into the source's arms): for a suite,
    /// `replicates` per (arm, task); for recorded traces, one per trace of the arm, up
    /// to `replicates`.
    pub fn of(source: Arc<Source>, arms: &[usize], replicates: u32, seed: u64) -> Plan {
        let mut trials = Vec::new();
        for &arm in arms {
            let (tasks, replicates) = match source.as_ref() {
                Source::Suite(suite) => (suite.tasks.len(), replicates),
                Source::Replay(set) => {
                    let traces = set.arms.get(arm).map_or(0, |a| a.traces.len());
                    (1, replicates.min(u32::try_from(traces).unwrap_or(u32::MAX)))
                }
            };
            for task in 0..tasks {
                for replicate in 0..replicates {
                    trials.push(PlannedTrial {
                        arm,
                        task,
                        replicate,
                    });
                }
            }
        }
        Plan {
            source,
            trials,
            seed,
        }
    }

    /// The arm names of the source, in canonical order.
    pub fn arm_names(&self) -> Vec<String> {
        match self.source.as_ref() {
            Source::Suite(s) => s.arms.iter().map(|a| a.name.clone()).collect(),
            Source::Replay(r) => r.arms.iter().map(|a| a.name.clone()).collect(),
        }
    }

    /// The key of `trial`.
    pub fn key(&self, trial: &PlannedTrial) -> TrialKey {
        match self.source.as_ref() {
            Source::Suite(s) => TrialKey::new(
                &s.arms[trial.arm].name,
                &s.tasks[trial.task].name,
                trial.replicate,
            ),
            Source::Replay(r) => {
                TrialKey::new(&r.arms[trial.arm].name, &r.task.name, trial.replicate)
            }
        }
    }

    /// The same plan without the trials whose ids are in `done` (finished by an earlier
    /// process).
    pub fn without(mut self, done: &BTreeSet<String>) -> Plan {
        let keep: Vec<PlannedTrial> = self
            .trials
            .iter()
            .copied()
            .filter(|t| !done.contains(&self.key(t).trial_id))
            .collect();
        self.trials = keep;
        self
    }

    /// Only the trials of replicates `first` and above: the new trials of a look of a
    /// sequential run.
    pub fn from_replicate(mut self, first: u32) -> Plan {
        self.trials.retain(|t| t.replicate >= first);
        self
    }

    /// The trials of one shard (see [`Shard::slice`]).
    pub fn sharded(mut self, shard: Shard) -> Plan {
        self.trials = shard.slice(self.trials);
        self
    }

    /// The suite, when the plan runs one.
    pub fn suite_source(&self) -> Option<&Suite> {
        match self.source.as_ref() {
            Source::Suite(s) => Some(s),
            Source::Replay(_) => None,
        }
    }
}
