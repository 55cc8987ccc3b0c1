//! The harness-owned ledger: after each session the harness rewrites every entry's
//! `passes` (or, under the status schema, `status`, with each attempt's outcome in
//! `notes`) from `verified`, whatever the agent wrote, and blocks a feature after three
//! failed attempts. Writes are atomic. Whatever the agent did to the list (flipped a
//! flag without committing, deleted it, replaced it with a symlink or a directory) is
//! an ordinary slip: the gate writes its list anyway and commits it when it can.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, Result};
use crate::feature_list::{self, Contract, Entry, ListFormat, ListSchema, RenderOptions, Status};
use crate::fsutil::write_atomic;
use crate::observe::{Check, ListState, Observation};
use crate::suite::Task;
use crate::workspace::Workspace;

/// Failed attempts after which a feature is blocked.
pub const MAX_ATTEMPTS: u32 = 3;

/// The gate's memory across the sessions of one trial.
#[derive(Debug, Default)]
pub struct Gate {
    attempts: BTreeMap<String, u32>,
    blocked: BTreeSet<String>,
}

impl Gate {
    /// Rewrites the list after a session. An attempt on a feature is a session that
    /// started with it as the first unverified, unblocked feature of the canonical
    /// order (the one the protocol says to work on) and ended with it still failing;
    /// `coding` is false after the initializer session, which attempts nothing.
    ///
    /// Under the passes schema every `passes` becomes `verified`. Under the status
    /// schema the gate owns `status`: `completed` exactly when verified, `blocked` after
    /// [`MAX_ATTEMPTS`] failed attempts, `in_progress` for the one feature the next
    /// session is to work on, `pending` otherwise; the outcome of the session's attempt
    /// is appended to that entry's `notes` (`session`: its number).
    ///
    /// Returns the list as the next session will find it, and a note when the list
    /// could not be written or committed (the session record carries it).
    #[expect(clippy::too_many_arguments)]
    pub fn apply(
        &mut self,
        ws: &Workspace,
        task: &Task,
        format: ListFormat,
        schema: ListSchema,
        before: &Observation,
        after: &Observation,
        session: u32,
        coding: bool,
    ) -> (ListState, Option<String>) {
        let attempt_note = self.attempt_note(task, (before, after), session, coding);
        let passes = |obs: &Observation, id: &str| obs.verified.get(id) == Some(&Check::Pass);

        let (mut entries, contract): (Vec<Entry>, Contract) = match &after.list {
            ListState::Parsed(list) => (list.entries.clone(), list.contract.clone()),
            _ => (task.canonical_entries(), task.contract()),
        };
        let contract = match schema {
            // A list without its contract (the agent dropped it, or never had one)
            // gets the task's back; an agent's rewording stays, to be counted.
            ListSchema::Status if contract.is_empty() => task.contract(),
            _ => contract,
        };
        let next = task
            .features
            .iter()
            .find(|f| !passes(after, &f.id) && !self.blocked.contains(&f.id))
            .map(|f| f.id.as_str());
        // Notes go to the first entry of the id only, as every reader judges by it.
        let mut attempt_note = attempt_note.filter(|_| schema == ListSchema::Status);
        for e in &mut entries {
            let verified = passes(after, &e.id);
            match schema {
                ListSchema::Passes => e.passes = verified,
                ListSchema::Status => {
                    let state = if verified {
                        Status::Completed
                    } else if self.blocked.contains(&e.id) {
                        Status::Blocked
                    } else if Some(e.id.as_str()) == next {
                        Status::InProgress
                    } else {
                        Status::Pending
                    };
                    e.set_state(state);
                    if attempt_note.as_ref().is_some_and(|(id, _)| *id == e.id)
                        && let Some((_, note)) = attempt_note.take()
                    {
                        if !e.notes.is_empty() && !e.notes.ends_with('\n') {
                            e.notes.push('\n');
                        }
                        e.notes.push_str(&note);
                    }
                }
            }
        }
        let text = self.render(format, schema, &contract, &entries);
        let note = self
            .write_and_commit(ws, format, &text)
            .err()
            .map(|e| format!("gate: {e}"));
        let list = match feature_list::parse_with(format, schema, &text) {
            Ok(list) => ListState::Parsed(list),
            Err(e) => ListState::Unparseable(format!("the gate's own list: {e}")),
        };
        (list, note)
    }

    /// What became of the attempt of a coding session at the feature it was to work on
    /// (the first in task order not verified before it and not blocked), as the id and
    /// the note for that entry; counts a failed attempt, and blocks the feature after
    /// [`MAX_ATTEMPTS`]. `None` after the initializer, or when every feature was done.
    fn attempt_note(
        &mut self,
        task: &Task,
        (before, after): (&Observation, &Observation),
        session: u32,
        coding: bool,
    ) -> Option<(String, String)> {
        let passes = |obs: &Observation, id: &str| obs.verified.get(id) == Some(&Check::Pass);
        let f = task
            .features
            .iter()
            .find(|f| !passes(before, &f.id) && !self.blocked.contains(&f.id))
            .filter(|_| coding)?;
        if passes(after, &f.id) {
            return Some((f.id.clone(), format!("session {session}: verified")));
        }
        let n = self.attempts.entry(f.id.clone()).or_default();
        *n += 1;
        let mut note = format!("session {session}: attempt {n} failed");
        if *n >= MAX_ATTEMPTS {
            self.blocked.insert(f.id.clone());
            note.push_str(&format!("; blocked after {MAX_ATTEMPTS} failed attempts"));
        }
        Some((f.id.clone(), note))
    }

    /// Puts `text` at the list's path, replacing whatever stands there (never writing
    /// through a symlink), and commits that file alone when it differs from the last
    /// commit. The agent's own uncommitted work stays as it left it.
    fn write_and_commit(&self, ws: &Workspace, format: ListFormat, text: &str) -> Result<()> {
        let path = ws.work_dir.join(format.file_name());
        let is_file = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        if !is_file || std::fs::read_to_string(&path).ok().as_deref() != Some(text) {
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                std::fs::remove_dir_all(&path).map_err(|e| {
                    Error::io(
                        format!("cannot remove the directory '{}'", path.display()),
                        e,
                    )
                })?;
            }
            write_atomic(&path, text.as_bytes())?;
        }
        let name = format.file_name();
        crate::git::commit_file(&ws.work_dir, name, "loopbench gate: passes from verify")
            .map(drop)
            .map_err(|e| Error::Tool(format!("list written, not committed: {e}")))
    }

    /// Renders the list. Under the passes schema blocked entries carry
    /// `"blocked": true` (JSON, YAML) or a trailing `(blocked)` (Markdown), extra fields
    /// that every parser tolerates; under the status schema their state says it.
    fn render(
        &self,
        format: ListFormat,
        schema: ListSchema,
        contract: &Contract,
        entries: &[Entry],
    ) -> String {
        let contract = match schema {
            ListSchema::Passes => Contract::default(),
            ListSchema::Status => contract.clone(),
        };
        feature_list::render_with(
            format,
            schema,
            &contract,
            entries,
            &RenderOptions {
                blocked: &self.blocked,
            },
        )
    }
}
