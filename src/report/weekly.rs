//! `loopbench weekly`: every run under a results root, dated by its manifest, pooled by
//! ISO week into a trend per metric and arm, with week-over-week regressions flagged by
//! the rule of `compare`.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use polars::prelude::*;

use super::aggregate::{Count, arm_task_sums, count_sums, rates_at};
use super::by_task::pair_tasks;
use super::compare::{Judgement, Rule, judge_by_task};
use super::export::{Cell, Document, export_text};
use super::format::{level, pct, pp, pvalue};
use super::notes::SIMULATED_NOTE;
use super::plot::{Estimate, YAxis, trend_chart};
use super::run_info::RunInfo;
use super::run_tables::RunTables;
use super::table::{Align, Table};
use crate::error::{Error, IoContext, NoUsableRun, Result, ResultsDirError};
use crate::fsutil::write_atomic;
use crate::rates::Metric;
use crate::stats;

use crate::run_dir::RunDir;
use crate::store::open_run_dir;
use crate::timestamp::parse_rfc3339;

/// `weekly.csv`.
pub const WEEKLY_CSV: &str = "weekly.csv";
/// `weekly.md`.
pub const WEEKLY_MD: &str = "weekly.md";

/// Columns of `weekly.csv`.
pub const WEEKLY_COLUMNS: [&str; 13] = [
    "week",
    "metric",
    "arm",
    "runs",
    "k",
    "n",
    "rate",
    "ci_low",
    "ci_high",
    "change",
    "p",
    "regression",
    "stratified",
];

/// An ISO 8601 week.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IsoWeek {
    /// ISO week-numbering year.
    pub year: i32,
    /// Week 1..=53.
    pub week: u32,
}

impl IsoWeek {
    /// The week as one number that sorts as the weeks do: year × 100 + week.
    fn key(self) -> i32 {
        self.year * 100 + self.week as i32
    }

    /// The week of a [`IsoWeek::key`].
    fn from_key(key: i32) -> IsoWeek {
        IsoWeek {
            year: key.div_euclid(100),
            week: key.rem_euclid(100) as u32,
        }
    }
}

impl std::fmt::Display for IsoWeek {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}-W{:02}", self.year, self.week)
    }
}

/// The ISO week of a day count since 1970-01-01 (a Thursday).
pub fn iso_week_of_days(days: i64) -> IsoWeek {
    let (year, week) = crate::timestamp::iso_week(days.saturating_mul(86_400)).unwrap_or((0, 0));
    IsoWeek {
        year: i32::from(year),
        week: u32::try_from(week).unwrap_or(0),
    }
}

/// A run found under the root.
#[derive(Debug, Clone, PartialEq)]
pub struct FoundRun {
    /// Its results directory.
    pub dir: RunDir,
    /// Its manifest.
    pub info: RunInfo,
    /// Start, seconds since the Unix epoch (UTC).
    pub started: i64,
    /// The ISO week of the start, in UTC.
    pub week: IsoWeek,
}

/// Every directory under `root` holding a `manifest.json` and lying in no other such
/// directory, sorted by path, with what was skipped and why in the second list: a run
/// inside another run's directory (what a run keeps of its agents, such as their HOME
/// under `agents/`, is the agents' to write, and a run an agent left there is no run of
/// the root), a manifest without a readable `started` time, and a run whose manifest
/// does not fit where it was found ([`misplaced`]).
pub fn find_runs(root: &Path) -> Result<(Vec<FoundRun>, Vec<String>)> {
    if !root.is_dir() {
        return Err(ResultsDirError::RootMissing {
            root: root.to_path_buf(),
        }
        .into());
    }
    let mut runs = Vec::new();
    let mut skipped = Vec::new();
    // A run is a directory whose manifest is a file found below the root.
    let mut entries: Vec<RunDir> = walkdir::WalkDir::new(root)
        .follow_links(false)
        .into_iter()
        .filter_map(std::result::Result::ok)
        .filter(|e| e.file_type().is_file())
        .filter_map(|e| {
            let dir = open_run_dir(e.path().parent()?);
            (dir.manifest() == e.path()).then_some(dir)
        })
        .collect();
    // Sorted by path, a directory comes before every directory inside it.
    entries.sort_by(|a, b| a.path().cmp(b.path()));
    let mut outer: Vec<std::path::PathBuf> = Vec::new();
    for dir in entries {
        if let Some(holder) = outer.iter().find(|o| dir.path().starts_with(o)) {
            skipped.push(format!(
                "'{}' lies inside the run '{}' (a run's directory holds what its agents \
                 wrote, such as their HOME): not pooled",
                dir.path().display(),
                holder.display()
            ));
            continue;
        }
        outer.push(dir.path().to_path_buf());
        let info = match RunInfo::read(&dir) {
            Ok(info) => info,
            Err(e) => {
                skipped.push(format!("{e}"));
                continue;
            }
        };
        let Some(started) = info.started.as_deref().and_then(parse_rfc3339) else {
            skipped.push(format!(
                "'{}' has no RFC 3339 'started' time",
                dir.manifest().display()
            ));
            continue;
        };
        if let Some(why) = misplaced(&dir, &info, started) {
            skipped.push(format!(
                "'{}' does not fit where it was found: {why}; not pooled",
                dir.path().display()
            ));
            continue;
        }
        runs.push(FoundRun {
            week: iso_week_of_days(started.div_euclid(86_400)),
            dir,
            info,
            started,
        });
    }
    Ok((runs, skipped))
}

/// Why the manifest of the run at `dir` (started at `started`) does not fit the
/// directory it is in, if it does not: a manifest that names no arm (every run names
/// its arms); and, for a directory named as `run` and `replay` name a new one
/// (`<suite>/<UTC start time>`, the time with `-` for `:`, perhaps with a `-N` suffix), a
/// suite other than the parent directory's name, or a start more than a day away from
/// the directory's time (the week a run is pooled in is that of its start).
pub fn misplaced(dir: &RunDir, info: &RunInfo, started: i64) -> Option<String> {
    if info.arms.is_empty() {
        return Some("its manifest names no arms".into());
    }
    let path = dir.path();
    let named = path.file_name()?.to_str().and_then(run_id_time)?;
    let parent = path.parent()?.file_name()?.to_string_lossy();
    let suite = info.suite.as_deref().unwrap_or("");
    if parent != suite {
        return Some(format!(
            "its directory is named as a run of the suite '{parent}' \
             (<suite>/<start time>), but its manifest says the suite is '{suite}'"
        ));
    }
    if started.abs_diff(named) > 86_400 {
        return Some(format!(
            "its directory is named for its start time, {}, but its manifest says it \
             started {}",
            path.file_name()?.to_string_lossy(),
            info.started.as_deref().unwrap_or("")
        ));
    }
    None
}

/// The time, in seconds since the Unix epoch, of a run directory's name as `run` and
/// `replay` make it (`2026-11-02T08-00-00Z`, perhaps with `-2`, `-3`, ... after it), or
/// `None` for any other name.
fn run_id_time(name: &str) -> Option<i64> {
    let (stamp, suffix) = name.split_at_checked("2026-11-02T08-00-00Z".len())?;
    if !(suffix.is_empty()
        || suffix
            .strip_prefix('-')
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())))
    {
        return None;
    }
    let (date, time) = stamp.split_once('T')?;
    if time.contains(':') {
        return None;
    }
    parse_rfc3339(&format!("{date}T{}", time.replace('-', ":")))
}

/// Why the tables of a run do not fit its manifest, if they do not: an arm in them that
/// the manifest does not list.
fn tables_misfit(run: &FoundRun, sums: &DataFrame) -> Option<String> {
    let arms = sums.column("arm").ok()?.str().ok()?;
    let stray: std::collections::BTreeSet<&str> = arms
        .iter()
        .flatten()
        .filter(|arm| !run.info.arms.iter().any(|a| a == arm))
        .collect();
    let first = stray.first()?;
    Some(format!(
        "its tables hold the arm '{first}', which its manifest does not list (arms: {})",
        run.info.arms.join(", ")
    ))
}

/// One row of the trend: one metric of one arm in one week.
#[derive(Debug, Clone, PartialEq)]
pub struct WeeklyRow {
    /// The ISO week.
    pub week: IsoWeek,
    /// The metric.
    pub metric: Metric,
    /// The arm.
    pub arm: String,
    /// Runs of that week holding the arm.
    pub runs: usize,
    /// Pooled counts of those runs.
    pub count: Count,
    /// Wilson interval of the pooled rate.
    pub ci: Option<(f64, f64)>,
    /// The pooled counts per task, sorted by task.
    pub tasks: Vec<(String, Count)>,
    /// Against the arm's previous week with data, stratified by task when both weeks
    /// span two or more tasks; None in its first week.
    pub vs_previous: Option<Judgement>,
}

/// The weekly report.
#[derive(Debug, Clone, PartialEq)]
pub struct Weekly {
    /// The weeks that have runs, ascending.
    pub weeks: Vec<IsoWeek>,
    /// Rows ordered by metric (rate-table order), arm name, week.
    pub rows: Vec<WeeklyRow>,
    /// Runs used.
    pub runs: Vec<FoundRun>,
    /// Runs or manifests that could not be used, with the reason.
    pub skipped: Vec<String>,
    /// Any run is simulated.
    pub simulated: bool,
    /// The regression rule.
    pub rule: Rule,
    /// Confidence of the intervals.
    pub confidence: f64,
}

/// Builds the report from every run under `root` started within `since` before `now`
/// (all runs when `since` is None). A run whose CSVs are missing or cannot be read (a
/// run still going, an interrupted one) is skipped and listed, so that one broken
/// directory does not hide a week. A run whose CSVs hold a row that does not fit the
/// record format (a negative count, an unknown outcome, a repeated session) is refused
/// instead: skipping it would change the week's numbers without anyone deciding to.
/// No usable run at all is bad input too, so that a mistyped root or an empty week
/// does not come out as a report with nothing in it.
pub fn build(
    root: &Path,
    since: Option<Duration>,
    now: SystemTime,
    rule: Rule,
    confidence: f64,
) -> Result<Weekly> {
    let rule = rule.validate()?;
    let (found, mut skipped) = find_runs(root)?;
    let now_secs = now
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let cutoff = since.map(|s| now_secs - s.as_secs() as i64);
    let mut per_run: Vec<LazyFrame> = Vec::new();
    let mut runs = Vec::new();
    let found_runs = found.len();
    let mut older = 0;
    for run in found {
        if cutoff.is_some_and(|c| run.started < c) {
            older += 1;
            continue;
        }
        // One run's tables at a time: reading all of them first would hold every run's
        // rows at once, where the per-arm sums of a run are a few rows.
        let sums = match RunTables::read(&run.dir).and_then(arm_task_sums) {
            Ok(sums) => sums,
            Err(e @ Error::BadLine { .. }) => return Err(e),
            Err(e) => {
                skipped.push(e.to_string());
                continue;
            }
        };
        if let Some(why) = tables_misfit(&run, &sums) {
            skipped.push(format!(
                "'{}' does not fit its manifest: {why}; not pooled",
                run.dir.path().display()
            ));
            continue;
        }
        per_run.push(sums.lazy().with_columns([
            lit(run.week.key()).alias("week"),
            lit(runs.len() as u64).alias("run"),
        ]));
        runs.push(run);
    }
    if runs.is_empty() {
        return Err(no_usable_run(root, found_runs, older, since, &skipped));
    }
    let mut weeks: Vec<IsoWeek> = runs.iter().map(|r| r.week).collect();
    weeks.sort();
    weeks.dedup();
    let pooled = pool_by_week(per_run).map_err(|e| ResultsDirError::CannotPool {
        root: root.to_path_buf(),
        reason: e.to_string(),
    })?;
    let mut rows: Vec<WeeklyRow> = Vec::new();
    for metric in Metric::ALL {
        for arm_week in &pooled {
            let count = arm_week.counts[metric.index()];
            // The arm's latest earlier week that measured the metric: a week in
            // which nothing could be counted (n = 0) is passed over, and is not judged
            // itself (no data is not "no regression").
            let previous = rows
                .iter()
                .rev()
                .take_while(|r| r.metric == metric && r.arm == arm_week.arm)
                .find(|r| r.count.n > 0)
                .filter(|_| count.n > 0);
            let tasks: Vec<(String, Count)> = arm_week
                .tasks
                .iter()
                .map(|(task, counts)| (task.clone(), counts[metric.index()]))
                .collect();
            let vs_previous = previous.map(|p| {
                let by_task = pair_tasks(
                    tasks.iter().map(|(t, c)| (t.as_str(), *c)),
                    p.tasks.iter().map(|(t, c)| (t.as_str(), *c)),
                );
                judge_by_task(metric, p.count, count, &by_task, rule)
            });
            rows.push(WeeklyRow {
                ci: stats::wilson(count.k, count.n, confidence)
                    .ok()
                    .map(|i| (i.low, i.high)),
                vs_previous,
                tasks,
                week: arm_week.week,
                metric,
                arm: arm_week.arm.clone(),
                runs: arm_week.runs,
                count,
            });
        }
    }
    Ok(Weekly {
        weeks,
        rows,
        simulated: runs.iter().any(|r| r.info.simulated),
        runs,
        skipped,
        rule,
        confidence,
    })
}

/// Why a root gave no run to report on.
fn no_usable_run(
    root: &Path,
    found: usize,
    older: usize,
    since: Option<Duration>,
    skipped: &[String],
) -> Error {
    let why = if found == 0 && skipped.is_empty() {
        NoUsableRun::NoRun
    } else if found > 0 && older == found {
        NoUsableRun::AllOlder {
            found,
            since: humantime::format_duration(since.unwrap_or_default()).to_string(),
        }
    } else {
        NoUsableRun::NoneUsable
    };
    ResultsDirError::NoUsableRun {
        root: root.to_path_buf(),
        why,
        skipped: skipped.to_vec(),
    }
    .into()
}

/// The pooled counts of one arm in one week.
struct ArmWeek {
    arm: String,
    week: IsoWeek,
    /// Runs of the week holding the arm.
    runs: usize,
    /// Indexed by [`Metric::index`].
    counts: [Count; Metric::ALL.len()],
    /// Per task, sorted by task: its counts, indexed by [`Metric::index`].
    tasks: Vec<(String, [Count; Metric::ALL.len()])>,
}

/// Every run's per-(arm, task) sums (each with its `week` key and `run` index; at least
/// one run) pooled by polars into one row per (arm, week), sorted by arm, then week,
/// each with its per-task counts.
fn pool_by_week(per_run: Vec<LazyFrame>) -> PolarsResult<Vec<ArmWeek>> {
    let all = concat(per_run, UnionArgs::default())?.collect()?;
    let by_task = all
        .clone()
        .lazy()
        .group_by([col("arm"), col("week"), col("task")])
        .agg(count_sums())
        .sort(["arm", "week", "task"], SortMultipleOptions::default())
        .collect()?;
    let mut aggs = count_sums();
    aggs.push(col("run").n_unique().cast(DataType::UInt64).alias("runs"));
    let pooled = all
        .lazy()
        .group_by([col("arm"), col("week")])
        .agg(aggs)
        .sort(["arm", "week"], SortMultipleOptions::default())
        .collect()?;
    let arms = pooled.column("arm")?.str()?;
    let weeks = pooled.column("week")?.i32()?;
    let runs = pooled.column("runs")?.u64()?;
    let mut out: Vec<ArmWeek> = (0..pooled.height())
        .map(|row| ArmWeek {
            arm: arms.get(row).unwrap_or_default().to_string(),
            week: IsoWeek::from_key(weeks.get(row).unwrap_or_default()),
            runs: runs.get(row).unwrap_or_default() as usize,
            counts: rates_at(&pooled, row),
            tasks: Vec::new(),
        })
        .collect();
    // Both frames are sorted by (arm, week): walk them together.
    let (task_arms, task_weeks) = (
        by_task.column("arm")?.str()?,
        by_task.column("week")?.i32()?,
    );
    let tasks = by_task.column("task")?.str()?;
    let mut at = 0;
    for row in 0..by_task.height() {
        let arm = task_arms.get(row).unwrap_or_default();
        let week = IsoWeek::from_key(task_weeks.get(row).unwrap_or_default());
        while at < out.len() && (out[at].arm.as_str(), out[at].week) < (arm, week) {
            at += 1;
        }
        if let Some(arm_week) = out.get_mut(at).filter(|a| a.arm == arm && a.week == week) {
            arm_week.tasks.push((
                tasks.get(row).unwrap_or_default().to_string(),
                rates_at(&by_task, row),
            ));
        }
    }
    Ok(out)
}

impl Weekly {
    /// The table model of the weekly files: one row per (week, metric, arm).
    pub fn document(&self) -> Document {
        let rows = self
            .rows
            .iter()
            .map(|r| {
                let j = r.vs_previous;
                vec![
                    Cell::Text(r.week.to_string()),
                    Cell::Text(r.metric.name().to_string()),
                    Cell::Text(r.arm.clone()),
                    Cell::Count(r.runs as u64),
                    Cell::Count(r.count.k),
                    Cell::Count(r.count.n),
                    Cell::number(r.count.rate()),
                    Cell::number(r.ci.map(|c| c.0)),
                    Cell::number(r.ci.map(|c| c.1)),
                    Cell::number(j.and_then(|j| j.change)),
                    Cell::number(j.and_then(|j| j.p)),
                    j.map_or(Cell::Empty, |j| Cell::Bool(j.regression)),
                    j.map_or(Cell::Empty, |j| Cell::Bool(j.stratified)),
                ]
            })
            .collect();
        Document {
            name: "weekly",
            columns: WEEKLY_COLUMNS.to_vec(),
            rows,
            markdown: self.to_markdown(),
        }
    }

    /// `weekly.csv`.
    pub fn to_csv(&self) -> Result<String> {
        export_text(&self.document(), "csv")
    }

    /// Regressions flagged, over all weeks.
    pub fn regressions(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.vs_previous.is_some_and(|j| j.regression))
            .count()
    }

    /// `weekly.md`: one table per metric, rows by arm and week.
    pub fn to_markdown(&self) -> String {
        let mut out = String::from("# loopbench weekly report\n\n");
        if self.simulated {
            out += &format!("> **Note — {SIMULATED_NOTE}** (for the runs from the sim agent).\n\n");
        }
        let span = match (self.weeks.first(), self.weeks.last()) {
            (Some(a), Some(b)) => format!("{a} to {b}"),
            _ => "no weeks".into(),
        };
        out += &format!(
            "{} runs, {span}. Runs are dated by the manifest's `started` time (UTC) and pooled \
             per ISO week; intervals are Wilson at {}. `REGRESSION` marks a week worse \
             than the arm's previous week by more than {} with one-sided Fisher p < {}; \
             where both weeks span two or more tasks, the change is the Mantel–Haenszel \
             difference over the tasks and p the one-sided Cochran–Mantel–Haenszel p \
             (`by task`). {} regressions flagged.\n",
            self.runs.len(),
            level(self.confidence),
            pp(self.rule.max_increase).trim_start_matches('+'),
            self.rule.alpha,
            self.regressions(),
        );
        for metric in Metric::ALL {
            let rows: Vec<&WeeklyRow> = self.rows.iter().filter(|r| r.metric == metric).collect();
            if rows.is_empty() {
                continue;
            }
            out += &format!("\n## {metric}\n\n");
            let mut t = Table::new([
                ("week", Align::Left),
                ("arm", Align::Left),
                ("runs", Align::Right),
                ("k / n", Align::Right),
                ("rate", Align::Right),
                ("CI", Align::Left),
                ("vs previous week", Align::Right),
                ("p", Align::Right),
                ("flag", Align::Left),
            ]);
            for r in rows {
                let j = r.vs_previous;
                t.push(vec![
                    r.week.to_string(),
                    r.arm.clone(),
                    r.runs.to_string(),
                    format!("{} / {}", r.count.k, r.count.n),
                    r.count.rate().map(pct).unwrap_or_else(|| "–".into()),
                    r.ci.map(|(l, h)| format!("{} … {}", pct(l), pct(h)))
                        .unwrap_or_default(),
                    j.and_then(|j| j.change).map(pp).unwrap_or_default(),
                    j.and_then(|j| j.p).map(pvalue).unwrap_or_default(),
                    match j {
                        Some(j) if j.regression && j.stratified => {
                            "**REGRESSION** (by task)".into()
                        }
                        Some(j) if j.regression => "**REGRESSION**".into(),
                        Some(j) if j.stratified => "by task".into(),
                        _ => String::new(),
                    },
                ]);
            }
            out += &t.to_markdown();
        }
        if !self.skipped.is_empty() {
            out += "\n## Skipped\n\n";
            for s in &self.skipped {
                out += &format!("- {s}\n");
            }
        }
        out
    }

    /// The trend chart of one metric: a line per arm over the weeks.
    pub fn chart(&self, metric: Metric) -> Result<String> {
        let weeks: Vec<String> = self.weeks.iter().map(IsoWeek::to_string).collect();
        let mut arms: Vec<String> = self
            .rows
            .iter()
            .filter(|r| r.metric == metric)
            .map(|r| r.arm.clone())
            .collect();
        arms.dedup();
        let series: Vec<(String, Vec<Option<Estimate>>)> = arms
            .into_iter()
            .map(|arm| {
                let points = self
                    .weeks
                    .iter()
                    .map(|w| {
                        self.rows
                            .iter()
                            .find(|r| r.metric == metric && r.arm == arm && r.week == *w)
                            .and_then(|r| {
                                let (low, high) = r.ci?;
                                Some(Estimate {
                                    value: r.count.rate()?,
                                    low,
                                    high,
                                })
                            })
                    })
                    .collect();
                (arm, points)
            })
            .collect();
        trend_chart(
            &format!("{metric} by week"),
            &weeks,
            &series,
            YAxis::Rate,
            &format!("rate ({} Wilson CI)", level(self.confidence)),
        )
    }

    /// Writes `weekly.csv`, `weekly.md` and `plots/<metric>.svg` into `out`.
    pub fn write(&self, out: &Path) -> Result<()> {
        let plots = out.join("plots");
        std::fs::create_dir_all(&plots)
            .io_context(|| format!("cannot create '{}'", plots.display()))?;
        let doc = self.document();
        for exporter in super::export::ALL {
            let file = out.join(format!("{}.{}", doc.name, exporter.extension()));
            write_atomic(&file, &exporter.export(&doc)?)?;
        }
        for metric in Metric::ALL {
            let svg = self.chart(metric)?;
            write_atomic(&plots.join(format!("{metric}.svg")), svg.as_bytes())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn week(text: &str) -> String {
        let secs = parse_rfc3339(text).unwrap();
        iso_week_of_days(secs.div_euclid(86_400)).to_string()
    }

    #[test]
    fn a_root_without_runs_or_with_only_older_ones_is_refused_saying_which() {
        let tmp = tempfile::tempdir().unwrap();
        let build_at = |now| {
            build(
                tmp.path(),
                Some(Duration::from_secs(7 * 86_400)),
                now,
                Rule::default(),
                0.95,
            )
            .unwrap_err()
        };
        let err = build_at(SystemTime::now());
        assert!(
            matches!(
                &err,
                Error::ResultsDir(ResultsDirError::NoUsableRun { root, why: NoUsableRun::NoRun, skipped })
                    if root == tmp.path() && skipped.is_empty()
            ),
            "{err:?}"
        );
        // One run whose manifest says no start: skipped, and said so.
        let run = tmp.path().join("s/2026-11-02T08-00-00Z");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(
            run.join("manifest.json"),
            r#"{"suite": "s", "arms": ["a"]}"#,
        )
        .unwrap();
        let err = build_at(SystemTime::now());
        assert!(
            matches!(
                &err,
                Error::ResultsDir(ResultsDirError::NoUsableRun { why: NoUsableRun::NoneUsable, skipped, .. })
                    if skipped.len() == 1 && skipped[0].contains("'started'")
            ),
            "{err:?}"
        );
        // The run started 2026-11-02, seen from a month later.
        std::fs::write(
            run.join("manifest.json"),
            r#"{"suite": "s", "started": "2026-11-02T08:00:00Z", "arms": ["a"]}"#,
        )
        .unwrap();
        let month_later =
            UNIX_EPOCH + Duration::from_secs(parse_rfc3339("2026-12-02T08:00:00Z").unwrap() as u64);
        let err = build_at(month_later);
        assert!(
            matches!(
                &err,
                Error::ResultsDir(ResultsDirError::NoUsableRun {
                    why: NoUsableRun::AllOlder { found: 1, since },
                    ..
                }) if since == "7days"
            ),
            "{err:?}"
        );
    }

    #[test]
    fn iso_weeks_match_the_calendar_at_year_boundaries() {
        // Python: date(y, m, d).isocalendar()
        assert_eq!(week("2026-01-01T00:00:00Z"), "2026-W01");
        assert_eq!(week("2027-01-01T12:00:00Z"), "2026-W53");
        assert_eq!(week("2024-12-30T00:00:00Z"), "2025-W01");
        assert_eq!(week("2021-01-03T23:59:59Z"), "2020-W53");
        assert_eq!(week("2026-11-02T08:00:00Z"), "2026-W45");
        assert_eq!(week("1970-01-01T00:00:00Z"), "1970-W01");
    }

    #[test]
    fn run_ids_are_read_as_the_time_they_name() {
        let t = parse_rfc3339("2026-11-02T08:00:00Z");
        assert_eq!(run_id_time("2026-11-02T08-00-00Z"), t);
        assert_eq!(run_id_time("2026-11-02T08-00-00Z-2"), t);
        assert_eq!(run_id_time("2026-11-02T08-00-00Z-12"), t);
        for name in [
            "a",
            "2026-11-02T08-00-00Z-",
            "2026-11-02T08-00-00Zx",
            "2026-11-02",
            "2026-11-02T08:00:00Z",
        ] {
            assert_eq!(run_id_time(name), None, "{name}");
        }
    }

    fn info(suite: &str, arms: &[&str], started: &str) -> RunInfo {
        RunInfo {
            has_manifest: true,
            suite: Some(suite.into()),
            arms: arms.iter().map(|a| a.to_string()).collect(),
            started: Some(started.into()),
            ..RunInfo::default()
        }
    }

    #[test]
    fn a_manifest_that_does_not_fit_its_directory_is_misplaced() {
        let started = "2026-11-02T08:00:05Z";
        let at = parse_rfc3339(started).unwrap();
        let dir = |path: &str| open_run_dir(Path::new(path));
        let fits = info("seq", &["json"], started);
        assert_eq!(
            misplaced(&dir("r/seq/2026-11-02T08-00-00Z"), &fits, at),
            None
        );
        assert_eq!(misplaced(&dir("r/seq/any-name"), &fits, at), None);
        assert_eq!(misplaced(&dir("r/other/any-name"), &fits, at), None);
        let other_suite = misplaced(&dir("r/other/2026-11-02T08-00-00Z"), &fits, at);
        assert!(other_suite.is_some_and(|w| w.contains("'other'") && w.contains("'seq'")));
        let later = misplaced(&dir("r/seq/2026-10-02T08-00-00Z-2"), &fits, at);
        assert!(later.is_some_and(|w| w.contains(started)));
        let no_arms = misplaced(&dir("r/seq/x"), &info("seq", &[], started), at);
        assert!(no_arms.is_some_and(|w| w.contains("names no arms")));
    }

    #[test]
    fn offsets_and_fractions_are_converted_to_utc() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("1970-01-01T01:00:00.25+01:00"), Some(0));
        // Sunday night in New York is Monday in UTC: the next ISO week.
        assert_eq!(week("2026-11-01T22:00:00-05:00"), "2026-W45");
        assert_eq!(parse_rfc3339("2026-11-01"), None);
        assert_eq!(parse_rfc3339("2026-13-01T00:00:00Z"), None);
        assert_eq!(parse_rfc3339("2026-11-01T00:00:00+0100"), None);
    }
}
