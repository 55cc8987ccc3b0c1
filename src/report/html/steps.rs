//! A run's trajectories as the steps of its page: each entry of `trajectories.jsonl` as
//! `{k: kind, h: its line, b: what it unfolds into, m: [marks], id, x: exit, e: error}`,
//! with the marks of [`crate::report::trajectory_marks`]. Read a line at a time: the
//! session record the marks need is read back from `sessions.jsonl` by where it starts,
//! found through an index of (trial, session) to offsets, so that neither the run's
//! steps nor its records are ever held, whatever its size. In the page itself up to
//! [`super::run_data::MAX_TRIALS_IN_PAGE`] trials; above it one file per trial beside
//! the page ([`StepFile`]), which the page loads when the trial is opened.

use std::path::Path;

use serde_json::Value;

use super::script_file::{ScriptFile, encode, write};
use crate::agent::trajectory::{Act, Entry, SessionTrajectory};
use crate::error::Result;
use crate::record::SessionRecord;
use crate::report::show_trajectory::{kind, summary};
use crate::report::trajectory_marks::marks;
use crate::run_dir::RunDir;
use crate::store::{JsonlAt, SessionLineIndex, jsonl_records};

/// The most bytes of an entry's text the page holds (`show --trajectory --json` gives
/// the whole entry as written): what keeps the page of a run like the default suite's
/// a few megabytes.
const PAGE_TEXT: usize = 1024;

/// The session records the marks are read from, found by (trial, session).
struct Records {
    index: SessionLineIndex,
    at: Option<JsonlAt>,
}

impl Records {
    fn open(run_dir: &RunDir) -> Result<Records> {
        let path = run_dir.sessions_jsonl();
        let index = SessionLineIndex::build(&path)?;
        let at = if index.is_empty() {
            None
        } else {
            Some(JsonlAt::open(&path)?)
        };
        Ok(Records { index, at })
    }

    /// The steps of `line` as the page shows them; `None` when its session has no record.
    fn steps(&mut self, line: &SessionTrajectory) -> Result<Option<Vec<Value>>> {
        let (Some(offset), Some(at)) = (
            self.index.get(&line.trial_id, line.session),
            self.at.as_mut(),
        ) else {
            return Ok(None);
        };
        let record: SessionRecord = at.record(offset)?;
        Ok(Some(page_steps(&record, &line.trajectory)))
    }
}

/// Writes `,"steps":{...}` into the page's data: each session's steps keyed by
/// `TRIAL_ID#SESSION`, in the order of `trajectories.jsonl`; nothing for a run without
/// trajectories, and no key for a session without a record.
pub fn write_steps_in_page(out: &mut dyn std::io::Write, run_dir: &RunDir) -> Result<()> {
    let file = run_dir.trajectories_jsonl();
    if !file.is_file() {
        return Ok(());
    }
    let mut records = Records::open(run_dir)?;
    write(out, b",\"steps\":{")?;
    let mut first = true;
    for line in jsonl_records::<SessionTrajectory>(&file)? {
        let line = line?;
        let Some(steps) = records.steps(&line)? else {
            continue;
        };
        if !first {
            write(out, b",")?;
        }
        first = false;
        write(
            out,
            encode(&step_key(&line.trial_id, line.session))?.as_bytes(),
        )?;
        write(out, b":")?;
        write(out, encode(&steps)?.as_bytes())?;
    }
    write(out, b"}")
}

/// The steps of the sessions of a run whose page has them beside it, each found in
/// `trajectories.jsonl` by its trial and session.
pub struct StepsBeside {
    index: SessionLineIndex,
    at: JsonlAt,
    records: Records,
}

impl StepsBeside {
    /// The steps of the run in `run_dir`; `None` for a run without trajectories.
    pub fn open(run_dir: &RunDir) -> Result<Option<StepsBeside>> {
        let file = run_dir.trajectories_jsonl();
        if !file.is_file() {
            return Ok(None);
        }
        Ok(Some(StepsBeside {
            index: SessionLineIndex::build(&file)?,
            at: JsonlAt::open(&file)?,
            records: Records::open(run_dir)?,
        }))
    }

    /// The steps of `trial`'s session `session`, or `None` when it has no trajectory or
    /// no record.
    pub fn of(&mut self, trial: &str, session: u32) -> Result<Option<Vec<Value>>> {
        let Some(offset) = self.index.get(trial, session) else {
            return Ok(None);
        };
        let line: SessionTrajectory = self.at.record(offset)?;
        self.records.steps(&line)
    }
}

/// How a session with steps beside the page is summarized in its timeline row: the
/// file of its trial's steps (`f`), its entries (`n`) and how many a metric counted
/// (`c`): what its folded line shows before the file is loaded.
pub fn steps_summary(file: usize, steps: &[Value]) -> Value {
    let counted = steps
        .iter()
        .filter(|s| s["m"].as_array().is_some_and(|m| !m.is_empty()))
        .count();
    serde_json::json!({"f": file, "n": steps.len(), "c": counted})
}

/// One trial's steps beside the page, `steps-NNNNN.js` (the trial's number in the order
/// of `sessions.csv`), which calls `loopbenchSteps(N, {"TRIAL_ID#S": [...], ...})`.
pub struct StepFile {
    file: ScriptFile,
}

impl StepFile {
    /// Creates the steps file of trial number `n` in `dir`.
    pub fn create(dir: &Path, n: usize) -> Result<StepFile> {
        let path = dir.join(format!("steps-{n:05}.js"));
        Ok(StepFile {
            file: ScriptFile::create(path, &format!("loopbenchSteps({n},{{"))?,
        })
    }

    /// Adds the steps of `trial`'s session `session`.
    pub fn session(&mut self, trial: &str, session: u32, steps: &[Value]) -> Result<()> {
        let key = encode(&step_key(trial, session))?;
        self.file.item(&format!("{key}:{}", encode(steps)?))
    }

    /// Ends the file.
    pub fn finish(self) -> Result<()> {
        self.file.finish(b"});\n")
    }
}

/// The key of a session's steps: `TRIAL_ID#SESSION`.
fn step_key(trial: &str, session: u32) -> String {
    format!("{trial}#{session}")
}

/// The steps of `trajectory`, the trajectory of `record`'s session, as the page shows
/// them.
fn page_steps(record: &SessionRecord, trajectory: &[Entry]) -> Vec<Value> {
    trajectory
        .iter()
        .zip(marks(record, trajectory))
        .map(|(entry, marks)| {
            let mut step = serde_json::json!({
                "k": kind(entry),
                "h": summary(entry),
                "b": page_body(entry),
                "m": marks,
            });
            if let Act::ToolCall { id, .. } | Act::ToolResult { id, .. } = &entry.act {
                step["id"] = serde_json::json!(id);
            }
            if let Act::ToolResult { exit, error, .. } = &entry.act {
                step["x"] = serde_json::json!(exit);
                step["e"] = serde_json::json!(error);
            }
            step
        })
        .collect()
}

/// What an entry unfolds into on the page: a call's arguments, a result's or a
/// command's output, an edit's new text, a message: at most [`PAGE_TEXT`] bytes, `…`
/// when there was more.
fn page_body(entry: &Entry) -> String {
    let text = match &entry.act {
        Act::Message { text, .. } => text.clone(),
        Act::ToolCall { input, .. } => serde_json::to_string_pretty(input).unwrap_or_default(),
        Act::ToolResult { output, .. } => output.clone(),
        Act::Edit { new, old, .. } => match old {
            Some(old) => format!("- {old}\n+ {}", new.as_deref().unwrap_or("")),
            None => new.clone().unwrap_or_default(),
        },
        Act::Command { output, .. } => output.clone().unwrap_or_default(),
        Act::Rejected { reason, .. } => reason.clone(),
        Act::End { summary, .. } => summary.clone().unwrap_or_default(),
    };
    if text.len() <= PAGE_TEXT {
        return text;
    }
    let mut at = PAGE_TEXT;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{}…", &text[..at])
}
