//! What a summary holds: one row per (arm, metric), the tests across arms, and what
//! `summary.md` adds. Computed in `summary.rs`, rendered by `summary_md.rs`, `plot.rs`
//! and `verdict.rs`.

use serde::Serialize;

use super::aggregate::Aggregate;
use super::export::Cell;
use super::run_info::RunInfo;
use crate::rates::Metric;
use crate::stats::{ChiSquare, Describe};

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
    pub(super) fn empty(arm: &str, metric: &str, k: Option<u64>, n: u64) -> SummaryRow {
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
    /// The counts it was computed from, without the bootstrap's clusters
    /// ([`Aggregate::release_clusters`]).
    pub aggregate: Aggregate,
    /// Where the looks stopped, when the run is sequential.
    pub sequential: Option<super::sequential_outcome::SequentialOutcome>,
    /// Trials that could not run and retried shares, per arm (empty without
    /// failed attempts).
    pub attempts: super::attempts::Attempts,
}
