//! Where the line of each (trial, session) starts in one of a run's JSONL files
//! (`sessions.jsonl`, `trajectories.jsonl`), so that a record can be read back when it
//! is needed instead of being held. One sorted vector of 16-byte entries (a line's number
//! is counted only for an error: [`super::JsonlAt::record`]): hash maps of the same keys
//! took three times the bytes, and the page of a 10,000-trial run held three.

use std::collections::HashMap;
use std::path::Path;

use super::JsonlLines;
use crate::error::Result;

/// The fields every line of `sessions.jsonl` and `trajectories.jsonl` has, which the
/// index reads of it (the rest of the line is skipped, never held).
#[derive(serde::Deserialize)]
struct SessionKey {
    trial_id: String,
    session: u32,
}

/// Offsets of a JSONL file's lines by (trial id, session). Where a
/// trial and session has several lines, the last one is kept, as a rerun trial's records
/// follow its earlier ones.
pub struct SessionLineIndex {
    trials: HashMap<String, u32>,
    /// Sorted by (trial, session), one entry a key.
    lines: Vec<Line>,
}

#[derive(Clone, Copy)]
struct Line {
    trial: u32,
    session: u32,
    offset: u64,
}

/// The offset of a line already taken ([`SessionLineIndex::take`]).
const TAKEN: u64 = u64::MAX;

impl SessionLineIndex {
    /// The index of every line of the JSONL file `path`, read a line at a time; empty
    /// when the file does not exist.
    pub fn build(path: &Path) -> Result<SessionLineIndex> {
        let mut index = SessionLines::default();
        let mut lines = JsonlLines::open(path)?;
        while let Some(line) = lines.next() {
            let line = line?;
            let key: SessionKey = lines.parse(&line)?;
            index.add(&key.trial_id, key.session, line.offset);
        }
        Ok(index.finish())
    }

    /// The offset of the line of `trial`'s session `session`.
    pub fn get(&self, trial: &str, session: u32) -> Option<u64> {
        let line = self.lines[self.position(trial, session)?];
        (line.offset != TAKEN).then_some(line.offset)
    }

    /// [`SessionLineIndex::get`], once: the line is not given again.
    pub fn take(&mut self, trial: &str, session: u32) -> Option<u64> {
        let at = self.position(trial, session)?;
        let line = self.lines[at];
        self.lines[at].offset = TAKEN;
        (line.offset != TAKEN).then_some(line.offset)
    }

    /// The sessions of `trial` that have a line, in order.
    pub fn sessions(&self, trial: &str) -> Vec<u32> {
        let Some(&trial) = self.trials.get(trial) else {
            return Vec::new();
        };
        let start = self.lines.partition_point(|l| l.trial < trial);
        self.lines[start..]
            .iter()
            .take_while(|l| l.trial == trial)
            .map(|l| l.session)
            .collect()
    }

    /// No line at all.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    fn position(&self, trial: &str, session: u32) -> Option<usize> {
        let trial = *self.trials.get(trial)?;
        self.lines
            .binary_search_by_key(&(trial, session), |l| (l.trial, l.session))
            .ok()
    }
}

/// A [`SessionLineIndex`] being made from lines a reader chose, in file order.
#[derive(Default)]
pub struct SessionLines {
    trials: HashMap<String, u32>,
    lines: Vec<Line>,
}

impl SessionLines {
    /// Adds the line at `offset` of `trial`'s session `session`.
    pub fn add(&mut self, trial: &str, session: u32, offset: u64) {
        let next = u32::try_from(self.trials.len()).unwrap_or(u32::MAX);
        let trial = match self.trials.get(trial) {
            Some(id) => *id,
            None => {
                self.trials.insert(trial.to_string(), next);
                next
            }
        };
        self.lines.push(Line {
            trial,
            session,
            offset,
        });
    }

    /// The index: sorted by key, the last line of each key kept.
    pub fn finish(mut self) -> SessionLineIndex {
        // A key's lines in file order (their offsets grow with it), sorted in place:
        // a stable sort would take a copy of the index's size. Reversed, the first of
        // each run of equal keys is the file's last.
        self.lines
            .sort_unstable_by_key(|l| (l.trial, l.session, l.offset));
        self.lines.reverse();
        self.lines.dedup_by_key(|l| (l.trial, l.session));
        self.lines.reverse();
        self.lines.shrink_to_fit();
        SessionLineIndex {
            trials: self.trials,
            lines: self.lines,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_line_of_a_key_is_found_and_taken_once() {
        let mut lines = SessionLines::default();
        lines.add("b", 1, 0);
        lines.add("a", 2, 10);
        lines.add("b", 1, 20);
        lines.add("a", 1, 30);
        lines.add("b", 1, 40);
        let mut index = lines.finish();
        assert_eq!(index.get("b", 1), Some(40));
        assert_eq!(index.get("a", 2), Some(10));
        assert_eq!(index.get("a", 1), Some(30));
        assert_eq!(index.get("a", 3), None);
        assert_eq!(index.get("c", 1), None);
        assert_eq!(index.sessions("a"), [1, 2]);
        assert_eq!(index.sessions("b"), [1]);
        assert!(index.sessions("c").is_empty());
        assert_eq!(index.take("a", 2), Some(10));
        assert_eq!(index.take("a", 2), None);
        assert_eq!(index.get("a", 2), None);
    }

    #[test]
    fn a_file_is_indexed_by_its_lines_keys_and_a_missing_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.jsonl");
        let first = "{\"trial_id\":\"t1\",\"session\":2,\"x\":1}\n";
        let second = "{\"trial_id\":\"t0\",\"session\":1}\n";
        let rerun = "{\"trial_id\":\"t1\",\"session\":2,\"x\":2}\n";
        std::fs::write(&path, format!("{first}{second}{rerun}")).unwrap();
        let index = SessionLineIndex::build(&path).unwrap();
        assert_eq!(index.get("t0", 1), Some(first.len() as u64));
        assert_eq!(
            index.get("t1", 2),
            Some((first.len() + second.len()) as u64)
        );
        assert!(
            SessionLineIndex::build(&dir.path().join("none.jsonl"))
                .unwrap()
                .is_empty()
        );
    }
}
