//! The sim agent's plans: the steps of a session of each strategy (initializer,
//! incremental, single), of the work on one feature, of the acts it draws at random and
//! of a session's end. `exec.rs` carries the steps out.

use std::collections::BTreeSet;

use rand::RngExt;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

use super::acts;
use super::agent::Session;
use crate::agent::Outcome;
use crate::error::Result;
use crate::feature_list::Entry;

/// One planned unit of work.
#[derive(Debug, Clone)]
pub(super) enum Step {
    WriteList(Vec<Entry>),
    WriteFile {
        path: String,
        content: String,
    },
    CopyGold {
        feature: String,
        broken: bool,
    },
    WeakenTest {
        path: String,
    },
    Effect {
        feature: String,
    },
    DescEdit {
        id: String,
    },
    StepsEdit {
        id: String,
    },
    RemoveEntry {
        id: String,
    },
    DeleteTestFile {
        path: String,
    },
    Claim {
        id: String,
        premature: bool,
    },
    /// Status schema, agent-owned ledger: the entry's state becomes `in_progress`.
    StartWork {
        id: String,
    },
    /// Status schema: the goal contract is reworded.
    ContractEdit,
    /// A test file of the task as shipped, put back where it is missing.
    RestoreTest {
        path: String,
    },
    Progress,
    Commit {
        message: String,
    },
}

/// How far a session got.
pub(super) enum Flow {
    Go,
    Stop(Outcome),
}

impl Session<'_, '_> {
    /// Session 0: write the list, the notes and the init script; build nothing.
    pub(super) fn initializer(&mut self) -> Result<Outcome> {
        let entries = self.agent.task.canonical_entries();
        let steps = vec![
            Step::WriteList(entries),
            Step::WriteFile {
                path: "init.sh".into(),
                content:
                    "#!/bin/sh\n# Idempotent setup: nothing to install for this task.\nexit 0\n"
                        .into(),
            },
            Step::Progress,
            Step::Commit {
                message: "Initializer: feature list, notes, init script".into(),
            },
        ];
        self.run_planned(steps, 1.0)
    }

    /// One feature per session.
    pub(super) fn incremental(&mut self) -> Result<Outcome> {
        let mut steps = self.plan_list_if_missing();
        steps.extend(self.recovery_steps());
        let plan = self.planned_ids();
        let work = self.next_work_item(&plan, &BTreeSet::new());
        if let Some(w) = &work {
            let p = self
                .agent
                .profile
                .format(self.agent.arm.list_format)
                .premature_claim;
            steps.extend(self.work_steps(w, p));
        }
        let reword = self.agent.profile.status.contract_reword;
        steps.extend(self.contract_edit(reword));
        steps.extend(self.session_end_steps(work.as_deref()));
        let outcome = self.run_planned(steps, 1.0)?;
        Ok(self.declare_if_done(outcome, work.is_none()))
    }

    /// One session with the whole budget: features one after another, with the
    /// context degrading as it fills.
    pub(super) fn single(&mut self) -> Result<Outcome> {
        let budget = self.ctx.turn_budget;
        self.stop_after_turns = self
            .ctx
            .interrupt_at
            .map(|f| (f * f64::from(budget)) as u32);
        let mut first = self.plan_list_if_missing();
        first.extend(self.recovery_steps());
        if let Flow::Stop(o) = self.run_steps(first, 1.0)? {
            return Ok(o);
        }
        let params = self.agent.profile.single.clone();
        let base = self
            .agent
            .profile
            .format(self.agent.arm.list_format)
            .premature_claim;
        let mut believed_done = BTreeSet::new();
        let mut k = 0u32;
        loop {
            let plan = self.planned_ids();
            let Some(w) = self.next_work_item(&plan, &believed_done) else {
                break;
            };
            let multiplier = 1.0 + params.turn_growth * f64::from(k);
            let p = base + params.premature_growth * f64::from(k);
            let mut steps = self.work_steps(&w, p);
            if self.truth.contract_edits == 0 {
                let growth = self.agent.profile.status.contract_reword_growth;
                steps.extend(self.contract_edit(growth * f64::from(k)));
            }
            steps.extend(self.session_end_steps(Some(&w)));
            if let Flow::Stop(o) = self.run_steps(steps, multiplier)? {
                return Ok(o);
            }
            believed_done.insert(w);
            k += 1;
            if self.chance(params.early_victory) {
                return Ok(Outcome::DeclaredComplete);
            }
        }
        Ok(self.declare_if_done(Outcome::Completed, true))
    }

    /// Without an initializer the first coding session writes its own plan, which
    /// may omit requirements (closed under dependencies, never empty).
    fn plan_list_if_missing(&mut self) -> Vec<Step> {
        if self.list.is_some() || self.agent.arm.initializer {
            return Vec::new();
        }
        let coverage = self.agent.profile.no_initializer.plan_coverage;
        let mut kept = BTreeSet::new();
        for id in self.agent.order.clone() {
            if self.chance(coverage) {
                kept.insert(id);
            }
        }
        if kept.is_empty()
            && let Some(first) = self.agent.order.first()
        {
            kept.insert(first.clone());
        }
        let kept = self.agent.deps_closure(&kept);
        let entries = self
            .agent
            .task
            .canonical_entries()
            .into_iter()
            .filter(|e| kept.contains(&e.id))
            .collect();
        vec![Step::WriteList(entries)]
    }

    /// Canonical ids the agent considers its job: those on its list (plus what they
    /// depend on); every canonical feature when there is no list to go by.
    fn planned_ids(&self) -> BTreeSet<String> {
        let ids: BTreeSet<String> = match &self.list {
            Some(entries) => entries
                .iter()
                .map(|e| e.id.clone())
                .filter(|id| self.agent.task.feature(id).is_some())
                .collect(),
            None => self.agent.order.iter().cloned().collect(),
        };
        self.agent.deps_closure(&ids)
    }

    /// The first planned feature (dependencies first) that is not really done: the
    /// sim re-checks earlier work, so a false claim is repaired before new work.
    fn next_work_item(&self, plan: &BTreeSet<String>, skip: &BTreeSet<String>) -> Option<String> {
        self.agent
            .order
            .iter()
            .find(|id| {
                plan.contains(*id) && !skip.contains(*id) && !self.agent.done(id, self.work_dir())
            })
            .cloned()
    }

    pub(super) fn claimed(&self, id: &str) -> bool {
        self.list
            .as_ref()
            .and_then(|l| l.iter().find(|e| e.id == id))
            .is_some_and(|e| e.passes)
    }

    pub(super) fn on_list(&self, id: &str) -> bool {
        self.list
            .as_ref()
            .is_some_and(|l| l.iter().any(|e| e.id == id))
    }

    /// Work a crashed session left done but unclaimed: finish it, maybe repeating its
    /// irreversible action.
    fn recovery_steps(&mut self) -> Vec<Step> {
        let mut steps = Vec::new();
        let ids: Vec<String> = self.agent.order.clone();
        for id in ids {
            let unfinished =
                self.agent.done(&id, self.work_dir()) && self.on_list(&id) && !self.claimed(&id);
            let effect_pending = self.agent.done(&id, self.work_dir())
                && !self.agent.effects_sent.contains(&id)
                && self.has_effects();
            if !(unfinished || effect_pending) {
                continue;
            }
            if self.has_effects() {
                // A repeat is the resume failure being modelled: the agent does not check
                // the log before acting again.
                let repeat = self.agent.effects_sent.contains(&id)
                    && self.chance(self.agent.profile.repeat_side_effect_after_crash);
                if !self.agent.effects_sent.contains(&id) || repeat {
                    steps.push(Step::Effect {
                        feature: id.clone(),
                    });
                }
            }
            if unfinished && self.memo() {
                steps.push(Step::Claim {
                    id,
                    premature: false,
                });
            }
        }
        steps
    }

    fn has_effects(&self) -> bool {
        !self.agent.task.side_effect_tools.is_empty()
    }

    /// Implementing (or botching) the work item, its irreversible action, the acts the
    /// list format invites, and the claim.
    fn work_steps(&mut self, w: &str, premature_p: f64) -> Vec<Step> {
        let mut steps = self.start_work(w);
        let sloppy = self.chance(premature_p);
        let mut claim = None;
        if sloppy {
            let test = self.weakenable_test(w);
            match test {
                Some(path) if self.chance(self.agent.profile.weaken_share) => {
                    steps.push(Step::WeakenTest { path });
                }
                _ => steps.push(Step::CopyGold {
                    feature: w.to_string(),
                    broken: true,
                }),
            }
            if self.memo() {
                claim = self.premature_target(w).map(|id| Step::Claim {
                    id,
                    premature: true,
                });
            }
        } else {
            steps.push(Step::CopyGold {
                feature: w.to_string(),
                broken: false,
            });
            if self.has_effects() {
                steps.push(Step::Effect {
                    feature: w.to_string(),
                });
            }
            if self.memo() && self.on_list(w) && !self.claimed(w) {
                claim = Some(Step::Claim {
                    id: w.to_string(),
                    premature: false,
                });
            }
        }
        let mut acts = self.random_acts(w, claim.as_ref());
        acts.shuffle(&mut self.rng);
        steps.extend(acts);
        steps.extend(claim);
        steps
    }

    /// The entry a sloppy session claims: its own feature, or when that is already
    /// (falsely) claimed, the next unclaimed entry whose feature is not done.
    fn premature_target(&self, w: &str) -> Option<String> {
        if self.on_list(w) && !self.claimed(w) {
            return Some(w.to_string());
        }
        let list = self.list.as_ref()?;
        list.iter()
            .filter(|e| !e.passes && e.id != w)
            .find(|e| {
                self.agent.task.feature(&e.id).is_some() && !self.agent.done(&e.id, self.work_dir())
            })
            .map(|e| e.id.clone())
    }

    /// The work item's own test file, if it has one that is not weakened yet.
    fn weakenable_test(&self, w: &str) -> Option<String> {
        let feature = self.agent.task.feature(w)?;
        let tests = self.test_files();
        let path = acts::test_files_of(&feature.verify, &tests)
            .into_iter()
            .next()?;
        let rel = path.to_string_lossy().to_string();
        let content = std::fs::read(self.work_dir().join(&rel)).ok()?;
        let weak = acts::weakened_test(&content, &self.agent.task.tests.count_pattern);
        (weak != content).then_some(rel)
    }

    pub(super) fn test_files(&self) -> Vec<String> {
        let root = self.work_dir();
        walkdir::WalkDir::new(root)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.file_name() != ".git")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_file())
            .map(|e| crate::fsutil::relative_slash_path(root, e.path()))
            .filter(|p| self.agent.task.tests.glob.is_match(p))
            .collect()
    }

    /// Rewording, step edits, entry removal and test removal, each drawn with the
    /// format's probability; only on a list that existed when the session started.
    fn random_acts(&mut self, w: &str, claim: Option<&Step>) -> Vec<Step> {
        let Some(list) = self.list.clone() else {
            return Vec::new();
        };
        if !self.truth.list_observable || list.is_empty() {
            return Vec::new();
        }
        let params = self
            .agent
            .profile
            .format(self.agent.arm.list_format)
            .clone();
        let claimed_id = match claim {
            Some(Step::Claim { id, .. }) => Some(id.clone()),
            _ => None,
        };
        let mut used: BTreeSet<String> = BTreeSet::new();
        let mut acts = Vec::new();
        let pick = |rng: &mut ChaCha8Rng, used: &BTreeSet<String>, avoid: &[&str]| {
            let candidates: Vec<&Entry> = list
                .iter()
                .filter(|e| !used.contains(&e.id) && !avoid.contains(&e.id.as_str()))
                .collect();
            (!candidates.is_empty())
                .then(|| candidates[rng.random_range(0..candidates.len())].id.clone())
        };
        if self.chance(params.desc_edit)
            && let Some(id) = pick(&mut self.rng, &used, &[])
        {
            used.insert(id.clone());
            acts.push(Step::DescEdit { id });
        }
        if self.chance(params.step_edit)
            && let Some(id) = pick(&mut self.rng, &used, &[])
        {
            used.insert(id.clone());
            acts.push(Step::StepsEdit { id });
        }
        if self.chance(params.entry_removal) {
            let avoid: Vec<&str> = [Some(w), claimed_id.as_deref()]
                .into_iter()
                .flatten()
                .collect();
            if let Some(id) = pick(&mut self.rng, &used, &avoid) {
                used.insert(id.clone());
                acts.push(Step::RemoveEntry { id });
            }
        }
        if self.chance(params.test_removal) {
            let files = self.test_files();
            let own: Vec<String> = self
                .agent
                .task
                .feature(w)
                .map(|f| {
                    acts::test_files_of(&f.verify, &files)
                        .into_iter()
                        .map(|p| p.to_string_lossy().to_string())
                        .collect()
                })
                .unwrap_or_default();
            let pattern = &self.agent.task.tests.count_pattern;
            let candidates: Vec<String> = files
                .into_iter()
                .filter(|p| !own.contains(p) && !self.weakened.contains(p))
                .filter(|p| {
                    std::fs::read_to_string(self.work_dir().join(p))
                        .is_ok_and(|t| pattern.find_iter(&t).count() > 0)
                })
                .collect();
            if !candidates.is_empty() {
                let path = candidates[self.rng.random_range(0..candidates.len())].clone();
                acts.push(Step::DeleteTestFile { path });
            }
        }
        acts
    }

    fn session_end_steps(&mut self, w: Option<&str>) -> Vec<Step> {
        let mut steps = Vec::new();
        if !self.chance(self.agent.profile.skip_progress) {
            steps.push(Step::Progress);
        }
        if !self.chance(self.agent.profile.forget_commit) {
            steps.push(Step::Commit {
                message: format!(
                    "session {}: {}",
                    self.ctx.session,
                    w.unwrap_or("check everything")
                ),
            });
        }
        steps
    }

    /// Memo arms declare the project complete once every entry on the list claims to
    /// pass; gate arms once there is nothing left to do.
    fn declare_if_done(&self, outcome: Outcome, nothing_left: bool) -> Outcome {
        if outcome != Outcome::Completed {
            return outcome;
        }
        let all_claimed = self
            .list
            .as_ref()
            .is_some_and(|l| !l.is_empty() && l.iter().all(|e| e.passes));
        let done = if self.memo() {
            all_claimed
        } else {
            nothing_left
        };
        if done {
            Outcome::DeclaredComplete
        } else {
            outcome
        }
    }
}
