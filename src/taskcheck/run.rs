//! Runs the trees of a check plan on a bounded pool of threads and hands the answers
//! to the judge. Never prints: progress goes through a callback.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::judge::{Answers, judge_task};
use super::plan::{CheckPlan, TreeJob, build_tree, tree_jobs};
use super::report::Report;
use crate::error::{Error, Result};
use crate::feature_list::ListFormat;
use crate::observe::Observer;
use crate::sandbox::{Hidden, Limits, SandboxKind};

/// Runs every control of every task of `plan` on `jobs` threads. `planned` is told the
/// number of verify commands to run (each `repeats` times), `done` after each tree
/// with the checks it ran.
pub fn check_tasks(
    plan: &CheckPlan,
    jobs: usize,
    planned: &dyn Fn(u64),
    done: &(dyn Fn(u64) + Sync),
) -> Result<Report> {
    // What a run's sandbox hides: every task's oracle/ (its tests come in only through
    // the overlay) and the scratch where the trees are built.
    let hidden = Hidden::for_run(
        &crate::fsutil::scratch_root(),
        plan.tasks.iter().map(|t| t.dir.as_path()),
    )
    .with_limits(Limits::default());
    let mut golds = Vec::new();
    let observers =
        plan.tasks
            .iter()
            .map(|task| {
                let observer = Observer::new(task, ListFormat::Json, None, plan.repeats)?;
                let kind = plan.sandbox_of(task)?;
                let container = match (&task.environment, kind) {
                    (Some(env), SandboxKind::Container) => Some(std::sync::Arc::new(
                        env.container(&task.name, plan.engine, &Limits::default())?,
                    )),
                    _ => None,
                };
                golds.push(match &container {
                    Some(c) if crate::suite::has_container_gold(task) => {
                        Some(crate::suite::container_gold(task, c)?)
                    }
                    _ => None,
                });
                Ok(match container {
                    Some(c) => observer.in_container(c),
                    None if kind.confines() => observer.sandboxed(hidden.clone()),
                    None => observer,
                })
            })
            .collect::<Result<Vec<_>>>()?;
    let all: Vec<TreeJob> = plan
        .tasks
        .iter()
        .enumerate()
        .flat_map(|(t, task)| tree_jobs(t, task))
        .collect();
    planned(all.iter().map(|j| j.checks.len() as u64).sum());
    let answers: Vec<Mutex<Option<Result<Answers>>>> =
        all.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let failed = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, all.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= all.len() || failed.load(Ordering::Relaxed) {
                        break;
                    }
                    let job = &all[i];
                    let result = run_job(
                        &plan.tasks[job.task],
                        &observers[job.task],
                        job,
                        golds[job.task].as_deref(),
                    );
                    failed.fetch_or(result.is_err(), Ordering::Relaxed);
                    done(job.checks.len() as u64);
                    if let Ok(mut slot) = answers[i].lock() {
                        *slot = Some(result);
                    }
                }
            });
        }
    });
    let mut by_task: Vec<Vec<(&TreeJob, Answers)>> =
        plan.tasks.iter().map(|_| Vec::new()).collect();
    for (job, slot) in all.iter().zip(answers) {
        let answer = slot
            .into_inner()
            .map_err(|_| Error::Tool("a check-task worker stopped before its answer".into()))?;
        match answer {
            Some(Ok(verdicts)) => by_task[job.task].push((job, verdicts)),
            Some(Err(e)) => return Err(e),
            // Not run because another tree failed first; that error is returned.
            None => {}
        }
    }
    Ok(Report {
        tasks: plan
            .tasks
            .iter()
            .zip(&by_task)
            .map(|(task, trees)| judge_task(task, trees, plan.repeats))
            .collect::<Result<_>>()?,
    })
}

/// Builds the tree of `job` in a scratch directory and runs its checks.
fn run_job(
    task: &crate::suite::Task,
    observer: &Observer<'_>,
    job: &TreeJob,
    gold: Option<&crate::suite::ContainerGold>,
) -> Result<Answers> {
    let scratch = crate::fsutil::scratch_dir("loopbench-check-task-")?;
    let tree = scratch.path().join("tree");
    build_tree(task, job, &tree, gold)?;
    let features: Vec<&crate::suite::Feature> =
        job.checks.iter().map(|&f| &task.features[f]).collect();
    observer.verify_truth(&tree, &features)
}
