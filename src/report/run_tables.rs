//! Reading a run's `sessions.csv` (a batch of rows at a time) and `trials.csv` into
//! typed polars frames: the columns the rates need, checked against the record format
//! first so that a bad cell is reported with its file, line and column.

use std::borrow::Cow;
use std::io::Cursor;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use polars::prelude::*;

use super::csv_batches::{CsvBatches, SESSION_BATCH_ROWS, SeenSessions};
use super::csv_input::{Cell, Input, unreadable};
use crate::csv_text;
use crate::error::{Error, Result, ResultsDirError};
use crate::rates::ADDED_COLUMNS;
use crate::rates::Metric;
use crate::rates::Unit;
use crate::run_dir::RunDir;

/// The two tables of a run, opened for reading: `sessions.csv`, which grows with the
/// sessions of a run, is read a batch of rows at a time by whoever reduces it
/// ([`SessionsCsv::reduce`]); `trials.csv`, one row per trial, is read whole
/// ([`RunTables::read_trials`]). Read the sessions first, so that a run with faults in
/// both files is refused for the first fault of `sessions.csv`.
pub struct RunTables {
    /// `sessions.csv`, its header checked.
    pub sessions: SessionsCsv,
    /// Where `trials.csv` is.
    pub trials_path: PathBuf,
}

impl RunTables {
    /// Opens `dir/sessions.csv` (checking that it has every required column) and finds
    /// `dir/trials.csv`.
    ///
    /// Errors name the directory, file or column at fault: a missing directory or file
    /// or a missing required column is [`Error::BadInput`]; a row that does not fit the
    /// record format (found as the rows are read) is [`Error::BadLine`] (both exit 2).
    pub fn read(run: &RunDir) -> Result<RunTables> {
        if !run.path().is_dir() {
            return Err(ResultsDirError::RunMissing {
                dir: run.path().to_path_buf(),
            }
            .into());
        }
        let sessions = CsvTable::open(
            Table::Sessions,
            &run.sessions_csv(),
            &session_schema(),
            &[("divergent", DataType::Boolean)],
        )?;
        Ok(RunTables {
            sessions: SessionsCsv {
                table: sessions,
                batch_rows: SESSION_BATCH_ROWS,
            },
            trials_path: run.trials_csv(),
        })
    }

    /// Reads and checks `trials.csv` whole: the id columns, `features_verified` and
    /// every column a trial-level rate reads, plus `tokens` and `cost_usd` when the file
    /// has them. It has one row per trial, and the summary keeps a few numbers per
    /// trial anyway (the bootstrap's clusters, `features_verified`, usage).
    pub fn read_trials(&self) -> Result<DataFrame> {
        CsvTable::open(
            Table::Trials,
            &self.trials_path,
            &trial_schema(),
            &[("tokens", DataType::Int64), ("cost_usd", DataType::Float64)],
        )?
        .read_whole()
    }
}

/// A run's `sessions.csv`, read a batch of rows at a time.
pub struct SessionsCsv {
    table: CsvTable,
    /// Rows read, checked and reduced at a time ([`SESSION_BATCH_ROWS`] unless set).
    pub batch_rows: usize,
}

impl SessionsCsv {
    /// Where the file is.
    pub fn path(&self) -> &Path {
        &self.table.path
    }

    /// Reads the file [`SessionsCsv::batch_rows`] rows at a time and gives each batch to
    /// `reduce`, as a frame of the id columns and every column a session-level rate
    /// reads, plus `divergent` when the file has it; returns what `reduce` gave for each
    /// batch, in file order. A file without rows gives one empty batch. So that only one
    /// batch is held, `reduce` should keep what sums need, not the rows.
    ///
    /// Each batch is checked as the whole file would be (its cells; (trial_id, session)
    /// not in an earlier row, of this batch or another); at the first batch with a fault
    /// the file is scanned row by row for the first one, named by file, line and column
    /// ([`Error::BadLine`]).
    pub fn reduce<T>(&self, mut reduce: impl FnMut(DataFrame) -> Result<T>) -> Result<Vec<T>> {
        let mut batches = CsvBatches::open(&self.table.path, self.batch_rows)?;
        std::thread::scope(|scope| {
            // The next batch is cut from the file while this one is parsed and reduced:
            // the cutting is one thread's sequential scan, which would otherwise add to
            // polars' time instead of overlapping it. A rendezvous, so that one batch
            // waits, cut, beside the one being reduced: a queue would hold a third.
            let (ahead, next) = std::sync::mpsc::sync_channel(0);
            scope.spawn(move || {
                loop {
                    let batch = batches.next_batch();
                    let last = !matches!(batch, Ok(Some(_)));
                    if ahead.send(batch).is_err() || last {
                        break;
                    }
                }
            });
            let mut seen = SeenSessions::default();
            let mut out = Vec::new();
            for batch in next {
                let Some(bytes) = batch? else { break };
                // Repeated keys, in this batch or across batches, are `seen`'s to find.
                let batch = self.table.checked(
                    CsvReadOptions::default()
                        .with_has_header(true)
                        .with_columns(Some(self.table.columns()))
                        .with_schema_overwrite(Some(self.table.overwrite()))
                        .into_reader_with_file_handle(Cursor::new(bytes))
                        .finish(),
                    |input, df| input.check_cells(df),
                )?;
                let new = seen.add(&batch).map_err(|e| self.table.cannot_check(&e))?;
                if !new {
                    return Err(self.table.input().refuse());
                }
                out.push(reduce(self.table.finish(batch)?)?);
            }
            Ok(out)
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

/// How to read and check one of the CSV files: its header, the columns read (with
/// their types), the cells checked and the key no two rows may share.
struct CsvTable {
    path: PathBuf,
    headers: Vec<String>,
    /// The columns read, with their types: the schema's columns that the file has, the
    /// optional ones it has, and the rest of each k <= n pair (`bound_only`).
    schema: Vec<(&'static str, DataType)>,
    /// The cells each read column must hold.
    checked: Vec<(&'static str, Cell)>,
    /// The columns no two rows may share values in.
    key: &'static [&'static str],
    /// Columns read only to check a k <= n pair, dropped after.
    bound_only: Vec<(&'static str, DataType)>,
    /// Columns of older records that this file lacks: added as nulls after reading.
    absent: Vec<(&'static str, DataType)>,
}

/// Which of a run's two tables a file is: what it must hold, and its key.
#[derive(Debug, Clone, Copy)]
enum Table {
    /// `sessions.csv`: one row per (trial_id, session).
    Sessions,
    /// `trials.csv`: one row per trial_id.
    Trials,
}

impl CsvTable {
    /// The reading of the columns of `schema`, and those of `optional` that the file
    /// has, from the CSV file `path`, after checking that the file has every required
    /// column. Types are set, not inferred, so that an all-empty column is a column of
    /// nulls rather than of strings.
    fn open(
        table: Table,
        path: &Path,
        schema: &[(&'static str, DataType)],
        optional: &[(&'static str, DataType)],
    ) -> Result<CsvTable> {
        let required = match table {
            Table::Sessions => required_session_columns(),
            Table::Trials => required_trial_columns(),
        };
        let headers = check_header(path, &required)?;
        let key: &'static [&'static str] = match table {
            Table::Sessions => &["trial_id", "session"],
            Table::Trials => &["trial_id"],
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
        let checked = checked_columns(schema.iter().chain(optional))
            .into_iter()
            .chain(checked_columns(bound_only.iter()))
            .collect();
        let absent: Vec<(&'static str, DataType)> = schema
            .iter()
            .filter(|(name, _)| ADDED_COLUMNS.contains(name) && !has(name))
            .cloned()
            .collect();
        let read: Vec<(&'static str, DataType)> = schema
            .iter()
            .filter(|(name, _)| !absent.iter().any(|(a, _)| a == name))
            .chain(optional.iter().filter(|(name, _)| has(name)))
            .chain(&bound_only)
            .cloned()
            .collect();
        Ok(CsvTable {
            path: path.to_path_buf(),
            headers,
            schema: read,
            checked,
            key,
            bound_only,
            absent,
        })
    }

    fn input(&self) -> Input<'_> {
        Input::new(&self.path, &self.headers, self.checked.clone(), self.key)
    }

    /// The names of the columns read.
    fn columns(&self) -> Arc<[PlSmallStr]> {
        self.schema.iter().map(|(name, _)| (*name).into()).collect()
    }

    /// The types of the columns read.
    fn overwrite(&self) -> SchemaRef {
        Arc::new(
            self.schema
                .iter()
                .map(|(name, dtype)| Field::new((*name).into(), dtype.clone()))
                .collect(),
        )
    }

    /// Reads and checks the whole file.
    fn read_whole(&self) -> Result<DataFrame> {
        let df = self.checked(
            CsvReadOptions::default()
                .with_has_header(true)
                .with_columns(Some(self.columns()))
                .with_schema_overwrite(Some(self.overwrite()))
                .try_into_reader_with_file_path(Some(self.path.clone()))
                .and_then(|reader| reader.finish()),
            |input, df| input.check_frame(df),
        )?;
        self.finish(df)
    }

    /// The frame polars read from the file (or a batch of it), once `check` passed it
    /// ([`Input::check_frame`], or [`Input::check_cells`] for a batch whose keys
    /// [`SeenSessions`] checks); a failure to read is explained by the first row that
    /// does not fit.
    fn checked(
        &self,
        read: PolarsResult<DataFrame>,
        check: impl Fn(&Input<'_>, &DataFrame) -> Result<()>,
    ) -> Result<DataFrame> {
        let input = self.input();
        let df = read.map_err(|e| input.explain(&e))?;
        let df = read_text_cells(df).map_err(|e| self.cannot_read(&e))?;
        check(&input, &df)?;
        Ok(df)
    }

    /// A checked frame without the columns read only for the checks, and with the
    /// columns this file lacks as nulls.
    fn finish(&self, df: DataFrame) -> Result<DataFrame> {
        let df = df.drop_many(self.bound_only.iter().map(|(name, _)| *name));
        if self.absent.is_empty() {
            return Ok(df);
        }
        let nulls: Vec<Expr> = self
            .absent
            .iter()
            .map(|(name, dtype)| lit(NULL).cast(dtype.clone()).alias(*name))
            .collect();
        df.lazy()
            .with_columns(nulls)
            .collect()
            .map_err(|e| self.cannot_read(&e))
    }

    fn cannot_read(&self, e: &PolarsError) -> Error {
        unreadable(&self.path, e)
    }

    fn cannot_check(&self, e: &PolarsError) -> Error {
        ResultsDirError::Uncheckable {
            path: self.path.clone(),
            reason: e.to_string(),
        }
        .into()
    }
}

/// `df` with each text cell as the text it holds: the prefix the project's CSV writer
/// puts before a text that would start a formula taken off ([`csv_text::unescape`]), so
/// that an arm named `=x`, written `'=x`, is the arm `=x` again. A cell that held only
/// the prefix is empty, a null as any empty cell.
fn read_text_cells(mut df: DataFrame) -> PolarsResult<DataFrame> {
    let text: Vec<PlSmallStr> = df
        .columns()
        .iter()
        .filter(|c| c.dtype() == &DataType::String)
        .map(|c| c.name().clone())
        .collect();
    for name in text {
        let cells = df.column(name.as_str())?.str()?;
        if !cells.iter().flatten().any(|c| c != csv_text::unescape(c)) {
            continue;
        }
        let read = cells.apply(|cell| {
            cell.map(csv_text::unescape)
                .filter(|c| !c.is_empty())
                .map(Cow::Borrowed)
        });
        df.with_column(read.into_series().into_column())?;
    }
    Ok(df)
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
            return Err(if missing {
                ResultsDirError::TableMissing {
                    path: path.to_path_buf(),
                }
                .into()
            } else {
                unreadable(path, &e)
            });
        }
    };
    let headers = reader.headers().map_err(|e| unreadable(path, &e))?;
    for column in required {
        if !headers.iter().any(|h| h == *column) {
            return Err(ResultsDirError::MissingColumn {
                path: path.to_path_buf(),
                column: column.to_string(),
                required: required.iter().map(|c| c.to_string()).collect(),
            }
            .into());
        }
    }
    Ok(headers.iter().map(str::to_string).collect())
}
