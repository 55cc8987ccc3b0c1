//! The harness-owned ledger: after each session the harness rewrites every entry's
//! `passes` from `verified`, whatever the agent wrote, and blocks a feature after three
//! failed attempts. Writes are atomic. Whatever the agent did to the list (flipped a
//! flag without committing, deleted it, replaced it with a symlink or a directory) is
//! an ordinary slip: the gate writes its list anyway and commits it when it can.

use std::collections::{BTreeMap, BTreeSet};

use crate::error::{Error, Result};
use crate::feature_list::{self, Contract, Entry, ListFormat, ListSchema, RenderOptions};
use crate::fsutil::write_atomic;
use crate::observe::{Check, ListState, Observation};
use crate::suite::Task;
use crate::workspace::{Workspace, git};

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
    /// order (the one the protocol says to work on) and ended with it still failing.
    /// Returns the list as the next session will find it, and a note when the list
    /// could not be written or committed (the session record carries it).
    pub fn apply(
        &mut self,
        ws: &Workspace,
        task: &Task,
        format: ListFormat,
        before: &Observation,
        after: &Observation,
    ) -> (ListState, Option<String>) {
        let current = task.features.iter().find(|f| {
            before.verified.get(&f.id) != Some(&Check::Pass) && !self.blocked.contains(&f.id)
        });
        if let Some(f) = current
            && after.verified.get(&f.id) != Some(&Check::Pass)
        {
            let n = self.attempts.entry(f.id.clone()).or_default();
            *n += 1;
            if *n >= MAX_ATTEMPTS {
                self.blocked.insert(f.id.clone());
            }
        }

        let mut entries: Vec<Entry> = match &after.list {
            ListState::Parsed(list) => list.entries.clone(),
            _ => task.canonical_entries(),
        };
        for e in &mut entries {
            e.passes = after.verified.get(&e.id) == Some(&Check::Pass);
        }
        let text = self.render(format, &entries);
        let note = self
            .write_and_commit(ws, format, &text)
            .err()
            .map(|e| format!("gate: {e}"));
        let list = match feature_list::parse(format, &text) {
            Ok(list) => ListState::Parsed(list),
            Err(e) => ListState::Unparseable(format!("the gate's own list: {e}")),
        };
        (list, note)
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
        git(&ws.work_dir, &["add", "--", name])
            .map_err(|e| Error::Tool(format!("list written, not committed: {e}")))?;
        let staged = git(
            &ws.work_dir,
            &[
                "diff",
                "--cached",
                "--name-only",
                "--no-ext-diff",
                "--",
                name,
            ],
        )
        .map_err(|e| Error::Tool(format!("list written, not committed: {e}")))?;
        if staged.trim().is_empty() {
            return Ok(());
        }
        git(
            &ws.work_dir,
            &[
                "commit",
                "-q",
                "--no-verify",
                "-m",
                "loopbench gate: passes from verify",
                "--",
                name,
            ],
        )
        .map_err(|e| Error::Tool(format!("list written, not committed: {e}")))?;
        Ok(())
    }

    /// Renders the list; blocked entries carry `"blocked": true` (JSON, YAML) or a
    /// trailing `(blocked)` (Markdown), extra fields that every parser tolerates.
    fn render(&self, format: ListFormat, entries: &[Entry]) -> String {
        feature_list::render_with(
            format,
            ListSchema::Passes,
            &Contract::default(),
            entries,
            &RenderOptions {
                blocked: &self.blocked,
            },
        )
    }
}
