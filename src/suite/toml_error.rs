//! Turns TOML byte spans into `file:line:column` errors that a person can act on.

use std::ops::Range;
use std::path::Path;

use crate::error::Error;

/// 1-based line and column of byte `offset` in `text` (columns count characters).
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
    (line, column)
}

/// A [`Error::Config`] for `file`, pointing at `span` of `text` (or line 1 when unknown).
pub fn config_error(
    file: &Path,
    text: &str,
    span: Option<Range<usize>>,
    message: impl Into<String>,
) -> Error {
    let (line, column) = span.map_or((1, 1), |s| line_column(text, s.start));
    Error::Config {
        file: file.to_path_buf(),
        line,
        column,
        message: message.into(),
    }
}

/// Where a key stands in a file, for an error found after the file was read (by a check
/// that needs the machine, such as an agent's sandbox query).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyAt {
    /// The file.
    pub file: std::path::PathBuf,
    /// 1-based line.
    pub line: usize,
    /// 1-based column.
    pub column: usize,
}

impl KeyAt {
    /// Where `span` of `text`, read from `file`, begins.
    pub fn of(file: &Path, text: &str, span: Range<usize>) -> KeyAt {
        let (line, column) = line_column(text, span.start);
        KeyAt {
            file: file.to_path_buf(),
            line,
            column,
        }
    }

    /// A [`Error::Config`] at this place.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::Config {
            file: self.file.clone(),
            line: self.line,
            column: self.column,
            message: message.into(),
        }
    }
}

/// Converts a `toml` deserialization error into a [`Error::Config`].
pub fn from_toml(file: &Path, text: &str, err: &toml::de::Error) -> Error {
    config_error(file, text, err.span(), err.message().trim_end().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_map_to_one_based_line_and_column() {
        let text = "a = 1\nbb = 2\n";
        assert_eq!(line_column(text, 0), (1, 1));
        assert_eq!(line_column(text, 6), (2, 1));
        assert_eq!(line_column(text, 8), (2, 3));
        assert_eq!(line_column(text, 999), (3, 1));
    }
}
