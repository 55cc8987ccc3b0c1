//! The data model of the HTML pages: everything a page shows, as one JSON value that
//! the page's script renders (tables, plots, the verdict, every trial's sessions with
//! their evidence), built from a run's summary (its rows, from the CSVs and
//! `sessions.jsonl`, are streamed into the page by [`super::run_data`]) or from the
//! weekly trend.

use serde::Serialize;

use super::super::format::{fixed, level, pct, pp, pvalue};
use super::super::notes::{SIMULATED_NOTE, shard_note};
use super::super::plot::{Estimate, YAxis, rate_chart};
use super::super::summary_data::{Summary, SummaryRow};
use super::super::verdict::{Verdict, side_text};
use super::super::weekly::Weekly;
use super::by_task;
use super::page_table::{PageCell, PageTable};
use super::rows::{Rows, csv_columns};
use crate::error::Result;
use crate::rates::{Better, Unit};
use crate::rates::{FEATURES_VERIFIED, Metric};
use crate::run_dir::RunDir;

// The page filters with a bit per metric in a JavaScript number: 53 bits at most.
const _: () = assert!(Metric::ALL.len() <= 53);

/// Session columns the page shows on each session's block, beyond those the rates
/// read, when the table has them.
const EXTRA_SESSION_COLUMNS: [&str; 6] = [
    "newly_claimed",
    "newly_verified",
    "regressions",
    "entries_added",
    "flaky",
    "verify_timeouts",
];

/// The whole page: what the script renders.
#[derive(Debug, Clone, Serialize)]
pub struct Page {
    /// `run` or `weekly`: a weekly page has no trials.
    pub kind: &'static str,
    /// The page title.
    pub title: String,
    /// Notes shown under the title (the simulated agent's, skipped runs).
    pub notes: Vec<String>,
    /// The verdict, on a run's page.
    pub verdict: Option<PageVerdict>,
    /// The tables, each with sortable columns.
    pub tables: Vec<PageTable>,
    /// The plots as `data:` URIs of their SVG.
    pub plots: Vec<PagePlot>,
    /// The rate metrics, in table order: the bit of metric i in `against` is 1 << i.
    pub metrics: Vec<PageMetric>,
    /// The sessions: `sessions.csv`'s columns, then `against` and `evidence` (or, when
    /// `timelines` is set, a summary of each). Empty on a run's page until it is
    /// written: the rows are streamed into it.
    pub sessions: Rows,
    /// The trials: `trials.csv`'s columns, then `against` (streamed, as `sessions`).
    pub trials: Rows,
    /// Session columns shown on each session's block.
    pub shown: Vec<String>,
    /// The directory beside the page that holds the sessions of a large run, loaded
    /// when a trial is shown (absent when the page holds them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timelines: Option<String>,
}

/// The verdict as the page shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PageVerdict {
    /// The heading line.
    pub heading: String,
    /// One line per metric on which some arm differs.
    pub lines: Vec<PageVerdictLine>,
    /// The metrics where none differs, and those not compared.
    pub rest: String,
    /// Sample-size warnings.
    pub warnings: Vec<String>,
    /// Where a sequential run's looks stopped, and what its p-values are.
    pub sequential: Option<String>,
    /// Trials that could not run and unequal retried shares (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    /// Arms with coding sessions the harness could not observe (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unobservable: Vec<String>,
    /// Arms every session of which failed `agent`, counted (absent when none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub agent_failures: Vec<String>,
}

/// One metric of the verdict.
#[derive(Debug, Clone, Serialize)]
pub struct PageVerdictLine {
    /// The metric.
    pub metric: String,
    /// Arms worse than the baseline (empty when none).
    pub worse: String,
    /// Arms better than the baseline (empty when none).
    pub better: String,
}

/// A plot.
#[derive(Debug, Clone, Serialize)]
pub struct PagePlot {
    /// The metric.
    pub name: String,
    /// `data:image/svg+xml;base64,...`: an image, so nothing in it can run.
    pub src: String,
}

/// A rate metric as the page's filter knows it.
#[derive(Debug, Clone, Serialize)]
pub struct PageMetric {
    /// Its name.
    pub name: &'static str,
    /// What it counts.
    pub meaning: &'static str,
    /// `session` or `trial`.
    pub unit: &'static str,
    /// `lower` or `higher`.
    pub better: &'static str,
}

/// The page of a run: the verdict, the summary tables and plots; its trials and
/// sessions are streamed into it as it is written
/// ([`super::run_data::write_run_data`]).
pub fn run_page(run_dir: &RunDir, summary: &Summary) -> Result<Page> {
    let title = match &summary.info.suite {
        Some(suite) => format!("loopbench report: {suite}"),
        None => "loopbench report".to_string(),
    };
    let mut notes = Vec::new();
    if summary.info.simulated {
        notes.push(format!(
            "{SIMULATED_NOTE}: they come from the built-in sim agent, not from a real model."
        ));
    }
    if let Some(shard) = &summary.info.shard {
        notes.push(format!("{}.", shard_note(shard)));
    }
    notes.extend(
        summary
            .unusable_arms()
            .into_iter()
            .map(|a| format!("arm with no usable sessions: {a}")),
    );
    let shown = shown_columns(&csv_columns(&run_dir.sessions_csv())?);
    Ok(Page {
        kind: "run",
        title,
        notes,
        verdict: summary.baseline.as_ref().map(|_| page_verdict(summary)),
        tables: summary_tables(summary),
        plots: summary_plots(summary)?,
        metrics: page_metrics(),
        sessions: Rows::default(),
        trials: Rows::default(),
        shown,
        timelines: None,
    })
}

/// The page of the weekly trend: its tables and trend plots.
pub fn weekly_page(weekly: &Weekly) -> Result<Page> {
    let mut notes = Vec::new();
    if weekly.simulated {
        notes.push(format!(
            "{SIMULATED_NOTE} (for the runs from the sim agent)."
        ));
    }
    let span = match (weekly.weeks.first(), weekly.weeks.last()) {
        (Some(a), Some(b)) => format!("{a} to {b}"),
        _ => "no weeks".into(),
    };
    notes.push(format!(
        "{} runs, {span}, pooled per ISO week of their start (UTC); Wilson intervals at {}. \
         {} regressions flagged (worse than the arm's previous week by more than {} with \
         one-sided Fisher p < {}).",
        weekly.runs.len(),
        level(weekly.confidence),
        weekly.regressions(),
        pp(weekly.rule.max_increase).trim_start_matches('+'),
        weekly.rule.alpha,
    ));
    notes.extend(weekly.skipped.iter().map(|s| format!("skipped: {s}")));
    let mut tables = Vec::new();
    let mut plots = Vec::new();
    for metric in Metric::ALL {
        let rows: Vec<_> = weekly.rows.iter().filter(|r| r.metric == metric).collect();
        if rows.is_empty() {
            continue;
        }
        let columns = [
            "week",
            "arm",
            "runs",
            "k",
            "n",
            "rate",
            "CI",
            "vs previous week",
            "p",
            "flag",
        ];
        tables.push(PageTable {
            id: format!("weekly:{metric}"),
            title: metric.name().to_string(),
            note: metric.definition().to_string(),
            columns: columns.map(String::from).to_vec(),
            rows: rows
                .iter()
                .map(|r| {
                    let j = r.vs_previous;
                    let regression = j.is_some_and(|j| j.regression);
                    vec![
                        PageCell::text(r.week.to_string()),
                        PageCell::text(r.arm.clone()),
                        PageCell::number(Some(r.runs as f64), |x| fixed(x, 0)),
                        PageCell::number(Some(r.count.k as f64), |x| fixed(x, 0)),
                        PageCell::number(Some(r.count.n as f64), |x| fixed(x, 0)),
                        PageCell::number(r.count.rate(), pct),
                        PageCell::text(
                            r.ci.map(|(l, h)| format!("{} … {}", pct(l), pct(h)))
                                .unwrap_or_default(),
                        ),
                        PageCell::number(j.and_then(|j| j.change), pp),
                        PageCell::number(j.and_then(|j| j.p), pvalue),
                        PageCell::text(if regression { "REGRESSION" } else { "" }),
                    ]
                })
                .collect(),
        });
        plots.push(PagePlot {
            name: metric.name().to_string(),
            src: svg_data_uri(&weekly.chart(metric)?),
        });
    }
    Ok(Page {
        kind: "weekly",
        title: "loopbench weekly report".into(),
        notes,
        verdict: None,
        tables,
        plots,
        metrics: page_metrics(),
        sessions: Rows::default(),
        trials: Rows::default(),
        shown: Vec::new(),
        timelines: None,
    })
}

fn page_metrics() -> Vec<PageMetric> {
    Metric::ALL
        .iter()
        .map(|m| {
            let d = m.def();
            PageMetric {
                name: d.name,
                meaning: d.meaning,
                unit: match d.unit {
                    Unit::Session => "session",
                    Unit::Trial => "trial",
                },
                better: match d.better {
                    Better::Lower => "lower",
                    Better::Higher => "higher",
                },
            }
        })
        .collect()
}

fn page_verdict(summary: &Summary) -> PageVerdict {
    let v = Verdict::of(summary);
    PageVerdict {
        heading: format!(
            "Arms that differ from the baseline {} after Holm (adjusted p < {})",
            v.baseline.as_deref().unwrap_or(""),
            v.alpha
        ),
        lines: v
            .differing()
            .map(|m| PageVerdictLine {
                metric: m.metric.clone(),
                worse: side_text(m, false, false),
                better: side_text(m, true, false),
            })
            .collect(),
        rest: v.no_difference_line(),
        warnings: v.warnings.clone(),
        failures: v.failures.clone(),
        unobservable: v.unobservable.clone(),
        agent_failures: v.agent_failures.clone(),
        sequential: v.sequential.as_ref().map(|seq| {
            let mut text = format!("Sequential run on {}: {}.", seq.metric, seq.stop_text());
            for crossing in seq.crossing_texts() {
                text += &format!(" Crossed: {crossing}.");
            }
            text + &format!(" Note: {}.", seq.adjustment_note())
        }),
    }
}

/// One table per metric, as in `summary.md`.
fn summary_tables(s: &Summary) -> Vec<PageTable> {
    let conf = level(s.confidence);
    let alpha = (((1.0 - s.confidence) * 1e9).round()) / 1e9;
    let baseline = s.baseline.clone().unwrap_or_default();
    let interval = |l: Option<f64>, h: Option<f64>, f: &dyn Fn(f64) -> String| match (l, h) {
        (Some(l), Some(h)) => format!("{} … {}", f(l), f(h)),
        _ => String::new(),
    };
    let holm = |row: &SummaryRow| {
        PageCell::number(row.p_holm, |p| {
            if p < alpha {
                format!("{} *", pvalue(p))
            } else {
                pvalue(p)
            }
        })
    };
    let count = |x: u64| PageCell::number(Some(x as f64), |x| fixed(x, 0));
    let mut tables = Vec::new();
    for metric in Metric::ALL {
        let stratified = s.metric_rows(metric.name()).any(|r| r.stratified);
        let mut columns = vec![
            "arm".to_string(),
            "k".into(),
            "n".into(),
            "rate".into(),
            format!("{conf} CI"),
            "boot CI".into(),
            format!("diff vs {baseline}"),
            "diff CI".into(),
            "p".into(),
            "p (Holm)".into(),
        ];
        if stratified {
            columns.extend(by_task::STRATIFIED_COLUMNS.map(String::from));
        }
        let rows = s
            .metric_rows(metric.name())
            .map(|r| {
                let mut cells = vec![
                    PageCell::text(r.arm.clone()),
                    count(r.k.unwrap_or(0)),
                    count(r.n),
                    PageCell::number(r.rate, pct),
                    PageCell::text(interval(r.ci_low, r.ci_high, &pct)),
                    PageCell::text(interval(r.boot_ci_low, r.boot_ci_high, &pct)),
                    PageCell::number(r.diff, pp),
                    PageCell::text(interval(r.diff_ci_low, r.diff_ci_high, &pp)),
                    PageCell::number(r.p, pvalue),
                    holm(r),
                ];
                if stratified {
                    cells.extend(by_task::stratified_cells(r, alpha));
                }
                cells
            })
            .collect();
        tables.push(PageTable {
            id: metric.name().to_string(),
            title: metric.name().to_string(),
            note: metric.definition().to_string(),
            columns,
            rows,
        });
        if stratified {
            tables.push(by_task::task_table(s, metric));
        }
    }
    let two = |x: f64| fixed(x, 2);
    let signed = |x: f64| format!("{x:+.2}");
    tables.push(PageTable {
        id: FEATURES_VERIFIED.to_string(),
        title: FEATURES_VERIFIED.to_string(),
        note: "features verified at the end of each trial: mean with Student's t interval, \
               Welch's difference, Mann–Whitney U p"
            .into(),
        columns: [
            "arm".to_string(),
            "trials".into(),
            "mean".into(),
            format!("{conf} CI"),
            format!("diff vs {baseline}"),
            "diff CI".into(),
            "p".into(),
            "p (Holm)".into(),
        ]
        .to_vec(),
        rows: s
            .metric_rows(FEATURES_VERIFIED)
            .map(|r| {
                vec![
                    PageCell::text(r.arm.clone()),
                    count(r.n),
                    PageCell::number(r.rate, two),
                    PageCell::text(interval(r.ci_low, r.ci_high, &two)),
                    PageCell::number(r.diff, signed),
                    PageCell::text(interval(r.diff_ci_low, r.diff_ci_high, &signed)),
                    PageCell::number(r.p, pvalue),
                    holm(r),
                ]
            })
            .collect(),
    });
    tables
}

/// The same plots as `plots/*.svg`, drawn again from the summary.
fn summary_plots(s: &Summary) -> Result<Vec<PagePlot>> {
    let conf = level(s.confidence);
    let names = Metric::ALL
        .map(|m| (m.name(), YAxis::Rate, format!("rate ({conf} Wilson CI)")))
        .into_iter()
        .chain([(
            FEATURES_VERIFIED,
            YAxis::Count,
            format!("mean per trial ({conf} CI)"),
        )]);
    let mut plots = Vec::new();
    for (name, y_axis, y_desc) in names {
        let rows: Vec<&SummaryRow> = s.metric_rows(name).collect();
        let arms: Vec<String> = rows.iter().map(|r| r.arm.clone()).collect();
        let estimates: Vec<Option<Estimate>> = rows
            .iter()
            .map(|r| {
                r.rate.map(|value| Estimate {
                    value,
                    low: r.ci_low.unwrap_or(value),
                    high: r.ci_high.unwrap_or(value),
                })
            })
            .collect();
        let svg = rate_chart(name, &arms, &estimates, y_axis, &y_desc)?;
        plots.push(PagePlot {
            name: name.to_string(),
            src: svg_data_uri(&svg),
        });
    }
    Ok(plots)
}

fn svg_data_uri(svg: &str) -> String {
    format!("data:image/svg+xml;base64,{}", base64(svg.as_bytes()))
}

/// Standard base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i)) as usize & 63]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The rates' session columns, then the extras, each once, when the table has them.
fn shown_columns(columns: &[String]) -> Vec<String> {
    let mut shown: Vec<String> = Vec::new();
    let from_rates = Metric::ALL
        .into_iter()
        .filter(|m| m.is_session_level())
        .flat_map(|m| m.def().tally.columns())
        .map(|(c, _)| c);
    for c in from_rates.chain(EXTRA_SESSION_COLUMNS) {
        if columns.iter().any(|x| x == c) && !shown.iter().any(|x| x == c) {
            shown.push(c.to_string());
        }
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_test_vectors() {
        for (input, want) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(input.as_bytes()), want);
        }
    }
}
