//! `summary.csv`, `summary.json` and `summary.md`: one row per (arm, metric) with the
//! statistics of the statistics conventions (README, Reports), computed from the counts of [`super::aggregate`].

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::aggregate::{Aggregate, Counts, aggregate};
use super::by_task;
use super::export::{self, Document, Exporter, export_text};
use super::run_info::RunInfo;
use super::summary_data::{MetricTest, Summary, SummaryRow};
use super::{plot, summary_md};
use crate::error::{Error, IoContext, Result};
use crate::fsutil::write_atomic;
use crate::rates::{FEATURES_VERIFIED, Metric};
use crate::run_dir::RunDir;
use crate::stats::{self, Alternative, Describe, Interval, StatsError};

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
pub fn summarize(run_dir: &RunDir, baseline: Option<&str>, confidence: f64) -> Result<Summary> {
    check_confidence(confidence)?;
    let info = RunInfo::read(run_dir)?;
    let agg = aggregate(run_dir)?;
    let present = agg.arms();
    if let Some(b) = baseline
        && !present.iter().any(|a| a == b)
    {
        return Err(Error::BadInput(format!(
            "baseline arm '{b}' is not in '{}' (arms: {})",
            run_dir.path().display(),
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
pub fn write_summary(run_dir: &RunDir, baseline: Option<&str>, confidence: f64) -> Result<Summary> {
    // What a run's trials freed is not to stay resident under the summary.
    crate::malloc_arenas::release_free_memory();
    let summary = summarize(run_dir, baseline, confidence)?;
    let doc = summary.document();
    // Every exporter of `export::ALL`, in its order, each into the file `RunDir` names
    // for it, so that the summary's paths are written down in run_dir.rs alone.
    let files: [(&dyn Exporter, _); 3] = [
        (&export::Csv, run_dir.summary_csv()),
        (&export::Json, run_dir.summary_json()),
        (&export::Markdown, run_dir.summary_md()),
    ];
    for (exporter, file) in files {
        write_atomic(&file, &exporter.export(&doc)?)?;
    }
    let plots = run_dir.plots();
    std::fs::create_dir_all(&plots)
        .io_context(|| format!("cannot create '{}'", plots.display()))?;
    plot::write_summary_plots(&summary, &plots)?;
    Ok(summary)
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

/// Builds every row from the counts.
fn compute(mut agg: Aggregate, info: RunInfo, arms: Vec<String>, confidence: f64) -> Summary {
    let boots = super::summary_bootstrap::bootstrap_arms(&agg, &arms, confidence);
    agg.release_clusters();
    let baseline = arms.first().cloned();
    let counts = |arm: &str| &agg.by_arm[arm];
    let mut rows = Vec::new();
    let mut tests = Vec::new();
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
        (crate::rates::TOKENS_PER_FEATURE, |c| &c.tokens),
        (crate::rates::COST_PER_FEATURE, |c| &c.cost_usd),
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
