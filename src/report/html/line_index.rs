//! Where the line of each (trial, session) starts in one of a run's JSONL files, so that
//! a record can be read back when the page needs it instead of being held. One sorted
//! vector of fixed-size entries: a hash map of the same keys took twice the bytes, and
//! the page of a 10,000-trial run held three of them (some 12 MB).

use std::collections::HashMap;

/// Offsets and line numbers of a JSONL file's lines by (trial id, session). Where a
/// trial and session has several lines, the last one is kept, as a rerun trial's records
/// follow its earlier ones.
#[derive(Default)]
pub(super) struct LineIndex {
    trials: HashMap<String, u32>,
    lines: Vec<Line>,
    sorted: bool,
}

#[derive(Clone, Copy)]
struct Line {
    trial: u32,
    session: u64,
    offset: u64,
    number: usize,
}

/// The offset of a line already taken ([`LineIndex::take`]).
const TAKEN: u64 = u64::MAX;

impl LineIndex {
    /// Adds the line at `offset` (line `number`) of `trial`'s session `session`; lines
    /// are added in file order.
    pub(super) fn add(&mut self, trial: &str, session: u64, offset: u64, number: usize) {
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
            number,
        });
        self.sorted = false;
    }

    /// Whether no line was added.
    pub(super) fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The offset and line number of `trial`'s session `session`.
    pub(super) fn get(&mut self, trial: &str, session: u64) -> Option<(u64, usize)> {
        let at = self.position(trial, session)?;
        let line = self.lines[at];
        (line.offset != TAKEN).then_some((line.offset, line.number))
    }

    /// [`LineIndex::get`], once: the line is not given again.
    pub(super) fn take(&mut self, trial: &str, session: u64) -> Option<(u64, usize)> {
        let found = self.get(trial, session)?;
        if let Some(at) = self.position(trial, session) {
            self.lines[at].offset = TAKEN;
        }
        Some(found)
    }

    fn position(&mut self, trial: &str, session: u64) -> Option<usize> {
        self.sort();
        let trial = *self.trials.get(trial)?;
        self.lines
            .binary_search_by_key(&(trial, session), |l| (l.trial, l.session))
            .ok()
    }

    /// Sorts by key once every line is in, the last line of a key kept.
    fn sort(&mut self) {
        if self.sorted {
            return;
        }
        // Stable, so that a key's lines stay in file order; then the last of each run of
        // equal keys is kept.
        self.lines.sort_by_key(|l| (l.trial, l.session));
        self.lines.reverse();
        self.lines.dedup_by_key(|l| (l.trial, l.session));
        self.lines.reverse();
        self.lines.shrink_to_fit();
        self.sorted = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_line_of_a_key_is_found_and_taken_once() {
        let mut index = LineIndex::default();
        index.add("b", 1, 0, 1);
        index.add("a", 2, 10, 2);
        index.add("b", 1, 20, 3);
        index.add("a", 1, 30, 4);
        index.add("b", 1, 40, 5);
        assert_eq!(index.get("b", 1), Some((40, 5)));
        assert_eq!(index.get("a", 2), Some((10, 2)));
        assert_eq!(index.get("a", 1), Some((30, 4)));
        assert_eq!(index.get("a", 3), None);
        assert_eq!(index.get("c", 1), None);
        assert_eq!(index.take("a", 2), Some((10, 2)));
        assert_eq!(index.take("a", 2), None);
        assert_eq!(index.get("a", 2), None);
        // Lines added after a look are found too.
        index.add("c", 7, 50, 6);
        assert_eq!(index.get("c", 7), Some((50, 6)));
        assert_eq!(index.get("b", 1), Some((40, 5)));
    }

    #[test]
    fn an_empty_index_finds_nothing() {
        let mut index = LineIndex::default();
        assert!(index.is_empty());
        assert_eq!(index.get("a", 1), None);
    }
}
