//! One arm against another stratified by task: the per-task counts both sides share and
//! the stratified statistics over them, used alike by `summary.*` (an arm against the
//! baseline), `compare` (the new run against the base run) and `weekly` (a week against
//! the arm's previous one).

use std::collections::BTreeMap;

use super::aggregate::Count;
use crate::stats::{self, Alternative, Stratified, Stratum};

/// A comparison is stratified when it spans at least this many tasks.
pub const MIN_TASKS: usize = 2;

/// `p_homogeneity` below this names a metric whose effect differs by task.
pub const HOMOGENEITY_ALPHA: f64 = 0.05;

/// One task's counts on both sides of a comparison: `arm` is the side being judged (the
/// non-baseline arm, the new run, the later week), `base` the side it is judged against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskCounts {
    /// The task.
    pub task: String,
    /// Counts of the side being judged (n = 0 when it did not run the task).
    pub arm: Count,
    /// Counts of the side it is judged against (n = 0 when it did not run the task).
    pub base: Count,
}

impl TaskCounts {
    /// rate(arm) − rate(base) in this task; None when either side has n = 0.
    pub fn diff(&self) -> Option<f64> {
        Some(self.arm.rate()? - self.base.rate()?)
    }

    /// The one-sided Fisher exact p of this task's table, H1 as `alternative` says of
    /// the judged side's rate; None when either side has n = 0.
    pub fn fisher_p(&self, alternative: Alternative) -> Option<f64> {
        let (a, b) = (self.arm, self.base);
        if a.n == 0 || b.n == 0 {
            return None;
        }
        stats::fisher_exact([[a.k, a.n - a.k], [b.k, b.n - b.k]], alternative).ok()
    }
}

/// The per-task counts of two sides, one row per task either side ran, sorted by task.
/// `arm` and `base` map a task to that side's counts of one metric.
pub fn pair_tasks<'a>(
    arm: impl IntoIterator<Item = (&'a str, Count)>,
    base: impl IntoIterator<Item = (&'a str, Count)>,
) -> Vec<TaskCounts> {
    let mut by_task: BTreeMap<&str, TaskCounts> = BTreeMap::new();
    let blank = |task: &str| TaskCounts {
        task: task.to_string(),
        arm: Count::default(),
        base: Count::default(),
    };
    for (task, c) in arm {
        add(
            &mut by_task.entry(task).or_insert_with(|| blank(task)).arm,
            c,
        );
    }
    for (task, c) in base {
        add(
            &mut by_task.entry(task).or_insert_with(|| blank(task)).base,
            c,
        );
    }
    by_task.into_values().collect()
}

fn add(into: &mut Count, c: Count) {
    into.k += c.k;
    into.n += c.n;
}

/// The stratified statistics of per-task counts (see [`crate::stats::stratified`]); None
/// when a count breaks the table's invariant (k > n cannot come from the run tables).
pub fn stratified_of(tasks: &[TaskCounts], confidence: f64) -> Option<Stratified> {
    let strata: Option<Vec<Stratum>> = tasks
        .iter()
        .map(|t| Stratum::new(t.arm.k, t.arm.n, t.base.k, t.base.n).ok())
        .collect();
    stats::stratified(&strata?, confidence).ok()
}

/// The one-sided CMH p (H1 as `alternative` says of the judged side's rate) of per-task
/// counts: Φ̄(z) from the hypergeometric moments of each task's table, or the exact
/// conditional tail when events are too sparse for that (see [`crate::stats::cmh`]);
/// None when every task with units on both sides has a zero margin.
pub fn cmh_one_sided(tasks: &[TaskCounts], alternative: Alternative) -> Option<f64> {
    let strata: Option<Vec<Stratum>> = tasks
        .iter()
        .map(|t| Stratum::new(t.arm.k, t.arm.n, t.base.k, t.base.n).ok())
        .collect();
    stats::cmh(&strata?).map(|c| c.p_value(alternative))
}
