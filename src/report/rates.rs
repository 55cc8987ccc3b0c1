//! Interim per-arm rate table computed from the JSONL records (replaced by the polars
//! summary when it lands).

use std::collections::BTreeMap;
use std::path::Path;

use super::table::{Align, Table};
use crate::agent::SessionKind;
use crate::error::Result;
use crate::record::{SessionRecord, TrialRecord};
use crate::store::{SESSIONS_JSONL, TRIALS_JSONL, read_jsonl};

/// A plain table of the main rates per arm.
pub fn session_counts(dir: &Path, arms: &[String]) -> Result<String> {
    let sessions: Vec<SessionRecord> = read_jsonl(&dir.join(SESSIONS_JSONL))?;
    let trials: Vec<TrialRecord> = read_jsonl(&dir.join(TRIALS_JSONL))?;
    let mut table = Table::new([
        ("arm", Align::Left),
        ("coding", Align::Right),
        ("premature", Align::Right),
        ("desc_edit", Align::Right),
        ("test_removal", Align::Right),
        ("told_false", Align::Right),
        ("resume_ok", Align::Right),
        ("victory!", Align::Right),
        ("features", Align::Right),
    ]);
    let mut by_arm: BTreeMap<&str, Vec<&SessionRecord>> = BTreeMap::new();
    for s in sessions.iter().filter(|s| s.kind == SessionKind::Coding) {
        by_arm.entry(s.key.arm.as_str()).or_default().push(s);
    }
    let rate = |k: usize, n: usize| {
        if n == 0 {
            "-".to_string()
        } else {
            format!("{k}/{n} {:.1}%", 100.0 * k as f64 / n as f64)
        }
    };
    for arm in arms {
        let rows = by_arm.get(arm.as_str()).cloned().unwrap_or_default();
        let listed: Vec<_> = rows
            .iter()
            .filter(|s| s.metrics.newly_claimed.is_some())
            .collect();
        let count = |f: &dyn Fn(&SessionRecord) -> bool, set: &[&&SessionRecord]| {
            set.iter().filter(|s| f(s)).count()
        };
        let all: Vec<&&SessionRecord> = rows.iter().collect();
        let resumed: Vec<&&SessionRecord> = rows
            .iter()
            .filter(|s| s.metrics.resume_success.is_some())
            .collect();
        let arm_trials: Vec<&TrialRecord> = trials.iter().filter(|t| &t.key.arm == arm).collect();
        let victory = arm_trials
            .iter()
            .filter(|t| t.metrics.premature_victory)
            .count();
        let features: f64 = arm_trials
            .iter()
            .map(|t| f64::from(t.metrics.features_verified))
            .sum::<f64>()
            / arm_trials.len().max(1) as f64;
        table.push(vec![
            arm.clone(),
            rows.len().to_string(),
            rate(
                count(&|s| s.metrics.premature_claims.unwrap_or(0) > 0, &listed),
                listed.len(),
            ),
            rate(
                count(&|s| s.metrics.desc_edits.unwrap_or(0) > 0, &listed),
                listed.len(),
            ),
            rate(count(&|s| s.metrics.tests_removed > 0, &all), all.len()),
            rate(
                count(&|s| s.metrics.told_false.unwrap_or(0) > 0, &listed),
                listed.len(),
            ),
            rate(
                count(&|s| s.metrics.resume_success == Some(true), &resumed),
                resumed.len(),
            ),
            rate(victory, arm_trials.len()),
            format!("{features:.2}"),
        ]);
    }
    Ok(table.to_plain())
}
