//! Reading a run's `sessions.csv` and `trials.csv` into typed polars frames: the
//! columns the rates need, checked against the record format first so that a bad cell
//! is reported with its file, line and column.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use polars::prelude::*;

use super::csv_input::{Cell, Input};
use crate::error::{Error, Result};
use crate::rates::ADDED_COLUMNS;
use crate::rates::Metric;
use crate::rates::Unit;
use crate::run_dir::{SESSIONS_CSV, TRIALS_CSV};

/// The two tables of a run, as read.
pub struct RunTables {
    /// `sessions.csv`: the id columns and every column a session-level rate reads,
    /// plus `divergent` when the file has it.
    pub sessions: DataFrame,
    /// `trials.csv`: the id columns, `features_verified` and every column a trial-level
    /// rate reads, plus `tokens` and `cost_usd` when the file has them.
    pub trials: DataFrame,
    /// Where `sessions` was read from.
    pub sessions_path: PathBuf,
    /// Where `trials` was read from.
    pub trials_path: PathBuf,
}

impl RunTables {
    /// Reads and checks `dir/sessions.csv` and `dir/trials.csv`.
    ///
    /// Errors name the directory, file or column at fault: a missing directory or file
    /// or a missing required column is [`Error::BadInput`]; a row that does not fit the
    /// record format is [`Error::BadLine`] (both exit 2).
    pub fn read(dir: &Path) -> Result<RunTables> {
        if !dir.is_dir() {
            return Err(Error::BadInput(format!(
                "run directory '{}' does not exist",
                dir.display()
            )));
        }
        let sessions_path = dir.join(SESSIONS_CSV);
        let trials_path = dir.join(TRIALS_CSV);
        let sessions = read_csv(
            &sessions_path,
            &session_schema(),
            &[("divergent", DataType::Boolean)],
        )?;
        let trials = read_csv(
            &trials_path,
            &trial_schema(),
            &[("tokens", DataType::Int64), ("cost_usd", DataType::Float64)],
        )?;
        Ok(RunTables {
            sessions,
            trials,
            sessions_path,
            trials_path,
        })
    }
}

/// The columns of the table of `unit` that the rates read, each once, with whether it is
/// boolean (else an integer), in table order.
fn tally_columns(unit: Unit) -> Vec<(&'static str, bool)> {
    let mut out: Vec<(&'static str, bool)> = Vec::new();
    for m in Metric::ALL.into_iter().filter(|m| m.def().unit == unit) {
        for column in m.def().tally.columns() {
            if !out.iter().any(|(c, _)| *c == column.0) {
                out.push(column);
            }
        }
    }
    out
}

/// Id columns every file must have.
const SESSION_ID_COLUMNS: [&str; 7] = [
    "trial_id",
    "arm",
    "task",
    "replicate",
    "session",
    "kind",
    "outcome",
];
const TRIAL_ID_COLUMNS: [&str; 4] = ["trial_id", "arm", "task", "replicate"];

/// Columns of `sessions.csv` the report needs; any other column is optional.
pub fn required_session_columns() -> Vec<&'static str> {
    SESSION_ID_COLUMNS
        .into_iter()
        .chain(tally_columns(Unit::Session).into_iter().map(|(c, _)| c))
        .filter(|c| !ADDED_COLUMNS.contains(c))
        .collect()
}

/// Columns of `trials.csv` the report needs; any other column is optional.
pub fn required_trial_columns() -> Vec<&'static str> {
    TRIAL_ID_COLUMNS
        .into_iter()
        .chain([crate::rates::FEATURES_VERIFIED])
        .chain(tally_columns(Unit::Trial).into_iter().map(|(c, _)| c))
        .filter(|c| !ADDED_COLUMNS.contains(c))
        .collect()
}
fn session_schema() -> Vec<(&'static str, DataType)> {
    let mut schema: Vec<(&str, DataType)> = ["trial_id", "arm", "task", "kind", "outcome"]
        .into_iter()
        .map(|c| (c, DataType::String))
        .collect();
    // Not counted, but checked: every row names its trial's replicate and its session.
    schema.extend([("replicate", DataType::Int64), ("session", DataType::Int64)]);
    schema.extend(tally_columns(Unit::Session).into_iter().map(column_type));
    schema
}

fn trial_schema() -> Vec<(&'static str, DataType)> {
    let mut schema = vec![
        ("trial_id", DataType::String),
        ("arm", DataType::String),
        ("task", DataType::String),
        ("replicate", DataType::Int64),
        (crate::rates::FEATURES_VERIFIED, DataType::Int64),
    ];
    schema.extend(tally_columns(Unit::Trial).into_iter().map(column_type));
    schema
}

fn column_type((name, boolean): (&'static str, bool)) -> (&'static str, DataType) {
    (
        name,
        if boolean {
            DataType::Boolean
        } else {
            DataType::Int64
        },
    )
}

/// Reads the columns of `schema`, and those of `optional` that the file has, from a
/// CSV file with those types, after checking that the file has every required column.
/// Types are set, not inferred, so that an all-empty column is a column of nulls rather
/// than of strings.
fn read_csv(
    path: &Path,
    schema: &[(&'static str, DataType)],
    optional: &[(&'static str, DataType)],
) -> Result<DataFrame> {
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let required = if file_name == SESSIONS_CSV {
        required_session_columns()
    } else {
        required_trial_columns()
    };
    let headers = check_header(path, &required)?;
    let checked = checked_columns(schema.iter().chain(optional));
    let key: &[&str] = if file_name == SESSIONS_CSV {
        &["trial_id", "session"]
    } else {
        &["trial_id"]
    };
    let has = |name: &str| headers.iter().any(|h| h == name);
    // The whole of each k <= n pair is read too, to check the pair, and dropped after.
    let in_schema = |name: &str| schema.iter().chain(optional).any(|(n, _)| *n == name);
    let bound_only: Vec<(&'static str, DataType)> = super::csv_input::parts_in(has)
        .into_iter()
        .flat_map(|(part, whole)| [part, whole])
        .filter(|c| !in_schema(c))
        .map(|c| (c, DataType::Int64))
        .collect();
    let checked = checked
        .into_iter()
        .chain(checked_columns(bound_only.iter()))
        .collect();
    let input = Input::new(path, &headers, checked, key);
    // Columns of older records that this file lacks: added afterwards as nulls.
    let absent: Vec<(&str, DataType)> = schema
        .iter()
        .filter(|(name, _)| ADDED_COLUMNS.contains(name) && !has(name))
        .cloned()
        .collect();
    let schema: Vec<(&str, DataType)> = schema
        .iter()
        .filter(|(name, _)| !absent.iter().any(|(a, _)| a == name))
        .chain(
            optional
                .iter()
                .filter(|(name, _)| headers.iter().any(|h| h == name)),
        )
        .chain(&bound_only)
        .cloned()
        .collect();
    let overwrite: Schema = schema
        .iter()
        .map(|(name, dtype)| Field::new((*name).into(), dtype.clone()))
        .collect();
    let columns: Arc<[PlSmallStr]> = schema.iter().map(|(name, _)| (*name).into()).collect();
    let df = CsvReadOptions::default()
        .with_has_header(true)
        .with_columns(Some(columns))
        .with_schema_overwrite(Some(Arc::new(overwrite)))
        .try_into_reader_with_file_path(Some(path.to_path_buf()))
        .and_then(|reader| reader.finish())
        .map_err(|e| input.explain(&e))?;
    input.check_frame(&df)?;
    let df = df.drop_many(bound_only.iter().map(|(name, _)| *name));
    if absent.is_empty() {
        return Ok(df);
    }
    let nulls: Vec<Expr> = absent
        .iter()
        .map(|(name, dtype)| lit(NULL).cast(dtype.clone()).alias(*name))
        .collect();
    df.lazy()
        .with_columns(nulls)
        .collect()
        .map_err(|e| Error::BadInput(format!("cannot read '{}': {e}", path.display())))
}

/// The columns of a schema, as the cells the record format allows in them.
fn checked_columns<'a>(
    schema: impl Iterator<Item = &'a (&'static str, DataType)>,
) -> Vec<(&'static str, Cell)> {
    schema.map(|(n, t)| (*n, Cell::of(n, t))).collect()
}

/// The file's column names; fails with a message naming the file and the first
/// missing column.
fn check_header(path: &Path, required: &[&str]) -> Result<Vec<String>> {
    let mut reader = match csv::Reader::from_path(path) {
        Ok(reader) => reader,
        Err(e) => {
            let missing = matches!(e.kind(), csv::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound);
            return Err(Error::BadInput(if missing {
                format!(
                    "'{}' does not exist (report needs sessions.csv and trials.csv)",
                    path.display()
                )
            } else {
                format!("cannot read '{}': {e}", path.display())
            }));
        }
    };
    let headers = reader
        .headers()
        .map_err(|e| Error::BadInput(format!("cannot read '{}': {e}", path.display())))?;
    for column in required {
        if !headers.iter().any(|h| h == *column) {
            return Err(Error::BadInput(format!(
                "'{}' has no column '{column}' (required: {})",
                path.display(),
                required.join(", ")
            )));
        }
    }
    Ok(headers.iter().map(str::to_string).collect())
}
