//! Reading a large CSV file a batch of rows at a time, so that what is held is one
//! batch and never the whole file: the file's own bytes, cut at record boundaries, and
//! the (trial_id, session) keys of `sessions.csv` seen across batches, per trial.

use std::collections::BTreeSet;
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

use polars::prelude::*;

use super::csv_input::unreadable;
use crate::error::Result;

/// Rows of `sessions.csv` read and reduced at a time: about 1 MB of text and 2 MB of
/// frame at the width of a session row, two batches of text held at once (one cut
/// while the other is reduced). Each batch costs a few fixed polars queries, so smaller
/// batches cost time, and larger ones memory: on a run of 10,000 trials (95,305 rows)
/// batches of 25,000 rows held 12.75 MB of text at once, and batches of 10,000 rows
/// made `report`'s peak heap 17.7 MB against 15.4 MB with 5,000 (heaptrack), for 0.74
/// against 0.79 CPU-seconds; `report` of a 1,000,000-row file took 4.7–5.1 CPU-seconds
/// with batches of 10,000 against 3.7–4.6 with 25,000 (release, one machine state).
pub(crate) const SESSION_BATCH_ROWS: usize = 5_000;

/// The batches of a CSV file: each is the header's bytes followed by the bytes of up to
/// `batch_rows` records, exactly as they are in the file, so that a reader of a batch
/// sees what it would see in the file (quoting, empty cells, a torn last line).
/// Record boundaries are found by the csv crate, so a quoted cell over several lines
/// stays whole. A file without records gives one batch: its header.
pub(crate) struct CsvBatches {
    path: std::path::PathBuf,
    records: csv::Reader<BufReader<File>>,
    raw: File,
    header: Vec<u8>,
    batch_rows: usize,
    /// Where the next batch's first record begins (already read into `record`), or
    /// `None` when every record has been given.
    next_start: Option<u64>,
    record: csv::ByteRecord,
    /// Whether a batch has been given: a file without records gives one, its header.
    gave_any: bool,
}

impl CsvBatches {
    /// Opens `path` for batches of `batch_rows` records (at least 1).
    pub(crate) fn open(path: &Path, batch_rows: usize) -> Result<CsvBatches> {
        let cannot = |e: &dyn std::fmt::Display| unreadable(path, e);
        let open = || File::open(path).map_err(|e| cannot(&e));
        // Flexible: rows of the wrong length are found by the checks of each batch, with
        // their line, as when the file is read whole; here only their ends matter.
        let mut records = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(true)
            .from_reader(BufReader::new(open()?));
        let mut raw = open()?;
        let mut record = csv::ByteRecord::new();
        let first = records
            .read_byte_record(&mut record)
            .map_err(|e| cannot(&e))?
            .then(|| record.position().map_or(0, csv::Position::byte));
        let header_len = match first {
            Some(start) => start,
            None => raw.metadata().map_err(|e| cannot(&e))?.len(),
        };
        let mut header = Vec::new();
        (&mut raw)
            .take(header_len)
            .read_to_end(&mut header)
            .map_err(|e| cannot(&e))?;
        Ok(CsvBatches {
            path: path.to_path_buf(),
            records,
            raw,
            header,
            batch_rows: batch_rows.max(1),
            next_start: first,
            record,
            gave_any: false,
        })
    }

    /// The next batch's bytes, or `None` after the last.
    pub(crate) fn next_batch(&mut self) -> Result<Option<Vec<u8>>> {
        let Some(start) = self.next_start else {
            if self.gave_any {
                return Ok(None);
            }
            self.gave_any = true;
            return Ok(Some(self.header.clone()));
        };
        self.gave_any = true;
        let cannot = |e: &dyn std::fmt::Display| unreadable(&self.path, e);
        // The record at `start` is read: the batch's others follow, then the next
        // batch's first, whose start is where this batch ends.
        let mut others = 0;
        while others < self.batch_rows {
            let more = self
                .records
                .read_byte_record(&mut self.record)
                .map_err(|e| cannot(&e))?;
            if !more {
                break;
            }
            others += 1;
        }
        let end = (others == self.batch_rows)
            .then(|| self.record.position().map_or(0, csv::Position::byte));
        self.next_start = end;
        self.raw
            .seek(SeekFrom::Start(start))
            .map_err(|e| cannot(&e))?;
        let len = match end {
            Some(end) => end - start,
            None => self.raw.metadata().map_err(|e| cannot(&e))?.len() - start,
        };
        // Sized once: grown as it is read, the buffer would be up to twice the batch.
        let mut batch = Vec::with_capacity(self.header.len() + len as usize);
        batch.extend_from_slice(&self.header);
        (&mut self.raw)
            .take(len)
            .read_to_end(&mut batch)
            .map_err(|e| cannot(&e))?;
        Ok(Some(batch))
    }
}

/// The sessions of each trial seen so far in the batches of `sessions.csv`, so that a
/// second row for a (trial_id, session) is found even when its two rows are in
/// different batches. A set of session numbers per trial id is per-trial state (a
/// 32-byte slot of the map and the id's bytes), where a set of every key would grow
/// with the rows.
#[derive(Default)]
pub(crate) struct SeenSessions {
    by_trial: PlHashMap<Box<str>, SessionSet>,
}

/// Session numbers of one trial: those below 64 (all in practice) as the bits of one
/// word, any others in a set made only for them.
#[derive(Default)]
struct SessionSet {
    low: u64,
    #[expect(
        clippy::box_collection,
        reason = "8 bytes a trial where the set itself is 24, and almost never made"
    )]
    high: Option<Box<BTreeSet<i64>>>,
}

impl SessionSet {
    /// Adds `session`; false when it was there already.
    fn insert(&mut self, session: i64) -> bool {
        if (0..64).contains(&session) {
            let bit = 1u64 << session;
            let new = self.low & bit == 0;
            self.low |= bit;
            new
        } else {
            self.high.get_or_insert_default().insert(session)
        }
    }
}

impl SeenSessions {
    /// Adds the (trial_id, session) of every row of `batch` (a String and an Int64
    /// column; rows with a null in either are left to the cell checks); false when one
    /// of them was seen before, in this batch or an earlier one.
    pub(crate) fn add(&mut self, batch: &DataFrame) -> PolarsResult<bool> {
        let trials = batch.column("trial_id")?.str()?;
        let sessions = batch.column("session")?.i64()?;
        for (trial, session) in trials.iter().zip(sessions.iter()) {
            let (Some(trial), Some(session)) = (trial, session) else {
                continue;
            };
            if let Some(set) = self.by_trial.get_mut(trial) {
                if !set.insert(session) {
                    return Ok(false);
                }
                continue;
            }
            let mut set = SessionSet::default();
            set.insert(session);
            self.by_trial.insert(trial.into(), set);
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batches(text: &str, rows: usize) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.csv");
        std::fs::write(&path, text).unwrap();
        let mut batches = CsvBatches::open(&path, rows).unwrap();
        let mut out = Vec::new();
        while let Some(batch) = batches.next_batch().unwrap() {
            out.push(String::from_utf8(batch).unwrap());
        }
        out
    }

    #[test]
    fn batches_are_the_header_and_the_files_own_bytes_cut_between_records() {
        let text = "a,b\n1,\"two\nlines\"\n\"3\",\"\"\n4,x\n5,y";
        assert_eq!(
            batches(text, 2),
            ["a,b\n1,\"two\nlines\"\n\"3\",\"\"\n", "a,b\n4,x\n5,y"]
        );
        assert_eq!(
            batches(text, 1),
            [
                "a,b\n1,\"two\nlines\"\n",
                "a,b\n\"3\",\"\"\n",
                "a,b\n4,x\n",
                "a,b\n5,y"
            ]
        );
        assert_eq!(batches(text, 4), [text]);
        assert_eq!(batches(text, 100), [text]);
    }

    #[test]
    fn a_file_without_records_is_one_batch_of_its_header() {
        assert_eq!(batches("a,b\n", 3), ["a,b\n"]);
        assert_eq!(batches("a,b", 3), ["a,b"]);
    }

    #[test]
    fn rows_of_the_wrong_length_are_left_to_the_checks() {
        assert_eq!(batches("a,b\n1\n2,3,4\n", 1), ["a,b\n1\n", "a,b\n2,3,4\n"]);
    }

    fn keys(rows: &[(&str, i64)]) -> DataFrame {
        df!(
            "trial_id" => rows.iter().map(|r| r.0).collect::<Vec<_>>(),
            "session" => rows.iter().map(|r| r.1).collect::<Vec<_>>(),
        )
        .unwrap()
    }

    #[test]
    fn a_session_seen_in_an_earlier_batch_is_found_again() {
        let mut seen = SeenSessions::default();
        assert!(seen.add(&keys(&[("a", 0), ("a", 1), ("b", 1)])).unwrap());
        assert!(seen.add(&keys(&[("b", 2), ("a", 70), ("c", 1)])).unwrap());
        assert!(!seen.add(&keys(&[("d", 1), ("a", 1)])).unwrap());
        let mut seen = SeenSessions::default();
        assert!(seen.add(&keys(&[("a", 70)])).unwrap());
        assert!(!seen.add(&keys(&[("a", 70)])).unwrap());
        let mut seen = SeenSessions::default();
        assert!(!seen.add(&keys(&[("a", 3), ("a", 3)])).unwrap());
    }
}
