//! Work directories: a fresh copy of a task's repo with the canonical feature list and
//! one git commit, plus the files the harness keeps beside it (never inside it), and
//! the bounds of the places an agent writes across the sessions of a trial.

use std::path::{Path, PathBuf};

use crate::effects::EffectsLog;
use crate::error::{IoContext, Result};
use crate::feature_list::{self, ListFormat, ListSchema};
use crate::fsutil::{Bound, BoundedDir, copy_tree, scratch_dir};
use crate::git::git;
use crate::sandbox::Limits;
use crate::suite::Task;

/// The free-text shift notes that sessions keep.
pub const PROGRESS_FILE: &str = "PROGRESS.md";

/// The directory beside `work/` that holds what an agent keeps of its own across the
/// sessions of a trial: its HOME, its state directory, the sessions' global git
/// configuration, the scripted model server's log.
pub const OWN_DIR: &str = "own";

/// The directory in [`OWN_DIR`] that holds the sessions' global git configuration.
pub const GIT_CONFIG_DIR: &str = "git";

/// `$LOOPBENCH_EFFECTS` beside `work/`: the channel of the session that runs.
pub const EFFECTS_CHANNEL: &str = "effects";

/// The harness's own copy of the effects log beside `work/`, which no sandbox shows.
pub const EFFECTS_COPY: &str = "effects.log";

/// How much a place that a trial's agent writes across sessions may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpaceBounds {
    /// The work directory, `.git` included.
    pub work: Bound,
    /// The agent's own directory beside it ([`OWN_DIR`]).
    pub own: Bound,
}

impl SpaceBounds {
    /// The bounds of a trial of `task` under `limits`: the work directory twice the
    /// task's `max_tree_bytes` (the tree as large as an observation accepts it, and as
    /// much again for its `.git`), the agent's own directory `max_home_bytes`; each at
    /// most four times the task's `max_tree_files` entries.
    pub fn of(task: &Task, limits: &Limits) -> SpaceBounds {
        let inodes = task.max_tree_files.saturating_mul(4);
        SpaceBounds {
            work: Bound {
                bytes: task.max_tree_bytes.saturating_mul(2),
                inodes,
            },
            own: Bound {
                bytes: limits.max_home_bytes,
                inodes,
            },
        }
    }
}

/// One line for `validate` and the run's start: how the bounds of the places a
/// command agent writes across sessions are held on this machine.
pub fn describe_space_bounds() -> String {
    let places = "a command agent's work directory (.git included), HOME and state directory";
    match crate::fsutil::kernel_bounds() {
        Ok(()) => format!("{places} are bounded by a tmpfs of their own while its sessions run"),
        Err(why) => format!(
            "{places} are NOT bounded while its sessions run ({why}), only measured after \
             each session"
        ),
    }
}

/// The bounded places of a trial.
struct Space {
    work: BoundedDir,
    own: BoundedDir,
}

/// A trial's private directory: `work/` (what the agent sees) and, beside it, the
/// side-effect log's channel, the harness's copy of it, and the prompt file.
pub struct Workspace {
    /// The bounded places, detached on drop before the root is removed.
    space: Option<Space>,
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
    /// What an external agent keeps of its own across sessions ([`OWN_DIR`]).
    pub own_dir: PathBuf,
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
        task.lay_step_files(&ws.work_dir)?;
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
    /// With `bounds`, the work directory and the agent's own directory are held to them
    /// ([`BoundedDir`]).
    pub fn create_bare(task: &Task, bounds: Option<SpaceBounds>) -> Result<Workspace> {
        let ws = Workspace::empty_bounded(&task.repo_dir(), bounds)?;
        // The first step's starting files; each later step's come before the session
        // that works on it.
        task.lay_step_files_of(&ws.work_dir, 0..task.steps_due(|_| false))?;
        ws.git_init_and_commit(&format!("loopbench: start task {}", task.name))?;
        Ok(ws)
    }

    /// A workspace holding a copy of `repo` and nothing else (no list, no git yet).
    pub fn empty(repo: &Path) -> Result<Workspace> {
        Workspace::empty_bounded(repo, None)
    }

    /// [`Workspace::empty`], its work directory and own directory held to `bounds`.
    fn empty_bounded(repo: &Path, bounds: Option<SpaceBounds>) -> Result<Workspace> {
        let root = scratch_dir("loopbench-trial-")?;
        let work_dir = root.path().join("work");
        let own_dir = root.path().join(OWN_DIR);
        let space = match bounds {
            Some(b) => Some(Space {
                work: BoundedDir::create(&work_dir, b.work)?,
                own: BoundedDir::create(&own_dir, b.own)?,
            }),
            None => {
                std::fs::create_dir(&own_dir)
                    .io_context(|| format!("cannot create '{}'", own_dir.display()))?;
                None
            }
        };
        // A task in Harbor's layout has no `repo/`: its work directory starts empty.
        if repo.is_dir() {
            copy_tree(repo, &work_dir, true)?;
        } else {
            std::fs::create_dir_all(&work_dir)
                .io_context(|| format!("cannot create '{}'", work_dir.display()))?;
        }
        let effects_channel = root.path().join(EFFECTS_CHANNEL);
        let effects = EffectsLog::new(Some(root.path().join(EFFECTS_COPY)));
        let prompt_file = root.path().join("prompt.md");
        std::fs::write(&prompt_file, "")
            .io_context(|| format!("cannot write '{}'", prompt_file.display()))?;
        let git_dir = own_dir.join(GIT_CONFIG_DIR);
        std::fs::create_dir_all(&git_dir)
            .io_context(|| format!("cannot create '{}'", git_dir.display()))?;
        let git_config = crate::git::session_config_path(&git_dir);
        std::fs::write(&git_config, "")
            .io_context(|| format!("cannot write '{}'", git_config.display()))?;
        Ok(Workspace {
            space,
            kept_root: root.path().to_path_buf(),
            root: Some(root),
            work_dir,
            effects_channel,
            effects,
            prompt_file,
            git_config,
            own_dir,
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
        let own_dir = kept_root.join(OWN_DIR);
        let git_config = crate::git::session_config_path(&own_dir.join(GIT_CONFIG_DIR));
        Workspace {
            space: None,
            root: None,
            kept_root,
            work_dir,
            effects_channel,
            effects: EffectsLog::new(None),
            prompt_file,
            git_config,
            own_dir,
        }
    }

    /// The work directory as bounded (`.git` included), when the trial has bounds.
    pub fn bounded_work(&self) -> Option<&BoundedDir> {
        self.space.as_ref().map(|s| &s.work)
    }

    /// The agent's own directory as bounded, when the trial has bounds.
    pub fn bounded_own(&self) -> Option<&BoundedDir> {
        self.space.as_ref().map(|s| &s.own)
    }

    /// The directory holding `work/` and the harness's files beside it.
    pub fn root(&self) -> &Path {
        self.root.as_ref().map_or(&self.kept_root, |r| r.path())
    }

    /// Keeps the directory after the workspace is dropped and the harness exits (moved
    /// out of the process's scratch directory), owned by the harness's user again (a
    /// root harness handed its work directory to the sandbox's user); returns where it
    /// is. A workspace with bounds keeps its directories, not what their tmpfs holds.
    pub fn keep(&mut self) -> Result<&Path> {
        if let Some(root) = self.root.take() {
            let old = root.keep();
            self.kept_root = crate::fsutil::keep_out_of_process_dir(&old)?;
            for path in [
                &mut self.work_dir,
                &mut self.effects_channel,
                &mut self.prompt_file,
                &mut self.git_config,
                &mut self.own_dir,
            ] {
                if let Ok(rel) = path.strip_prefix(&old) {
                    *path = self.kept_root.join(rel);
                }
            }
        }
        crate::sandbox::take_back(&[&self.kept_root])
            .io_context(|| format!("giving back {}", self.kept_root.display()))?;
        Ok(&self.kept_root)
    }

    /// `git init`, stage everything and commit with the harness identity (one git
    /// process: [`crate::git::init_and_commit_all`]).
    pub fn git_init_and_commit(&self, message: &str) -> Result<()> {
        crate::git::init_and_commit_all(&self.work_dir, message)
    }

    /// Commits `paths` (relative to the work directory) alone with the harness
    /// identity, whatever else the work directory holds (staged or not).
    pub fn git_commit_paths(&self, paths: &[PathBuf], message: &str) -> Result<()> {
        let paths: Vec<&str> = paths.iter().filter_map(|p| p.to_str()).collect();
        let mut add = vec!["add", "--force", "--"];
        add.extend(&paths);
        git(&self.work_dir, &add)?;
        let mut commit = vec![
            "commit",
            "-q",
            "--allow-empty",
            "--no-verify",
            "-m",
            message,
            "--",
        ];
        commit.extend(&paths);
        git(&self.work_dir, &commit)?;
        Ok(())
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
