//! The stratified part of `report.html`: the columns a metric's pooled table gains when
//! its arms span two or more tasks, and the per-task table shown beside it.

use super::super::aggregate::Count;
use super::super::by_task::pair_tasks;
use super::super::format::{fixed, pct, pp, pvalue};
use super::super::summary_data::{Summary, SummaryRow};
use super::page_table::{PageCell, PageTable};
use crate::rates::Metric;

/// Headings of the stratified columns, after the pooled ones.
pub const STRATIFIED_COLUMNS: [&str; 4] = [
    "diff (MH, by task)",
    "MH CI",
    "p (CMH, Holm)",
    "p (same by task)",
];

/// The cells of [`STRATIFIED_COLUMNS`] of one row; a CMH Holm p below `alpha` is marked.
pub fn stratified_cells(r: &SummaryRow, alpha: f64) -> Vec<PageCell> {
    let interval = match (r.diff_mh_ci_low, r.diff_mh_ci_high) {
        (Some(l), Some(h)) => format!("{} … {}", pp(l), pp(h)),
        _ => String::new(),
    };
    vec![
        PageCell::number(r.diff_mh, pp),
        PageCell::text(interval),
        PageCell::number(r.p_cmh_holm, |p| {
            if p < alpha {
                format!("{} *", pvalue(p))
            } else {
                pvalue(p)
            }
        }),
        PageCell::number(r.p_homogeneity, pvalue),
    ]
}

/// The per-task table of one metric: per non-baseline arm and task, both sides' k / n
/// and rate and the difference.
pub fn task_table(s: &Summary, metric: Metric) -> PageTable {
    let baseline = s.baseline.clone().unwrap_or_default();
    let count = |x: u64| PageCell::number(Some(x as f64), |x| fixed(x, 0));
    let mut rows = Vec::new();
    for arm in s.arms.iter().skip(1) {
        let tasks = pair_tasks(
            s.aggregate.task_counts(arm, metric),
            s.aggregate.task_counts(&baseline, metric),
        );
        for t in tasks {
            let side = |c: Count| [count(c.k), count(c.n), PageCell::number(c.rate(), pct)];
            let mut row = vec![PageCell::text(arm.clone()), PageCell::text(t.task.clone())];
            row.extend(side(t.arm));
            row.extend(side(t.base));
            row.push(PageCell::number(t.diff(), pp));
            rows.push(row);
        }
    }
    PageTable {
        id: format!("{}:by_task", metric.name()),
        title: format!("{} by task", metric.name()),
        note: format!(
            "each arm against {baseline} within each task: the stratified columns above \
             pool these tables"
        ),
        columns: vec![
            "arm".into(),
            "task".into(),
            "k".into(),
            "n".into(),
            "rate".into(),
            format!("{baseline} k"),
            format!("{baseline} n"),
            format!("{baseline} rate"),
            "diff".into(),
        ],
        rows,
    }
}
