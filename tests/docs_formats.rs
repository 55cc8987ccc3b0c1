//! docs/formats.md describes what the code really reads and writes: it names every
//! column of every CSV, every manifest field, every key the shipped suites and tasks
//! use, every trace action and field, and every field of `power --format json`; and
//! its `sh` blocks run as written from a scratch copy of the repository root.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;

use common::docs::{run_blocks, runnable_sh_blocks};
use common::{loopbench, repo_root, visible_tempdir};
use loopbench::agent::trace::{EndStatus, Line};

fn doc() -> String {
    std::fs::read_to_string(repo_root().join("docs/formats.md")).unwrap()
}

/// The names of `names` that docs/formats.md does not give in backticks (as `name`,
/// or as a table heading `[name` / `[[name`, or as `feature.name`).
fn missing<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let doc = doc();
    names
        .into_iter()
        .filter(|n| {
            ![
                format!("`{n}`"),
                format!("`[{n}"),
                format!("`[[{n}"),
                format!("`feature.{n}`"),
            ]
            .iter()
            .any(|form| doc.contains(form.as_str()))
        })
        .map(str::to_string)
        .collect()
}

#[test]
fn every_column_of_every_csv_is_named() {
    let columns: Vec<&str> = loopbench::record::SESSION_COLUMNS
        .iter()
        .chain(loopbench::record::TRIAL_COLUMNS.iter())
        .chain(loopbench::report::summary::SUMMARY_COLUMNS.iter())
        .chain(loopbench::report::weekly::WEEKLY_COLUMNS.iter())
        .copied()
        .collect();
    assert!(columns.len() > 60, "{columns:?}");
    assert_eq!(missing(columns), Vec::<String>::new());
}

/// Every key of `value`, nested tables and arrays of tables included.
fn toml_keys(value: &toml::Value, out: &mut BTreeSet<String>) {
    match value {
        toml::Value::Table(table) => {
            for (key, v) in table {
                out.insert(key.clone());
                // `[agents.NAME]` and `env = { NAME = ... }`: the names are the user's.
                if key == "agents" || key == "env" {
                    if let toml::Value::Table(named) = v {
                        named.values().for_each(|t| toml_keys(t, out));
                    }
                    continue;
                }
                toml_keys(v, out);
            }
        }
        toml::Value::Array(items) => items.iter().for_each(|v| toml_keys(v, out)),
        _ => {}
    }
}

#[test]
fn every_key_of_the_shipped_suites_and_tasks_is_named() {
    let mut keys = BTreeSet::new();
    for entry in walkdir::WalkDir::new(repo_root().join("suites")) {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy();
        if name == "suite.toml" || name == "task.toml" {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            let table: toml::Table = toml::from_str(&text).unwrap();
            toml_keys(&toml::Value::Table(table), &mut keys);
        }
    }
    assert!(
        keys.contains("verify") && keys.contains("list_format"),
        "{keys:?}"
    );
    assert_eq!(
        missing(keys.iter().map(String::as_str)),
        Vec::<String>::new()
    );
}

/// One line of every kind, every optional field given, so that each field is written.
fn every_line() -> Vec<Line> {
    let path = || "a.txt".to_string();
    vec![
        Line::Session {
            n: 1,
            divergent: true,
        },
        Line::Write {
            path: path(),
            content: "x".into(),
        },
        Line::Edit {
            path: path(),
            old: "x".into(),
            new: "y".into(),
            all: true,
            original: Some("x".into()),
        },
        Line::Delete { path: path() },
        Line::Run {
            cmd: "true".into(),
            cwd: Some("src".into()),
        },
        Line::Usage {
            turns: Some(1),
            input_tokens: Some(1),
            output_tokens: Some(1),
            cost_usd: Some(0.1),
        },
        Line::Skip {
            tool: Some("NotebookEdit".into()),
            path: Some(path()),
            reason: Some("why".into()),
            rejected: true,
        },
        Line::Say {
            text: "hi".into(),
            from: Some("user".into()),
        },
        Line::Call {
            tool: "Bash".into(),
            id: Some("t1".into()),
            input: serde_json::json!({"command": "ls"}),
        },
        Line::Output {
            id: Some("t1".into()),
            output: "a.txt".into(),
            exit: Some(0),
            error: true,
        },
        Line::End {
            status: EndStatus::Completed,
            summary: Some("done".into()),
        },
    ]
}

/// Fails to compile when a kind of line is added, so that [`every_line`] keeps up.
#[expect(dead_code, reason = "only its exhaustive match matters")]
fn every_kind_is_listed(line: &Line) {
    match line {
        Line::Session { .. }
        | Line::Write { .. }
        | Line::Edit { .. }
        | Line::Delete { .. }
        | Line::Run { .. }
        | Line::Usage { .. }
        | Line::Skip { .. }
        | Line::Say { .. }
        | Line::Call { .. }
        | Line::Output { .. }
        | Line::End { .. } => {}
    }
}

#[test]
fn every_trace_action_and_field_is_named() {
    let mut names = BTreeSet::new();
    for line in every_line() {
        let value = serde_json::to_value(&line).unwrap();
        for (key, v) in value.as_object().unwrap() {
            names.insert(key.clone());
            if key == "op" {
                names.insert(v.as_str().unwrap().to_string());
            }
        }
    }
    for status in [
        "completed",
        "declared_complete",
        "out_of_budget",
        "interrupted",
    ] {
        let line = format!(r#"{{"op":"end","status":"{status}"}}"#);
        serde_json::from_str::<Line>(&line).unwrap();
        names.insert(status.to_string());
    }
    assert_eq!(
        missing(names.iter().map(String::as_str)),
        Vec::<String>::new()
    );
}

fn json_keys(value: &serde_json::Value, out: &mut BTreeSet<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                out.insert(k.clone());
                json_keys(v, out);
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|v| json_keys(v, out)),
        _ => {}
    }
}

#[test]
fn every_field_of_power_json_is_named() {
    let out = loopbench()
        .args([
            "power",
            "--p1",
            "0.2",
            "--p2",
            "0.1",
            "--sequential",
            "--format",
            "json",
        ])
        .assert()
        .success();
    let mut keys = BTreeSet::new();
    json_keys(
        &serde_json::from_slice(&out.get_output().stdout).unwrap(),
        &mut keys,
    );
    assert!(keys.len() > 15, "{keys:?}");
    assert_eq!(
        missing(keys.iter().map(String::as_str)),
        Vec::<String>::new()
    );
}

#[test]
fn every_field_of_check_task_json_is_named() {
    let out = loopbench()
        .args(["check-task", "--repeats", "1", "--format", "json"])
        .arg(repo_root().join("suites/examples/tasks/latefees"))
        .assert()
        .success();
    let mut keys = BTreeSet::new();
    json_keys(
        &serde_json::from_slice(&out.get_output().stdout).unwrap(),
        &mut keys,
    );
    assert!(keys.len() >= 12, "{keys:?}");
    assert_eq!(
        missing(keys.iter().map(String::as_str)),
        Vec::<String>::new()
    );
}

#[test]
fn the_shell_blocks_run_as_written_and_name_every_file_they_make() {
    let tmp = visible_tempdir();
    let root = tmp.path();
    std::os::unix::fs::symlink(repo_root().join("suites"), root.join("suites")).unwrap();
    let blocks = runnable_sh_blocks(&doc());
    assert!(blocks.len() >= 4, "docs/formats.md lost its commands");
    let bin = Path::new(env!("CARGO_BIN_EXE_loopbench")).parent().unwrap();
    let out = run_blocks("docs/formats.md", &blocks, root, bin);
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The refused edit was refused for the reason the page gives.
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("'finished' is not an outcome"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The run the blocks made: every file of its directory, every field of its
    // manifest and every column of traces.csv are on the page.
    let run = root.join("results/formats-demo");
    let mut names: Vec<String> = std::fs::read_dir(&run)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "plots")
        .collect();
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("manifest.json")).unwrap()).unwrap();
    names.extend(manifest.as_object().unwrap().keys().cloned());
    let traces = std::fs::read_to_string(run.join("traces.csv")).unwrap();
    names.extend(
        traces
            .lines()
            .next()
            .unwrap()
            .split(',')
            .map(str::to_string),
    );
    assert!(names.len() > 30, "{names:?}");
    assert_eq!(
        missing(names.iter().map(String::as_str)),
        Vec::<String>::new()
    );
}
