//! Every command of `docs/real-ab.md` runs as written: the `sh` blocks are extracted and
//! run in order by one bash, from a scratch directory under `/tmp` laid out like the
//! repository root (copies of its `suites/`, `scripts/` and `tests/`), with the binary
//! under test as `loopbench` on PATH. `/tmp` is what the sandbox hides from an agent,
//! so the guide's sandboxed smoke run shows that the agent wrappers work from a
//! checkout there; a stand-in `claude` plays the agent.

use crate::common;

use std::path::Path;

use common::docs::{runnable_sh_blocks, sh_blocks};
use common::repo_root;

#[test]
fn sh_blocks_are_found_with_their_lines_and_tags() {
    let blocks = sh_blocks(
        "x\n```sh\na\nb\n```\n```toml\n```sh\n```\n```sh template\nd\n```\n```sh\ne\n```\n",
    );
    let found: Vec<(usize, Option<&str>, &str)> = blocks
        .iter()
        .map(|b| (b.line, b.tag.as_deref(), b.text.as_str()))
        .collect();
    // The toml block holds a line that looks like a fence; it is not one.
    assert_eq!(
        found,
        [
            (2, None, "a\nb\n"),
            (9, Some("template"), "d\n"),
            (12, None, "e\n")
        ]
    );
}

#[test]
#[ignore = "runs a small study on the sim agent (about two minutes in a debug build); .ci/run runs it"]
fn every_command_in_real_ab_runs_as_written() {
    let doc = repo_root().join("docs/real-ab.md");
    let blocks = runnable_sh_blocks(&std::fs::read_to_string(&doc).unwrap());
    assert!(blocks.len() >= 8, "docs/real-ab.md lost its commands");

    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    let root = tmp.path();
    for dir in ["suites", "scripts", "tests"] {
        copy_dir(&repo_root().join(dir), &root.join(dir));
    }
    let bin = root.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_loopbench"), bin.join("loopbench")).unwrap();
    // The stand-in `claude` must be visible in the sandbox: not under /tmp.
    let visible = common::visible_tempdir();
    let stub = visible.path().join("claude");
    std::fs::write(&stub, STAND_IN_CLAUDE).unwrap();
    std::fs::set_permissions(&stub, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let home = root.join("home");
    std::fs::create_dir(&home).unwrap();

    let mut script = String::from("set -euo pipefail\n");
    for block in &blocks {
        script += &format!("echo '=== docs/real-ab.md:{}'\n{}", block.line, block.text);
    }
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(root)
        .env(
            "PATH",
            format!(
                "{}:{}:{}",
                bin.display(),
                visible.path().display(),
                std::env::var("PATH").unwrap()
            ),
        )
        .env("HOME", &home)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "a command of docs/real-ab.md failed (the last === line says which block)\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );

    // What the text says the commands print.
    assert!(stdout.contains("219 sessions per arm"), "{stdout}");
    assert!(stdout.contains("| json | 3"), "cost table: {stdout}");
    // What one block printed: from its === line to the next.
    let printed_by = |needle: &str| {
        let line = blocks
            .iter()
            .find(|b| b.text.contains(needle))
            .unwrap()
            .line;
        let start = stdout
            .find(&format!("=== docs/real-ab.md:{line}\n"))
            .unwrap();
        let rest = &stdout[start..];
        rest[1..]
            .find("=== ")
            .map_or(rest, |end| &rest[..end + 1])
            .to_string()
    };
    assert!(
        printed_by("--seed 777").contains("Result: no regression"),
        "{stdout}"
    );
    assert!(printed_by("ab/suite-changed/suite.toml").contains("gate failed with exit code 1"));
    // The sharded study is a whole run.
    let trials = std::fs::read_to_string(root.join("ab/study/trials.csv")).unwrap();
    assert_eq!(trials.lines().count(), 1 + 2 * 2 * 12);
    assert!(root.join("ab/rescored/summary.csv").exists());
    // The Codex and aider examples replay to the dry run's acts: per arm, the premature
    // claim of session 3, the deleted test file of session 4 (3 tests), the crash of
    // session 5 that repeats a reminder, and no divergent session.
    let rescored = std::fs::read_to_string(root.join("ab/rescored-cli/sessions.csv")).unwrap();
    let mut table = csv::Reader::from_reader(rescored.as_bytes());
    let header = table.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = table.records().map(Result::unwrap).collect();
    let at = |row: &csv::StringRecord, column: &str| {
        row[header.iter().position(|h| h == column).unwrap()].to_string()
    };
    for arm in ["codex", "aider"] {
        let sessions: Vec<&csv::StringRecord> =
            rows.iter().filter(|r| at(r, "arm") == arm).collect();
        assert_eq!(sessions.len(), 7, "{arm}: {rescored}");
        let cells = |column: &str| sessions.iter().map(|r| at(r, column)).collect::<Vec<_>>();
        assert_eq!(cells("premature_claims")[2], "1", "{arm}");
        assert_eq!(cells("tests_removed")[3], "3", "{arm}");
        assert_eq!(cells("outcome")[4], "interrupted", "{arm}");
        assert_eq!(cells("dup_side_effects")[4], "1", "{arm}");
        assert!(cells("divergent").iter().all(|d| d == "false"), "{arm}");
    }
    // The sandboxed smoke run: an initializer and one coding session per task, each
    // with its usage from the wrapper.
    let smoke = std::fs::read_to_string(root.join("ab/smoke/sessions.csv")).unwrap();
    let mut rows = csv::Reader::from_reader(smoke.as_bytes());
    let header = rows.headers().unwrap().clone();
    let rows: Vec<csv::StringRecord> = rows.records().map(Result::unwrap).collect();
    let cell = |row: &csv::StringRecord, column: &str| {
        row[header.iter().position(|h| h == column).unwrap()].to_string()
    };
    assert_eq!(rows.len(), 4, "{smoke}");
    for row in &rows {
        assert_eq!(cell(row, "error"), "", "{smoke}");
        assert_eq!(cell(row, "turns"), "3", "{smoke}");
        assert_eq!(cell(row, "input_tokens"), "1230", "{smoke}");
        assert_eq!(cell(row, "cost_usd"), "0.05", "{smoke}");
    }
    assert!(Path::new(&root.join("ab/real-suite/suite.toml")).exists());
}

/// Plays `claude -p --output-format stream-json` for the smoke run: takes the prompt,
/// checks the budget it was handed, prints an init and a result line.
const STAND_IN_CLAUDE: &str = r#"#!/bin/sh
cat > /dev/null
case " $* " in *" --max-turns 60 "*) ;; *) echo "no --max-turns 60 in: $*" >&2; exit 9 ;; esac
echo '{"type":"system","subtype":"init","cwd":"'"$PWD"'","session_id":"smoke"}'
echo '{"type":"result","subtype":"success","is_error":false,"num_turns":3,"total_cost_usd":0.05,"usage":{"input_tokens":30,"cache_creation_input_tokens":200,"cache_read_input_tokens":1000,"output_tokens":40}}'
"#;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}
