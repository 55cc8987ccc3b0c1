//! Every subcommand's `--help` ends with examples, and the example command lines work:
//! each is run from a scratch copy of the repository root, in the order the examples
//! are written to be followed (a run before the report of it).

use crate::common;

use std::path::Path;

use clap::CommandFactory;
use common::{loopbench, repo_root, visible_tempdir};

/// Subcommands in the order their examples are run; each one's examples may use what
/// the ones before made (results/demo, results/merged, results/example). `import`'s
/// own subcommands, one per format, follow it ([`order`]).
const ORDER: &[&str] = &[
    "validate",
    "check-task",
    "run",
    "resume",
    "merge",
    "replay",
    "show",
    "export",
    "report",
    "compare",
    "weekly",
    "power",
    "import",
    "usage",
    "sim-agent",
    "mock-model",
    "completions",
    "man",
];

/// [`ORDER`] with a subcommand per format of the importers' table after `import`.
fn order() -> Vec<String> {
    let mut order = Vec::new();
    for sub in ORDER {
        order.push(sub.to_string());
        if *sub == "import" {
            order.extend(
                loopbench::import::format::Format::all().map(|f| format!("import {}", f.name())),
            );
        }
    }
    order
}

/// Example lines not run here, by a piece of their text, and why.
const NOT_RUN: &[(&str, &str)] = &[
    (
        "run suites/seed-replication    #",
        "the full suite takes minutes",
    ),
    ("~/.claude/", "reads the user's own transcripts"),
    ("~/.codex/", "reads the user's own Codex sessions"),
    ("~/src/", "reads a history in the user's own repository"),
    ("RUN_DIR/", "a placeholder for a command agent's run"),
    ("scripts/agents/claude.sh", "needs the Claude Code CLI"),
];

/// Every visible subcommand, nested ones as "import claude-code".
fn subcommands() -> Vec<String> {
    fn walk(cmd: &clap::Command, prefix: &str, out: &mut Vec<String>) {
        for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
            let name = format!("{prefix}{}", sub.get_name());
            out.push(name.clone());
            walk(sub, &format!("{name} "), out);
        }
    }
    let mut out = Vec::new();
    walk(&loopbench::cli::Cli::command(), "", &mut out);
    out
}

/// The lines under "Examples" of `loopbench <sub> --help`.
fn examples_of(sub: &str) -> Vec<String> {
    let out = loopbench()
        .args(sub.split(' '))
        .arg("--help")
        .assert()
        .success();
    let help = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    let Some(start) = help.find("\nExamples") else {
        panic!("`loopbench {sub} --help` has no Examples section:\n{help}");
    };
    help[start + 1..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_subcommand_is_given_an_order_for_its_examples() {
    let mut listed = order();
    let mut all = subcommands();
    listed.sort();
    all.sort();
    assert_eq!(listed, all, "ORDER must name every visible subcommand once");
}

#[test]
fn every_subcommand_help_ends_with_examples_that_use_it() {
    for sub in subcommands() {
        let examples = examples_of(&sub);
        let name = sub.rsplit(' ').next().unwrap();
        assert!(
            examples.iter().any(|l| l.contains(name)),
            "`loopbench {sub} --help`: no example uses it: {examples:?}"
        );
    }
}

/// A scratch copy of what the examples read from the repository root.
fn scratch_root(dir: &Path) {
    let root = repo_root();
    for part in ["suites", "scripts"] {
        std::os::unix::fs::symlink(root.join(part), dir.join(part)).unwrap();
    }
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::os::unix::fs::symlink(root.join("tests/data"), dir.join("tests/data")).unwrap();
}

#[test]
fn every_example_command_line_works_from_the_repository_root() {
    let tmp = visible_tempdir();
    let dir = tmp.path();
    scratch_root(dir);
    let bin = Path::new(env!("CARGO_BIN_EXE_loopbench")).parent().unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let have_man = std::process::Command::new("man")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let mut ran = 0;
    for sub in order() {
        for line in examples_of(&sub) {
            let line = line.trim();
            if !line.starts_with("loopbench ") {
                continue;
            }
            if NOT_RUN.iter().any(|(piece, _)| line.contains(piece)) {
                continue;
            }
            if line.contains("man -l") && !have_man {
                continue;
            }
            let out = std::process::Command::new("sh")
                .args(["-c", line])
                .current_dir(dir)
                .env("PATH", &path)
                .env("HOME", dir)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "example of `{sub}` failed: {line}\nstatus {}\nstdout:\n{}\nstderr:\n{}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            ran += 1;
        }
    }
    // What the examples say they make.
    for made in [
        "results/demo/summary.md",
        "results/merged/sessions.csv",
        "results/example/sessions.csv",
        "results/demo/report.html",
        "compare.xml",
        "weekly/weekly.csv",
        "latefees.jsonl",
        "loopbench.bash",
        "man/man1/loopbench-run.1",
    ] {
        assert!(dir.join(made).exists(), "no {made} after the examples");
    }
    assert!(ran >= 25, "only {ran} example lines ran");
}
