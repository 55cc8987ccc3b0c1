//! `summary.csv`, `summary.json` and `summary.md`: one row per (arm, metric) with the
//! statistics of the statistics conventions (README, Reports), computed from the counts of [`super::aggregate`].

use std::path::Path;

use serde::Serialize;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::aggregate::{Aggregate, Counts, aggregate};
use super::by_task;
use super::export::{self, Cell, Document, export_text};
use super::metric::{FEATURES_VERIFIED, Metric};
use super::run_info::RunInfo;
use super::{plot, summary_md};
use crate::error::{Error, IoContext, Result};
use crate::stats::{self, Alternative, ChiSquare, Describe, Interval, StatsError};
use crate::store::write_atomic;

/// `summary.csv`.
pub const SUMMARY_CSV: &str = "summary.csv";
/// `summary.json`.
pub const SUMMARY_JSON: &str = "summary.json";
/// `summary.md`.
pub const SUMMARY_MD: &str = "summary.md";
/// Folder of the per-metric plots inside a run directory.
pub const PLOTS_DIR: &str = "plots";

/// The columns of `summary.csv`, in order; also the keys of each `summary.json` object.
pub const SUMMARY_COLUMNS: [&str; 20] = [
    "arm",
    "metric",
    "k",
    "n",
    "rate",
    "ci_low",
    "ci_high",
    "diff",
    "diff_ci_low",
    "diff_ci_high",
    "p",
    "p_holm",
    "boot_ci_low",
    "boot_ci_high",
    "p_cmh",
    "p_cmh_holm",
    "diff_mh",
    "diff_mh_ci_low",
    "diff_mh_ci_high",
    "p_homogeneity",
];

/// Seed of every trial-clustered bootstrap: fixed, so that summaries are reproducible.
pub const BOOTSTRAP_SEED: u64 = 20_260_704;

/// A bootstrap interval this many times wider than Wilson's is called out in
/// `summary.md`: sessions of one trial are then too correlated for Wilson's interval.
pub const BOOTSTRAP_WIDTH_NOTE: f64 = 1.5;

/// One row of `summary.*`. Empty cells are `None` (`null` in JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SummaryRow {
    /// Arm name.
    pub arm: String,
    /// Metric name (docs/metrics.md), or `features_verified`.
    pub metric: String,
    /// Units with the event; empty for `features_verified`.
    pub k: Option<u64>,
    /// Units counted: sessions or trials (trials for `features_verified`).
    pub n: u64,
    /// k / n; the mean for `features_verified`; empty when n = 0.
    pub rate: Option<f64>,
    /// Wilson lower bound; for `features_verified`, the Student t bound of the mean.
    pub ci_low: Option<f64>,
    /// Wilson upper bound; for `features_verified`, the Student t bound of the mean.
    pub ci_high: Option<f64>,
    /// rate(arm) − rate(baseline); empty on baseline rows.
    pub diff: Option<f64>,
    /// Newcombe lower bound of `diff` (Welch for `features_verified`).
    pub diff_ci_low: Option<f64>,
    /// Newcombe upper bound of `diff` (Welch for `features_verified`).
    pub diff_ci_high: Option<f64>,
    /// Two-sided Fisher exact p (Mann–Whitney U for `features_verified`).
    pub p: Option<f64>,
    /// Holm-adjusted `p` over the non-baseline arms of the metric.
    pub p_holm: Option<f64>,
    /// Trial-clustered percentile bootstrap lower bound (session-level metrics).
    pub boot_ci_low: Option<f64>,
    /// Trial-clustered percentile bootstrap upper bound (session-level metrics).
    pub boot_ci_high: Option<f64>,
    /// Two-sided Cochran–Mantel–Haenszel p over the tasks (rate metrics, two or more
    /// tasks in the comparison; empty otherwise).
    pub p_cmh: Option<f64>,
    /// Holm-adjusted `p_cmh` over the non-baseline arms of the metric.
    pub p_cmh_holm: Option<f64>,
    /// Mantel–Haenszel risk difference, arm − baseline, over the tasks.
    pub diff_mh: Option<f64>,
    /// Lower bound of `diff_mh` (Wald, Greenland–Robins variance).
    pub diff_mh_ci_low: Option<f64>,
    /// Upper bound of `diff_mh` (Wald, Greenland–Robins variance).
    pub diff_mh_ci_high: Option<f64>,
    /// Breslow–Day p that the odds ratio is the same in every task.
    pub p_homogeneity: Option<f64>,
    /// The arm and the baseline span two or more tasks on this rate metric, so the
    /// stratified columns, not the pooled ones, judge it (not a column).
    #[serde(skip)]
    pub stratified: bool,
}

impl SummaryRow {
    fn empty(arm: &str, metric: &str, k: Option<u64>, n: u64) -> SummaryRow {
        SummaryRow {
            arm: arm.to_string(),
            metric: metric.to_string(),
            k,
            n,
            rate: None,
            ci_low: None,
            ci_high: None,
            diff: None,
            diff_ci_low: None,
            diff_ci_high: None,
            p: None,
            p_holm: None,
            boot_ci_low: None,
            boot_ci_high: None,
            p_cmh: None,
            p_cmh_holm: None,
            diff_mh: None,
            diff_mh_ci_low: None,
            diff_mh_ci_high: None,
            p_homogeneity: None,
            stratified: false,
        }
    }

    /// The typed cells of the row, matching [`SUMMARY_COLUMNS`].
    pub fn cells(&self) -> Vec<Cell> {
        vec![
            Cell::Text(self.arm.clone()),
            Cell::Text(self.metric.clone()),
            Cell::count(self.k),
            Cell::Count(self.n),
            Cell::number(self.rate),
            Cell::number(self.ci_low),
            Cell::number(self.ci_high),
            Cell::number(self.diff),
            Cell::number(self.diff_ci_low),
            Cell::number(self.diff_ci_high),
            Cell::number(self.p),
            Cell::number(self.p_holm),
            Cell::number(self.boot_ci_low),
            Cell::number(self.boot_ci_high),
            Cell::number(self.p_cmh),
            Cell::number(self.p_cmh_holm),
            Cell::number(self.diff_mh),
            Cell::number(self.diff_mh_ci_low),
            Cell::number(self.diff_mh_ci_high),
            Cell::number(self.p_homogeneity),
        ]
    }
}

/// The 2xK chi-square of one rate metric across all arms with n > 0.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricTest {
    /// The metric.
    pub metric: Metric,
    /// The test, or why it is undefined (fewer than two arms, no events at all...).
    pub chi_square: std::result::Result<ChiSquare, String>,
}

/// Everything `summary.*` holds, plus what `summary.md` adds.
#[derive(Debug, Clone)]
pub struct Summary {
    /// The rows, in canonical order: metrics in the order of the rate table then
    /// `features_verified`; within a metric, arms in canonical order, baseline first.
    pub rows: Vec<SummaryRow>,
    /// Arms in canonical order, baseline first.
    pub arms: Vec<String>,
    /// The baseline arm (None only when there is no data).
    pub baseline: Option<String>,
    /// Confidence level of every interval.
    pub confidence: f64,
    /// 2xK chi-square per rate metric.
    pub tests: Vec<MetricTest>,
    /// `features_verified` per arm (None for an arm without trials).
    pub features: Vec<(String, Option<Describe>)>,
    /// What the manifest says about the run.
    pub info: RunInfo,
    /// The counts it was computed from.
    pub aggregate: Aggregate,
    /// Where the looks stopped, when the run is sequential.
    pub sequential: Option<super::sequential_outcome::SequentialOutcome>,
    /// Trials that could not run and retried shares, per arm (empty without
    /// failed attempts).
    pub attempts: super::attempts::Attempts,
}

impl Summary {
    /// The rows of one metric, in arm order.
    pub fn metric_rows<'a>(&'a self, metric: &'a str) -> impl Iterator<Item = &'a SummaryRow> {
        self.rows.iter().filter(move |r| r.metric == metric)
    }

    /// The table model of `summary.*`: one row per (arm, metric), and the Markdown.
    pub fn document(&self) -> Document {
        Document {
            name: "summary",
            columns: SUMMARY_COLUMNS.to_vec(),
            rows: self.rows.iter().map(SummaryRow::cells).collect(),
            markdown: summary_md::render(self),
        }
    }

    /// `summary.csv`.
    pub fn to_csv(&self) -> Result<String> {
        export_text(&self.document(), "csv")
    }

    /// `summary.json`: an array of row objects, nulls for empty cells.
    pub fn to_json(&self) -> Result<String> {
        export_text(&self.document(), "json")
    }

    /// The arms none of whose sessions is usable, each as "x (all 12 sessions ended in
    /// error)", in arm order: `summary.md` names them, and the commands that finish a
    /// run warn about them.
    pub fn unusable_arms(&self) -> Vec<String> {
        let unusable = self.aggregate.arms_without_usable_sessions();
        self.arms
            .iter()
            .filter_map(|arm| unusable.iter().find(|(a, _)| a == arm))
            .map(|(arm, n)| match n {
                1 => format!("{arm} (its only session ended in error)"),
                n => format!("{arm} (all {n} sessions ended in error)"),
            })
            .collect()
    }

    /// `summary.md`.
    pub fn to_markdown(&self) -> String {
        summary_md::render(self)
    }
}

/// Maps a statistics error that reaches the command line to bad input.
pub fn stats_error(what: &str) -> impl Fn(StatsError) -> Error + '_ {
    move |e| Error::BadInput(format!("{what}: {e}"))
}

fn check_confidence(confidence: f64) -> Result<()> {
    if confidence > 0.0 && confidence < 1.0 {
        Ok(())
    } else {
        Err(Error::BadInput(format!(
            "--confidence must be between 0 and 1 (exclusive), got {confidence}"
        )))
    }
}

/// Computes the summary of a run directory without writing anything.
///
/// `baseline`: the arm the others are compared with; default the manifest's `baseline`
/// field when it names an arm present in the data, else the first arm in canonical order.
/// An explicit baseline that is not in the data is bad input.
pub fn summarize(run_dir: &Path, baseline: Option<&str>, confidence: f64) -> Result<Summary> {
    check_confidence(confidence)?;
    let info = RunInfo::read(run_dir)?;
    let agg = aggregate(run_dir)?;
    let present = agg.arms();
    if let Some(b) = baseline
        && !present.iter().any(|a| a == b)
    {
        return Err(Error::BadInput(format!(
            "baseline arm '{b}' is not in '{}' (arms: {})",
            run_dir.display(),
            if present.is_empty() {
                "none".to_string()
            } else {
                present.join(", ")
            }
        )));
    }
    let manifest_baseline = info
        .baseline
        .as_deref()
        .filter(|b| present.iter().any(|a| a == b));
    let arms = info.order_arms(&present, baseline.or(manifest_baseline));
    let mut summary = compute(agg, info, arms, confidence);
    summary.sequential = super::sequential_outcome::SequentialOutcome::read(run_dir)?;
    summary.attempts = super::attempts::Attempts::read(run_dir, &summary.arms)?;
    Ok(summary)
}

/// Confidence of the intervals every command writes unless `--confidence` says otherwise.
pub const DEFAULT_CONFIDENCE: f64 = 0.95;

/// Computes the summary, writes `summary.csv`, `summary.json`, `summary.md` (each
/// atomically) and `plots/<metric>.svg` into `run_dir`, and returns it; the rendered
/// Markdown is [`Summary::to_markdown`]. Same input ⇒ byte-identical files.
///
/// This is what `loopbench run` calls when a run finishes (see [`summarize`] for
/// `baseline`); `confidence` is [`DEFAULT_CONFIDENCE`] unless the user asked otherwise.
pub fn write_summary(run_dir: &Path, baseline: Option<&str>, confidence: f64) -> Result<Summary> {
    let summary = summarize(run_dir, baseline, confidence)?;
    let doc = summary.document();
    for exporter in export::ALL {
        let file = run_dir.join(format!("{}.{}", doc.name, exporter.extension()));
        write_atomic(&file, &exporter.export(&doc)?)?;
    }
    let plots = run_dir.join(PLOTS_DIR);
    std::fs::create_dir_all(&plots)
        .io_context(|| format!("cannot create '{}'", plots.display()))?;
    plot::write_summary_plots(&summary, &plots)?;
    Ok(summary)
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Builds every row from the counts.
fn compute(agg: Aggregate, info: RunInfo, arms: Vec<String>, confidence: f64) -> Summary {
    let baseline = arms.first().cloned();
    let counts = |arm: &str| &agg.by_arm[arm];
    let mut rows = Vec::new();
    let mut tests = Vec::new();
    let boots = super::summary_bootstrap::bootstrap_arms(&agg, &arms, confidence);
    for metric in Metric::ALL {
        let mut metric_rows: Vec<SummaryRow> = Vec::new();
        let base = baseline.as_deref().map(|b| counts(b).get(metric));
        for (a, arm) in arms.iter().enumerate() {
            let c = counts(arm).get(metric);
            let mut row = SummaryRow::empty(arm, metric.name(), Some(c.k), c.n);
            row.rate = c.rate();
            if let Ok(ci) = stats::wilson(c.k, c.n, confidence) {
                row.ci_low = finite(ci.low);
                row.ci_high = finite(ci.high);
            }
            if let Some(ci) = boots[a][metric.index()] {
                row.boot_ci_low = finite(ci.low);
                row.boot_ci_high = finite(ci.high);
            }
            if let Some(b) = base.filter(|b| a > 0 && b.n > 0 && c.n > 0) {
                row.diff = finite(c.k as f64 / c.n as f64 - b.k as f64 / b.n as f64);
                if let Ok(ci) = stats::newcombe_diff(c.k, c.n, b.k, b.n, confidence) {
                    row.diff_ci_low = finite(ci.low);
                    row.diff_ci_high = finite(ci.high);
                }
                let table = [[c.k, c.n - c.k], [b.k, b.n - b.k]];
                row.p = stats::fisher_exact(table, Alternative::TwoSided)
                    .ok()
                    .and_then(finite);
            }
            if let Some(b) = baseline.as_deref().filter(|_| a > 0) {
                add_stratified(&mut row, &agg, arm, b, metric, confidence);
            }
            metric_rows.push(row);
        }
        adjust_holm(&mut metric_rows);
        adjust_holm_cmh(&mut metric_rows);
        let with_data: Vec<_> = arms
            .iter()
            .map(|arm| counts(arm).get(metric))
            .filter(|c| c.n > 0)
            .collect();
        let k: Vec<u64> = with_data.iter().map(|c| c.k).collect();
        let n: Vec<u64> = with_data.iter().map(|c| c.n).collect();
        tests.push(MetricTest {
            metric,
            chi_square: stats::chi2_2xk(&k, &n).map_err(|e| match e {
                StatsError::InvalidInput(m) | StatsError::Undefined(m) => m,
            }),
        });
        rows.extend(metric_rows);
    }
    let features: Vec<(String, Option<Describe>)> = arms
        .iter()
        .map(|arm| {
            (
                arm.clone(),
                stats::describe(&counts(arm).features_verified).ok(),
            )
        })
        .collect();
    rows.extend(features_rows(&agg, &arms, confidence));
    rows.extend(usage_rows(&agg, &arms));
    Summary {
        rows,
        baseline,
        arms,
        confidence,
        tests,
        features,
        info,
        aggregate: agg,
        sequential: None,
        attempts: Default::default(),
    }
}

/// The stratified columns of an arm's row against the baseline, when the two span
/// [`by_task::MIN_TASKS`] or more tasks on `metric` (tasks where either side has units).
fn add_stratified(
    row: &mut SummaryRow,
    agg: &Aggregate,
    arm: &str,
    baseline: &str,
    metric: Metric,
    confidence: f64,
) {
    let tasks = by_task::pair_tasks(
        agg.task_counts(arm, metric),
        agg.task_counts(baseline, metric),
    );
    let spanned = tasks.iter().filter(|t| t.arm.n > 0 || t.base.n > 0).count();
    if spanned < by_task::MIN_TASKS {
        return;
    }
    row.stratified = true;
    let Some(s) = by_task::stratified_of(&tasks, confidence) else {
        return;
    };
    row.p_cmh = s.cmh.map(|c| c.p).and_then(finite);
    if let Some(d) = s.diff {
        row.diff_mh = finite(d.estimate);
        row.diff_mh_ci_low = finite(d.ci.low);
        row.diff_mh_ci_high = finite(d.ci.high);
    }
    row.p_homogeneity = s.homogeneity.map(|h| h.p).and_then(finite);
}

/// Holm over the non-baseline rows whose `p_cmh` is defined: the family of `p_holm`.
fn adjust_holm_cmh(rows: &mut [SummaryRow]) {
    let defined: Vec<usize> = (1..rows.len())
        .filter(|&i| rows[i].p_cmh.is_some())
        .collect();
    let ps: Vec<f64> = defined.iter().filter_map(|&i| rows[i].p_cmh).collect();
    if let Ok(adjusted) = stats::holm(&ps) {
        for (&i, q) in defined.iter().zip(adjusted) {
            rows[i].p_cmh_holm = finite(q);
        }
    }
}

/// Holm over the non-baseline rows whose p is defined.
fn adjust_holm(rows: &mut [SummaryRow]) {
    let defined: Vec<usize> = (1..rows.len()).filter(|&i| rows[i].p.is_some()).collect();
    let ps: Vec<f64> = defined.iter().filter_map(|&i| rows[i].p).collect();
    if let Ok(adjusted) = stats::holm(&ps) {
        for (&i, q) in defined.iter().zip(adjusted) {
            rows[i].p_holm = finite(q);
        }
    }
}

/// Student t interval of a mean: scipy `t.interval(confidence, n - 1, loc=mean,
/// scale=sd / sqrt(n))`; None for n < 2.
fn mean_interval(d: &Describe, confidence: f64) -> Option<Interval> {
    let sd = d.sd?;
    let t = StudentsT::new(0.0, 1.0, (d.n - 1) as f64).ok()?;
    let half = t.inverse_cdf(1.0 - (1.0 - confidence) / 2.0) * sd / (d.n as f64).sqrt();
    Some(Interval {
        low: d.mean - half,
        high: d.mean + half,
    })
}

/// The `features_verified` rows: mean, its t interval, Welch diff and Mann–Whitney p.
fn features_rows(agg: &Aggregate, arms: &[String], confidence: f64) -> Vec<SummaryRow> {
    let values = |arm: &str| &agg.by_arm[arm].features_verified;
    let mut rows: Vec<SummaryRow> = Vec::new();
    for (a, arm) in arms.iter().enumerate() {
        let x = values(arm);
        let mut row = SummaryRow::empty(arm, FEATURES_VERIFIED, None, x.len() as u64);
        if let Ok(d) = stats::describe(x) {
            row.rate = finite(d.mean);
            if let Some(ci) = mean_interval(&d, confidence) {
                row.ci_low = finite(ci.low);
                row.ci_high = finite(ci.high);
            }
        }
        if a > 0 {
            let base = values(&arms[0]);
            if let Ok(w) = stats::welch(x, base, confidence) {
                row.diff = finite(w.diff);
                row.diff_ci_low = finite(w.low);
                row.diff_ci_high = finite(w.high);
            } else if !x.is_empty() && !base.is_empty() {
                // Welch is undefined (a sample of one, or both constant); the
                // difference of means still is.
                let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
                row.diff = finite(mean(x) - mean(base));
            }
            row.p = stats::mann_whitney(x, base).ok().and_then(|m| finite(m.p));
        }
        rows.push(row);
    }
    adjust_holm(&mut rows);
    rows
}

/// The `tokens_per_feature` and `cost_per_feature` rows: per arm, the sum over its
/// trials over the features they verified at the end (n: trials). Written only when
/// some arm reports that usage for every trial; an arm with a trial whose usage is
/// unknown, or with no feature verified, has an empty rate.
fn usage_rows(agg: &Aggregate, arms: &[String]) -> Vec<SummaryRow> {
    let per_feature = |usage: &[Option<f64>], features: &[f64]| -> Option<f64> {
        let total: Option<f64> = usage.iter().copied().sum();
        let features: f64 = features.iter().sum();
        total
            .filter(|_| !usage.is_empty() && features > 0.0)
            .map(|t| t / features)
    };
    let mut rows = Vec::new();
    type UsageOf = fn(&Counts) -> &[Option<f64>];
    let columns: [(&str, UsageOf); 2] = [
        (crate::metrics::TOKENS_PER_FEATURE, |c| &c.tokens),
        (crate::metrics::COST_PER_FEATURE, |c| &c.cost_usd),
    ];
    for (name, usage) in columns {
        let known = |c: &Counts| !usage(c).is_empty() && usage(c).iter().all(Option::is_some);
        if !arms
            .iter()
            .any(|arm| agg.by_arm.get(arm).is_some_and(known))
        {
            continue;
        }
        for arm in arms {
            let c = &agg.by_arm[arm];
            let mut row = SummaryRow::empty(arm, name, None, c.trials() as u64);
            row.rate = per_feature(usage(c), &c.features_verified).and_then(finite);
            rows.push(row);
        }
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mean_interval_matches_scipy_t_interval() {
        // scipy.stats.t.interval(0.95, 4, loc=x.mean(), scale=x.std(ddof=1)/sqrt(5))
        // for x = [12.1, 14.3, 11.8, 15.0, 13.2].
        let d = stats::describe(&[12.1, 14.3, 11.8, 15.0, 13.2]).unwrap();
        let ci = mean_interval(&d, 0.95).unwrap();
        let close = |got: f64, want: f64| ((got - want) / want).abs() < 1e-9;
        assert!(close(ci.low, 11.569836021904955), "{ci:?}");
        assert!(close(ci.high, 14.990163978095048), "{ci:?}");
        assert!(mean_interval(&stats::describe(&[3.0]).unwrap(), 0.95).is_none());
    }

    #[test]
    fn holm_skips_the_baseline_row_and_rows_without_p() {
        let mut rows = vec![
            SummaryRow::empty("base", "m", Some(1), 10),
            SummaryRow::empty("a", "m", Some(1), 10),
            SummaryRow::empty("b", "m", Some(1), 10),
            SummaryRow::empty("c", "m", Some(1), 10),
        ];
        rows[1].p = Some(0.01);
        rows[3].p = Some(0.04);
        adjust_holm(&mut rows);
        assert_eq!(rows[0].p_holm, None);
        assert_eq!(rows[1].p_holm, Some(0.02));
        assert_eq!(rows[2].p_holm, None);
        assert_eq!(rows[3].p_holm, Some(0.04));
    }
}
