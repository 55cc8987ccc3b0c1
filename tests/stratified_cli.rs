//! Stratified by task end to end on generated CSVs: a Simpson's-paradox layout (an arm
//! better in each of two tasks, worse pooled, because its sessions fall mostly on the
//! hard task) through `loopbench report` and `loopbench compare --by-task`; one task
//! leaves the stratified columns empty; zero margins give an empty p without a panic;
//! one event in one task is judged by the exact conditional test and is no difference;
//! `weekly` judges week over week by the same rule.

use crate::common;
use crate::common::csvgen;

use std::path::{Path, PathBuf};

use common::{loopbench, read_csv};
use csvgen::{ArmSpec, write_csvs, write_manifest};
use serde_json::Value;

/// One (arm, task) block: `trials` trials of one coding session each, `premature` of
/// them with a premature claim.
fn block(arm: &str, task: &str, trials: usize, premature: u64) -> ArmSpec {
    ArmSpec::new(arm, trials, 1)
        .tasks(&[task])
        .with("premature_claims", premature)
}

/// The layout where the judged side is better (fewer premature claims) in each task but
/// worse pooled: it ran the hard task ten times as often as the other side.
///   easy: 4/40 = 10%   against 100/400 = 25%
///   hard: 200/400 = 50% against 28/40 = 70%
///   pooled: 204/440 = 46.4% against 128/440 = 29.1%
fn simpson(arm: &str) -> Vec<ArmSpec> {
    vec![block(arm, "easy", 40, 4), block(arm, "hard", 400, 200)]
}

fn other_side(arm: &str) -> Vec<ArmSpec> {
    vec![block(arm, "easy", 400, 100), block(arm, "hard", 40, 28)]
}

fn run(root: &Path, name: &str, arms: Vec<ArmSpec>) -> PathBuf {
    let dir = root.join(name);
    write_csvs(&dir, &arms);
    dir
}

fn report_json(dir: &Path, baseline: &str) -> Vec<Value> {
    let out = loopbench()
        .arg("report")
        .arg(dir)
        .args(["--format", "json", "--baseline", baseline])
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

const STRATIFIED: [&str; 6] = [
    "p_cmh",
    "p_cmh_holm",
    "diff_mh",
    "diff_mh_ci_low",
    "diff_mh_ci_high",
    "p_homogeneity",
];

#[test]
fn report_judges_a_simpson_layout_by_task_not_pooled() {
    let tmp = tempfile::tempdir().unwrap();
    let mut arms = other_side("base");
    arms.extend(simpson("arm"));
    let dir = run(tmp.path(), "simpson", arms);
    let rows = report_json(&dir, "base");
    let r = row(&rows, "arm", "premature_done");
    assert_eq!(r["k"], 204);
    assert_eq!(r["n"], 440);
    let pooled = r["diff"].as_f64().unwrap();
    let stratified = r["diff_mh"].as_f64().unwrap();
    // Pooled, the arm looks worse (more premature claims); within each task it is better.
    assert!(pooled > 0.15, "{r}");
    assert!(stratified < -0.15, "{r}");
    // Equal weights 40·400/440 in both tasks: (−0.15 − 0.20) / 2.
    assert!((stratified - -0.175).abs() < 1e-12, "{r}");
    assert!(r["diff_mh_ci_high"].as_f64().unwrap() < 0.0, "{r}");
    // By hand: Σ(a − E a) = (4 − 9.4545) + (200 − 207.2727) = −12.727, Σ Var a = 15.678,
    // z = −3.214, χ² = 10.33, p = 0.00131.
    let p_cmh = r["p_cmh"].as_f64().unwrap();
    assert!((0.0013..0.00132).contains(&p_cmh), "{r}");
    assert_eq!(r["p_cmh_holm"], r["p_cmh"], "one arm: Holm changes nothing");
    assert!(r["p_homogeneity"].as_f64().unwrap() > 0.05, "{r}");
    // The baseline row has no comparison, stratified or not.
    let b = row(&rows, "base", "premature_done");
    for column in STRATIFIED {
        assert!(b[column].is_null(), "{column}: {b}");
    }

    let verdict = loopbench()
        .arg("report")
        .arg(&dir)
        .args(["--baseline", "base", "--full"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(verdict).unwrap();
    let line = md
        .lines()
        .find(|l| l.starts_with("- **premature_done**"))
        .unwrap_or_else(|| panic!("no verdict line for premature_done:\n{md}"));
    // Judged by the stratified rule: better, by the Mantel–Haenszel difference.
    assert!(line.contains("better: `arm` -17.5 pp"), "{line}");
    assert!(!line.contains("worse"), "{line}");
    assert!(md.contains("Stratified by task"), "{md}");
}

#[test]
fn an_effect_of_opposite_signs_by_task_is_named_with_its_per_task_table() {
    let tmp = tempfile::tempdir().unwrap();
    let arms = vec![
        block("base", "easy", 100, 30),
        block("base", "hard", 100, 40),
        block("arm", "easy", 100, 10),
        block("arm", "hard", 100, 70),
    ];
    let dir = run(tmp.path(), "mixed", arms);
    let rows = report_json(&dir, "base");
    let r = row(&rows, "arm", "premature_done");
    assert!(r["p_homogeneity"].as_f64().unwrap() < 1e-6, "{r}");
    let out = loopbench()
        .arg("report")
        .arg(&dir)
        .args(["--baseline", "base", "--full"])
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(out).unwrap();
    assert!(
        md.contains("premature_done: the effect differs by task for arm (Breslow–Day p < 0.05)"),
        "{md}"
    );
    let section = &md[md.find("## premature_done").unwrap()..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    assert!(section.contains("The effect differs by task"), "{section}");
    let easy = section
        .lines()
        .find(|l| l.starts_with("| arm") && l.contains("| easy"))
        .unwrap_or_else(|| panic!("no per-task row:\n{section}"));
    assert!(
        easy.contains("10 / 100") && easy.contains("30 / 100") && easy.contains("-20.0 pp"),
        "{easy}"
    );
    let hard = section
        .lines()
        .find(|l| l.starts_with("| arm") && l.contains("| hard"))
        .unwrap();
    assert!(hard.contains("+30.0 pp"), "{hard}");
}

#[test]
fn one_task_leaves_the_stratified_columns_empty_and_the_verdict_pooled() {
    let tmp = tempfile::tempdir().unwrap();
    let arms = vec![
        block("base", "only", 200, 20),
        block("arm", "only", 200, 50),
    ];
    let dir = run(tmp.path(), "one", arms);
    let rows = report_json(&dir, "base");
    for r in &rows {
        for column in STRATIFIED {
            assert!(r[column].is_null(), "{column}: {r}");
        }
    }
    let csv = std::fs::read_to_string(dir.join("summary.csv")).unwrap();
    let header = csv.lines().next().unwrap();
    assert!(
        header.ends_with(",p_cmh,p_cmh_holm,diff_mh,diff_mh_ci_low,diff_mh_ci_high,p_homogeneity"),
        "{header}"
    );
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(
        md.contains("- **premature_done**: worse: `arm` +15.0 pp"),
        "{md}"
    );
    assert!(!md.contains("Stratified by task"), "{md}");
}

#[test]
fn zero_margins_in_every_task_give_an_empty_p_and_no_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let arms = vec![
        block("base", "easy", 30, 0),
        block("base", "hard", 30, 0),
        block("arm", "easy", 30, 0),
        block("arm", "hard", 30, 0),
    ];
    let dir = run(tmp.path(), "zero", arms);
    let rows = report_json(&dir, "base");
    let r = row(&rows, "arm", "premature_done");
    assert!(r["p_cmh"].is_null() && r["p_cmh_holm"].is_null(), "{r}");
    assert!(r["p_homogeneity"].is_null(), "{r}");
    assert_eq!(r["diff_mh"].as_f64(), Some(0.0), "{r}");
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(!md.contains("- **premature_done**"), "{md}");
    // compare stays a judgement: no change, no p, no regression.
    let base = run(
        tmp.path(),
        "zero_base",
        vec![block("arm", "easy", 30, 0), block("arm", "hard", 30, 0)],
    );
    let v = compare_json(&base, &dir, &["--arms", "arm"], 0);
    assert_eq!(v[0]["stratified"], true, "{}", v[0]);
    assert!(v[0]["p"].is_null(), "{}", v[0]);
    assert_eq!(v[0]["change"].as_f64(), Some(0.0), "{}", v[0]);
}

/// The default run's `entry_removal` in miniature: the judged side has one event in 40
/// sessions, all in one of four tasks, against none in 396. Far too few events for the
/// chi-square approximation (it gives p = 0.0017); the exact conditional test gives the
/// pooled Fisher p, 40/436 = 0.0917, and nothing is significant.
fn one_event(arm: &str, task_with_event: Option<&str>) -> Vec<ArmSpec> {
    let trials = if task_with_event.is_some() { 10 } else { 99 };
    ["t1", "t2", "t3", "t4"]
        .iter()
        .map(|&t| block(arm, t, trials, u64::from(task_with_event == Some(t))))
        .collect()
}

#[test]
fn one_event_in_one_task_is_judged_by_the_exact_test_and_is_no_difference() {
    let tmp = tempfile::tempdir().unwrap();
    let mut arms = one_event("base", None);
    arms.extend(one_event("arm", Some("t2")));
    let dir = run(tmp.path(), "sparse", arms);
    let rows = report_json(&dir, "base");
    let r = row(&rows, "arm", "premature_done");
    assert_eq!(
        (r["k"].as_u64(), r["n"].as_u64()),
        (Some(1), Some(40)),
        "{r}"
    );
    let p_cmh = r["p_cmh"].as_f64().unwrap();
    assert!((p_cmh - 40.0 / 436.0).abs() < 1e-12, "{r}");
    let md = std::fs::read_to_string(dir.join("summary.md")).unwrap();
    assert!(!md.contains("- **premature_done**: worse"), "{md}");

    // compare: the new run's one event is no regression (one-sided exact p 0.0917).
    let base = run(tmp.path(), "sparse_base", one_event("arm", None));
    let new = run(tmp.path(), "sparse_new", one_event("arm", Some("t2")));
    let v = compare_json(&base, &new, &["--arms", "arm"], 0);
    assert_eq!(v[0]["stratified"], true, "{}", v[0]);
    assert_eq!(v[0]["regression"], false, "{}", v[0]);
    assert!(
        (v[0]["p"].as_f64().unwrap() - 40.0 / 436.0).abs() < 1e-12,
        "{}",
        v[0]
    );
}

fn compare_json(base: &Path, new: &Path, extra: &[&str], code: i32) -> Vec<Value> {
    let out = loopbench()
        .arg("compare")
        .arg(base)
        .arg(new)
        .args([
            "--metric",
            "premature_done",
            "--format",
            "json",
            "--by-task",
        ])
        .args(extra)
        .assert()
        .code(code)
        .get_output()
        .stdout
        .clone();
    if out.is_empty() {
        return Vec::new();
    }
    serde_json::from_slice::<Value>(&out)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn compare_judges_by_task_when_both_runs_span_two_tasks() {
    let tmp = tempfile::tempdir().unwrap();
    let pooled_better = run(tmp.path(), "pooled_better", other_side("x"));
    let pooled_worse = run(tmp.path(), "pooled_worse", simpson("x"));

    // Pooled, the new run is 17 points worse; in each task it is better: no regression.
    let v = compare_json(&pooled_better, &pooled_worse, &[], 0);
    // The named metric's verdict, then `unobservable`'s, judged for every compared arm.
    assert_eq!(v.len(), 2);
    assert_eq!(v[1]["metric"], "unobservable", "{}", v[1]);
    assert_eq!(v[1]["regression"], false, "{}", v[1]);
    let verdict = &v[0];
    assert_eq!(verdict["metric"], "premature_done", "{verdict}");
    assert_eq!(verdict["stratified"], true, "{verdict}");
    assert_eq!(verdict["regression"], false, "{verdict}");
    let pooled = verdict["new_rate"].as_f64().unwrap() - verdict["base_rate"].as_f64().unwrap();
    assert!(pooled > 0.15, "{verdict}");
    assert!(verdict["change"].as_f64().unwrap() < -0.15, "{verdict}");
    assert!(verdict["p"].as_f64().unwrap() > 0.99, "{verdict}");
    let by_task = verdict["by_task"].as_array().unwrap();
    let tasks: Vec<&str> = by_task
        .iter()
        .map(|t| t["task"].as_str().unwrap())
        .collect();
    assert_eq!(tasks, ["easy", "hard"]);
    assert_eq!(by_task[0]["base_k"], 100);
    assert_eq!(by_task[0]["base_n"], 400);
    assert_eq!(by_task[0]["new_k"], 4);
    assert_eq!(by_task[0]["new_n"], 40);
    for t in by_task {
        assert!(t["change"].as_f64().unwrap() < 0.0, "{t}");
        assert!(t["p"].as_f64().unwrap() > 0.5, "{t}");
    }

    // The other way round: pooled better, worse in each task: a regression (exit 1).
    let v = compare_json(&pooled_worse, &pooled_better, &[], 1);
    assert_eq!(v[0]["regression"], true, "{}", v[0]);
    assert!(v[0]["change"].as_f64().unwrap() > 0.15, "{}", v[0]);
    // One-sided: half the two-sided CMH p of the report test, Φ̄(3.214).
    assert!(
        (0.00065..0.00066).contains(&v[0]["p"].as_f64().unwrap()),
        "{}",
        v[0]
    );

    // Markdown with --by-task: the verdict says so and the per-task rows follow.
    let out = loopbench()
        .arg("compare")
        .arg(&pooled_worse)
        .arg(&pooled_better)
        .args(["--metric", "premature_done", "--by-task"])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let md = String::from_utf8(out).unwrap();
    assert!(md.contains("**REGRESSION** (by task)"), "{md}");
    let hard = md
        .lines()
        .find(|l| l.starts_with("| x") && l.contains("| hard"))
        .unwrap_or_else(|| panic!("no per-task row:\n{md}"));
    assert!(
        hard.contains("200 / 400") && hard.contains("28 / 40"),
        "{hard}"
    );

    // JUnit carries the per-task lines in the test case.
    let out = loopbench()
        .arg("compare")
        .arg(&pooled_worse)
        .arg(&pooled_better)
        .args([
            "--metric",
            "premature_done",
            "--by-task",
            "--format",
            "junit",
        ])
        .assert()
        .code(1)
        .get_output()
        .stdout
        .clone();
    let xml = String::from_utf8(out).unwrap();
    assert!(xml.contains("one-sided CMH p"), "{xml}");
    assert!(xml.contains("task easy: base 4/40, new 100/400"), "{xml}");
}

#[test]
fn compare_with_one_task_in_a_run_stays_pooled() {
    let tmp = tempfile::tempdir().unwrap();
    let base = run(tmp.path(), "base", vec![block("x", "easy", 200, 20)]);
    let new = run(tmp.path(), "new", simpson("x"));
    let v = compare_json(&base, &new, &[], 1);
    assert_eq!(v[0]["stratified"], false, "{}", v[0]);
    let pooled = v[0]["new_rate"].as_f64().unwrap() - v[0]["base_rate"].as_f64().unwrap();
    assert!((v[0]["change"].as_f64().unwrap() - pooled).abs() < 1e-15);
    assert_eq!(v[0]["by_task"].as_array().unwrap().len(), 2);
}

#[test]
fn weekly_judges_week_over_week_by_task() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("results");
    // Two runs in each week: pooling runs of a week pools their tasks' counts too.
    let week = |name: &str, started: &str, arms: Vec<ArmSpec>| {
        let dir = root.join(name);
        write_csvs(&dir, &arms);
        write_manifest(&dir, &["x"], started, false);
    };
    let half = |arms: Vec<ArmSpec>| -> Vec<ArmSpec> {
        arms.into_iter()
            .map(|mut a| {
                a.trials /= 2;
                a.events = a.events.into_iter().map(|(c, k)| (c, k / 2)).collect();
                a
            })
            .collect()
    };
    week("w1a", "2026-10-19T08:00:00Z", half(other_side("x")));
    week("w1b", "2026-10-20T08:00:00Z", half(other_side("x")));
    // Week 2 is worse pooled and better in each task: no regression.
    week("w2a", "2026-10-27T08:00:00Z", half(simpson("x")));
    week("w2b", "2026-10-28T08:00:00Z", half(simpson("x")));
    // Week 3 is the first layout again: better pooled, worse in each task: a regression.
    week("w3", "2026-11-03T08:00:00Z", other_side("x"));
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
    let premature: Vec<_> = rows
        .iter()
        .filter(|r| r["metric"] == "premature_done" && r["arm"] == "x")
        .collect();
    assert_eq!(premature.len(), 3);
    assert_eq!(premature[1]["runs"], "2");
    assert_eq!(premature[1]["k"], "204");
    assert_eq!(premature[1]["n"], "440");
    assert_eq!(premature[1]["stratified"], "true");
    assert_eq!(premature[1]["regression"], "false");
    assert!(premature[1]["change"].parse::<f64>().unwrap() < -0.15);
    assert_eq!(premature[2]["stratified"], "true");
    assert_eq!(premature[2]["regression"], "true");
    assert!(premature[2]["change"].parse::<f64>().unwrap() > 0.15);
    assert!(md.contains("**REGRESSION** (by task)"), "{md}");
}
