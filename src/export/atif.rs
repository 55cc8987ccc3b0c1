//! ATIF out: one ATIF trajectory (Harbor's Agent Trajectory Interchange Format, v1.8)
//! per session, `ARM/TASK/REPLICATE/session-N.json`, each pointing at the next session
//! of its trial with `continued_trajectory_ref`, as ATIF chains a trajectory continued
//! in another file; the trial is the `session_id` all of them share.
//!
//! Each turn of a session ([`super::turns`]) is a step: an agent's turn an agent step
//! with its calls and their results as its observation, a user's a user step. How the
//! session ended, its record and the cuts of its texts are kept under `extra`. loopbench knows
//! usage per session, not per step: it is the trajectory's `final_metrics`, and no step
//! has `metrics`.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::turns::{CallResult, Cut, End, Turn, turns};
use super::{ArmExport, RunExporter, SessionExport, TrialExport, file_component};
use crate::agent::trajectory::Entry;
use crate::error::{Error, IoContext, Result};

/// The ATIF version written, as its `schema_version` names it.
pub const SCHEMA_VERSION: &str = "ATIF-v1.8";

/// The ATIF exporter.
pub struct Atif;

impl RunExporter for Atif {
    fn export_arm(
        &self,
        arm: &ArmExport,
        trials: &mut dyn Iterator<Item = Result<TrialExport>>,
        out: &Path,
    ) -> Result<usize> {
        let mut files = 0;
        for trial in trials {
            let trial = trial?;
            let dir = out
                .join(file_component(arm.name))
                .join(file_component(&trial.record.key.task))
                .join(trial.record.key.replicate.to_string());
            std::fs::create_dir_all(&dir)
                .io_context(|| format!("cannot create '{}'", dir.display()))?;
            for (i, session) in trial.sessions.iter().enumerate() {
                let next = trial
                    .sessions
                    .get(i + 1)
                    .map(|s| file_name(s.record.session));
                let head = (i == 0).then_some(&trial);
                let document = trajectory(arm, session, next, head)?;
                write_new(&dir.join(file_name(session.record.session)), &document)?;
                files += 1;
            }
        }
        Ok(files)
    }
}

/// The file of session `n` in its trial's folder.
pub fn file_name(n: u32) -> String {
    format!("session-{n}.json")
}

/// Writes `value` as pretty JSON into the new file `path` (never over another).
fn write_new(path: &Path, value: &Value) -> Result<()> {
    use std::io::Write;
    let mut text = serde_json::to_vec_pretty(value)
        .map_err(|e| Error::Tool(format!("cannot encode '{}': {e}", path.display())))?;
    text.push(b'\n');
    let mut file = std::fs::File::create_new(path)
        .io_context(|| format!("cannot create '{}'", path.display()))?;
    file.write_all(&text)
        .io_context(|| format!("cannot write '{}'", path.display()))
}

/// The ATIF document of one session: `next` the file of the session after it, `head`
/// the trial when this is its first session (its record is kept there).
fn trajectory(
    arm: &ArmExport,
    session: &SessionExport,
    next: Option<String>,
    head: Option<&TrialExport>,
) -> Result<Value> {
    let record = &session.record;
    let entries = session.trajectory.as_deref().unwrap_or_default();
    let (steps, end) = steps(entries);
    let manifest = arm.manifest;
    let mut agent = Map::new();
    agent.insert("name".into(), json!(manifest.driver));
    // The simulated agent is loopbench's own; any other agent's version is not in the
    // run's records.
    let version = if manifest.simulated {
        manifest.loopbench_version.as_str()
    } else {
        "unknown"
    };
    agent.insert("version".into(), json!(version));
    let usage = &record.usage;
    let mut final_metrics = Map::new();
    insert_some(
        &mut final_metrics,
        "total_prompt_tokens",
        usage.input_tokens,
    );
    insert_some(
        &mut final_metrics,
        "total_completion_tokens",
        usage.output_tokens,
    );
    insert_some(&mut final_metrics, "total_cost_usd", usage.cost_usd);
    final_metrics.insert("total_steps".into(), json!(steps.len()));
    if let Some(turns) = usage.turns {
        final_metrics.insert("extra".into(), json!({"turns": turns}));
    }
    let record_value = serde_json::to_value(record)
        .map_err(|e| Error::Tool(format!("cannot encode a session record: {e}")))?;
    let mut loopbench = Map::new();
    loopbench.insert("suite".into(), json!(manifest.suite));
    loopbench.insert("suite_hash".into(), json!(manifest.suite_hash));
    loopbench.insert("trial_id".into(), json!(record.key.trial_id));
    loopbench.insert("session".into(), json!(record.session));
    if let Some(end) = end {
        loopbench.insert("end".into(), end);
    }
    loopbench.insert("session_record".into(), record_value);
    if let Some(trial) = head {
        let trial_value = serde_json::to_value(&trial.record)
            .map_err(|e| Error::Tool(format!("cannot encode a trial record: {e}")))?;
        loopbench.insert("trial_record".into(), trial_value);
    }
    let mut doc = Map::new();
    doc.insert("schema_version".into(), json!(SCHEMA_VERSION));
    doc.insert("session_id".into(), json!(record.key.trial_id));
    doc.insert(
        "trajectory_id".into(),
        json!(format!("{}#{}", record.key.trial_id, record.session)),
    );
    doc.insert("agent".into(), Value::Object(agent));
    doc.insert("steps".into(), Value::Array(steps));
    if session.trajectory.is_none() {
        doc.insert(
            "notes".into(),
            json!("the run recorded no trajectory of this session"),
        );
    }
    doc.insert("final_metrics".into(), Value::Object(final_metrics));
    if let Some(next) = next {
        doc.insert("continued_trajectory_ref".into(), json!(next));
    }
    doc.insert("extra".into(), json!({ "loopbench": loopbench }));
    Ok(Value::Object(doc))
}

fn insert_some<T: serde::Serialize>(map: &mut Map<String, Value>, key: &str, value: Option<T>) {
    if let Some(value) = value {
        map.insert(key.into(), json!(value));
    }
}

/// The ATIF steps of a session's entries, and how it ended when an entry says.
fn steps(entries: &[Entry]) -> (Vec<Value>, Option<Value>) {
    let (turns, end) = turns(entries);
    let steps = turns
        .into_iter()
        .enumerate()
        .map(|(i, turn)| step(i + 1, turn))
        .collect();
    (steps, end.as_ref().map(End::to_json))
}

/// Turn `turn` as step `step_id`.
fn step(step_id: usize, turn: Turn) -> Value {
    let mut step = Map::new();
    step.insert("step_id".into(), json!(step_id));
    let mut extra = Map::new();
    let cut = match turn {
        Turn::User { text, from, cut } => {
            step.insert("source".into(), json!("user"));
            step.insert("message".into(), json!(text));
            extra.insert("from".into(), json!(from));
            cut
        }
        Turn::Agent {
            message,
            calls,
            results,
            cut,
        } => {
            step.insert("source".into(), json!("agent"));
            step.insert("message".into(), json!(message));
            if !calls.is_empty() {
                let calls: Vec<Value> = calls
                    .into_iter()
                    .map(|c| {
                        json!({
                            "tool_call_id": c.id,
                            "function_name": c.name,
                            "arguments": c.arguments,
                        })
                    })
                    .collect();
                step.insert("tool_calls".into(), Value::Array(calls));
            }
            if !results.is_empty() {
                let results: Vec<Value> = results.into_iter().map(result).collect();
                step.insert("observation".into(), json!({ "results": results }));
            }
            cut
        }
    };
    if !cut.is_empty() {
        let cut: Vec<Value> = cut.iter().map(Cut::to_json).collect();
        extra.insert("cut".into(), Value::Array(cut));
    }
    if !extra.is_empty() {
        step.insert("extra".into(), Value::Object(extra));
    }
    Value::Object(step)
}

/// A result as an ATIF observation result.
fn result(result: CallResult) -> Value {
    let mut value = Map::new();
    if let Some(id) = result.call_id {
        value.insert("source_call_id".into(), json!(id));
    }
    if let Some(content) = result.content {
        value.insert("content".into(), json!(content));
    }
    if !result.extra.is_empty() {
        value.insert("extra".into(), Value::Object(result.extra));
    }
    Value::Object(value)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::trajectory::Act;

    #[test]
    fn turns_are_numbered_steps_and_results_are_observations() {
        let entries = vec![
            Entry::from(Act::ToolCall {
                tool: "Read".into(),
                id: Some("t1".into()),
                input: json!({"file_path": "a"}),
            }),
            Entry::from(Act::ToolResult {
                id: Some("t1".into()),
                output: "x".into(),
                exit: None,
                error: false,
            }),
            Entry::from(Act::Message {
                text: "go on".into(),
                from: Some("user".into()),
            }),
        ];
        let (steps, end) = steps(&entries);
        assert!(end.is_none());
        assert_eq!(steps[0]["step_id"], 1);
        assert_eq!(steps[0]["source"], "agent");
        assert_eq!(steps[0]["tool_calls"][0]["function_name"], "Read");
        assert_eq!(
            steps[0]["observation"]["results"][0],
            json!({"source_call_id": "t1", "content": "x"})
        );
        assert_eq!(steps[1]["step_id"], 2);
        assert_eq!(steps[1]["source"], "user");
        assert_eq!(steps[1]["extra"], json!({"from": "user"}));
    }
}
