//! `weekly` pools no run an agent could have forged: a run found inside another run's
//! directory (an agent's HOME kept under `agents/`) is never pooled, and a run whose
//! manifest does not fit where it lies or what its tables hold is refused with the
//! reason; both are named in what `weekly` prints.

use crate::common;
use crate::common::csvgen;

use std::path::Path;

use common::{loopbench, read_csv};
use csvgen::{ArmSpec, write_csvs, write_manifest};

/// A replayed run under `root/run`: one coding session that claims F1 prematurely
/// (nothing is implemented), arm `replay`. Returns the run directory.
fn real_run(root: &Path, tmp: &Path) -> std::path::PathBuf {
    let run = root.join("run");
    common::replay_premature_claim(tmp, &run);
    run
}

/// What `weekly` over `root` printed on stderr, and its `premature_done` rows of `arm`
/// as (k, n).
fn weekly(root: &Path, out: &Path, arm: &str) -> (String, Vec<(String, String)>) {
    let done = loopbench()
        .arg("weekly")
        .arg(root)
        .arg("--out")
        .arg(out)
        .assert()
        .success();
    let stderr = String::from_utf8(done.get_output().stderr.clone()).unwrap();
    let rows = read_csv(&out.join("weekly.csv"))
        .into_iter()
        .filter(|r| r["metric"] == "premature_done" && r["arm"] == arm)
        .map(|r| (r["k"].clone(), r["n"].clone()))
        .collect();
    (stderr, rows)
}

#[test]
fn a_run_forged_inside_an_agents_home_in_a_run_is_never_pooled() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("results");
    let run = real_run(&root, tmp.path());
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    let started = manifest["started"].as_str().unwrap();
    // What an agent could leave in its HOME, kept in the run: 400 clean sessions of the
    // same arm in the same week, with a manifest that says so.
    let forged = run.join("agents/replay:shtask:0/attempt-1/home/.cache/results/run");
    write_csvs(&forged, &[ArmSpec::new("replay", 40, 10)]);
    write_manifest(&forged, &["replay"], started, false);
    // Deeper still: a run in the forged one.
    let deeper = forged.join("agents/x/home/run");
    write_csvs(&deeper, &[ArmSpec::new("replay", 40, 10)]);
    write_manifest(&deeper, &["replay"], started, false);

    let (stderr, rows) = weekly(&root, &tmp.path().join("weekly"), "replay");
    assert_eq!(rows, [("1".to_string(), "1".to_string())], "{stderr}");
    assert!(
        stderr.contains(&format!(
            "'{}' lies inside the run '{}'",
            forged.display(),
            run.display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains(&deeper.display().to_string()), "{stderr}");
    let md = std::fs::read_to_string(tmp.path().join("weekly/weekly.md")).unwrap();
    assert!(
        md.contains("## Skipped") && md.contains("lies inside the run"),
        "{md}"
    );
}

#[test]
fn a_run_whose_manifest_does_not_fit_is_refused_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("results");
    let started = "2026-11-02T08:00:00Z";
    // The run that fits: 20 premature claims of 240 sessions.
    let good = root.join("seed-replication/good");
    write_csvs(
        &good,
        &[ArmSpec::new("json", 20, 12).with("premature_claims", 20)],
    );
    write_manifest(&good, &["json"], started, false);
    // Tables holding an arm the manifest does not list.
    let stray_arm = root.join("seed-replication/stray-arm");
    write_csvs(&stray_arm, &[ArmSpec::new("json", 20, 12)]);
    write_manifest(&stray_arm, &["yaml"], started, false);
    // A directory named as a run of another suite.
    let other_suite = root.join("other-suite/2026-11-02T08-00-00Z");
    write_csvs(&other_suite, &[ArmSpec::new("json", 20, 12)]);
    write_manifest(&other_suite, &["json"], started, false);
    // A directory named for a start months before the manifest's.
    let moved = root.join("seed-replication/2026-06-01T08-00-00Z-2");
    write_csvs(&moved, &[ArmSpec::new("json", 20, 12)]);
    write_manifest(&moved, &["json"], started, false);
    // A manifest that names no arms.
    let no_arms = root.join("seed-replication/no-arms");
    write_csvs(&no_arms, &[ArmSpec::new("json", 20, 12)]);
    write_manifest(&no_arms, &[], started, false);

    let (stderr, rows) = weekly(&root, &tmp.path().join("weekly"), "json");
    assert_eq!(rows, [("20".to_string(), "240".to_string())], "{stderr}");
    for (dir, why) in [
        (
            &stray_arm,
            "its tables hold the arm 'json', which its manifest does not list",
        ),
        (&other_suite, "suite 'other-suite'"),
        (
            &moved,
            "its directory is named for its start time, 2026-06-01T08-00-00Z-2",
        ),
        (&no_arms, "its manifest names no arms"),
    ] {
        let line = stderr
            .lines()
            .find(|l| l.contains(&format!("'{}'", dir.display())))
            .unwrap_or_else(|| panic!("{} not named in:\n{stderr}", dir.display()));
        assert!(
            line.starts_with("warning: skipped: ")
                && line.contains(why)
                && line.contains("not pooled"),
            "{line}"
        );
    }
}
