//! The steps of one ATIF trajectory → the actions of one session.
//!
//! **loopbench's own trajectories** (`extra.loopbench`), of a session whose actions the
//! harness applied (the simulated agent, a replay): each `edit` step (one call
//! `entry-N` with `path`, `op` and `old`/`new`, its result's `extra.applied`) and each
//! `command` step (`cmd`, `cwd`, its result's `extra.exit`) is what happened to the
//! work directory, and becomes a `write`, `edit`, `delete` or `run`; an edit that was
//! not applied, and a step the harness rejected (`extra.rejected`), a `skip` with its
//! reason. The agent's own calls beside them are kept for the trajectory only.
//!
//! **Any other trajectory** (Harbor's, a converter's, loopbench's of a `command`
//! agent): the agent's tool calls and their results (`observation.results` matched by
//! `source_call_id`), in step order. Claude Code's tools (`Write`, `Edit`,
//! `MultiEdit`, `Bash`, `NotebookEdit`) map as `import claude-code` maps them
//! ([`crate::import::claude_code::mapping`]): a result that is an error (the result's
//! `extra.error` or `is_error`, or what Harbor's converter keeps of Claude Code's
//! result in the step's `extra.metadata`) is not applied, but for a command that ran; a
//! call without a result is not applied and makes the session `interrupted`; the
//! structured result Harbor keeps (`tool_use_result`: an Edit's `originalFile`) is used
//! as the session files' `toolUseResult` is. Codex's tools (`exec_command`, `shell`,
//! `shell_command`, `apply_patch`...) map as `import codex` maps them
//! ([`super::codex_tools`]): a command that ran is a `run`, a patch its result says
//! succeeded its writes, edits and deletions. Any other tool has no file effect the
//! importer knows of, and is counted by name.
//!
//! Steps copied from an earlier trajectory for context (`is_copied_context`) are left
//! out: their calls were made, and are imported, where they first occurred. A result
//! that refers to a subagent's trajectory embedded in the document
//! (`subagent_trajectories`, by `trajectory_id`) brings that trajectory's steps in at
//! that point; one in another file (`trajectory_path`) is not read: a `skip`, and the
//! session is `divergent`.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::codex_tools::{answer, codex_call};
use super::document::{Document, text_of};
use crate::agent::trace::{EndStatus, Line};
use crate::import::claude_code::mapping::{ToolCall, ToolOutcome, emit_call};
use crate::import::codex::map::map_call;
use crate::import::emit::{Caller, Emitter};
use crate::import::paths::relative;
use crate::import::session::{Imported, ImportedSession};
use crate::import::tally::{SkipReason, Tally};

/// How deep subagents' trajectories are followed into each other.
const SUBAGENT_DEPTH: usize = 8;

/// The session of the trajectory `doc`, its paths relative to `root`.
pub fn map_document(
    doc: &Document,
    root: Option<&str>,
    imported: &mut Imported,
) -> ImportedSession {
    let file = doc.file.display().to_string();
    let mut tally = Tally::default();
    let mut out = Emitter::new(root, &mut imported.known, &mut tally, &mut imported.notes);
    let own_steps: Vec<&Value> = doc.steps().iter().filter(|s| !copied(s)).collect();
    let harness =
        doc.loopbench().is_some() && own_steps.iter().any(|s| harness_action(s).is_some());
    if harness {
        for step in &own_steps {
            harness_step(&mut out, &file, step);
        }
    } else {
        let mut walk = Walk::default();
        walk.steps(&file, &own_steps, doc.value.get("subagent_trajectories"), 0);
        for item in &walk.items {
            match item {
                Item::Say(line) => out.note(line.clone()),
                Item::Call(call) => match codex_call(call, doc.cwd()) {
                    Some(codex) => {
                        let exit = walk.exits.get(&call.id).copied();
                        let answer = walk.results.get(&call.id).map(|o| answer(o, exit));
                        map_call(&mut out, &codex, answer.as_ref());
                    }
                    None => emit_call(&mut out, call, walk.results.get(&call.id)),
                },
                Item::Unread { origin, reason } => {
                    let caller = Caller {
                        tool: "subagent",
                        origin,
                        cwd: None,
                    };
                    out.skip(&caller, None, SkipReason::Unreconstructed, reason);
                    out.diverged(&caller, None, reason);
                }
            }
        }
    }
    let mapped = out.finish();
    let mut usage = doc.usage();
    if let Some(reason) = usage.out_of_range() {
        imported
            .notes
            .push(format!("{file}: usage left out: {reason}"));
        usage = Default::default();
    }
    let status = if mapped.unanswered || unanswered_results(doc, &own_steps) {
        EndStatus::Interrupted
    } else {
        doc.status()
    };
    ImportedSession {
        lines: mapped.lines,
        divergent: mapped.divergent || doc.recorded_divergent(),
        usage,
        status,
        source: match doc.id() {
            Some(id) => format!("atif {id} ({file})"),
            None => format!("atif {file}"),
        },
        tally,
        n: doc.number(),
    }
}

/// Whether a converter's trajectory of Claude Code or Codex (`agent.name`) ends with
/// tool results the model never answered: its last step is the agent's calls, with no
/// message after them. Both CLIs end a turn with the model's answer, so the CLI was
/// killed while it waited for the model, as `import claude-code` and `import codex`
/// read the same transcript (a trajectory of another agent, whose last step may be a
/// call that ends its work, and loopbench's own, which say how they ended, are not
/// judged so).
fn unanswered_results(doc: &Document, steps: &[&Value]) -> bool {
    let agent = doc
        .value
        .get("agent")
        .and_then(|a| a.get("name"))
        .and_then(Value::as_str);
    let last = steps
        .iter()
        .rev()
        .find(|s| matches!(string(s, "source"), Some("agent" | "user")));
    doc.loopbench().is_none()
        && matches!(agent, Some("claude-code" | "codex"))
        && last.is_some_and(|s| string(s, "source") == Some("agent") && !calls_of(s).is_empty())
}

fn copied(step: &Value) -> bool {
    step.get("is_copied_context").and_then(Value::as_bool) == Some(true)
}

fn object(value: Option<&Value>) -> Option<&Map<String, Value>> {
    value.and_then(Value::as_object)
}

fn string<'v>(value: &'v Value, key: &str) -> Option<&'v str> {
    value.get(key).and_then(Value::as_str)
}

fn calls_of(step: &Value) -> &[Value] {
    step.get("tool_calls")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn results_of(step: &Value) -> &[Value] {
    step.get("observation")
        .and_then(|o| o.get("results"))
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// `file:step N`, for skips and notes.
fn origin(file: &str, step: &Value) -> String {
    match step.get("step_id").and_then(Value::as_u64) {
        Some(n) => format!("{file}:step {n}"),
        None => format!("{file}:a step without step_id"),
    }
}

/// The text an agent or user step says, as a `say` line: none when empty, or when it
/// is the placeholder Harbor's converters write on a step of one call (`Executed NAME
/// ID`), which no agent wrote.
fn say(step: &Value) -> Option<Line> {
    let text = text_of(step.get("message"));
    if text.trim().is_empty() {
        return None;
    }
    if let [call] = calls_of(step) {
        let placeholder = format!(
            "Executed {} {}",
            string(call, "function_name").unwrap_or(""),
            string(call, "tool_call_id").unwrap_or("")
        );
        if text == placeholder {
            return None;
        }
    }
    match string(step, "source") {
        Some("agent") => Some(Line::Say { text, from: None }),
        Some("user") => Some(Line::Say {
            text,
            from: Some("user".to_string()),
        }),
        _ => None,
    }
}

/// One of loopbench's own actions: a step of one call `entry-N` whose one result says
/// what the harness did with it.
struct HarnessAction<'s> {
    name: &'s str,
    arguments: &'s Value,
    result: &'s Value,
    extra: &'s Map<String, Value>,
}

fn harness_action(step: &Value) -> Option<HarnessAction<'_>> {
    let ([call], [result]) = (calls_of(step), results_of(step)) else {
        return None;
    };
    let id = string(call, "tool_call_id")?;
    if !id.starts_with("entry-") || string(result, "source_call_id") != Some(id) {
        return None;
    }
    let name = string(call, "function_name")?;
    let extra = object(result.get("extra"))?;
    let is_action = match name {
        "edit" => extra.get("applied").is_some_and(Value::is_boolean),
        "command" => extra.contains_key("exit"),
        _ => false,
    } || extra.get("rejected").and_then(Value::as_bool) == Some(true);
    is_action.then(|| HarnessAction {
        name,
        arguments: call.get("arguments").unwrap_or(&Value::Null),
        result,
        extra,
    })
}

/// A step of loopbench's own trajectory: its action applied, or its text and calls kept
/// for the trajectory.
fn harness_step(out: &mut Emitter, file: &str, step: &Value) {
    if let Some(line) = say(step) {
        out.note(line);
    }
    let Some(action) = harness_action(step) else {
        for call in calls_of(step) {
            out.note(Line::Call {
                tool: string(call, "function_name").unwrap_or("").to_string(),
                id: string(call, "tool_call_id").map(str::to_string),
                input: call.get("arguments").cloned().unwrap_or(Value::Null),
            });
        }
        for result in results_of(step) {
            let extra = result.get("extra");
            out.note(Line::Output {
                id: string(result, "source_call_id").map(str::to_string),
                output: text_of(result.get("content")),
                exit: extra.and_then(|e| e.get("exit")).and_then(Value::as_i64),
                error: extra.and_then(|e| e.get("error")).and_then(Value::as_bool) == Some(true),
            });
        }
        return;
    };
    let origin = origin(file, step);
    let caller = Caller {
        tool: action.name,
        origin: &origin,
        cwd: None,
    };
    let args = action.arguments;
    let reason = text_of(action.result.get("content"));
    if action.extra.get("rejected").and_then(Value::as_bool) == Some(true) {
        let path = string(args, "path");
        if action.extra.get("by_agent").and_then(Value::as_bool) == Some(true) {
            out.failed_skip(&caller, path, &reason);
        } else {
            out.skip(&caller, path, SkipReason::Unreconstructed, &reason);
        }
        return;
    }
    match action.name {
        "command" => {
            let Some(cmd) = string(args, "cmd") else {
                return out.skip(&caller, None, SkipReason::Malformed, "command without cmd");
            };
            let cwd = match string(args, "cwd").map(|c| relative(c, None)) {
                None => None,
                Some(Ok(cwd)) => Some(cwd),
                Some(Err(why)) => {
                    return out.skip(&caller, None, SkipReason::OutsideRoot, &why);
                }
            };
            out.call(|out| {
                out.emit(Line::Run {
                    cmd: cmd.to_string(),
                    cwd: cwd.filter(|c| !c.is_empty()),
                });
            });
        }
        _ => harness_edit(out, &caller, args, action.extra, &reason),
    }
}

/// An `edit` step: applied, its write, edit or deletion; not applied, a skip.
fn harness_edit(
    out: &mut Emitter,
    caller: &Caller,
    args: &Value,
    extra: &Map<String, Value>,
    reason: &str,
) {
    let Some(given) = string(args, "path") else {
        return out.skip(caller, None, SkipReason::Malformed, "edit without a path");
    };
    if extra.get("applied").and_then(Value::as_bool) != Some(true) {
        let why = format!("not applied when it was recorded: {reason}");
        return out.skip(caller, Some(given), SkipReason::Failed, &why);
    }
    let Some(path) = out.path(caller, given) else {
        return;
    };
    let (old, new) = (string(args, "old"), string(args, "new"));
    match (string(args, "op"), old, new) {
        (Some("write"), _, Some(content)) => out.call(|out| out.write(path, content.to_string())),
        (Some("delete"), _, _) => out.call(|out| out.delete(path)),
        (Some("edit"), Some(old), Some(new)) => out.call(|out| {
            // What the importer knows of the file follows the edit, as replay will.
            match out.files.get(&path) {
                Some(text) if text.contains(old) => {
                    let edited = text.replacen(old, new, 1);
                    out.files.insert(path.clone(), edited);
                }
                _ => {
                    out.files.remove(&path);
                }
            }
            out.emit(Line::Edit {
                path,
                old: old.to_string(),
                new: new.to_string(),
                all: false,
                original: None,
            });
        }),
        _ => out.skip(
            caller,
            Some(given),
            SkipReason::Malformed,
            "edit without an op and the text it needs",
        ),
    }
}

/// What the steps of a trajectory, its subagents' brought in, hold in order.
#[derive(Default)]
struct Walk {
    items: Vec<Item>,
    /// The first result of each call, by its id.
    results: HashMap<String, ToolOutcome>,
    /// The exit code a converter kept beside a call's result, by the call's id.
    exits: HashMap<String, i64>,
    seq: u64,
    /// Embedded subagent trajectories already brought in (each once).
    seen: HashSet<*const Value>,
}

enum Item {
    Say(Line),
    Call(ToolCall),
    /// A subagent's trajectory not read, and why.
    Unread {
        origin: String,
        reason: String,
    },
}

impl Walk {
    fn steps(&mut self, file: &str, steps: &[&Value], embedded: Option<&Value>, depth: usize) {
        for step in steps {
            if let Some(line) = say(step) {
                self.items.push(Item::Say(line));
            }
            let calls = calls_of(step);
            let cwd = step
                .get("extra")
                .and_then(|e| e.get("cwd"))
                .and_then(Value::as_str);
            for call in calls {
                let (Some(id), Some(name)) =
                    (string(call, "tool_call_id"), string(call, "function_name"))
                else {
                    continue;
                };
                self.seq += 1;
                self.items.push(Item::Call(ToolCall {
                    id: id.to_string(),
                    name: name.to_string(),
                    input: call.get("arguments").cloned().unwrap_or(Value::Null),
                    origin: origin(file, step),
                    cwd: cwd.map(str::to_string),
                    seq: self.seq,
                }));
            }
            for result in results_of(step) {
                if let Some(id) = string(result, "source_call_id") {
                    self.results
                        .entry(id.to_string())
                        .or_insert_with(|| outcome(step, result, calls.len() == 1));
                    if let Some(exit) = exit_code(step, result, id, calls.len() == 1) {
                        self.exits.entry(id.to_string()).or_insert(exit);
                    }
                }
                let refs = result
                    .get("subagent_trajectory_ref")
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice);
                for subagent in refs {
                    self.subagent(file, step, subagent, embedded, depth);
                }
            }
        }
    }

    /// The steps of the subagent `subagent` refers to, when it is embedded.
    fn subagent(
        &mut self,
        file: &str,
        step: &Value,
        subagent: &Value,
        embedded: Option<&Value>,
        depth: usize,
    ) {
        let at = origin(file, step);
        let found = string(subagent, "trajectory_id").and_then(|id| {
            embedded?
                .as_array()?
                .iter()
                .find(|t| string(t, "trajectory_id") == Some(id))
        });
        let Some(trajectory) = found else {
            let named = string(subagent, "trajectory_path")
                .or_else(|| string(subagent, "trajectory_id"))
                .unwrap_or("?");
            self.items.push(Item::Unread {
                origin: at,
                reason: format!(
                    "a subagent's trajectory ({named}) that is not embedded in the document: its calls are not reconstructable"
                ),
            });
            return;
        };
        if depth >= SUBAGENT_DEPTH || !self.seen.insert(std::ptr::from_ref(trajectory)) {
            return;
        }
        let steps: Vec<&Value> = trajectory
            .get("steps")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter(|s| !copied(s))
            .collect();
        let label = format!(
            "{file} (subagent {})",
            string(trajectory, "trajectory_id").unwrap_or("?")
        );
        self.steps(
            &label,
            &steps,
            trajectory.get("subagent_trajectories"),
            depth + 1,
        );
    }
}

/// The exit code kept beside the result of the call `id`: loopbench's own (the
/// result's `extra.exit`), or the `exit_code` of the metadata Harbor's Codex converter
/// takes out of a JSON output (`{"output", "metadata"}`) and keeps on the step
/// (`extra.tool_call_details.ID.metadata`, or `extra.tool_metadata` on a step of one
/// call).
fn exit_code(step: &Value, result: &Value, id: &str, one_call: bool) -> Option<i64> {
    let exit = |metadata: Option<&Value>| metadata?.get("exit_code")?.as_i64();
    let extra = step.get("extra");
    result
        .get("extra")
        .and_then(|e| e.get("exit"))
        .and_then(Value::as_i64)
        .or_else(|| {
            exit(
                extra
                    .and_then(|e| e.get("tool_call_details"))
                    .and_then(|d| d.get(id))
                    .and_then(|d| d.get("metadata")),
            )
        })
        .or_else(|| {
            one_call
                .then(|| exit(extra.and_then(|e| e.get("tool_metadata"))))
                .flatten()
        })
}

/// A result as the outcome of its call. What Harbor's converter keeps of Claude Code's
/// own result (the raw block with its `is_error`, the `tool_use_result`) sits on the
/// result (`extra.tool_result_metadata`, `extra.tool_result_is_error`: the bundled
/// steps of harbor 0.26), or on the step (`extra.metadata` or
/// `extra.tool_result_metadata`, `extra.tool_result_is_error`: a step of one call),
/// where it belongs to the call only when the step has one call.
fn outcome(step: &Value, result: &Value, one_call: bool) -> ToolOutcome {
    let step_extra = step.get("extra");
    let result_extra = result.get("extra");
    let metadata = object(result_extra.and_then(|e| e.get("tool_result_metadata"))).or_else(|| {
        one_call
            .then(|| {
                step_extra.and_then(|e| {
                    object(e.get("metadata")).or_else(|| object(e.get("tool_result_metadata")))
                })
            })
            .flatten()
    });
    let raw = metadata.and_then(|m| m.get("raw_tool_result"));
    let flag = |v: Option<&Value>, key: &str| {
        v.and_then(|v| v.get(key)).and_then(Value::as_bool) == Some(true)
    };
    let is_error = flag(result_extra, "error")
        || flag(result_extra, "is_error")
        || flag(result_extra, "tool_result_is_error")
        || (one_call && flag(step_extra, "tool_result_is_error"))
        || metadata.is_some_and(|m| m.get("is_error").and_then(Value::as_bool) == Some(true))
        || flag(raw, "is_error");
    let text = match raw {
        Some(raw) => text_of(raw.get("content")),
        None => text_of(result.get("content")),
    };
    let structured = metadata
        .and_then(|m| m.get("tool_use_result"))
        .or_else(|| result_extra.and_then(|e| e.get("tool_use_result")))
        .filter(|v| v.is_object())
        .cloned();
    ToolOutcome {
        is_error,
        text,
        result: structured,
    }
}
