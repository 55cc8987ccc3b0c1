//! The commands of `docs/scale-out.md` that need no cluster run as written, in order,
//! from a scratch directory laid out like the repository root: a sequential suite look
//! by look as shards until it stops, and the merge step of the GitHub Actions matrix.
//! The page's `sh slurm` blocks are run by `scripts/slurm/test.sh` on its one-node
//! cluster; its `sh template` blocks are for systems no test has.

use crate::common;

use std::path::Path;

use common::docs::{run_blocks, runnable_sh_blocks};
use common::{loopbench, repo_root};

/// The one `json` block of the page: the state of the sequential run after look 1.
fn json_block(markdown: &str) -> serde_json::Value {
    let start = markdown.find("```json\n").expect("no json block") + "```json\n".len();
    let end = start + markdown[start..].find("```").unwrap();
    serde_json::from_str(&markdown[start..end]).unwrap()
}

fn json_file(path: &Path) -> serde_json::Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Runs `loopbench run` on the two-arm, one-replicate slice of the default suite.
fn small_run(root: &Path, out: &str, shard: Option<&str>) {
    let mut cmd = loopbench();
    cmd.current_dir(root).args([
        "run",
        "suites/seed-replication",
        "--arms",
        "json,markdown",
        "--replicates",
        "1",
        "--quiet",
        "--out",
        out,
    ]);
    if let Some(shard) = shard {
        cmd.args(["--shard", shard]);
    }
    cmd.assert().success();
}

#[test]
fn the_local_commands_of_scale_out_run_as_written() {
    let page = std::fs::read_to_string(repo_root().join("docs/scale-out.md")).unwrap();
    let blocks = runnable_sh_blocks(&page);
    assert!(blocks.len() >= 3, "docs/scale-out.md lost its commands");

    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    std::os::unix::fs::symlink(repo_root().join("suites"), root.join("suites")).unwrap();
    let bin = root.join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_loopbench"), bin.join("loopbench")).unwrap();
    // What the four matrix jobs would have uploaded, and the same run in one process.
    for i in 1..=4 {
        small_run(root, &format!("shard-{i}"), Some(&format!("{i}/4")));
    }
    small_run(root, "whole", None);

    let output = run_blocks("docs/scale-out.md", &blocks, root, &bin);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "{stdout}\n{stderr}");

    // The page shows the state look 1's merge writes.
    assert_eq!(
        json_block(&page),
        json_file(&root.join("looks/1/merged/sequential-state.json"))
    );
    // The loop ran look after look until the run stopped, and printed the last state.
    let mut last = 1;
    while root.join(format!("looks/{}/merged", last + 1)).is_dir() {
        last += 1;
    }
    assert!(last >= 2, "the loop ran no look: {stderr}");
    let state = json_file(&root.join(format!("looks/{last}/merged/sequential-state.json")));
    assert_eq!(state["finished"], true, "{state}");
    assert_eq!(state["looks_done"], last, "{state}");
    assert!(stdout.contains("\"finished\": true"), "{stdout}");
    // The matrix's merge is the run in one process.
    for file in ["sessions.csv", "trials.csv", "summary.csv"] {
        let merged = std::fs::read(root.join("merged").join(file)).unwrap();
        let whole = std::fs::read(root.join("whole").join(file)).unwrap();
        assert!(merged == whole, "{file} of the merged shards differs");
    }
}
