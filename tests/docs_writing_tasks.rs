//! The commands of `docs/writing-tasks.md` run as written, in order, from an empty
//! directory: a project carved into a task, `check-task` finding the undeclared
//! dependency of the first draft, passing once it is declared, and `validate --checks`.

use crate::common;

use std::path::Path;

use common::docs::{run_blocks, runnable_sh_blocks};
use common::repo_root;

#[test]
fn the_commands_of_writing_tasks_run_as_written() {
    let page = std::fs::read_to_string(repo_root().join("docs/writing-tasks.md")).unwrap();
    let blocks = runnable_sh_blocks(&page);
    assert!(blocks.len() >= 5, "docs/writing-tasks.md lost its commands");
    let tmp = tempfile::tempdir().unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_loopbench")).parent().unwrap();
    let out = run_blocks("docs/writing-tasks.md", &blocks, tmp.path(), bin);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // What the page says the first report shows.
    assert!(
        stdout.contains("ModuleNotFoundError: No module named 'units.length'"),
        "{stdout}"
    );
    assert!(
        stdout.contains("1 of 1 tasks can measure: every control held"),
        "{stdout}"
    );
    assert!(stdout.contains("suite 'units-sim' is valid"), "{stdout}");
}
