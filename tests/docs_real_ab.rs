//! Every command of `docs/real-ab.md` runs as written: the `sh` blocks are extracted and
//! run in order by one bash, from a scratch directory laid out like the repository root
//! (its `suites/`, `scripts/` and `tests/`), with the binary under test as `loopbench` on PATH.

mod common;

use std::path::Path;

use common::repo_root;

/// The `sh` blocks of a Markdown file, each with the line its fence opens on.
fn sh_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (index, line) in markdown.lines().enumerate() {
        match current.as_mut() {
            None if line.trim_end() == "```sh" => current = Some((index + 1, String::new())),
            None => {}
            Some(_) if line.trim_end() == "```" => blocks.extend(current.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
        }
    }
    assert!(current.is_none(), "an sh block is never closed");
    blocks
}

#[test]
fn sh_blocks_are_found_with_their_lines() {
    let blocks = sh_blocks("x\n```sh\na\nb\n```\n```toml\nc\n```\n```sh\nd\n```\n");
    assert_eq!(blocks, [(2, "a\nb\n".to_string()), (9, "d\n".to_string())]);
}

#[test]
#[ignore = "runs a small study on the sim agent (about two minutes in a debug build); .ci/run runs it"]
fn every_command_in_real_ab_runs_as_written() {
    let doc = repo_root().join("docs/real-ab.md");
    let blocks = sh_blocks(&std::fs::read_to_string(&doc).unwrap());
    assert!(blocks.len() >= 8, "docs/real-ab.md lost its commands");

    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    for dir in ["suites", "scripts", "tests"] {
        std::os::unix::fs::symlink(repo_root().join(dir), root.join(dir)).unwrap();
    }
    let bin = root.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_loopbench"), bin.join("loopbench")).unwrap();
    let home = root.join("home");
    std::fs::create_dir(&home).unwrap();

    let mut script = String::from("set -euo pipefail\n");
    for (line, text) in &blocks {
        script += &format!("echo '=== docs/real-ab.md:{line}'\n{text}");
    }
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(root)
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
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
        let (line, _) = blocks
            .iter()
            .find(|(_, text)| text.contains(needle))
            .unwrap();
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
    assert!(Path::new(&root.join("ab/real-suite/suite.toml")).exists());
}
