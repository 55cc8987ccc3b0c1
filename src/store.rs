//! The results directory: the manifest, append-only JSONL records flushed
//! and fsync'd one at a time, and the CSV tables rebuilt from them in canonical order;
//! the lock that keeps a second writer out, and the checks on every output path.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::agent::trajectory::SessionTrajectory;
use crate::error::{Error, IoContext, Result, ResultsDirError};
use crate::events::{Event, EventKind, EventSink};
use crate::fsutil::{check_output_file, write_atomic};
use crate::record::{FailedSession, SESSION_COLUMNS, SessionRecord, TRIAL_COLUMNS, TrialRecord};

pub mod continuation;
mod failures;
mod finished;
mod jsonl;
mod line_index;
mod lock;
mod merge;
mod output;
mod tables;

use crate::run_dir::RunDir;
use crate::sandbox::SandboxKind;
pub use failures::{prior_attempts, unfinished_trials};
pub use finished::FinishedTrials;
pub use jsonl::{JsonlAt, JsonlLine, JsonlLines, JsonlRecords, jsonl_records};
pub use line_index::{SessionLineIndex, SessionLines};
pub use lock::RunLock;
pub use merge::merge_shards;
pub use output::{check_output_dir, claim_new_run_dir};

/// What a run was: enough to reproduce it and to refuse mixing it with another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Suite name (`replay` for a replayed trace).
    pub suite: String,
    /// Where the suite was loaded from (absolute), for `resume`.
    #[serde(default)]
    pub suite_path: Option<String>,
    /// blake3 of everything that defines the run's input.
    pub suite_hash: String,
    /// Arm names, in canonical order.
    pub arms: Vec<String>,
    /// The arm the others are compared with.
    #[serde(default)]
    pub baseline: Option<String>,
    /// Task names, in canonical order.
    pub tasks: Vec<String>,
    /// Suite seed, when the run has one.
    pub seed: Option<u64>,
    /// Trials per (arm, task).
    pub replicates: u32,
    /// Agent driver of the run's arms (`sim`, `command`, `replay`).
    pub driver: String,
    /// The numbers come from a simulated agent; every report must say so.
    pub simulated: bool,
    /// `I/N` when the run is one shard of a plan.
    pub shard: Option<crate::runner::Shard>,
    /// Version of loopbench that wrote it.
    pub loopbench_version: String,
    /// Commit loopbench was built from.
    pub git_commit: String,
    /// Host name.
    pub host: String,
    /// RFC 3339 start time.
    pub started: String,
    /// RFC 3339 end time, once finished.
    pub finished: Option<String>,
    /// Verify commands ran without network access.
    pub verify_network_isolated: bool,
    /// The sandbox every arm's verify commands ran in (and a replay's `run` actions):
    /// `none` when an arm's ran on the host. Manifests of earlier versions lack it and
    /// say `verify_sandboxed` instead, which [`Manifest::read`] turns into this.
    #[serde(default)]
    pub verify_sandbox: SandboxKind,
    /// `verify_sandbox` is not `none`: written from it for readers of earlier versions,
    /// and read only from the manifests they wrote.
    #[serde(default)]
    pub verify_sandboxed: bool,
    /// `replay --unsandboxed`: the traces' shell commands ran on the host.
    #[serde(default)]
    pub unsandboxed: bool,
    /// What a replay needs to be resumed: its task and each arm's list format (the
    /// traces themselves are named in `traces.csv`). `None` for suite runs.
    #[serde(default)]
    pub replay: Option<ReplayInputs>,
    /// One look of a sequential run split into shards (`run --look K`); absent in
    /// every other run, a merged one included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sequential_step: Option<SequentialStep>,
    /// `--keep-repos`: every trial leaves a git bundle under `repos/` (kept by
    /// `resume`).
    #[serde(default)]
    pub keep_repos: bool,
    /// How the sandbox's `max_pids` and `max_memory` were enforced on this machine (a
    /// cgroup version, or that they were not and which bounds still held); absent when
    /// nothing ran sandboxed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_limits: Option<String>,
    /// The host user the sandboxed processes ran as (`UID:GID`), when the harness ran
    /// as root; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_user: Option<String>,
    /// What each arm whose agent has network could reach through the sandbox's proxy
    /// (`HOST:PORT`, sorted); an arm absent reached no network.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub network: std::collections::BTreeMap<String, Vec<String>>,
    /// Per arm whose checks ran in containers: the sandbox, the engine and, per task,
    /// the image each ran (its reference and the engine's id, the digest); an arm
    /// absent ran no container.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub arm_containers: std::collections::BTreeMap<String, ArmContainers>,
    /// Per arm of a suite's run: its settings as the suite gave them (its agent and
    /// driver, list format, strategy, initializer, ledger, budgets...), so that what the
    /// run compared can be read from its directory alone; absent in a replay (its
    /// `replay` says it) and in runs made before it was recorded.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub arm_settings:
        std::collections::BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
}

/// What ran the containers of one arm ([`Manifest::arm_containers`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArmContainers {
    /// The sandbox the arm's checks ran in (`container`).
    pub sandbox: SandboxKind,
    /// The engine (`podman` or `docker`).
    pub engine: String,
    /// Per task: the image.
    pub images: std::collections::BTreeMap<String, ImageRan>,
}

/// One task's image as a run ran it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRan {
    /// What the containers were started from: the task's reference, or the tag built.
    pub reference: String,
    /// The engine's id of the image (`sha256:...`).
    pub digest: String,
}

/// One look of a sharded sequential run: which look, and the merged run of the looks
/// before it whose decisions say which arms still run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SequentialStep {
    /// The look, 1-based.
    pub look: usize,
    /// The merged run of looks 1 to `look` − 1 (absolute); `None` for look 1.
    pub after: Option<String>,
}

/// The inputs of a replay run besides its traces.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReplayInputs {
    /// The task directory, absolute.
    pub task: String,
    /// The list format of each arm, in the order of `arms`.
    pub formats: Vec<crate::feature_list::ListFormat>,
    /// The list schema of every arm (`--schema`).
    #[serde(default)]
    pub schema: crate::feature_list::ListSchema,
    /// `--exit-check` of every arm (absent in runs made before it existed: off).
    #[serde(default = "exit_check_off")]
    pub exit_check: crate::suite::ExitCheck,
    /// `--ledger` of every arm (absent in runs made before it existed, and for the
    /// default: memo).
    #[serde(default = "ledger_memo", skip_serializing_if = "is_memo")]
    pub ledger: crate::suite::Ledger,
    /// `--session-tokens` of every arm (0: no limit).
    #[serde(default)]
    pub session_tokens: u64,
    /// `--start` of every arm (absent in runs made before it existed: the list).
    #[serde(default, skip_serializing_if = "is_list_start")]
    pub start: crate::runner::ReplayStart,
    /// Keep every trial's work directory.
    #[serde(default)]
    pub keep_work: bool,
}

fn is_list_start(start: &crate::runner::ReplayStart) -> bool {
    *start == crate::runner::ReplayStart::List
}

fn exit_check_off() -> crate::suite::ExitCheck {
    crate::suite::ExitCheck::Off
}

fn ledger_memo() -> crate::suite::Ledger {
    crate::suite::Ledger::Memo
}

fn is_memo(ledger: &crate::suite::Ledger) -> bool {
    *ledger == crate::suite::Ledger::Memo
}

impl Manifest {
    /// A manifest stamped with what every run records about where and when it ran
    /// (version, commit, host, start time, network isolation); the caller fills in what
    /// the run is: `Manifest { suite: .., ..Manifest::stamped() }`.
    pub fn stamped() -> Manifest {
        Manifest {
            suite: String::new(),
            suite_path: None,
            suite_hash: String::new(),
            arms: Vec::new(),
            baseline: None,
            tasks: Vec::new(),
            seed: None,
            replicates: 1,
            driver: String::new(),
            simulated: false,
            shard: None,
            loopbench_version: env!("CARGO_PKG_VERSION").into(),
            git_commit: env!("LOOPBENCH_GIT_COMMIT").into(),
            host: host_name(),
            started: now_rfc3339(),
            finished: None,
            verify_network_isolated: crate::process::network_isolation_available(),
            verify_sandbox: SandboxKind::None,
            verify_sandboxed: false,
            unsandboxed: false,
            replay: None,
            sequential_step: None,
            keep_repos: false,
            sandbox_limits: None,
            sandbox_user: None,
            network: std::collections::BTreeMap::new(),
            arm_containers: std::collections::BTreeMap::new(),
            arm_settings: std::collections::BTreeMap::new(),
        }
    }

    /// Reads `dir/manifest.json`.
    pub fn read(dir: &RunDir) -> Result<Manifest> {
        let path = dir.manifest();
        let text = std::fs::read_to_string(&path)
            .io_context(|| format!("cannot read '{}'", path.display()))?;
        Manifest::parse(&text).map_err(|e| {
            ResultsDirError::BadManifest {
                path: path.clone(),
                reason: e.to_string(),
            }
            .into()
        })
    }

    /// A manifest from its JSON text, of this version or an earlier one (whose
    /// `verify_sandboxed` said whether the checks ran in the one sandbox there was).
    fn parse(text: &str) -> serde_json::Result<Manifest> {
        let value: serde_json::Value = serde_json::from_str(text)?;
        let earlier = value.get("verify_sandbox").is_none();
        let mut manifest: Manifest = serde_json::from_value(value)?;
        if earlier {
            manifest.verify_sandbox = SandboxKind::from_sandboxed(manifest.verify_sandboxed);
        }
        Ok(manifest)
    }

    /// Writes `dir/manifest.json` atomically.
    pub fn write(&self, dir: &RunDir) -> Result<()> {
        let on_disk = Manifest {
            verify_sandboxed: self.verify_sandbox.confines(),
            ..self.clone()
        };
        let mut text = serde_json::to_string_pretty(&on_disk)
            .map_err(|e| Error::Tool(format!("cannot encode manifest: {e}")))?;
        text.push('\n');
        write_atomic(&dir.manifest(), text.as_bytes())
    }
}

/// The results directory at `dir`, to read (a command's `RUN_DIR`, a shard to merge):
/// nothing is checked or written until a file of it is read.
pub fn open_run_dir(dir: &Path) -> RunDir {
    RunDir::new(dir)
}

/// The current time in RFC 3339, seconds precision, UTC.
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// A new run directory `root/<UTC timestamp>`, with a numeric suffix when that exists.
pub fn new_run_dir(root: &Path) -> PathBuf {
    let stamp = now_rfc3339().replace(':', "-");
    let mut candidate = root.join(&stamp);
    let mut n = 2;
    while candidate.exists() {
        candidate = root.join(format!("{stamp}-{n}"));
        n += 1;
    }
    candidate
}

/// This machine's host name.
pub fn host_name() -> String {
    nix::unistd::gethostname()
        .ok()
        .and_then(|h| h.into_string().ok())
        .unwrap_or_else(|| "unknown".into())
}

/// Appends one JSON record per line, flushed and fsync'd before `append` returns.
pub struct JsonlAppender {
    path: PathBuf,
    file: File,
}

impl JsonlAppender {
    /// Opens (creating) `path` for appending; an existing `path` must be a regular file.
    pub fn open(path: &Path) -> Result<JsonlAppender> {
        check_output_file(path)?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .io_context(|| format!("cannot open '{}'", path.display()))?;
        Ok(JsonlAppender {
            path: path.to_path_buf(),
            file,
        })
    }

    /// Appends lines already encoded (each ending in a newline), in a single write, and
    /// syncs them to disk.
    pub fn append_lines(&mut self, lines: &[u8]) -> Result<()> {
        self.file
            .write_all(lines)
            .and_then(|()| self.file.sync_data())
            .io_context(|| format!("cannot append to '{}'", self.path.display()))
    }

    /// Appends `record` as one line, in a single write, and syncs it to disk.
    pub fn append<T: Serialize>(&mut self, record: &T) -> Result<()> {
        let mut line = serde_json::to_vec(record)
            .map_err(|e| Error::Tool(format!("cannot encode a record: {e}")))?;
        line.push(b'\n');
        self.file
            .write_all(&line)
            .and_then(|()| self.file.sync_data())
            .io_context(|| format!("cannot append to '{}'", self.path.display()))
    }
}

/// Reads a JSONL file of records into memory (what holds a run's records one at a time
/// reads them with [`jsonl_records`]). A last line without its newline is torn (the
/// writer died mid-write) and is dropped, never parsed; any other bad line is an error.
pub fn read_jsonl<T: DeserializeOwned>(path: &Path) -> Result<Vec<T>> {
    jsonl_records(path)?.collect()
}

/// Writes the results of a run as events arrive, holding the directory's lock.
///
/// A trial's session records are held until its attempt ends: with its trial record
/// they go to `sessions.jsonl`, after a failure outside the agent to `failures.jsonl`,
/// so that no session of a failed attempt is ever counted. A trial cut off before
/// either leaves nothing, as `resume` would drop it anyway. The trajectories of its
/// counted sessions are held the same way, masked, cut and encoded (one trial's, never
/// the run's), and written to `trajectories.jsonl` with its trial record.
pub struct RunWriter {
    dir: RunDir,
    _lock: RunLock,
    manifest: Manifest,
    sessions: JsonlAppender,
    trials: JsonlAppender,
    truth: Option<JsonlAppender>,
    failures: Option<JsonlAppender>,
    pending: std::collections::HashMap<String, Vec<SessionRecord>>,
    trajectories: Option<JsonlAppender>,
    /// The encoded trajectory lines of each unfinished trial.
    pending_trajectories: std::collections::HashMap<String, Vec<u8>>,
}

impl RunWriter {
    /// Creates and locks `dir`, which must be new or empty (see [`claim_new_run_dir`]),
    /// and writes the manifest.
    pub fn create(dir: &Path, manifest: Manifest) -> Result<RunWriter> {
        let lock = claim_new_run_dir(dir)?;
        manifest.write(lock.dir())?;
        RunWriter::reopen(lock, manifest)
    }

    /// Reopens a run directory to append to it (`resume`): the manifest is kept. `lock`
    /// is the directory's, taken before anything in it was read or rewritten.
    pub fn reopen(lock: RunLock, manifest: Manifest) -> Result<RunWriter> {
        let dir = lock.dir().clone();
        Ok(RunWriter {
            sessions: JsonlAppender::open(&dir.sessions_jsonl())?,
            trials: JsonlAppender::open(&dir.trials_jsonl())?,
            truth: None,
            failures: None,
            pending: Default::default(),
            trajectories: None,
            pending_trajectories: Default::default(),
            dir,
            _lock: lock,
            manifest,
        })
    }

    /// The results directory.
    pub fn dir(&self) -> &RunDir {
        &self.dir
    }

    /// The run's manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }
}

impl EventSink for RunWriter {
    fn handle(&mut self, event: &Event) -> Result<()> {
        match &event.kind {
            EventKind::SessionFinished(record) => {
                self.pending
                    .entry(record.key.trial_id.clone())
                    .or_default()
                    .push(record.as_ref().clone());
                Ok(())
            }
            EventKind::Trajectory(trajectory) => {
                let line = sealed_line(trajectory)?;
                self.pending_trajectories
                    .entry(trajectory.trial_id.clone())
                    .or_default()
                    .extend_from_slice(&line);
                Ok(())
            }
            EventKind::TrialFinished(record) => {
                if let Some(lines) = self.pending_trajectories.remove(&record.key.trial_id) {
                    if self.trajectories.is_none() {
                        self.trajectories =
                            Some(JsonlAppender::open(&self.dir.trajectories_jsonl())?);
                    }
                    if let Some(out) = self.trajectories.as_mut() {
                        out.append_lines(&lines)?;
                    }
                }
                // Sessions first: a crash between the two leaves sessions without their
                // trial, which `resume` drops, never a trial without its sessions.
                for session in self
                    .pending
                    .remove(&record.key.trial_id)
                    .unwrap_or_default()
                {
                    self.sessions.append(&session)?;
                }
                self.trials.append(record.as_ref())
            }
            EventKind::AttemptFailed {
                key,
                attempt,
                captures,
                ..
            } => {
                if self.failures.is_none() {
                    self.failures = Some(JsonlAppender::open(&self.dir.failures_jsonl())?);
                }
                self.pending_trajectories.remove(&key.trial_id);
                let sessions = self.pending.remove(&key.trial_id).unwrap_or_default();
                match self.failures.as_mut() {
                    Some(out) => sessions.into_iter().try_for_each(|record| {
                        out.append(&FailedSession {
                            attempt: *attempt,
                            captures: captures.clone(),
                            record,
                        })
                    }),
                    None => Ok(()),
                }
            }
            EventKind::SessionLeftOut {
                attempt,
                captures,
                record,
            } => {
                if self.failures.is_none() {
                    self.failures = Some(JsonlAppender::open(&self.dir.failures_jsonl())?);
                }
                match self.failures.as_mut() {
                    Some(out) => out.append(&FailedSession {
                        attempt: *attempt,
                        captures: captures.clone(),
                        record: record.as_ref().clone(),
                    }),
                    None => Ok(()),
                }
            }
            EventKind::RunFinished => {
                write_tables(&self.dir, &self.manifest.arms)?;
                self.manifest.finished = Some(now_rfc3339());
                self.manifest.write(&self.dir)
            }
            EventKind::SimTruth {
                key,
                session,
                truth,
            } => {
                if self.truth.is_none() {
                    self.truth = Some(JsonlAppender::open(&self.dir.sim_truth_jsonl())?);
                }
                let line = serde_json::json!({"trial_id": key.trial_id, "session": session, "truth": truth});
                match self.truth.as_mut() {
                    Some(out) => out.append(&line),
                    None => Ok(()),
                }
            }
            EventKind::RunStarted { .. }
            | EventKind::TrialStarted { .. }
            | EventKind::Notice(_) => Ok(()),
        }
    }
}

/// One line of `trajectories.jsonl`: every entry masked and cut, encoded, with its
/// newline.
fn sealed_line(trajectory: &SessionTrajectory) -> Result<Vec<u8>> {
    let sealed = SessionTrajectory {
        trial_id: trajectory.trial_id.clone(),
        session: trajectory.session,
        trajectory: trajectory
            .trajectory
            .iter()
            .cloned()
            .map(crate::agent::trajectory::Entry::sealed)
            .collect(),
    };
    let mut line = serde_json::to_vec(&sealed)
        .map_err(|e| Error::Tool(format!("cannot encode a trajectory: {e}")))?;
    line.push(b'\n');
    Ok(line)
}

/// Drops every record of a trial that is not in `finished` (its trial record missing:
/// it was cut off) from the JSONL files of `dir`, so that `resume` reruns it from
/// scratch and nothing is counted twice; rewriting also drops a torn last line.
pub fn prune_unfinished(dir: &RunDir, finished: &std::collections::BTreeSet<String>) -> Result<()> {
    rewrite_jsonl::<TrialRecord>(&dir.trials_jsonl(), |t| finished.contains(&t.key.trial_id))?;
    rewrite_jsonl::<SessionRecord>(&dir.sessions_jsonl(), |s| {
        finished.contains(&s.key.trial_id)
    })?;
    let failures = dir.failures_jsonl();
    if failures.exists() {
        // Every failed attempt is kept; the rewrite only drops a torn last line, so
        // that the next record is not appended to it.
        rewrite_jsonl::<FailedSession>(&failures, |_| true)?;
    }
    let trajectories = dir.trajectories_jsonl();
    if trajectories.exists() {
        rewrite_jsonl::<SessionTrajectory>(&trajectories, |t| finished.contains(&t.trial_id))?;
    }
    let truth = dir.sim_truth_jsonl();
    if truth.exists() {
        rewrite_jsonl::<serde_json::Value>(&truth, |t| {
            t.get("trial_id")
                .and_then(|v| v.as_str())
                .is_some_and(|id| finished.contains(id))
        })?;
    }
    Ok(())
}

/// Rewrites a JSONL file keeping the records that pass `keep`, atomically, each kept
/// line as it was. Every record is read and must parse; a file that drops nothing and
/// ends in a complete line is left as it is, not written again (the trajectories of a
/// large run are hundreds of megabytes, and `resume` of a finished run drops nothing).
/// A missing file is written empty.
fn rewrite_jsonl<T: DeserializeOwned>(path: &Path, keep: impl Fn(&T) -> bool) -> Result<()> {
    // Streamed: the file is never held, one record at a time; only the numbers of the
    // lines that go are kept between the two passes.
    let mut lines = JsonlLines::open(path)?;
    let mut dropped = Vec::new();
    while let Some(line) = lines.next() {
        let line = line?;
        if !keep(&lines.parse::<T>(&line)?) {
            dropped.push(line.number);
        }
    }
    let whole = match std::fs::metadata(path) {
        Ok(meta) => meta.len() == lines.complete_bytes(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
        Err(e) => return Err(Error::io(format!("cannot read '{}'", path.display()), e)),
    };
    if dropped.is_empty() && whole {
        return Ok(());
    }
    let mut dropped = dropped.into_iter().peekable();
    crate::fsutil::write_atomic_with(path, |out| {
        let cannot_write = |e| Error::io(format!("cannot write '{}'", path.display()), e);
        for line in JsonlLines::open(path)? {
            let line = line?;
            if dropped.next_if_eq(&line.number).is_some() {
                continue;
            }
            out.write_all(line.text.as_bytes()).map_err(cannot_write)?;
            out.write_all(b"\n").map_err(cannot_write)?;
        }
        Ok(())
    })
}

/// Rebuilds `sessions.csv` and `trials.csv` from the JSONL records, rows sorted by
/// (arm in `arm_order`, task, replicate, session) so that the tables do not depend on
/// the order in which trials finished.
pub fn write_tables(dir: &RunDir, arm_order: &[String]) -> Result<()> {
    // Each table is streamed from its records, which are never all in memory at once.
    tables::write_table::<SessionRecord>(
        &dir.sessions_jsonl(),
        &dir.sessions_csv(),
        &SESSION_COLUMNS,
        arm_order,
    )?;
    tables::write_table::<TrialRecord>(
        &dir.trials_jsonl(),
        &dir.trials_csv(),
        &TRIAL_COLUMNS,
        arm_order,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct R {
        n: u32,
    }

    #[test]
    fn the_sandbox_of_a_manifest_is_read_from_this_version_and_from_earlier_ones() {
        let dir = tempfile::tempdir().unwrap();
        let run = RunDir::new(dir.path());
        let manifest = Manifest {
            verify_sandbox: SandboxKind::Bwrap,
            ..Manifest::stamped()
        };
        manifest.write(&run).unwrap();
        let written: serde_json::Value =
            serde_json::from_slice(&std::fs::read(run.manifest()).unwrap()).unwrap();
        assert_eq!(written["verify_sandbox"], "bwrap");
        assert_eq!(written["verify_sandboxed"], true);
        assert_eq!(
            Manifest::read(&run).unwrap().verify_sandbox,
            SandboxKind::Bwrap
        );
        // An earlier version wrote the boolean alone.
        for (sandboxed, kind) in [(true, SandboxKind::Bwrap), (false, SandboxKind::None)] {
            let mut earlier = written.clone();
            let fields = earlier.as_object_mut().unwrap();
            fields.remove("verify_sandbox");
            fields.insert("verify_sandboxed".into(), sandboxed.into());
            let read = Manifest::parse(&earlier.to_string()).unwrap();
            assert_eq!(read.verify_sandbox, kind, "verify_sandboxed: {sandboxed}");
        }
    }

    #[test]
    fn a_torn_last_line_is_dropped_not_parsed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        std::fs::write(&path, "{\"n\":1}\n{\"n\":2}\n{\"n\":").unwrap();
        let rows: Vec<R> = read_jsonl(&path).unwrap();
        assert_eq!(rows, vec![R { n: 1 }, R { n: 2 }]);
    }

    #[test]
    fn a_corrupt_middle_line_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        std::fs::write(&path, "{\"n\":1}\ngarbage\n{\"n\":2}\n").unwrap();
        let err = read_jsonl::<R>(&path).unwrap_err();
        assert!(err.to_string().contains("x.jsonl:2"), "{err}");
    }

    #[test]
    fn an_atomic_write_gets_the_mode_of_any_new_file_not_0600() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let plain = dir.path().join("plain");
        File::create(&plain).unwrap();
        let atomic = dir.path().join("atomic");
        write_atomic(&atomic, b"x").unwrap();
        assert_eq!(mode(&atomic), mode(&plain));
        assert_eq!(std::fs::read(&atomic).unwrap(), b"x");
    }

    #[test]
    fn write_atomic_refuses_to_replace_a_fifo_and_leaves_it_in_place() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.md");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let err = write_atomic(&path, b"x").unwrap_err();
        assert_eq!(err.exit_code(), crate::exit_code::BAD_INPUT);
        assert!(err.to_string().contains("not a regular file"), "{err}");
        let kind = std::fs::symlink_metadata(&path).unwrap().file_type();
        assert!(kind.is_fifo());
    }

    #[test]
    fn appended_records_read_back_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        let mut out = JsonlAppender::open(&path).unwrap();
        out.append(&R { n: 7 }).unwrap();
        out.append(&R { n: 8 }).unwrap();
        assert_eq!(
            read_jsonl::<R>(&path).unwrap(),
            vec![R { n: 7 }, R { n: 8 }]
        );
    }

    #[test]
    fn a_rewrite_keeps_the_lines_it_keeps_as_they_were_and_drops_a_torn_one() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        let inode = || std::fs::metadata(&path).unwrap().ino();
        // Spacing and a field this version does not know survive: a kept line is
        // copied, never encoded again.
        let lines = "{\"n\": 1, \"later\": true}\n{\"n\":2}\n\n{\"n\":3}\n";
        std::fs::write(&path, lines).unwrap();
        let before = inode();
        rewrite_jsonl::<R>(&path, |_| true).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), lines);
        assert_eq!(
            inode(),
            before,
            "a file that drops nothing is not written again"
        );

        rewrite_jsonl::<R>(&path, |r| r.n != 2).unwrap();
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            "{\"n\": 1, \"later\": true}\n{\"n\":3}\n"
        );

        std::fs::write(&path, "{\"n\":1}\n{\"n\":").unwrap();
        rewrite_jsonl::<R>(&path, |_| true).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{\"n\":1}\n");

        let missing = dir.path().join("missing.jsonl");
        rewrite_jsonl::<R>(&missing, |_| true).unwrap();
        assert_eq!(std::fs::read_to_string(&missing).unwrap(), "");
    }

    #[test]
    fn a_rewrite_refuses_a_bad_line_and_leaves_the_file_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        let lines = "{\"n\":1}\ngarbage\n{\"n\":2}\n";
        std::fs::write(&path, lines).unwrap();
        let err = rewrite_jsonl::<R>(&path, |r| r.n != 1).unwrap_err();
        assert!(err.to_string().contains("x.jsonl:2"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), lines);
    }
}
