//! Checks a run's `sessions.csv` and `trials.csv` row by row before they are counted.
//!
//! `report`, `compare` and `weekly` work from these files alone, and users bring them
//! from other machines or edit them by hand. A file that does not fit is refused
//! (exit 2) with the file, the line, the column and what the cell should hold, in the
//! words of the record format, before the dataframe engine sees it: a negative count,
//! an outcome no session can end with, or a second row for one session would otherwise
//! be counted silently or reported as a schema-inference failure.
//!
//! The checks run on the frame polars has read, as a few column-wise expressions, so
//! that a million good rows cost little; only a file that fails them (or that polars
//! cannot read) is scanned row by row with the csv crate to find the first bad cell's
//! line and column, which the dataframe no longer knows (a quoted cell may span lines).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::agent::{Outcome, SessionKind};
use crate::csv_text;
use crate::error::{Error, Result, ResultsDirError};

/// What a cell of a column must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cell {
    /// A name that must be there: `trial_id`, `arm`, `task`.
    Name,
    /// A whole number of at least 0 that must be there: `replicate`, `session`.
    Index,
    /// A whole number of at least 0, or empty (unknown).
    Count,
    /// `true`, `false`, or empty (unknown).
    Flag,
    /// A number of at least 0, or empty (unknown): `cost_usd`.
    Amount,
    /// One of the outcomes of [`Outcome`].
    Outcome,
    /// `initializer` or `coding`.
    Kind,
    /// Any text.
    Text,
}

impl Cell {
    /// The cell a column read with `dtype` must hold; the id columns are stricter than
    /// their type.
    pub(crate) fn of(name: &str, dtype: &DataType) -> Cell {
        match (name, dtype) {
            ("trial_id" | "arm" | "task", _) => Cell::Name,
            ("replicate" | "session", _) => Cell::Index,
            ("outcome", _) => Cell::Outcome,
            ("kind", _) => Cell::Kind,
            (_, DataType::Boolean) => Cell::Flag,
            (_, DataType::Float64 | DataType::Float32) => Cell::Amount,
            (_, dtype) if dtype.is_integer() => Cell::Count,
            _ => Cell::Text,
        }
    }

    /// Why `value` does not fit, or `None` when it does.
    fn refuse(self, value: &str) -> Option<String> {
        let count = |required: bool| -> Option<String> {
            if value.is_empty() {
                return required.then(|| "is empty; expected a whole number of at least 0".into());
            }
            match value.parse::<i64>() {
                Ok(n) if n >= 0 => None,
                Ok(_) => Some(format!(
                    "'{value}' is negative; expected a count (a whole number of at least 0){}",
                    if required {
                        ""
                    } else {
                        ", or an empty cell when unknown"
                    }
                )),
                Err(_) => Some(format!(
                    "'{value}' is not a whole number; expected a count of at least 0{}",
                    if required {
                        ""
                    } else {
                        ", or an empty cell when unknown"
                    }
                )),
            }
        };
        match self {
            Cell::Text => None,
            Cell::Name => csv_text::unescape(value)
                .is_empty()
                .then(|| "is empty; expected a name".into()),
            Cell::Index => count(true),
            Cell::Count => count(false),
            Cell::Flag => (!matches!(value, "" | "true" | "false")).then(|| {
                format!("'{value}' is not a boolean; expected true, false, or an empty cell when unknown")
            }),
            Cell::Amount => match value.parse::<f64>() {
                _ if value.is_empty() => None,
                Ok(x) if x.is_finite() && x >= 0.0 => None,
                _ => Some(format!(
                    "'{value}' is not an amount; expected a number of at least 0, or an empty cell when unknown"
                )),
            },
            Cell::Outcome => (!Outcome::ALL.iter().any(|o| o.as_str() == value)).then(|| {
                let names: Vec<&str> = Outcome::ALL.iter().map(|o| o.as_str()).collect();
                format!(
                    "'{value}' is not an outcome; expected one of {}",
                    names.join(", ")
                )
            }),
            Cell::Kind => (!SessionKind::ALL.iter().any(|k| k.as_str() == value)).then(|| {
                let names: Vec<&str> = SessionKind::ALL.iter().map(|k| k.as_str()).collect();
                format!(
                    "'{value}' is not a session kind; expected {}",
                    names.join(" or ")
                )
            }),
        }
    }
}

/// Count columns of one row of which the first counts part of what the second counts
/// (k <= n): a session's premature claims are among its claims, a trial's verified
/// features among its features. A row with more is refused, since no session can have
/// produced it and every rate computed from it would be above 1.
pub(crate) const PARTS_OF: [(&str, &str); 2] = [
    ("premature_claims", "newly_claimed"),
    ("features_verified", "features_total"),
];

/// The checks of one CSV file: its path, header, the columns to check and the key no
/// two rows may share.
pub(crate) struct Input<'a> {
    path: &'a Path,
    headers: &'a [String],
    columns: Vec<(&'a str, Cell)>,
    key: &'a [&'a str],
}

/// The pairs of [`PARTS_OF`] whose two columns are both in `has`.
pub(crate) fn parts_in(has: impl Fn(&str) -> bool) -> Vec<(&'static str, &'static str)> {
    PARTS_OF
        .into_iter()
        .filter(|(part, whole)| has(part) && has(whole))
        .collect()
}

impl<'a> Input<'a> {
    /// The checks of `path` (header `headers`): every column of `columns` the file has,
    /// and the `key` columns (each one of `columns`).
    pub(crate) fn new(
        path: &'a Path,
        headers: &'a [String],
        columns: Vec<(&'a str, Cell)>,
        key: &'a [&'a str],
    ) -> Input<'a> {
        Input {
            path,
            headers,
            columns,
            key,
        }
    }

    /// The error for a file polars could not read: the first cell that does not fit,
    /// found row by row, or polars' own message when every cell fits.
    pub(crate) fn explain(&self, error: &PolarsError) -> Error {
        match check_rows(self.path, self.headers, &self.columns, self.key) {
            Err(e) => e,
            Ok(()) => unreadable(self.path, error),
        }
    }

    /// Checks the frame polars read from the file (holding every checked column the
    /// file has, with the types [`Cell::of`] maps from); on a violation, scans the file
    /// for the line and column of the first one.
    pub(crate) fn check_frame(&self, frame: &DataFrame) -> Result<()> {
        self.check(frame, true)
    }

    /// [`Input::check_frame`] without the check that no two rows share a key: for a
    /// batch of a file whose keys the caller checks across batches (and within them).
    pub(crate) fn check_cells(&self, frame: &DataFrame) -> Result<()> {
        self.check(frame, false)
    }

    fn check(&self, frame: &DataFrame, keys: bool) -> Result<()> {
        let has = |name: &str| frame.column(name).is_ok();
        let mut bad: Vec<Expr> = Vec::new();
        for &(name, cell) in self.columns.iter().filter(|(n, _)| has(n)) {
            let c = col(name);
            bad.push(match cell {
                Cell::Name | Cell::Index => c.clone().is_null(),
                _ => lit(false),
            });
            bad.push(match cell {
                Cell::Index | Cell::Count | Cell::Amount => c.lt(lit(0)),
                Cell::Outcome => one_of(c, Outcome::ALL.iter().map(|o| o.as_str())).not(),
                Cell::Kind => one_of(c, SessionKind::ALL.iter().map(|k| k.as_str())).not(),
                Cell::Name | Cell::Flag | Cell::Text => lit(false),
            });
        }
        for (part, whole) in parts_in(has) {
            bad.push(col(part).gt(col(whole)));
        }
        let any_bad = bad
            .into_iter()
            .reduce(|a, b| a.or(b))
            .unwrap_or_else(|| lit(false))
            .fill_null(lit(false))
            .any(true)
            .alias("bad");
        let key: Vec<Expr> = self.key.iter().map(|k| col(*k)).collect();
        let violated = (|| -> PolarsResult<bool> {
            let flagged = frame.clone().lazy().select([any_bad]).collect()?;
            if flagged.column("bad")?.bool()?.get(0) == Some(true) {
                return Ok(true);
            }
            if !keys || self.key.iter().any(|k| !has(k)) {
                return Ok(false);
            }
            let repeated = frame
                .clone()
                .lazy()
                .group_by(key)
                .agg([len().alias("rows")])
                .filter(col("rows").gt(lit(1)))
                .limit(1)
                .collect()?;
            Ok(repeated.height() > 0)
        })()
        .map_err(|e| {
            Error::from(ResultsDirError::Uncheckable {
                path: self.path.to_path_buf(),
                reason: e.to_string(),
            })
        })?;
        if !violated {
            return Ok(());
        }
        Err(self.refuse())
    }

    /// The error for a file found to hold a row that does not fit (by the checks of a
    /// frame read from it): the first such cell or repeated key, found row by row.
    pub(crate) fn refuse(&self) -> Error {
        match check_rows(self.path, self.headers, &self.columns, self.key) {
            Err(e) => e,
            Ok(()) => ResultsDirError::RowDoesNotFit {
                path: self.path.to_path_buf(),
            }
            .into(),
        }
    }
}

/// `column` equals one of `names` (false for a null).
fn one_of<'n>(column: Expr, names: impl Iterator<Item = &'n str>) -> Expr {
    names
        .map(|n| column.clone().eq(lit(n)))
        .reduce(|a, b| a.or(b))
        .unwrap_or_else(|| lit(false))
        .fill_null(lit(false))
}

/// Checks every row of the CSV file `path`, whose header is `headers`: each column of
/// `columns` the file has must hold what its [`Cell`] says, and no two rows may have the
/// same values in the `key` columns (each must be one of `columns`).
pub(crate) fn check_rows(
    path: &Path,
    headers: &[String],
    columns: &[(&str, Cell)],
    key: &[&str],
) -> Result<()> {
    let at = |name: &str| headers.iter().position(|h| h == name);
    let checked: Vec<(usize, &str, Cell)> = columns
        .iter()
        .filter_map(|(name, cell)| at(name).map(|i| (i, *name, *cell)))
        .collect();
    let key_at: Vec<usize> = key.iter().filter_map(|name| at(name)).collect();
    let parts: Vec<(usize, &str, usize, &str)> = parts_in(|c| at(c).is_some())
        .into_iter()
        .filter_map(|(part, whole)| Some((at(part)?, part, at(whole)?, whole)))
        .collect();
    let bad = |line: u64, message: String| Error::BadLine {
        file: path.to_path_buf(),
        line: usize::try_from(line).unwrap_or(usize::MAX),
        message,
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(path)
        .map_err(|e| unreadable(path, &e))?;
    // Key of each row seen → the line it is on; keys are joined with a byte no CSV
    // cell of these files holds.
    let mut seen: HashMap<Vec<u8>, u64> = HashMap::new();
    let mut record = csv::StringRecord::new();
    let mut key_bytes = Vec::new();
    loop {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => return Err(csv_error(path, &e)),
        }
        let line = record.position().map_or(0, csv::Position::line);
        if let Some(why) = cell_problem(&record, &checked, &parts) {
            return Err(bad(line, why));
        }
        if key_at.len() == key.len() {
            key_bytes.clear();
            for &i in &key_at {
                let text = csv_text::unescape(record.get(i).unwrap_or(""));
                key_bytes.extend_from_slice(text.as_bytes());
                key_bytes.push(0);
            }
            if let Some(first) = seen.insert(key_bytes.clone(), line) {
                let values: Vec<String> = key
                    .iter()
                    .zip(&key_at)
                    .map(|(name, &i)| format!("{name} '{}'", record.get(i).unwrap_or("")))
                    .collect();
                return Err(bad(
                    line,
                    format!(
                        "a second row for {} (the first is on line {first}); each {} has one row",
                        values.join(", "),
                        if key.len() == 1 {
                            key[0].to_string()
                        } else {
                            format!("({})", key.join(", "))
                        }
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// What is wrong with one row's cells, if anything: a cell its column refuses, or a
/// count of part of a whole larger than the whole.
fn cell_problem(
    record: &csv::StringRecord,
    checked: &[(usize, &str, Cell)],
    parts: &[(usize, &str, usize, &str)],
) -> Option<String> {
    for &(i, name, cell) in checked {
        if let Some(why) = cell.refuse(record.get(i).unwrap_or("")) {
            return Some(format!("column {} ({name}): {why}", i + 1));
        }
    }
    for &(p, part, w, whole) in parts {
        let value = |i: usize| record.get(i).and_then(|v| v.parse::<i64>().ok());
        if let (Some(k), Some(n)) = (value(p), value(w))
            && k > n
        {
            return Some(format!(
                "column {} ({part}): {k} is more than {n} in column {} ({whole}); \
                 {part} counts part of {whole}, so it is at most that",
                p + 1,
                w + 1
            ));
        }
    }
    None
}

/// A CSV syntax error in the words of the record format.
fn csv_error(path: &Path, e: &csv::Error) -> Error {
    let file: PathBuf = path.to_path_buf();
    let line = |pos: Option<&csv::Position>| {
        pos.map_or(0, |p| usize::try_from(p.line()).unwrap_or(usize::MAX))
    };
    match e.kind() {
        csv::ErrorKind::UnequalLengths {
            pos,
            expected_len,
            len,
        } => Error::BadLine {
            file,
            line: line(pos.as_ref()),
            message: format!(
                "{len} cells where the header has {expected_len}; every row has one cell per column (empty for unknown)"
            ),
        },
        csv::ErrorKind::Utf8 { pos, .. } => Error::BadLine {
            file,
            line: line(pos.as_ref()),
            message: "not UTF-8 text".into(),
        },
        _ => unreadable(path, &e),
    }
}

/// A file of a run that cannot be read, and why.
pub(crate) fn unreadable(path: &Path, e: &dyn std::fmt::Display) -> Error {
    ResultsDirError::Unreadable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str) -> std::result::Result<(), String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sessions.csv");
        std::fs::write(&path, text).unwrap();
        let headers: Vec<String> = text
            .lines()
            .next()
            .unwrap()
            .split(',')
            .map(str::to_string)
            .collect();
        let columns = [
            ("trial_id", Cell::Name),
            ("session", Cell::Index),
            ("outcome", Cell::Outcome),
            ("tests_removed", Cell::Count),
            ("clean_tree", Cell::Flag),
            ("cost_usd", Cell::Amount),
        ];
        check_rows(&path, &headers, &columns, &["trial_id", "session"])
            .map_err(|e| e.to_string().replace(&*dir.path().to_string_lossy(), "DIR"))
    }

    const HEAD: &str = "trial_id,session,outcome,tests_removed,clean_tree,cost_usd\n";

    #[test]
    fn rows_that_fit_pass_with_empty_cells_for_unknown() {
        check(&format!(
            "{HEAD}a:t:0,0,completed,0,true,0.5\na:t:0,1,timeout,,,\n"
        ))
        .unwrap();
    }

    #[test]
    fn a_negative_count_names_file_line_and_column() {
        let err = check(&format!(
            "{HEAD}a:t:0,0,completed,0,true,\na:t:0,1,completed,-2,true,\n"
        ))
        .unwrap_err();
        assert_eq!(
            err,
            "DIR/sessions.csv:3: column 4 (tests_removed): '-2' is negative; expected a count \
             (a whole number of at least 0), or an empty cell when unknown"
        );
    }

    #[test]
    fn an_unknown_outcome_lists_the_outcomes() {
        let err = check(&format!("{HEAD}a:t:0,0,done,0,true,\n")).unwrap_err();
        assert!(err.starts_with("DIR/sessions.csv:2: column 3 (outcome): 'done' is not an outcome; expected one of completed, declared_complete,"), "{err}");
    }

    #[test]
    fn a_second_row_for_one_session_names_both_lines() {
        let err = check(&format!(
            "{HEAD}a:t:0,0,completed,0,true,\na:t:0,1,completed,0,true,\na:t:0,1,completed,0,true,\n"
        ))
        .unwrap_err();
        assert_eq!(
            err,
            "DIR/sessions.csv:4: a second row for trial_id 'a:t:0', session '1' (the first is on \
             line 3); each (trial_id, session) has one row"
        );
    }

    #[test]
    fn bad_flags_amounts_indices_and_row_lengths_are_refused() {
        for (row, want) in [
            (
                "a:t:0,0,completed,0,yes,",
                "column 5 (clean_tree): 'yes' is not a boolean",
            ),
            (
                "a:t:0,0,completed,0,true,-1",
                "column 6 (cost_usd): '-1' is not an amount",
            ),
            ("a:t:0,,completed,0,true,", "column 2 (session): is empty"),
            (
                "a:t:0,x,completed,0,true,",
                "column 2 (session): 'x' is not a whole number",
            ),
            (
                ",0,completed,0,true,",
                "column 1 (trial_id): is empty; expected a name",
            ),
            (
                "a:t:0,0,completed,1.5,true,",
                "column 4 (tests_removed): '1.5' is not a whole number",
            ),
            ("a:t:0,0,completed,0,true", "5 cells where the header has 6"),
        ] {
            let err = check(&format!("{HEAD}{row}\n")).unwrap_err();
            assert!(
                err.starts_with(&format!("DIR/sessions.csv:2: {want}")),
                "{row}: {err}"
            );
        }
    }

    #[test]
    fn a_quoted_cell_over_two_lines_keeps_later_line_numbers_right() {
        let err = check(&format!(
            "{HEAD}a:t:0,0,completed,0,true,\n\"a:t:\n1\",0,completed,0,true,\na:t:2,0,bad,0,true,\n"
        ))
        .unwrap_err();
        assert!(err.starts_with("DIR/sessions.csv:5: column 3"), "{err}");
    }
}
