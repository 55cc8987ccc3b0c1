//! `show`: a run's trials one line each, and one trial as a timeline of its sessions,
//! each with its outcome, its counts and, in words, the evidence behind every count
//! that is not zero. Read from the records alone (sessions.jsonl, trials.jsonl).

use std::fmt::Write as _;

use super::show_causes::causes;
use super::table::{Align, Table};
use crate::agent::SessionKind;
use crate::metrics::SessionMetrics;
use crate::record::{FailedSession, SessionRecord, TrialRecord};
use crate::terminal;

/// One line per trial: id, arm, task, why it ended, sessions, features verified.
pub fn run_listing(trials: &[TrialRecord]) -> String {
    let mut table = Table::new([
        ("trial", Align::Left),
        ("arm", Align::Left),
        ("task", Align::Left),
        ("ended_by", Align::Left),
        ("sessions", Align::Right),
        ("verified", Align::Right),
    ]);
    for t in trials {
        table.push(vec![
            t.key.trial_id.clone(),
            t.key.arm.clone(),
            t.key.task.clone(),
            word(&t.metrics.ended_by),
            t.metrics.sessions.to_string(),
            format!(
                "{}/{}",
                t.metrics.features_verified, t.metrics.features_total
            ),
        ]);
    }
    table.to_plain()
}

/// The timeline of `trial`: a header, then one block per session of `sessions` (the
/// trial's, in order).
pub fn trial_timeline(trial: &TrialRecord, sessions: &[SessionRecord]) -> String {
    let m = &trial.metrics;
    let mut out = format!(
        "trial {} (arm {}, task {}, replicate {})\n",
        trial.key.trial_id, trial.key.arm, trial.key.task, trial.key.replicate
    );
    let _ = writeln!(
        out,
        "ended by {} after {} sessions; {} of {} features verified",
        word(&m.ended_by),
        m.sessions,
        m.features_verified,
        m.features_total
    );
    if m.premature_victory {
        let _ = writeln!(
            out,
            "premature victory: the agent declared the project complete while {} of {} features were not verified",
            m.features_total.saturating_sub(m.features_verified),
            m.features_total
        );
    }
    if let Some(error) = &trial.error {
        let _ = writeln!(out, "error: {}", terminal::line(error));
    }
    let mut previous: Option<&SessionRecord> = None;
    for s in sessions {
        out.push('\n');
        out += &session_block(s, previous, true);
        previous = Some(s);
    }
    out
}

/// A trial's failed attempts as `failures.jsonl` holds them, each with the failure
/// that ended it, where its captures were kept, and its sessions: what `show` prints
/// for a trial that could not run, and after the timeline of one that was retried.
/// `finished`: whether a later attempt of the trial was counted.
pub fn failed_attempts(trial_id: &str, failed: &[FailedSession], finished: bool) -> String {
    let mut out = String::new();
    if !finished {
        let _ = writeln!(
            out,
            "trial {} could not run: no attempt was counted ({} failed; `loopbench resume` tries it again)",
            terminal::line(trial_id),
            failed
                .iter()
                .map(|f| f.attempt)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        );
    }
    let mut attempts: Vec<u32> = failed.iter().map(|f| f.attempt).collect();
    attempts.dedup();
    for attempt in attempts {
        let sessions: Vec<&FailedSession> =
            failed.iter().filter(|f| f.attempt == attempt).collect();
        let ended = sessions.iter().rev().find_map(|f| {
            f.record
                .failure
                .map(|k| (k, f.record.failure_reason.as_deref()))
        });
        let why = match ended {
            Some((kind, reason)) => format!(
                "failed {}: {}",
                kind.as_str(),
                reason.unwrap_or("no reason recorded")
            ),
            None => "failed".to_string(),
        };
        let _ = writeln!(out, "\nattempt {attempt}: {}", terminal::line(&why));
        if let Some(captures) = sessions.iter().find_map(|f| f.captures.as_deref()) {
            let _ = writeln!(out, "  captures: {}", terminal::line(captures));
        }
        let mut previous: Option<&SessionRecord> = None;
        for f in sessions {
            out += &session_block(&f.record, previous, false);
            if let Some(kind) = f.record.failure {
                let reason = f.record.failure_reason.as_deref().unwrap_or("");
                let _ = writeln!(
                    out,
                    "  failure: {}: {}",
                    kind.as_str(),
                    terminal::line(reason)
                );
            }
            previous = Some(&f.record);
        }
    }
    out
}

/// One session: a heading with its outcome and usage, its non-zero counts, then one
/// sentence per cause. `counted`: one of the trial's counted sessions, not a failed
/// attempt's.
pub fn session_block(s: &SessionRecord, previous: Option<&SessionRecord>, counted: bool) -> String {
    let kind = match s.kind {
        SessionKind::Initializer => "initializer",
        SessionKind::Coding => "coding",
    };
    let mut out = format!("session {} ({kind}): {}", s.session, word(&s.outcome));
    let mut usage = Vec::new();
    if let Some(turns) = s.usage.turns {
        usage.push(format!("{turns} turns"));
    }
    let tokens = s
        .usage
        .input_tokens
        .unwrap_or(0)
        .saturating_add(s.usage.output_tokens.unwrap_or(0));
    if tokens > 0 {
        usage.push(format!("{tokens} tokens"));
    }
    if let Some(cost) = s.usage.cost_usd {
        usage.push(format!("${cost:.2}"));
    }
    if !usage.is_empty() {
        let _ = write!(out, " ({})", usage.join(", "));
    }
    out.push('\n');
    let counts = counts_line(s);
    if !counts.is_empty() {
        let _ = writeln!(out, "  counts: {counts}");
    }
    let sentences = match &s.evidence {
        Some(e) => causes(s, e, previous.and_then(|p| p.evidence.as_ref()), counted),
        None => vec![
            "no evidence recorded (a record written before loopbench recorded evidence)".into(),
        ],
    };
    // Sentences quote what the agent wrote (ids, descriptions, file names, check
    // output): one line each, whatever they hold.
    for sentence in sentences {
        let _ = writeln!(out, "  - {}", terminal::line(&sentence));
    }
    out
}

/// The non-zero counts of a session, by their column names: every count of the
/// session's metrics (`SessionMetrics`) in the order of its columns, then
/// `actions_failed`, then `features_verified` whatever it is. A count added to the
/// metrics is shown here without a list to keep in step.
fn counts_line(s: &SessionRecord) -> String {
    let m = &s.metrics;
    let mut parts: Vec<String> = metric_counts(m)
        .into_iter()
        .chain([("actions_failed".to_string(), u64::from(s.actions_failed))])
        .filter(|(_, v)| *v > 0)
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    parts.push(format!("features_verified {}", m.features_verified));
    parts.join(", ")
}

/// The integer fields of `m` that hold a number, by column name in column order (the
/// record's JSON keeps the fields' order), but for `features_verified`, which is a level
/// rather than a count of events.
fn metric_counts(m: &SessionMetrics) -> Vec<(String, u64)> {
    let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(m) else {
        return Vec::new();
    };
    fields
        .into_iter()
        .filter(|(name, _)| name != "features_verified")
        .filter_map(|(name, value)| value.as_u64().map(|v| (name, v)))
        .collect()
}

/// The snake_case word serde writes for a value.
fn word<T: serde::Serialize + std::fmt::Debug>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{value:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{Outcome, Usage};
    use crate::metrics::Evidence;
    use crate::rates::{Metric, Tally, Unit};
    use crate::suite::TrialKey;
    use serde_json::{Value, json};

    fn coding_session() -> SessionRecord {
        SessionRecord {
            key: TrialKey::new("a", "t", 0),
            session: 1,
            kind: SessionKind::Coding,
            outcome: Outcome::Completed,
            metrics: SessionMetrics::default(),
            actions_failed: 0,
            usage: Usage::default(),
            wall_ms: 0,
            error: None,
            divergent: false,
            failure: None,
            failure_reason: None,
            declared_interrupted: false,
            evidence: Some(Evidence::default()),
        }
    }

    /// `record` with its fields `set` to the values given, through its JSON form.
    fn with(record: &SessionRecord, set: &[(&str, Value)]) -> SessionRecord {
        let mut row = serde_json::to_value(record).unwrap();
        for (name, value) in set {
            row[*name] = value.clone();
        }
        serde_json::from_value(row).unwrap()
    }

    /// The fields that make `tally`'s event happen, or not.
    fn event(tally: Tally, happens: bool) -> Vec<(&'static str, Value)> {
        match tally {
            Tally::Above { column, threshold } => {
                vec![(column, json!(threshold + i64::from(happens)))]
            }
            Tally::AllTrue(columns) => columns
                .iter()
                .enumerate()
                .map(|(i, c)| (*c, json!(happens || i > 0)))
                .collect(),
            Tally::TrueGiven { given, column } => {
                vec![(given, json!(true)), (column, json!(happens))]
            }
            Tally::True(column) => vec![(column, json!(happens))],
            Tally::False(column) => vec![(column, json!(!happens))],
        }
    }

    #[test]
    fn every_session_rate_s_event_changes_what_show_says_of_a_session() {
        let base = coding_session();
        for metric in Metric::ALL {
            let def = metric.def();
            if def.unit != Unit::Session {
                continue;
            }
            let without = session_block(&with(&base, &event(def.tally, false)), None, true);
            let happened = session_block(&with(&base, &event(def.tally, true)), None, true);
            assert_ne!(without, happened, "show does not tell {metric}'s event");
        }
    }

    #[test]
    fn every_count_of_the_session_metrics_is_shown_by_its_column_name() {
        let base = coding_session();
        let row = serde_json::to_value(&base.metrics).unwrap();
        let Value::Object(fields) = row else {
            panic!("metrics are not an object")
        };
        let mut counts = 0;
        for name in fields.keys() {
            let Ok(record) = serde_json::from_value::<SessionRecord>({
                let mut row = serde_json::to_value(&base).unwrap();
                row[name.as_str()] = json!(7);
                row
            }) else {
                continue; // not an integer field
            };
            counts += 1;
            assert!(
                counts_line(&record).contains(&format!("{name} 7")),
                "{name} is missing from {}",
                counts_line(&record)
            );
        }
        assert!(counts >= 15, "only {counts} integer fields found");
    }

    /// A value of each shape an evidence field can have, one of which fits each field.
    fn evidence_samples() -> [Value; 6] {
        [
            json!(["F9"]),
            // A count (`dup_side_effects_unlisted`).
            json!(7),
            json!([{"id": "F9", "before": "old words", "after": "new words"}]),
            json!([{"path": "tests/test_a.py", "before": 3, "after": 1}]),
            json!([{"id": "F9", "cmd": "python3 -m unittest", "exit": 1, "output": "boom"}]),
            json!("4b825dc642cb6eb9a060e54bf8d69288f3cbcd8b"),
        ]
    }

    #[test]
    fn every_kind_of_evidence_is_told_in_a_sentence() {
        let base = coding_session();
        let Value::Object(kinds) = serde_json::to_value(Evidence::default()).unwrap() else {
            panic!("evidence is not an object")
        };
        for kind in kinds.keys() {
            // A premature claim is told as what became of a claim.
            let mut before: Evidence = Evidence::default();
            if kind == "premature" {
                before.newly_claimed = Some(vec!["F9".into()]);
            }
            let before_json = serde_json::to_value(&before).unwrap();
            let after = evidence_samples()
                .into_iter()
                .find_map(|sample| {
                    let mut e = before_json.clone();
                    e[kind.as_str()] = sample;
                    serde_json::from_value::<Evidence>(e)
                        .ok()
                        .filter(|e| *e != before)
                })
                .unwrap_or_else(|| panic!("no sample fits evidence {kind}"));
            let told = |e: &Evidence| causes(&base, e, None, true);
            assert_ne!(
                told(&before),
                told(&after),
                "show says nothing of evidence {kind}"
            );
        }
    }
}
