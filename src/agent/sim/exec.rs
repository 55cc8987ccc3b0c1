//! The sim agent's hands: running a planned session step by step within its turn
//! budget, and carrying out each step as a real file edit, command or commit, counting
//! the deliberate acts into the session's ground truth as they happen.

use super::acts;
use super::agent::Session;
use super::plan::{Flow, Step};
use crate::agent::Outcome;
use crate::agent::trajectory::{self, Act, EditOp};
use crate::error::{IoContext, Result};
use crate::feature_list::{self, Entry, Status};
use crate::process::{Isolation, ShellCommand};
use crate::workspace::PROGRESS_FILE;
use rand::RngExt;

/// Time limit of one shell command of the sim (a side-effect tool, a commit).
const SHELL_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The variable naming a file to which the sim agent appends the process id of each
/// command it starts, a line each: the sim agent lives in the harness's process, so
/// that the kernel's records cannot tell its commands from the harness's own git
/// (`scripts/bench.sh processes` reads it to count them as the agent's).
pub const PID_LOG_VARIABLE: &str = "LOOPBENCH_SIM_PID_LOG";

impl Session<'_, '_> {
    /// Runs a session planned in full; a crash cuts it at a random step.
    pub(super) fn run_planned(&mut self, steps: Vec<Step>, multiplier: f64) -> Result<Outcome> {
        if let Some(at) = self.ctx.interrupt_at {
            let keep = ((at * steps.len() as f64) as usize).min(steps.len().saturating_sub(1));
            let mut steps = steps;
            steps.truncate(keep);
            return match self.run_steps(steps, multiplier)? {
                Flow::Stop(o) => Ok(o),
                Flow::Go => Ok(Outcome::Interrupted),
            };
        }
        match self.run_steps(steps, multiplier)? {
            Flow::Stop(o) => Ok(o),
            Flow::Go => Ok(Outcome::Completed),
        }
    }

    pub(super) fn run_steps(&mut self, steps: Vec<Step>, multiplier: f64) -> Result<Flow> {
        for step in steps {
            let [low, high] = self.agent.profile.turns_per_step;
            let cost = (f64::from(self.rng.random_range(low..=high)) * multiplier).ceil() as u32;
            if self.turns + cost > self.ctx.turn_budget {
                return Ok(Flow::Stop(Outcome::OutOfBudget));
            }
            if let Some(limit) = self.stop_after_turns
                && self.turns + cost > limit
            {
                return Ok(Flow::Stop(Outcome::Interrupted));
            }
            self.turns += cost;
            self.exec(step)?;
        }
        Ok(Flow::Go)
    }

    pub(super) fn write_list(&mut self) -> Result<()> {
        if let Some(entries) = &self.list {
            let format = self.agent.arm.list_format;
            let schema = self.agent.arm.list_schema;
            let text = feature_list::render_with(
                format,
                schema,
                &self.contract,
                entries,
                &feature_list::RenderOptions::default(),
            );
            self.put(format.file_name(), text.as_bytes())?;
        }
        Ok(())
    }

    /// Writes a file of the work directory, remembering it as uncommitted when its
    /// content changed.
    fn put(&mut self, rel: &str, content: &[u8]) -> Result<()> {
        let unchanged = std::fs::read(self.work_dir().join(rel)).is_ok_and(|c| c == content);
        acts::write_file(self.work_dir(), rel, content)?;
        if !unchanged {
            self.dirty.insert(rel.to_string());
            self.trajectory.push(trajectory::Entry::from(Act::Edit {
                path: rel.to_string(),
                op: EditOp::Write,
                old: None,
                new: Some(String::from_utf8_lossy(content).into_owned()),
                failed: None,
            }));
        }
        Ok(())
    }

    fn entry_mut(&mut self, id: &str) -> Option<&mut Entry> {
        self.list.as_mut()?.iter_mut().find(|e| e.id == id)
    }

    /// Carries out one step of the session's plan.
    fn exec(&mut self, step: Step) -> Result<()> {
        match step {
            Step::WriteList(entries) => self.write_planned_list(entries),
            Step::WriteFile { path, content } => self.put(&path, content.as_bytes()),
            Step::CopyGold { feature, broken } => self.copy_gold(&feature, broken),
            Step::WeakenTest { path } => self.weaken_test(path),
            Step::Effect { feature } => self.send_effect(feature),
            Step::DescEdit { id } => self.reword_entry(&id),
            Step::StepsEdit { id } => self.edit_entry_steps(&id),
            Step::RemoveEntry { id } => self.remove_entry(&id),
            Step::DeleteTestFile { path } => self.delete_test_file(path),
            Step::Claim { id, premature } => self.claim(&id, premature),
            Step::StartWork { id } => self.mark_in_progress(&id),
            Step::ContractEdit => self.reword_contract(self.truth.list_observable),
            Step::RestoreTest { path } => self.restore_test(&path),
            Step::Progress => self.write_progress(),
            Step::Commit { message } => self.commit(&message),
        }
    }

    /// Writes the planned feature list, remembering which of the task's features it
    /// leaves out.
    fn write_planned_list(&mut self, entries: Vec<Entry>) -> Result<()> {
        let mut omitted: Vec<String> = self
            .agent
            .task
            .features
            .iter()
            .map(|f| f.id.clone())
            .filter(|id| !entries.iter().any(|e| &e.id == id))
            .collect();
        omitted.sort();
        self.truth.plan_omitted = Some(omitted);
        self.list = Some(entries);
        self.write_list()
    }

    /// Copies the gold files of `feature`; a `broken` copy keeps only the first half
    /// of its first file.
    fn copy_gold(&mut self, feature: &str, broken: bool) -> Result<()> {
        let files = self
            .agent
            .gold
            .get(feature)
            .map(|g| g.files.clone())
            .unwrap_or_default();
        for (i, (path, content)) in files.iter().enumerate() {
            let content = if broken && i == 0 {
                acts::first_half(content)
            } else {
                content.clone()
            };
            self.put(path, &content)?;
        }
        Ok(())
    }

    fn weaken_test(&mut self, path: String) -> Result<()> {
        let full = self.work_dir().join(&path);
        let content =
            std::fs::read(&full).io_context(|| format!("cannot read '{}'", full.display()))?;
        let weak = acts::weakened_test(&content, &self.agent.task.tests.count_pattern);
        self.put(&path, &weak)?;
        self.truth.tests_weakened += 1;
        self.weakened.insert(path);
        Ok(())
    }

    /// Runs the task's side-effect tools for `feature`; a second time is a duplicate.
    fn send_effect(&mut self, feature: String) -> Result<()> {
        if !self.agent.effects_sent.insert(feature.clone()) {
            self.truth.dup_side_effects += 1;
        }
        for tool in &self.agent.task.side_effect_tools {
            self.shell(&format!("./{tool} {feature}"))?;
        }
        Ok(())
    }

    fn reword_entry(&mut self, id: &str) -> Result<()> {
        let observable = self.truth.list_observable;
        let mut rng = self.rng.clone();
        if let Some(e) = self.entry_mut(id) {
            e.description = acts::reword(&e.description, &mut rng);
            self.truth.desc_edits += u32::from(observable);
            self.write_list()?;
        }
        self.rng = rng;
        Ok(())
    }

    fn edit_entry_steps(&mut self, id: &str) -> Result<()> {
        let observable = self.truth.list_observable;
        let mut rng = self.rng.clone();
        if let Some(e) = self.entry_mut(id) {
            e.steps = acts::edit_steps(e, &mut rng);
            self.truth.step_edits += u32::from(observable);
            self.write_list()?;
        }
        self.rng = rng;
        Ok(())
    }

    fn remove_entry(&mut self, id: &str) -> Result<()> {
        let observable = self.truth.list_observable;
        if let Some(list) = self.list.as_mut() {
            let before = list.len();
            list.retain(|e| e.id != id);
            if list.len() < before {
                self.truth.entries_removed += u32::from(observable);
                self.write_list()?;
            }
        }
        Ok(())
    }

    /// Deletes a test file, counting the tests it held as removed.
    fn delete_test_file(&mut self, path: String) -> Result<()> {
        let full = self.work_dir().join(&path);
        let text = std::fs::read_to_string(&full).unwrap_or_default();
        let count = self.agent.task.tests.count_pattern.find_iter(&text).count() as u64;
        std::fs::remove_file(&full).io_context(|| format!("cannot delete '{}'", full.display()))?;
        self.trajectory.push(trajectory::Entry::from(Act::Edit {
            path: path.clone(),
            op: EditOp::Delete,
            old: None,
            new: None,
            failed: None,
        }));
        self.dirty.insert(path);
        self.truth.tests_removed += count;
        Ok(())
    }

    /// Marks entry `id` done (completed, or passing in a list without statuses).
    fn claim(&mut self, id: &str, premature: bool) -> Result<()> {
        let observable = self.truth.list_observable;
        if let Some(e) = self.entry_mut(id)
            && !e.passes
        {
            if e.status.is_some() {
                e.set_state(Status::Completed);
            } else {
                e.passes = true;
            }
            if premature {
                self.truth.premature_claims += u32::from(observable);
            }
            self.write_list()?;
        }
        Ok(())
    }

    fn mark_in_progress(&mut self, id: &str) -> Result<()> {
        if let Some(e) = self.entry_mut(id)
            && e.state() != Status::InProgress
        {
            e.set_state(Status::InProgress);
            self.write_list()?;
        }
        Ok(())
    }

    /// Puts back the test file the task shipped at `path`.
    fn restore_test(&mut self, path: &str) -> Result<()> {
        let shipped = self.agent.task.repo_dir().join(path);
        let content = std::fs::read(&shipped)
            .io_context(|| format!("cannot read '{}'", shipped.display()))?;
        self.put(path, &content)
    }

    fn write_progress(&mut self) -> Result<()> {
        let text = self.progress_notes();
        self.put(PROGRESS_FILE, text.as_bytes())
    }

    fn commit(&mut self, message: &str) -> Result<()> {
        // No automatic maintenance: a process per commit, and nothing to gain
        // in a repository that lives for one trial.
        let commit = format!(
            "git -c maintenance.auto=false commit -q --allow-empty -m '{}'",
            message.replace('\'', "")
        );
        // The one command line `add && commit`, run as the shell runs it without the
        // shell: each git starts directly, the commit only when the add succeeded.
        let added = self.run_command("git add -A")?;
        let code = match added {
            Some(0) => self.run_command(&commit)?,
            failed => failed,
        };
        self.record_command(format!("git add -A && {commit}"), code);
        self.dirty.clear();
        Ok(())
    }

    /// Runs `script` in the work directory with the session's environment, as an agent's
    /// shell tool would; its exit status is the agent's business, not the harness's.
    fn shell(&mut self, script: &str) -> Result<()> {
        let code = self.run_command(script)?;
        self.record_command(script.to_string(), code);
        Ok(())
    }

    /// Runs `script` as [`Self::shell`] does, unrecorded; its exit status.
    fn run_command(&self, script: &str) -> Result<Option<i32>> {
        let ran = ShellCommand {
            script,
            cwd: self.work_dir(),
            env: self.ctx.env,
            timeout: SHELL_TIMEOUT,
            isolation: Isolation::ProcessGroup,
        }
        .run()
        .io_context(|| format!("cannot run '{script}'"))?;
        if let Some(log) = std::env::var_os(PID_LOG_VARIABLE) {
            use std::io::Write;
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&log)
                .and_then(|mut file| writeln!(file, "{}", ran.pid))
                .io_context(|| {
                    format!("cannot append to {PID_LOG_VARIABLE} '{}'", log.display())
                })?;
        }
        Ok(ran.code)
    }

    fn record_command(&mut self, cmd: String, exit: Option<i32>) {
        self.trajectory.push(trajectory::Entry::from(Act::Command {
            cmd,
            cwd: None,
            output: None,
            exit: exit.map(i64::from),
        }));
    }

    /// Shift notes written from the list alone, so that equal states give equal notes.
    fn progress_notes(&self) -> String {
        let mut text = String::from("# Progress\n\n");
        match &self.list {
            Some(list) => {
                let done: Vec<&str> = list
                    .iter()
                    .filter(|e| e.passes)
                    .map(|e| e.id.as_str())
                    .collect();
                let next = list.iter().find(|e| !e.passes).map(|e| e.id.as_str());
                text += &format!(
                    "Done: {}\n",
                    if done.is_empty() {
                        "nothing yet".into()
                    } else {
                        done.join(", ")
                    }
                );
                text += &format!(
                    "Next: {}\n",
                    next.unwrap_or("nothing; the project is complete")
                );
            }
            None => text += "Scaffolded the project.\n",
        }
        text
    }
}
