//! Sequential runs on the sim: the shipped single-vs-incremental comparison, run in
//! looks, stops early with the conclusion of the full run, deterministically.

mod common;

use std::path::{Path, PathBuf};

use common::{loopbench, read_csv, repo_root};

fn suite(dir: &Path, sequential: bool) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::os::unix::fs::symlink(
        repo_root().join("suites/seed-replication/tasks"),
        dir.join("tasks"),
    )
    .unwrap();
    let table = if sequential {
        "[sequential]\nmetric = \"premature_done\"\nlook_every = 5\nmax_replicates = 30\n"
    } else {
        ""
    };
    let text = format!(
        r#"name = "single-vs-incremental"
seed = 20260704
replicates = 30
tasks = ["tasks/invoicer", "tasks/todo"]
baseline = "incremental"
{table}
[agents.sim]
driver = "sim"
profile = "calibrated"

[[arm]]
name = "incremental"
agent = "sim"
list_format = "json"
max_sessions = 14

[[arm]]
name = "single"
agent = "sim"
list_format = "json"
strategy = "single"
"#
    );
    std::fs::write(dir.join("suite.toml"), text).unwrap();
    dir.to_path_buf()
}

fn run(suite: &Path, out: &Path, jobs: &str) -> String {
    let output = loopbench()
        .arg("run")
        .arg(suite)
        .args(["--quiet", "--jobs", jobs, "--out"])
        .arg(out)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
#[ignore = "runs the comparison three times on the sim (about a minute in a debug build); .ci/run runs it"]
fn a_sequential_run_stops_early_with_the_full_runs_conclusion_at_any_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    let seq_suite = suite(&tmp.path().join("seq"), true);
    let md = run(&seq_suite, &tmp.path().join("seq-1"), "1");
    run(&seq_suite, &tmp.path().join("seq-2"), "2");
    for file in ["sessions.csv", "trials.csv", "sequential.json"] {
        let a = std::fs::read(tmp.path().join("seq-1").join(file)).unwrap();
        let b = std::fs::read(tmp.path().join("seq-2").join(file)).unwrap();
        assert!(a == b, "{file} differs between --jobs 1 and 2");
    }
    assert!(md.contains("## Sequential run"), "{md}");
    let looks: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("seq-1/sequential.json")).unwrap())
            .unwrap();
    let last = looks.as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["crossed"], true, "{looks}");
    let stopped_at = last["look"].as_u64().unwrap();
    assert!(stopped_at < 6, "it stopped at the last look: {looks}");
    assert!(
        md.contains(&format!("Stopped at look {stopped_at} of 6")),
        "{md}"
    );
    assert!(last["z"].as_f64().unwrap() > 0.0, "single is the worse arm");

    // Cut off mid-run (the last trials of the run lost, as after kill -9), `resume`
    // replays the looks over what is recorded and reaches the same end.
    let cut = tmp.path().join("cut");
    copy_run(&tmp.path().join("seq-1"), &cut);
    let trials = std::fs::read_to_string(cut.join("trials.jsonl")).unwrap();
    let kept: Vec<&str> = trials.lines().collect();
    let kept = kept[..kept.len() - 7].join("\n") + "\n";
    std::fs::write(cut.join("trials.jsonl"), kept).unwrap();
    std::fs::remove_file(cut.join("sequential.json")).unwrap();
    loopbench()
        .arg("resume")
        .arg(&cut)
        .arg("--quiet")
        .assert()
        .success();
    for file in ["sessions.csv", "trials.csv", "sequential.json"] {
        let a = std::fs::read(tmp.path().join("seq-1").join(file)).unwrap();
        let b = std::fs::read(cut.join(file)).unwrap();
        assert!(a == b, "{file} differs after resume");
    }

    let full = run(
        &suite(&tmp.path().join("full"), false),
        &tmp.path().join("full-run"),
        "2",
    );
    let rows = read_csv(&tmp.path().join("full-run/summary.csv"));
    let single = rows
        .iter()
        .find(|r| r["arm"] == "single" && r["metric"] == "premature_done")
        .unwrap();
    assert!(single["diff"].parse::<f64>().unwrap() > 0.0, "{full}");
    assert!(single["p"].parse::<f64>().unwrap() < 0.05, "{full}");
    let sessions = |dir: &str| read_csv(&tmp.path().join(dir).join("sessions.csv")).len();
    let (seq, whole) = (sessions("seq-1"), sessions("full-run"));
    assert!(seq < whole, "no session saved: {seq} of {whole}");
    eprintln!("sequential: {seq} sessions, full run: {whole}; stopped at look {stopped_at}");
}

#[test]
fn a_sequential_run_refuses_shards_and_replicates_and_a_bad_table_names_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let s = suite(&tmp.path().join("seq"), true);
    loopbench()
        .arg("run")
        .arg(&s)
        .args(["--shard", "1/2", "--out"])
        .arg(tmp.path().join("o1"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("shards"));
    loopbench()
        .arg("run")
        .arg(&s)
        .args(["--replicates", "3", "--out"])
        .arg(tmp.path().join("o2"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("max_replicates"));
    let text = std::fs::read_to_string(s.join("suite.toml"))
        .unwrap()
        .replace("metric = \"premature_done\"", "metric = \"premature\"");
    std::fs::write(s.join("suite.toml"), &text).unwrap();
    let line = text
        .lines()
        .position(|l| l.starts_with("metric ="))
        .unwrap()
        + 1;
    loopbench()
        .arg("validate")
        .arg(&s)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!("suite.toml:{line}:")))
        .stderr(predicates::str::contains("unknown metric 'premature'"));
}

fn copy_run(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}
