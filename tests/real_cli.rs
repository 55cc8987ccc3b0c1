//! The real agent CLIs (Claude Code, Codex, aider) end to end, without an API key: the
//! shipped `suites/real-cli-dryrun` runs each under bubblewrap against the scripted
//! model server, and every session's metrics must equal a replay of the same scenario
//! (the acts it scripts), its turns and tokens what the server served; each CLI's own
//! transcripts (Claude Code's session files, Codex's rollouts, aider's chat history),
//! imported and replayed, must give the live run's metrics again.
//!
//! The CLIs are looked up as `tests/common/clis.rs` says: a CLI that is not installed
//! is skipped with a message; under `CI=true` it fails the test.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::clis::available;
use serde_json::Value;

/// The columns a session's acts decide (everything but timings, usage and notes).
const ACTS: &[&str] = &[
    "list_parse_ok",
    "newly_claimed",
    "premature_claims",
    "newly_verified",
    "regressions",
    "told_false",
    "desc_edits",
    "step_edits",
    "entries_removed",
    "entries_added",
    "tests_removed",
    "tests_weakened",
    "dup_side_effects",
    "clean_tree",
    "progress_updated",
    "resumed",
    "resume_success",
];

type Row = BTreeMap<String, String>;

fn read_csv(path: &Path) -> Vec<Row> {
    let mut reader = csv::Reader::from_path(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    reader.deserialize().map(|r| r.unwrap()).collect()
}

fn suite() -> PathBuf {
    common::repo_root().join("suites/real-cli-dryrun")
}

/// The per-session rows of a replay of `trace` on the dry run's task.
fn replay(trace: &Path, out: &Path) -> Vec<Row> {
    common::loopbench()
        .arg("replay")
        .arg(trace)
        .arg("--task")
        .arg(common::repo_root().join("suites/examples/tasks/latefees"))
        .args(["--format", "markdown", "--quiet", "--out"])
        .arg(out)
        .assert()
        .success();
    read_csv(&out.join("sessions.csv"))
}

fn acts(row: &Row) -> Vec<(&'static str, String)> {
    ACTS.iter().map(|k| (*k, row[*k].clone())).collect()
}

/// The served log's totals of one session.
fn served(run: &Path, trial: &str, session: &str) -> Value {
    let log = run
        .join("agents")
        .join(trial)
        .join(format!("session-{session}.model.jsonl"));
    let text = std::fs::read_to_string(&log)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", log.display()));
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    last["summary"].clone()
}

/// A cell where the real CLI does more than the scenario scripts: (session, column,
/// value), asserted like every other cell.
type Deviation = (&'static str, &'static str, &'static str);

/// Runs the arm `cli` of the dry run and checks it against the scenario (with the
/// CLI's own `deviations`); returns the run directory's parent (kept alive) and the
/// live rows.
fn live_run_matches_the_scenario(
    cli: &str,
    path: std::ffi::OsString,
    deviations: &[Deviation],
) -> (tempfile::TempDir, Vec<Row>) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("run");
    let ran = common::loopbench()
        .arg("run")
        .arg(suite())
        .args(["--arms", cli, "--quiet", "--out"])
        .arg(&out)
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "run failed: {}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let live = read_csv(&out.join("sessions.csv"));
    let scripted = replay(
        &suite().join("scenario.jsonl"),
        &tmp.path().join("scripted"),
    );
    assert_eq!(live.len(), 7, "an initializer and six coding sessions");
    let trial = live[0]["trial_id"].clone();
    for (l, s) in live.iter().zip(&scripted) {
        let n = &l["session"];
        assert_eq!(n, &s["session"]);
        assert_eq!(l["outcome"], s["outcome"], "{cli} session {n}: outcome");
        if n != "0" {
            // The initializer's list-based fields are its own (no list before it).
            let mut expected = acts(s);
            for (_, column, value) in deviations.iter().filter(|d| d.0 == n) {
                let cell = expected.iter_mut().find(|(k, _)| k == column).unwrap();
                cell.1 = value.to_string();
            }
            assert_eq!(acts(l), expected, "{cli} session {n}: the scripted acts");
        }
        let s = served(&out, &trial, n);
        if l["outcome"] == "interrupted" {
            assert_eq!(s["crashed"], true, "{cli} session {n}");
            assert_eq!(
                l["failure"], "",
                "{cli} session {n}: the scenario's crash is the harness's plan, no failure"
            );
            assert_eq!(
                (l["turns"].as_str(), l["input_tokens"].as_str()),
                ("", ""),
                "{cli} session {n}: a killed CLI reports nothing"
            );
            continue;
        }
        assert_eq!(s["finished"], true, "{cli} session {n}: {s}");
        assert_eq!(s["steps_served"], s["steps"], "{cli} session {n}");
        assert_eq!(
            l["turns"],
            s["turns"].to_string(),
            "{cli} session {n}: turns"
        );
        let sum = |a: &str, b: &str| (s[a].as_u64().unwrap() + s[b].as_u64().unwrap()).to_string();
        assert_eq!(
            l["input_tokens"],
            sum("input_tokens", "side_input_tokens"),
            "{cli} session {n}: input tokens"
        );
        assert_eq!(
            l["output_tokens"],
            sum("output_tokens", "side_output_tokens"),
            "{cli} session {n}: output tokens"
        );
    }
    // The scenario's acts, spelled out, so that a replay bug cannot hide in both runs.
    let col = |n: usize, k: &str| live[n][k].as_str();
    assert_eq!(
        (col(1, "newly_verified"), col(1, "premature_claims")),
        ("1", "0")
    );
    assert_eq!(col(2, "premature_claims"), "1", "the premature claim");
    assert_eq!((col(3, "desc_edits"), col(3, "tests_removed")), ("1", "3"));
    assert_eq!(
        (col(4, "outcome"), col(4, "dup_side_effects")),
        ("interrupted", "1")
    );
    assert_eq!(
        (col(5, "resumed"), col(5, "resume_success")),
        ("true", "true")
    );
    assert_eq!(col(6, "outcome"), "declared_complete");
    let trials = read_csv(&out.join("trials.csv"));
    assert_eq!(trials[0]["features_verified"], "3");
    (tmp, live)
}

#[test]
fn real_claude_code_does_exactly_the_scripted_acts_and_its_transcripts_replay_the_same() {
    let Some(path) = available("claude") else {
        return;
    };
    let (tmp, live) = live_run_matches_the_scenario("claude", path, &[]);
    // Claude Code wrote its transcripts under the trial's HOME.
    let projects = tmp
        .path()
        .join("run/agents")
        .join(&live[0]["trial_id"])
        .join("home/.claude/projects");
    let project = std::fs::read_dir(&projects)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .expect("a project folder");
    // The crashed session counts too: the scripted crash leaves the CLI a second
    // (`agent::mock_model::CRASH_GRACE`) to write its transcript before the kill. Killed
    // the moment its request arrives, Claude Code loses the last tool results it carried
    // out from its transcript ("without a result" below), and no importer can restore
    // what was never written.
    imported_replay_matches_live(tmp.path(), "claude-code", &project, &live);
}

/// Imports the CLI's own transcripts of the live run (`input`, as `format`), replays the
/// trace on the dry run's task and checks that every coding session did the acts the
/// live run measured; returns the replayed rows. The importer numbers sessions from 1
/// and never declares completion (what an agent claims is not evidence).
fn imported_replay_matches_live(tmp: &Path, format: &str, input: &Path, live: &[Row]) -> Vec<Row> {
    let trace = tmp.join("imported.jsonl");
    let import = common::loopbench()
        .args(["import", format])
        .arg(input)
        .arg("--out")
        .arg(&trace)
        .assert()
        .success();
    // What the importer applied and skipped per session, for a mismatch's message.
    let tally = String::from_utf8_lossy(&import.get_output().stderr).into_owned();
    let imported = replay(&trace, &tmp.join("imported"));
    assert_eq!(imported.len(), live.len(), "{tally}");
    for (l, i) in live.iter().zip(&imported).skip(1) {
        let n = &l["session"];
        let outcome = |o: &str| {
            if o == "declared_complete" {
                "completed".to_string()
            } else {
                o.to_string()
            }
        };
        assert_eq!(
            outcome(&l["outcome"]),
            i["outcome"],
            "{format} session {n}: outcome"
        );
        assert_eq!(
            acts(l),
            acts(i),
            "{format} session {n}: live, then imported and replayed; the import said:\n{tally}"
        );
    }
    imported
}

/// Codex's own rollouts of the live run (in the trial's HOME, `$CODEX_HOME/sessions`),
/// imported and replayed, give the live run's acts, and the turns and tokens the live
/// run read from `codex exec --json` (the crashed session's CLI reported nothing).
#[test]
fn real_codex_does_exactly_the_scripted_acts_and_its_rollouts_replay_the_same() {
    let Some(path) = available("codex") else {
        return;
    };
    let (tmp, live) = live_run_matches_the_scenario("codex", path, &[]);
    let trial = tmp.path().join("run/agents").join(&live[0]["trial_id"]);
    let imported = imported_replay_matches_live(tmp.path(), "codex", &trial, &live);
    for (l, i) in live.iter().zip(&imported) {
        assert_eq!(i["divergent"], "false", "codex session {}", l["session"]);
        if l["outcome"] == "interrupted" {
            continue;
        }
        for column in ["turns", "input_tokens", "output_tokens"] {
            assert_eq!(
                l[column], i[column],
                "codex session {}: {column}",
                l["session"]
            );
        }
    }
}

/// aider does every act of the scenario, with two limits of aider 0.86.2 that the
/// suite's aider arm works within (docs/real-ab.md): it applies an answer's edits before
/// it runs its commands (the server puts every write and edit first), and it calls the
/// model again after running them only to hand back failing tests (`--auto-test`),
/// which is where the crash of session 4 lands. That second call costs a repeated side
/// effect the scenario does not script: aider runs the previous answer's commands again
/// after each further answer to the same message (its list of commands is reset per
/// message only), so session 1, whose tests fail, sends the reminder for INV-1 twice.
#[test]
fn real_aider_does_exactly_the_scripted_acts() {
    let Some(path) = available("aider") else {
        return;
    };
    let (tmp, live) =
        live_run_matches_the_scenario("aider", path, &[("1", "dup_side_effects", "1")]);
    // aider's chat history of the live run (the wrapper keeps it in the trial's HOME),
    // imported and replayed, gives the live run's acts; a turn per model call, and the
    // tokens aider printed, which it rounds to hundreds above a thousand.
    let trial = tmp.path().join("run/agents").join(&live[0]["trial_id"]);
    let history = trial.join("home/.aider.chat.history.md");
    let imported = imported_replay_matches_live(tmp.path(), "aider", &history, &live);
    for (l, i) in live.iter().zip(&imported) {
        assert_eq!(i["divergent"], "false", "aider session {}", l["session"]);
        if l["outcome"] == "interrupted" {
            continue;
        }
        let n = &l["session"];
        assert_eq!(l["turns"], i["turns"], "aider session {n}: turns");
        let turns: i64 = l["turns"].parse().unwrap();
        for column in ["input_tokens", "output_tokens"] {
            let (live, printed): (i64, i64) =
                (l[column].parse().unwrap(), i[column].parse().unwrap());
            assert!(
                (live - printed).abs() <= 50 * turns,
                "aider session {n}: {column} {printed} printed, {live} counted"
            );
        }
    }
    let stdout = tmp
        .path()
        .join("run/agents")
        .join(&live[0]["trial_id"])
        .join("session-1.stdout");
    let stdout = std::fs::read_to_string(stdout).unwrap();
    assert_eq!(
        stdout.matches("Running bin/send_reminder INV-1").count(),
        2,
        "aider ran the answer's commands once more after the test failures"
    );
}
