//! `loopbench export`: a run written as ATIF trajectories, one per session, chained per
//! trial, holding what the run holds (a masked secret stays masked); bad input exits 2
//! naming the file and what was expected, and an export is never mixed into a
//! directory that holds anything.

use std::path::{Path, PathBuf};

use crate::common;

use common::{Trace, loopbench, read_jsonl, repo_root};
use loopbench::feature_list::ListFormat;
use predicates::prelude::*;
use serde_json::Value;

fn example_run(tmp: &Path) -> PathBuf {
    let out = tmp.join("results");
    let root = repo_root().join("suites/examples");
    loopbench()
        .arg("replay")
        .arg(root.join("traces/latefees-every-metric.jsonl"))
        .arg("--task")
        .arg(root.join("tasks/latefees"))
        .args(["--format", "json", "--quiet", "--out"])
        .arg(&out)
        .assert()
        .success();
    out
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn atif_export_chains_a_trials_sessions_and_keeps_their_usage() {
    let tmp = tempfile::tempdir().unwrap();
    let run = example_run(tmp.path());
    let out = tmp.path().join("atif");
    loopbench()
        .arg("export")
        .arg(&run)
        .args(["--to", "atif", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains("1 trials of 1 arms as atif"));
    let sessions = read_jsonl(&run.join("sessions.jsonl"));
    let trial = out.join("replay/latefees/0");
    let mut names: Vec<String> = std::fs::read_dir(&trial)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let mut expected: Vec<String> = sessions
        .iter()
        .map(|s| format!("session-{}.json", s["session"]))
        .collect();
    expected.sort();
    assert_eq!(names, expected);
    // Follow the chain from the first session: every session once, in order.
    let mut file = format!("session-{}.json", sessions[0]["session"]);
    let mut seen = Vec::new();
    loop {
        let doc = read_json(&trial.join(&file));
        let record = &sessions[seen.len()];
        assert_eq!(doc["schema_version"], "ATIF-v1.8");
        assert_eq!(doc["session_id"], "replay:latefees:0");
        assert_eq!(
            doc["final_metrics"]["total_prompt_tokens"], record["input_tokens"],
            "{file}"
        );
        assert_eq!(
            doc["final_metrics"]["total_completion_tokens"],
            record["output_tokens"]
        );
        assert_eq!(doc["final_metrics"]["total_cost_usd"], record["cost_usd"]);
        assert_eq!(
            doc["final_metrics"]["total_steps"].as_u64().unwrap() as usize,
            doc["steps"].as_array().unwrap().len()
        );
        assert_eq!(doc["extra"]["loopbench"]["session_record"], *record);
        // The trial's record is at the head of its chain.
        assert_eq!(
            doc["extra"]["loopbench"].get("trial_record").is_some(),
            seen.is_empty()
        );
        seen.push(file.clone());
        match doc.get("continued_trajectory_ref") {
            Some(next) => file = next.as_str().unwrap().to_string(),
            None => break,
        }
    }
    assert_eq!(seen.len(), sessions.len());
}

#[test]
fn a_masked_secret_stays_masked_in_the_export() {
    let secret = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123";
    let trace = Trace::new()
        .session(1)
        .run(&format!("echo ANTHROPIC_API_KEY={secret} > /dev/null"))
        .write("src/f1.txt", "one\n")
        .commit()
        .end("completed");
    let replayed = common::replay_sh(&trace, ListFormat::Json);
    let trajectories = std::fs::read_to_string(replayed.out.join("trajectories.jsonl")).unwrap();
    assert!(!trajectories.contains(secret) && trajectories.contains("[masked]"));
    let out = replayed.out.join("exports/atif");
    loopbench()
        .arg("export")
        .arg(&replayed.out)
        .args(["--to", "atif"])
        .assert()
        .success();
    let mut all = String::new();
    for entry in walkdir::WalkDir::new(&out) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() {
            all += &std::fs::read_to_string(entry.path()).unwrap();
        }
    }
    assert!(all.contains("ANTHROPIC_API_KEY=[masked]"), "{all}");
    assert!(!all.contains(secret));
}

#[test]
fn bad_input_exits_2_naming_what_was_expected() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-run");
    loopbench()
        .arg("export")
        .arg(&missing)
        .args(["--to", "atif"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("no-such-run").and(predicate::str::contains(
                "is not a directory; give the results directory",
            )),
        );
    let run = example_run(tmp.path());
    loopbench()
        .arg("export")
        .arg(&run)
        .args(["--to", "xml"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("invalid value 'xml' for '--to")
                .and(predicate::str::contains("possible values: atif")),
        );
    // An --out that holds anything is refused, and left as it was.
    let busy = tmp.path().join("busy");
    std::fs::create_dir(&busy).unwrap();
    std::fs::write(busy.join("notes.txt"), "mine\n").unwrap();
    loopbench()
        .arg("export")
        .arg(&run)
        .args(["--to", "atif", "--out"])
        .arg(&busy)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "is not empty (it holds 'notes.txt')",
        ));
    assert_eq!(std::fs::read_dir(&busy).unwrap().count(), 1);
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "x").unwrap();
    loopbench()
        .arg("export")
        .arg(&run)
        .args(["--to", "atif", "--out"])
        .arg(&file)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("is not a directory"));
    // The default output is exports/atif in the run; a second export there is refused.
    loopbench()
        .arg("export")
        .arg(&run)
        .args(["--to", "atif"])
        .assert()
        .success();
    assert!(run.join("exports/atif/replay/latefees/0").is_dir());
    loopbench()
        .arg("export")
        .arg(&run)
        .args(["--to", "atif"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("exports/atif' is not empty"));
    // A run without trajectories.jsonl (made before loopbench recorded them).
    std::fs::remove_file(run.join("trajectories.jsonl")).unwrap();
    loopbench()
        .arg("export")
        .arg(&run)
        .args(["--to", "atif", "--out"])
        .arg(tmp.path().join("fresh"))
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("trajectories.jsonl' does not exist").and(
                predicate::str::contains("what the agent did in each session"),
            ),
        );
    assert!(!tmp.path().join("fresh").exists());
}

#[test]
fn inspect_export_is_one_log_per_arm_its_header_before_its_samples() {
    let tmp = tempfile::tempdir().unwrap();
    let run = example_run(tmp.path());
    let out = tmp.path().join("inspect");
    loopbench()
        .arg("export")
        .arg(&run)
        .args(["--to", "inspect", "--out"])
        .arg(&out)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "1 trials of 1 arms as inspect: 1 files",
        ));
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    // Named as Inspect names its logs, which is how its listing finds a JSON log.
    let name = &names[0];
    let stamp =
        regex::Regex::new(r"^\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-00-00_replay_[0-9a-f]+\.json$")
            .unwrap();
    assert!(stamp.is_match(name), "{name}");
    let log = read_json(&out.join(name));
    // Inspect reads the header up to `samples` and stops: results come before.
    let keys: Vec<&str> = log
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "version", "status", "eval", "plan", "stats", "results", "samples"
        ]
    );
    assert_eq!(log["eval"]["task"], "replay");
    let trial = &read_jsonl(&run.join("trials.jsonl"))[0];
    let sessions = read_jsonl(&run.join("sessions.jsonl"));
    let sample = &log["samples"][0];
    assert_eq!(log["samples"].as_array().unwrap().len(), 1);
    assert_eq!(
        (sample["id"].as_str(), sample["epoch"].as_u64()),
        (Some("latefees"), Some(1))
    );
    assert_eq!(
        sample["scores"]["features_verified"]["value"],
        trial["features_verified"]
    );
    assert_eq!(sample["scores"]["premature_victory"]["value"], 1);
    // Each session a span of events, in order.
    let spans: Vec<&str> = sample["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "span_begin")
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(spans.len(), sessions.len());
    assert!(spans[0].starts_with(&format!("session {} ", sessions[0]["session"])));
    // The explanation of a session count is what `show` says of the session.
    let premature = &sample["scores"]["premature_done"];
    assert!(premature["value"].as_u64().unwrap() >= 1);
    assert!(
        premature["explanation"]
            .as_str()
            .unwrap()
            .contains("counts: "),
        "{premature}"
    );
}

#[test]
fn a_suite_runs_arm_settings_are_in_its_manifest_and_its_inspect_tasks_arguments() {
    let tmp = tempfile::tempdir().unwrap();
    let run = tmp.path().join("run");
    let suite = repo_root().join("suites/seed-replication");
    loopbench()
        .arg("run")
        .arg(&suite)
        .args([
            "--arms",
            "json,yaml",
            "--replicates",
            "1",
            "--quiet",
            "--out",
        ])
        .arg(&run)
        .assert()
        .success();
    let manifest = read_json(&run.join("manifest.json"));
    let settings = &manifest["arm_settings"];
    assert_eq!(
        settings.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["json", "yaml"]
    );
    // As the suite file gives them.
    let text = std::fs::read_to_string(suite.join("suite.toml")).unwrap();
    let suite_file: toml::Value = toml::from_str(&text).unwrap();
    for arm in suite_file["arm"].as_array().unwrap() {
        let name = arm["name"].as_str().unwrap();
        if name != "json" && name != "yaml" {
            continue;
        }
        assert_eq!(
            settings[name]["list_format"],
            arm["list_format"].as_str().unwrap()
        );
        assert_eq!(settings[name]["agent"], arm["agent"].as_str().unwrap());
        assert_eq!(settings[name]["driver"], "sim");
    }
    let out = tmp.path().join("inspect");
    loopbench()
        .arg("export")
        .arg(&run)
        .args(["--to", "inspect", "--out"])
        .arg(&out)
        .assert()
        .success();
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&out).unwrap() {
        let log = read_json(&entry.unwrap().path());
        let args = &log["eval"]["task_args"];
        let arm = args["arm"].as_str().unwrap().to_string();
        for (key, value) in settings[&arm].as_object().unwrap() {
            assert_eq!(&args[key], value, "{arm}: {key}");
        }
        seen.push(arm);
    }
    seen.sort();
    assert_eq!(seen, ["json", "yaml"]);
}
