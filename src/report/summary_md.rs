//! Renders a [`Summary`] as `summary.md`: the verdict first, then one GitHub table per
//! metric, arms as rows with the baseline first, significant differences marked, caveats
//! spelled out.

use super::aggregate::Count;
use super::by_task::{HOMOGENEITY_ALPHA, pair_tasks};
use super::format::{fixed, level, pct, pp, pvalue};
use super::notes::{SIMULATED_NOTE, shard_note};
use super::summary_data::{BOOTSTRAP_WIDTH_NOTE, Summary, SummaryRow};
use super::table::{Align, Table};
use crate::rates::{FEATURES_VERIFIED, Metric};
use crate::stats::DEFAULT_RESAMPLES;

/// Marks a Holm-adjusted p below 1 − confidence.
const SIGNIFICANT: &str = "*";
/// Marks a bootstrap interval much wider than Wilson's.
const WIDE: &str = "†";

/// `summary.md`.
pub fn render(s: &Summary) -> String {
    let conf = level(s.confidence);
    let alpha = 1.0 - s.confidence;
    let mut out = heading(s);
    let Some(baseline) = &s.baseline else {
        out += "No sessions or trials in this run.\n";
        out += &super::verdict::Verdict::of(s).to_markdown();
        return out;
    };
    out += &super::verdict::Verdict::of(s).to_markdown();
    out += "\n";
    out += &conventions(s, baseline);
    out += &unusable_section(s);
    for metric in Metric::ALL {
        out += &metric_section(s, metric, baseline);
    }
    out += &features_section(s, &conf, alpha);
    out += &by_task_section(s);
    out += &divergent_section(s);
    out
}

/// The title, and the notes on where the numbers come from (the sim agent, a shard).
fn heading(s: &Summary) -> String {
    let mut out = String::new();
    match &s.info.suite {
        Some(suite) => out += &format!("# loopbench summary: {suite}\n\n"),
        None => out += "# loopbench summary\n\n",
    }
    if s.info.simulated {
        out += &format!(
            "> **Note — {SIMULATED_NOTE}.** They come from the built-in sim agent, not from a real model.\n\n"
        );
    }
    if let Some(shard) = &s.info.shard {
        out += &format!("> **Note — {}.**\n\n", shard_note(shard));
    }
    out
}

/// The baseline, the size of the run and how the intervals and p values are computed.
fn conventions(s: &Summary, baseline: &str) -> String {
    let conf = level(s.confidence);
    let alpha = 1.0 - s.confidence;
    format!(
        "Baseline: **{baseline}**. {} arms, {} trials. Intervals at {conf}: Wilson for rates, \
         Newcombe for differences, two-sided Fisher exact p, Holm-adjusted over the arms of \
         each metric; `{SIGNIFICANT}` marks Holm p < {}. `boot CI` resamples trials \
         ({DEFAULT_RESAMPLES} resamples, fixed seed), since sessions of one trial are correlated.\n",
        s.arms.len(),
        s.arms
            .iter()
            .map(|a| s.aggregate.by_arm[a].trials())
            .sum::<usize>(),
        // 1 − 0.95 is 0.050000000000000044: round away the representation error.
        (alpha * 1e9).round() / 1e9,
    )
}

/// One metric's section: its definition, its table of arms, and the notes under it
/// (stratified by task, whether all arms are alike, bootstrap intervals much wider).
fn metric_section(s: &Summary, metric: Metric, baseline: &str) -> String {
    let alpha = 1.0 - s.confidence;
    let mut out = format!(
        "\n## {}\n\n{}.\n\n",
        metric.name(),
        capitalize(metric.definition())
    );
    let rows: Vec<&SummaryRow> = s.metric_rows(metric.name()).collect();
    let stratified = rows.iter().any(|r| r.stratified);
    let (table, wide) = metric_table(s, &rows, baseline, stratified);
    out += &table.to_markdown();
    if stratified {
        out += &format!(
            "\nStratified by task: the Mantel–Haenszel difference and the \
             Cochran–Mantel–Haenszel p compare the arms within each task and judge \
             this metric; `{SIGNIFICANT}` marks their Holm p < {}. `p (same by task)` is \
             Breslow–Day's, that the odds ratio is the same in every task.\n",
            (alpha * 1e9).round() / 1e9
        );
        out += &per_task_section(s, &rows, metric, baseline);
    }
    if let Some(test) = s.tests.iter().find(|t| t.metric == metric) {
        out += &match &test.chi_square {
            Ok(c) => format!(
                "\nAll arms alike? Pearson χ²({}) = {}, p = {}.\n",
                c.dof,
                fixed(c.statistic, 2),
                pvalue(c.p)
            ),
            Err(why) => format!("\nAll arms alike? χ² not defined: {why}.\n"),
        };
    }
    for (arm, ratio) in wide {
        out += &format!(
            "\n{WIDE} {arm}: the trial-clustered bootstrap interval is {}× as wide as \
             Wilson's; sessions of one trial are correlated here, so trust the wider one.\n",
            fixed(ratio, 1)
        );
    }
    out
}

/// A metric's table, one row per arm, with the stratified columns when `stratified`;
/// and the arms whose bootstrap interval is much wider than Wilson's, with how much.
fn metric_table(
    s: &Summary,
    rows: &[&SummaryRow],
    baseline: &str,
    stratified: bool,
) -> (Table, Vec<(String, f64)>) {
    let conf = level(s.confidence);
    let alpha = 1.0 - s.confidence;
    let mut table = Table::new([
        ("arm", Align::Left),
        ("k / n", Align::Right),
        ("rate", Align::Right),
        (format!("{conf} CI").as_str(), Align::Left),
        ("boot CI", Align::Left),
        (format!("diff vs {baseline}").as_str(), Align::Right),
        ("diff CI", Align::Left),
        ("p", Align::Right),
        ("p (Holm)", Align::Right),
    ]);
    if stratified {
        table.add_columns([
            ("diff (MH, by task)", Align::Right),
            ("MH CI", Align::Left),
            ("p (CMH, Holm)", Align::Right),
            ("p (same by task)", Align::Right),
        ]);
    }
    let mut wide = Vec::new();
    for row in rows {
        let boot = interval(row.boot_ci_low, row.boot_ci_high, pct);
        let boot = match widening(row) {
            Some(ratio) if ratio > BOOTSTRAP_WIDTH_NOTE => {
                wide.push((row.arm.clone(), ratio));
                format!("{boot} {WIDE}")
            }
            _ => boot,
        };
        let mut cells = vec![
            row.arm.clone(),
            format!("{} / {}", row.k.unwrap_or(0), row.n),
            row.rate.map(pct).unwrap_or_else(|| "–".into()),
            interval(row.ci_low, row.ci_high, pct),
            boot,
            row.diff.map(pp).unwrap_or_default(),
            interval(row.diff_ci_low, row.diff_ci_high, pp),
            row.p.map(pvalue).unwrap_or_default(),
            holm_cell(row.p_holm, alpha),
        ];
        if stratified {
            cells.extend([
                row.diff_mh.map(pp).unwrap_or_default(),
                interval(row.diff_mh_ci_low, row.diff_mh_ci_high, pp),
                holm_cell(row.p_cmh_holm, alpha),
                row.p_homogeneity.map(pvalue).unwrap_or_default(),
            ]);
        }
        table.push(cells);
    }
    (table, wide)
}

/// The arms every session of which ended in `error`, only when there is one: their
/// rows count nothing an agent did and must not pass for a result.
fn unusable_section(s: &Summary) -> String {
    let unusable = s.unusable_arms();
    if unusable.is_empty() {
        return String::new();
    }
    format!(
        "\n## Arms with no usable sessions\n\n{}.\n\nEvery session of these arms ended in \
         `error` (for example, the agent could not be started; the `error` column of \
         sessions.csv says why), so their rows below measure nothing the agent did.\n",
        unusable.join("; ")
    )
}

/// Divergent sessions per arm, only when some session is divergent: runs without
/// imported transcripts keep their summary.md unchanged.
fn divergent_section(s: &Summary) -> String {
    let divergent = &s.aggregate.divergent;
    if divergent.values().all(|c| c.k == 0) {
        return String::new();
    }
    let mut table = Table::new([("arm", Align::Left), ("k / n", Align::Right)]);
    for arm in &s.arms {
        let c = divergent.get(arm).copied().unwrap_or_default();
        table.push(vec![arm.clone(), format!("{} / {}", c.k, c.n)]);
    }
    format!(
        "\n## Divergent sessions\n\nTranscript replays whose files were reset to what the agent \
         saw (the transcript did not show how they got that content, e.g. a shell command changed \
         them); their metrics rest partly on those resets.\n\n{}",
        table.to_markdown()
    )
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}

fn interval(low: Option<f64>, high: Option<f64>, f: fn(f64) -> String) -> String {
    match (low, high) {
        (Some(l), Some(h)) => format!("{} … {}", f(l), f(h)),
        _ => String::new(),
    }
}

fn holm_cell(p: Option<f64>, alpha: f64) -> String {
    match p {
        Some(p) if p < alpha => format!("{} {SIGNIFICANT}", pvalue(p)),
        Some(p) => pvalue(p),
        None => String::new(),
    }
}

/// Width of the bootstrap interval over the width of Wilson's.
fn widening(row: &SummaryRow) -> Option<f64> {
    let boot = row.boot_ci_high? - row.boot_ci_low?;
    let wilson = row.ci_high? - row.ci_low?;
    (wilson > 0.0).then(|| boot / wilson)
}

fn features_section(s: &Summary, conf: &str, alpha: f64) -> String {
    let baseline = s.baseline.as_deref().unwrap_or("");
    let mut out = format!(
        "\n## {FEATURES_VERIFIED}\n\nFeatures verified at the end of each trial. The mean's \
         interval is Student's t; the difference is Welch's, with a Mann–Whitney U p.\n\n"
    );
    let mut table = Table::new([
        ("arm", Align::Left),
        ("trials", Align::Right),
        ("mean", Align::Right),
        (format!("{conf} CI").as_str(), Align::Left),
        ("sd", Align::Right),
        ("median", Align::Right),
        ("p10", Align::Right),
        ("p90", Align::Right),
        (format!("diff vs {baseline}").as_str(), Align::Right),
        ("diff CI", Align::Left),
        ("p", Align::Right),
        ("p (Holm)", Align::Right),
    ]);
    let two = |x: f64| fixed(x, 2);
    for row in s.metric_rows(FEATURES_VERIFIED) {
        let d = s
            .features
            .iter()
            .find(|(arm, _)| *arm == row.arm)
            .and_then(|(_, d)| *d);
        table.push(vec![
            row.arm.clone(),
            row.n.to_string(),
            row.rate.map(two).unwrap_or_else(|| "–".into()),
            interval(row.ci_low, row.ci_high, two),
            d.and_then(|d| d.sd).map(two).unwrap_or_default(),
            d.map(|d| two(d.median)).unwrap_or_default(),
            d.map(|d| two(d.p10)).unwrap_or_default(),
            d.map(|d| two(d.p90)).unwrap_or_default(),
            row.diff.map(|x| format!("{x:+.2}")).unwrap_or_default(),
            interval(row.diff_ci_low, row.diff_ci_high, |x| format!("{x:+.2}")),
            row.p.map(pvalue).unwrap_or_default(),
            holm_cell(row.p_holm, alpha),
        ]);
    }
    out += &table.to_markdown();
    out
}

/// The per-task table of a metric whose effect differs by task for some arm (Breslow–Day
/// p below [`HOMOGENEITY_ALPHA`]): per such arm and task, both sides' k / n and rate and
/// the difference.
fn per_task_section(s: &Summary, rows: &[&SummaryRow], metric: Metric, baseline: &str) -> String {
    let differing: Vec<&str> = rows
        .iter()
        .filter(|r| r.p_homogeneity.is_some_and(|p| p < HOMOGENEITY_ALPHA))
        .map(|r| r.arm.as_str())
        .collect();
    if differing.is_empty() {
        return String::new();
    }
    let mut table = Table::new([
        ("arm", Align::Left),
        ("task", Align::Left),
        ("k / n", Align::Right),
        ("rate", Align::Right),
        (format!("{baseline} k / n").as_str(), Align::Right),
        (format!("{baseline} rate").as_str(), Align::Right),
        ("diff", Align::Right),
    ]);
    let rate = |c: Count| c.rate().map(pct).unwrap_or_else(|| "–".into());
    for arm in &differing {
        let tasks = pair_tasks(
            s.aggregate.task_counts(arm, metric),
            s.aggregate.task_counts(baseline, metric),
        );
        for t in tasks {
            table.push(vec![
                arm.to_string(),
                t.task.clone(),
                format!("{} / {}", t.arm.k, t.arm.n),
                rate(t.arm),
                format!("{} / {}", t.base.k, t.base.n),
                rate(t.base),
                t.diff().map(pp).unwrap_or_default(),
            ]);
        }
    }
    format!(
        "\nThe effect differs by task (Breslow–Day p < {HOMOGENEITY_ALPHA}) for {}: \
         per task,\n\n{}",
        differing.join(", "),
        table.to_markdown()
    )
}

/// k / n of every rate metric per (arm, task), when the run has more than one task.
fn by_task_section(s: &Summary) -> String {
    let tasks = s.aggregate.tasks();
    if tasks.len() < 2 {
        return String::new();
    }
    let mut headers: Vec<(String, Align)> =
        vec![("arm".into(), Align::Left), ("task".into(), Align::Left)];
    headers.extend(Metric::ALL.map(|m| (m.name().to_string(), Align::Right)));
    let mut table = Table::new(headers);
    for arm in &s.arms {
        for task in &tasks {
            let Some(c) = s.aggregate.by_arm_task.get(&(arm.clone(), task.clone())) else {
                continue;
            };
            let mut row = vec![arm.clone(), task.clone()];
            row.extend(Metric::ALL.map(|m| format!("{}/{}", c.get(m).k, c.get(m).n)));
            table.push(row);
        }
    }
    format!(
        "\n## By task\n\nk/n of every rate metric per arm and task.\n\n{}",
        table.to_markdown()
    )
}
