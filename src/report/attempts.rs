//! What the failed attempts of a run say per arm: trials that could not run (with
//! their reasons, grouped), arms left with no counted trial, each arm's share of
//! retried trials, with a warning when the arms differ in it (a difference in outages
//! is itself a finding, and retries can select trials), and arms every session of which
//! failed `agent`. Read from `failures.jsonl`, `trials.jsonl` and `sessions.jsonl`;
//! empty for a run without failures, so that its reports are unchanged.

use std::collections::BTreeMap;

use crate::agent::FailureKind;
use crate::error::Result;
use crate::record::{FailedSession, SessionRecord, TrialRecord};
use crate::run_dir::RunDir;
use crate::stats::{Alternative, fisher_exact, holm};
use crate::store::{jsonl_records, read_jsonl};

/// Significance level below which the arms' shares of retried trials are said to differ.
pub const RETRY_ALPHA: f64 = 0.05;

/// One arm's attempts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArmAttempts {
    /// Trials recorded (counted in the tables).
    pub finished: u64,
    /// Of those, the ones that needed more than one attempt.
    pub retried: u64,
    /// Trials that could not run, by the reason of their last failed session
    /// (`kind: reason`).
    pub could_not_run: BTreeMap<String, u64>,
    /// Of the finished trials, those that ended before a session that failed outside
    /// the agent after sessions that count (`auth`, or `infra` past its reruns), by
    /// that reason: counted as far as they went.
    pub ended_early: BTreeMap<String, u64>,
}

impl ArmAttempts {
    /// Trials that could not run.
    pub fn unfinished(&self) -> u64 {
        self.could_not_run.values().sum()
    }

    /// Trials that failed at least once: retried ones and ones that could not run.
    fn failed_once(&self) -> u64 {
        self.retried + self.unfinished()
    }

    /// Every trial that was tried.
    fn tried(&self) -> u64 {
        self.finished + self.unfinished()
    }
}

/// The attempts of every arm of a run that had any failed attempt.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attempts {
    /// Per arm, in the order given to [`Attempts::read`]; empty when no attempt failed.
    pub arms: Vec<(String, ArmAttempts)>,
    /// Arms every counted session of which failed `agent`, with their session counts.
    pub all_agent_failures: Vec<(String, u64)>,
}

impl Attempts {
    /// Reads the run directory `dir`; `arms` gives the order (baseline first).
    pub fn read(dir: &RunDir, arms: &[String]) -> Result<Attempts> {
        let all_agent_failures = all_agent_failures(dir, arms)?;
        let failed: Vec<FailedSession> = read_jsonl(&dir.failures_jsonl())?;
        if failed.is_empty() {
            return Ok(Attempts {
                all_agent_failures,
                ..Attempts::default()
            });
        }
        let mut by_arm: BTreeMap<String, ArmAttempts> = BTreeMap::new();
        // Finished trials, by id: their arm and counted attempt.
        let mut finished: BTreeMap<String, (String, u32)> = BTreeMap::new();
        for t in jsonl_records::<TrialRecord>(&dir.trials_jsonl())? {
            let t = t?;
            let arm = by_arm.entry(t.key.arm.clone()).or_default();
            arm.finished += 1;
            arm.retried += u64::from(t.attempts > 1);
            finished.insert(t.key.trial_id.clone(), (t.key.arm, t.attempts));
        }
        count_sessions_left_out(dir, &failed, &finished, &mut by_arm)?;
        for last in crate::store::unfinished_trials(dir)? {
            let kind = last.record.failure.map_or("infra", |k| k.as_str());
            let reason = last
                .record
                .failure_reason
                .unwrap_or_else(|| "no reason recorded".into());
            *by_arm
                .entry(last.record.key.arm.clone())
                .or_default()
                .could_not_run
                // The reason quotes what a CLI or a wrapper wrote: printed escaped.
                .entry(format!("{kind}: {}", crate::terminal::line(&reason)))
                .or_insert(0) += 1;
        }
        let mut ordered: Vec<(String, ArmAttempts)> = Vec::new();
        for arm in arms {
            if let Some(a) = by_arm.remove(arm) {
                ordered.push((arm.clone(), a));
            }
        }
        ordered.extend(by_arm);
        Ok(Attempts {
            arms: ordered,
            all_agent_failures,
        })
    }

    /// The warnings on arms every session of which failed `agent`: they ran, but
    /// nothing in them ended the way the agent meant.
    pub fn agent_failure_lines(&self) -> Vec<String> {
        self.all_agent_failures
            .iter()
            .map(|(arm, n)| {
                format!(
                    "arm {arm}: every one of its {n} session{} failed `agent` (exited non-zero or was killed); its rows measure an agent that did not work",
                    if *n == 1 { "" } else { "s" }
                )
            })
            .collect()
    }

    /// One sentence per arm with trials that could not run, one per arm with no
    /// counted trial, and the warning on the shares of retried trials: what the
    /// verdict says about failures outside the agents (none of them counted).
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (arm, a) in &self.arms {
            let early: u64 = a.ended_early.values().sum();
            if early > 0 {
                let reasons: Vec<String> = a
                    .ended_early
                    .iter()
                    .map(|(reason, k)| format!("{k} × {reason}"))
                    .collect();
                lines.push(format!(
                    "arm {arm}: {early} trial{} ended early at a session that failed outside \
                     the agent after sessions that count, counted as far as {} went ({})",
                    if early == 1 { "" } else { "s" },
                    if early == 1 { "it" } else { "they" },
                    reasons.join("; ")
                ));
            }
            let n = a.unfinished();
            if n == 0 {
                continue;
            }
            let reasons: Vec<String> = a
                .could_not_run
                .iter()
                .map(|(reason, k)| format!("{k} × {reason}"))
                .collect();
            lines.push(format!(
                "arm {arm}: {n} trial{} could not run ({}){}",
                if n == 1 { "" } else { "s" },
                reasons.join("; "),
                if a.finished == 0 {
                    "; it has no counted trial: no data"
                } else {
                    ""
                }
            ));
        }
        if !self.arms.is_empty() {
            lines.push(format!(
                "trials that failed outside the agent at least once (retried or could not run): {}",
                self.shares().join(", ")
            ));
        }
        if let Some(warning) = self.retry_warning() {
            lines.push(warning);
        }
        lines
    }

    /// Each arm's trials that failed at least once, of the trials tried: "a 1/20".
    fn shares(&self) -> Vec<String> {
        self.arms
            .iter()
            .map(|(arm, a)| format!("{arm} {}/{}", a.failed_once(), a.tried()))
            .collect()
    }

    /// A warning when some two arms differ in their share of trials that failed at
    /// least once: Fisher's exact test (two-sided) for every pair of arms, the p-values
    /// Holm-adjusted over the pairs, and a pair differs at adjusted p < 0.05. Every
    /// pair, not each arm against the baseline alone: an outage that hit two candidate
    /// arms unequally selects their trials just as much.
    pub fn retry_warning(&self) -> Option<String> {
        let mut pairs: Vec<(usize, usize, f64)> = Vec::new();
        for (i, (_, a)) in self.arms.iter().enumerate() {
            for (j, (_, b)) in self.arms.iter().enumerate().skip(i + 1) {
                let table = [
                    [a.failed_once(), a.tried() - a.failed_once()],
                    [b.failed_once(), b.tried() - b.failed_once()],
                ];
                if let Ok(p) = fisher_exact(table, Alternative::TwoSided) {
                    pairs.push((i, j, p));
                }
            }
        }
        let raw: Vec<f64> = pairs.iter().map(|(_, _, p)| *p).collect();
        let adjusted = holm(&raw).ok()?;
        let differing: Vec<String> = pairs
            .iter()
            .zip(&adjusted)
            .filter(|(_, p)| **p < RETRY_ALPHA)
            .map(|((i, j, _), p)| {
                format!(
                    "{} vs {}: Holm-adjusted Fisher p = {p:.3}",
                    self.arms[*j].0, self.arms[*i].0
                )
            })
            .collect();
        (!differing.is_empty()).then(|| {
            format!(
                "the arms differ in their share of trials that failed outside the agent \
                 ({}; {}): outages hit them unequally, and a retried trial is a selected one",
                self.shares().join(", "),
                differing.join(", ")
            )
        })
    }
}

/// Adds the sessions of counted attempts that failed outside the agent and were left out
/// alone (after sessions that count): their trial failed once (counted as retried when it
/// needed no second attempt), and ended early when no session of it was recorded after
/// the failed one.
fn count_sessions_left_out(
    dir: &RunDir,
    failed: &[FailedSession],
    finished: &BTreeMap<String, (String, u32)>,
    by_arm: &mut BTreeMap<String, ArmAttempts>,
) -> Result<()> {
    // Per trial, its last session left out of its counted attempt.
    let mut left_out: BTreeMap<&str, &FailedSession> = BTreeMap::new();
    for f in failed {
        let id = f.record.key.trial_id.as_str();
        if finished.get(id).is_some_and(|(_, a)| *a == f.attempt) {
            left_out.insert(id, f);
        }
    }
    if left_out.is_empty() {
        return Ok(());
    }
    let mut last_recorded: BTreeMap<String, u32> = BTreeMap::new();
    for s in jsonl_records::<SessionRecord>(&dir.sessions_jsonl())? {
        let s = s?;
        if left_out.contains_key(s.key.trial_id.as_str()) {
            let last = last_recorded.entry(s.key.trial_id).or_insert(0);
            *last = (*last).max(s.session);
        }
    }
    for (id, f) in left_out {
        let Some((arm, attempts)) = finished.get(id) else {
            continue;
        };
        let a = by_arm.entry(arm.clone()).or_default();
        a.retried += u64::from(*attempts == 1);
        if last_recorded
            .get(id)
            .is_none_or(|&last| last < f.record.session)
        {
            let kind = f.record.failure.map_or("infra", |k| k.as_str());
            let reason = f
                .record
                .failure_reason
                .as_deref()
                .unwrap_or("no reason recorded");
            *a.ended_early
                .entry(format!("{kind}: {}", crate::terminal::line(reason)))
                .or_insert(0) += 1;
        }
    }
    Ok(())
}

/// The arms, in `order` (then any other), whose every counted session failed `agent`.
fn all_agent_failures(dir: &RunDir, order: &[String]) -> Result<Vec<(String, u64)>> {
    let mut by_arm: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for s in jsonl_records::<SessionRecord>(&dir.sessions_jsonl())? {
        let s = s?;
        let (n, k) = by_arm.entry(s.key.arm).or_default();
        *n += 1;
        *k += u64::from(s.failure == Some(FailureKind::Agent));
    }
    let mut arms: Vec<(String, u64)> = by_arm
        .into_iter()
        .filter(|(_, (n, k))| *n > 0 && k == n)
        .map(|(arm, (n, _))| (arm, n))
        .collect();
    arms.sort_by_key(|(arm, _)| order.iter().position(|a| a == arm).unwrap_or(usize::MAX));
    Ok(arms)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn arm(finished: u64, retried: u64, unfinished: u64) -> ArmAttempts {
        ArmAttempts {
            finished,
            retried,
            could_not_run: if unfinished > 0 {
                BTreeMap::from([("infra: exit 127".to_string(), unfinished)])
            } else {
                BTreeMap::new()
            },
            ended_early: BTreeMap::new(),
        }
    }

    #[test]
    fn arms_that_could_not_run_are_named_with_their_grouped_reasons() {
        let a = Attempts {
            arms: vec![("a".into(), arm(3, 0, 0)), ("b".into(), arm(0, 0, 2))],
            all_agent_failures: Vec::new(),
        };
        assert_eq!(
            a.lines(),
            [
                "arm b: 2 trials could not run (2 × infra: exit 127); it has no counted trial: no data",
                "trials that failed outside the agent at least once (retried or could not run): a 0/3, b 2/2",
            ]
        );
    }

    #[test]
    fn a_difference_in_retried_shares_is_warned_about_only_when_fisher_says_so() {
        let same = Attempts {
            arms: vec![("a".into(), arm(10, 1, 0)), ("b".into(), arm(10, 2, 0))],
            all_agent_failures: Vec::new(),
        };
        assert_eq!(same.retry_warning(), None);
        // scipy.stats.fisher_exact([[18, 2], [1, 19]]).pvalue = 5.4e-08
        let unequal = Attempts {
            arms: vec![("a".into(), arm(20, 1, 0)), ("b".into(), arm(20, 18, 0))],
            all_agent_failures: Vec::new(),
        };
        let w = unequal.retry_warning().unwrap();
        assert!(w.contains("a 1/20, b 18/20"), "{w}");
        assert!(w.contains("b vs a: Holm-adjusted Fisher p = 0.000"), "{w}");
    }

    #[test]
    fn every_pair_of_arms_is_compared_not_only_each_with_the_first() {
        // a and b alike; c unlike both: the pair (b, c) differs although b is not the
        // first arm. scipy.stats.fisher_exact([[0, 20], [18, 2]]).pvalue = 2.9e-09 for
        // each of (a, c) and (b, c); Holm over three pairs keeps them below 0.05.
        let three = Attempts {
            arms: vec![
                ("a".into(), arm(20, 0, 0)),
                ("b".into(), arm(20, 0, 0)),
                ("c".into(), arm(20, 18, 0)),
            ],
            all_agent_failures: Vec::new(),
        };
        let w = three.retry_warning().unwrap();
        assert!(
            w.contains("c vs a: Holm-adjusted") && w.contains("c vs b: Holm-adjusted"),
            "{w}"
        );
        assert!(!w.contains("b vs a"), "{w}");
        // Agent failures are counted, so they are not among these lines.
        let counted = Attempts {
            arms: Vec::new(),
            all_agent_failures: vec![("a".into(), 4)],
        };
        assert!(counted.lines().is_empty());
        assert_eq!(counted.agent_failure_lines().len(), 1);
    }
}
