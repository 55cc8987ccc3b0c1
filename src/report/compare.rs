//! The regression rule of the statistics conventions (README, Reports) (`compare`, and week over week in `weekly`), and the
//! Markdown verdict tables of `loopbench compare`.

use std::path::Path;

use super::aggregate::{Aggregate, Count, aggregate};
use super::export::{Cell, Document};
use super::format::{pct, pp, pvalue};
use super::notes::{SIMULATED_NOTE, shard_note};
use super::run_info::RunInfo;
use super::table::{Align, Table};
use crate::error::{Error, Result};
use crate::rates::Metric;
use crate::stats::{self, Alternative};

/// The thresholds of the rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// A change of the rate in the worse direction must exceed this (a fraction, not
    /// percentage points: 0.02 is two points).
    pub max_increase: f64,
    /// ... and its one-sided Fisher p must be below this.
    pub alpha: f64,
}

impl Default for Rule {
    fn default() -> Rule {
        Rule {
            max_increase: 0.0,
            alpha: 0.05,
        }
    }
}

impl Rule {
    /// Checks the thresholds; bad values are bad input naming the flag.
    pub fn validate(self) -> Result<Rule> {
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            return Err(Error::BadInput(format!(
                "--alpha must be between 0 and 1 (exclusive), got {}",
                self.alpha
            )));
        }
        if !(0.0..1.0).contains(&self.max_increase) {
            return Err(Error::BadInput(format!(
                "--max-increase must be a rate change in [0, 1), got {}",
                self.max_increase
            )));
        }
        Ok(self)
    }
}

/// What the rule says about one metric of one arm.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgement {
    /// rate(new) − rate(base); None when either side has n = 0.
    pub change: Option<f64>,
    /// One-sided Fisher p, H1: the new rate is worse (higher, or lower for
    /// `clean_exit` and `resume_success`).
    pub p: Option<f64>,
    /// The change is worse than `max_increase` and p < alpha.
    pub regression: bool,
}

/// Applies the rule to one metric: a regression is a change in the worse direction
/// larger than `rule.max_increase` whose one-sided Fisher exact p (H1: the new rate is
/// worse) is below `rule.alpha`. For most metrics worse is higher; for `clean_exit`
/// and `resume_success` (good events) worse is lower.
pub fn judge(metric: Metric, base: Count, new: Count, rule: Rule) -> Judgement {
    let (Some(rate_base), Some(rate_new)) = (base.rate(), new.rate()) else {
        return Judgement {
            change: None,
            p: None,
            regression: false,
        };
    };
    let change = rate_new - rate_base;
    let (worse_by, alternative) = if metric.higher_is_worse() {
        (change, Alternative::Greater)
    } else {
        (-change, Alternative::Less)
    };
    // Rows: new, base; Greater = the new (row 0) rate is higher.
    let table = [[new.k, new.n - new.k], [base.k, base.n - base.k]];
    let p = stats::fisher_exact(table, alternative).ok();
    Judgement {
        change: Some(change),
        p,
        regression: worse_by > rule.max_increase && p.is_some_and(|p| p < rule.alpha),
    }
}

/// One row of a verdict table.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    /// Arm name.
    pub arm: String,
    /// Counts of the base run.
    pub base: Count,
    /// Counts of the new run.
    pub new: Count,
    /// What the rule says.
    pub judgement: Judgement,
}

/// The result of `loopbench compare`.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// Per requested metric, a verdict per arm present in both runs (base run order).
    pub metrics: Vec<(Metric, Vec<Verdict>)>,
    /// Arms only in the base run.
    pub only_base: Vec<String>,
    /// Arms only in the new run.
    pub only_new: Vec<String>,
    /// Either run is simulated.
    pub simulated: bool,
    /// The thresholds used.
    pub rule: Rule,
    /// What the reader of the verdict should know that the tables do not say loudly:
    /// arms of the base run nobody judged, runs that are one shard of a study.
    pub warnings: Vec<String>,
}

/// A judged arm that has no data (n = 0) for a metric in one run or in both.
#[derive(Debug, Clone, PartialEq)]
pub struct NoData {
    /// Arm name.
    pub arm: String,
    /// The metric without data.
    pub metric: Metric,
    /// The base run has n = 0.
    pub in_base: bool,
    /// The new run has n = 0.
    pub in_new: bool,
}

impl Comparison {
    /// The verdicts that could not be reached for lack of data, in table order. A gate
    /// must not read them as "no regression".
    pub fn without_data(&self) -> Vec<NoData> {
        self.metrics
            .iter()
            .flat_map(|(metric, verdicts)| {
                verdicts
                    .iter()
                    .filter(|v| v.base.n == 0 || v.new.n == 0)
                    .map(|v| NoData {
                        arm: v.arm.clone(),
                        metric: *metric,
                        in_base: v.base.n == 0,
                        in_new: v.new.n == 0,
                    })
            })
            .collect()
    }

    /// Number of regressions found.
    pub fn regressions(&self) -> usize {
        self.metrics
            .iter()
            .flat_map(|(_, v)| v)
            .filter(|v| v.judgement.regression)
            .count()
    }
}

/// Compares two results directories on `metrics`, arm by arm: the arms of `arms`
/// (each must be in both runs, else bad input), or else every arm the two runs share;
/// the others are listed in [`Comparison::only_base`] and [`Comparison::only_new`].
///
/// Fails closed (bad input, exit 2) where the gate cannot judge: a judged arm and
/// metric with no data.
pub fn compare_runs(
    base: &Path,
    new: &Path,
    metrics: &[Metric],
    arms: Option<&[String]>,
    rule: Rule,
) -> Result<Comparison> {
    let rule = rule.validate()?;
    if metrics.is_empty() {
        return Err(Error::BadInput(
            "name at least one --metric to compare".into(),
        ));
    }
    let base_info = RunInfo::read(base)?;
    let new_info = RunInfo::read(new)?;
    let base_agg = aggregate(base)?;
    let new_agg = aggregate(new)?;
    // An arm whose every trial failed outside the agent, or every session of which
    // failed `agent`, is an arm with no data, not one nobody asked to judge: fail
    // closed before anything is compared.
    for run in [base, new] {
        let attempts = super::attempts::Attempts::read(run, &[])?;
        let judged = |arm: &String| arms.is_none_or(|named| named.contains(arm));
        let empty: Vec<String> = attempts
            .arms
            .iter()
            .filter(|(arm, a)| a.finished == 0 && judged(arm))
            .map(|(arm, a)| format!("'{arm}' ({} trials could not run)", a.unfinished()))
            .chain(
                attempts
                    .all_agent_failures
                    .iter()
                    .filter(|(arm, _)| judged(arm))
                    .map(|(arm, n)| format!("'{arm}' (all {n} sessions failed `agent`)")),
            )
            .collect();
        if !empty.is_empty() {
            return Err(Error::BadInput(format!(
                "the run '{}' has no data for arm {}, so this is not a pass; fix the cause \
                 and `loopbench resume` or rerun it",
                run.display(),
                empty.join(", "),
            )));
        }
    }
    let mut order = base_info.order_arms(&base_agg.arms(), base_info.baseline.as_deref());
    if let Some(arms) = arms {
        for arm in arms {
            for (agg, run, which) in [(&base_agg, base, "base"), (&new_agg, new, "new")] {
                if !agg.by_arm.contains_key(arm) {
                    return Err(Error::BadInput(format!(
                        "--arms: arm '{arm}' is not in the {which} run '{}' (its arms: {})",
                        run.display(),
                        agg.arms().join(", ")
                    )));
                }
            }
        }
        order.retain(|a| arms.contains(a));
    }
    let mut comparison = compare_aggregates(
        &base_agg,
        &new_agg,
        &order,
        metrics,
        rule,
        base_info.simulated || new_info.simulated,
    );
    if arms.is_some() {
        // The arms left out were left out on purpose; they are not news.
        comparison.only_base.clear();
        comparison.only_new.clear();
    } else if !comparison.only_base.is_empty() {
        // Rerunning only the arm under test is the usual gate, so a base arm the new
        // run lacks is judged by nobody rather than refused, and said so.
        comparison.warnings.push(format!(
            "not judged: the new run '{}' has no {} '{}' of the base run; name the arms \
             to judge with --arms to make this explicit",
            new.display(),
            if comparison.only_base.len() == 1 {
                "arm"
            } else {
                "arms"
            },
            comparison.only_base.join("', '"),
        ));
    }
    for (run, info) in [(base, &base_info), (new, &new_info)] {
        if let Some(shard) = &info.shard {
            comparison
                .warnings
                .push(format!("'{}' is {}", run.display(), shard_note(shard)));
        }
    }
    // Fail closed: a metric the gate cannot judge is bad input, never a pass.
    let gaps = comparison.without_data();
    if !gaps.is_empty() {
        let runs = |g: &NoData| match (g.in_base, g.in_new) {
            (true, true) => format!("in either run ('{}', '{}')", base.display(), new.display()),
            (true, false) => format!("in the base run '{}'", base.display()),
            _ => format!("in the new run '{}'", new.display()),
        };
        let each: Vec<String> = gaps
            .iter()
            .map(|g| format!("arm '{}' has no data for {} {}", g.arm, g.metric, runs(g)))
            .collect();
        return Err(Error::BadInput(format!(
            "{} (n = 0): it cannot be judged, so this is not a pass; compare runs that \
             measured it, or leave out that --metric",
            each.join("; ")
        )));
    }
    Ok(comparison)
}

/// [`compare_runs`] on counts already read; `arm_order` orders the verdicts.
pub fn compare_aggregates(
    base: &Aggregate,
    new: &Aggregate,
    arm_order: &[String],
    metrics: &[Metric],
    rule: Rule,
    simulated: bool,
) -> Comparison {
    let common: Vec<String> = arm_order
        .iter()
        .filter(|a| new.by_arm.contains_key(*a))
        .cloned()
        .collect();
    let only_base = base
        .arms()
        .into_iter()
        .filter(|a| !new.by_arm.contains_key(a))
        .collect();
    let only_new = new
        .arms()
        .into_iter()
        .filter(|a| !base.by_arm.contains_key(a))
        .collect();
    let metrics = metrics
        .iter()
        .map(|&metric| {
            let verdicts = common
                .iter()
                .map(|arm| {
                    let b = base.by_arm[arm].get(metric);
                    let n = new.by_arm[arm].get(metric);
                    Verdict {
                        arm: arm.clone(),
                        base: b,
                        new: n,
                        judgement: judge(metric, b, n, rule),
                    }
                })
                .collect();
            (metric, verdicts)
        })
        .collect();
    Comparison {
        metrics,
        only_base,
        only_new,
        simulated,
        warnings: Vec::new(),
        rule,
    }
}

impl Comparison {
    /// The table model of a comparison: one row per (metric, arm).
    pub fn document(&self) -> Document {
        let mut rows = Vec::new();
        for (metric, verdicts) in &self.metrics {
            for v in verdicts {
                rows.push(vec![
                    Cell::Text(metric.name().to_string()),
                    Cell::Text(v.arm.clone()),
                    Cell::Count(v.base.k),
                    Cell::Count(v.base.n),
                    Cell::number(v.base.rate()),
                    Cell::Count(v.new.k),
                    Cell::Count(v.new.n),
                    Cell::number(v.new.rate()),
                    Cell::number(v.judgement.change),
                    Cell::number(v.judgement.p),
                    Cell::Bool(v.judgement.regression),
                ]);
            }
        }
        Document {
            name: "compare",
            columns: vec![
                "metric",
                "arm",
                "base_k",
                "base_n",
                "base_rate",
                "new_k",
                "new_n",
                "new_rate",
                "change",
                "p",
                "regression",
            ],
            rows,
            markdown: render(self),
        }
    }

    /// A JUnit XML report: one test suite per metric, one test case per arm, failed
    /// when the arm regressed.
    pub fn to_junit(&self) -> String {
        let esc = |s: &str| {
            s.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
        };
        let tests: usize = self.metrics.iter().map(|(_, v)| v.len()).sum();
        let mut out = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"loopbench compare\" tests=\"{tests}\" failures=\"{}\">\n",
            self.regressions()
        );
        for (metric, verdicts) in &self.metrics {
            let failures = verdicts.iter().filter(|v| v.judgement.regression).count();
            out += &format!(
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">\n",
                esc(metric.name()),
                verdicts.len()
            );
            for v in verdicts {
                let detail = format!(
                    "{}: base {}/{}, new {}/{}, change {}, one-sided Fisher p {}",
                    metric.name(),
                    v.base.k,
                    v.base.n,
                    v.new.k,
                    v.new.n,
                    v.judgement.change.map(pp).unwrap_or_else(|| "none".into()),
                    v.judgement.p.map(pvalue).unwrap_or_else(|| "none".into()),
                );
                out += &format!(
                    "    <testcase classname=\"{}\" name=\"{}\"",
                    esc(metric.name()),
                    esc(&v.arm)
                );
                if v.judgement.regression {
                    out += &format!(
                        ">\n      <failure message=\"regression\">{}</failure>\n    </testcase>\n",
                        esc(&detail)
                    );
                } else {
                    out += &format!(
                        ">\n      <system-out>{}</system-out>\n    </testcase>\n",
                        esc(&detail)
                    );
                }
            }
            out += "  </testsuite>\n";
        }
        out += "</testsuites>\n";
        out
    }
}

/// The verdict text of one judgement.
pub fn verdict_text(j: &Judgement) -> &'static str {
    match (j.regression, j.change) {
        (true, _) => "**REGRESSION**",
        (false, None) => "no data",
        (false, Some(_)) => "ok",
    }
}

/// Markdown for a CI job summary: one verdict table per metric and a closing line.
pub fn render(c: &Comparison) -> String {
    let mut out = String::from("# loopbench compare\n\n");
    if c.simulated {
        out += &format!("> **Note — {SIMULATED_NOTE}.**\n\n");
    }
    out += &format!(
        "Rule: a regression is a change in the worse direction larger than {} whose \
         one-sided Fisher exact p (H1: the new run is worse) is below {}.\n",
        pp(c.rule.max_increase).trim_start_matches('+'),
        c.rule.alpha
    );
    for (metric, verdicts) in &c.metrics {
        let direction = if metric.higher_is_worse() {
            "higher is worse"
        } else {
            "lower is worse"
        };
        out += &format!("\n## {metric} ({direction})\n\n");
        let mut table = Table::new([
            ("arm", Align::Left),
            ("base k / n", Align::Right),
            ("base rate", Align::Right),
            ("new k / n", Align::Right),
            ("new rate", Align::Right),
            ("change", Align::Right),
            ("p (one-sided)", Align::Right),
            ("verdict", Align::Left),
        ]);
        for v in verdicts {
            let rate = |c: Count| c.rate().map(pct).unwrap_or_else(|| "–".into());
            table.push(vec![
                v.arm.clone(),
                format!("{} / {}", v.base.k, v.base.n),
                rate(v.base),
                format!("{} / {}", v.new.k, v.new.n),
                rate(v.new),
                v.judgement.change.map(pp).unwrap_or_default(),
                v.judgement.p.map(pvalue).unwrap_or_default(),
                verdict_text(&v.judgement).to_string(),
            ]);
        }
        out += &table.to_markdown();
    }
    if !c.only_base.is_empty() {
        out += &format!(
            "\nOnly in the base run (not compared): {}.\n",
            c.only_base.join(", ")
        );
    }
    if !c.only_new.is_empty() {
        out += &format!(
            "\nOnly in the new run (not compared): {}.\n",
            c.only_new.join(", ")
        );
    }
    out += &match c.regressions() {
        0 => "\n**Result: no regression.**\n".to_string(),
        1 => "\n**Result: 1 regression.**\n".to_string(),
        n => format!("\n**Result: {n} regressions.**\n"),
    };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(k: u64, n: u64) -> Count {
        Count { k, n }
    }

    #[test]
    fn a_clear_increase_of_a_bad_rate_is_a_regression() {
        let j = judge(
            Metric::PrematureDone,
            c(22, 240),
            c(44, 240),
            Rule::default(),
        );
        assert!(j.regression, "{j:?}");
        assert!(j.p.unwrap() < 0.01);
    }

    #[test]
    fn an_increase_within_max_increase_is_not_a_regression() {
        let rule = Rule {
            max_increase: 0.1,
            alpha: 0.05,
        };
        let j = judge(Metric::PrematureDone, c(22, 240), c(44, 240), rule);
        assert!(!j.regression, "{j:?}");
    }

    #[test]
    fn the_same_rate_is_not_a_regression() {
        let j = judge(
            Metric::PrematureDone,
            c(22, 240),
            c(22, 240),
            Rule::default(),
        );
        assert_eq!(j.change, Some(0.0));
        assert!(!j.regression);
    }

    #[test]
    fn for_clean_exit_a_drop_is_the_regression_and_a_rise_is_not() {
        let drop = judge(Metric::CleanExit, c(200, 240), c(150, 240), Rule::default());
        assert!(drop.regression, "{drop:?}");
        let rise = judge(Metric::CleanExit, c(150, 240), c(200, 240), Rule::default());
        assert!(!rise.regression, "{rise:?}");
    }

    #[test]
    fn an_arm_without_data_in_either_run_is_listed_as_without_data() {
        let counts = |resume: Count| {
            let mut counts = super::super::aggregate::Counts::default();
            counts.rates[Metric::PrematureDone.index()] = c(1, 10);
            counts.rates[Metric::ResumeSuccess.index()] = resume;
            counts
        };
        let run = |a: Count, b: Count| Aggregate {
            by_arm: [("a".to_string(), counts(a)), ("b".to_string(), counts(b))].into(),
            ..Aggregate::default()
        };
        let base = run(c(2, 3), c(0, 0));
        let new = run(c(0, 0), c(0, 0));
        let arms = ["a".to_string(), "b".to_string()];
        let metrics = [Metric::PrematureDone, Metric::ResumeSuccess];
        let cmp = compare_aggregates(&base, &new, &arms, &metrics, Rule::default(), false);
        let gaps = cmp.without_data();
        assert_eq!(
            gaps,
            vec![
                NoData {
                    arm: "a".into(),
                    metric: Metric::ResumeSuccess,
                    in_base: false,
                    in_new: true
                },
                NoData {
                    arm: "b".into(),
                    metric: Metric::ResumeSuccess,
                    in_base: true,
                    in_new: true
                },
            ]
        );
    }

    #[test]
    fn no_data_on_either_side_gives_no_verdict() {
        let j = judge(Metric::ResumeSuccess, c(0, 0), c(3, 4), Rule::default());
        assert_eq!(j.change, None);
        assert!(!j.regression);
        assert_eq!(verdict_text(&j), "no data");
    }
}
