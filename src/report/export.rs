//! Exporters behind one small trait: each report (the summary, the weekly trend, a
//! comparison) builds one table model, a [`Document`], and CSV, JSON and Markdown are
//! exporters of it. A new format is one more [`Exporter`]; a new report is one more
//! [`Document`] builder.

use super::format::exact;
use crate::csv_text;
use crate::error::{Error, Result};

/// One cell of a table, typed, so that each format writes it its own way.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// Text, as it is (in CSV escaped so that no spreadsheet reads it as a formula:
    /// [`crate::csv_text`]).
    Text(String),
    /// A whole number.
    Count(u64),
    /// A real number (CSV: the shortest text that reads back to it; JSON: a number).
    Number(f64),
    /// `true` / `false`.
    Bool(bool),
    /// An empty cell (CSV: nothing; JSON: `null`).
    Empty,
}

impl Cell {
    /// A number, or empty when there is none.
    pub fn number(x: Option<f64>) -> Cell {
        x.map_or(Cell::Empty, Cell::Number)
    }

    /// A count, or empty when there is none.
    pub fn count(x: Option<u64>) -> Cell {
        x.map_or(Cell::Empty, Cell::Count)
    }
}

/// The table model of one report: named columns, typed rows, and the document a person
/// reads (Markdown), which may say more than the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// The file stem the report's files take (`summary`, `weekly`, `compare`).
    pub name: &'static str,
    /// Column names, in order.
    pub columns: Vec<&'static str>,
    /// Rows, each with one cell per column.
    pub rows: Vec<Vec<Cell>>,
    /// The Markdown document.
    pub markdown: String,
}

/// Turns a document into the bytes of one file format.
pub trait Exporter {
    /// The file extension, without the dot.
    fn extension(&self) -> &'static str;
    /// The bytes of the file.
    fn export(&self, doc: &Document) -> Result<Vec<u8>>;
}

/// A tidy CSV table: a header, then one line per row.
pub struct Csv;
/// A JSON array of objects keyed by column name, pretty-printed.
pub struct Json;
/// The Markdown document.
pub struct Markdown;

impl Exporter for Csv {
    fn extension(&self) -> &'static str {
        "csv"
    }

    fn export(&self, doc: &Document) -> Result<Vec<u8>> {
        let encode = |e: csv::Error| Error::Tool(format!("cannot encode {}.csv: {e}", doc.name));
        let mut w = csv_text::Writer::new(Vec::new());
        w.header(&doc.columns).map_err(encode)?;
        for row in &doc.rows {
            w.row(row.iter().map(|c| match c {
                Cell::Text(s) => csv_text::Cell::Text(s.clone()),
                Cell::Count(n) => csv_text::Cell::Value(n.to_string()),
                Cell::Number(x) => csv_text::Cell::Value(exact(*x)),
                Cell::Bool(b) => csv_text::Cell::Value(b.to_string()),
                Cell::Empty => csv_text::Cell::Value(String::new()),
            }))
            .map_err(encode)?;
        }
        w.into_inner()
            .map_err(|e| Error::Tool(format!("cannot encode {}.csv: {e}", doc.name)))
    }
}

impl Exporter for Json {
    fn extension(&self) -> &'static str {
        "json"
    }

    fn export(&self, doc: &Document) -> Result<Vec<u8>> {
        let rows: Vec<serde_json::Map<String, serde_json::Value>> = doc
            .rows
            .iter()
            .map(|row| {
                doc.columns
                    .iter()
                    .zip(row)
                    .map(|(name, cell)| {
                        let value = match cell {
                            Cell::Text(s) => serde_json::Value::from(s.as_str()),
                            Cell::Count(n) => serde_json::Value::from(*n),
                            Cell::Number(x) => serde_json::Value::from(*x),
                            Cell::Bool(b) => serde_json::Value::from(*b),
                            Cell::Empty => serde_json::Value::Null,
                        };
                        ((*name).to_string(), value)
                    })
                    .collect()
            })
            .collect();
        let mut text = serde_json::to_vec_pretty(&rows)
            .map_err(|e| Error::Tool(format!("cannot encode {}.json: {e}", doc.name)))?;
        text.push(b'\n');
        Ok(text)
    }
}

impl Exporter for Markdown {
    fn extension(&self) -> &'static str {
        "md"
    }

    fn export(&self, doc: &Document) -> Result<Vec<u8>> {
        Ok(doc.markdown.clone().into_bytes())
    }
}

/// The exporters every report is written with, in the order of its files.
pub const ALL: [&dyn Exporter; 3] = [&Csv, &Json, &Markdown];

/// `doc` in the format `extension` names (`csv`, `json`, `md`) as text.
pub fn export_text(doc: &Document, extension: &str) -> Result<String> {
    let exporter = ALL
        .into_iter()
        .find(|e| e.extension() == extension)
        .ok_or_else(|| Error::BadInput(format!("no exporter for '{extension}'")))?;
    String::from_utf8(exporter.export(doc)?)
        .map_err(|e| Error::Tool(format!("{}.{extension}: {e}", doc.name)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Document {
        Document {
            name: "t",
            columns: vec!["arm", "k", "rate", "ok", "p"],
            rows: vec![
                vec![
                    Cell::Text("json".into()),
                    Cell::Count(3),
                    Cell::Number(0.25),
                    Cell::Bool(true),
                    Cell::Empty,
                ],
                vec![
                    Cell::Text("a,b".into()),
                    Cell::Count(0),
                    Cell::Number(0.1 + 0.2),
                    Cell::Bool(false),
                    Cell::Number(1e-7),
                ],
            ],
            markdown: "# t\n".into(),
        }
    }

    #[test]
    fn csv_quotes_text_and_leaves_empty_cells_empty() {
        let text = export_text(&doc(), "csv").unwrap();
        assert_eq!(
            text,
            format!(
                "arm,k,rate,ok,p\njson,3,0.25,true,\n\"a,b\",0,{},false,{}\n",
                exact(0.1 + 0.2),
                exact(1e-7)
            )
        );
    }

    #[test]
    fn json_is_an_array_of_objects_in_column_order_with_nulls() {
        let text = export_text(&doc(), "json").unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value[0]["p"], serde_json::Value::Null);
        assert_eq!(value[1]["rate"], 0.1 + 0.2);
        let first_keys: Vec<&String> = value[0].as_object().unwrap().keys().collect();
        assert_eq!(first_keys, ["arm", "k", "rate", "ok", "p"]);
    }

    #[test]
    fn markdown_is_the_document_and_an_unknown_format_is_bad_input() {
        assert_eq!(export_text(&doc(), "md").unwrap(), "# t\n");
        assert!(matches!(
            export_text(&doc(), "xml"),
            Err(Error::BadInput(_))
        ));
    }
}
