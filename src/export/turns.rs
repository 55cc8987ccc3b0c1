//! A session's entries grouped into turns, as both exports show them: a message of the
//! agent opens a turn, the tool calls after it join it and their results are its
//! results; a call after a result opens the next turn; a message of the user is a turn
//! of its own; an edit, a command the harness ran for the agent and a rejected call are
//! each a turn of one call and its result. How the session ended is kept aside.

use serde_json::{Map, Value, json};

use crate::agent::Usage;
use crate::agent::trajectory::{Act, Entry};

/// A text cut on its way to `trajectories.jsonl`: the entry (its index in the
/// session), the field and the full length in bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct Cut {
    /// The entry's index.
    pub entry: usize,
    /// The field (`output`, `input.command`...).
    pub field: String,
    /// Its full length.
    pub full_bytes: u64,
}

impl Cut {
    /// As JSON.
    pub fn to_json(&self) -> Value {
        json!({"entry": self.entry, "field": self.field, "full_bytes": self.full_bytes})
    }
}

/// One call of a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Its id: the entry's, else `entry-I`.
    pub id: String,
    /// The tool (`edit`, `command` for the harness's own actions).
    pub name: String,
    /// Its arguments, an object.
    pub arguments: Map<String, Value>,
}

/// One result of a turn.
#[derive(Debug, Clone, PartialEq)]
pub struct CallResult {
    /// The call of the same turn it answers, when one has its id.
    pub call_id: Option<String>,
    /// What it gave back (absent for an edit that was applied).
    pub content: Option<String>,
    /// It failed: the call was refused, not applied, or its program marked it an
    /// error.
    pub failed: bool,
    /// What else the entry says: `exit`, `error`, `applied`, `rejected`, `by_agent`,
    /// the id of a call not in the turn (`call_id`).
    pub extra: Map<String, Value>,
}

/// A turn.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// A message not of the agent.
    User {
        /// The text.
        text: String,
        /// Who wrote it (the entry's `from`).
        from: String,
        /// Its cut texts.
        cut: Vec<Cut>,
    },
    /// One turn of the agent.
    Agent {
        /// Its text (empty when it only called tools).
        message: String,
        /// Its calls.
        calls: Vec<Call>,
        /// Their results.
        results: Vec<CallResult>,
        /// Its cut texts.
        cut: Vec<Cut>,
    },
}

/// How a session ended, as its `end` entry says.
#[derive(Debug, Clone, PartialEq)]
pub struct End {
    /// The outcome.
    pub reason: String,
    /// What it used.
    pub usage: Usage,
    /// The agent's summary.
    pub summary: Option<String>,
    /// Its cut texts.
    pub cut: Vec<Cut>,
}

impl End {
    /// As JSON.
    pub fn to_json(&self) -> Value {
        let mut value = json!({ "reason": self.reason, "usage": self.usage });
        if let Some(summary) = &self.summary {
            value["summary"] = json!(summary);
        }
        if !self.cut.is_empty() {
            value["cut"] = Value::Array(self.cut.iter().map(Cut::to_json).collect());
        }
        value
    }
}

/// The turns of a session's entries, and how it ended when an entry says.
pub fn turns(entries: &[Entry]) -> (Vec<Turn>, Option<End>) {
    let mut turns: Vec<Turn> = Vec::new();
    let mut open: Option<Turn> = None;
    let mut end = None;
    for (i, entry) in entries.iter().enumerate() {
        let cut: Vec<Cut> = entry
            .cut
            .iter()
            .map(|(field, full)| Cut {
                entry: i,
                field: field.clone(),
                full_bytes: *full,
            })
            .collect();
        match &entry.act {
            Act::Message {
                text,
                from: Some(from),
            } => {
                turns.extend(open.take());
                turns.push(Turn::User {
                    text: text.clone(),
                    from: from.clone(),
                    cut,
                });
            }
            Act::Message { text, from: None } => {
                turns.extend(open.take());
                open = Some(agent(text.clone(), cut));
            }
            Act::ToolCall { tool, id, input } => {
                let answered =
                    matches!(&open, Some(Turn::Agent { results, .. }) if !results.is_empty());
                if open.is_none() || answered {
                    turns.extend(open.take());
                    open = Some(agent(String::new(), Vec::new()));
                }
                if let Some(Turn::Agent {
                    calls, cut: cuts, ..
                }) = open.as_mut()
                {
                    calls.push(Call {
                        id: id.clone().unwrap_or_else(|| format!("entry-{i}")),
                        name: tool.clone(),
                        arguments: arguments(input),
                    });
                    cuts.extend(cut);
                }
            }
            Act::ToolResult {
                id,
                output,
                exit,
                error,
            } => {
                if !matches!(open, Some(Turn::Agent { .. })) {
                    turns.extend(open.take());
                    open = Some(agent(String::new(), Vec::new()));
                }
                if let Some(Turn::Agent {
                    calls,
                    results,
                    cut: cuts,
                    ..
                }) = open.as_mut()
                {
                    let matched = id.clone().filter(|id| calls.iter().any(|c| &c.id == id));
                    let mut extra = Map::new();
                    if let (Some(id), None) = (id, &matched) {
                        extra.insert("call_id".into(), json!(id));
                    }
                    if let Some(exit) = exit {
                        extra.insert("exit".into(), json!(exit));
                    }
                    if *error {
                        extra.insert("error".into(), json!(true));
                    }
                    results.push(CallResult {
                        call_id: matched,
                        content: Some(output.clone()),
                        failed: *error,
                        extra,
                    });
                    cuts.extend(cut);
                }
            }
            Act::Edit {
                path,
                op,
                old,
                new,
                failed,
            } => {
                turns.extend(open.take());
                let mut args = Map::new();
                args.insert("path".into(), json!(path));
                args.insert("op".into(), json!(op));
                if let Some(old) = old {
                    args.insert("old".into(), json!(old));
                }
                if let Some(new) = new {
                    args.insert("new".into(), json!(new));
                }
                let mut extra = Map::new();
                extra.insert("applied".into(), json!(failed.is_none()));
                let result = CallResult {
                    call_id: None,
                    content: failed.clone(),
                    failed: failed.is_some(),
                    extra,
                };
                turns.push(action(i, "edit", args, result, cut));
            }
            Act::Command {
                cmd,
                cwd,
                output,
                exit,
            } => {
                turns.extend(open.take());
                let mut args = Map::new();
                args.insert("cmd".into(), json!(cmd));
                if let Some(cwd) = cwd {
                    args.insert("cwd".into(), json!(cwd));
                }
                let mut extra = Map::new();
                extra.insert("exit".into(), json!(exit));
                let result = CallResult {
                    call_id: None,
                    content: output.clone(),
                    failed: false,
                    extra,
                };
                turns.push(action(i, "command", args, result, cut));
            }
            Act::Rejected {
                tool,
                path,
                reason,
                by_agent,
            } => {
                turns.extend(open.take());
                let mut args = Map::new();
                if let Some(path) = path {
                    args.insert("path".into(), json!(path));
                }
                let mut extra = Map::new();
                extra.insert("rejected".into(), json!(true));
                extra.insert("by_agent".into(), json!(by_agent));
                let result = CallResult {
                    call_id: None,
                    content: Some(reason.clone()),
                    failed: true,
                    extra,
                };
                let name = tool.as_deref().unwrap_or("rejected");
                turns.push(action(i, name, args, result, cut));
            }
            Act::End {
                reason,
                usage,
                summary,
            } => {
                turns.extend(open.take());
                end = Some(End {
                    reason: reason.clone(),
                    usage: *usage,
                    summary: summary.clone(),
                    cut,
                });
            }
        }
    }
    turns.extend(open);
    (turns, end)
}

fn agent(message: String, cut: Vec<Cut>) -> Turn {
    Turn::Agent {
        message,
        calls: Vec::new(),
        results: Vec::new(),
        cut,
    }
}

/// A turn of one action the harness carried out (an edit, a command, a rejected call),
/// entry `i`, with its result.
fn action(
    i: usize,
    name: &str,
    arguments: Map<String, Value>,
    mut result: CallResult,
    cut: Vec<Cut>,
) -> Turn {
    let id = format!("entry-{i}");
    result.call_id = Some(id.clone());
    Turn::Agent {
        message: String::new(),
        calls: vec![Call {
            id,
            name: name.to_string(),
            arguments,
        }],
        results: vec![result],
        cut,
    }
}

/// A tool call's input as arguments, which both formats want as an object: an object
/// as it is, nothing as `{}`, anything else under `input`.
fn arguments(input: &Value) -> Map<String, Value> {
    match input {
        Value::Object(map) => map.clone(),
        Value::Null => Map::new(),
        other => {
            let mut map = Map::new();
            map.insert("input".into(), other.clone());
            map
        }
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
    fn a_message_and_its_calls_are_one_turn_and_their_results_its_results() {
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
        let (turns, end) = turns(&entries);
        assert!(end.is_none());
        assert_eq!(turns.len(), 4);
        let Turn::Agent {
            message,
            calls,
            results,
            ..
        } = &turns[0]
        else {
            panic!("{turns:?}")
        };
        assert_eq!(message, "Reading.");
        assert_eq!(calls[0].id, "t1");
        assert_eq!(results[0].call_id.as_deref(), Some("t1"));
        // A call after a result is the next turn; its id is made from its entry.
        let Turn::Agent { calls, .. } = &turns[1] else {
            panic!()
        };
        assert_eq!(calls[0].id, "entry-3");
        assert_eq!(
            Value::Object(calls[0].arguments.clone()),
            json!({"input": "ls"})
        );
        let Turn::Agent { calls, results, .. } = &turns[2] else {
            panic!()
        };
        assert_eq!(calls[0].name, "edit");
        assert_eq!(results[0].extra["applied"], json!(true));
        assert!(matches!(&turns[3], Turn::User { from, .. } if from == "user"));
    }

    #[test]
    fn a_result_whose_call_is_not_in_its_turn_keeps_its_id_aside() {
        let entries = vec![entry(Act::ToolResult {
            id: Some("gone".into()),
            output: "x".into(),
            exit: Some(1),
            error: true,
        })];
        let (turns, _) = turns(&entries);
        let Turn::Agent { results, .. } = &turns[0] else {
            panic!()
        };
        assert_eq!(results[0].call_id, None);
        assert_eq!(
            Value::Object(results[0].extra.clone()),
            json!({"call_id": "gone", "exit": 1, "error": true})
        );
    }
}
