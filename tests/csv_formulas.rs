//! No CSV the project writes holds a cell a spreadsheet runs: a run whose arms and task
//! are named like formulas (a forged run, merged as shards are) is written with every
//! such text cell prefixed by `'` in sessions.csv, trials.csv, summary.csv and
//! weekly.csv, numbers never prefixed, and `report`, `compare`, `weekly` and the HTML
//! page read the names back as they are. And no file of the crate but the one that
//! escapes text cells makes a CSV writer, so no writer can bypass it.

use crate::common;

use std::path::{Path, PathBuf};

use common::{loopbench, read_csv, read_jsonl, repo_root};
use serde_json::{Value, json};

const FORMULA_ARM: &str = "=HYPERLINK(\"http://x\",\"y\")";
const SIGNED_ARM: &str = "-2+3";
const FORMULA_TASK: &str = "@SUM(1+1)";

/// A finished replay of one session claiming F1 prematurely, its records then rewritten
/// as a run of two arms named like formulas on a task named like one: `FORMULA_ARM`
/// with the premature claim, `SIGNED_ARM` without (so its `diff` is negative). Its
/// tables are gone: `merge` writes them.
fn forged_shard(tmp: &Path) -> PathBuf {
    let shard = tmp.join("shard");
    common::replay_premature_claim(tmp, &shard);
    let rename = |record: &Value, arm: &str| {
        let mut r = record.clone();
        let replicate = r["replicate"].as_u64().unwrap();
        r["arm"] = json!(arm);
        r["task"] = json!(FORMULA_TASK);
        r["trial_id"] = json!(format!("{arm}:{FORMULA_TASK}:{replicate}"));
        r
    };
    for file in ["sessions.jsonl", "trials.jsonl"] {
        let mut lines = String::new();
        for record in read_jsonl(&shard.join(file)) {
            lines += &format!("{}\n", rename(&record, FORMULA_ARM));
            let mut clean = rename(&record, SIGNED_ARM);
            if file == "sessions.jsonl" {
                clean["premature_claims"] = json!(0);
            }
            lines += &format!("{clean}\n");
        }
        std::fs::write(shard.join(file), lines).unwrap();
    }
    let path = shard.join("manifest.json");
    let mut manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    manifest["arms"] = json!([FORMULA_ARM, SIGNED_ARM]);
    manifest["baseline"] = json!(FORMULA_ARM);
    manifest["tasks"] = json!([FORMULA_TASK]);
    std::fs::write(&path, manifest.to_string()).unwrap();
    for table in [
        "sessions.csv",
        "trials.csv",
        "summary.csv",
        "summary.json",
        "summary.md",
    ] {
        let _ = std::fs::remove_file(shard.join(table));
    }
    shard
}

/// Every cell of the CSV file `path` that is no number: none starts a formula.
fn assert_no_formula(path: &Path) {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap();
    for record in reader.records() {
        for cell in record.unwrap().iter() {
            let number = cell.parse::<f64>().is_ok();
            assert!(
                number || !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "{}: a cell a spreadsheet runs: {cell:?}",
                path.display()
            );
        }
    }
}

#[test]
fn names_like_formulas_are_prefixed_in_every_csv_and_read_back_by_every_report() {
    let tmp = tempfile::tempdir().unwrap();
    let shard = forged_shard(tmp.path());
    let root = tmp.path().join("results");
    let run = root.join("merged");
    loopbench()
        .arg("merge")
        .arg(&shard)
        .arg("--out")
        .arg(&run)
        .assert()
        .success();
    // report: summary.* and the page; the verdict names the arms as they are.
    let verdict = loopbench()
        .arg("report")
        .arg(&run)
        .arg("--html")
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let verdict = String::from_utf8(verdict).unwrap();
    assert!(
        verdict.contains(&format!("vs baseline {FORMULA_ARM}")),
        "{verdict}"
    );
    assert!(!verdict.contains(&format!("'{FORMULA_ARM}")), "{verdict}");
    let compared = loopbench()
        .arg("compare")
        .arg(&run)
        .arg(&run)
        .args(["--metric", "premature_done", "--max-increase", "0.02"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let compared = String::from_utf8(compared).unwrap();
    assert!(compared.contains(SIGNED_ARM), "{compared}");
    let weekly = tmp.path().join("weekly");
    loopbench()
        .arg("weekly")
        .arg(&root)
        .arg("--out")
        .arg(&weekly)
        .assert()
        .success();

    for table in [
        run.join("sessions.csv"),
        run.join("trials.csv"),
        run.join("summary.csv"),
        weekly.join("weekly.csv"),
    ] {
        assert_no_formula(&table);
        let rows = read_csv(&table);
        assert!(!rows.is_empty(), "{}", table.display());
        let arms: std::collections::BTreeSet<&str> =
            rows.iter().map(|r| r["arm"].as_str()).collect();
        let want: std::collections::BTreeSet<String> = [FORMULA_ARM, SIGNED_ARM]
            .iter()
            .map(|a| format!("'{a}"))
            .collect();
        assert_eq!(
            arms,
            want.iter().map(String::as_str).collect(),
            "{}",
            table.display()
        );
        if let Some(task) = rows[0].get("task") {
            assert_eq!(task, &format!("'{FORMULA_TASK}"), "{}", table.display());
        }
    }
    // Rates and counts stay numbers: the clean arm's difference is -1, written as it is.
    let summary = read_csv(&run.join("summary.csv"));
    let premature = summary
        .iter()
        .find(|r| r["metric"] == "premature_done" && r["arm"] == format!("'{SIGNED_ARM}"))
        .unwrap();
    assert_eq!(
        (premature["k"].as_str(), premature["n"].as_str()),
        ("0", "1")
    );
    assert_eq!(premature["diff"], "-1.0");
    // weekly pooled the run under the names its manifest gives.
    let weekly_rows = read_csv(&weekly.join("weekly.csv"));
    assert!(
        weekly_rows.iter().any(|r| r["metric"] == "premature_done"
            && r["arm"] == format!("'{FORMULA_ARM}")
            && r["k"] == "1"),
        "{weekly_rows:?}"
    );
    // The page holds the names as they are.
    let page = std::fs::read_to_string(run.join("report.html")).unwrap();
    assert!(
        page.contains("=HYPERLINK(\\\"http://x\\\",\\\"y\\\")"),
        "no arm name in the page"
    );
    assert!(!page.contains("'=HYPERLINK"), "an escaped name in the page");
}

#[test]
fn no_file_but_the_text_cell_escaper_makes_a_csv_writer() {
    let src = repo_root().join("src");
    let mut offenders = Vec::new();
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if rel == "csv_text.rs" {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap();
        for needle in [
            "csv::Writer",
            "csv::WriterBuilder",
            "CsvWriter",
            "write_record",
        ] {
            if text.contains(needle) {
                offenders.push(format!("{rel}: {needle}"));
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "CSV written without src/csv_text.rs's Writer (text cells unescaped): {offenders:?}"
    );
}
