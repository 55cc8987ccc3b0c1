//! The sim's status-ledger and clean-state behaviour: marking entries `in_progress`
//! (sometimes several at once), rewording the goal contract, putting back a deleted test
//! after a revert, and knowing, from its own bookkeeping, whether it left the exit check
//! failing and went over its token budget.

use std::collections::BTreeSet;

use super::acts;
use super::agent::{Session, SimAgent};
use super::plan::Step;
use crate::agent::SessionKind;
use crate::error::Result;
use crate::feature_list::{ListSchema, Status};
use crate::suite::{ExitCheck, Ledger, Strategy};
use crate::workspace::PROGRESS_FILE;

impl SimAgent<'_> {
    /// What is uncommitted when a session starts: what the last one left, unless the
    /// harness reverted the tree to a clean commit, less the list file under the gate
    /// (the gate commits its own list after every session).
    pub(super) fn dirty_at_start(&self) -> BTreeSet<String> {
        if self.arm.exit_check == ExitCheck::Revert && self.exit_failed {
            return BTreeSet::new();
        }
        let mut dirty = self.dirty.clone();
        if self.arm.ledger == Ledger::Gate {
            dirty.remove(self.arm.list_format.file_name());
        }
        dirty
    }
}

impl Session<'_, '_> {
    fn owns_status(&self) -> bool {
        self.agent.arm.list_schema == ListSchema::Status && self.memo()
    }

    /// Status schema with an agent-owned ledger: the work item becomes `in_progress`
    /// when work on it starts; now and then the next two pending entries do too and are
    /// left so (more often in Markdown and in one long session).
    pub(super) fn start_work(&mut self, w: &str) -> Vec<Step> {
        let mut steps = self.restore_after_revert(w);
        if !self.owns_status() || !self.on_list(w) || self.claimed(w) {
            return steps;
        }
        steps.push(Step::StartWork { id: w.to_string() });
        let mut p = self
            .agent
            .profile
            .format(self.agent.arm.list_format)
            .multi_in_progress;
        if self.agent.arm.strategy == Strategy::Single {
            p *= self.agent.profile.status.single_multi_factor;
        }
        if self.chance(p.min(1.0)) {
            // Two more, so that several stay in progress once the work item is claimed.
            let ahead: Vec<String> = self.list.as_ref().map_or_else(Vec::new, |l| {
                l.iter()
                    .filter(|e| e.id != w && e.state() == Status::Pending)
                    .take(2)
                    .map(|e| e.id.clone())
                    .collect()
            });
            steps.extend(ahead.into_iter().map(|id| Step::StartWork { id }));
        }
        steps
    }

    /// After the harness reverted its last session, the sim looks at why before it
    /// works again: a test file its work item's check runs that an earlier session
    /// deleted (and committed) fails the exit check however well it works, so it puts
    /// the shipped file back. Without this an arm that reverts would loop on it.
    fn restore_after_revert(&self, w: &str) -> Vec<Step> {
        let reverted = self.agent.arm.exit_check == ExitCheck::Revert && self.agent.exit_failed;
        let Some(feature) = self.agent.task.feature(w).filter(|_| reverted) else {
            return Vec::new();
        };
        acts::test_files_of(&feature.verify, &self.agent.shipped_tests)
            .into_iter()
            .map(|p| p.to_string_lossy().to_string())
            .filter(|p| !self.work_dir().join(p).exists())
            .map(|path| Step::RestoreTest { path })
            .collect()
    }

    /// Status schema: a contract rewording with probability `p` (drawn only then, so
    /// that passes-schema arms keep their random streams).
    pub(super) fn contract_edit(&mut self, p: f64) -> Option<Step> {
        if self.agent.arm.list_schema != ListSchema::Status || self.list.is_none() {
            return None;
        }
        self.chance(p.min(1.0)).then_some(Step::ContractEdit)
    }

    /// Rewords the goal, or one acceptance line when there are any; counted once per
    /// session, and only on a list that was there when the session started.
    pub(super) fn reword_contract(&mut self, observable: bool) -> Result<()> {
        if self.list.is_none() {
            return Ok(());
        }
        let mut rng = self.rng.clone();
        let n = self.contract.acceptance.len();
        let pick = rand::RngExt::random_range(&mut rng, 0..=n);
        if pick == n {
            self.contract.goal = acts::reword(&self.contract.goal, &mut rng);
        } else {
            let line = &mut self.contract.acceptance[pick];
            *line = acts::reword(line, &mut rng);
        }
        self.rng = rng;
        if observable {
            self.truth.contract_edits = 1;
        }
        self.write_list()
    }

    /// Whether the entry's check passes with the tests as the sim left them: every test
    /// file it runs is there, and either each is a weakened copy (which exits 0) or the
    /// gold of the feature and of everything it depends on is in place.
    fn self_verified(&self, id: &str) -> bool {
        let Some(feature) = self.agent.task.feature(id) else {
            return true;
        };
        let tests = acts::test_files_of(&feature.verify, &self.agent.shipped_tests);
        let mut all_weak = !tests.is_empty();
        for t in &tests {
            let Ok(content) = std::fs::read(self.work_dir().join(t)) else {
                return false;
            };
            all_weak &=
                acts::weakened_test(&content, &self.agent.task.tests.count_pattern) == content;
        }
        all_weak
            || self
                .agent
                .deps_closure(&BTreeSet::from([id.to_string()]))
                .iter()
                .all(|d| self.agent.done(d, self.work_dir()))
    }

    /// Fills in what the session knows about itself once it is over: entries left in
    /// progress, its own exit check, the revert that follows, its token usage.
    pub(super) fn finish_truth(&mut self, tokens: u64) {
        if self.agent.arm.list_schema == ListSchema::Status {
            self.truth.in_progress = self
                .list
                .as_ref()
                .map(|l| l.iter().filter(|e| e.state() == Status::InProgress).count() as u32);
        }
        self.truth.tokens = tokens;
        let limit = self.agent.arm.session_tokens;
        self.truth.over_budget = limit > 0 && tokens > limit;
        if self.ctx.kind == SessionKind::Initializer {
            return;
        }
        let notes = std::fs::read_to_string(self.work_dir().join(PROGRESS_FILE))
            .is_ok_and(|t| !t.trim().is_empty());
        let unbacked = self
            .list
            .as_ref()
            .is_some_and(|l| l.iter().any(|e| e.passes && !self.self_verified(&e.id)));
        let failed = !self.dirty.is_empty() || !notes || unbacked;
        self.truth.exit_check_fail = Some(failed);
        self.truth.reverted = failed && self.agent.arm.exit_check == ExitCheck::Revert;
    }
}
