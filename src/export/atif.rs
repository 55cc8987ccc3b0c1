//! ATIF out: one ATIF trajectory (Harbor's Agent Trajectory Interchange Format, v1.8)
//! per session, `ARM/TASK/REPLICATE/session-N.json`, each pointing at the next session
//! of its trial with `continued_trajectory_ref`, as ATIF chains a trajectory continued
//! in another file; the trial is the `session_id` all of them share.
//!
//! A session's entries become steps: a message of the agent opens an agent step, the
//! tool calls after it join it and their results become its observation; a message of
//! the user is a user step; an edit, a command the harness ran for the agent and a
//! rejected call are each an agent step with one call and its result. How the session
//! ended, its record and the cuts of its texts are kept under `extra`. loopbench knows
//! usage per session, not per step: it is the trajectory's `final_metrics`, and no step
//! has `metrics`.

use std::path::Path;

use serde_json::{Map, Value, json};

use super::{ArmExport, RunExporter, SessionExport, TrialExport, file_component};
use crate::agent::trajectory::{Act, Entry};
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

/// An agent step being filled: its message, its calls and their results.
struct Turn {
    message: String,
    calls: Vec<Value>,
    call_ids: Vec<String>,
    results: Vec<Value>,
    cut: Vec<Value>,
}

impl Turn {
    fn new(message: String) -> Turn {
        Turn {
            message,
            calls: Vec::new(),
            call_ids: Vec::new(),
            results: Vec::new(),
            cut: Vec::new(),
        }
    }

    fn call(&mut self, id: String, name: &str, arguments: Value) {
        self.call_ids.push(id.clone());
        self.calls.push(json!({
            "tool_call_id": id,
            "function_name": name,
            "arguments": arguments,
        }));
    }

    /// The agent step, numbered `step_id`.
    fn step(self, step_id: usize) -> Value {
        let mut step = Map::new();
        step.insert("step_id".into(), json!(step_id));
        step.insert("source".into(), json!("agent"));
        step.insert("message".into(), json!(self.message));
        if !self.calls.is_empty() {
            step.insert("tool_calls".into(), Value::Array(self.calls));
        }
        if !self.results.is_empty() {
            step.insert("observation".into(), json!({ "results": self.results }));
        }
        if !self.cut.is_empty() {
            step.insert("extra".into(), json!({ "cut": self.cut }));
        }
        Value::Object(step)
    }
}

/// The steps of a session's entries, and how it ended (`End`'s reason, usage and
/// summary) when an entry says.
fn steps(entries: &[Entry]) -> (Vec<Value>, Option<Value>) {
    let mut steps: Vec<Value> = Vec::new();
    let mut open: Option<Turn> = None;
    let mut end = None;
    let close = |open: &mut Option<Turn>, steps: &mut Vec<Value>| {
        if let Some(turn) = open.take() {
            let n = steps.len() + 1;
            steps.push(turn.step(n));
        }
    };
    for (i, entry) in entries.iter().enumerate() {
        let cut: Vec<Value> = entry
            .cut
            .iter()
            .map(|(field, full)| json!({"entry": i, "field": field, "full_bytes": full}))
            .collect();
        match &entry.act {
            Act::Message {
                text,
                from: Some(from),
            } => {
                close(&mut open, &mut steps);
                let mut step = json!({
                    "step_id": steps.len() + 1,
                    "source": "user",
                    "message": text,
                });
                let mut extra = json!({ "from": from });
                if !cut.is_empty() {
                    extra["cut"] = json!(cut);
                }
                step["extra"] = extra;
                steps.push(step);
            }
            Act::Message { text, from: None } => {
                close(&mut open, &mut steps);
                let mut turn = Turn::new(text.clone());
                turn.cut.extend(cut);
                open = Some(turn);
            }
            Act::ToolCall { tool, id, input } => {
                if open.as_ref().is_none_or(|t| !t.results.is_empty()) {
                    close(&mut open, &mut steps);
                    open = Some(Turn::new(String::new()));
                }
                if let Some(turn) = open.as_mut() {
                    let id = id.clone().unwrap_or_else(|| format!("entry-{i}"));
                    turn.call(id, tool, arguments(input));
                    turn.cut.extend(cut);
                }
            }
            Act::ToolResult {
                id,
                output,
                exit,
                error,
            } => {
                let turn = open.get_or_insert_with(|| Turn::new(String::new()));
                let mut result = Map::new();
                let matched = id.as_ref().filter(|id| turn.call_ids.contains(id));
                if let Some(id) = matched {
                    result.insert("source_call_id".into(), json!(id));
                }
                result.insert("content".into(), json!(output));
                let mut extra = Map::new();
                if let (Some(id), None) = (id, matched) {
                    extra.insert("call_id".into(), json!(id));
                }
                insert_some(&mut extra, "exit", *exit);
                if *error {
                    extra.insert("error".into(), json!(true));
                }
                if !extra.is_empty() {
                    result.insert("extra".into(), Value::Object(extra));
                }
                turn.results.push(Value::Object(result));
                turn.cut.extend(cut);
            }
            Act::Edit {
                path,
                op,
                old,
                new,
                failed,
            } => {
                close(&mut open, &mut steps);
                let mut args = Map::new();
                args.insert("path".into(), json!(path));
                args.insert("op".into(), json!(op));
                insert_some(&mut args, "old", old.as_ref());
                insert_some(&mut args, "new", new.as_ref());
                let mut result = json!({ "extra": { "applied": failed.is_none() } });
                if let Some(failed) = failed {
                    result["content"] = json!(failed);
                }
                open = Some(action(i, "edit", Value::Object(args), result, cut));
            }
            Act::Command {
                cmd,
                cwd,
                output,
                exit,
            } => {
                close(&mut open, &mut steps);
                let mut args = Map::new();
                args.insert("cmd".into(), json!(cmd));
                insert_some(&mut args, "cwd", cwd.as_ref());
                let mut result = json!({ "extra": { "exit": exit } });
                if let Some(output) = output {
                    result["content"] = json!(output);
                }
                open = Some(action(i, "command", Value::Object(args), result, cut));
            }
            Act::Rejected {
                tool,
                path,
                reason,
                by_agent,
            } => {
                close(&mut open, &mut steps);
                let mut args = Map::new();
                insert_some(&mut args, "path", path.as_ref());
                let result = json!({
                    "content": reason,
                    "extra": { "rejected": true, "by_agent": by_agent },
                });
                let name = tool.as_deref().unwrap_or("rejected");
                open = Some(action(i, name, Value::Object(args), result, cut));
            }
            Act::End {
                reason,
                usage,
                summary,
            } => {
                close(&mut open, &mut steps);
                let mut value = json!({ "reason": reason, "usage": usage });
                if let Some(summary) = summary {
                    value["summary"] = json!(summary);
                }
                if !cut.is_empty() {
                    value["cut"] = json!(cut);
                }
                end = Some(value);
            }
        }
    }
    close(&mut open, &mut steps);
    (steps, end)
}

/// An agent step of one action the harness carried out (an edit, a command, a
/// rejected call), entry `i`, with its result.
fn action(i: usize, name: &str, arguments: Value, mut result: Value, cut: Vec<Value>) -> Turn {
    let id = format!("entry-{i}");
    result["source_call_id"] = json!(id);
    let mut turn = Turn::new(String::new());
    turn.call(id, name, arguments);
    turn.results.push(result);
    turn.cut = cut;
    turn
}

/// A tool call's input as ATIF's `arguments`, which must be an object: an object as it
/// is, nothing as `{}`, anything else under `input`.
fn arguments(input: &Value) -> Value {
    match input {
        Value::Object(_) => input.clone(),
        Value::Null => json!({}),
        other => json!({ "input": other }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::trajectory::EditOp;

    fn entry(act: Act) -> Entry {
        Entry::from(act)
    }

    #[test]
    fn a_message_and_its_calls_are_one_step_and_their_results_its_observation() {
        let entries = vec![
            entry(Act::Message {
                text: "Reading.".into(),
                from: None,
            }),
            entry(Act::ToolCall {
                tool: "Read".into(),
                id: Some("t1".into()),
                input: json!({"file_path": "a"}),
            }),
            entry(Act::ToolResult {
                id: Some("t1".into()),
                output: "x".into(),
                exit: None,
                error: false,
            }),
            entry(Act::ToolCall {
                tool: "Bash".into(),
                id: None,
                input: json!("ls"),
            }),
            entry(Act::Edit {
                path: "b.py".into(),
                op: EditOp::Edit,
                old: Some("1".into()),
                new: Some("2".into()),
                failed: None,
            }),
            entry(Act::Message {
                text: "go on".into(),
                from: Some("user".into()),
            }),
        ];
        let (steps, end) = steps(&entries);
        assert!(end.is_none());
        let ids: Vec<u64> = steps
            .iter()
            .map(|s| s["step_id"].as_u64().unwrap())
            .collect();
        assert_eq!(ids, [1, 2, 3, 4]);
        assert_eq!(steps[0]["message"], "Reading.");
        assert_eq!(steps[0]["tool_calls"][0]["tool_call_id"], "t1");
        assert_eq!(
            steps[0]["observation"]["results"][0]["source_call_id"],
            "t1"
        );
        // A call after a result is the next turn; its id is made from its entry.
        assert_eq!(steps[1]["tool_calls"][0]["tool_call_id"], "entry-3");
        assert_eq!(
            steps[1]["tool_calls"][0]["arguments"],
            json!({"input": "ls"})
        );
        assert_eq!(steps[2]["tool_calls"][0]["function_name"], "edit");
        assert_eq!(
            steps[2]["observation"]["results"][0]["extra"]["applied"],
            true
        );
        assert_eq!(steps[3]["source"], "user");
    }

    #[test]
    fn a_result_whose_call_is_not_in_its_step_keeps_its_id_aside() {
        let entries = vec![entry(Act::ToolResult {
            id: Some("gone".into()),
            output: "x".into(),
            exit: Some(1),
            error: true,
        })];
        let (steps, _) = steps(&entries);
        let result = &steps[0]["observation"]["results"][0];
        assert!(result.get("source_call_id").is_none());
        assert_eq!(
            result["extra"],
            json!({"call_id": "gone", "exit": 1, "error": true})
        );
    }
}
