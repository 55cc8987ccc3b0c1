//! The calls of a Codex session → trace actions.
//!
//! | call | action |
//! | --- | --- |
//! | a shell command that ran (any exit code) | `run` in the directory it ran in, relative to the root |
//! | a shell command refused, stopped by the sandbox, or without a result | nothing (counted) |
//! | `apply_patch` that succeeded: Add File | `write` of its content |
//! | Delete File | `delete` |
//! | Update File | per chunk an `edit` of its old lines into its new lines; on a file whose content the importer knows, a `write` of the patched content (a chunk it cannot match there: the session is divergent) |
//! | Update File with Move to | the edits, then `run` of `mkdir -p` and `mv` (or, on a known file, `delete` and `write`) |
//! | a change recorded with its content (nested calls) | the same, from its unified diff |
//! | a change recorded without its content (`exec --json`) | `skip`; the session is divergent |
//! | anything else (`update_plan`, `web_search`, the `exec` tool itself, MCP tools) | nothing; counted as without a file effect |
//!
//! **What the importer knows of a file**: the content of its Add File, and the result
//! of each patch it applied itself since. A shell command may change any file without
//! showing how, so after one the importer knows nothing: the chunks that follow are
//! edits replay applies to what it finds, as the agent's patch did. A chunk whose lines
//! are not in a file the importer knows means the file changed in a way the transcript
//! does not show (an editor, another process): the session is divergent. An undo or
//! rollback Codex recorded is such a change too.

use super::outcome::{Answer, Ran};
use super::patch::{Chunk, Hunk, apply, parse, unified_diff_chunks};
use super::session::{Call, Change, ChangeKind, CodexSession, What};
use crate::agent::trace::Line;
use crate::import::emit::{Caller, Emitter};
use crate::import::paths::{relative, shell_quote};
use crate::import::tally::SkipReason;

/// Maps the calls of `session` onto `out`. `seen` holds the call ids of earlier
/// sessions: a call with one of them is a copy (a resumed or forked session repeats
/// its history) and is not applied again.
pub fn map_session(
    session: &CodexSession,
    out: &mut Emitter,
    seen: &mut std::collections::HashSet<String>,
) {
    for call in &session.calls {
        if seen.insert(call.id.clone()) {
            map_call(out, call, session.answers.get(&call.id));
        }
    }
    for (at, what) in &session.unseen_changes {
        let caller = Caller {
            tool: "codex",
            origin: at,
            cwd: None,
        };
        out.diverged(&caller, None, what);
        out.forget_all();
    }
}

/// Maps one call, given what became of it (`None`: it never got an answer), onto `out`:
/// its actions, and the call and its output for the trajectory.
pub fn map_call(out: &mut Emitter, call: &Call, answer: Option<&Answer>) {
    let caller = Caller {
        tool: tool_name(&call.what),
        origin: &call.origin,
        cwd: call.cwd.as_deref(),
    };
    out.note(Line::Call {
        tool: caller.tool.to_string(),
        id: Some(call.id.clone()),
        input: call_input(&call.what),
    });
    match (&call.what, answer) {
        (What::Tool(name), _) => out.ignored(name),
        (_, None) => out.unanswered(),
        (what, Some(answer)) => {
            let ran = match what {
                What::Shell(_) => answer.shell(),
                _ => answer.patch(),
            };
            match ran {
                Ran::Refused => out.failed(true),
                Ran::Failed(_) => out.failed(false),
                Ran::Yes => out.call(|out| apply_call(out, call, &caller)),
            }
        }
    }
    if let Some(answer) = answer {
        out.note(Line::Output {
            id: Some(call.id.clone()),
            output: answer.text.clone().unwrap_or_default(),
            exit: answer.exit_code,
            error: answer.success == Some(false)
                || matches!(answer.status.as_deref(), Some("failed" | "declined")),
        });
    }
}

/// A call's arguments, for the trajectory.
fn call_input(what: &What) -> serde_json::Value {
    match what {
        What::Shell(script) => serde_json::json!({ "command": script }),
        What::Patch(patch) => serde_json::json!({ "patch": patch }),
        What::Changes(changes) => serde_json::json!({
            "paths": changes.iter().map(|c| c.path.clone()).collect::<Vec<_>>()
        }),
        What::ChangedPaths(paths) => serde_json::json!({ "paths": paths }),
        What::Tool(_) => serde_json::Value::Null,
    }
}

fn tool_name(what: &What) -> &str {
    match what {
        What::Shell(_) => "shell",
        What::Patch(_) => "apply_patch",
        What::Changes(_) => "file_change",
        What::ChangedPaths(_) => "file_change",
        What::Tool(name) => name,
    }
}

fn apply_call(out: &mut Emitter, call: &Call, caller: &Caller) {
    match &call.what {
        What::Shell(script) => {
            out.run(caller, script);
            out.forget_all();
        }
        What::Patch(patch) => match parse(patch) {
            Ok(hunks) => {
                for hunk in hunks {
                    apply_hunk(out, caller, hunk);
                }
            }
            Err(e) => {
                let reason = format!("Codex applied a patch the importer cannot read: {e}");
                out.skip(caller, None, SkipReason::Unreconstructed, &reason);
                out.diverged(caller, None, &reason);
            }
        },
        What::Changes(changes) => {
            for change in changes {
                apply_change(out, caller, change);
            }
        }
        What::ChangedPaths(paths) => {
            let reason = "codex exec --json records the files a patch changed, not their content: import the session's rollout file for its edits";
            for path in paths {
                let rel = relative(path, out.root()).ok();
                out.skip(caller, Some(path), SkipReason::Unreconstructed, reason);
                out.diverged(caller, rel.as_deref(), reason);
            }
            if paths.is_empty() {
                out.skip(caller, None, SkipReason::Unreconstructed, reason);
                out.diverged(caller, None, reason);
            }
        }
        What::Tool(_) => {}
    }
}

fn apply_change(out: &mut Emitter, caller: &Caller, change: &Change) {
    let hunk = match &change.kind {
        ChangeKind::Add(content) => Hunk::Add {
            path: change.path.clone(),
            content: content.clone(),
        },
        ChangeKind::Delete => Hunk::Delete {
            path: change.path.clone(),
        },
        ChangeKind::Update { diff, move_to } => match unified_diff_chunks(diff) {
            Ok(chunks) => Hunk::Update {
                path: change.path.clone(),
                move_to: move_to.clone(),
                chunks,
            },
            Err(e) => {
                let reason = format!("a recorded change the importer cannot read: {e}");
                out.skip(
                    caller,
                    Some(&change.path),
                    SkipReason::Unreconstructed,
                    &reason,
                );
                let rel = relative(&change.path, out.root()).ok();
                return out.diverged(caller, rel.as_deref(), &reason);
            }
        },
    };
    apply_hunk(out, caller, hunk);
}

fn apply_hunk(out: &mut Emitter, caller: &Caller, hunk: Hunk) {
    match hunk {
        Hunk::Add { path, content } => {
            if let Some(path) = out.path(caller, &path) {
                out.write(path, content);
            }
        }
        Hunk::Delete { path } => {
            if let Some(path) = out.path(caller, &path) {
                out.delete(path);
            }
        }
        Hunk::Update {
            path,
            move_to,
            chunks,
        } => {
            let Some(path) = out.path(caller, &path) else {
                return;
            };
            let target = match move_to {
                Some(to) => match out.path(caller, &to) {
                    Some(to) => Some(to),
                    None => return,
                },
                None => None,
            };
            update(out, caller, path, target, &chunks);
        }
    }
}

/// An Update File hunk on `path`, moved to `target`.
fn update(
    out: &mut Emitter,
    caller: &Caller,
    path: String,
    target: Option<String>,
    chunks: &[Chunk],
) {
    if let Some(known) = out.files.get(&path).cloned() {
        match apply(&known, chunks) {
            Ok(patched) => {
                match target {
                    Some(to) if to != path => {
                        out.delete(path);
                        out.write(to, patched);
                    }
                    _ => match as_edits(&known, chunks, &patched) {
                        Some(edits) => {
                            for (old, new) in edits {
                                out.emit(Line::Edit {
                                    path: path.clone(),
                                    old,
                                    new,
                                    all: false,
                                    original: None,
                                });
                            }
                            out.files.insert(path, patched);
                        }
                        None => out.write(path, patched),
                    },
                }
                return;
            }
            Err(e) => out.diverged(
                caller,
                Some(&path),
                &format!("its patch does not match what the transcript says {path} held: {e}"),
            ),
        }
    }
    for chunk in chunks {
        if chunk.old.is_empty() {
            // Lines added at the end of a file whose content is unknown: no edit says that.
            let reason = format!(
                "a chunk that appends to {path}, whose content the transcript does not show"
            );
            out.skip(caller, Some(&path), SkipReason::Unreconstructed, &reason);
            out.diverged(caller, Some(&path), &reason);
            continue;
        }
        let lines = |l: &[String]| l.iter().map(|s| format!("{s}\n")).collect::<String>();
        out.emit(Line::Edit {
            path: path.clone(),
            old: lines(&chunk.old),
            new: lines(&chunk.new),
            all: false,
            original: None,
        });
    }
    if let Some(to) = target.filter(|to| *to != path) {
        let dir = to.rsplit_once('/').map(|(d, _)| d);
        let mkdir = dir.map_or(String::new(), |d| {
            format!("mkdir -p -- {} && ", shell_quote(d))
        });
        out.emit(Line::Run {
            cmd: format!(
                "{mkdir}mv -f -- {} {}",
                shell_quote(&path),
                shell_quote(&to)
            ),
            cwd: None,
        });
        out.files.remove(&path);
    }
}

/// The chunks as `edit`s (old lines into new lines), when replay applying them in turn
/// to `known` gives exactly `patched`: each one's old text occurs once where it is
/// applied. `None` when only a `write` says it exactly.
fn as_edits(known: &str, chunks: &[Chunk], patched: &str) -> Option<Vec<(String, String)>> {
    let lines = |l: &[String]| l.iter().map(|s| format!("{s}\n")).collect::<String>();
    let mut text = known.to_string();
    let mut edits = Vec::new();
    for chunk in chunks {
        let (old, new) = (lines(&chunk.old), lines(&chunk.new));
        if old.is_empty() || text.matches(old.as_str()).count() != 1 {
            return None;
        }
        text = text.replacen(old.as_str(), &new, 1);
        edits.push((old, new));
    }
    (text == patched).then_some(edits)
}
