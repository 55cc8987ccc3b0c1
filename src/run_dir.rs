//! The paths of a results directory: every file and folder a run keeps there is named
//! by one method of [`RunDir`], so that its layout (docs/formats.md) is written down
//! once. A `RunDir` is made only by the store, when it claims, locks or opens a
//! directory (`tests/layers.rs` holds that); the engine, the agents and the studies
//! take one rather than a bare path.

use std::path::{Path, PathBuf};

/// `manifest.json`.
pub const MANIFEST: &str = "manifest.json";
/// Append-only session records.
pub const SESSIONS_JSONL: &str = "sessions.jsonl";
/// Append-only trial records.
pub const TRIALS_JSONL: &str = "trials.jsonl";
/// The sim agent's ground truth, one line per session (never read by a metric).
pub const SIM_TRUTH_JSONL: &str = "sim_truth.jsonl";
/// Sessions of attempts that failed for a cause outside the agent, each with its
/// attempt; never counted.
pub const FAILURES_JSONL: &str = "failures.jsonl";
/// Session table.
pub const SESSIONS_CSV: &str = "sessions.csv";
/// Trial table.
pub const TRIALS_CSV: &str = "trials.csv";
/// The summary, one row per (arm, metric).
pub const SUMMARY_CSV: &str = "summary.csv";
/// The summary as a JSON array.
pub const SUMMARY_JSON: &str = "summary.json";
/// The summary's tables in Markdown.
pub const SUMMARY_MD: &str = "summary.md";
/// The plots, one SVG per metric.
pub const PLOTS_DIR: &str = "plots";
/// The self-contained page of a run.
pub const REPORT_HTML: &str = "report.html";
/// With `--keep-repos`: one git bundle per trial.
pub const REPOS_DIR: &str = "repos";
/// What a command agent's sessions left: one folder per trial.
pub const AGENTS_DIR: &str = "agents";
/// Which trace each trial of a replay replayed.
pub const TRACES_CSV: &str = "traces.csv";
/// A sequential run's looks, for people.
pub const SEQUENTIAL_MD: &str = "sequential.md";
/// A sequential run's looks, one row each.
pub const SEQUENTIAL_JSON: &str = "sequential.json";
/// Where a sequential run stands: the looks done and the arms still running.
pub const SEQUENTIAL_STATE_JSON: &str = "sequential-state.json";
/// The lock a writing process holds.
pub const LOCK_FILE: &str = ".loopbench.lock";

/// A results directory: where each of its files and folders is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    /// The results directory at `root`. Only the store calls this, for a directory it
    /// claimed, locked or was asked to open.
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }

    /// The directory itself.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// `manifest.json`.
    pub fn manifest(&self) -> PathBuf {
        self.root.join(MANIFEST)
    }

    /// `sessions.jsonl`.
    pub fn sessions_jsonl(&self) -> PathBuf {
        self.root.join(SESSIONS_JSONL)
    }

    /// `trials.jsonl`.
    pub fn trials_jsonl(&self) -> PathBuf {
        self.root.join(TRIALS_JSONL)
    }

    /// `sim_truth.jsonl`.
    pub fn sim_truth_jsonl(&self) -> PathBuf {
        self.root.join(SIM_TRUTH_JSONL)
    }

    /// `failures.jsonl`.
    pub fn failures_jsonl(&self) -> PathBuf {
        self.root.join(FAILURES_JSONL)
    }

    /// `sessions.csv`.
    pub fn sessions_csv(&self) -> PathBuf {
        self.root.join(SESSIONS_CSV)
    }

    /// `trials.csv`.
    pub fn trials_csv(&self) -> PathBuf {
        self.root.join(TRIALS_CSV)
    }

    /// `summary.csv`.
    pub fn summary_csv(&self) -> PathBuf {
        self.root.join(SUMMARY_CSV)
    }

    /// `summary.json`.
    pub fn summary_json(&self) -> PathBuf {
        self.root.join(SUMMARY_JSON)
    }

    /// `summary.md`.
    pub fn summary_md(&self) -> PathBuf {
        self.root.join(SUMMARY_MD)
    }

    /// `plots/`.
    pub fn plots(&self) -> PathBuf {
        self.root.join(PLOTS_DIR)
    }

    /// `report.html`.
    pub fn report_html(&self) -> PathBuf {
        self.root.join(REPORT_HTML)
    }

    /// `repos/`, the trials' bundles.
    pub fn bundles(&self) -> PathBuf {
        self.root.join(REPOS_DIR)
    }

    /// `repos/<trial_id>.bundle`.
    pub fn bundle(&self, trial_id: &str) -> PathBuf {
        self.bundles().join(format!("{trial_id}.bundle"))
    }

    /// `agents/<trial_id>/`: what a command agent's sessions of that trial left.
    pub fn agent_captures(&self, trial_id: &str) -> PathBuf {
        self.root.join(AGENTS_DIR).join(trial_id)
    }

    /// `traces.csv` of a replay.
    pub fn traces_csv(&self) -> PathBuf {
        self.root.join(TRACES_CSV)
    }

    /// `sequential.md`.
    pub fn sequential_md(&self) -> PathBuf {
        self.root.join(SEQUENTIAL_MD)
    }

    /// `sequential.json`.
    pub fn sequential_json(&self) -> PathBuf {
        self.root.join(SEQUENTIAL_JSON)
    }

    /// `sequential-state.json`.
    pub fn sequential_state_json(&self) -> PathBuf {
        self.root.join(SEQUENTIAL_STATE_JSON)
    }

    /// `.loopbench.lock`.
    pub fn lock(&self) -> PathBuf {
        self.root.join(LOCK_FILE)
    }
}
