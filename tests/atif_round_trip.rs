//! A run of the simulated agent exported to ATIF, imported again with `import atif` and
//! replayed gives the run's own session metrics: every column of `sessions.csv`, for
//! every arm of the default suite, each replayed with the options that start and run
//! its trials as the suite did. The gate arms are replayed with `--ledger gate`: a
//! trajectory holds the agent's steps only, and the harness's gate writes the list
//! between sessions again, as it did in the run. What a trajectory cannot carry is
//! named: the outcome `declared_complete` (the agent's claim, which no importer takes as
//! evidence) comes back `completed`.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{loopbench, read_csv, repo_root};

/// Every arm of the default suite, each with the `replay` options that start and run
/// its trials as the suite did (`suites/seed-replication/suite.toml`).
const ARMS: &[(&str, &[&str])] = &[
    ("json", &["--format", "json", "--start", "initializer"]),
    (
        "markdown",
        &["--format", "markdown", "--start", "initializer"],
    ),
    ("yaml", &["--format", "yaml", "--start", "initializer"]),
    ("single", &["--format", "json", "--start", "initializer"]),
    ("no-initializer", &["--format", "json", "--start", "repo"]),
    (
        "gate",
        &[
            "--format",
            "json",
            "--start",
            "initializer",
            "--ledger",
            "gate",
        ],
    ),
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
        "status-gate",
        &[
            "--format",
            "json",
            "--schema",
            "status",
            "--start",
            "initializer",
            "--ledger",
            "gate",
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
#[ignore = "reads the default run of the full suite and replays 44 of its trials (about two minutes in a debug build); .ci/run runs it"]
fn a_sim_run_exported_to_atif_imported_and_replayed_gives_its_session_metrics() {
    let run = common::shared_run::default_suite_run();
    // Every arm of the suite is replayed: one added to it must say here how.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(run.join("manifest.json")).unwrap()).unwrap();
    let names: Vec<&str> = ARMS.iter().map(|(name, _)| *name).collect();
    assert_eq!(manifest["arms"], serde_json::json!(names));
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
        "gated",
    ] {
        assert!(
            seen.get(what).copied().unwrap_or(0) > 0,
            "no replayed session shows {what}: {seen:?}"
        );
    }
}

/// The same on one trial of each task of three arms, one with an initializer, one
/// without, and one whose list the harness's gate owns (under the status schema, where
/// the gate also writes after the initializer): quick enough for every test run.
#[test]
fn one_trial_of_an_arm_with_and_one_without_an_initializer_and_a_gated_one_round_trip() {
    let names = ["json", "no-initializer", "status-gate"];
    let run = common::shared_run::shared_run(
        "suites/seed-replication",
        &["--arms", &names.join(","), "--replicates", "1"],
    );
    let arms: Vec<(&str, &[&str])> = names
        .iter()
        .map(|name| *ARMS.iter().find(|(arm, _)| arm == name).unwrap())
        .collect();
    let seen = round_trip(&run, &arms, TASKS, "suites/seed-replication/tasks", 1);
    assert!(
        seen["initializer"] == 4 && seen["sessions"] > 6 && seen["gated"] > 2,
        "{seen:?}"
    );
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
            let replayed = compare(&out, &original, arm, task, &mut seen);
            if options.contains(&"--ledger") {
                *seen.entry("gated").or_default() += replayed;
            }
            compared += replayed;
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
