//! The gold of a task that runs in a container: each feature's `solve.sh` run, in
//! feature order, in a fresh container of the task's image over the tree the features
//! before it left, and the files it wrote or changed in the work directory taken as
//! that feature's gold. Made once per task and image in a process; `check-task`'s
//! oracle control and the simulated agent then lay those files as they lay a loopbench
//! task's `oracle/gold/<id>/`. What a `solve.sh` does outside the work directory (an
//! installed package) is not part of it: the checks see only the work directory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::Task;
use crate::error::{IoContext, Result, SandboxError};
use crate::fsutil::TreeSnapshot;
use crate::process::{Isolation, ShellCommand};
use crate::sandbox::container::{Mount, TaskContainer, container_user};

/// Where a feature's `solve.sh` appears in its container.
const SOLUTION_AT: &str = "/solution";
/// How long one `solve.sh` may run.
const SOLVE_TIMEOUT: Duration = Duration::from_secs(600);
/// How much of a failed `solve.sh`'s output its error keeps.
const OUTPUT_BYTES: usize = 2048;

/// Each feature's gold files (path relative to the work directory, content), in the
/// task's feature order; empty for a feature without a `solve.sh`.
pub type ContainerGold = Vec<Vec<(String, Vec<u8>)>>;

/// The gold of `task`'s features, made with `container` once per process.
pub fn container_gold(task: &Task, container: &TaskContainer) -> Result<Arc<ContainerGold>> {
    type Memo = HashMap<(PathBuf, String), Arc<ContainerGold>>;
    static MADE: OnceLock<Mutex<Memo>> = OnceLock::new();
    let memo = MADE.get_or_init(|| Mutex::new(HashMap::new()));
    let key = (task.dir.clone(), container.image.id.clone());
    if let Some(found) = memo.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return Ok(found);
    }
    let made = Arc::new(make_gold(task, container)?);
    if let Ok(mut m) = memo.lock() {
        m.insert(key, made.clone());
    }
    Ok(made)
}

/// Whether any feature of `task` has a `solve.sh`.
pub fn has_container_gold(task: &Task) -> bool {
    task.features
        .iter()
        .any(|f| f.container.as_ref().is_some_and(|c| c.gold.is_some()))
}

fn make_gold(task: &Task, container: &TaskContainer) -> Result<ContainerGold> {
    let scratch = crate::fsutil::scratch_dir("loopbench-gold-")?;
    let tree = scratch.path().join("tree");
    task.lay_starting_files(&tree)?;
    let mut gold = Vec::new();
    for feature in &task.features {
        let Some(check) = feature.container.as_ref() else {
            gold.push(Vec::new());
            continue;
        };
        let Some(solve) = check.gold.as_deref() else {
            gold.push(Vec::new());
            continue;
        };
        let before = TreeSnapshot::read(&tree)?;
        let env: Vec<(String, std::ffi::OsString)> = check
            .gold_env
            .iter()
            .map(|(k, v)| (k.clone(), v.into()))
            .collect();
        solve_in(
            task,
            (&feature.id, solve, &env),
            container,
            &tree,
            scratch.path(),
        )?;
        let after = TreeSnapshot::read(&tree)?;
        gold.push(
            after
                .files
                .into_iter()
                .filter(|f| before.get(&f.path).is_none_or(|b| b.content != f.content))
                .map(|f| (f.path, f.content))
                .collect(),
        );
    }
    Ok(gold)
}

/// Runs `solve` (feature `id`'s `solve.sh`) in a container over `tree`, with `env`
/// (the task's `[solution] env`) over the container's own.
fn solve_in(
    task: &Task,
    (id, solve, env): (&str, &Path, &[(String, std::ffi::OsString)]),
    container: &TaskContainer,
    tree: &Path,
    scratch: &Path,
) -> Result<()> {
    let solution = scratch.join("solution");
    crate::fsutil::remove_if_present(&solution)?;
    std::fs::create_dir_all(&solution)
        .io_context(|| format!("cannot create '{}'", solution.display()))?;
    std::fs::copy(solve, solution.join("solve.sh"))
        .io_context(|| format!("cannot copy '{}'", solve.display()))?;
    if let Some(user) = container_user() {
        user.hand_over(&[tree]).io_context(|| {
            format!(
                "cannot hand '{}' over to the sandbox's user",
                tree.display()
            )
        })?;
    }
    let mounts = vec![
        Mount {
            host: tree.to_path_buf(),
            target: container.workdir.clone().into(),
            writable: true,
        },
        Mount {
            host: solution,
            target: SOLUTION_AT.into(),
            writable: false,
        },
    ];
    let run = container.run(mounts, Vec::new(), false);
    let (outcome, output) = ShellCommand {
        script: &format!("bash {SOLUTION_AT}/solve.sh"),
        cwd: scratch,
        env,
        timeout: SOLVE_TIMEOUT,
        isolation: Isolation::Container(&run),
    }
    .run_keeping_tail(OUTPUT_BYTES)
    .map_err(|e| SandboxError::SolveNotRun {
        task: task.name.clone(),
        feature: id.to_string(),
        engine: container.engine.name.to_string(),
        why: e.to_string(),
    })?;
    if outcome.success() {
        return Ok(());
    }
    Err(SandboxError::SolveFailed {
        task: task.name.clone(),
        feature: id.to_string(),
        solve: solve.to_path_buf(),
        ended: match (outcome.timed_out, outcome.code) {
            (true, _) => "timed out".to_string(),
            (false, Some(code)) => format!("exit {code}"),
            (false, None) => "killed by a signal".to_string(),
        },
        output: crate::terminal::line(String::from_utf8_lossy(&output).trim()).to_string(),
    }
    .into())
}
