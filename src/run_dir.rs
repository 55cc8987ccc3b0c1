//! The paths of a results directory: every file and folder a run keeps there is named
//! by one method of [`RunDir`], so that its layout (docs/formats.md) is written down
//! once. A `RunDir` is made only by the store, when it claims, locks or opens a
//! directory (`tests/layers.rs` holds that); the engine, the agents and the studies
//! take one rather than a bare path.
//!
//! The file names themselves are private but for the few a message or a listing names
//! bare (`pub(crate)`, each saying where), and the lock file's, which the tests check for;
//! nothing outside this file and the store joins one onto a path (`tests/layers.rs`
//! holds that).

use std::path::{Path, PathBuf};

/// `manifest.json`.
/// Named bare by the store's check for a results directory and by `weekly`'s message.
pub(crate) const MANIFEST: &str = "manifest.json";
/// Append-only session records.
/// Named bare by the store's check for a results directory.
pub(crate) const SESSIONS_JSONL: &str = "sessions.jsonl";
/// Append-only trial records.
/// Named bare by the store's check for a results directory and by `show`'s message.
pub(crate) const TRIALS_JSONL: &str = "trials.jsonl";
/// The sim agent's ground truth, one line per session (never read by a metric).
const SIM_TRUTH_JSONL: &str = "sim_truth.jsonl";
/// What the agent did in each counted session, one line per session (for people: never
/// read by a metric).
const TRAJECTORIES_JSONL: &str = "trajectories.jsonl";
/// Sessions of attempts that failed for a cause outside the agent, each with its
/// attempt; never counted.
const FAILURES_JSONL: &str = "failures.jsonl";
/// Session table.
const SESSIONS_CSV: &str = "sessions.csv";
/// Trial table.
/// Named bare in the paths `run` prints.
pub(crate) const TRIALS_CSV: &str = "trials.csv";
/// The summary, one row per (arm, metric).
const SUMMARY_CSV: &str = "summary.csv";
/// The summary as a JSON array.
/// Named bare in the paths `run` prints.
pub(crate) const SUMMARY_JSON: &str = "summary.json";
/// The summary's tables in Markdown.
const SUMMARY_MD: &str = "summary.md";
/// The plots, one SVG per metric.
/// Named bare in the paths `run` prints.
pub(crate) const PLOTS_DIR: &str = "plots";
/// The self-contained page of a run.
const REPORT_HTML: &str = "report.html";
/// A large run's session timelines, in files beside `report.html`.
const REPORT_TIMELINES_DIR: &str = "report-timelines";
/// With `--keep-repos`: one git bundle per trial.
const REPOS_DIR: &str = "repos";
/// What a command agent's sessions left: one folder per trial.
const AGENTS_DIR: &str = "agents";
/// Which trace each trial of a replay replayed.
const TRACES_CSV: &str = "traces.csv";
/// A sequential run's looks, for people.
const SEQUENTIAL_MD: &str = "sequential.md";
/// A sequential run's looks, one row each.
/// Named bare in a message of the sequential study.
pub(crate) const SEQUENTIAL_JSON: &str = "sequential.json";
/// Where a sequential run stands: the looks done and the arms still running.
/// Named bare in a message of the sequential study.
pub(crate) const SEQUENTIAL_STATE_JSON: &str = "sequential-state.json";
/// `loopbench export`'s default output: one folder per format.
const EXPORTS_DIR: &str = "exports";
/// The lock a writing process holds.
/// Public: the integration tests look for it by name.
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

    /// `trajectories.jsonl`.
    pub fn trajectories_jsonl(&self) -> PathBuf {
        self.root.join(TRAJECTORIES_JSONL)
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

    /// `report-timelines/`: a large run's session timelines beside `report.html`, which
    /// loads them by this folder's name.
    pub fn report_timelines(&self) -> PathBuf {
        self.root.join(REPORT_TIMELINES_DIR)
    }

    /// `.report-timelines.partial/`: the timelines being written, moved in whole, so that
    /// the page never sees half of them.
    pub fn report_timelines_staging(&self) -> PathBuf {
        self.root.join(format!(".{REPORT_TIMELINES_DIR}.partial"))
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

    /// `exports/<format>/`: where `loopbench export --to FORMAT` writes without `--out`.
    pub fn export(&self, format: &str) -> PathBuf {
        self.root.join(EXPORTS_DIR).join(format)
    }

    /// `.loopbench.lock`.
    pub fn lock(&self) -> PathBuf {
        self.root.join(LOCK_FILE)
    }
}
