//! A run's records as an export reads them: arm by arm, each arm's trials in the order
//! of the tables (task, then replicate), each trial with its session records and what
//! the agent did in them. Nothing is held but one trial and, per line of
//! `sessions.jsonl`, `trials.jsonl` and `trajectories.jsonl`, where it starts: a run of
//! any size is read a trial at a time.

use std::collections::HashMap;

use serde::Deserialize;

use crate::agent::trajectory::{SessionTrajectory, Trajectory};
use crate::error::{Error, Result, ResultsDirError};
use crate::record::{SessionRecord, TrialRecord};
use crate::run_dir::RunDir;
use crate::store::{JsonlAt, JsonlLines, Manifest, SessionLineIndex};

/// One session as an export sees it: its record, and its trajectory when the run
/// recorded one.
#[derive(Debug, Clone)]
pub struct SessionExport {
    /// The session's record (`sessions.jsonl`).
    pub record: SessionRecord,
    /// What the agent did in it (`trajectories.jsonl`); `None` when the line is missing.
    pub trajectory: Option<Trajectory>,
}

/// One trial as an export sees it.
#[derive(Debug, Clone)]
pub struct TrialExport {
    /// The trial's record (`trials.jsonl`).
    pub record: TrialRecord,
    /// Its sessions, in order.
    pub sessions: Vec<SessionExport>,
}

/// The fields of a line of `trials.jsonl` the index reads.
#[derive(Deserialize)]
struct TrialKeyLine {
    trial_id: String,
    arm: String,
    task: String,
    replicate: u32,
}

/// Where one trial's record starts in `trials.jsonl`.
struct TrialLine {
    task: String,
    replicate: u32,
    offset: u64,
}

/// The records of one finished run, opened for export.
pub struct RunRecords {
    dir: RunDir,
    manifest: Manifest,
    /// Each arm's trials, in the order of the tables.
    arms: Vec<(String, Vec<TrialLine>)>,
    trials: JsonlAt,
    sessions: SessionLineIndex,
    session_lines: Option<JsonlAt>,
    trajectories: SessionLineIndex,
    trajectory_lines: JsonlAt,
}

impl RunRecords {
    /// Opens the run in `dir`: its manifest, `trials.jsonl` and `trajectories.jsonl`
    /// must be there (exit 2 naming the file that is not, and what was expected).
    pub fn open(dir: &RunDir) -> Result<RunRecords> {
        if !dir.path().is_dir() {
            return Err(ResultsDirError::NotARunDirectory {
                dir: dir.path().to_path_buf(),
            }
            .into());
        }
        for (path, what) in [
            (dir.manifest(), "the run's manifest"),
            (dir.trials_jsonl(), "one record per finished trial"),
            (
                dir.trajectories_jsonl(),
                "what the agent did in each session; a run made before loopbench \
                 recorded it cannot be exported",
            ),
        ] {
            if !path.is_file() {
                return Err(ResultsDirError::FileMissing {
                    path,
                    what: what.to_string(),
                }
                .into());
            }
        }
        let manifest = Manifest::read(dir)?;
        let arms = index_trials(dir, &manifest)?;
        let sessions = SessionLineIndex::build(&dir.sessions_jsonl())?;
        let session_lines = if sessions.is_empty() {
            None
        } else {
            Some(JsonlAt::open(&dir.sessions_jsonl())?)
        };
        Ok(RunRecords {
            dir: dir.clone(),
            manifest,
            arms,
            trials: JsonlAt::open(&dir.trials_jsonl())?,
            sessions,
            session_lines,
            trajectories: SessionLineIndex::build(&dir.trajectories_jsonl())?,
            trajectory_lines: JsonlAt::open(&dir.trajectories_jsonl())?,
        })
    }

    /// The run's manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The run's directory.
    pub fn dir(&self) -> &RunDir {
        &self.dir
    }

    /// The arms with finished trials, in the manifest's order, and how many trials each.
    pub fn arms(&self) -> Vec<(String, usize)> {
        self.arms
            .iter()
            .map(|(arm, trials)| (arm.clone(), trials.len()))
            .collect()
    }

    /// Trial `n` of the `arm`-th arm (in the order of [`RunRecords::arms`]), read from
    /// the files.
    pub fn trial(&mut self, arm: usize, n: usize) -> Result<TrialExport> {
        let Some(line) = self.arms.get(arm).and_then(|(_, t)| t.get(n)) else {
            return Err(Error::Tool(format!("no trial {n} of arm {arm}")));
        };
        let record: TrialRecord = self.trials.record(line.offset)?;
        let id = record.key.trial_id.clone();
        let mut sessions = Vec::new();
        for session in self.sessions.sessions(&id) {
            let (Some(offset), Some(at)) =
                (self.sessions.get(&id, session), self.session_lines.as_mut())
            else {
                continue;
            };
            let record: SessionRecord = at.record(offset)?;
            let trajectory = match self.trajectories.get(&id, session) {
                Some(offset) => {
                    let line: SessionTrajectory = self.trajectory_lines.record(offset)?;
                    Some(line.trajectory)
                }
                None => None,
            };
            sessions.push(SessionExport { record, trajectory });
        }
        Ok(TrialExport { record, sessions })
    }
}

/// Each arm's trials in `trials.jsonl` (the last record of a trial wins), the arms in
/// the manifest's order (any other after them, by name), each arm's trials by task in
/// the manifest's order, then replicate.
fn index_trials(dir: &RunDir, manifest: &Manifest) -> Result<Vec<(String, Vec<TrialLine>)>> {
    let mut by_id: HashMap<String, (String, TrialLine)> = HashMap::new();
    let mut lines = JsonlLines::open(&dir.trials_jsonl())?;
    while let Some(line) = lines.next() {
        let line = line?;
        let key: TrialKeyLine = lines.parse(&line)?;
        by_id.insert(
            key.trial_id,
            (
                key.arm,
                TrialLine {
                    task: key.task,
                    replicate: key.replicate,
                    offset: line.offset,
                },
            ),
        );
    }
    let mut arms: HashMap<String, Vec<TrialLine>> = HashMap::new();
    for (arm, line) in by_id.into_values() {
        arms.entry(arm).or_default().push(line);
    }
    let rank = |list: &[String], name: &str| list.iter().position(|a| a == name);
    let mut arms: Vec<(String, Vec<TrialLine>)> = arms.into_iter().collect();
    arms.sort_by(|a, b| {
        (rank(&manifest.arms, &a.0).unwrap_or(usize::MAX), &a.0)
            .cmp(&(rank(&manifest.arms, &b.0).unwrap_or(usize::MAX), &b.0))
    });
    for (_, trials) in &mut arms {
        trials.sort_by(|a, b| {
            (
                rank(&manifest.tasks, &a.task).unwrap_or(usize::MAX),
                &a.task,
                a.replicate,
            )
                .cmp(&(
                    rank(&manifest.tasks, &b.task).unwrap_or(usize::MAX),
                    &b.task,
                    b.replicate,
                ))
        });
    }
    Ok(arms)
}
