//! One Codex session as its transcript records it, whichever form it came in (a
//! rollout file or a `codex exec --json` capture): its calls in order, what became of
//! each, its usage and how it ended.

use std::collections::HashMap;
use std::path::PathBuf;

use super::outcome::Answer;
use crate::agent::Usage;
use crate::agent::trace::EndStatus;

/// One Codex session.
#[derive(Debug, Clone)]
pub struct CodexSession {
    /// The file it was read from.
    pub file: PathBuf,
    /// Its id (`session_meta.id`, or the capture's `thread_id`).
    pub id: Option<String>,
    /// The directory Codex ran in (`session_meta.cwd`).
    pub cwd: Option<String>,
    /// When it started, in ns since the epoch (`session_meta.timestamp`).
    pub started: Option<i128>,
    /// The file, shell and other tool calls, in the order they were made.
    pub calls: Vec<Call>,
    /// What became of each call, by call id.
    pub answers: HashMap<String, Answer>,
    /// Model calls and tokens.
    pub usage: Usage,
    /// How it ended, as its turn events say (a call without a result makes it
    /// `interrupted` too).
    pub status: EndStatus,
    /// Changes Codex made that the transcript does not show: an undo, a rollback
    /// (`file:line` and what happened).
    pub unseen_changes: Vec<(String, String)>,
    /// What kind of transcript it is, for people.
    pub form: &'static str,
}

/// One call of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// Matched by its answer.
    pub id: String,
    /// What it does.
    pub what: What,
    /// `file:line` it came from.
    pub origin: String,
    /// The absolute directory it ran in, when known.
    pub cwd: Option<String>,
}

/// What a call does to the files.
#[derive(Debug, Clone, PartialEq)]
pub enum What {
    /// A shell script (`shell`, `exec_command`, `local_shell_call`, a nested command).
    Shell(String),
    /// An `apply_patch` patch.
    Patch(String),
    /// Changes recorded with their content (an item or end event of a patch Codex
    /// applied for a nested call).
    Changes(Vec<Change>),
    /// Files changed without their content (`codex exec --json`'s `file_change`).
    ChangedPaths(Vec<String>),
    /// A tool without a file effect of its own (`exec` runs its nested calls, which
    /// come as calls of their own; `update_plan`, `web_search`, MCP tools...).
    Tool(String),
}

/// One recorded file change.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// As recorded (absolute, or relative to the call's directory).
    pub path: String,
    /// What happened to it.
    pub kind: ChangeKind,
}

/// What happened to a changed file.
#[derive(Debug, Clone, PartialEq)]
pub enum ChangeKind {
    /// Created with this content.
    Add(String),
    /// Removed.
    Delete,
    /// Changed as this unified diff says, and maybe moved.
    Update {
        /// `@@` hunks with context.
        diff: String,
        /// The new path, when it moved.
        move_to: Option<String>,
    },
}
