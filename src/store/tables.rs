//! The CSV tables written from the JSONL records without holding them: one pass reads
//! each record's place in the table's order (arm, task, replicate, session) and where its
//! line starts, a small key per record; the keys are sorted, and a second pass reads the
//! records again in that order, one at a time, into the CSV.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::jsonl::{JsonlAt, JsonlLines};
use crate::csv_text::{Cell, Writer};
use crate::error::{Error, Result};
use crate::fsutil::write_atomic_with;
use crate::record::{SessionRecord, TrialRecord};

/// A record that is a row of one of the tables.
pub trait TableRecord: DeserializeOwned {
    /// Its CSV row.
    fn row(&self) -> Vec<Cell>;
}

impl TableRecord for SessionRecord {
    fn row(&self) -> Vec<Cell> {
        self.csv_row()
    }
}

impl TableRecord for TrialRecord {
    fn row(&self) -> Vec<Cell> {
        self.csv_row()
    }
}

/// What the first pass reads of a record: its place in the table, every other field
/// skipped unread (the second pass reads the whole record). A trial record has no
/// session: 0.
#[derive(Deserialize)]
struct Place {
    arm: String,
    task: String,
    replicate: u32,
    #[serde(default)]
    session: u32,
}

/// Where a record goes in the table and where its line is: arm and task as their
/// ranks, so that a key holds no text.
#[derive(Debug, Clone, Copy)]
struct RowKey {
    arm: u32,
    task: u32,
    replicate: u32,
    session: u32,
    offset: u64,
}

/// Distinct texts, each numbered once in the order first seen.
#[derive(Default)]
struct Names(BTreeMap<String, u32>);

impl Names {
    fn id(&mut self, name: &str) -> u32 {
        let next = self.0.len() as u32;
        match self.0.get(name) {
            Some(id) => *id,
            None => {
                self.0.insert(name.to_string(), next);
                next
            }
        }
    }
}

/// Writes the table `csv` with `header` from the records of `jsonl`, rows sorted by
/// (arm's place in `arm_order` (arms not in it last), arm, task, replicate, session),
/// records with equal keys in the order of the file: the bytes of sorting every record
/// in memory, without holding them.
pub fn write_table<T: TableRecord>(
    jsonl: &Path,
    csv: &Path,
    header: &[&str],
    arm_order: &[String],
) -> Result<()> {
    let mut arms = Names::default();
    let mut tasks = Names::default();
    let mut keys = Vec::new();
    let mut lines = JsonlLines::open(jsonl)?;
    while let Some(line) = lines.next() {
        let line = line?;
        let place: Place = lines.parse(&line)?;
        keys.push(RowKey {
            arm: arms.id(&place.arm),
            task: tasks.id(&place.task),
            replicate: place.replicate,
            session: place.session,
            offset: line.offset,
        });
    }
    // The ranks: arms by their place in `arm_order`, then by name; tasks by name.
    let arm_rank = rank(&arms, |name| {
        arm_order
            .iter()
            .position(|a| a == name)
            .unwrap_or(usize::MAX)
    });
    let task_rank = rank(&tasks, |_| 0);
    keys.sort_by_key(|k| {
        (
            arm_rank[k.arm as usize],
            task_rank[k.task as usize],
            k.replicate,
            k.session,
        )
    });
    let encode = |e: csv::Error| Error::Tool(format!("cannot encode '{}': {e}", csv.display()));
    write_atomic_with(csv, |out| {
        let mut writer = Writer::new(out);
        writer.header(header).map_err(encode)?;
        if !keys.is_empty() {
            let mut records = JsonlAt::open(jsonl)?;
            for k in &keys {
                let record: T = records.record(k.offset)?;
                writer.row(record.row()).map_err(encode)?;
            }
        }
        writer
            .flush()
            .map_err(|e| Error::io(format!("cannot write '{}'", csv.display()), e))
    })
}

/// Each name's rank in the order of (`first`, name).
fn rank(names: &Names, first: impl Fn(&str) -> usize) -> Vec<u32> {
    let mut order: Vec<(usize, &str, u32)> = names
        .0
        .iter()
        .map(|(name, id)| (first(name), name.as_str(), *id))
        .collect();
    order.sort();
    let mut ranks = vec![0; order.len()];
    for (r, (_, _, id)) in order.into_iter().enumerate() {
        ranks[id as usize] = r as u32;
    }
    ranks
}
