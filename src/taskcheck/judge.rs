//! Turns the answers of a task's trees into its report: each control's cell per
//! feature and each problem with its reason and what to fix.

use std::collections::BTreeSet;

use super::order::dependency_order;
use super::plan::{TreeJob, TreeKind, gold_root, has_gold};
use super::report::{CellState, FeatureRow, Problem, TaskReport};
use super::tests_control::tests_problems;
use crate::error::Result;
use crate::observe::{Check, Verdict};
use crate::suite::Task;

/// One tree's answers: the verdict of each of its checks, in the job's order.
pub(super) type Answers = Vec<Verdict>;

/// How a failing verdict ran out: its exit status, or why exit 0 was not a pass.
fn exit_words(v: &Verdict) -> String {
    match &v.failure {
        _ if v.timeouts > 0 => "stopped at verify_timeout".into(),
        Some(f) => match (&f.reason, f.exit) {
            (Some(why), _) => why.clone(),
            (None, Some(code)) => format!("exit {code}"),
            (None, None) => "killed by a signal".into(),
        },
        None => "failed".into(),
    }
}

/// The judge's state for one task.
struct Judge<'t> {
    task: &'t Task,
    rows: Vec<FeatureRow>,
    problems: Vec<Problem>,
    notes: Vec<String>,
}

impl Judge<'_> {
    fn id(&self, f: usize) -> &str {
        &self.task.features[f].id
    }

    fn problem(
        &mut self,
        control: &'static str,
        f: usize,
        reason: String,
        fix: &str,
        v: Option<&Verdict>,
    ) {
        self.problems.push(Problem {
            control,
            feature: Some(self.id(f).to_string()),
            file: None,
            reason,
            fix: fix.to_string(),
            output: v.and_then(|v| v.failure.as_ref()).map(|x| x.output.clone()),
        });
    }

    /// Records the time and flakiness of one answer of feature `f` on the tree `what`.
    fn seen(&mut self, f: usize, v: &Verdict, what: &str) {
        let ms = u64::try_from(v.slowest.as_millis()).unwrap_or(u64::MAX);
        self.rows[f].max_ms = self.rows[f].max_ms.max(ms);
        let limit = self.task.verify_timeout;
        let id = self.id(f).to_string();
        let already = |control: &str, problems: &[Problem]| {
            problems
                .iter()
                .any(|p| p.control == control && p.feature.as_deref() == Some(id.as_str()))
        };
        if v.timeouts > 0 && !already("time", &self.problems) {
            self.problem(
                "time",
                f,
                format!(
                    "reached verify_timeout = {} on {what}",
                    humantime::format_duration(limit)
                ),
                "make the check faster, or raise verify_timeout in task.toml",
                None,
            );
        } else if v.timeouts == 0
            && v.slowest > limit / 2
            && !self
                .notes
                .iter()
                .any(|n| n.starts_with(&format!("{id} took ")))
        {
            self.notes.push(format!(
                "{id} took {} ms on {what}, more than half of verify_timeout = {}: a busier machine may time it out",
                v.slowest.as_millis(),
                humantime::format_duration(limit)
            ));
        }
        if v.check == Check::Flaky && self.rows[f].repeat != CellState::Fail {
            self.rows[f].repeat = CellState::Fail;
            self.problem(
                "repeat",
                f,
                format!("gave different answers on the same tree ({what})"),
                "make the check deterministic: no clock, network, random order or state shared between runs",
                Some(v),
            );
        }
    }
}

/// The report of `task` from the answers of its trees.
pub fn judge_task(task: &Task, trees: &[(&TreeJob, Answers)], repeats: u32) -> Result<TaskReport> {
    let (mut judge, skipped) = Judge::new(task, repeats);
    let order = dependency_order(task);
    // Features passing after the previous oracle step.
    let mut passing: BTreeSet<usize> = BTreeSet::new();
    for (job, answers) in trees {
        match job.kind {
            TreeKind::Nop => judge.nop_tree(job, answers),
            TreeKind::Oracle(step) => {
                passing = judge.oracle_tree(job, answers, &order, step, &passing);
            }
            TreeKind::Alone(f) => judge.alone_tree(answers, &order, f),
        }
    }
    judge.problems.extend(tests_problems(task)?);
    let ok = judge.problems.is_empty();
    Ok(TaskReport {
        task: task.name.clone(),
        ok,
        skipped,
        problems: judge.problems,
        features: judge.rows,
        notes: judge.notes,
        dir: task.dir.display().to_string(),
    })
}

impl<'t> Judge<'t> {
    /// A judge whose rows start as passing for every control that runs, and the
    /// controls that do not run (no gold; one repeat), each with a note that says why.
    fn new(task: &'t Task, repeats: u32) -> (Self, Vec<&'static str>) {
        let gold = gold_root(task).is_some() || crate::suite::has_container_gold(task);
        let cell = |runs: bool| {
            if runs {
                CellState::Ok
            } else {
                CellState::Skipped
            }
        };
        let mut judge = Judge {
            task,
            rows: task
                .features
                .iter()
                .map(|f| FeatureRow {
                    id: f.id.clone(),
                    nop: CellState::Ok,
                    oracle: cell(gold),
                    alone: cell(gold),
                    repeat: cell(repeats > 1),
                    max_ms: 0,
                })
                .collect(),
            problems: Vec::new(),
            notes: Vec::new(),
        };
        let mut skipped = Vec::new();
        if !gold {
            skipped.extend(["oracle", "alone"]);
            judge.notes.push(
                "oracle and alone skipped: the task has no oracle/gold (and the sim agent cannot run it)"
                    .into(),
            );
        }
        if repeats <= 1 {
            skipped.push("repeat");
            judge
                .notes
                .push("repeat skipped: every check ran once (--repeats 1)".into());
        }
        (judge, skipped)
    }
}

impl Judge<'_> {
    /// The ids of the features `list`, comma-separated.
    fn ids(&self, list: &[usize]) -> String {
        list.iter()
            .map(|&f| self.task.features[f].id.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// The nop control: on repo/ as it is, every check must fail.
    fn nop_tree(&mut self, job: &TreeJob, answers: &Answers) {
        for (&f, v) in job.checks.iter().zip(answers) {
            self.seen(f, v, "repo/ as it is");
            if v.check != Check::Fail {
                self.rows[f].nop = CellState::Fail;
            }
            if v.check == Check::Pass {
                self.problem(
                    "nop",
                    f,
                    "passes before any work (exit 0)".into(),
                    "premature_done can never count it; make its test fail on repo/",
                    None,
                );
            }
        }
    }

    /// The oracle control at `step` of the gold order: the step's feature has gold and
    /// passes over it, and breaks no feature that `passing` before. Returns the features
    /// passing after this step.
    fn oracle_tree(
        &mut self,
        job: &TreeJob,
        answers: &Answers,
        order: &[usize],
        step: usize,
        passing: &BTreeSet<usize>,
    ) -> BTreeSet<usize> {
        let f = order[step];
        let what = format!("the gold of {}", self.ids(&order[..=step]));
        let mut now = BTreeSet::new();
        for (&g, v) in job.checks.iter().zip(answers) {
            self.seen(g, v, &what);
            if v.check == Check::Pass {
                now.insert(g);
            }
        }
        let own = job.checks.iter().zip(answers).find(|(g, _)| **g == f);
        if !has_gold(self.task, f) {
            self.rows[f].oracle = CellState::Fail;
            self.rows[f].alone = CellState::Skipped;
            let id = self.id(f).to_string();
            self.problem(
                "oracle",
                f,
                format!("has no gold: oracle/gold/{id} does not exist"),
                "put the files that implement it under oracle/gold/<ID>/ (paths as in repo/)",
                None,
            );
        } else if let Some((_, v)) = own.filter(|(_, v)| v.check != Check::Pass) {
            self.rows[f].oracle = CellState::Fail;
            if v.check == Check::Fail {
                let reason = format!("fails after its gold over {what} ({})", exit_words(v));
                self.problem(
                    "oracle",
                    f,
                    reason,
                    "the gold must make the check pass: fix the gold, or a check that fails on a correct implementation",
                    Some(v),
                );
            }
        }
        self.gold_breaks(job, answers, f, passing);
        now
    }

    /// Fails the oracle of `f` for each feature of `passing` (those that passed before
    /// it) that its gold breaks.
    fn gold_breaks(
        &mut self,
        job: &TreeJob,
        answers: &Answers,
        f: usize,
        passing: &BTreeSet<usize>,
    ) {
        for (&g, v) in job.checks.iter().zip(answers) {
            if g != f && passing.contains(&g) && v.check == Check::Fail {
                self.rows[f].oracle = CellState::Fail;
                let reason = format!(
                    "its gold breaks {}, which passed before ({})",
                    self.task.features[g].id,
                    exit_words(v)
                );
                self.problem(
                    "oracle",
                    f,
                    reason,
                    "gold files must compose: keep each feature's change in its own files, so that applying one breaks no other",
                    Some(v),
                );
            }
        }
    }

    /// The alone control: feature `f` passes with only its gold and that of what it
    /// declares it needs.
    fn alone_tree(&mut self, answers: &Answers, order: &[usize], f: usize) {
        let needs = super::order::closure(self.task, order, f);
        let what = if needs.is_empty() {
            "its gold".to_string()
        } else {
            format!("its gold with that of {}", self.ids(&needs))
        };
        let Some(v) = answers.first() else { return };
        self.seen(f, v, &what);
        if v.check != Check::Pass {
            self.rows[f].alone = CellState::Fail;
        }
        if v.check == Check::Fail {
            let reason = format!(
                "fails with only {what} applied ({}): it needs something it does not declare",
                exit_words(v)
            );
            self.problem(
                "alone",
                f,
                reason,
                "add what it needs to its depends_on, or move what it needs into its own gold",
                Some(v),
            );
        }
    }
}
