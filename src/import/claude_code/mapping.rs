//! Tool calls of a Claude Code session → trace actions, with the importer's model of
//! file contents and the rule that marks a session `divergent`.
//!
//! | tool | action |
//! | --- | --- |
//! | `Write` (file_path, content) | `write` of the result's `content` when it has one (what was written), else the call's |
//! | `Edit` (file_path, old_string, new_string, replace_all) | `edit` (`all` with replace_all) of the result's oldString/newString when it has them (a `userModified` edit applied the user's version), else the call's; an empty old_string creates the file: `write`, never a reset |
//! | `MultiEdit` (file_path, edits) | one `edit` per entry, in order |
//! | `Bash` (command) | `run` in the directory the shell was in (the line's `cwd` under the root becomes the run's `cwd`), the root's absolute path rewritten relative to it ([`crate::import::paths::rewrite_command`]); a shell outside the root: `skip` |
//! | `NotebookEdit` | `skip`: the notebook's JSON is not in the transcript, so a cell edit has no well-defined whole-file effect |
//! | anything else (Read, Grep, Glob, TodoWrite, Task, WebFetch, MCP tools...) | nothing; counted as ignored |
//!
//! **Which calls apply.** A call applies when its `tool_result` is present and not
//! `is_error`. A `Bash` result with `is_error` still applies, because a command that
//! ran and exited non-zero comes back as an error (in CLI 1.0.x with nothing but its
//! output, later with an `Exit code N` line) and its effects happened; unless the
//! result is a refusal (the user rejected the call or stopped the turn, a permission
//! rule denied it, a `PreToolUse` hook blocked it) or the CLI rejected its input
//! (`<tool_use_error>`), in which case it never ran. A call without any result (the
//! transcript was cut off, or the CLI was killed) does not apply, and its session ends
//! `interrupted`.
//!
//! **Divergence.** Shell commands change files without showing how, so the importer
//! tracks the content it can derive from the transcript alone: the content of each
//! `Write`, the results of the edits it emitted, and an Edit's
//! `toolUseResult.originalFile` (what the agent's file held just before the edit).
//! When an Edit or MultiEdit carries `originalFile` and the importer's model of that
//! file holds *different* content, the importer emits a `write` of `originalFile`
//! before the edit — replay then edits the file the agent really saw — and marks the
//! session `divergent`. A file the model knows nothing about (a task file never
//! written, one created by a command) cannot be judged at import: `originalFile`
//! becomes the model and rides on the edit as `original`, and replay decides — if the
//! edit's old text is missing from the file it finds, it resets the file to `original`,
//! applies the edit and counts the session `divergent` then. The model is carried from one session of an
//! import to the next, as replay carries the work directory. Without `originalFile` (older CLI versions) the
//! edit is emitted as is; if its old text is not in the model, the model forgets the
//! file. So `divergent` means exactly: the trace resets at least one file, because the
//! transcript's own file actions did not account for its content (a command, a hook,
//! the user's editor, or an edit the importer did not apply had changed it).

use std::collections::HashMap;

use serde_json::Value;

use crate::agent::trace::Line;
use crate::import::emit::{Caller, Emitter, Known, Mapped};
use crate::import::tally::{SkipReason, Tally};

/// One `tool_use` block.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    /// `toolu_...`, matched by the result.
    pub id: String,
    /// Tool name (`Write`, `Bash`...).
    pub name: String,
    /// The call's `input` object.
    pub input: Value,
    /// `file:line` it came from, for messages.
    pub origin: String,
    /// Where the agent's shell was when it made the call (the line's `cwd`, absolute
    /// as recorded); `None` when the transcript does not say.
    pub cwd: Option<String>,
    /// Position among the calls of the input, for a stable order.
    pub seq: u64,
}

impl ToolCall {
    fn caller(&self) -> Caller<'_> {
        Caller {
            tool: &self.name,
            origin: &self.origin,
            cwd: self.cwd.as_deref(),
        }
    }
}

/// One `tool_result` block, with the line's structured result.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolOutcome {
    /// The result's `is_error`.
    pub is_error: bool,
    /// The result's text.
    pub text: String,
    /// `toolUseResult` (session files) or `tool_use_result` (stream-json).
    pub result: Option<Value>,
}

/// Maps the calls of one session, in the order given, without its trajectory lines:
/// what the tests of the mapping compare. `root` is the session's cwd or `--root`;
/// problems worth a user's attention are pushed onto `notes`.
#[cfg(test)]
pub fn map_calls(
    calls: &[ToolCall],
    results: &HashMap<String, ToolOutcome>,
    root: Option<&str>,
    files: &mut Known,
    tally: &mut Tally,
    notes: &mut Vec<String>,
) -> Mapped {
    let mut out = Emitter::new(root, files, tally, notes);
    for call in calls {
        map_call(&mut out, call, results.get(&call.id));
    }
    out.finish()
}

/// The calls of one session, each mapped to its actions, with the session's trajectory
/// lines: the agent's `texts` (numbered in one sequence with the calls), each call and
/// its result, in order.
pub fn map_session(
    calls: &[ToolCall],
    texts: &[(u64, String)],
    results: &HashMap<String, ToolOutcome>,
    root: Option<&str>,
    files: &mut Known,
    tally: &mut Tally,
    notes: &mut Vec<String>,
) -> Mapped {
    let mut out = Emitter::new(root, files, tally, notes);
    let mut texts = texts.iter().peekable();
    for call in calls {
        while let Some((_, text)) = texts.next_if(|(seq, _)| *seq < call.seq) {
            out.note(Line::Say {
                text: text.clone(),
                from: None,
            });
        }
        emit_call(&mut out, call, results.get(&call.id));
    }
    for (_, text) in texts {
        out.note(Line::Say {
            text: text.clone(),
            from: None,
        });
    }
    out.finish()
}

/// One call of Claude Code's tools with its result (`None`: it never got one): its
/// trajectory lines (the call, the result) around its actions. For another importer
/// whose transcripts hold Claude Code's calls (ATIF converted from Claude Code).
pub fn emit_call(out: &mut Emitter, call: &ToolCall, outcome: Option<&ToolOutcome>) {
    out.note(Line::Call {
        tool: call.name.clone(),
        id: Some(call.id.clone()),
        input: call.input.clone(),
    });
    map_call(out, call, outcome);
    if let Some(outcome) = outcome {
        out.note(Line::Output {
            id: Some(call.id.clone()),
            output: outcome.text.clone(),
            exit: exit_code(&outcome.text),
            error: outcome.is_error,
        });
    }
}

/// The `Exit code N` line Claude Code puts first in a failed command's result.
fn exit_code(text: &str) -> Option<i64> {
    text.lines()
        .next()?
        .strip_prefix("Exit code ")?
        .trim()
        .parse()
        .ok()
}

/// One replacement of an Edit or MultiEdit.
struct Replace {
    old: String,
    new: String,
    all: bool,
}

fn string<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

fn map_call(out: &mut Emitter, call: &ToolCall, outcome: Option<&ToolOutcome>) {
    let Some(outcome) = outcome else {
        return out.unanswered();
    };
    let applies = !outcome.is_error || (call.name == "Bash" && bash_ran(outcome));
    if !applies {
        return out.failed(refused(outcome));
    }
    out.call(|out| apply(out, call, outcome));
}

/// Turns an answered call into actions, a skip, or nothing (no file effect).
fn apply(out: &mut Emitter, call: &ToolCall, outcome: &ToolOutcome) {
    match call.name.as_str() {
        "Bash" => apply_bash(out, call),
        "Write" => apply_write(out, call, outcome),
        "Edit" => apply_edit(out, call, outcome),
        "MultiEdit" => apply_multi_edit(out, call, outcome),
        "NotebookEdit" => skip_notebook_edit(out, call),
        other => out.ignored(other),
    }
}

/// A Bash call: its command, run.
fn apply_bash(out: &mut Emitter, call: &ToolCall) {
    let input = &call.input;
    let caller = call.caller();
    match string(input, "command") {
        Some(cmd) => out.run(&caller, cmd),
        None => out.skip(
            &caller,
            None,
            SkipReason::Malformed,
            "Bash call without a command",
        ),
    }
}

/// A Write call: the content written.
fn apply_write(out: &mut Emitter, call: &ToolCall, outcome: &ToolOutcome) {
    let input = &call.input;
    let caller = call.caller();
    let Some(path) = path(out, call, "file_path") else {
        return;
    };
    // What was written: the result's content (the user may have changed
    // the proposal before accepting it), else the call's.
    let written = outcome
        .result
        .as_ref()
        .and_then(|r| string(r, "content"))
        .or_else(|| string(input, "content"));
    match written {
        Some(content) => out.write(path, content.to_string()),
        None => out.skip(
            &caller,
            Some(&path),
            SkipReason::Malformed,
            "Write call without content",
        ),
    }
}

/// An Edit call: one replacement.
fn apply_edit(out: &mut Emitter, call: &ToolCall, outcome: &ToolOutcome) {
    let input = &call.input;
    let caller = call.caller();
    let Some(path) = path(out, call, "file_path") else {
        return;
    };
    let result = outcome.result.as_ref();
    // When the user changed the proposed edit, the result holds what was applied.
    let pick = |key: &str, result_key: &str| {
        result
            .and_then(|r| string(r, result_key))
            .or_else(|| string(input, key))
    };
    match (
        pick("old_string", "oldString"),
        pick("new_string", "newString"),
    ) {
        (Some(old), Some(new)) => {
            let all = input.get("replace_all").and_then(Value::as_bool) == Some(true);
            let original = result.and_then(|r| string(r, "originalFile"));
            let replace = Replace {
                old: old.to_string(),
                new: new.to_string(),
                all,
            };
            edit(out, path, original, vec![replace]);
        }
        _ => out.skip(
            &caller,
            Some(&path),
            SkipReason::Malformed,
            "Edit call without old_string/new_string",
        ),
    }
}

/// A MultiEdit call: its replacements in order.
fn apply_multi_edit(out: &mut Emitter, call: &ToolCall, outcome: &ToolOutcome) {
    let input = &call.input;
    let caller = call.caller();
    let Some(path) = path(out, call, "file_path") else {
        return;
    };
    let edits: Option<Vec<Replace>> =
        input
            .get("edits")
            .and_then(Value::as_array)
            .and_then(|edits| {
                edits
                    .iter()
                    .map(|e| {
                        Some(Replace {
                            old: string(e, "old_string")?.to_string(),
                            new: string(e, "new_string")?.to_string(),
                            all: e.get("replace_all").and_then(Value::as_bool) == Some(true),
                        })
                    })
                    .collect()
            });
    let original = outcome
        .result
        .as_ref()
        .and_then(|r| string(r, "originalFile").or_else(|| string(r, "originalFileContents")));
    match edits {
        Some(edits) => edit(out, path, original, edits),
        None => out.skip(
            &caller,
            Some(&path),
            SkipReason::Malformed,
            "MultiEdit call with malformed edits",
        ),
    }
}

/// A NotebookEdit call: skipped, since the notebook's JSON is not in the transcript.
fn skip_notebook_edit(out: &mut Emitter, call: &ToolCall) {
    let input = &call.input;
    let caller = call.caller();
    let path = string(input, "notebook_path");
    out.skip(
        &caller,
        path,
        SkipReason::Notebook,
        "a notebook cell edit has no well-defined file content: the notebook's JSON is not in the transcript",
    );
}

/// The relative path in `input[key]`, or `None` after recording a skip. A relative
/// path is taken from the directory the call's shell was in.
fn path(out: &mut Emitter, call: &ToolCall, key: &str) -> Option<String> {
    let caller = call.caller();
    let Some(given) = string(&call.input, key) else {
        out.skip(
            &caller,
            None,
            SkipReason::Malformed,
            &format!("{} call without {key}", call.name),
        );
        return None;
    };
    out.path(&caller, given)
}

/// Applies the divergence rule, then the replacements in order.
fn edit(out: &mut Emitter, path: String, original: Option<&str>, edits: Vec<Replace>) {
    // What replay should fall back to if the file it finds lacks the old text: the
    // file the agent saw, when the importer cannot know what replay will find.
    let mut fallback = None;
    // An edit that creates the file (empty old text) does not depend on what was
    // there: nothing to reset, nothing diverged.
    let creates = edits.first().is_some_and(|e| e.old.is_empty());
    if let Some(original) = original.filter(|_| !creates) {
        match out.files.get(&path) {
            Some(known) if known != original => out.reset(path.clone(), original.to_string()),
            Some(_) => {}
            None => {
                out.files.insert(path.clone(), original.to_string());
                fallback = Some(original.to_string());
            }
        }
    }
    for Replace { old, new, all } in edits {
        if old.is_empty() {
            // Claude Code creates a file from an edit with an empty old_string.
            out.write(path.clone(), new);
            continue;
        }
        let known = out.files.remove(&path);
        if let Some(text) = known.filter(|t| t.contains(old.as_str())) {
            let edited = if all {
                text.replace(old.as_str(), &new)
            } else {
                text.replacen(old.as_str(), &new, 1)
            };
            out.files.insert(path.clone(), edited);
        }
        // Only the first replacement: the others edit what it produced.
        let original = fallback.take();
        out.tally.fallbacks += u64::from(original.is_some());
        out.emit(Line::Edit {
            path: path.clone(),
            old,
            new,
            all,
            original,
        });
    }
}

/// How Claude Code words a call that never ran because someone said no: the user
/// rejected it (or stopped the turn), a permission rule denied it, a hook blocked it.
/// Each phrase starts the result's text.
const REFUSALS: &[&str] = &[
    "The user doesn't want to proceed with this tool use",
    "The user doesn't want to take this action right now",
    "[Request interrupted by user",
    "Permission to use ",
    "PreToolUse:",
];

/// The texts of an error result to judge it by: its `tool_result` text and the
/// structured result when that is a string (`"Error: ..."`, as 1.0.x writes it).
fn error_texts(outcome: &ToolOutcome) -> impl Iterator<Item = &str> {
    let structured = outcome
        .result
        .as_ref()
        .and_then(Value::as_str)
        .map(|r| r.strip_prefix("Error: ").unwrap_or(r));
    std::iter::once(outcome.text.as_str())
        .chain(structured)
        .map(str::trim_start)
}

/// An error result that says the call was refused (see [`REFUSALS`]).
fn refused(outcome: &ToolOutcome) -> bool {
    error_texts(outcome).any(|t| {
        REFUSALS.iter().any(|p| t.starts_with(p))
            && (!t.starts_with("Permission to use ") || t.contains("has been denied"))
            && (!t.starts_with("PreToolUse:") || t.contains("hook"))
    })
}

/// Whether a Bash call whose result is an error ran anyway. It did, unless the result
/// is a refusal or the CLI rejected the call's input (`<tool_use_error>`: invalid
/// input, no such tool) before running it: a command that exits non-zero comes back
/// as an error, in CLI 1.0.x with nothing but its output, and its effects (the commit
/// of `git commit && git push` whose push failed) happened. A structured result with
/// stdout or stderr always ran.
fn bash_ran(outcome: &ToolOutcome) -> bool {
    let structured_ran = outcome
        .result
        .as_ref()
        .and_then(Value::as_object)
        .is_some_and(|r| r.contains_key("stdout") || r.contains_key("stderr"));
    let invalid = error_texts(outcome).any(|t| {
        t.starts_with("<tool_use_error>")
            || t.starts_with("InputValidationError")
            || t.starts_with("No such tool available")
    });
    structured_ran || !(refused(outcome) || invalid)
}

#[cfg(test)]
#[path = "mapping_tests.rs"]
mod tests;
