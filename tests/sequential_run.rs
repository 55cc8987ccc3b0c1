//! Sequential runs on the sim: the shipped single-vs-incremental comparison, run in
//! looks, stops early with the conclusion of the full run, deterministically.

use crate::common;

use std::path::{Path, PathBuf};

use common::shared_run::shared_run;
use common::{loopbench, read_csv, repo_root};

fn suite(dir: &Path, sequential: bool) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::os::unix::fs::symlink(
        repo_root().join("suites/seed-replication/tasks"),
        dir.join("tasks"),
    )
    .unwrap();
    let table = if sequential {
        "[sequential]\nmetric = \"premature_done\"\nlook_every = 3\nmax_replicates = 18\n"
    } else {
        ""
    };
    let text = format!(
        r#"name = "single-vs-incremental"
seed = 20260704
replicates = 18
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
    let console = run(&seq_suite, &tmp.path().join("seq-1"), "1");
    let md = std::fs::read_to_string(tmp.path().join("seq-1/summary.md")).unwrap();
    let seq_2 = shared_run(&seq_suite, &["--jobs", "2"]);
    for file in ["sessions.csv", "trials.csv", "sequential.json"] {
        let a = std::fs::read(tmp.path().join("seq-1").join(file)).unwrap();
        let b = std::fs::read(seq_2.join(file)).unwrap();
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
    // The verdict, on the console and atop summary.md, says where the looks stopped and
    // that the looks' p-values are the adjusted ones.
    let stop = format!("stopped at look {stopped_at} of 6: every arm crossed its boundary");
    assert!(console.starts_with("Verdict"), "{console}");
    assert!(console.contains(&stop), "{console}");
    assert!(
        console.contains(&format!("single higher (worse) at look {stopped_at}")),
        "{console}"
    );
    assert!(console.contains("repeated-confidence"), "{console}");
    assert!(
        !console.contains("## Sequential run"),
        "the tables are not printed: {console}"
    );
    let verdict = md
        .split("\n## ")
        .find(|s| s.starts_with("Verdict"))
        .unwrap();
    assert!(
        verdict.contains(&stop) && verdict.contains("repeated-confidence"),
        "{md}"
    );

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
    common::assert_validate_refuses_at(&s, "metric =", "unknown metric 'premature'");
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

fn loopbench_ok(args: &[&std::ffi::OsStr]) -> String {
    let output = loopbench().args(args).output().unwrap();
    assert!(
        output.status.success(),
        "loopbench {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// `run --look K --shard I/N` over a merged run of the earlier looks: two processes
/// per look, a merge after each.
fn run_look(suite: &Path, root: &Path, look: u32, after: Option<&Path>) -> PathBuf {
    let mut shards = Vec::new();
    for i in 1..=2 {
        let out = root.join(format!("look{look}-shard{i}"));
        let mut args: Vec<std::ffi::OsString> = vec![
            "run".into(),
            suite.into(),
            "--quiet".into(),
            "--look".into(),
            look.to_string().into(),
            "--shard".into(),
            format!("{i}/2").into(),
            "--out".into(),
            out.clone().into(),
        ];
        if let Some(after) = after {
            args.push("--after".into());
            args.push(after.into());
        }
        let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
        loopbench_ok(&args);
        shards.push(out);
    }
    let merged = root.join(format!("merged{look}"));
    let mut args: Vec<&std::ffi::OsStr> = vec!["merge".as_ref()];
    if let Some(after) = after {
        args.push(after.as_os_str());
    }
    args.extend(shards.iter().map(|s| s.as_os_str()));
    args.extend(["--out".as_ref(), merged.as_os_str()]);
    loopbench_ok(&args);
    merged
}

fn state(dir: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(dir.join("sequential-state.json")).unwrap()).unwrap()
}

#[test]
fn a_sequential_run_sharded_look_by_look_equals_the_run_in_one_process() {
    let tmp = tempfile::tempdir().unwrap();
    let s = suite(&tmp.path().join("seq"), true);
    // The same run as the other test's at --jobs 2: made once for both.
    let whole = shared_run(&s, &["--jobs", "2"]);
    let stopped_at = state(&whole)["looks_done"].as_u64().unwrap();
    assert_eq!(state(&whole)["finished"], true);
    assert!(stopped_at >= 2, "the test needs a run of two looks or more");

    let root = tmp.path().join("looks");
    let mut merged = run_look(&s, &root, 1, None);
    for look in 2..=stopped_at {
        let st = state(&merged);
        assert_eq!(st["finished"], false, "{st}");
        assert_eq!(st["next_look"], look, "{st}");
        merged = run_look(&s, &root, look as u32, Some(&merged));
    }
    assert_eq!(state(&merged), state(&whole));
    for file in [
        "sessions.csv",
        "trials.csv",
        "sequential.json",
        "summary.csv",
    ] {
        let a = std::fs::read(whole.join(file)).unwrap();
        let b = std::fs::read(merged.join(file)).unwrap();
        assert!(
            a == b,
            "{file} differs between the sharded looks and one process"
        );
    }
    let md = std::fs::read_to_string(merged.join("summary.md")).unwrap();
    assert!(
        md.contains(&format!("Stopped at look {stopped_at} of 6")),
        "{md}"
    );
    // The merged run's verdict and report.html say where the looks stopped too.
    let stop = format!("stopped at look {stopped_at} of 6");
    let verdict = md
        .split("\n## ")
        .find(|s| s.starts_with("Verdict"))
        .unwrap();
    assert!(verdict.contains(&stop), "{md}");
    let page = std::fs::read_to_string(merged.join("report.html")).unwrap();
    assert!(page.contains(&stop), "report.html of the merged run");

    // A shard of a look cut off mid-way (its last trials lost, as after kill -9)
    // is finished by `resume`, with that look's trials only.
    let cut = tmp.path().join("cut");
    let shard = root.join("look2-shard1");
    copy_run(&shard, &cut);
    let trials = std::fs::read_to_string(cut.join("trials.jsonl")).unwrap();
    let kept: Vec<&str> = trials.lines().collect();
    let kept = kept[..kept.len() - 3].join("\n") + "\n";
    std::fs::write(cut.join("trials.jsonl"), kept).unwrap();
    loopbench()
        .arg("resume")
        .arg(&cut)
        .arg("--quiet")
        .assert()
        .success();
    for file in ["sessions.csv", "trials.csv"] {
        let a = std::fs::read(shard.join(file)).unwrap();
        let b = std::fs::read(cut.join(file)).unwrap();
        assert!(a == b, "{file} of the resumed shard differs");
    }

    // Nothing is left to run, and a look cannot be run over a shard or without the
    // runs before it.
    let next = (stopped_at + 1).to_string();
    loopbench()
        .arg("run")
        .arg(&s)
        .args(["--look", &next, "--after"])
        .arg(&merged)
        .arg("--out")
        .arg(tmp.path().join("never1"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!(
            "stopped at look {stopped_at}"
        )));
    loopbench()
        .arg("run")
        .arg(&s)
        .args(["--look", "2", "--out"])
        .arg(tmp.path().join("never2"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--look 2 needs --after"));
    loopbench()
        .arg("run")
        .arg(&s)
        .args(["--look", "2", "--after"])
        .arg(root.join("look1-shard1"))
        .arg("--out")
        .arg(tmp.path().join("never3"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("one shard of look 1"));
    // A merge that lacks a shard of a look is refused.
    loopbench()
        .arg("merge")
        .arg(root.join("look1-shard1"))
        .arg("--out")
        .arg(tmp.path().join("never4"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("missing"));
    for never in ["never1", "never2", "never3", "never4"] {
        assert!(!tmp.path().join(never).exists(), "{never} was created");
    }
}
