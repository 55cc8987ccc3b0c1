//! The page's sortable tables: each cell carries the text shown and the value it sorts
//! by.

use serde::Serialize;

/// A table: its cells carry the text shown and the value sorted by.
#[derive(Debug, Clone, Serialize)]
pub struct PageTable {
    /// The table's name (a metric's, or `weekly:<metric>`).
    pub id: String,
    /// Its heading.
    pub title: String,
    /// What it counts.
    pub note: String,
    /// Column headings.
    pub columns: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<PageCell>>,
}

/// One cell: the text shown (`t`) and the number it sorts by (`v`, null for text).
#[derive(Debug, Clone, Serialize)]
pub struct PageCell {
    t: String,
    v: Option<f64>,
}

impl PageCell {
    pub(super) fn text(t: impl Into<String>) -> PageCell {
        PageCell {
            t: t.into(),
            v: None,
        }
    }

    pub(super) fn number(x: Option<f64>, show: impl Fn(f64) -> String) -> PageCell {
        PageCell {
            t: x.map(show).unwrap_or_default(),
            v: x,
        }
    }
}
