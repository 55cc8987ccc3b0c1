//! The arm keys of `suite.toml` beyond format, strategy and ledger (`list_schema`,
//! `exit_check`, `prompts`, `env`, the budgets) and the task's goal contract: what
//! `validate` accepts and prints, and what it refuses with the file and line.

use crate::common;

use std::path::{Path, PathBuf};

use common::{loopbench, repo_root};
use predicates::prelude::*;

/// A suite of one sim arm over a copy of the shipped `todo` task, with `extra` lines in
/// the arm table and `task_extra` lines at the top of the task's `task.toml`.
fn suite_with(dir: &Path, extra: &str, task_extra: &str) -> PathBuf {
    let suite = dir.join("suite");
    let task = suite.join("tasks/todo");
    std::fs::create_dir_all(&task).unwrap();
    let shipped = repo_root().join("suites/seed-replication/tasks/todo");
    // Copied: a task's roots may not be symlinks out of its directory.
    for sub in ["repo", "oracle"] {
        loopbench::fsutil::copy_tree(&shipped.join(sub), &task.join(sub), false).unwrap();
    }
    let task_toml = without_contract(&std::fs::read_to_string(shipped.join("task.toml")).unwrap());
    std::fs::write(task.join("task.toml"), format!("{task_extra}\n{task_toml}")).unwrap();
    std::fs::create_dir_all(suite.join("prompts")).unwrap();
    std::fs::write(
        suite.join("prompts/coding-b.md"),
        "Prompt B for {{session}}\n",
    )
    .unwrap();
    std::fs::write(
        suite.join("suite.toml"),
        format!(
            "name = \"keys\"\nseed = 1\nreplicates = 1\ntasks = [\"tasks/todo\"]\n\n\
             [agents.sim]\ndriver = \"sim\"\n\n\
             [[arm]]\nname = \"a\"\nagent = \"sim\"\nlist_format = \"json\"\n{extra}\n"
        ),
    )
    .unwrap();
    suite
}

/// The shipped task's text without its goal contract (`acceptance = [...]` and
/// `forbidden = [...]` at the top level), so that each test gives its own.
fn without_contract(task_toml: &str) -> String {
    let mut out = String::new();
    let mut in_list = false;
    for line in task_toml.lines() {
        if in_list {
            in_list = !line.starts_with(']');
            continue;
        }
        if line.starts_with("acceptance =") || line.starts_with("forbidden =") {
            in_list = !line.trim_end().ends_with(']');
            continue;
        }
        out.push_str(line);
        out.push('\n');
    }
    assert!(
        !out.contains("acceptance"),
        "the shipped contract was not removed"
    );
    out
}

#[test]
fn validate_prints_every_new_arm_key_in_toml_spelling() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite_with(
        tmp.path(),
        "list_schema = \"status\"\nexit_check = \"revert\"\n\
         prompts = { coding = \"prompts/coding-b.md\" }\nenv = { MODEL = \"model-b\" }\n\
         session_tokens = 500000\ntrial_tokens = 4000000\ntrial_cost_usd = 12.5",
        "acceptance = [\"every check passes\"]\nforbidden = [\"editing tests\", \"network\"]",
    );
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "list_schema = \"status\", exit_check = \"revert\", \
             prompts = { coding = \"prompts/coding-b.md\" }, env = { MODEL = \"model-b\" }, \
             session_tokens = 500000, trial_tokens = 4000000, trial_cost_usd = 12.5",
        ))
        .stdout(predicate::str::contains(
            "goal contract with 1 acceptance and 2 forbidden",
        ));
}

#[test]
fn an_arm_without_the_new_keys_gets_their_defaults() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite_with(tmp.path(), "", "");
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "list_schema = \"passes\", exit_check = \"off\", session_tokens = 0, \
             trial_tokens = 0, trial_cost_usd = 0.0",
        ))
        .stdout(predicate::str::contains("prompts =").not())
        .stdout(predicate::str::contains("goal contract").not());
}

/// Each bad arm line is refused with exit 2, its line number and `expect` in the message.
#[test]
fn bad_values_of_the_new_keys_name_their_line_and_what_was_expected() {
    let cases = [
        ("list_schema = \"state\"", "list_schema", "passes"),
        ("exit_check = \"reset\"", "exit_check", "revert"),
        (
            "prompts = { codeing = \"prompts/coding-b.md\" }",
            "prompts",
            "codeing",
        ),
        (
            "prompts = { coding = \"prompts/missing.md\" }",
            "prompts",
            "missing.md",
        ),
        ("prompts = {}", "prompts", "names no template"),
        (
            "env = { LOOPBENCH_SESSION = \"7\" }",
            "env",
            "belong to the harness",
        ),
        (
            "env = { \"BAD-NAME\" = \"x\" }",
            "env",
            "must be ASCII letters",
        ),
        ("env = { MODEL = 3 }", "env", "string"),
        ("session_tokens = -5", "session_tokens", "session_tokens"),
        ("trial_tokens = \"many\"", "trial_tokens", "trial_tokens"),
        ("trial_cost_usd = -1.0", "trial_cost_usd", ">= 0"),
        ("budget_tokens = 5", "budget_tokens", "budget_tokens"),
    ];
    for (line, starts, expect) in cases {
        let tmp = tempfile::tempdir().unwrap();
        let suite = suite_with(tmp.path(), line, "");
        let at = common::line_of(&suite.join("suite.toml"), starts);
        loopbench()
            .arg("validate")
            .arg(&suite)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(format!("suite.toml:{at}:")))
            .stderr(predicate::str::contains(expect));
    }
}

#[test]
fn an_unknown_task_key_is_refused_with_its_line() {
    let tmp = tempfile::tempdir().unwrap();
    let suite = suite_with(tmp.path(), "", "acceptence = [\"x\"]");
    loopbench()
        .arg("validate")
        .arg(&suite)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("task.toml:1:"))
        .stderr(predicate::str::contains("acceptence"));
}
