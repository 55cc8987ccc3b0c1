//! Counts of every rate metric per arm and per (arm, task), computed with polars from
//! `sessions.csv` and `trials.csv` alone. Which columns are read and how each rate's k
//! and n are counted come from the rate table ([`crate::metrics::Tally`]).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use polars::prelude::*;

use super::csv_input::{Cell, Input};
use super::metric::Metric;
use crate::error::{Error, Result};
use crate::metrics::{Tally, Unit};
use crate::rates::ADDED_COLUMNS;
use crate::store::{SESSIONS_CSV, TRIALS_CSV};

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

    fn add(&mut self, other: Count) {
        self.k += other.k;
        self.n += other.n;
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

    /// The tasks that have a session or a trial, sorted by name.
    pub fn tasks(&self) -> Vec<String> {
        let mut tasks: Vec<String> = self.by_arm_task.keys().map(|(_, t)| t.clone()).collect();
        tasks.sort();
        tasks.dedup();
        tasks
    }
}

/// The columns of the table of `unit` that the rates read, each once, with whether it is
/// boolean (else an integer), in table order.
fn tally_columns(unit: Unit) -> Vec<(&'static str, bool)> {
    let mut out: Vec<(&'static str, bool)> = Vec::new();
    for m in Metric::ALL.into_iter().filter(|m| m.def().unit == unit) {
        for column in m.def().tally.columns() {
            if !out.iter().any(|(c, _)| *c == column.0) {
                out.push(column);
            }
        }
    }
    out
}

/// The usage columns of `trials.csv` behind `tokens_per_feature` and `cost_per_feature`.
const USAGE_TOKENS: &str = "tokens";
const USAGE_COST: &str = "cost_usd";

/// Id columns every file must have.
const SESSION_ID_COLUMNS: [&str; 7] = [
    "trial_id",
    "arm",
    "task",
    "replicate",
    "session",
    "kind",
    "outcome",
];
const TRIAL_ID_COLUMNS: [&str; 4] = ["trial_id", "arm", "task", "replicate"];

/// Columns of `sessions.csv` the report needs; any other column is optional.
pub fn required_session_columns() -> Vec<&'static str> {
    SESSION_ID_COLUMNS
        .into_iter()
        .chain(tally_columns(Unit::Session).into_iter().map(|(c, _)| c))
        .filter(|c| !ADDED_COLUMNS.contains(c))
        .collect()
}

/// Columns of `trials.csv` the report needs; any other column is optional.
pub fn required_trial_columns() -> Vec<&'static str> {
    TRIAL_ID_COLUMNS
        .into_iter()
        .chain([super::metric::FEATURES_VERIFIED])
        .chain(tally_columns(Unit::Trial).into_iter().map(|(c, _)| c))
        .filter(|c| !ADDED_COLUMNS.contains(c))
        .collect()
}

/// Reads `dir/sessions.csv` and `dir/trials.csv` and counts every metric.
///
/// Errors ([`Error::BadInput`], exit 2) name the directory, file or column at fault:
/// a missing directory or file, a missing required column, a cell that does not parse.
pub fn aggregate(dir: &Path) -> Result<Aggregate> {
    if !dir.is_dir() {
        return Err(Error::BadInput(format!(
            "run directory '{}' does not exist",
            dir.display()
        )));
    }
    let sessions_path = dir.join(SESSIONS_CSV);
    let trials_path = dir.join(TRIALS_CSV);
    let sessions = read_csv(
        &sessions_path,
        &session_schema(),
        &[("divergent", DataType::Boolean)],
    )?;
    let trials = read_csv(
        &trials_path,
        &trial_schema(),
        &[("tokens", DataType::Int64), ("cost_usd", DataType::Float64)],
    )?;
    let bad = |path: &Path| {
        let path = path.display().to_string();
        move |e: PolarsError| Error::BadInput(format!("cannot summarize '{path}': {e}"))
    };
    let divergent = divergent_per_arm(&sessions).map_err(bad(&sessions_path))?;
    let errored =
        count_per_arm(&sessions, col("outcome").eq(lit("error"))).map_err(bad(&sessions_path))?;
    let per_trial = session_counts_per_trial(sessions).map_err(bad(&sessions_path))?;
    let trial_rows = trial_rows(trials).map_err(bad(&trials_path))?;
    let assembled = assemble(&per_trial, &trial_rows).map_err(bad(&sessions_path))?;
    Ok(Aggregate {
        divergent,
        errored,
        ..assembled
    })
}

fn session_schema() -> Vec<(&'static str, DataType)> {
    let mut schema: Vec<(&str, DataType)> = ["trial_id", "arm", "task", "kind", "outcome"]
        .into_iter()
        .map(|c| (c, DataType::String))
        .collect();
    // Not counted, but checked: every row names its trial's replicate and its session.
    schema.extend([("replicate", DataType::Int64), ("session", DataType::Int64)]);
    schema.extend(tally_columns(Unit::Session).into_iter().map(column_type));
    schema
}

fn trial_schema() -> Vec<(&'static str, DataType)> {
    let mut schema = vec![
        ("trial_id", DataType::String),
        ("arm", DataType::String),
        ("task", DataType::String),
        ("replicate", DataType::Int64),
        (super::metric::FEATURES_VERIFIED, DataType::Int64),
    ];
    schema.extend(tally_columns(Unit::Trial).into_iter().map(column_type));
    schema
}

fn column_type((name, boolean): (&'static str, bool)) -> (&'static str, DataType) {
    (
        name,
        if boolean {
            DataType::Boolean
        } else {
            DataType::Int64
        },
    )
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

/// Reads the columns of `schema`, and those of `optional` that the file has, from a
/// CSV file with those types, after checking that the file has every required column.
/// Types are set, not inferred, so that an all-empty column is a column of nulls rather
/// than of strings.
fn read_csv(
    path: &Path,
    schema: &[(&'static str, DataType)],
    optional: &[(&'static str, DataType)],
) -> Result<DataFrame> {
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let required = if file_name == SESSIONS_CSV {
        required_session_columns()
    } else {
        required_trial_columns()
    };
    let headers = check_header(path, &required)?;
    let checked = checked_columns(schema.iter().chain(optional));
    let key: &[&str] = if file_name == SESSIONS_CSV {
        &["trial_id", "session"]
    } else {
        &["trial_id"]
    };
    let input = Input::new(path, &headers, checked, key);
    let has = |name: &str| headers.iter().any(|h| h == name);
    // Columns of older records that this file lacks: added afterwards as nulls.
    let absent: Vec<(&str, DataType)> = schema
        .iter()
        .filter(|(name, _)| ADDED_COLUMNS.contains(name) && !has(name))
        .cloned()
        .collect();
    let schema: Vec<(&str, DataType)> = schema
        .iter()
        .filter(|(name, _)| !absent.iter().any(|(a, _)| a == name))
        .chain(
            optional
                .iter()
                .filter(|(name, _)| headers.iter().any(|h| h == name)),
        )
        .cloned()
        .collect();
    let overwrite: Schema = schema
        .iter()
        .map(|(name, dtype)| Field::new((*name).into(), dtype.clone()))
        .collect();
    let columns: Arc<[PlSmallStr]> = schema.iter().map(|(name, _)| (*name).into()).collect();
    let df = CsvReadOptions::default()
        .with_has_header(true)
        .with_columns(Some(columns))
        .with_schema_overwrite(Some(Arc::new(overwrite)))
        .try_into_reader_with_file_path(Some(path.to_path_buf()))
        .and_then(|reader| reader.finish())
        .map_err(|e| input.explain(&e))?;
    input.check_frame(&df)?;
    if absent.is_empty() {
        return Ok(df);
    }
    let nulls: Vec<Expr> = absent
        .iter()
        .map(|(name, dtype)| lit(NULL).cast(dtype.clone()).alias(*name))
        .collect();
    df.lazy()
        .with_columns(nulls)
        .collect()
        .map_err(|e| Error::BadInput(format!("cannot read '{}': {e}", path.display())))
}

/// The columns of a schema, as the cells the record format allows in them.
fn checked_columns<'a>(
    schema: impl Iterator<Item = &'a (&'static str, DataType)>,
) -> Vec<(&'static str, Cell)> {
    schema.map(|(n, t)| (*n, Cell::of(n, t))).collect()
}

/// The file's column names; fails with a message naming the file and the first
/// missing column.
fn check_header(path: &Path, required: &[&str]) -> Result<Vec<String>> {
    let mut reader = match csv::Reader::from_path(path) {
        Ok(reader) => reader,
        Err(e) => {
            let missing = matches!(e.kind(), csv::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound);
            return Err(Error::BadInput(if missing {
                format!(
                    "'{}' does not exist (report needs sessions.csv and trials.csv)",
                    path.display()
                )
            } else {
                format!("cannot read '{}': {e}", path.display())
            }));
        }
    };
    let headers = reader
        .headers()
        .map_err(|e| Error::BadInput(format!("cannot read '{}': {e}", path.display())))?;
    for column in required {
        if !headers.iter().any(|h| h == *column) {
            return Err(Error::BadInput(format!(
                "'{}' has no column '{column}' (required: {})",
                path.display(),
                required.join(", ")
            )));
        }
    }
    Ok(headers.iter().map(str::to_string).collect())
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

fn k_name(metric: Metric) -> String {
    format!("{}_k", metric.name())
}

fn n_name(metric: Metric) -> String {
    format!("{}_n", metric.name())
}

/// One row per trial with at least one coding session: arm, task, trial_id and the
/// k and n of every session-level metric, sorted by (arm, task, trial_id).
fn session_counts_per_trial(sessions: DataFrame) -> PolarsResult<DataFrame> {
    // One 0/1 column per k and per n first, so that the group-by only sums columns
    // (polars' fast path); expressions evaluated per group are far slower with many
    // trials. A null indicator (field null) is skipped by the sum.
    let mut indicators: Vec<Expr> = Vec::new();
    for metric in Metric::ALL.into_iter().filter(|m| m.is_session_level()) {
        let (k, n) = self::indicators(metric.def().tally);
        indicators.push(k.alias(k_name(metric)));
        indicators.push(n.alias(n_name(metric)));
    }
    let names: Vec<String> = Metric::ALL
        .into_iter()
        .filter(|m| m.is_session_level())
        .flat_map(|m| [k_name(m), n_name(m)])
        .collect();
    let indicators: Vec<Expr> = indicators
        .into_iter()
        .map(|e| e.cast(DataType::UInt32))
        .collect();
    let sums: Vec<Expr> = names
        .iter()
        .map(|name| col(name.as_str()).sum().cast(DataType::UInt64))
        .collect();
    let mut keep = vec![col("arm"), col("task"), col("trial_id")];
    keep.extend(indicators);
    // A trial id names one (arm, task, replicate), so one key is enough to group by;
    // hashing one string instead of three is most of the group-by's time.
    let mut aggs = vec![col("arm").first(), col("task").first()];
    aggs.extend(sums);
    sessions
        .lazy()
        .filter(col("kind").neq(lit("initializer")))
        .select(keep)
        .group_by([col("trial_id")])
        .agg(aggs)
        .sort(["arm", "task", "trial_id"], SortMultipleOptions::default())
        .collect()
}

/// One row per trial: arm, task, trial_id, features_verified and the k and n of every
/// trial-level metric, sorted by (arm, task, trial_id).
fn trial_rows(trials: DataFrame) -> PolarsResult<DataFrame> {
    let mut select = vec![
        col("arm"),
        col("task"),
        col("trial_id"),
        col(super::metric::FEATURES_VERIFIED).cast(DataType::Float64),
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

/// The k and n column names of the metrics of one table (session- or trial-level).
fn count_columns(session_level: bool) -> Vec<(Metric, String, String)> {
    Metric::ALL
        .into_iter()
        .filter(|m| m.is_session_level() == session_level)
        .map(|m| (m, k_name(m), n_name(m)))
        .collect()
}

/// The sums of every k and n column of `frame` per group of `keys`, one row per group.
fn sums_by(
    frame: &DataFrame,
    keys: &[&str],
    columns: &[(Metric, String, String)],
) -> PolarsResult<DataFrame> {
    let sums: Vec<Expr> = columns
        .iter()
        .flat_map(|(_, k, n)| [k, n])
        .map(|name| col(name.as_str()).sum().cast(DataType::UInt64))
        .collect();
    frame
        .clone()
        .lazy()
        .group_by(keys.iter().map(|key| col(*key)).collect::<Vec<_>>())
        .agg(sums)
        .collect()
}

/// Adds each group's sums (a frame of [`sums_by`]) to the counts of its key.
fn add_sums<K: Ord>(
    sums: &DataFrame,
    key_of: impl Fn(usize) -> K,
    columns: &[(Metric, String, String)],
    into: &mut BTreeMap<K, Counts>,
) {
    let columns: Vec<(Metric, Vec<u64>, Vec<u64>)> = columns
        .iter()
        .map(|(m, k, n)| (*m, u64s(sums, k), u64s(sums, n)))
        .collect();
    for row in 0..sums.height() {
        let counts = into.entry(key_of(row)).or_default();
        for (metric, k, n) in &columns {
            counts.rates[metric.index()].add(Count {
                k: k[row],
                n: n[row],
            });
        }
    }
}

/// The counts per arm and per (arm, task): polars sums the per-trial rows of both
/// tables by arm and by (arm, task); what stays per trial (the bootstrap's clusters,
/// `features_verified` and usage) is gathered in trial-id order.
fn assemble(per_trial: &DataFrame, trials: &DataFrame) -> PolarsResult<Aggregate> {
    let mut out = Aggregate::default();
    for (frame, session_level) in [(per_trial, true), (trials, false)] {
        let columns = count_columns(session_level);
        let by_arm = sums_by(frame, &["arm"], &columns)?;
        let arms = strings(&by_arm, "arm");
        add_sums(&by_arm, |row| arms[row].clone(), &columns, &mut out.by_arm);
        let by_task = sums_by(frame, &["arm", "task"], &columns)?;
        let (arms, tasks) = (strings(&by_task, "arm"), strings(&by_task, "task"));
        add_sums(
            &by_task,
            |row| (arms[row].clone(), tasks[row].clone()),
            &columns,
            &mut out.by_arm_task,
        );
    }

    let arms = strings(per_trial, "arm");
    let clusters: Vec<(Metric, Vec<u64>, Vec<u64>)> = count_columns(true)
        .into_iter()
        .map(|(m, k, n)| (m, u64s(per_trial, &k), u64s(per_trial, &n)))
        .collect();
    for (row, arm) in arms.iter().enumerate() {
        let by_arm = out.by_arm.entry(arm.clone()).or_default();
        for (metric, k, n) in &clusters {
            by_arm.clusters[metric.index()].push((k[row], n[row]));
        }
    }

    let arms = strings(trials, "arm");
    let tasks = strings(trials, "task");
    let features: Vec<Option<f64>> = trials
        .column("features_verified")
        .and_then(|c| c.f64().map(|s| s.iter().collect()))
        .unwrap_or_default();
    let usage = |name: &str| -> Vec<Option<f64>> {
        trials
            .column(name)
            .and_then(|c| c.f64().map(|s| s.iter().collect()))
            .unwrap_or_else(|_| vec![None; arms.len()])
    };
    let (tokens, cost) = (usage(USAGE_TOKENS), usage(USAGE_COST));
    for (row, (arm, task)) in arms.iter().zip(&tasks).enumerate() {
        for counts in [
            out.by_arm.entry(arm.clone()).or_default(),
            out.by_arm_task
                .entry((arm.clone(), task.clone()))
                .or_default(),
        ] {
            if let Some(v) = features[row] {
                counts.features_verified.push(v);
            }
            counts.tokens.push(tokens.get(row).copied().flatten());
            counts.cost_usd.push(cost.get(row).copied().flatten());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        std::fs::write(dir.join(name), text).unwrap();
    }

    const SESSION_HEADER: &str = "trial_id,arm,task,replicate,session,kind,outcome,premature_claims,desc_edits,step_edits,entries_removed,told_false,tests_removed,tests_weakened,dup_side_effects,clean_tree,progress_updated,resumed,resume_success\n";
    const TRIAL_HEADER: &str = "trial_id,arm,task,replicate,features_verified,premature_victory\n";

    #[test]
    fn null_list_fields_leave_a_session_out_of_n_and_the_initializer_is_not_counted() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            SESSIONS_CSV,
            &format!(
                "{SESSION_HEADER}\
                 a:t:0,a,t,0,0,initializer,completed,5,5,5,5,5,5,5,5,true,true,false,\n\
                 a:t:0,a,t,0,1,coding,completed,1,0,0,0,0,2,0,0,true,true,false,\n\
                 a:t:0,a,t,0,2,coding,interrupted,,,,,,0,1,0,false,true,false,\n\
                 a:t:0,a,t,0,3,coding,completed,0,1,,0,2,0,0,1,true,false,true,true\n"
            ),
        );
        write(
            dir.path(),
            TRIALS_CSV,
            &format!("{TRIAL_HEADER}a:t:0,a,t,0,3,true\n"),
        );
        let agg = aggregate(dir.path()).unwrap();
        let a = &agg.by_arm["a"];
        let c = |m: Metric| (a.get(m).k, a.get(m).n);
        assert_eq!(c(Metric::PrematureDone), (1, 2));
        assert_eq!(c(Metric::SpuriousDescEdit), (1, 2));
        assert_eq!(c(Metric::SpuriousStepEdit), (0, 1));
        assert_eq!(c(Metric::ToldFalse), (1, 2));
        assert_eq!(c(Metric::TestRemoval), (1, 3));
        assert_eq!(c(Metric::TestWeakening), (1, 3));
        assert_eq!(c(Metric::DupSideEffect), (1, 3));
        assert_eq!(c(Metric::CleanExit), (1, 3));
        assert_eq!(c(Metric::ResumeSuccess), (1, 1));
        assert_eq!(c(Metric::PrematureVictory), (1, 1));
        assert_eq!(a.features_verified, vec![3.0]);
        assert_eq!(a.clusters[Metric::PrematureDone.index()], vec![(1, 2)]);
        assert_eq!(agg.by_arm_task[&("a".into(), "t".into())].rates, a.rates);
    }

    #[test]
    fn only_an_arm_every_session_of_which_ended_in_error_has_no_usable_sessions() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            SESSIONS_CSV,
            &format!(
                "{SESSION_HEADER}\
                 a:t:0,a,t,0,1,coding,error,,,,,,,,,false,false,false,\n\
                 a:t:1,a,t,1,1,coding,error,,,,,,,,,false,false,false,\n\
                 b:t:0,b,t,0,1,coding,error,,,,,,,,,false,false,false,\n\
                 b:t:0,b,t,0,2,coding,completed,0,0,0,0,0,0,0,0,true,true,false,\n"
            ),
        );
        write(
            dir.path(),
            TRIALS_CSV,
            &format!(
                "{TRIAL_HEADER}a:t:0,a,t,0,0,false\na:t:1,a,t,1,0,false\nb:t:0,b,t,0,0,false\n"
            ),
        );
        let agg = aggregate(dir.path()).unwrap();
        assert_eq!(agg.errored["b"], Count { k: 1, n: 2 });
        assert_eq!(
            agg.arms_without_usable_sessions(),
            vec![("a".to_string(), 2)]
        );
    }

    #[test]
    fn an_all_empty_nullable_column_reads_as_nulls() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            SESSIONS_CSV,
            &format!(
                "{SESSION_HEADER}\
                 a:t:0,a,t,0,1,coding,completed,,,,,,0,0,0,true,true,false,\n\
                 a:t:1,a,t,1,1,coding,completed,,,,,,1,0,0,false,true,false,\n"
            ),
        );
        write(dir.path(), TRIALS_CSV, TRIAL_HEADER);
        let agg = aggregate(dir.path()).unwrap();
        let a = &agg.by_arm["a"];
        assert_eq!(a.get(Metric::PrematureDone), Count { k: 0, n: 0 });
        assert_eq!(a.get(Metric::ResumeSuccess), Count { k: 0, n: 0 });
        assert_eq!(a.get(Metric::TestRemoval), Count { k: 1, n: 2 });
        assert_eq!(
            a.clusters[Metric::TestRemoval.index()],
            vec![(0, 1), (1, 1)]
        );
    }

    #[test]
    fn a_missing_column_is_bad_input_naming_file_and_column() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            SESSIONS_CSV,
            &SESSION_HEADER.replace("told_false,", ""),
        );
        write(dir.path(), TRIALS_CSV, TRIAL_HEADER);
        let err = aggregate(dir.path()).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::BadInput(_)));
        assert!(
            text.contains("sessions.csv") && text.contains("'told_false'"),
            "{text}"
        );
    }

    #[test]
    fn a_missing_file_and_a_missing_directory_are_bad_input() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), SESSIONS_CSV, SESSION_HEADER);
        let err = aggregate(dir.path()).unwrap_err().to_string();
        assert!(err.contains("trials.csv"), "{err}");
        let err = aggregate(&dir.path().join("nope")).unwrap_err().to_string();
        assert!(err.contains("does not exist"), "{err}");
    }

    #[test]
    fn an_unparsable_cell_is_bad_input_naming_file_line_and_column() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            SESSIONS_CSV,
            &format!(
                "{SESSION_HEADER}a:t:0,a,t,0,1,coding,completed,x,0,0,0,0,0,0,0,true,true,false,\n"
            ),
        );
        write(dir.path(), TRIALS_CSV, TRIAL_HEADER);
        let err = aggregate(dir.path()).unwrap_err();
        assert_eq!(err.exit_code(), crate::exit_code::BAD_INPUT, "{err}");
        assert!(
            err.to_string()
                .contains("sessions.csv:2: column 8 (premature_claims): 'x' is not a whole number"),
            "{err}"
        );
    }
}
