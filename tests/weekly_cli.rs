//! `loopbench weekly` over runs dated in different ISO weeks: trend tables, plots and
//! week-over-week regressions.

use crate::common;
use crate::common::csvgen;

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

/// Writes a run of the given arms, each with its own count of premature claims and
/// test removals, and a premature victory in every third trial.
fn run_of(root: &Path, name: &str, started: &str, arms: &[(&str, u64, u64)]) {
    let dir = root.join("seed-replication").join(name);
    let specs: Vec<ArmSpec> = arms
        .iter()
        .map(|&(arm, premature, removed)| {
            ArmSpec::new(arm, 9, 5)
                .with("premature_claims", premature)
                .with("tests_removed", removed)
                .victories(3)
        })
        .collect();
    write_csvs(&dir, &specs);
    let names: Vec<&str> = arms.iter().map(|a| a.0).collect();
    write_manifest(&dir, &names, started, false);
}

#[test]
fn each_week_pools_exactly_the_counts_its_runs_report_on_their_own() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("results");
    // Across a year end: 2026 has 53 ISO weeks, and 1 January 2027 is in 2026-W53.
    let runs = [
        (
            "a",
            "2026-12-21T09:00:00Z",
            "2026-W52",
            vec![("json", 4, 1), ("yaml", 9, 0)],
        ),
        (
            "b",
            "2026-12-30T09:00:00Z",
            "2026-W53",
            vec![("json", 6, 2)],
        ),
        (
            "c",
            "2027-01-01T12:00:00+05:00",
            "2026-W53",
            vec![("json", 3, 0), ("markdown", 12, 5), ("yaml", 2, 2)],
        ),
        (
            "d",
            "2027-01-04T00:30:00Z",
            "2027-W01",
            vec![("yaml", 7, 3)],
        ),
    ];
    for (name, started, _, arms) in &runs {
        run_of(&root, name, started, arms);
    }
    // The oracle: each run's own summary.csv, from `report`, summed by hand.
    let mut want: std::collections::BTreeMap<(String, String, String), (u64, u64, u64)> =
        Default::default();
    for (name, _, week, _) in &runs {
        let dir = root.join("seed-replication").join(name);
        loopbench()
            .arg("report")
            .arg(&dir)
            .args(["--format", "csv"])
            .assert()
            .success();
        // Rows without k are means (features, tokens and cost per feature), not rates.
        for row in read_csv(&dir.join("summary.csv"))
            .into_iter()
            .filter(|r| !r["k"].is_empty())
        {
            let entry = want
                .entry((week.to_string(), row["metric"].clone(), row["arm"].clone()))
                .or_default();
            entry.0 += 1;
            entry.1 += row["k"].parse::<u64>().unwrap();
            entry.2 += row["n"].parse::<u64>().unwrap();
        }
    }
    let out = tmp.path().join("weekly");
    loopbench()
        .arg("weekly")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let rows = read_csv(&out.join("weekly.csv"));
    let got: std::collections::BTreeMap<(String, String, String), (u64, u64, u64)> = rows
        .iter()
        .map(|r| {
            (
                (r["week"].clone(), r["metric"].clone(), r["arm"].clone()),
                (
                    r["runs"].parse().unwrap(),
                    r["k"].parse().unwrap(),
                    r["n"].parse().unwrap(),
                ),
            )
        })
        .collect();
    assert_eq!(got.len(), rows.len(), "one row per (week, metric, arm)");
    assert_eq!(got, want);
    // Rows of one metric and arm run in calendar order across the year end, and each
    // week after the first is judged against the one before it.
    let yaml: Vec<(&str, &str)> = rows
        .iter()
        .filter(|r| r["metric"] == "premature_done" && r["arm"] == "yaml")
        .map(|r| (r["week"].as_str(), r["change"].as_str()))
        .collect();
    let weeks: Vec<&str> = yaml.iter().map(|(w, _)| *w).collect();
    assert_eq!(weeks, ["2026-W52", "2026-W53", "2027-W01"]);
    assert_eq!(yaml[0].1, "");
    // 2026-W53 pools c's 2 of 45; 2027-W01 has 7 of 45: change +5/45.
    let change: f64 = yaml[2].1.parse().unwrap();
    assert!((change - 5.0 / 45.0).abs() < 1e-9, "{change}");
}

#[test]
fn a_root_without_a_usable_run_is_bad_input_that_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("results");
    std::fs::create_dir_all(root.join("seed-replication/empty")).unwrap();
    let stderr = |args: &[&str]| {
        let out = loopbench()
            .arg("weekly")
            .arg(&root)
            .args(args)
            .arg("--out")
            .arg(tmp.path().join("weekly"))
            .assert()
            .code(2)
            .get_output()
            .clone();
        assert!(out.stdout.is_empty(), "no table is printed");
        String::from_utf8(out.stderr).unwrap()
    };
    let err = stderr(&[]);
    assert!(
        err.contains("no directory below it holds a manifest.json"),
        "{err}"
    );

    run(&root, "old", "2020-01-06T08:00:00Z", 22);
    let err = stderr(&["--since", "7d"]);
    assert!(
        err.contains("started within --since 7days: all 1 runs are older"),
        "{err}"
    );

    // A run still going: a manifest, no CSVs yet.
    let going = root.join("seed-replication/going");
    write_manifest(&going, &["json"], "2026-11-02T08:00:00Z", false);
    std::fs::remove_dir_all(root.join("seed-replication/old")).unwrap();
    let err = stderr(&[]);
    assert!(err.contains("no usable run under"), "{err}");
    assert!(
        err.contains("1 skipped:") && err.contains("sessions.csv"),
        "{err}"
    );
    assert!(!tmp.path().join("weekly/weekly.csv").exists());
}

#[test]
fn a_week_that_measured_nothing_is_passed_over_by_the_next_weeks_comparison() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("results");
    run(&root, "a", "2026-10-19T08:00:00Z", 22); // 2026-W43
    run(&root, "b", "2026-10-27T08:00:00Z", 20); // 2026-W44: premature_claims unknown
    run(&root, "c", "2026-11-06T08:00:00Z", 60); // 2026-W45
    let sessions = root.join("seed-replication/b/sessions.csv");
    let mut reader = csv::Reader::from_path(&sessions).unwrap();
    let headers = reader.headers().unwrap().clone();
    let column = headers
        .iter()
        .position(|h| h == "premature_claims")
        .unwrap();
    let mut writer = csv::Writer::from_path(tmp.path().join("b.csv")).unwrap();
    writer.write_record(&headers).unwrap();
    for record in reader.records() {
        let mut row: Vec<String> = record.unwrap().iter().map(str::to_string).collect();
        row[column] = String::new();
        writer.write_record(&row).unwrap();
    }
    writer.flush().unwrap();
    std::fs::rename(tmp.path().join("b.csv"), &sessions).unwrap();

    let out = tmp.path().join("weekly");
    loopbench()
        .arg("weekly")
        .arg(&root)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let rows = read_csv(&out.join("weekly.csv"));
    let json: Vec<_> = rows
        .iter()
        .filter(|r| r["metric"] == "premature_done" && r["arm"] == "json")
        .collect();
    let seen: Vec<(&str, &str, &str)> = json
        .iter()
        .map(|r| {
            (
                r["week"].as_str(),
                r["n"].as_str(),
                r["regression"].as_str(),
            )
        })
        .collect();
    // W44 has nothing to judge; W45 (60 of 240) is judged against W43 (22 of 240).
    assert_eq!(
        seen,
        [
            ("2026-W43", "240", ""),
            ("2026-W44", "0", ""),
            ("2026-W45", "240", "true")
        ]
    );
    let change: f64 = json[2]["change"].parse().unwrap();
    assert!((change - 38.0 / 240.0).abs() < 1e-9, "{change}");
}
