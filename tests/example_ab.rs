//! The shipped A/B examples: `suites/examples/prompt-ab` (two arms that differ only in
//! `prompts`) and `suites/examples/env-ab` (only in `env`), run with their stub agents,
//! which record what reached them: each arm's prompt and environment get to the agent.

use crate::common;

use common::command::run_ok;
use common::repo_root;

/// The `[[arm]]` tables of a shipped example, each without `name` and `key`.
fn arms_without(suite: &str, key: &str) -> Vec<toml::Table> {
    let text = std::fs::read_to_string(repo_root().join(suite).join("suite.toml")).unwrap();
    let file: toml::Table = text.parse().unwrap();
    file["arm"]
        .as_array()
        .unwrap()
        .iter()
        .map(|arm| {
            let mut arm = arm.as_table().unwrap().clone();
            arm.remove("name");
            arm.remove(key).expect("every arm sets the key under test");
            arm
        })
        .collect()
}

#[test]
fn the_prompt_example_differs_only_in_prompts_and_each_prompt_reaches_the_agent() {
    let arms = arms_without("suites/examples/prompt-ab", "prompts");
    assert_eq!(arms.len(), 2);
    assert_eq!(arms[0], arms[1], "the arms differ in more than prompts");

    let tmp = tempfile::tempdir().unwrap();
    let ran = run_ok(
        &repo_root().join("suites/examples/prompt-ab"),
        &tmp.path().join("out"),
    );
    let a = ran.capture("prompt-a:latefees:0", 1, "stdout");
    let b = ran.capture("prompt-b:latefees:0", 1, "stdout");
    // The template's {{session}} is filled in before the agent sees it.
    assert!(a.contains("prompt: Prompt A. You are session 1 "), "{a}");
    assert!(b.contains("prompt: Prompt B. Session 1: "), "{b}");
    assert!(
        !a.contains("Prompt B") && !b.contains("Prompt A"),
        "{a}\n{b}"
    );
}

#[test]
fn the_env_example_differs_only_in_env_and_each_value_reaches_the_agent() {
    let arms = arms_without("suites/examples/env-ab", "env");
    assert_eq!(arms.len(), 2);
    assert_eq!(arms[0], arms[1], "the arms differ in more than env");

    let tmp = tempfile::tempdir().unwrap();
    let ran = run_ok(
        &repo_root().join("suites/examples/env-ab"),
        &tmp.path().join("out"),
    );
    let a = ran.capture("model-a:latefees:0", 1, "stdout");
    let b = ran.capture("model-b:latefees:0", 1, "stdout");
    // The arm's value wins over the agent table's; what the arm leaves alone stays.
    assert_eq!(a, "MODEL=model-a\nTEMPERATURE=0\n");
    assert_eq!(b, "MODEL=model-b\nTEMPERATURE=0\n");
}
