//! Unit tests of the verdict: findings by the metric's direction, stratified rows, the
//! sample-size warnings and the text's wrapping.

use super::*;
use crate::rates::TOKENS_PER_FEATURE;

fn row(arm: &str, metric: &str, n: u64, diff: Option<f64>, p_holm: Option<f64>) -> SummaryRow {
    SummaryRow {
        arm: arm.into(),
        metric: metric.into(),
        k: Some(0),
        n,
        rate: None,
        ci_low: None,
        ci_high: None,
        diff,
        diff_ci_low: None,
        diff_ci_high: None,
        p: p_holm,
        p_holm,
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

fn rows() -> Vec<SummaryRow> {
    vec![
        row("json", "premature_done", 400, None, None),
        row("markdown", "premature_done", 400, Some(0.069), Some(0.02)),
        row("yaml", "premature_done", 400, Some(0.066), Some(0.051)),
        row("gate", "premature_done", 400, Some(-0.098), Some(2.9e-12)),
        row("json", "clean_exit", 400, None, None),
        row("markdown", "clean_exit", 400, Some(-0.2), Some(0.001)),
        row("yaml", "clean_exit", 400, Some(0.1), Some(0.01)),
        row("gate", "clean_exit", 400, Some(0.0), Some(0.0001)),
        row("json", "resume_success", 0, None, None),
        row("markdown", "resume_success", 0, None, None),
        row("yaml", "resume_success", 0, None, None),
        row("gate", "resume_success", 12, None, None),
        row("json", "features_verified", 40, None, None),
        row("markdown", "features_verified", 20, Some(-3.5), Some(0.004)),
        row("yaml", "features_verified", 40, Some(0.2), Some(0.7)),
        row("gate", "features_verified", 40, Some(1.0), None),
    ]
}

#[test]
fn a_difference_after_holm_is_better_or_worse_by_the_metrics_direction() {
    let v = decide(&rows(), Some("json"), 0.05);
    let pd = &v.metrics[0];
    assert_eq!(pd.metric, "premature_done");
    assert_eq!(pd.compared, 3);
    // yaml's p 0.051 is not below alpha; markdown is higher on a lower-is-better rate.
    let arms: Vec<(&str, Direction, bool)> = pd
        .findings
        .iter()
        .map(|f| (f.arm.as_str(), f.direction, f.better))
        .collect();
    assert_eq!(
        arms,
        [
            ("markdown", Direction::Higher, false),
            ("gate", Direction::Lower, true)
        ]
    );
    // clean_exit: higher is better; a zero difference is no finding whatever its p.
    let ce = &v.metrics[1];
    let arms: Vec<(&str, bool)> = ce
        .findings
        .iter()
        .map(|f| (f.arm.as_str(), f.better))
        .collect();
    assert_eq!(arms, [("markdown", false), ("yaml", true)]);
    // features_verified: more is better; gate has no Holm p and is not compared.
    let fv = &v.metrics[3];
    assert_eq!(fv.compared, 2);
    assert_eq!(fv.findings.len(), 1);
    assert!(!fv.findings[0].better);
}

#[test]
fn a_metric_without_any_comparison_is_said_to_be_not_compared() {
    let v = decide(&rows(), Some("json"), 0.05);
    assert_eq!(v.metrics[2].compared, 0);
    let text = v.to_text();
    assert!(
        text.contains("not compared (no data): resume_success"),
        "{text}"
    );
    assert!(
        text.contains(
            "premature_done     worse: markdown +6.9 pp (p 0.020); better: gate -9.8 pp (p 2.9e-12)"
        ),
        "{text}"
    );
    assert!(
        text.contains("features_verified  worse: markdown -3.50 features (p 0.004)"),
        "{text}"
    );
}

#[test]
fn sample_size_warnings_name_each_metric_once_with_its_small_arms() {
    let v = decide(&rows(), Some("json"), 0.05);
    assert_eq!(
        v.warnings,
        [
            "no units for json, markdown, yaml; fewer than 30 for gate (12): resume_success",
            "fewer than 30 for markdown (20): features_verified",
        ]
    );
    let md = v.to_markdown();
    assert!(md.starts_with("## Verdict\n"), "{md}");
    assert_eq!(
        md.matches("for gate (12): resume_success").count(),
        1,
        "{md}"
    );
}

#[test]
fn usage_per_feature_rows_are_no_part_of_the_verdict() {
    let mut rows = rows();
    rows.push(row("json", TOKENS_PER_FEATURE, 20, None, None));
    rows.push(row("markdown", TOKENS_PER_FEATURE, 20, None, None));
    let v = decide(&rows, Some("json"), 0.05);
    assert!(
        v.metrics.iter().all(|m| m.metric != TOKENS_PER_FEATURE),
        "{v:?}"
    );
    assert!(!v.to_text().contains(TOKENS_PER_FEATURE), "{}", v.to_text());
}

#[test]
fn metrics_small_in_the_same_way_share_one_warning() {
    let small = [
        ("single", "premature_done", 20),
        ("single", "clean_exit", 20),
        ("json", "resume_success", 0),
        ("single", "resume_success", 0),
        ("single", "told_false", 20),
        ("json", "contract_edit", 0),
        ("single", "contract_edit", 0),
    ];
    assert_eq!(
        sample_warnings(&small),
        [
            "fewer than 30 for single (20): premature_done, clean_exit, told_false",
            "no units for json, single: resume_success, contract_edit",
        ]
    );
}

#[test]
fn a_run_where_nothing_differs_says_so_and_an_empty_run_has_no_verdict() {
    let quiet: Vec<SummaryRow> = rows()
        .into_iter()
        .map(|mut r| {
            r.p_holm = r.p_holm.map(|_| 0.9);
            r
        })
        .collect();
    let v = decide(&quiet, Some("json"), 0.05);
    assert_eq!(v.differing().count(), 0);
    assert_eq!(
        v.no_difference_line(),
        "no arm differs on: premature_done, clean_exit, features_verified; \
         not compared (no data): resume_success"
    );
    // Past 100 characters the console breaks the line after a ";" or ",".
    let text = v.to_text();
    assert!(
        text.contains(
            "  no arm differs on: premature_done, clean_exit, features_verified;\n    \
             not compared (no data): resume_success\n"
        ),
        "{text}"
    );
    assert!(
        text.lines().all(|l| l.chars().count() <= TEXT_WIDTH),
        "{text}"
    );
    let baseline_only: Vec<SummaryRow> = rows().into_iter().filter(|r| r.arm == "json").collect();
    let alone = decide(&baseline_only, Some("json"), 0.05);
    assert_eq!(
        alone.no_difference_line(),
        "nothing to compare: no arm besides the baseline has data"
    );
    let empty = decide(&[], None, 0.05);
    assert_eq!(
        empty.to_text(),
        "Verdict: no sessions or trials in this run.\n"
    );
    assert_eq!(empty.to_markdown(), "");
}

#[test]
fn long_verdict_lines_break_between_findings() {
    let text = "worse: a +1.0 pp (p 0.01), b +2.0 pp (p 0.02); better: c -3.0 pp (p 0.03)";
    assert_eq!(
        wrap("  m  ", text, 40),
        "  m  worse: a +1.0 pp (p 0.01),\n     b +2.0 pp (p 0.02);\n     better: c -3.0 pp (p 0.03)\n"
    );
    assert_eq!(wrap("  m  ", "worse: a", 40), "  m  worse: a\n");
}

#[test]
fn with_two_or_more_tasks_the_stratified_columns_judge_and_heterogeneity_is_named() {
    let stratified = |arm: &str, diff, p_cmh_holm, diff_mh, p_homogeneity| {
        let mut r = row(arm, "premature_done", 400, Some(diff), Some(0.9));
        r.stratified = true;
        r.p_cmh_holm = p_cmh_holm;
        r.diff_mh = diff_mh;
        r.p_homogeneity = p_homogeneity;
        r
    };
    let rows = vec![
        row("json", "premature_done", 400, None, None),
        // Pooled worse and not significant; by task better and significant.
        stratified("a", 0.17, Some(0.001), Some(-0.175), Some(0.7)),
        // No event in any task: a difference of 0, no CMH p: compared, no finding.
        stratified("b", 0.0, None, Some(0.0), None),
        // Pooled p 0.9 would say nothing; by task not significant either.
        stratified("c", 0.05, Some(0.2), Some(0.04), Some(0.001)),
    ];
    let v = decide(&rows, Some("json"), 0.05);
    let m = &v.metrics[0];
    assert_eq!(m.compared, 3);
    assert!(m.stratified);
    assert_eq!(m.findings.len(), 1);
    assert_eq!(m.findings[0].arm, "a");
    assert_eq!(m.findings[0].diff, -0.175);
    assert!(m.findings[0].better);
    assert_eq!(m.heterogeneous, ["c"]);
    let text = v.to_text();
    assert!(
        text.contains("premature_done  better: a -17.5 pp (p 0.001)"),
        "{text}"
    );
    assert!(
        text.contains("The effect differs by task (Breslow–Day p < 0.05;"),
        "{text}"
    );
    assert!(text.contains("\n  premature_done  c\n"), "{text}");
    assert!(
        text.contains("(stratified by task: every rate metric"),
        "{text}"
    );
    assert!(
        text.lines().all(|l| l.chars().count() <= TEXT_WIDTH),
        "{text}"
    );
    let md = v.to_markdown();
    assert!(
        md.contains("- premature_done: the effect differs by task for c (Breslow–Day p < 0.05)"),
        "{md}"
    );
}

#[test]
fn a_row_of_an_unknown_metric_is_left_out() {
    let v = decide(
        &[row("a", "made_up", 5, Some(0.5), Some(0.001))],
        Some("b"),
        0.05,
    );
    assert!(v.metrics.is_empty() && v.warnings.is_empty());
}
