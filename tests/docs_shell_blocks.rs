//! Every shell block of `docs/` is run by a test: a page's untagged `sh` blocks by the
//! page's own test, its `sh slurm` blocks by `scripts/slurm/test.sh` on a one-node
//! cluster, its `sh container` blocks by tests/container_sandbox.rs where a container
//! engine answers, and `sh template` blocks (for systems no test has: Kubernetes, a
//! real Slurm site) only where the page says they are a template or not tested.

use crate::common;

use common::docs::sh_blocks;
use common::repo_root;

/// The pages with untagged `sh` blocks and the test that runs them.
const RUN_BY: [(&str, &str); 4] = [
    ("formats.md", "tests/docs_formats.rs"),
    ("real-ab.md", "tests/docs_real_ab.rs"),
    ("scale-out.md", "tests/docs_scale_out.rs"),
    ("writing-tasks.md", "tests/docs_writing_tasks.rs"),
];

#[test]
fn every_shell_block_in_docs_is_run_by_a_test_or_is_a_marked_template() {
    let docs = repo_root().join("docs");
    let mut pages: Vec<_> = std::fs::read_dir(&docs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    let read = |path: &str| std::fs::read_to_string(repo_root().join(path)).unwrap();
    let slurm_test = read("scripts/slurm/test.sh");
    let container_test = read("tests/container_sandbox.rs");
    let mut problems = Vec::new();
    for page in &pages {
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(page).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let info = line.trim_end().strip_prefix("```").unwrap_or("");
            if matches!(
                info.split_whitespace().next(),
                Some("bash" | "shell" | "console" | "zsh")
            ) {
                problems.push(format!(
                    "docs/{name}:{}: a {info} block; fence commands as sh so that a test runs them",
                    i + 1
                ));
            }
        }
        for block in sh_blocks(&text) {
            let at = format!("docs/{name}:{}", block.line);
            match block.tag.as_deref() {
                None => match RUN_BY.iter().find(|(page, _)| *page == name) {
                    Some((_, test)) if read(test).contains(&format!("docs/{name}")) => {}
                    Some((_, test)) => {
                        problems.push(format!("{at}: {test} does not read the page"))
                    }
                    None => problems.push(format!("{at}: no test runs this page's sh blocks")),
                },
                Some("slurm") => {
                    if !(slurm_test.contains(&format!("docs/{name}"))
                        && slurm_test.contains("sh slurm"))
                    {
                        problems.push(format!("{at}: scripts/slurm/test.sh does not run it"));
                    }
                }
                Some("container") => {
                    if !(container_test.contains(&format!("docs/{name}"))
                        && container_test.contains("\"container\""))
                    {
                        problems.push(format!("{at}: tests/container_sandbox.rs does not run it"));
                    }
                }
                Some("template") => {
                    // From the block's section heading to the block itself.
                    let heading = lines[..block.line - 1]
                        .iter()
                        .rposition(|l| l.starts_with('#'))
                        .unwrap_or(0);
                    let context = lines[heading..block.line - 1].join("\n");
                    if !(context.contains("template") || context.contains("not tested")) {
                        problems.push(format!(
                            "{at}: a template block whose section does not say it is a template"
                        ));
                    }
                }
                Some(other) => problems.push(format!("{at}: unknown tag 'sh {other}'")),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
