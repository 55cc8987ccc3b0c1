//! `loopbench weekly` over runs dated in different ISO weeks: trend tables, plots and
//! week-over-week regressions.

mod common;
#[path = "common/csvgen.rs"]
mod csvgen;

use std::path::Path;

use common::{loopbench, read_csv};
use csvgen::{ArmSpec, write_csvs, write_manifest};

fn run(root: &Path, name: &str, started: &str, json_premature: u64) {
    let dir = root.join("seed-replication").join(name);
    write_csvs(
        &dir,
        &[
            ArmSpec::new("json", 20, 12).with("premature_claims", json_premature),
            ArmSpec::new("yaml", 20, 12).with("premature_claims", 37),
        ],
    );
    write_manifest(&dir, &["json", "yaml"], started, false);
}

#[test]
fn runs_in_three_iso_weeks_give_a_three_week_trend_and_an_svg() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("results");
    run(&root, "a", "2026-10-19T08:00:00Z", 22); // 2026-W43
    run(&root, "b", "2026-10-27T08:00:00Z", 20); // 2026-W44
    run(&root, "c", "2026-10-28T20:00:00Z", 24); // 2026-W44, pooled with b
    run(&root, "d", "2026-11-06T23:30:00Z", 60); // 2026-W45: json much worse
    let out = tmp.path().join("weekly");
    let md = loopbench()
        .arg("weekly")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(md).unwrap();
    let rows = read_csv(&out.join("weekly.csv"));
    let json_premature: Vec<_> = rows
        .iter()
        .filter(|r| r["metric"] == "premature_done" && r["arm"] == "json")
        .collect();
    let weeks: Vec<&str> = json_premature.iter().map(|r| r["week"].as_str()).collect();
    assert_eq!(weeks, ["2026-W43", "2026-W44", "2026-W45"]);
    assert_eq!(json_premature[1]["runs"], "2");
    assert_eq!(json_premature[1]["k"], "44");
    assert_eq!(json_premature[1]["n"], "480");
    assert_eq!(json_premature[0]["regression"], "");
    assert_eq!(json_premature[1]["regression"], "false");
    assert_eq!(json_premature[2]["regression"], "true");
    assert!(md.contains("| 2026-W45 | json |"), "{md}");
    assert!(md.contains("**REGRESSION**"), "{md}");
    let svg = std::fs::read_to_string(out.join("plots/premature_done.svg")).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let texts: Vec<&str> = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .map(str::trim)
        .collect();
    for label in [
        "2026-W43", "2026-W44", "2026-W45", "json", "yaml", "ISO week",
    ] {
        assert!(texts.contains(&label), "no {label} in {texts:?}");
    }
}

#[test]
fn since_keeps_only_recent_runs_and_the_default_out_is_under_the_root() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("results");
    run(&root, "old", "2020-01-06T08:00:00Z", 22);
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    run(&root, "new", &now, 22);
    loopbench()
        .arg("weekly")
        .arg(&root)
        .args(["--since", "7d"])
        .assert()
        .success();
    let rows = read_csv(&root.join("weekly/weekly.csv"));
    assert!(!rows.is_empty());
    assert!(
        rows.iter().all(|r| !r["week"].starts_with("2020")),
        "{rows:?}"
    );
}

#[test]
fn a_missing_root_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    loopbench()
        .arg("weekly")
        .arg(tmp.path().join("nope"))
        .assert()
        .code(2);
}

#[test]
fn format_json_prints_weekly_json_one_object_per_week_metric_and_arm() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("results");
    run(&root, "a", "2026-10-19T08:00:00Z", 22); // 2026-W43
    run(&root, "d", "2026-11-06T23:30:00Z", 60); // 2026-W45
    let out = tmp.path().join("weekly");
    let printed = loopbench()
        .arg("weekly")
        .arg(&root)
        .args(["--format", "json", "--out"])
        .arg(&out)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let printed: serde_json::Value = serde_json::from_slice(&printed).unwrap();
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("weekly.json")).unwrap()).unwrap();
    assert_eq!(printed, written);
    let rows = printed.as_array().unwrap();
    let fields: Vec<&str> = rows[0]
        .as_object()
        .unwrap()
        .keys()
        .map(|k| k.as_str())
        .collect();
    assert_eq!(fields, loopbench::report::weekly::WEEKLY_COLUMNS);
    let w45 = rows
        .iter()
        .find(|r| r["metric"] == "premature_done" && r["arm"] == "json" && r["week"] == "2026-W45")
        .unwrap();
    assert_eq!(w45["k"], 60);
    assert_eq!(w45["n"], 240);
    assert_eq!(w45["runs"], 1);
    assert_eq!(w45["regression"], true);
    // The CSV printed is the file written.
    let csv = loopbench()
        .arg("weekly")
        .arg(&root)
        .args(["--format", "csv", "--out"])
        .arg(&out)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    assert_eq!(csv, std::fs::read(out.join("weekly.csv")).unwrap());
}
