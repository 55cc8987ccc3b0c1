//! What `check-task` runs: the tasks, their gold, and the trees each control checks.

use std::path::{Path, PathBuf};

use super::order::{closure, dependency_order};
use crate::error::{IoContext, Result, SuiteFileError};
use crate::sandbox::SandboxKind;
use crate::suite::{Suite, Task};

/// The tasks to check and how.
#[derive(Debug)]
pub struct CheckPlan {
    /// The tasks, in the order given (a suite's in its order).
    pub tasks: Vec<Task>,
    /// How many times every check runs on the same tree (at least 1; 1 skips `repeat`).
    pub repeats: u32,
    /// Where the checks run: in a sandbox, as a sandboxed run's verify (no network,
    /// `oracle/` hidden), or on the host, as an unsandboxed run's verify.
    pub sandbox: SandboxKind,
    /// The sandbox a suite given as input runs its arms' checks in (the first that
    /// confines), `none` when it runs them on the host.
    pub suite_sandbox: SandboxKind,
    /// The container engine a suite given as input names, if any.
    pub engine: Option<crate::sandbox::container::EngineName>,
    /// The sandbox `--sandbox` named, `None` for `auto`.
    pub asked: Option<SandboxKind>,
}

impl CheckPlan {
    /// The tasks of `inputs`: task directories, or one suite directory (all its tasks).
    /// Every task is loaded and its `oracle/gold` checked; bad input is exit 2 naming
    /// the file.
    pub fn load(inputs: &[PathBuf], repeats: u32, sandbox: SandboxKind) -> Result<CheckPlan> {
        let mut tasks = Vec::new();
        let mut suite_sandbox = SandboxKind::None;
        let mut engine = None;
        for input in inputs {
            if input.join("suite.toml").is_file() {
                let suite = Suite::load(input)?;
                engine = engine.or(suite.engine);
                if let Some(kind) = suite
                    .arms
                    .iter()
                    .map(|a| suite.verify_sandbox_of(a))
                    .find(|k| k.confines())
                    && !suite_sandbox.confines()
                {
                    suite_sandbox = kind;
                }
                tasks.extend(suite.tasks);
            } else {
                tasks.push(Task::load(input)?);
            }
        }
        for task in &tasks {
            check_gold_dirs(task)?;
        }
        Ok(CheckPlan {
            tasks,
            repeats: repeats.max(1),
            sandbox,
            suite_sandbox,
            engine,
            asked: None,
        })
    }

    /// The sandbox `task`'s checks run in: a container for a task that runs in one
    /// (refused, exit 2, when the checks were asked to run elsewhere), else the plan's.
    pub fn sandbox_of(&self, task: &Task) -> Result<SandboxKind> {
        let kind = match (task.needs_container(), self.asked) {
            (Some(_), None) => SandboxKind::Container,
            (_, Some(kind)) => kind,
            (None, None) => self.sandbox,
        };
        crate::suite::refuse_outside_container(task, kind)?;
        Ok(kind)
    }
}

/// The task's `oracle/gold`, when it has one.
pub fn gold_root(task: &Task) -> Option<PathBuf> {
    Some(task.dir.join("oracle").join("gold")).filter(|p| p.is_dir())
}

/// Refuses an `oracle/gold` entry that is not the gold of a feature of the task: a
/// directory named after no feature (a renamed feature, a typo) would never be applied.
fn check_gold_dirs(task: &Task) -> Result<()> {
    let Some(root) = gold_root(task) else {
        return Ok(());
    };
    let entries =
        std::fs::read_dir(&root).io_context(|| format!("cannot read '{}'", root.display()))?;
    let mut names: Vec<(String, bool)> = Vec::new();
    for entry in entries {
        let entry = entry.io_context(|| format!("cannot read '{}'", root.display()))?;
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        names.push((entry.file_name().to_string_lossy().into_owned(), is_dir));
    }
    names.sort();
    let task_file = task.dir.join("task.toml");
    for (name, is_dir) in names {
        let at = root.join(&name);
        if !is_dir {
            return Err(SuiteFileError::GoldNotADirectory { path: at }.into());
        }
        if task.feature(&name).is_none() {
            return Err(SuiteFileError::GoldForUnknownFeature {
                path: at,
                feature: name,
                task_file: task_file.clone(),
                features: task.features.iter().map(|f| f.id.clone()).collect(),
            }
            .into());
        }
    }
    Ok(())
}

/// Which control a tree is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeKind {
    /// `repo/` as it is.
    Nop,
    /// The gold of the first `step + 1` features in dependency order.
    Oracle(usize),
    /// The gold of one feature (its index) and of its `depends_on` closure.
    Alone(usize),
}

/// One tree to build and the features to check on it.
#[derive(Debug, Clone)]
pub struct TreeJob {
    /// Index of the task in the plan.
    pub task: usize,
    /// The control it serves.
    pub kind: TreeKind,
    /// Features whose gold is copied over `repo/`, in this order.
    pub golds: Vec<usize>,
    /// Features whose verify runs on it.
    pub checks: Vec<usize>,
}

/// Every tree the controls of `task` (index `t`) need.
pub fn tree_jobs(t: usize, task: &Task) -> Vec<TreeJob> {
    let order = dependency_order(task);
    let all: Vec<usize> = (0..task.features.len()).collect();
    let mut jobs = vec![TreeJob {
        task: t,
        kind: TreeKind::Nop,
        golds: Vec::new(),
        checks: all,
    }];
    if gold_root(task).is_none() && !crate::suite::has_container_gold(task) {
        return jobs;
    }
    for step in 0..order.len() {
        jobs.push(TreeJob {
            task: t,
            kind: TreeKind::Oracle(step),
            golds: order[..=step].to_vec(),
            checks: order[..=step].to_vec(),
        });
    }
    for &f in &order {
        if !has_gold(task, f) {
            continue;
        }
        let mut golds = closure(task, &order, f);
        golds.push(f);
        jobs.push(TreeJob {
            task: t,
            kind: TreeKind::Alone(f),
            golds,
            checks: vec![f],
        });
    }
    jobs
}

/// Whether feature `f` of `task` has a gold directory (or, in a container task, a
/// `solve.sh`).
pub fn has_gold(task: &Task, f: usize) -> bool {
    let feature = &task.features[f];
    task.gold_dir(&feature.id).is_dir()
        || feature.container.as_ref().is_some_and(|c| c.gold.is_some())
}

/// Builds the tree of `job` in `dir`: the starting files (`repo/` without `.git`, a
/// step's `workdir/`), then each gold laid over them in order: `oracle/gold/<id>/`, or
/// what the feature's `solve.sh` wrote (`container_gold`, for a container task).
pub fn build_tree(
    task: &Task,
    job: &TreeJob,
    dir: &Path,
    container_gold: Option<&crate::suite::ContainerGold>,
) -> Result<()> {
    task.lay_starting_files(dir)?;
    for &f in &job.golds {
        let gold = task.gold_dir(&task.features[f].id);
        if gold.is_dir() {
            crate::fsutil::copy_tree(&gold, dir, true)?;
        }
        for (path, content) in container_gold.and_then(|g| g.get(f)).into_iter().flatten() {
            let at = crate::fsutil::confine(dir, path)?;
            if let Some(parent) = at.parent() {
                std::fs::create_dir_all(parent)
                    .io_context(|| format!("cannot create '{}'", parent.display()))?;
            }
            std::fs::write(&at, content)
                .io_context(|| format!("cannot write '{}'", at.display()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    /// A copy of the shipped latefees task with `oracle/gold` holding `entry`.
    fn task_with_gold_entry(entry: &str, dir: bool) -> (tempfile::TempDir, Task) {
        let tmp = tempfile::tempdir().unwrap();
        let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("suites/examples/tasks/latefees");
        let out = std::process::Command::new("cp")
            .arg("-r")
            .arg(&shipped)
            .arg(tmp.path().join("latefees"))
            .status()
            .unwrap();
        assert!(out.success());
        let at = tmp.path().join("latefees/oracle/gold").join(entry);
        if dir {
            std::fs::create_dir_all(&at).unwrap();
        } else {
            std::fs::write(&at, "not gold\n").unwrap();
        }
        let task = Task::load(&tmp.path().join("latefees")).unwrap();
        (tmp, task)
    }

    #[test]
    fn a_file_in_oracle_gold_is_refused_naming_it() {
        let (_tmp, task) = task_with_gold_entry("NOTES", false);
        let err = check_gold_dirs(&task).unwrap_err();
        let Error::SuiteFile(SuiteFileError::GoldNotADirectory { path }) = err else {
            panic!("{err:?}");
        };
        assert_eq!(path, task.dir.join("oracle/gold/NOTES"));
    }

    #[test]
    fn gold_for_a_feature_the_task_lacks_is_refused_with_the_features_it_has() {
        let (_tmp, task) = task_with_gold_entry("F9", true);
        let err = check_gold_dirs(&task).unwrap_err();
        let Error::SuiteFile(SuiteFileError::GoldForUnknownFeature {
            feature,
            task_file,
            features,
            ..
        }) = err
        else {
            panic!("{err:?}");
        };
        assert_eq!(feature, "F9");
        assert_eq!(task_file, task.dir.join("task.toml"));
        let ids: Vec<String> = task.features.iter().map(|f| f.id.clone()).collect();
        assert_eq!(features, ids);
        assert!(!features.contains(&"F9".to_string()));
    }
}
