//! The sim agent of one trial: what it carries from session to session, and the state
//! of one session. `plan.rs` plans a session as a list of steps (each a real file edit,
//! a command, or a commit); `exec.rs` carries them out until done, out of turns, or cut
//! off.

use crate::agent::trajectory::Trajectory;
use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::acts::GoldFiles;
use super::truth::Truth;
use crate::agent::{Agent, SessionContext, SessionKind, SessionRun, Usage};
use crate::error::Result;
use crate::feature_list::{self, Contract, Entry, FeatureList, ListFormat, ListSchema};
use crate::seed;
use crate::suite::sim_profile::Profile;
use crate::suite::{Arm, Ledger, Strategy, Task};

/// One simulated agent, for one trial. It remembers what it did on purpose across the
/// trial's sessions (its ground truth), never what a real agent could not know.
pub struct SimAgent<'a> {
    pub(super) profile: &'static Profile,
    pub(super) task: &'a Task,
    pub(super) arm: &'a Arm,
    seed: u64,
    pub(super) gold: BTreeMap<String, GoldFiles>,
    /// Feature ids with every feature after its dependencies.
    pub(super) order: Vec<String>,
    next: u32,
    pub(super) effects_sent: HashSet<String>,
    /// Test files of the task as it ships (work-directory paths), so that the sim knows
    /// which of them a check runs even after one is deleted.
    pub(super) shipped_tests: Vec<String>,
    /// What the last session left uncommitted (see [`SimMemory::dirty`]).
    pub(super) dirty: BTreeSet<String>,
    /// The last coding session left its exit check failing.
    pub(super) exit_failed: bool,
}

/// What a sim agent carries from one session of a trial to the next: the features
/// whose irreversible action it has taken (it does not re-read the effects log, which
/// is how a repeated action after a crash comes about).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct SimMemory {
    /// Feature ids, sorted.
    pub effects_sent: Vec<String>,
    /// Paths the last session changed and did not commit, sorted.
    pub dirty: Vec<String>,
    /// The last coding session left its exit check failing (so an arm that reverts
    /// put the tree back to a clean commit).
    pub exit_failed: bool,
}

impl<'a> SimAgent<'a> {
    /// A sim agent for one trial of `arm` on `task`, seeded with the trial seed.
    pub fn new(
        profile: &'static Profile,
        task: &'a Task,
        arm: &'a Arm,
        trial_seed: u64,
    ) -> Result<Self> {
        let mut gold = BTreeMap::new();
        for f in &task.features {
            gold.insert(f.id.clone(), GoldFiles::read(&task.gold_dir(&f.id))?);
        }
        let repo = task.repo_dir();
        let shipped_tests = if repo.is_dir() {
            crate::fsutil::TreeSnapshot::read(&repo)?
                .files
                .into_iter()
                .map(|f| f.path)
                .filter(|p| task.tests.glob.is_match(p))
                .collect()
        } else {
            Vec::new()
        };
        Ok(SimAgent {
            profile,
            task,
            arm,
            seed: trial_seed,
            gold,
            order: topological_order(task),
            next: if arm.initializer { 0 } else { 1 },
            effects_sent: HashSet::new(),
            shipped_tests,
            dirty: BTreeSet::new(),
            exit_failed: false,
        })
    }

    /// The same agent implementing a container task's features with what each
    /// feature's `solve.sh` wrote (`gold`, in the task's feature order) instead of
    /// `oracle/gold/`.
    pub fn with_container_gold(mut self, gold: &crate::suite::ContainerGold) -> Self {
        for (f, files) in self.task.features.iter().zip(gold) {
            if !files.is_empty() {
                self.gold.insert(
                    f.id.clone(),
                    GoldFiles {
                        files: files.clone(),
                    },
                );
            }
        }
        self
    }

    /// What the agent remembers between the sessions of its trial, so that an agent
    /// running as one process per session (`loopbench sim-agent`) can carry it over.
    pub fn memory(&self) -> SimMemory {
        let mut effects_sent: Vec<String> = self.effects_sent.iter().cloned().collect();
        effects_sent.sort();
        SimMemory {
            effects_sent,
            dirty: self.dirty.iter().cloned().collect(),
            exit_failed: self.exit_failed,
        }
    }

    /// Takes up the memory an earlier session of the same trial left.
    pub fn restore(&mut self, memory: SimMemory) {
        self.effects_sent = memory.effects_sent.into_iter().collect();
        self.dirty = memory.dirty.into_iter().collect();
        self.exit_failed = memory.exit_failed;
    }

    pub(super) fn done(&self, id: &str, work_dir: &Path) -> bool {
        self.gold.get(id).is_some_and(|g| g.in_place(work_dir))
    }

    pub(super) fn deps_closure(&self, ids: &BTreeSet<String>) -> BTreeSet<String> {
        let mut out = ids.clone();
        let mut stack: Vec<String> = ids.iter().cloned().collect();
        while let Some(id) = stack.pop() {
            if let Some(f) = self.task.feature(&id) {
                for d in &f.depends_on {
                    if out.insert(d.clone()) {
                        stack.push(d.clone());
                    }
                }
            }
        }
        out
    }
}

impl Agent for SimAgent<'_> {
    fn next_session(&mut self) -> Option<u32> {
        let n = self.next;
        self.next += 1;
        Some(n)
    }

    fn run_session(&mut self, ctx: &SessionContext<'_>) -> Result<SessionRun> {
        let rng = seed::rng(self.seed, &["sim", &ctx.session.to_string()]);
        let parsed = read_list(
            &ctx.workspace.work_dir,
            self.arm.list_format,
            self.arm.list_schema,
        );
        let contract = parsed
            .as_ref()
            .map_or_else(|| self.task.contract(), |l| l.contract.clone());
        let list = parsed.map(|l| l.entries);
        let dirty = self.dirty_at_start();
        let mut session = Session {
            agent: self,
            ctx,
            rng,
            truth: Truth {
                list_observable: list.is_some(),
                ..Truth::default()
            },
            list,
            contract,
            turns: 0,
            stop_after_turns: None,
            weakened: BTreeSet::new(),
            dirty,
            trajectory: Trajectory::new(),
        };
        let outcome = match ctx.kind {
            SessionKind::Initializer => session.initializer()?,
            SessionKind::Coding => match session.agent.arm.strategy {
                Strategy::Incremental => session.incremental()?,
                Strategy::Single => session.single()?,
            },
        };
        let profile = session.agent.profile;
        let turns = u64::from(session.turns);
        let tokens = turns * (profile.input_tokens_per_turn + profile.output_tokens_per_turn);
        session.finish_truth(tokens);
        let Session {
            truth,
            dirty,
            trajectory,
            ..
        } = session;
        self.dirty = dirty;
        if let Some(failed) = truth.exit_check_fail {
            self.exit_failed = failed;
        }
        Ok(SessionRun {
            outcome,
            usage: Usage {
                turns: Some(turns),
                input_tokens: Some(turns * profile.input_tokens_per_turn),
                output_tokens: Some(turns * profile.output_tokens_per_turn),
                cost_usd: None,
            },
            actions_failed: 0,
            error: None,
            bad_input: false,
            truth: serde_json::to_value(&truth).ok(),
            divergent: false,
            failure: None,
            declared_interrupted: false,
            trajectory,
        })
    }
}

fn read_list(work_dir: &Path, format: ListFormat, schema: ListSchema) -> Option<FeatureList> {
    let text = std::fs::read_to_string(work_dir.join(format.file_name())).ok()?;
    feature_list::parse_with(format, schema, &text).ok()
}

/// Canonical order with every feature after its dependencies (stable Kahn).
fn topological_order(task: &Task) -> Vec<String> {
    let mut placed: Vec<String> = Vec::new();
    let mut left: Vec<&crate::suite::Feature> = task.features.iter().collect();
    while !left.is_empty() {
        let ready = left
            .iter()
            .position(|f| f.depends_on.iter().all(|d| placed.contains(d)))
            .unwrap_or(0);
        placed.push(left.remove(ready).id.clone());
    }
    placed
}

pub(super) struct Session<'s, 'a> {
    pub(super) agent: &'s mut SimAgent<'a>,
    pub(super) ctx: &'s SessionContext<'s>,
    pub(super) rng: ChaCha8Rng,
    pub(super) truth: Truth,
    pub(super) list: Option<Vec<Entry>>,
    /// The goal contract the list is written with (status schema only).
    pub(super) contract: Contract,
    pub(super) turns: u32,
    pub(super) stop_after_turns: Option<u32>,
    /// Test files this session weakened: deleting one later would undo the act.
    pub(super) weakened: BTreeSet<String>,
    /// Paths changed since the last commit (work-directory relative).
    pub(super) dirty: BTreeSet<String>,
    /// Its real file edits and commands, in order.
    pub(super) trajectory: Trajectory,
}

impl Session<'_, '_> {
    pub(super) fn work_dir(&self) -> &Path {
        &self.ctx.workspace.work_dir
    }

    pub(super) fn chance(&mut self, p: f64) -> bool {
        self.rng.random_range(0.0..1.0) < p
    }

    pub(super) fn memo(&self) -> bool {
        self.agent.arm.ledger == Ledger::Memo
    }
}
