//! Work directories: a fresh copy of a task's repo with the canonical feature list and
//! one git commit, plus the files the harness keeps beside it (never inside it).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::error::{Error, IoContext, Result};
use crate::feature_list::{self, ListFormat};
use crate::fsutil::{copy_tree, scratch_dir};
use crate::suite::Task;

/// Identity of every commit made in a work directory, by harness or agent.
pub const GIT_NAME: &str = "loopbench";
/// E-mail of [`GIT_NAME`].
pub const GIT_EMAIL: &str = "loopbench@localhost";
/// Commit date of the harness's own commits, fixed so that trees hash alike across runs.
const HARNESS_COMMIT_DATE: &str = "2026-01-01T00:00:00+00:00";

/// A trial's private directory: `work/` (what the agent sees) and, beside it, the
/// side-effect log and the prompt file.
pub struct Workspace {
    /// Deleted on drop unless kept.
    root: Option<tempfile::TempDir>,
    kept_root: PathBuf,
    /// The agent's working directory.
    pub work_dir: PathBuf,
    /// `$LOOPBENCH_EFFECTS`: outside the work directory so the agent cannot tidy it.
    pub effects_log: PathBuf,
    /// `$LOOPBENCH_PROMPT_FILE`.
    pub prompt_file: PathBuf,
}

impl Workspace {
    /// Materializes `task` as a trial without initializer does: copy `repo/`, render the
    /// canonical list in `format`, `git init`, one commit. `oracle/` is never copied.
    pub fn create(task: &Task, format: ListFormat) -> Result<Workspace> {
        let ws = Workspace::empty(&task.repo_dir())?;
        let list = feature_list::render(format, &task.canonical_entries());
        let list_path = ws.work_dir.join(format.file_name());
        std::fs::write(&list_path, list)
            .io_context(|| format!("cannot write '{}'", list_path.display()))?;
        ws.git_init_and_commit(&format!("loopbench: start task {}", task.name))?;
        Ok(ws)
    }

    /// Materializes `task` for a suite trial: copy `repo/`, `git init`, one commit, and
    /// no feature list (an initializer session writes it; without one there is none).
    pub fn create_bare(task: &Task) -> Result<Workspace> {
        let ws = Workspace::empty(&task.repo_dir())?;
        ws.git_init_and_commit(&format!("loopbench: start task {}", task.name))?;
        Ok(ws)
    }

    /// A workspace holding a copy of `repo` and nothing else (no list, no git yet).
    pub fn empty(repo: &Path) -> Result<Workspace> {
        let root = scratch_dir("loopbench-trial-")?;
        let work_dir = root.path().join("work");
        copy_tree(repo, &work_dir, true)?;
        let effects_log = root.path().join("effects.log");
        let prompt_file = root.path().join("prompt.md");
        std::fs::write(&prompt_file, "")
            .io_context(|| format!("cannot write '{}'", prompt_file.display()))?;
        Ok(Workspace {
            kept_root: root.path().to_path_buf(),
            root: Some(root),
            work_dir,
            effects_log,
            prompt_file,
        })
    }

    /// The workspace of a trial that someone else created and owns (an external agent
    /// process is handed its paths): never deleted by this value.
    pub fn existing(work_dir: PathBuf, effects_log: PathBuf, prompt_file: PathBuf) -> Workspace {
        let kept_root = work_dir.parent().unwrap_or(&work_dir).to_path_buf();
        Workspace {
            root: None,
            kept_root,
            work_dir,
            effects_log,
            prompt_file,
        }
    }

    /// The directory holding `work/` and the harness's files beside it.
    pub fn root(&self) -> &Path {
        self.root.as_ref().map_or(&self.kept_root, |r| r.path())
    }

    /// Keeps the directory after the workspace is dropped; returns where it is.
    pub fn keep(&mut self) -> &Path {
        if let Some(root) = self.root.take() {
            self.kept_root = root.keep();
        }
        &self.kept_root
    }

    /// `git init`, stage everything and commit with the harness identity.
    pub fn git_init_and_commit(&self, message: &str) -> Result<()> {
        git(&self.work_dir, &["init", "-q", "-b", "main"])?;
        self.git_commit_all(message)
    }

    /// Stages everything and commits (allowing an empty commit) with the harness identity.
    pub fn git_commit_all(&self, message: &str) -> Result<()> {
        git(&self.work_dir, &["add", "-A"])?;
        git(
            &self.work_dir,
            &[
                "commit",
                "-q",
                "--allow-empty",
                "--no-verify",
                "-m",
                message,
            ],
        )?;
        Ok(())
    }
}

/// Environment shared by every git call and every agent session: a fixed identity,
/// no user or system git config, and no discovery of repositories above the work dir.
pub fn git_env(work_dir: &Path) -> Vec<(String, OsString)> {
    let ceiling = work_dir.parent().unwrap_or(work_dir).as_os_str().to_owned();
    vec![
        ("GIT_AUTHOR_NAME".into(), GIT_NAME.into()),
        ("GIT_AUTHOR_EMAIL".into(), GIT_EMAIL.into()),
        ("GIT_COMMITTER_NAME".into(), GIT_NAME.into()),
        ("GIT_COMMITTER_EMAIL".into(), GIT_EMAIL.into()),
        ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        ("GIT_CONFIG_GLOBAL".into(), "/dev/null".into()),
        ("GIT_CEILING_DIRECTORIES".into(), ceiling),
        ("GIT_TERMINAL_PROMPT".into(), "0".into()),
    ]
}

/// Runs git in `dir` with the harness identity and fixed dates; returns stdout.
pub fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .envs(git_env(dir))
        .env("GIT_AUTHOR_DATE", HARNESS_COMMIT_DATE)
        .env("GIT_COMMITTER_DATE", HARNESS_COMMIT_DATE)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| Error::Tool(format!("cannot run git (is it installed?): {e}")))?;
    if !out.status.success() {
        return Err(Error::Tool(format!(
            "git {} failed in '{}': {}",
            args.join(" "),
            dir.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `git status --porcelain` without taking the index lock or refreshing the index, so
/// that looking never changes the work directory. `None` when git cannot tell (no
/// repository any more).
pub fn git_status_porcelain(dir: &Path) -> Option<String> {
    let out = Command::new("git")
        .args(["--no-optional-locks", "status", "--porcelain"])
        .current_dir(dir)
        .envs(git_env(dir))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}
