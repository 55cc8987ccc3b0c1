//! The shell blocks of the Markdown docs, which tests run as written.

/// A fenced block whose info string starts with `sh`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShBlock {
    /// The line its opening fence is on (1-based).
    pub line: usize,
    /// The word after `sh` in the info string: `slurm` (run by scripts/slurm/test.sh
    /// on its cluster), `template` (a template for a system no test has), `container`
    /// (run, after the untagged ones, by tests/container_sandbox.rs where a container
    /// engine answers), or None (run by the doc's own test).
    pub tag: Option<String>,
    /// The commands, one line each, with their newlines.
    pub text: String,
}

/// Every `sh` block of `markdown`, in order. Panics on a block that is never closed.
pub fn sh_blocks(markdown: &str) -> Vec<ShBlock> {
    let mut blocks = Vec::new();
    let mut current: Option<ShBlock> = None;
    let mut in_other_block = false;
    for (index, line) in markdown.lines().enumerate() {
        let fence = line.trim_end();
        if in_other_block {
            in_other_block = fence != "```";
            continue;
        }
        match current.as_mut() {
            None => match fence.strip_prefix("```") {
                Some(info) if info.split_whitespace().next() == Some("sh") => {
                    current = Some(ShBlock {
                        line: index + 1,
                        tag: info.split_whitespace().nth(1).map(str::to_string),
                        text: String::new(),
                    });
                }
                Some(_) => in_other_block = true,
                None => {}
            },
            Some(_) if fence == "```" => blocks.extend(current.take()),
            Some(block) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
        }
    }
    assert!(current.is_none(), "an sh block is never closed");
    blocks
}

/// The blocks of `markdown` that its own test runs: those without a tag.
pub fn runnable_sh_blocks(markdown: &str) -> Vec<ShBlock> {
    sh_blocks(markdown)
        .into_iter()
        .filter(|b| b.tag.is_none())
        .collect()
}

/// Runs `blocks` in order as one `bash -euo pipefail` script in `dir`, with `bin` first
/// on PATH (where the binary under test is `loopbench`). Before each block the script
/// prints `=== PAGE:LINE` on stderr, so that a failure says which block it was in.
pub fn run_blocks(
    page: &str,
    blocks: &[ShBlock],
    dir: &std::path::Path,
    bin: &std::path::Path,
) -> std::process::Output {
    let mut script = String::from("set -euo pipefail\n");
    for block in blocks {
        script += &format!("echo '=== {page}:{}' >&2\n{}", block.line, block.text);
    }
    std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(dir)
        .env(
            "PATH",
            format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
        )
        .output()
        .unwrap()
}
