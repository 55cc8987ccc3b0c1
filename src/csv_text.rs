//! Every CSV file the project writes goes through [`Writer`], so that no cell of it is a
//! formula a spreadsheet runs: a text cell that starts with `=`, `+`, `-`, `@`, a tab or
//! a carriage return is written with a single quote `'` before it (the convention
//! spreadsheets follow for text that must stay text), and so is one that starts with `'`
//! itself, so that the prefix can be taken off again: [`unescape`] removes one leading
//! `'` from a text cell, and the project's readers of its own CSVs read every text cell
//! through it. An arm named `=HYPERLINK("http://x","y")` is written
//! `'=HYPERLINK("http://x","y")` and read back as its name.
//!
//! Numbers, booleans and empty cells are written as they are ([`Cell::Value`]): a
//! negative number such as `-0.098` is never prefixed, since it is no formula and must
//! stay a number.

use std::borrow::Cow;
use std::io;

/// The first characters that make a spreadsheet read a cell as a formula (or, for tab
/// and carriage return, that some spreadsheets drop before reading it as one).
const FORMULA_STARTS: [char; 6] = ['=', '+', '-', '@', '\t', '\r'];

/// The prefix of a text cell that would otherwise start a formula.
const PREFIX: char = '\'';

/// `text` as a text cell: with [`PREFIX`] before it when it starts a formula or with the
/// prefix itself (see the module documentation).
pub fn escape(text: &str) -> Cow<'_, str> {
    match text.chars().next() {
        Some(c) if c == PREFIX || FORMULA_STARTS.contains(&c) => {
            Cow::Owned(format!("{PREFIX}{text}"))
        }
        _ => Cow::Borrowed(text),
    }
}

/// A text cell of a CSV file the project wrote, as the text it holds: one leading `'`
/// taken off ([`escape`] reversed).
pub fn unescape(cell: &str) -> &str {
    cell.strip_prefix(PREFIX).unwrap_or(cell)
}

/// One cell of a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cell {
    /// Text (a name, a word, a message): escaped as it is written.
    Text(String),
    /// A number, a boolean or an empty cell, written as it is.
    Value(String),
}

impl Cell {
    /// The cell as written in the file.
    fn written(&self) -> Cow<'_, str> {
        match self {
            Cell::Text(text) => escape(text),
            Cell::Value(value) => Cow::Borrowed(value),
        }
    }
}

/// A CSV writer whose text cells are escaped: the one way the project writes CSV.
pub struct Writer<W: io::Write> {
    inner: csv::Writer<W>,
}

impl<W: io::Write> Writer<W> {
    /// A writer of CSV to `out`.
    pub fn new(out: W) -> Writer<W> {
        Writer {
            inner: csv::Writer::from_writer(out),
        }
    }

    /// Writes the header: column names, as text cells.
    pub fn header<S: AsRef<str>>(
        &mut self,
        columns: impl IntoIterator<Item = S>,
    ) -> csv::Result<()> {
        let names: Vec<String> = columns
            .into_iter()
            .map(|c| escape(c.as_ref()).into_owned())
            .collect();
        self.inner.write_record(&names)
    }

    /// Writes one row.
    pub fn row(&mut self, cells: impl IntoIterator<Item = Cell>) -> csv::Result<()> {
        let cells: Vec<Cell> = cells.into_iter().collect();
        self.inner
            .write_record(cells.iter().map(|c| c.written().as_bytes().to_vec()))
    }

    /// Flushes what was written to `out`.
    pub fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }

    /// Flushes and gives `out` back.
    pub fn into_inner(self) -> io::Result<W> {
        self.inner.into_inner().map_err(|e| e.into_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn text_that_starts_a_formula_is_prefixed_and_other_text_is_not() {
        for (text, want) in [
            (
                "=HYPERLINK(\"http://x\",\"y\")",
                "'=HYPERLINK(\"http://x\",\"y\")",
            ),
            ("+1", "'+1"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tx", "'\tx"),
            ("\rx", "'\rx"),
            ("'quoted", "''quoted"),
            ("json", "json"),
            ("json:ledgerly:0", "json:ledgerly:0"),
            ("a=b", "a=b"),
            ("", ""),
            (" =x", " =x"),
        ] {
            assert_eq!(escape(text), want, "{text:?}");
            assert_eq!(unescape(&escape(text)), text, "{text:?}");
        }
    }

    #[test]
    fn values_are_written_as_they_are() {
        let mut w = Writer::new(Vec::new());
        w.header(["arm", "diff", "ok"]).unwrap();
        w.row([
            Cell::Text("=1+1".into()),
            Cell::Value("-0.098".into()),
            Cell::Value("true".into()),
        ])
        .unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text, "arm,diff,ok\n'=1+1,-0.098,true\n");
    }

    proptest! {
        #[test]
        fn every_text_reads_back_and_no_escaped_cell_starts_a_formula(text in any::<String>()) {
            let cell = escape(&text);
            prop_assert_eq!(unescape(&cell), text.as_str());
            prop_assert!(!cell.starts_with(FORMULA_STARTS), "{:?}", cell);
        }
    }
}
