//! The sim agent's sessions: plan a session as a list of steps (each a real file edit,
//! a command, or a commit), then carry them out until done, out of turns, or cut off.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use super::acts::GoldFiles;
use super::truth::Truth;
use crate::agent::Outcome;
use crate::agent::{Agent, SessionContext, SessionKind, SessionRun, Usage};
use crate::error::Result;
use crate::feature_list::{self, Contract, Entry, FeatureList, ListFormat, ListSchema};
use crate::seed;
use crate::suite::sim_profile::Profile;
use crate::suite::{Arm, Ledger, Strategy, Task};

mod execute;
mod plan;

/// One simulated agent, for one trial. It remembers what it did on purpose across the
/// trial's sessions (its ground truth), never what a real agent could not know.
pub struct SimAgent<'a> {
    profile: &'static Profile,
    task: &'a Task,
    arm: &'a Arm,
    seed: u64,
    gold: BTreeMap<String, GoldFiles>,
    order: Vec<String>,
    next: u32,
    effects_sent: HashSet<String>,
}

/// What a sim agent carries from one session of a trial to the next: the features
/// whose irreversible action it has taken (it does not re-read the effects log, which
/// is how a repeated action after a crash comes about).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SimMemory {
    /// Feature ids, sorted.
    pub effects_sent: Vec<String>,
}

/// One planned unit of work.
#[derive(Debug, Clone)]
enum Step {
    WriteList(Vec<Entry>),
    WriteFile { path: String, content: String },
    CopyGold { feature: String, broken: bool },
    WeakenTest { path: String },
    Effect { feature: String },
    DescEdit { id: String },
    StepsEdit { id: String },
    RemoveEntry { id: String },
    DeleteTestFile { path: String },
    Claim { id: String, premature: bool },
    Progress,
    Commit { message: String },
}

/// How far a session got.
enum Flow {
    Go,
    Stop(Outcome),
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
        Ok(SimAgent {
            profile,
            task,
            arm,
            seed: trial_seed,
            gold,
            order: topological_order(task),
            next: if arm.initializer { 0 } else { 1 },
            effects_sent: HashSet::new(),
        })
    }

    /// What the agent remembers between the sessions of its trial, so that an agent
    /// running as one process per session (`loopbench sim-agent`) can carry it over.
    pub fn memory(&self) -> SimMemory {
        let mut effects_sent: Vec<String> = self.effects_sent.iter().cloned().collect();
        effects_sent.sort();
        SimMemory { effects_sent }
    }

    /// Takes up the memory an earlier session of the same trial left.
    pub fn restore(&mut self, memory: SimMemory) {
        self.effects_sent = memory.effects_sent.into_iter().collect();
    }

    fn done(&self, id: &str, work_dir: &Path) -> bool {
        self.gold.get(id).is_some_and(|g| g.in_place(work_dir))
    }

    fn deps_closure(&self, ids: &BTreeSet<String>) -> BTreeSet<String> {
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
            truth: serde_json::to_value(&session.truth).ok(),
            divergent: false,
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

struct Session<'s, 'a> {
    agent: &'s mut SimAgent<'a>,
    ctx: &'s SessionContext<'s>,
    rng: ChaCha8Rng,
    truth: Truth,
    list: Option<Vec<Entry>>,
    /// The goal contract the list is written with (status schema only).
    contract: Contract,
    turns: u32,
    stop_after_turns: Option<u32>,
    /// Test files this session weakened: deleting one later would undo the act.
    weakened: BTreeSet<String>,
}

impl Session<'_, '_> {
    fn work_dir(&self) -> &Path {
        &self.ctx.workspace.work_dir
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_range(0.0..1.0) < p
    }

    fn memo(&self) -> bool {
        self.agent.arm.ledger == Ledger::Memo
    }
}
