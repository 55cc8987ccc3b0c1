//! Prints a compact per-session table when a run finishes.

use std::io::Write;

use super::table::{Align, Table};
use crate::error::{IoContext, Result};
use crate::events::{Event, EventKind, EventSink};
use crate::record::SessionRecord;

/// Collects session records and prints them as one table at the end of the run.
pub struct SessionTable<W: Write> {
    out: W,
    records: Vec<SessionRecord>,
}

impl<W: Write> SessionTable<W> {
    /// Prints to `out`.
    pub fn new(out: W) -> SessionTable<W> {
        SessionTable {
            out,
            records: Vec::new(),
        }
    }

    fn render(&self) -> String {
        let opt = |v: Option<u32>| v.map_or("-".to_string(), |v| v.to_string());
        let flag = |b: bool| if b { "y" } else { "n" }.to_string();
        let mut table = Table::new([
            ("trial", Align::Left),
            ("s", Align::Right),
            ("outcome", Align::Left),
            ("claimed", Align::Right),
            ("premature", Align::Right),
            ("+verified", Align::Right),
            ("regressed", Align::Right),
            ("told_false", Align::Right),
            ("desc", Align::Right),
            ("steps", Align::Right),
            ("-entries", Align::Right),
            ("-tests", Align::Right),
            ("weakened", Align::Right),
            ("dup_fx", Align::Right),
            ("clean", Align::Left),
            ("notes", Align::Left),
            ("resumed", Align::Left),
            ("resume_ok", Align::Left),
        ]);
        for r in &self.records {
            let m = &r.metrics;
            table.push(vec![
                r.key.trial_id.clone(),
                r.session.to_string(),
                r.outcome.as_str().to_string(),
                opt(m.newly_claimed),
                opt(m.premature_claims),
                m.newly_verified.to_string(),
                m.regressions.to_string(),
                opt(m.told_false),
                opt(m.desc_edits),
                opt(m.step_edits),
                opt(m.entries_removed),
                m.tests_removed.map_or("-".to_string(), |v| v.to_string()),
                opt(m.tests_weakened),
                m.dup_side_effects.to_string(),
                flag(m.clean_tree),
                flag(m.progress_updated),
                flag(m.resumed),
                m.resume_success.map_or("-".to_string(), flag),
            ]);
        }
        table.to_plain()
    }
}

impl<W: Write> EventSink for SessionTable<W> {
    fn handle(&mut self, event: &Event) -> Result<()> {
        match &event.kind {
            EventKind::SessionFinished(record) => self.records.push(record.as_ref().clone()),
            EventKind::RunFinished => {
                let text = self.render();
                self.out
                    .write_all(text.as_bytes())
                    .and_then(|()| self.out.flush())
                    .io_context(|| "cannot print the session table".to_string())?;
            }
            _ => {}
        }
        Ok(())
    }
}
