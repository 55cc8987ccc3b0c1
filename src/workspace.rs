//! Work directories: a fresh copy of a task's repo with the canonical feature list and
//! one git commit, plus the files the harness keeps beside it (never inside it).

use std::path::{Path, PathBuf};

use crate::effects::EffectsLog;
use crate::error::{IoContext, Result};
use crate::feature_list::{self, ListFormat, ListSchema};
use crate::fsutil::{copy_tree, scratch_dir};
use crate::git::git;
use crate::suite::Task;

/// The free-text shift notes that sessions keep.
pub const PROGRESS_FILE: &str = "PROGRESS.md";

/// The directory beside `work/` that holds the sessions' global git configuration.
pub const GIT_CONFIG_DIR: &str = "git";

/// `$LOOPBENCH_EFFECTS` beside `work/`: the channel of the session that runs.
pub const EFFECTS_CHANNEL: &str = "effects";

/// The harness's own copy of the effects log beside `work/`, which no sandbox shows.
pub const EFFECTS_COPY: &str = "effects.log";

/// A trial's private directory: `work/` (what the agent sees) and, beside it, the
/// side-effect log's channel, the harness's copy of it, and the prompt file.
pub struct Workspace {
    /// Deleted on drop unless kept.
    root: Option<tempfile::TempDir>,
    kept_root: PathBuf,
    /// The agent's working directory.
    pub work_dir: PathBuf,
    /// `$LOOPBENCH_EFFECTS`, outside the work directory: while a session runs, the FIFO
    /// through which its side-effect tools append to [`Workspace::effects`]
    /// (`crate::effects::Channel`).
    pub effects_channel: PathBuf,
    /// The harness's record of the trial's effects log, which no session can rewrite.
    pub effects: EffectsLog,
    /// `$LOOPBENCH_PROMPT_FILE`.
    pub prompt_file: PathBuf,
    /// The sessions' `GIT_CONFIG_GLOBAL`: an empty file of this trial, in a directory
    /// of its own that sessions may write.
    pub git_config: PathBuf,
}

impl Workspace {
    /// Materializes `task` as a trial without initializer does: copy `repo/`, render the
    /// canonical list in `format`, `git init`, one commit. `oracle/` is never copied.
    pub fn create(task: &Task, format: ListFormat) -> Result<Workspace> {
        Workspace::create_with(task, format, ListSchema::Passes)
    }

    /// [`Workspace::create`] with the list in `schema` (under the status schema, the
    /// task's goal contract at the top and every entry `pending`).
    pub fn create_with(task: &Task, format: ListFormat, schema: ListSchema) -> Result<Workspace> {
        let ws = Workspace::empty(&task.repo_dir())?;
        let list = feature_list::render_with(
            format,
            schema,
            &task.contract(),
            &task.canonical_entries(),
            &feature_list::RenderOptions::default(),
        );
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
        let effects_channel = root.path().join(EFFECTS_CHANNEL);
        let effects = EffectsLog::new(Some(root.path().join(EFFECTS_COPY)));
        let prompt_file = root.path().join("prompt.md");
        std::fs::write(&prompt_file, "")
            .io_context(|| format!("cannot write '{}'", prompt_file.display()))?;
        let git_dir = root.path().join(GIT_CONFIG_DIR);
        std::fs::create_dir_all(&git_dir)
            .io_context(|| format!("cannot create '{}'", git_dir.display()))?;
        let git_config = crate::git::session_config_path(&git_dir);
        std::fs::write(&git_config, "")
            .io_context(|| format!("cannot write '{}'", git_config.display()))?;
        Ok(Workspace {
            kept_root: root.path().to_path_buf(),
            root: Some(root),
            work_dir,
            effects_channel,
            effects,
            prompt_file,
            git_config,
        })
    }

    /// The workspace of a trial that someone else created and owns (an external agent
    /// process is handed its paths, `$LOOPBENCH_EFFECTS` among them): never deleted by
    /// this value. Its effects record starts empty and keeps no copy.
    pub fn existing(
        work_dir: PathBuf,
        effects_channel: PathBuf,
        prompt_file: PathBuf,
    ) -> Workspace {
        let kept_root = work_dir.parent().unwrap_or(&work_dir).to_path_buf();
        let git_config = crate::git::session_config_path(&kept_root.join(GIT_CONFIG_DIR));
        Workspace {
            root: None,
            kept_root,
            work_dir,
            effects_channel,
            effects: EffectsLog::new(None),
            prompt_file,
            git_config,
        }
    }

    /// The directory holding `work/` and the harness's files beside it.
    pub fn root(&self) -> &Path {
        self.root.as_ref().map_or(&self.kept_root, |r| r.path())
    }

    /// Keeps the directory after the workspace is dropped, owned by the harness's user
    /// again (a root harness handed its work directory to the sandbox's user); returns
    /// where it is.
    pub fn keep(&mut self) -> Result<&Path> {
        if let Some(root) = self.root.take() {
            self.kept_root = root.keep();
        }
        crate::sandbox::take_back(&[&self.kept_root])
            .io_context(|| format!("giving back {}", self.kept_root.display()))?;
        Ok(&self.kept_root)
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
