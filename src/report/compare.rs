//! The regression rule of the statistics conventions (README, Reports) (`compare`, and week
//! over week in `weekly`), pooled or stratified by task; what `compare` writes is in
//! [`super::compare_output`].

use std::path::Path;

use super::aggregate::{Aggregate, Count, aggregate};
use super::by_task::{MIN_TASKS, TaskCounts, cmh_one_sided, pair_tasks, stratified_of};
use super::notes::shard_note;
use super::run_info::RunInfo;
use crate::error::{Error, Result};
use crate::rates::{Gate, Metric};
use crate::run_dir::RunDir;
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
    /// rate(new) − rate(base), or the Mantel–Haenszel difference over the tasks when
    /// stratified; None when either side has n = 0.
    pub change: Option<f64>,
    /// One-sided p, H1: the new rate is worse (higher, or lower for `clean_exit` and
    /// `resume_success`): Fisher exact, or the one-sided CMH p when stratified.
    pub p: Option<f64>,
    /// The change is worse than `max_increase` and p < alpha.
    pub regression: bool,
    /// Judged stratified by task: both sides span two or more tasks.
    pub stratified: bool,
}

/// The worse direction of `metric`'s change, as a sign, and the alternative hypothesis
/// that the new rate is worse.
fn worse_direction(metric: Metric) -> (f64, Alternative) {
    if metric.higher_is_worse() {
        (1.0, Alternative::Greater)
    } else {
        (-1.0, Alternative::Less)
    }
}

/// Applies the rule to one metric: a regression is a change in the worse direction
/// larger than `rule.max_increase` whose one-sided Fisher exact p (H1: the new rate is
/// worse) is below `rule.alpha`. For most metrics worse is higher; for `clean_exit`
/// and `resume_success` (good events) worse is lower. A metric whose gate is
/// [`Gate::Differs`] (`unobservable`) fails on any change larger than
/// `rule.max_increase`, either way, with no test: it says whether the other rates can
/// be compared at all.
pub fn judge(metric: Metric, base: Count, new: Count, rule: Rule) -> Judgement {
    let (Some(rate_base), Some(rate_new)) = (base.rate(), new.rate()) else {
        return Judgement {
            change: None,
            p: None,
            regression: false,
            stratified: false,
        };
    };
    let change = rate_new - rate_base;
    if metric.def().gate == Gate::Differs {
        return Judgement {
            change: Some(change),
            p: None,
            regression: change.abs() > rule.max_increase,
            stratified: false,
        };
    }
    let (sign, alternative) = worse_direction(metric);
    // Rows: new, base; Greater = the new (row 0) rate is higher.
    let table = [[new.k, new.n - new.k], [base.k, base.n - base.k]];
    let p = stats::fisher_exact(table, alternative).ok();
    Judgement {
        change: Some(change),
        p,
        regression: sign * change > rule.max_increase && p.is_some_and(|p| p < rule.alpha),
        stratified: false,
    }
}

/// The rule stratified by task, when both sides span [`MIN_TASKS`] or more tasks
/// (`tasks`: per task, `arm` the new side and `base` the base side): the change is the
/// Mantel–Haenszel difference and p the one-sided CMH p, Φ̄(z) with z from the
/// hypergeometric moments of each task's table (the exact conditional tail when events
/// are sparse, see [`crate::stats::cmh`]); otherwise [`judge`] on the pooled
/// counts `base` and `new`. Tasks where either side has n = 0 are left out of the
/// stratified statistics.
pub fn judge_by_task(
    metric: Metric,
    base: Count,
    new: Count,
    tasks: &[TaskCounts],
    rule: Rule,
) -> Judgement {
    let spans = |side: fn(&TaskCounts) -> Count| tasks.iter().filter(|t| side(t).n > 0).count();
    if metric.def().gate == Gate::Differs
        || spans(|t| t.base) < MIN_TASKS
        || spans(|t| t.arm) < MIN_TASKS
    {
        return judge(metric, base, new, rule);
    }
    let (sign, alternative) = worse_direction(metric);
    // The level of the interval is not used: only the estimate is.
    let change = stratified_of(tasks, 0.95)
        .and_then(|s| s.diff)
        .map(|d| d.estimate);
    let p = cmh_one_sided(tasks, alternative);
    Judgement {
        change,
        p,
        regression: change.is_some_and(|c| sign * c > rule.max_increase)
            && p.is_some_and(|p| p < rule.alpha),
        stratified: true,
    }
}

/// One task's row of a verdict under `--by-task`: both runs' counts, the change and its
/// one-sided Fisher p (H1: the new rate is worse).
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRow {
    /// The task; base and new counts of one metric of one arm.
    pub counts: TaskCounts,
    /// rate(new) − rate(base) in this task; None when either side has n = 0.
    pub change: Option<f64>,
    /// One-sided Fisher exact p of this task's table.
    pub p: Option<f64>,
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
    /// One row per task either run has for this arm, sorted by task.
    pub by_task: Vec<TaskRow>,
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
    /// The outputs show the per-task rows (`--by-task`).
    pub show_by_task: bool,
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

    /// Number of regressions found, the rates that differ beyond the bound
    /// ([`Comparison::differing`]) among them: each fails the comparison.
    pub fn regressions(&self) -> usize {
        self.metrics
            .iter()
            .flat_map(|(_, v)| v)
            .filter(|v| v.judgement.regression)
            .count()
    }

    /// The (metric, arm) pairs whose rate of a [`Gate::Differs`] metric differs between
    /// the runs by more than `--max-increase`: the runs did not measure the same
    /// sessions, so nothing else of theirs can pass.
    pub fn differing(&self) -> Vec<(Metric, &str)> {
        self.metrics
            .iter()
            .filter(|(m, _)| m.def().gate == Gate::Differs)
            .flat_map(|(m, v)| {
                v.iter()
                    .filter(|v| v.judgement.regression)
                    .map(move |v| (*m, v.arm.as_str()))
            })
            .collect()
    }
}

/// Compares two results directories on `metrics`, arm by arm: the arms of `arms`
/// (each must be in both runs, else bad input), or else every arm the two runs share;
/// the others are listed in [`Comparison::only_base`] and [`Comparison::only_new`].
///
/// Fails closed (bad input, exit 2) where the gate cannot judge: a judged arm and
/// metric with no data.
pub fn compare_runs(
    base: &RunDir,
    new: &RunDir,
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
        refuse_arms_without_data(run, arms)?;
    }
    let mut order = base_info.order_arms(&base_agg.arms(), base_info.baseline.as_deref());
    if let Some(arms) = arms {
        for arm in arms {
            for (agg, run, which) in [(&base_agg, base, "base"), (&new_agg, new, "new")] {
                if !agg.by_arm.contains_key(arm) {
                    return Err(Error::BadInput(format!(
                        "--arms: arm '{arm}' is not in the {which} run '{}' (its arms: {})",
                        run.path().display(),
                        agg.arms().join(", ")
                    )));
                }
            }
        }
        order.retain(|a| arms.contains(a));
    }
    let simulated = base_info.simulated || new_info.simulated;
    let mut comparison = compare_aggregates(&base_agg, &new_agg, &order, metrics, rule, simulated);
    // The rates that say whether the others measured the same sessions are judged for
    // every compared arm, named or not, where both runs record them.
    let unnamed: Vec<Metric> = Metric::ALL
        .into_iter()
        .filter(|m| m.def().gate == Gate::Differs && !metrics.contains(m))
        .collect();
    let extra = compare_aggregates(&base_agg, &new_agg, &order, &unnamed, rule, simulated);
    for (metric, verdicts) in extra.metrics {
        let (judged, unrecorded): (Vec<Verdict>, Vec<Verdict>) = verdicts
            .into_iter()
            .partition(|v| v.base.n > 0 && v.new.n > 0);
        if !unrecorded.is_empty() {
            comparison.warnings.push(format!(
                "{metric} not judged for {} '{}': a run records none of its coding \
                 sessions' {metric} (written before loopbench recorded it, or without coding \
                 sessions)",
                if unrecorded.len() == 1 { "arm" } else { "arms" },
                unrecorded
                    .iter()
                    .map(|v| v.arm.as_str())
                    .collect::<Vec<_>>()
                    .join("', '"),
            ));
        }
        if !judged.is_empty() {
            comparison.metrics.push((metric, judged));
        }
    }
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
            new.path().display(),
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
            comparison.warnings.push(format!(
                "'{}' is {}",
                run.path().display(),
                shard_note(shard)
            ));
        }
    }
    // Fail closed: a metric the gate cannot judge is bad input, never a pass.
    refuse_gaps(&comparison, base.path(), new.path())?;
    Ok(comparison)
}

/// Bad input when `run` has an arm to judge (one of `arms`, or any) without data: every
/// trial failed outside the agent, or every session failed `agent`.
fn refuse_arms_without_data(run: &RunDir, arms: Option<&[String]>) -> Result<()> {
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
            run.path().display(),
            empty.join(", "),
        )));
    }
    Ok(())
}

/// Bad input when a compared arm has no data for a metric in either run.
fn refuse_gaps(comparison: &Comparison, base: &Path, new: &Path) -> Result<()> {
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
    Ok(())
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
                    let tasks =
                        pair_tasks(new.task_counts(arm, metric), base.task_counts(arm, metric));
                    let (_, alternative) = worse_direction(metric);
                    Verdict {
                        arm: arm.clone(),
                        base: b,
                        new: n,
                        judgement: judge_by_task(metric, b, n, &tasks, rule),
                        by_task: tasks
                            .into_iter()
                            .map(|t| TaskRow {
                                change: t.diff(),
                                p: t.fisher_p(alternative),
                                counts: t,
                            })
                            .collect(),
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
        show_by_task: false,
    }
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
}
