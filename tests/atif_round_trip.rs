//! A run of the simulated agent exported to ATIF, imported again with `import atif` and
//! replayed gives the run's own session metrics: every column of `sessions.csv`, for
//! every arm whose trials replay can start as the suite started them. What a trajectory
//! cannot carry is named: the outcome `declared_complete` (the agent's claim, which no
//! importer takes as evidence) comes back `completed`, and the gate arms, whose feature
//! lists the harness writes between sessions, are not replayed.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{loopbench, read_csv, repo_root};

/// The default suite's arms that replay can start as the suite did, each with the
/// `replay` options that say how (`suites/seed-replication/suite.toml`). Left out:
/// `gate` and `status-gate`, whose lists the harness itself updates after each session
/// (no agent's trajectory holds those writes).
const ARMS: &[(&str, &[&str])] = &[
    ("json", &["--format", "json", "--start", "initializer"]),
    (
        "markdown",
        &["--format", "markdown", "--start", "initializer"],
    ),
    ("yaml", &["--format", "yaml", "--start", "initializer"]),
    ("single", &["--format", "json", "--start", "initializer"]),
    ("no-initializer", &["--format", "json", "--start", "repo"]),
    ("crash", &["--format", "json", "--start", "initializer"]),
    (
        "status",
        &[
            "--format",
            "json",
            "--schema",
            "status",
            "--start",
            "initializer",
        ],
    ),
    (
        "revert",
        &[
            "--format",
            "json",
            "--start",
            "initializer",
            "--exit-check",
            "revert",
        ],
    ),
    (
        "budget",
        &[
            "--format",
            "json",
            "--start",
            "initializer",
            "--session-tokens",
            "380000",
        ],
    ),
];

const TASKS: &[&str] = &["invoicer", "todo"];

/// Trials of each (arm, task) replayed: replicates 0..REPLICATES.
const REPLICATES: u32 = 2;

type Row = BTreeMap<String, String>;

fn key(row: &Row) -> (String, String, String, String) {
    (
        row["arm"].clone(),
        row["task"].clone(),
        row["replicate"].clone(),
        row["session"].clone(),
    )
}

#[test]
#[ignore = "reads the default run of the full suite and replays 36 of its trials (about a minute and a half in a debug build); .ci/run runs it"]
fn a_sim_run_exported_to_atif_imported_and_replayed_gives_its_session_metrics() {
    let run = common::shared_run::default_suite_run();
    let seen = round_trip(
        &run,
        ARMS,
        TASKS,
        "suites/seed-replication/tasks",
        REPLICATES,
    );
    for what in [
        "resumed",
        "reverted",
        "over_budget",
        "premature_claims",
        "initializer",
    ] {
        assert!(
            seen.get(what).copied().unwrap_or(0) > 0,
            "no replayed session shows {what}: {seen:?}"
        );
    }
}

/// The same on one trial of each task of two arms, one with an initializer and one
/// without: quick enough for every test run.
#[test]
fn one_trial_of_an_arm_with_and_one_without_an_initializer_round_trip() {
    let run = common::shared_run::shared_run(
        "suites/seed-replication",
        &["--arms", "json,no-initializer", "--replicates", "1"],
    );
    let arms: &[(&str, &[&str])] = &[ARMS[0], ARMS[4]];
    assert_eq!((arms[0].0, arms[1].0), ("json", "no-initializer"));
    let seen = round_trip(&run, arms, TASKS, "suites/seed-replication/tasks", 1);
    assert!(seen["initializer"] == 2 && seen["sessions"] > 4, "{seen:?}");
}

/// Exports `run` to ATIF, imports replicates 0..`replicates` of each arm and task,
/// replays them with the arm's options against `tasks_dir/TASK`, and compares every
/// session with the run's. Returns what the replayed sessions showed, by name.
fn round_trip(
    run: &Path,
    arms: &[(&str, &[&str])],
    tasks: &[&str],
    tasks_dir: &str,
    replicates: u32,
) -> BTreeMap<&'static str, usize> {
    let tmp = tempfile::tempdir().unwrap();
    let export = tmp.path().join("atif");
    loopbench()
        .arg("export")
        .arg(run)
        .args(["--to", "atif", "--out"])
        .arg(&export)
        .assert()
        .success();
    let original: BTreeMap<_, Row> = read_csv(&run.join("sessions.csv"))
        .into_iter()
        .map(|row| (key(&row), row))
        .collect();
    let mut compared = 0;
    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (arm, options) in arms {
        for task in tasks {
            let traces = tmp.path().join("traces").join(arm).join(task);
            std::fs::create_dir_all(&traces).unwrap();
            for replicate in 0..replicates {
                let trial = export.join(arm).join(task).join(replicate.to_string());
                loopbench()
                    .args(["import", "atif"])
                    .arg(&trial)
                    .arg("--out")
                    .arg(traces.join(format!("{replicate}.jsonl")))
                    .assert()
                    .success();
            }
            let out = tmp.path().join("results").join(format!("{arm}-{task}"));
            loopbench()
                .arg("replay")
                .arg(&traces)
                .arg("--task")
                .arg(repo_root().join(tasks_dir).join(task))
                .args(["--arm", arm, "--quiet", "--out"])
                .arg(&out)
                .args(*options)
                .assert()
                .success();
            compared += compare(&out, &original, arm, task, &mut seen);
        }
    }
    // Every session of the trials replayed came back.
    let expected = original
        .keys()
        .filter(|(arm, task, replicate, _)| {
            arms.iter().any(|(a, _)| a == arm)
                && tasks.contains(&task.as_str())
                && replicate.parse::<u32>().unwrap() < replicates
        })
        .count();
    assert_eq!(compared, expected);
    seen.insert("sessions", compared);
    seen
}

/// Compares every session of the replay in `out` with the original's; returns how many.
fn compare(
    out: &Path,
    original: &BTreeMap<(String, String, String, String), Row>,
    arm: &str,
    task: &str,
    seen: &mut BTreeMap<&'static str, usize>,
) -> usize {
    let rows = read_csv(&out.join("sessions.csv"));
    for row in &rows {
        let key = key(row);
        let Some(before) = original.get(&key) else {
            panic!("{arm}/{task}: the replay has a session the run has not: {key:?}");
        };
        for (column, value) in row {
            let was = &before[column];
            if column == "outcome" && was == "declared_complete" {
                assert_eq!(value, "completed", "{key:?}");
                continue;
            }
            assert_eq!(value, was, "{key:?}: {column}");
        }
        for (flag, name) in [
            ("resumed", "resumed"),
            ("reverted", "reverted"),
            ("over_budget", "over_budget"),
        ] {
            if row[flag] == "true" {
                *seen.entry(name).or_default() += 1;
            }
        }
        if !matches!(row["premature_claims"].as_str(), "" | "0") {
            *seen.entry("premature_claims").or_default() += 1;
        }
        if row["kind"] == "initializer" {
            *seen.entry("initializer").or_default() += 1;
        }
    }
    rows.len()
}
