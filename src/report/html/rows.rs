//! A run's tables as the rows of its page, read one row at a time: `sessions.csv` and
//! `trials.csv` with typed cells, each row's `against` mask, and each session's
//! `evidence` from `sessions.jsonl` (found through a small index of where each
//! session's record is, never the records themselves).

use std::path::Path;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::csv_text;
use crate::error::{Error, Result, ResultsDirError};
use crate::rates::{Metric, Unit, counts_against};
use crate::store::{JsonlAt, JsonlLines, SessionLineIndex, SessionLines};

/// The columns of `sessions.csv` and `trials.csv` that are text whatever they hold.
const TEXT_COLUMNS: [&str; 7] = [
    "trial_id", "arm", "task", "kind", "outcome", "ended_by", "error",
];

/// A table of records: column names and one array of values per row.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Rows {
    /// Column names.
    pub columns: Vec<String>,
    /// Rows, each with one value per column.
    pub rows: Vec<Vec<Value>>,
}

/// The rows of one of a run's CSV tables, typed, with `against` (and, for sessions,
/// `evidence`) appended, read one at a time.
pub struct TableRows {
    path: std::path::PathBuf,
    reader: csv::Reader<std::fs::File>,
    /// The CSV's columns, then `against` (and `evidence`).
    pub columns: Vec<String>,
    text: Vec<bool>,
    metrics: Vec<Metric>,
    evidence: Option<Evidence>,
    record: csv::StringRecord,
}

impl TableRows {
    /// The rows of `csv`, whose unit is `unit`; a session table takes each row's
    /// evidence from `jsonl`, when given.
    pub fn open(csv: &Path, unit: Unit, jsonl: Option<&Path>) -> Result<TableRows> {
        let mut reader = csv::Reader::from_path(csv).map_err(|e| bad(csv, None, &e))?;
        let mut columns: Vec<String> = reader
            .headers()
            .map_err(|e| bad(csv, Some(1), &e))?
            .iter()
            .map(str::to_string)
            .collect();
        let text = columns
            .iter()
            .map(|c| TEXT_COLUMNS.contains(&c.as_str()))
            .collect();
        let evidence = match jsonl {
            Some(jsonl) => Some(Evidence::index(jsonl, &columns)?),
            None => None,
        };
        columns.push("against".into());
        if evidence.is_some() {
            columns.push("evidence".into());
        }
        Ok(TableRows {
            path: csv.to_path_buf(),
            reader,
            columns,
            text,
            metrics: Metric::ALL
                .into_iter()
                .filter(|m| m.def().unit == unit)
                .collect(),
            evidence,
            record: csv::StringRecord::new(),
        })
    }

    /// The next row, or `None` after the last.
    pub fn next_row(&mut self) -> Result<Option<Vec<Value>>> {
        let more = self
            .reader
            .read_record(&mut self.record)
            .map_err(|e| bad(&self.path, e.position().map(|p| p.line()), &e))?;
        if !more {
            return Ok(None);
        }
        let mut row: Vec<Value> = self
            .record
            .iter()
            .zip(&self.text)
            .map(|(cell, &text)| typed(cell, text))
            .collect();
        let mask = against(&self.metrics, &self.columns, &row);
        row.push(Value::from(mask));
        if let Some(evidence) = self.evidence.as_mut() {
            let e = evidence.take(&row)?;
            row.push(e);
        }
        Ok(Some(row))
    }

    /// Every row, held: for tests and small tables.
    #[cfg(test)]
    pub fn collect(mut self) -> Result<Rows> {
        let mut rows = Vec::new();
        while let Some(row) = self.next_row()? {
            rows.push(row);
        }
        Ok(Rows {
            columns: self.columns,
            rows,
        })
    }
}

/// The header of a CSV table.
pub fn csv_columns(csv: &Path) -> Result<Vec<String>> {
    let mut reader = csv::Reader::from_path(csv).map_err(|e| bad(csv, None, &e))?;
    Ok(reader
        .headers()
        .map_err(|e| bad(csv, Some(1), &e))?
        .iter()
        .map(str::to_string)
        .collect())
}

/// The number of rows of a CSV table.
pub fn csv_row_count(csv: &Path) -> Result<usize> {
    let mut reader = csv::Reader::from_path(csv).map_err(|e| bad(csv, None, &e))?;
    let mut record = csv::ByteRecord::new();
    let mut n = 0;
    while reader
        .read_byte_record(&mut record)
        .map_err(|e| bad(csv, e.position().map(|p| p.line()), &e))?
    {
        n += 1;
    }
    Ok(n)
}

fn bad(path: &Path, line: Option<u64>, e: &dyn std::fmt::Display) -> Error {
    ResultsDirError::BadRecord {
        path: path.to_path_buf(),
        line,
        reason: e.to_string(),
    }
    .into()
}

/// A CSV cell as a JSON value: empty is null, `true`/`false` booleans, numbers
/// numbers, except in the text columns; text as it was before the CSV writer escaped it
/// ([`csv_text::unescape`]).
pub fn typed(cell: &str, text: bool) -> Value {
    if cell.is_empty() {
        return Value::Null;
    }
    if text {
        return Value::from(csv_text::unescape(cell));
    }
    match cell {
        "true" => return Value::Bool(true),
        "false" => return Value::Bool(false),
        _ => {}
    }
    if let Ok(i) = cell.parse::<i64>() {
        return Value::from(i);
    }
    match cell.parse::<f64>() {
        Ok(x) if x.is_finite() => Value::from(x),
        _ => Value::from(csv_text::unescape(cell)),
    }
}

/// The `against` mask of a row: bit i set when the row counts against its arm on
/// metric i ([`counts_against`], the rate table's own rule), of `metrics` (those of the
/// row's unit).
fn against(metrics: &[Metric], columns: &[String], row: &[Value]) -> u64 {
    let map: Map<String, Value> = columns.iter().cloned().zip(row.iter().cloned()).collect();
    metrics
        .iter()
        .filter(|m| counts_against(**m, &map) == Some(true))
        .fold(0u64, |mask, m| mask | (1u64 << m.index()))
}

/// Where the `evidence` of each (trial, session) is in `sessions.jsonl`: the last
/// record of a trial and session with an evidence object wins, as a rerun trial's
/// records follow its earlier ones; the first row of that session takes it.
struct Evidence {
    records: Option<JsonlAt>,
    at: SessionLineIndex,
    trial_column: Option<usize>,
    session_column: Option<usize>,
}

impl Evidence {
    fn index(jsonl: &Path, columns: &[String]) -> Result<Evidence> {
        let mut at = SessionLines::default();
        let mut lines = JsonlLines::open(jsonl)?;
        while let Some(line) = lines.next() {
            let line = line?;
            // Every line is read as a JSON object, as when the records were held.
            let record: Map<String, Value> = lines.parse(&line)?;
            let (Some(Value::String(trial)), Some(session)) = (
                record.get("trial_id"),
                // A session number past u32 is no record's: it has no evidence.
                record
                    .get("session")
                    .and_then(Value::as_u64)
                    .and_then(|s| u32::try_from(s).ok()),
            ) else {
                continue;
            };
            if !record.get("evidence").is_some_and(Value::is_object) {
                continue;
            }
            at.add(trial, session, line.offset);
        }
        let at = at.finish();
        let records = if at.is_empty() {
            None
        } else {
            Some(JsonlAt::open(jsonl)?)
        };
        Ok(Evidence {
            records,
            at,
            trial_column: columns.iter().position(|c| c == "trial_id"),
            session_column: columns.iter().position(|c| c == "session"),
        })
    }

    /// The evidence of the session on `row`, or null.
    fn take(&mut self, row: &[Value]) -> Result<Value> {
        let trial = self.trial_column.and_then(|i| row[i].as_str());
        let session = self
            .session_column
            .and_then(|i| row[i].as_u64())
            .and_then(|s| u32::try_from(s).ok());
        let (Some(trial), Some(session)) = (trial, session) else {
            return Ok(Value::Null);
        };
        let (Some(offset), Some(records)) = (self.at.take(trial, session), self.records.as_mut())
        else {
            return Ok(Value::Null);
        };
        let mut record: Map<String, Value> = records.record(offset)?;
        Ok(record.remove("evidence").unwrap_or(Value::Null))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_are_typed_except_in_text_columns() {
        assert_eq!(typed("", false), Value::Null);
        assert_eq!(typed("true", false), Value::Bool(true));
        assert_eq!(typed("12", false), Value::from(12));
        assert_eq!(typed("0.5", false), Value::from(0.5));
        assert_eq!(typed("12", true), Value::from("12"));
        assert_eq!(typed("x", false), Value::from("x"));
    }

    #[test]
    fn a_session_counts_against_its_arm_by_the_rate_tables_rule() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("sessions.csv");
        std::fs::write(
            &csv,
            "kind,premature_claims,clean_tree,progress_updated\n\
             coding,2,true,true\n\
             coding,0,false,true\n\
             initializer,3,false,false\n\
             coding,,true,true\n",
        )
        .unwrap();
        let rows = TableRows::open(&csv, Unit::Session, None)
            .unwrap()
            .collect()
            .unwrap();
        assert_eq!(rows.columns.last().unwrap(), "against");
        let bit = |m: Metric| 1u64 << m.index();
        let masks: Vec<u64> = rows.rows.iter().map(|r| r[4].as_u64().unwrap()).collect();
        assert_eq!(masks[0], bit(Metric::PrematureDone));
        // clean_exit is better higher: a session that did not end clean counts against.
        assert_eq!(masks[1], bit(Metric::CleanExit));
        assert_eq!(masks[2], 0, "the initializer is never counted");
        assert_eq!(masks[3], 0);
    }

    #[test]
    fn the_last_record_of_a_session_gives_its_evidence_to_its_first_row() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("sessions.csv");
        std::fs::write(
            &csv,
            "trial_id,session\na:t:0,1\na:t:0,1\na:t:0,2\nb:t:0,1\n",
        )
        .unwrap();
        let jsonl = dir.path().join("sessions.jsonl");
        std::fs::write(
            &jsonl,
            "{\"trial_id\":\"a:t:0\",\"session\":1,\"evidence\":{\"v\":1}}\n\
             {\"trial_id\":\"a:t:0\",\"session\":2,\"evidence\":null}\n\
             {\"trial_id\":\"a:t:0\",\"session\":1,\"evidence\":{\"v\":2}}\n",
        )
        .unwrap();
        let rows = TableRows::open(&csv, Unit::Session, Some(&jsonl))
            .unwrap()
            .collect()
            .unwrap();
        let evidence: Vec<&Value> = rows.rows.iter().map(|r| r.last().unwrap()).collect();
        assert_eq!(
            evidence,
            [
                &serde_json::json!({"v": 2}),
                &Value::Null,
                &Value::Null,
                &Value::Null
            ]
        );
    }
}
