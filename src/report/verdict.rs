//! The verdict of a run, first thing a reader sees: per metric, which arms differ from
//! the baseline after Holm, in which direction, and whether that is better or worse (the
//! metric table knows the better direction); and the sample-size warnings, once for the
//! whole run. A pure model of the summary rows, rendered as text (the console, `show`)
//! and as Markdown (the top of `summary.md`).

use super::by_task;
use super::format::{fixed, pp, pvalue};
use super::notes::shard_note;
use super::sequential_outcome::SequentialOutcome;
use super::summary_data::{Summary, SummaryRow};
use crate::rates::{Better, FEATURES_VERIFIED, better_of};

/// A rate or mean from fewer units than this is named in the sample-size warnings: a
/// difference there has to be very large to be found at all.
pub const SMALL_SAMPLE: u64 = 30;

/// Which way an arm differs from the baseline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The arm's rate (or mean) is higher.
    Higher,
    /// The arm's rate (or mean) is lower.
    Lower,
}

/// One arm that differs from the baseline on one metric after Holm (stratified by task
/// when the comparison spans two or more tasks).
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The arm.
    pub arm: String,
    /// rate(arm) − rate(baseline), the Mantel–Haenszel difference when stratified (a
    /// difference of means for `features_verified`).
    pub diff: f64,
    /// The Holm-adjusted p (of the CMH test when stratified).
    pub p_holm: f64,
    /// Which way it differs.
    pub direction: Direction,
    /// Whether that direction is the better one.
    pub better: bool,
}

/// The verdict on one metric.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricVerdict {
    /// The metric's name in `summary.*`.
    pub metric: String,
    /// Arms that differ after Holm, in arm order.
    pub findings: Vec<Finding>,
    /// Non-baseline arms with a Holm p (compared at all).
    pub compared: usize,
    /// Judged stratified by task (`p_cmh_holm`, `diff_mh`) for some arm.
    pub stratified: bool,
    /// Arms whose effect differs by task (`p_homogeneity` below
    /// [`by_task::HOMOGENEITY_ALPHA`]), in arm order.
    pub heterogeneous: Vec<String>,
}

/// The verdict of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// The baseline arm (None when the run has no data).
    pub baseline: Option<String>,
    /// Holm p below this is a difference: 1 − the confidence level.
    pub alpha: f64,
    /// One verdict per metric, in the order of `summary.*`.
    pub metrics: Vec<MetricVerdict>,
    /// Sample-size warnings, each once for the whole run.
    pub warnings: Vec<String>,
    /// The numbers come from the simulated agent.
    pub simulated: bool,
    /// `I/N` when the run is one shard of a study.
    pub shard: Option<String>,
    /// Where a sequential run's looks stopped (None for any other run).
    pub sequential: Option<SequentialOutcome>,
    /// Trials that could not run, arms with no counted trial, unequal retried shares
    /// (empty when no attempt failed): failures outside the agents, never counted.
    pub failures: Vec<String>,
    /// Arms whose end of some coding session the harness could not observe, each as a
    /// sentence with its count: out of the list-based rates, so that an arm's other
    /// rates measure fewer of its sessions.
    pub unobservable: Vec<String>,
    /// Arms every session of which failed `agent`: counted, as the agent's.
    pub agent_failures: Vec<String>,
}

impl Verdict {
    /// The verdict of a summary.
    pub fn of(summary: &Summary) -> Verdict {
        let alpha = 1.0 - summary.confidence;
        // 1 − 0.95 is 0.050000000000000044: round away the representation error.
        let alpha = (alpha * 1e9).round() / 1e9;
        let mut v = decide(&summary.rows, summary.baseline.as_deref(), alpha);
        v.simulated = summary.info.simulated;
        v.shard = summary.info.shard.clone();
        v.sequential = summary.sequential.clone();
        v.failures = summary.attempts.lines();
        v.agent_failures = summary.attempts.agent_failure_lines();
        v.unobservable = unobservable_lines(&summary.rows);
        v
    }

    /// Metrics on which some arm differs from the baseline.
    pub fn differing(&self) -> impl Iterator<Item = &MetricVerdict> {
        self.metrics.iter().filter(|m| !m.findings.is_empty())
    }

    /// The verdict as plain text, one line per metric with a difference: what the
    /// console prints after a run and what `show RUN_DIR` opens with.
    pub fn to_text(&self) -> String {
        let Some(baseline) = &self.baseline else {
            let mut out = String::from("Verdict: no sessions or trials in this run.\n");
            for f in self.agent_failures.iter().chain(&self.failures) {
                out += &wrap_hanging("  ", f, TEXT_WIDTH);
            }
            return out;
        };
        let mut out = format!(
            "Verdict (vs baseline {baseline}; Holm-adjusted p < {}):\n",
            self.alpha
        );
        if self.simulated {
            out += "  (simulated agent: these numbers are synthetic)\n";
        }
        if let Some(shard) = &self.shard {
            out += &wrap_hanging("  ", &format!("({})", shard_note(shard)), TEXT_WIDTH);
        }
        let width = self
            .metrics
            .iter()
            .map(|m| m.metric.len())
            .max()
            .unwrap_or(0);
        for m in self.differing() {
            let lead = format!("  {:width$}  ", m.metric);
            out += &wrap(&lead, &findings_text(m, false), TEXT_WIDTH);
        }
        out += &wrap_hanging("  ", &self.no_difference_line(), TEXT_WIDTH);
        if let Some(note) = self.stratified_note() {
            out += &wrap_hanging("  ", &format!("({note})"), TEXT_WIDTH);
        }
        out += &self.by_task_text(width);
        if let Some(seq) = &self.sequential {
            out += &sequential_text(seq);
        }
        out += &self.lists_text();
        out
    }

    /// The metrics whose effect differs by task, with the arms it differs for.
    fn by_task_text(&self, width: usize) -> String {
        let differing_by_task: Vec<&MetricVerdict> = self
            .metrics
            .iter()
            .filter(|m| !m.heterogeneous.is_empty())
            .collect();
        let mut out = String::new();
        if !differing_by_task.is_empty() {
            out += &format!(
                "The effect differs by task (Breslow–Day p < {}; summary.md has the per-task tables):\n",
                by_task::HOMOGENEITY_ALPHA
            );
            for m in differing_by_task {
                let lead = format!("  {:width$}  ", m.metric);
                out += &wrap(&lead, &m.heterogeneous.join(", "), TEXT_WIDTH);
            }
        }
        out
    }

    /// The verdict's closing lists: sample size warnings, the agents' failures, then
    /// the failures outside the agents.
    fn lists_text(&self) -> String {
        let mut out = String::new();
        if !self.warnings.is_empty() {
            out += "Sample size:\n";
            for w in &self.warnings {
                out += &wrap_hanging("  ", w, TEXT_WIDTH);
            }
        }
        if !self.unobservable.is_empty() {
            out += "Unobservable sessions (out of the list-based rates):\n";
            for u in &self.unobservable {
                out += &wrap_hanging("  ", u, TEXT_WIDTH);
            }
        }
        if !self.agent_failures.is_empty() {
            out += "Failures of the agents (counted):\n";
            for f in &self.agent_failures {
                out += &wrap_hanging("  ", f, TEXT_WIDTH);
            }
        }
        if !self.failures.is_empty() {
            out += "Failures outside the agents (not counted):\n";
            for f in &self.failures {
                out += &wrap_hanging("  ", f, TEXT_WIDTH);
            }
        }
        out
    }

    /// The verdict as the opening section of `summary.md`.
    pub fn to_markdown(&self) -> String {
        let Some(baseline) = &self.baseline else {
            return self
                .agent_failures
                .iter()
                .chain(&self.failures)
                .map(|f| format!("- {f}\n"))
                .collect();
        };
        let mut out = format!(
            "## Verdict\n\nArms that differ from the baseline **{baseline}** after Holm \
             (adjusted p < {}), and whether the difference is better or worse:\n\n",
            self.alpha
        );
        for m in self.differing() {
            out += &format!("- **{}**: {}\n", m.metric, findings_text(m, true));
        }
        out += &format!("- {}\n", self.no_difference_line());
        for line in self.heterogeneity_lines() {
            out += &format!("- {line}\n");
        }
        if let Some(note) = self.stratified_note() {
            out += &format!("\n{}.\n", capitalize(&note));
        }
        if let Some(seq) = &self.sequential {
            out += &format!(
                "\n**Sequential run** on `{}`: {}.",
                seq.metric,
                seq.stop_text()
            );
            for crossing in seq.crossing_texts() {
                out += &format!(" Crossed: {crossing}.");
            }
            out += &format!(" Note: {}.\n", seq.adjustment_note());
        }
        if !self.warnings.is_empty() {
            out += "\nSample size:\n\n";
            for w in &self.warnings {
                out += &format!("- {w}\n");
            }
        }
        if !self.unobservable.is_empty() {
            out += "\nUnobservable sessions (out of the list-based rates):\n\n";
            for u in &self.unobservable {
                out += &format!("- {u}\n");
            }
        }
        if !self.agent_failures.is_empty() {
            out += "\nFailures of the agents (counted, as the agent's):\n\n";
            for f in &self.agent_failures {
                out += &format!("- {f}\n");
            }
        }
        if !self.failures.is_empty() {
            out += "\nFailures outside the agents (not counted; failures.jsonl has every failed attempt):\n\n";
            for f in &self.failures {
                out += &format!("- {f}\n");
            }
        }
        out
    }

    /// How the metrics with two or more tasks were judged; None when none was.
    pub fn stratified_note(&self) -> Option<String> {
        let stratified: Vec<&str> = self
            .metrics
            .iter()
            .filter(|m| m.stratified)
            .map(|m| m.metric.as_str())
            .collect();
        if stratified.is_empty() {
            return None;
        }
        let rate_metrics = self
            .metrics
            .iter()
            .filter(|m| m.compared > 0 && m.metric != FEATURES_VERIFIED)
            .count();
        let which = if stratified.len() == rate_metrics {
            "every rate metric".to_string()
        } else {
            stratified.join(", ")
        };
        Some(format!(
            "stratified by task: {which} judged within each task, by the \
             Cochran–Mantel–Haenszel p (Holm) and the Mantel–Haenszel difference"
        ))
    }

    /// One line per metric whose effect differs by task for some arm (Breslow–Day p
    /// below [`by_task::HOMOGENEITY_ALPHA`]).
    pub fn heterogeneity_lines(&self) -> Vec<String> {
        self.metrics
            .iter()
            .filter(|m| !m.heterogeneous.is_empty())
            .map(|m| {
                format!(
                    "{}: the effect differs by task for {} (Breslow–Day p < {}): see the \
                     per-task table",
                    m.metric,
                    m.heterogeneous.join(", "),
                    by_task::HOMOGENEITY_ALPHA
                )
            })
            .collect()
    }

    /// The line on the metrics where no arm differs, and those not compared at all.
    pub fn no_difference_line(&self) -> String {
        let same: Vec<&str> = self
            .metrics
            .iter()
            .filter(|m| m.findings.is_empty() && m.compared > 0)
            .map(|m| m.metric.as_str())
            .collect();
        let unjudged: Vec<&str> = self
            .metrics
            .iter()
            .filter(|m| m.compared == 0)
            .map(|m| m.metric.as_str())
            .collect();
        if self.metrics.iter().all(|m| m.compared == 0) {
            return "nothing to compare: no arm besides the baseline has data".to_string();
        }
        let mut line = if same.is_empty() {
            "every metric compared shows a difference".to_string()
        } else {
            format!("no arm differs on: {}", same.join(", "))
        };
        if !unjudged.is_empty() {
            line += &format!("; not compared (no data): {}", unjudged.join(", "));
        }
        line
    }
}

/// One sentence per arm with unobservable coding sessions, in row order: "arm json:
/// 3 of 40 coding sessions (7.5%) could not be observed".
fn unobservable_lines(rows: &[SummaryRow]) -> Vec<String> {
    let name = crate::rates::Metric::Unobservable.name();
    rows.iter()
        .filter(|r| r.metric == name)
        .filter_map(|r| {
            let k = r.k.filter(|&k| k > 0)?;
            Some(format!(
                "arm {}: {k} of {} coding sessions ({}) could not be observed; `compare` \
                 fails when this rate differs between runs by more than --max-increase",
                r.arm,
                r.n,
                super::format::pct(r.rate.unwrap_or(0.0))
            ))
        })
        .collect()
}

/// The console verdict's lines break at findings past this many characters.
const TEXT_WIDTH: usize = 100;

/// `text` after `lead`, broken after a ", " or "; " so that no line is longer than
/// `width` (unless one finding is), continuation lines indented as far as `lead`.
fn wrap(lead: &str, text: &str, width: usize) -> String {
    wrap_indented(lead, text, width, lead.chars().count())
}

/// [`wrap`] with continuation lines indented two more than `lead`, for a paragraph that
/// stands under a heading line.
fn wrap_hanging(lead: &str, text: &str, width: usize) -> String {
    wrap_indented(lead, text, width, lead.chars().count() + 2)
}

fn wrap_indented(lead: &str, text: &str, width: usize, indent: usize) -> String {
    let indent = " ".repeat(indent);
    let mut out = String::new();
    let mut line = lead.to_string();
    let mut fresh = true;
    for piece in text.split_inclusive([',', ';']) {
        let piece = if fresh { piece.trim_start() } else { piece };
        if !fresh && line.chars().count() + piece.trim_end().chars().count() > width {
            out += line.trim_end();
            out += "\n";
            line = indent.clone() + piece.trim_start();
        } else {
            line += piece;
        }
        fresh = false;
    }
    out += line.trim_end();
    out += "\n";
    out
}

/// "worse: markdown +6.9 pp (p 0.020); better: gate -9.8 pp (p 2.9e-12)".
fn findings_text(m: &MetricVerdict, markdown: bool) -> String {
    let mut parts = Vec::new();
    for (better, word) in [(false, "worse"), (true, "better")] {
        let listed = side_text(m, better, markdown);
        if !listed.is_empty() {
            parts.push(format!("{word}: {listed}"));
        }
    }
    parts.join("; ")
}

/// The findings of one side (better or worse) of a metric: "markdown +6.9 pp (p
/// 0.020), yaml +6.6 pp (p 0.020)"; empty when there is none.
pub fn side_text(m: &MetricVerdict, better: bool, markdown: bool) -> String {
    let show = |f: &Finding| {
        let diff = if m.metric == FEATURES_VERIFIED {
            format!("{} features", signed(f.diff))
        } else {
            pp(f.diff)
        };
        let arm = if markdown {
            format!("`{}`", f.arm)
        } else {
            f.arm.clone()
        };
        format!("{arm} {diff} (p {})", pvalue(f.p_holm))
    };
    m.findings
        .iter()
        .filter(|f| f.better == better)
        .map(show)
        .collect::<Vec<_>>()
        .join(", ")
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

fn signed(x: f64) -> String {
    let text = fixed(x, 2);
    if x >= 0.0 { format!("+{text}") } else { text }
}

/// The verdict of summary rows (in `summary.*` order, baseline row first within each
/// metric): a non-baseline row with `p_holm < alpha` and a nonzero `diff` is a finding;
/// an arm with n = 0 or n < [`SMALL_SAMPLE`] on a metric is named in a warning. A row
/// whose metric has no declared direction (the usage-per-feature rows, which have no
/// test) is left out.
pub fn decide(rows: &[SummaryRow], baseline: Option<&str>, alpha: f64) -> Verdict {
    let mut metrics: Vec<MetricVerdict> = Vec::new();
    // (arm, metric, n) of every small sample, in row order.
    let mut small: Vec<(&str, &str, u64)> = Vec::new();
    for row in rows {
        let Some(better) = better_of(&row.metric) else {
            continue;
        };
        if metrics.last().is_none_or(|m| m.metric != row.metric) {
            metrics.push(MetricVerdict {
                metric: row.metric.clone(),
                findings: Vec::new(),
                compared: 0,
                stratified: false,
                heterogeneous: Vec::new(),
            });
        }
        if row.n < SMALL_SAMPLE {
            small.push((&row.arm, &row.metric, row.n));
        }
        if Some(row.arm.as_str()) == baseline {
            continue;
        }
        let current = metrics.last_mut().expect("pushed above");
        judge_row(current, row, better, alpha);
    }
    Verdict {
        baseline: baseline.map(str::to_string),
        alpha,
        metrics,
        warnings: sample_warnings(&small),
        simulated: false,
        shard: None,
        sequential: None,
        failures: Vec::new(),
        unobservable: Vec::new(),
        agent_failures: Vec::new(),
    }
}

/// Adds a non-baseline row of `current`'s metric to its verdict: whether the effect
/// differs by task, whether the row was compared, and a finding when it differs.
fn judge_row(current: &mut MetricVerdict, row: &SummaryRow, better: Better, alpha: f64) {
    // Two or more tasks: the stratified columns judge, the pooled ones do not.
    let (p_holm, diff) = if row.stratified {
        (row.p_cmh_holm, row.diff_mh)
    } else {
        (row.p_holm, row.diff)
    };
    if row
        .p_homogeneity
        .is_some_and(|p| p < by_task::HOMOGENEITY_ALPHA)
    {
        current.heterogeneous.push(row.arm.clone());
    }
    // Stratified, a comparison with no event (or only events) in every task has a
    // difference (0) but no CMH p: compared, and no difference.
    let compared = if row.stratified {
        diff.is_some()
    } else {
        p_holm.is_some()
    };
    if !compared {
        return;
    }
    current.compared += 1;
    current.stratified |= row.stratified;
    let (Some(p_holm), Some(diff)) = (p_holm, diff.filter(|d| *d != 0.0)) else {
        return;
    };
    if p_holm < alpha {
        let direction = if diff > 0.0 {
            Direction::Higher
        } else {
            Direction::Lower
        };
        current.findings.push(Finding {
            arm: row.arm.clone(),
            diff,
            p_holm,
            direction,
            better: matches!(
                (direction, better),
                (Direction::Higher, Better::Higher) | (Direction::Lower, Better::Lower)
            ),
        });
    }
}

/// Where a sequential run stopped, the boundaries it crossed and how its p is adjusted.
fn sequential_text(seq: &SequentialOutcome) -> String {
    let mut out = wrap(
        "Sequential run: ",
        &format!("on {}, {}.", seq.metric, seq.stop_text()),
        TEXT_WIDTH,
    );
    for crossing in seq.crossing_texts() {
        out += &wrap("  crossed: ", &crossing, TEXT_WIDTH);
    }
    out += &wrap_hanging(
        "  ",
        &format!("Note: {}.", seq.adjustment_note()),
        TEXT_WIDTH,
    );
    out
}

/// The sample-size warnings: what is small about each metric ("no units for json, yaml;
/// fewer than 30 for crash (12)"), one line per distinct such finding with every metric
/// it holds for, so that a run with many metrics and one small arm gets one line, not one
/// per metric: "fewer than 30 for single (20): premature_done, clean_exit".
fn sample_warnings(small: &[(&str, &str, u64)]) -> Vec<String> {
    let mut metric_order: Vec<&str> = small.iter().map(|s| s.1).collect();
    metric_order.dedup();
    // (what is small, the metrics it holds for), in order of first appearance.
    let mut findings: Vec<(String, Vec<&str>)> = Vec::new();
    for metric in metric_order {
        let of: Vec<&(&str, &str, u64)> = small.iter().filter(|s| s.1 == metric).collect();
        let none: Vec<&str> = of.iter().filter(|s| s.2 == 0).map(|s| s.0).collect();
        let few: Vec<String> = of
            .iter()
            .filter(|s| s.2 > 0)
            .map(|s| format!("{} ({})", s.0, s.2))
            .collect();
        let mut parts = Vec::new();
        if !none.is_empty() {
            parts.push(format!("no units for {}", none.join(", ")));
        }
        if !few.is_empty() {
            parts.push(format!("fewer than {SMALL_SAMPLE} for {}", few.join(", ")));
        }
        let what = parts.join("; ");
        match findings.iter_mut().find(|(w, _)| *w == what) {
            Some((_, metrics)) => metrics.push(metric),
            None => findings.push((what, vec![metric])),
        }
    }
    findings
        .into_iter()
        .map(|(what, metrics)| format!("{what}: {}", metrics.join(", ")))
        .collect()
}

#[cfg(test)]
#[path = "verdict_tests.rs"]
mod tests;
