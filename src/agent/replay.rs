//! The replay driver: applies a recorded trace, session by session, to a work directory.
//! Paths are confined to the work directory, and so is the directory a `run` action
//! starts in; a missing `edit` text or a missing `run` directory is a failed action.
//! A `run` action is a recorded agent's shell command: it runs in the sandbox (the
//! work directory writable, no network, the oracle and the run directory hidden; for a
//! task made for a container, a fresh container of its image), or, when the user said
//! `--unsandboxed`, on the host without network.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::driver::{Agent, SessionContext, SessionRun};
use super::trace::{Line, Trace, TraceSession};
use super::trajectory::{Act, EditOp, Entry, TEXT_LIMIT};
use crate::agent::Outcome;
use crate::error::{Error, IoContext, Result, SandboxError};
use crate::fsutil::GIT_DIR;
use crate::fsutil::confine;
use crate::process::{Isolation, ShellCommand};
use crate::sandbox::Hidden;

/// Time limit of one replayed `run` action.
pub const RUN_ACTION_TIMEOUT: Duration = Duration::from_secs(600);

/// Where a trace's `run` actions execute.
#[derive(Debug, Clone)]
pub enum RunActions {
    /// In the sandbox, hiding these places.
    Sandboxed(Hidden),
    /// On the host (without network where the machine allows): the user's choice.
    Unsandboxed,
}

/// Plays a [`Trace`] as an agent.
pub struct ReplayAgent {
    sessions: std::vec::IntoIter<TraceSession>,
    current: Option<TraceSession>,
    run_actions: RunActions,
}

impl ReplayAgent {
    /// An agent that plays `trace` from its first session, running its `run` actions
    /// as `run_actions` says.
    pub fn new(trace: Trace, run_actions: RunActions) -> ReplayAgent {
        ReplayAgent {
            sessions: trace.sessions.into_iter(),
            current: None,
            run_actions,
        }
    }
}

impl Agent for ReplayAgent {
    fn next_session(&mut self) -> Option<u32> {
        self.current = self.sessions.next();
        self.current.as_ref().map(|s| s.n)
    }

    fn run_session(&mut self, ctx: &SessionContext<'_>) -> Result<SessionRun> {
        let Some(session) = self.current.take() else {
            return Err(Error::Tool("replay: no session left to run".into()));
        };
        let mut run = SessionRun {
            outcome: session.outcome,
            usage: session.usage,
            actions_failed: 0,
            error: None,
            bad_input: false,
            truth: None,
            divergent: session.divergent,
            failure: None,
            // A trace's `end` status is what its importer read in the recorded CLI's
            // own log (Codex `turn_aborted`): the recording's fact, kept as the outcome.
            declared_interrupted: false,
            trajectory: Default::default(),
        };
        let mut notes = Vec::new();
        for action in &session.actions {
            let had_git = ctx.workspace.work_dir.join(GIT_DIR).is_dir();
            let applied = apply(&action.op, ctx, &self.run_actions);
            if had_git && !ctx.workspace.work_dir.join(GIT_DIR).is_dir() {
                notes.push(format!(
                    "line {}: this action removed {GIT_DIR}; commits and the tree's state can no longer be observed",
                    action.line
                ));
            }
            let failed = match &applied {
                Ok(Applied::Failed(failure)) => Some(failure.clone()),
                Err(e) => Some(e.to_string()),
                _ => None,
            };
            let ran = match &applied {
                Ok(Applied::Ran(ran)) => Some(ran.clone()),
                _ => None,
            };
            run.trajectory.extend(entry(&action.op, failed, ran));
            match applied {
                Ok(Applied::Done) => {}
                Ok(Applied::Ran(ran)) => {
                    if let Some(note) = ran.note {
                        notes.push(format!("line {}: {note}", action.line));
                    }
                }
                Ok(Applied::AfterReset) => run.divergent = true,
                Ok(Applied::Failed(failure)) => {
                    run.actions_failed += 1;
                    notes.push(format!("line {}: {failure}", action.line));
                }
                Err(e @ Error::PathEscape { .. }) => {
                    run.outcome = Outcome::Error;
                    run.bad_input = true;
                    notes.push(format!("line {}: {e}", action.line));
                    break;
                }
                Err(e) => return Err(e),
            }
        }
        if !notes.is_empty() {
            run.error = Some(notes.join("; "));
        }
        // The trial loop puts its own outcome and usage on the end; the summary is the
        // trace's.
        run.trajectory.push(Entry::from(Act::End {
            reason: run.outcome.as_str().to_string(),
            usage: run.usage,
            summary: session.summary,
        }));
        Ok(run)
    }
}

/// The trajectory's entry of one trace line, as replay applied it (`failed`: why not),
/// `ran` the output of a `run` action. `None` for a line that is no act.
fn entry(op: &Line, failed: Option<String>, ran: Option<Ran>) -> Option<Entry> {
    let edit = |path: &str, op, old: Option<&str>, new: Option<&str>| Act::Edit {
        path: path.to_string(),
        op,
        old: old.map(str::to_string),
        new: new.map(str::to_string),
        failed: failed.clone(),
    };
    let act = match op {
        Line::Write { path, content } => edit(path, EditOp::Write, None, Some(content)),
        Line::Edit { path, old, new, .. } => edit(path, EditOp::Edit, Some(old), Some(new)),
        Line::Delete { path } => edit(path, EditOp::Delete, None, None),
        Line::Run { cmd, cwd } => {
            let ran = ran.unwrap_or_default();
            let mut entry = Entry::from(Act::Command {
                cmd: cmd.clone(),
                cwd: cwd.clone(),
                output: ran.output.or(failed.clone()),
                exit: ran.exit,
            });
            if ran.cut {
                // Kept from its end: how long it was is not known.
                entry.cut.insert("output".into(), 0);
            }
            return Some(entry);
        }
        Line::Say { text, from } => Act::Message {
            text: text.clone(),
            from: from.clone(),
        },
        Line::Call { tool, id, input } => Act::ToolCall {
            tool: tool.clone(),
            id: id.clone(),
            input: input.clone(),
        },
        Line::Output {
            id,
            output,
            exit,
            error,
        } => Act::ToolResult {
            id: id.clone(),
            output: output.clone(),
            exit: *exit,
            error: *error,
        },
        Line::Skip {
            tool,
            path,
            reason,
            rejected,
        } => Act::Rejected {
            tool: tool.clone(),
            path: path.clone(),
            reason: reason.clone().unwrap_or_default(),
            by_agent: *rejected,
        },
        Line::Session { .. } | Line::Usage { .. } | Line::End { .. } => return None,
    };
    Some(Entry::from(act))
}

/// What a replayed `run` action printed and how it exited.
#[derive(Debug, Clone, Default, PartialEq)]
struct Ran {
    /// The last [`TEXT_LIMIT`] bytes it printed, stdout then stderr.
    output: Option<String>,
    /// Its exit status; `None` when killed.
    exit: Option<i64>,
    /// It printed more than the output keeps.
    cut: bool,
    /// A limit of the sandbox it reached, worth the record.
    note: Option<String>,
}

/// How one action went.
#[derive(Debug, PartialEq)]
enum Applied {
    /// As recorded.
    Done,
    /// An edit whose old text was missing, applied after resetting the file to what the
    /// agent saw (the edit's `original`): the session diverged from the recording.
    AfterReset,
    /// A failed action that the trial survives.
    Failed(String),
    /// A `run` action that ran: its output, and a limit of the sandbox it reached.
    Ran(Ran),
}

impl From<Option<String>> for Applied {
    fn from(failure: Option<String>) -> Applied {
        failure.map_or(Applied::Done, Applied::Failed)
    }
}

/// The directory a `run` action starts in: the work directory, or its `cwd` under it
/// (confined like a path: an escape is an error of the trace). `Ok(Err(..))` when that
/// directory is not there, which fails the action, not the trial.
fn start_dir(root: &Path, cwd: Option<&str>) -> Result<std::result::Result<PathBuf, String>> {
    let Some(rel) = cwd.filter(|c| {
        !Path::new(c)
            .components()
            .all(|part| part == std::path::Component::CurDir)
    }) else {
        return Ok(Ok(root.to_path_buf()));
    };
    confine(root, rel)?;
    // The work directory as the sandbox binds it, not its canonical path.
    let dir = root.join(rel);
    Ok(if dir.is_dir() {
        Ok(dir)
    } else {
        Err(format!("run in '{rel}': no such directory"))
    })
}

/// Applies one action.
fn apply(op: &Line, ctx: &SessionContext<'_>, run_actions: &RunActions) -> Result<Applied> {
    match op {
        Line::Write { path, content } => write_file(&ctx.workspace.work_dir, path, content),
        Line::Edit {
            path,
            old,
            new,
            all,
            original,
        } => edit_file(
            &ctx.workspace.work_dir,
            path,
            old,
            new,
            *all,
            original.as_deref(),
        ),
        Line::Delete { path } => delete_file(&ctx.workspace.work_dir, path),
        Line::Run { cmd, cwd } => run_command(ctx, run_actions, cmd, cwd.as_deref()),
        // A skip documents what an importer could not apply, and the trajectory's
        // lines what the transcript showed: nothing to do.
        Line::Session { .. }
        | Line::Skip { .. }
        | Line::Say { .. }
        | Line::Call { .. }
        | Line::Output { .. }
        | Line::Usage { .. }
        | Line::End { .. } => Ok(Applied::Done),
    }
}

/// Writes `content` to `path`, creating its directory.
fn write_file(root: &Path, path: &str, content: &str) -> Result<Applied> {
    let target = confine(root, path)?;
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)
            .io_context(|| format!("cannot create '{}'", parent.display()))?;
    }
    Ok(std::fs::write(&target, content)
        .err()
        .map(|e| format!("write '{path}' failed: {e}"))
        .into())
}

/// Replaces `old` by `new` in `path` (every occurrence with `all`); where the file does
/// not hold `old` but `original` (what the agent saw) does, the edit is applied to that.
fn edit_file(
    root: &Path,
    path: &str,
    old: &str,
    new: &str,
    all: bool,
    original: Option<&str>,
) -> Result<Applied> {
    let target = confine(root, path)?;
    let found = std::fs::read_to_string(&target)
        .ok()
        .filter(|text| !old.is_empty() && text.contains(old));
    let (text, applied) = match (found, original) {
        (Some(text), _) => (text, Applied::Done),
        (None, Some(original)) if !old.is_empty() && original.contains(old) => {
            (original.to_string(), Applied::AfterReset)
        }
        (None, _) => {
            let why = if target.is_file() {
                "old text not found"
            } else {
                "cannot read it"
            };
            return Ok(Applied::Failed(format!("edit '{path}': {why}")));
        }
    };
    if let Some(parent) = target.parent() {
        std::fs::create_dir_all(parent)
            .io_context(|| format!("cannot create '{}'", parent.display()))?;
    }
    let edited = if all {
        text.replace(old, new)
    } else {
        text.replacen(old, new, 1)
    };
    Ok(match std::fs::write(&target, edited) {
        Ok(()) => applied,
        Err(e) => Applied::Failed(format!("edit '{path}' failed: {e}")),
    })
}

/// Deletes the file or directory `path`.
fn delete_file(root: &Path, path: &str) -> Result<Applied> {
    let target = confine(root, path)?;
    let result = match std::fs::symlink_metadata(&target) {
        Err(_) => return Ok(Applied::Failed(format!("delete '{path}': no such file"))),
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(&target),
        Ok(_) => std::fs::remove_file(&target),
    };
    Ok(result
        .err()
        .map(|e| format!("delete '{path}' failed: {e}"))
        .into())
}

/// Runs `cmd` from `cwd` (relative to the work directory), in the sandbox when the
/// actions run sandboxed.
fn run_command(
    ctx: &SessionContext<'_>,
    run_actions: &RunActions,
    cmd: &str,
    cwd: Option<&str>,
) -> Result<Applied> {
    // A command that exits non-zero is what the agent saw too; only a command
    // that cannot be started is a failure of the replay itself.
    let root = &ctx.workspace.work_dir;
    let start = match start_dir(root, cwd)? {
        Ok(dir) => dir,
        Err(failure) => return Ok(Applied::Failed(failure)),
    };
    let ws = ctx.workspace;
    let git_config_dir = ws.git_config.parent().unwrap_or(root);
    let layout = match run_actions {
        RunActions::Sandboxed(hidden) => {
            let mut layout = hidden.layout(root, &[], &[git_config_dir]);
            // The effects log's channel, which the command can write but neither read,
            // remove, rename nor change.
            layout.readable.push(
                std::path::absolute(&ws.effects_channel)
                    .unwrap_or_else(|_| ws.effects_channel.clone()),
            );
            layout.start_dir = (start != *root)
                .then(|| std::path::absolute(&start).unwrap_or_else(|_| start.clone()));
            Some(layout)
        }
        RunActions::Unsandboxed => None,
    };
    let (outcome, printed) = ShellCommand {
        script: cmd,
        cwd: &start,
        env: ctx.env,
        timeout: RUN_ACTION_TIMEOUT,
        isolation: layout.as_ref().map_or(Isolation::Host, Isolation::Sandbox),
    }
    .run_keeping_tail(TEXT_LIMIT + 1)
    .map_err(|e| SandboxError::or_io(e, || format!("cannot run '{cmd}'")))?;
    let cut = printed.len() > TEXT_LIMIT;
    let kept = &printed[printed.len().saturating_sub(TEXT_LIMIT)..];
    Ok(Applied::Ran(Ran {
        output: Some(String::from_utf8_lossy(kept).into_owned()),
        cut,
        exit: outcome.code.map(i64::from),
        note: (!outcome.limits_reached.is_empty())
            .then(|| format!("'{cmd}' {}", outcome.limits_reached.join("; "))),
    }))
}
