//! Generates results directories made of `sessions.csv` and `trials.csv` (every column
//! of `SESSION_COLUMNS` / `TRIAL_COLUMNS`) with exact event counts per arm, and
//! optionally a `manifest.json`, for the report, compare and weekly tests.
#![allow(dead_code)]

use std::path::Path;

use loopbench::record::{SESSION_COLUMNS, TRIAL_COLUMNS};
use serde_json::json;

/// One arm of a generated run.
#[derive(Debug, Clone)]
pub struct ArmSpec {
    /// Arm name.
    pub name: String,
    /// Trials of the arm (replicates of one task, or spread over `tasks`).
    pub trials: usize,
    /// Coding sessions per trial (each trial also gets an initializer session 0).
    pub coding_per_trial: usize,
    /// Integer session columns and how many coding sessions of the arm have a value
    /// above 0 in them (e.g. `("desc_edits", 31)`), or the boolean `unobservable` and
    /// how many are true; spread evenly over the sessions.
    pub events: Vec<(&'static str, u64)>,
    /// Trials with `premature_victory = true`.
    pub premature_victories: u64,
    /// Task names; trial r uses task `tasks[r % len]`.
    pub tasks: Vec<String>,
}

impl ArmSpec {
    /// An arm of `trials` trials × `coding_per_trial` coding sessions, no events.
    pub fn new(name: &str, trials: usize, coding_per_trial: usize) -> ArmSpec {
        ArmSpec {
            name: name.to_string(),
            trials,
            coding_per_trial,
            events: Vec::new(),
            premature_victories: 0,
            tasks: vec!["ledgerly".to_string()],
        }
    }

    /// Adds `k` coding sessions with `column > 0`.
    pub fn with(mut self, column: &'static str, k: u64) -> ArmSpec {
        assert!(SESSION_COLUMNS.contains(&column), "no column {column}");
        self.events.push((column, k));
        self
    }

    /// Sets the trials with premature victory.
    pub fn victories(mut self, k: u64) -> ArmSpec {
        self.premature_victories = k;
        self
    }

    /// Spreads the trials over these tasks.
    pub fn tasks(mut self, tasks: &[&str]) -> ArmSpec {
        self.tasks = tasks.iter().map(|t| t.to_string()).collect();
        self
    }

    fn coding_sessions(&self) -> u64 {
        (self.trials * self.coding_per_trial) as u64
    }
}

/// The arms of the published figures (docs/metrics.md): 240 coding sessions each (20 trials × 12), with the
/// published counts of description edits, test removals and premature claims.
pub fn published_arms() -> Vec<ArmSpec> {
    [
        ("json", 4, 2, 22),
        ("markdown", 31, 18, 44),
        ("yaml", 19, 11, 37),
    ]
    .into_iter()
    .map(|(name, desc, tests, premature)| {
        ArmSpec::new(name, 20, 12)
            .with("desc_edits", desc)
            .with("tests_removed", tests)
            .with("premature_claims", premature)
    })
    .collect()
}

/// Whether session `g` (0-based among `n`) carries one of `k` evenly spread events.
fn spread(g: u64, k: u64, n: u64) -> bool {
    ((g + 1) * k) / n > (g * k) / n
}

/// Writes `dir/sessions.csv` and `dir/trials.csv` for `arms`.
pub fn write_csvs(dir: &Path, arms: &[ArmSpec]) {
    std::fs::create_dir_all(dir).unwrap();
    let mut sessions = csv::Writer::from_path(dir.join("sessions.csv")).unwrap();
    sessions.write_record(SESSION_COLUMNS.iter()).unwrap();
    let mut trials = csv::Writer::from_path(dir.join("trials.csv")).unwrap();
    trials.write_record(TRIAL_COLUMNS.iter()).unwrap();
    for arm in arms {
        let n = arm.coding_sessions();
        for r in 0..arm.trials {
            let task = &arm.tasks[r % arm.tasks.len()];
            let trial_id = format!("{}:{task}:{r}", arm.name);
            // The initializer session: events everywhere, which must not be counted.
            let mut init = session_row(&trial_id, &arm.name, task, r, 0, "initializer");
            for (column, _) in &arm.events {
                set(&mut init, column, event(column, "7"));
            }
            sessions.write_record(&init).unwrap();
            for s in 0..arm.coding_per_trial {
                let g = (r * arm.coding_per_trial + s) as u64;
                let mut row = session_row(&trial_id, &arm.name, task, r, s + 1, "coding");
                for (column, k) in &arm.events {
                    if spread(g, *k, n) {
                        set(&mut row, column, event(column, "1"));
                    }
                }
                sessions.write_record(&row).unwrap();
            }
            let victory = spread(r as u64, arm.premature_victories, arm.trials as u64);
            let features = (r % 7) + 2;
            let trial: Vec<String> = TRIAL_COLUMNS
                .iter()
                .map(|c| match *c {
                    "trial_id" => trial_id.clone(),
                    "arm" => arm.name.clone(),
                    "task" => task.clone(),
                    "replicate" => r.to_string(),
                    "features_verified" => features.to_string(),
                    "features_total" => "10".into(),
                    "sessions" => (arm.coding_per_trial + 1).to_string(),
                    "ended_by" => "max_sessions".into(),
                    "premature_victory" => victory.to_string(),
                    "turns" => "400".into(),
                    "attempts" => "1".into(),
                    "input_tokens" | "output_tokens" | "cost_usd" | "error" | "plan_omissions"
                    | "tokens" => String::new(),
                    other => panic!("unknown trial column {other}"),
                })
                .collect();
            trials.write_record(&trial).unwrap();
        }
    }
    sessions.flush().unwrap();
    trials.flush().unwrap();
}

/// The cell of an event in `column`: `count` for a count, `true` for a boolean column.
fn event(column: &str, count: &'static str) -> &'static str {
    if column == "unobservable" {
        "true"
    } else {
        count
    }
}

fn set(row: &mut [String], column: &str, value: &str) {
    let i = SESSION_COLUMNS.iter().position(|c| *c == column).unwrap();
    row[i] = value.to_string();
    // Premature claims are among the claims (the reports refuse a row with more).
    if column == "premature_claims" {
        set(row, "newly_claimed", value);
    }
}

fn session_row(
    trial_id: &str,
    arm: &str,
    task: &str,
    r: usize,
    s: usize,
    kind: &str,
) -> Vec<String> {
    SESSION_COLUMNS
        .iter()
        .map(|c| match *c {
            "trial_id" => trial_id.to_string(),
            "arm" => arm.to_string(),
            "task" => task.to_string(),
            "replicate" => r.to_string(),
            "session" => s.to_string(),
            "kind" => kind.to_string(),
            "outcome" => "completed".into(),
            "list_parse_ok" | "clean_tree" | "progress_updated" | "exit_check" => "true".into(),
            "resumed" | "flaky" | "divergent" | "reverted" | "over_budget" | "effects_tampered"
            | "unobservable" => "false".into(),
            // Passes-schema rows: the status-schema fields are null.
            "in_progress" | "contract_edits" | "failure" => String::new(),
            "resume_success" | "input_tokens" | "output_tokens" | "cost_usd" | "error" => {
                String::new()
            }
            "turns" => "30".into(),
            _ => "0".into(),
        })
        .collect()
}

/// Writes `dir/manifest.json` with the fields the reports read (and a few others).
pub fn write_manifest(dir: &Path, arms: &[&str], started: &str, simulated: bool) {
    std::fs::create_dir_all(dir).unwrap();
    let manifest = json!({
        "suite": "seed-replication",
        "suite_hash": "0",
        "arms": arms,
        "tasks": ["ledgerly"],
        "seed": 20260704,
        "replicates": 20,
        "driver": if simulated { "sim" } else { "command" },
        "simulated": simulated,
        "shard": null,
        "loopbench_version": "0.1.0",
        "git_commit": "test",
        "host": "test",
        "started": started,
        "finished": null,
        "verify_network_isolated": true,
    });
    std::fs::write(
        dir.join("manifest.json"),
        serde_json::to_string_pretty(&manifest).unwrap(),
    )
    .unwrap();
}
