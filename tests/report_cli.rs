//! `loopbench report` end to end on generated CSVs: the published table (docs/metrics.md)
//! against the scipy/statsmodels vectors, the files it writes, and bad input.

use crate::common;
use crate::common::csvgen;

use std::path::Path;

use common::loopbench;
use csvgen::{ArmSpec, published_arms, write_csvs, write_manifest};
use predicates::prelude::*;
use serde_json::Value;

fn vectors() -> Value {
    serde_json::from_str(include_str!("data/stats_vectors.json")).unwrap()
}

fn labelled<'a>(v: &'a Value, group: &str, label: &str) -> &'a Value {
    v[group]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["label"] == label && c.get("confidence").is_none_or(|c| c == 0.95))
        .unwrap_or_else(|| panic!("no {group} vector labelled {label}"))
}

fn close(what: &str, got: &Value, want: f64) {
    let got = got
        .as_f64()
        .unwrap_or_else(|| panic!("{what}: not a number: {got}"));
    let rel = if want == 0.0 {
        got.abs()
    } else {
        ((got - want) / want).abs()
    };
    assert!(rel <= 1e-9, "{what}: got {got:e}, want {want:e}");
}

fn report_json(dir: &Path, extra: &[&str]) -> Vec<Value> {
    let out = loopbench()
        .arg("report")
        .arg(dir)
        .args(["--format", "json"])
        .args(extra)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    serde_json::from_slice::<Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn row<'a>(rows: &'a [Value], arm: &str, metric: &str) -> &'a Value {
    rows.iter()
        .find(|r| r["arm"] == arm && r["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {arm} {metric}"))
}

#[test]
fn published_table_rows_match_the_scipy_and_statsmodels_vectors() {
    let tmp = tempfile::tempdir().unwrap();
    write_csvs(tmp.path(), &published_arms());
    let rows = report_json(tmp.path(), &["--baseline", "json"]);
    let v = vectors();
    for (vector_name, metric) in [
        ("desc_edits", "spurious_desc_edit"),
        ("test_removals", "test_removal"),
        ("premature", "premature_done"),
    ] {
        let base = row(&rows, "json", metric);
        assert_eq!(base["n"], 240);
        for cell in ["diff", "diff_ci_low", "diff_ci_high", "p", "p_holm"] {
            assert!(
                base[cell].is_null(),
                "baseline {metric} {cell} = {}",
                base[cell]
            );
        }
        let holm = labelled(&v, "holm", &format!("{vector_name} fisher two-sided"));
        for (i, arm) in ["json", "markdown", "yaml"].into_iter().enumerate() {
            let r = row(&rows, arm, metric);
            let what = |cell: &str| format!("{arm} {metric} {cell}");
            let wilson = labelled(&v, "wilson", &format!("{vector_name} {arm}"));
            assert_eq!(r["k"], wilson["k"], "{}", what("k"));
            close(
                &what("ci_low"),
                &r["ci_low"],
                wilson["low"].as_f64().unwrap(),
            );
            close(
                &what("ci_high"),
                &r["ci_high"],
                wilson["high"].as_f64().unwrap(),
            );
            if arm == "json" {
                continue;
            }
            let newcombe = labelled(&v, "newcombe_diff", &format!("{vector_name} {arm} - json"));
            let diff =
                (newcombe["k1"].as_f64().unwrap() - newcombe["k2"].as_f64().unwrap()) / 240.0;
            close(&what("diff"), &r["diff"], diff);
            close(
                &what("diff_ci_low"),
                &r["diff_ci_low"],
                newcombe["low"].as_f64().unwrap(),
            );
            close(
                &what("diff_ci_high"),
                &r["diff_ci_high"],
                newcombe["high"].as_f64().unwrap(),
            );
            let fisher = v["fisher_exact"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| {
                    c["label"] == format!("{vector_name} {arm} vs json")
                        && c["alternative"] == "two-sided"
                })
                .unwrap();
            close(&what("p"), &r["p"], fisher["p"].as_f64().unwrap());
            close(
                &what("p_holm"),
                &r["p_holm"],
                holm["adjusted"][i - 1].as_f64().unwrap(),
            );
        }
    }
}

#[test]
fn summary_json_has_one_object_per_arm_and_metric_with_every_column() {
    let tmp = tempfile::tempdir().unwrap();
    write_csvs(tmp.path(), &published_arms());
    let rows = report_json(tmp.path(), &["--baseline", "json"]);
    // Every rate metric and features_verified (the fixture reports no usage).
    assert_eq!(rows.len(), 3 * (loopbench::rates::Metric::ALL.len() + 1));
    let keys: Vec<&str> = rows[0]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut want = vec![
        "arm",
        "metric",
        "k",
        "n",
        "rate",
        "ci_low",
        "ci_high",
        "diff",
        "diff_ci_low",
        "diff_ci_high",
        "p",
        "p_holm",
        "boot_ci_low",
        "boot_ci_high",
        "p_cmh",
        "p_cmh_holm",
        "diff_mh",
        "diff_mh_ci_low",
        "diff_mh_ci_high",
        "p_homogeneity",
    ];
    let mut got = keys.clone();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    // Metrics in the order of the rate table, then features_verified; baseline first in each.
    let order: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["metric"].as_str().unwrap().into(),
                r["arm"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(order[0], ("premature_done".into(), "json".into()));
    assert_eq!(order[1], ("premature_done".into(), "markdown".into()));
    let first_count = 3 * loopbench::rates::Metric::ALL.len();
    assert_eq!(
        order[first_count],
        ("features_verified".into(), "json".into())
    );
    let fv = row(&rows, "markdown", "features_verified");
    assert!(fv["k"].is_null() && fv["n"] == 20, "{fv}");
    assert!(fv["boot_ci_low"].is_null());
    let pd = row(&rows, "markdown", "premature_done");
    assert!(pd["boot_ci_low"].as_f64().unwrap() <= pd["rate"].as_f64().unwrap());
    assert!(pd["boot_ci_high"].as_f64().unwrap() >= pd["rate"].as_f64().unwrap());
    let pv = row(&rows, "markdown", "premature_victory");
    assert!(pv["boot_ci_low"].is_null() && pv["n"] == 20, "{pv}");
}

#[test]
fn report_writes_identical_files_twice_and_prints_the_chosen_format() {
    let tmp = tempfile::tempdir().unwrap();
    write_csvs(tmp.path(), &published_arms());
    let files = [
        "summary.csv",
        "summary.json",
        "summary.md",
        "plots/premature_done.svg",
    ];
    let printed = loopbench()
        .arg("report")
        .arg(tmp.path())
        .args(["--format", "csv"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let first: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(tmp.path().join(f)).unwrap())
        .collect();
    assert_eq!(printed, first[0]);
    assert!(String::from_utf8_lossy(&first[0]).starts_with(
        "arm,metric,k,n,rate,ci_low,ci_high,diff,diff_ci_low,diff_ci_high,p,p_holm,boot_ci_low,\
         boot_ci_high,p_cmh,p_cmh_holm,diff_mh,diff_mh_ci_low,diff_mh_ci_high,p_homogeneity\n"
    ));
    loopbench().arg("report").arg(tmp.path()).assert().success();
    let second: Vec<Vec<u8>> = files
        .iter()
        .map(|f| std::fs::read(tmp.path().join(f)).unwrap())
        .collect();
    assert_eq!(first, second);
}

#[test]
fn markdown_marks_significant_differences_and_says_when_the_agent_is_simulated() {
    let tmp = tempfile::tempdir().unwrap();
    write_csvs(tmp.path(), &published_arms());
    write_manifest(
        tmp.path(),
        &["json", "markdown", "yaml"],
        "2026-11-02T08:00:00Z",
        true,
    );
    // summary.md in full: `report` prints only its verdict without `--full`.
    let md = loopbench()
        .arg("report")
        .arg(tmp.path())
        .arg("--full")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(md).unwrap();
    assert!(
        md.contains("simulated agent: these numbers are synthetic"),
        "{md}"
    );
    assert!(md.contains("## spurious_desc_edit"), "{md}");
    // markdown vs json: Holm p 3.1e-6, significant.
    assert!(md.contains("| 3.1e-6 * |"), "{md}");
    // json is the manifest's first arm and so the baseline, in the first row.
    let section = md.split("## spurious_desc_edit").nth(1).unwrap();
    let first_row = section.lines().find(|l| l.starts_with("| json")).unwrap();
    assert!(section.find(first_row).unwrap() < section.find("| markdown").unwrap());
    assert!(md.contains("Pearson χ²(2) = 21.98"), "{md}");
    let strict = loopbench()
        .arg("report")
        .arg(tmp.path())
        .args(["--confidence", "0.999", "--full"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let strict = String::from_utf8(strict).unwrap();
    assert!(strict.contains("marks Holm p < 0.001."), "{strict}");
    assert!(strict.contains("99.9% CI"), "{strict}");
}

#[test]
fn a_correlated_arm_gets_a_note_that_its_bootstrap_interval_is_wider() {
    let tmp = tempfile::tempdir().unwrap();
    // All 24 events of arm `clumped` in two of its twenty trials.
    let mut arms = vec![ArmSpec::new("even", 20, 12).with("tests_removed", 24)];
    arms.push(ArmSpec::new("clumped", 20, 12));
    write_csvs(tmp.path(), &arms);
    let sessions = std::fs::read_to_string(tmp.path().join("sessions.csv")).unwrap();
    let mut clumped = 0;
    let rewritten: String = sessions
        .lines()
        .map(|l| {
            let mut cells: Vec<String> = l.split(',').map(str::to_string).collect();
            let in_two_trials =
                l.starts_with("clumped:ledgerly:0,") || l.starts_with("clumped:ledgerly:1,");
            if in_two_trials && cells[5] == "coding" {
                cells[17] = "1".into(); // tests_removed
                clumped += 1;
            }
            cells.join(",") + "\n"
        })
        .collect();
    assert_eq!(clumped, 24);
    std::fs::write(tmp.path().join("sessions.csv"), rewritten).unwrap();
    let md = loopbench()
        .arg("report")
        .arg(tmp.path())
        .args(["--baseline", "even", "--full"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(md).unwrap();
    assert!(
        md.contains("† clumped: the trial-clustered bootstrap interval is"),
        "{md}"
    );
    assert!(!md.contains("† even:"), "{md}");
}

#[test]
fn a_directory_with_only_the_two_csvs_is_enough_and_plots_are_written() {
    let tmp = tempfile::tempdir().unwrap();
    write_csvs(tmp.path(), &published_arms());
    loopbench().arg("report").arg(tmp.path()).assert().success();
    for metric in [
        "premature_done",
        "clean_exit",
        "premature_victory",
        "features_verified",
    ] {
        let path = tmp.path().join("plots").join(format!("{metric}.svg"));
        let svg = std::fs::read_to_string(&path).unwrap();
        let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{metric}: {e}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg");
        let texts: Vec<&str> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text())
            .map(str::trim)
            .collect();
        for label in ["json", "markdown", "yaml", "arm", metric] {
            assert!(
                texts.contains(&label),
                "{metric}.svg lacks text {label}: {texts:?}"
            );
        }
        assert!(
            texts.iter().any(|t| t.contains("CI")),
            "{metric}: no y axis label"
        );
    }
}

#[test]
fn bad_input_exits_2_naming_the_file_or_column() {
    let tmp = tempfile::tempdir().unwrap();
    loopbench()
        .arg("report")
        .arg(tmp.path().join("missing"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not exist"));
    write_csvs(tmp.path(), &published_arms());
    loopbench()
        .arg("report")
        .arg(tmp.path())
        .args(["--baseline", "toml"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("baseline arm 'toml'"));
    loopbench()
        .arg("report")
        .arg(tmp.path())
        .args(["--confidence", "95"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--confidence"));
    let sessions = std::fs::read_to_string(tmp.path().join("sessions.csv")).unwrap();
    std::fs::write(
        tmp.path().join("sessions.csv"),
        sessions.replacen("desc_edits", "description_edits", 1),
    )
    .unwrap();
    loopbench()
        .arg("report")
        .arg(tmp.path())
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("sessions.csv").and(predicate::str::contains("'desc_edits'")),
        );
    std::fs::write(tmp.path().join("sessions.csv"), sessions).unwrap();
    std::fs::remove_file(tmp.path().join("trials.csv")).unwrap();
    loopbench()
        .arg("report")
        .arg(tmp.path())
        .assert()
        .code(2)
        .stderr(predicate::str::contains("trials.csv"));
}

#[test]
fn a_closed_stdout_pipe_is_not_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    // Enough arms that the JSON far exceeds a pipe buffer.
    let arms: Vec<ArmSpec> = (0..60)
        .map(|i| ArmSpec::new(&format!("arm{i:02}"), 2, 2))
        .collect();
    write_csvs(tmp.path(), &arms);
    let bin = env!("CARGO_BIN_EXE_loopbench");
    let status = std::process::Command::new("bash")
        .arg("-c")
        .arg(r#"set -o pipefail; "$0" report "$1" --format json | head -c 10 >/dev/null"#)
        .arg(bin)
        .arg(tmp.path())
        .status()
        .unwrap();
    assert!(status.success(), "{status}");
}
