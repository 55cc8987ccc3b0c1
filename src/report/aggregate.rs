//! Counts of every rate metric per arm and per (arm, task), computed with polars from
//! `sessions.csv` and `trials.csv` alone. Which columns are read and how each rate's k
//! and n are counted come from the rate table ([`crate::metrics::Tally`]).

use std::collections::BTreeMap;
use std::path::Path;

use polars::prelude::*;

use super::run_tables::RunTables;
use super::trial_sums::TrialSums;
use crate::error::{Error, Result, ResultsDirError};
use crate::rates::Metric;
use crate::rates::Tally;
use crate::run_dir::RunDir;

/// k events among n units.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    /// Units with the event.
    pub k: u64,
    /// Units counted.
    pub n: u64,
}

impl Count {
    /// `k / n`, or `None` when nothing was counted.
    pub fn rate(self) -> Option<f64> {
        (self.n > 0).then(|| self.k as f64 / self.n as f64)
    }
}

/// The counts of one arm, or of one (arm, task).
#[derive(Debug, Clone, PartialEq)]
pub struct Counts {
    /// k and n of every rate metric, indexed by [`Metric::index`].
    pub rates: [Count; Metric::ALL.len()],
    /// `features_verified` of every trial, in trial-id order.
    pub features_verified: Vec<f64>,
    /// `tokens` of every trial (None: not reported), in trial-id order.
    pub tokens: Vec<Option<f64>>,
    /// `cost_usd` of every trial (None: not reported), in trial-id order.
    pub cost_usd: Vec<Option<f64>>,
    /// Per trial (k, n) of every session-level metric, indexed by [`Metric::index`]
    /// (empty for `premature_victory`): the clusters of the trial-clustered bootstrap.
    /// Trial-id order; every trial with a coding session appears in every metric.
    pub clusters: Vec<Vec<(u64, u64)>>,
    /// The task of each cluster (trial) of [`Counts::clusters`], in the same order: the
    /// bootstrap resamples trials within each (arm, task).
    pub cluster_tasks: Vec<String>,
}

impl Default for Counts {
    /// No trials yet, with an empty cluster list for every metric.
    fn default() -> Counts {
        Counts {
            rates: [Count::default(); Metric::ALL.len()],
            features_verified: Vec::new(),
            tokens: Vec::new(),
            cost_usd: Vec::new(),
            clusters: vec![Vec::new(); Metric::ALL.len()],
            cluster_tasks: Vec::new(),
        }
    }
}

impl Counts {
    /// k and n of `metric`.
    pub fn get(&self, metric: Metric) -> Count {
        self.rates[metric.index()]
    }

    /// Number of trials in `trials.csv`.
    pub fn trials(&self) -> usize {
        self.features_verified.len()
    }
}

/// The counts of a results directory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Aggregate {
    /// Per arm, keyed by arm name.
    pub by_arm: BTreeMap<String, Counts>,
    /// Per (arm, task); no bootstrap clusters are kept at this level.
    pub by_arm_task: BTreeMap<(String, String), Counts>,
    /// Per arm: sessions marked `divergent` (k) among all its sessions (n). Empty when
    /// `sessions.csv` has no `divergent` column (runs written before it existed).
    pub divergent: BTreeMap<String, Count>,
    /// Per arm: sessions whose outcome is `error` (k) among all its sessions (n),
    /// initializers included.
    pub errored: BTreeMap<String, Count>,
}

impl Aggregate {
    /// The arms that have a session or a trial, sorted by name.
    pub fn arms(&self) -> Vec<String> {
        self.by_arm.keys().cloned().collect()
    }

    /// The arms none of whose sessions is usable: every one ended in `error` (the agent
    /// could not be started, say), with their session counts, sorted by name.
    pub fn arms_without_usable_sessions(&self) -> Vec<(String, u64)> {
        self.errored
            .iter()
            .filter(|(_, c)| c.n > 0 && c.k == c.n)
            .map(|(arm, c)| (arm.clone(), c.n))
            .collect()
    }

    /// The counts of `metric` in every task `arm` ran, sorted by task.
    pub fn task_counts<'a>(
        &'a self,
        arm: &'a str,
        metric: Metric,
    ) -> impl Iterator<Item = (&'a str, Count)> + 'a {
        self.by_arm_task
            .iter()
            .filter(move |((a, _), _)| a == arm)
            .map(move |((_, task), c)| (task.as_str(), c.get(metric)))
    }

    /// Frees the bootstrap's per-trial clusters once it has run: the largest per-trial
    /// lists, which nothing after the summary's intervals reads, held otherwise while a
    /// large run's page is written.
    pub fn release_clusters(&mut self) {
        for counts in self.by_arm.values_mut() {
            counts.clusters = vec![Vec::new(); Metric::ALL.len()];
            counts.cluster_tasks = Vec::new();
        }
    }

    /// The tasks that have a session or a trial, sorted by name.
    pub fn tasks(&self) -> Vec<String> {
        let mut tasks: Vec<String> = self.by_arm_task.keys().map(|(_, t)| t.clone()).collect();
        tasks.sort();
        tasks.dedup();
        tasks
    }
}

/// The usage columns of `trials.csv` behind `tokens_per_feature` and `cost_per_feature`.
const USAGE_TOKENS: &str = "tokens";
const USAGE_COST: &str = "cost_usd";

/// Reads `dir/sessions.csv` and `dir/trials.csv` and counts every metric.
///
/// Errors (exit 2) name the directory, file, line or column at fault: see
/// [`RunTables::read`].
pub fn aggregate(run: &RunDir) -> Result<Aggregate> {
    aggregate_tables(RunTables::read(run)?)
}

/// [`aggregate`] of a run's tables: each batch of `sessions.csv` is reduced at once to
/// its per-arm session counts and its per-trial sums, which are added to those of the
/// batches before it (a trial's sessions may be in two), so that the rows are never
/// all held.
fn aggregate_tables(tables: RunTables) -> Result<Aggregate> {
    let sessions_path = tables.sessions.path().to_path_buf();
    let count = cannot_count(&sessions_path);
    let mut sums = TrialSums::default();
    let columns = session_count_names();
    let batches = tables.sessions.reduce(|batch| {
        let divergent = divergent_per_arm(&batch).map_err(&count)?;
        let errored = count_per_arm(&batch, col("outcome").eq(lit("error"))).map_err(&count)?;
        sums.add(&session_counts_per_trial(batch).map_err(&count)?, &columns)
            .map_err(&count)?;
        Ok((divergent, errored))
    })?;
    let mut divergent = BTreeMap::new();
    let mut errored = BTreeMap::new();
    for (batch_divergent, batch_errored) in batches {
        add_per_arm(&mut divergent, batch_divergent);
        add_per_arm(&mut errored, batch_errored);
    }
    let trials = tables.read_trials()?;
    let trial_rows = trial_rows(trials).map_err(cannot_count(&tables.trials_path))?;
    let assembled = assemble(sums, &trial_rows).map_err(&count)?;
    Ok(Aggregate {
        divergent,
        errored,
        ..assembled
    })
}

/// Adds the per-arm counts of one batch to those of the batches before it.
fn add_per_arm(total: &mut BTreeMap<String, Count>, batch: BTreeMap<String, Count>) {
    for (arm, count) in batch {
        let sum = total.entry(arm).or_default();
        sum.k += count.k;
        sum.n += count.n;
    }
}

/// The k and n of every rate metric per arm of one run, as one frame: `arm`, then
/// [`k_name`] and [`n_name`] of every metric in table order (UInt64), one row per arm
/// with a coding session or a trial, sorted by arm. These are the counts of
/// [`Aggregate::by_arm`] without what stays per trial, for pooling many runs.
pub fn arm_sums(tables: RunTables) -> Result<DataFrame> {
    let path = tables.sessions.path().to_path_buf();
    arm_task_sums(tables)?
        .lazy()
        .group_by([col("arm")])
        .agg(count_sums())
        .sort(["arm"], SortMultipleOptions::default())
        .collect()
        .map_err(cannot_count(&path))
}

/// [`arm_sums`] per (arm, task): `arm`, `task`, then the k and n of every metric, one
/// row per (arm, task) with a coding session or a trial, sorted by arm and task: the
/// counts of [`Aggregate::by_arm_task`], for pooling many runs stratified by task.
/// Each batch of `sessions.csv` is summed per (arm, task) at once, and the sums of the
/// batches and the rows of `trials.csv` are summed again.
pub fn arm_task_sums(tables: RunTables) -> Result<DataFrame> {
    let tally = |metric: Metric| indicators(metric.def().tally);
    let count = cannot_count(tables.sessions.path());
    let sessions = tables.sessions.reduce(|batch| {
        batch
            .lazy()
            .filter(col("kind").neq(lit("initializer")))
            .select(metric_columns(true, tally))
            .group_by([col("arm"), col("task")])
            .agg(count_sums())
            .collect()
            .map_err(&count)
    })?;
    let trials = tables
        .read_trials()?
        .lazy()
        .select(metric_columns(false, tally));
    let stacked: Vec<LazyFrame> = sessions
        .into_iter()
        .map(DataFrame::lazy)
        .chain([trials])
        .collect();
    concat(stacked, UnionArgs::default())
        .and_then(|both| {
            both.group_by([col("arm"), col("task")])
                .agg(count_sums())
                .sort(["arm", "task"], SortMultipleOptions::default())
                .collect()
        })
        .map_err(&count)
}

/// `arm` and `task`, then the k and n of every metric in table order (UInt64): those of
/// the session-level metrics (or, with `session_level` false, the trial-level ones)
/// from `counts`, zeros for the others. Frames of both tables selected so stack into
/// one that a single group-by sums.
fn metric_columns(session_level: bool, counts: impl Fn(Metric) -> (Expr, Expr)) -> Vec<Expr> {
    let mut select = vec![col("arm"), col("task")];
    for metric in Metric::ALL {
        let (k, n) = if metric.is_session_level() == session_level {
            counts(metric)
        } else {
            (lit(0u64), lit(0u64))
        };
        select.push(k.cast(DataType::UInt64).alias(k_name(metric)));
        select.push(n.cast(DataType::UInt64).alias(n_name(metric)));
    }
    select
}

/// The sums of every metric's k and n column, named as the columns (UInt64).
pub fn count_sums() -> Vec<Expr> {
    Metric::ALL
        .into_iter()
        .flat_map(|m| [k_name(m), n_name(m)])
        .map(|name| col(name.as_str()).sum().cast(DataType::UInt64))
        .collect()
}

/// The counts of `metric` in row `row` of a frame with [`k_name`] and [`n_name`]
/// columns (UInt64), such as [`arm_sums`] gives.
pub fn count_at(frame: &DataFrame, metric: Metric, row: usize) -> Count {
    let at = |name: String| {
        frame
            .column(&name)
            .ok()
            .and_then(|c| c.u64().ok().and_then(|s| s.get(row)))
            .unwrap_or(0)
    };
    Count {
        k: at(k_name(metric)),
        n: at(n_name(metric)),
    }
}

/// The counts of every metric in row `row`, indexed by [`Metric::index`].
pub fn rates_at(frame: &DataFrame, row: usize) -> [Count; Metric::ALL.len()] {
    Metric::ALL.map(|metric| count_at(frame, metric, row))
}

/// The error of a polars failure while counting the frames read from `path`.
fn cannot_count(path: &Path) -> impl Fn(PolarsError) -> Error {
    let path = path.to_path_buf();
    move |e| {
        ResultsDirError::CannotSummarize {
            path: path.clone(),
            reason: e.to_string(),
        }
        .into()
    }
}

/// The 0/1 indicators of k and n of a session-level tally, as polars expressions.
/// Kleene logic: false & null = false, true & null = null (and a null is not summed).
fn indicators(tally: Tally) -> (Expr, Expr) {
    match tally {
        Tally::Above { column, threshold } => {
            (col(column).gt(lit(threshold)), col(column).is_not_null())
        }
        Tally::AllTrue(columns) => {
            let all = columns
                .iter()
                .map(|c| col(*c))
                .reduce(|a, b| a.and(b))
                .unwrap_or_else(|| lit(true));
            (all, lit(true))
        }
        Tally::TrueGiven { given, column } => (
            col(given).and(col(column)),
            col(given).and(col(column).is_not_null()),
        ),
        Tally::True(column) => (col(column), col(column).is_not_null()),
        Tally::False(column) => (col(column).not(), col(column).is_not_null()),
    }
}

/// Per arm, sessions with `divergent` true among all sessions; empty without the column.
fn divergent_per_arm(sessions: &DataFrame) -> PolarsResult<BTreeMap<String, Count>> {
    if sessions.column("divergent").is_err() {
        return Ok(BTreeMap::new());
    }
    count_per_arm(sessions, col("divergent"))
}

/// Per arm, sessions for which `event` (a boolean expression) holds among all sessions.
fn count_per_arm(sessions: &DataFrame, event: Expr) -> PolarsResult<BTreeMap<String, Count>> {
    let per_arm = sessions
        .clone()
        .lazy()
        .group_by([col("arm")])
        .agg([
            event
                .cast(DataType::UInt32)
                .sum()
                .cast(DataType::UInt64)
                .alias("k"),
            len().cast(DataType::UInt64).alias("n"),
        ])
        .collect()?;
    let arms = strings(&per_arm, "arm");
    let (k, n) = (u64s(&per_arm, "k"), u64s(&per_arm, "n"));
    Ok(arms
        .into_iter()
        .zip(k.into_iter().zip(n))
        .map(|(arm, (k, n))| (arm, Count { k, n }))
        .collect())
}

/// The column of the k of `metric` in frames of counts.
pub fn k_name(metric: Metric) -> String {
    format!("{}_k", metric.name())
}

/// The column of the n of `metric` in frames of counts.
pub fn n_name(metric: Metric) -> String {
    format!("{}_n", metric.name())
}

/// The names of the k and n columns of the session-level metrics, in table order.
fn session_count_names() -> Vec<String> {
    Metric::ALL
        .into_iter()
        .filter(|m| m.is_session_level())
        .flat_map(|m| [k_name(m), n_name(m)])
        .collect()
}

/// One row per trial with at least one coding session among `sessions` (or a batch of
/// them): arm, task, trial_id and the k and n of every session-level metric, in no
/// particular order.
fn session_counts_per_trial(sessions: DataFrame) -> PolarsResult<DataFrame> {
    // One 0/1 column per k and per n first, so that the group-by only sums columns
    // (polars' fast path); expressions evaluated per group are far slower with many
    // trials. A null indicator (field null) is skipped by the sum.
    let mut keep = vec![col("arm"), col("task"), col("trial_id")];
    for metric in Metric::ALL.into_iter().filter(|m| m.is_session_level()) {
        let (k, n) = self::indicators(metric.def().tally);
        keep.push(k.cast(DataType::UInt32).alias(k_name(metric)));
        keep.push(n.cast(DataType::UInt32).alias(n_name(metric)));
    }
    sums_per_trial(
        sessions
            .lazy()
            .filter(col("kind").neq(lit("initializer")))
            .select(keep),
    )
    .collect()
}

/// The session-level k and n columns of `rows` summed per trial_id (UInt64), with the
/// arm and task of each trial's first row. Rows of one trial from several batches,
/// each already summed, sum to what the trial's rows would.
fn sums_per_trial(rows: LazyFrame) -> LazyFrame {
    // A trial id names one (arm, task, replicate), so one key is enough to group by;
    // hashing one string instead of three is most of the group-by's time.
    let mut aggs = vec![col("arm").first(), col("task").first()];
    aggs.extend(
        session_count_names()
            .iter()
            .map(|name| col(name.as_str()).sum().cast(DataType::UInt64)),
    );
    rows.group_by([col("trial_id")]).agg(aggs)
}

/// One row per trial: arm, task, trial_id, features_verified and the k and n of every
/// trial-level metric, sorted by (arm, task, trial_id).
fn trial_rows(trials: DataFrame) -> PolarsResult<DataFrame> {
    let mut select = vec![
        col("arm"),
        col("task"),
        col("trial_id"),
        col(crate::rates::FEATURES_VERIFIED).cast(DataType::Float64),
    ];
    // Usage columns are optional; without one, every trial's usage is unknown.
    for usage in [USAGE_TOKENS, USAGE_COST] {
        select.push(if trials.column(usage).is_ok() {
            col(usage).cast(DataType::Float64)
        } else {
            lit(NULL).cast(DataType::Float64).alias(usage)
        });
    }
    for metric in Metric::ALL.into_iter().filter(|m| !m.is_session_level()) {
        let (k, n) = indicators(metric.def().tally);
        select.push(k.cast(DataType::UInt64).alias(k_name(metric)));
        select.push(n.cast(DataType::UInt64).alias(n_name(metric)));
    }
    trials
        .lazy()
        .select(select)
        .sort(["arm", "task", "trial_id"], SortMultipleOptions::default())
        .collect()
}

fn strings(df: &DataFrame, name: &str) -> Vec<String> {
    df.column(name)
        .and_then(|c| {
            c.str()
                .map(|s| s.iter().map(|v| v.unwrap_or("").to_string()).collect())
        })
        .unwrap_or_default()
}

fn u64s(df: &DataFrame, name: &str) -> Vec<u64> {
    df.column(name)
        .and_then(|c| c.u64().map(|s| s.iter().map(|v| v.unwrap_or(0)).collect()))
        .unwrap_or_default()
}

/// The counts per arm and per (arm, task): the trial-level ones summed by polars from
/// the rows of `trials.csv`, the session-level ones from the per-trial sums; what stays
/// per trial (the bootstrap's clusters, `features_verified` and usage) is gathered in
/// trial-id order.
fn assemble(mut sums: TrialSums, trials: &DataFrame) -> PolarsResult<Aggregate> {
    let own = |metric: Metric| (col(k_name(metric)), col(n_name(metric)));
    let trial_level = trials.clone().lazy().select(metric_columns(false, own));
    let mut out = Aggregate::default();
    let by_arm = trial_level
        .clone()
        .group_by([col("arm")])
        .agg(count_sums())
        .collect()?;
    for (row, arm) in strings(&by_arm, "arm").into_iter().enumerate() {
        out.by_arm.entry(arm).or_default().rates = rates_at(&by_arm, row);
    }
    let by_task = trial_level
        .group_by([col("arm"), col("task")])
        .agg(count_sums())
        .collect()?;
    let tasks = strings(&by_task, "task");
    for (row, arm) in strings(&by_task, "arm").into_iter().enumerate() {
        out.by_arm_task
            .entry((arm, tasks[row].clone()))
            .or_default()
            .rates = rates_at(&by_task, row);
    }

    // The session-level counts, and the clusters in (arm, task, trial id) order. Each
    // list is sized once: grown a trial at a time it would hold up to twice what it
    // needs. What a run's report holds grows with its trials by these lists alone.
    // Each arm's counts are taken out of `sums` as they are moved, so that they are
    // never held twice.
    let metrics = sums.metrics().to_vec();
    let arms: Vec<String> = sums.arms().map(str::to_string).collect();
    for arm in &arms {
        let by_arm = out.by_arm.entry(arm.clone()).or_default();
        let trials = sums.trials_of(arm);
        for metric in &metrics {
            by_arm.clusters[metric.index()].reserve_exact(trials);
        }
        by_arm.cluster_tasks.reserve_exact(trials);
        for (task, trials) in sums.take_arm(arm) {
            let task = task.as_str();
            let mut cell = [Count::default(); Metric::ALL.len()];
            for counts in trials.into_values() {
                for (at, metric) in metrics.iter().enumerate() {
                    let (k, n) = (u64::from(counts[2 * at]), u64::from(counts[2 * at + 1]));
                    by_arm.clusters[metric.index()].push((k, n));
                    let sum = &mut cell[metric.index()];
                    sum.k += k;
                    sum.n += n;
                }
                by_arm.cluster_tasks.push(task.to_string());
            }
            for metric in &metrics {
                by_arm.rates[metric.index()].k += cell[metric.index()].k;
                by_arm.rates[metric.index()].n += cell[metric.index()].n;
            }
            let key = (arm.to_string(), task.to_string());
            let by_task = out.by_arm_task.entry(key).or_default();
            for metric in &metrics {
                by_task.rates[metric.index()] = cell[metric.index()];
            }
        }
    }

    let arms = trials.column("arm")?.str()?;
    let tasks = trials.column("task")?.str()?;
    let features = trials.column("features_verified")?.f64()?;
    // Usage columns may be missing: then every trial's usage is unknown.
    let usage = |column: &str| -> Box<dyn Iterator<Item = Option<f64>> + '_> {
        match trials.column(column).and_then(|c| c.f64()) {
            Ok(values) => Box::new(values.iter()),
            Err(_) => Box::new(std::iter::repeat(None)),
        }
    };
    let reserve = |counts: &mut Counts, trials: usize| {
        counts.features_verified.reserve_exact(trials);
        counts.tokens.reserve_exact(trials);
        counts.cost_usd.reserve_exact(trials);
    };
    for (arm, trials) in counted(arms.iter().map(name)) {
        reserve(out.by_arm.entry(arm.to_string()).or_default(), trials);
    }
    for ((arm, task), trials) in counted(arms.iter().map(name).zip(tasks.iter().map(name))) {
        let key = (arm.to_string(), task.to_string());
        reserve(out.by_arm_task.entry(key).or_default(), trials);
    }
    let rows = arms.iter().map(name).zip(tasks.iter().map(name));
    let values = features
        .iter()
        .zip(usage(USAGE_TOKENS).zip(usage(USAGE_COST)));
    for ((arm, task), (feature, (tokens, cost))) in rows.zip(values) {
        let key = (arm.to_string(), task.to_string());
        for counts in [out.by_arm.get_mut(arm), out.by_arm_task.get_mut(&key)]
            .into_iter()
            .flatten()
        {
            if let Some(v) = feature {
                counts.features_verified.push(v);
            }
            counts.tokens.push(tokens);
            counts.cost_usd.push(cost);
        }
    }
    Ok(out)
}

/// A text cell, empty when null.
fn name(cell: Option<&str>) -> &str {
    cell.unwrap_or("")
}

/// How many times each value appears among `values`.
fn counted<T: Ord>(values: impl Iterator<Item = T>) -> BTreeMap<T, usize> {
    let mut out = BTreeMap::new();
    for value in values {
        *out.entry(value).or_insert(0) += 1;
    }
    out
}

#[cfg(test)]
#[path = "aggregate_tests.rs"]
mod tests;
