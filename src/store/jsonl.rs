//! Reading JSONL record files one line at a time, so that what reads a run holds one
//! record, not the file: a torn last line (the writer died mid-write) is dropped, never
//! parsed, and any other bad line is an error naming the file and line.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// One complete, non-blank line of a JSONL file.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonlLine {
    /// 1-based line number (blank lines counted).
    pub number: usize,
    /// Byte offset of the line's start, for [`JsonlAt::record`].
    pub offset: u64,
    /// The line without its line end.
    pub text: String,
}

/// The complete, non-blank lines of a JSONL file, in order; none when the file does
/// not exist.
pub struct JsonlLines {
    path: PathBuf,
    reader: Option<BufReader<File>>,
    number: usize,
    offset: u64,
    buf: Vec<u8>,
}

impl JsonlLines {
    /// Opens `path`; a missing file has no lines.
    pub fn open(path: &Path) -> Result<JsonlLines> {
        let reader = match File::open(path) {
            Ok(file) => Some(BufReader::with_capacity(64 * 1024, file)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(cannot_read(path, e)),
        };
        Ok(JsonlLines {
            path: path.to_path_buf(),
            reader,
            number: 0,
            offset: 0,
            buf: Vec::new(),
        })
    }

    /// The bytes of the complete lines read so far: the file's length once every line
    /// is read, unless it ends in a torn line.
    pub fn complete_bytes(&self) -> u64 {
        self.offset
    }

    /// The record on `line`, or the error naming the file and line.
    pub fn parse<T: DeserializeOwned>(&self, line: &JsonlLine) -> Result<T> {
        parse_line(&self.path, line)
    }

    fn next_line(&mut self) -> Result<Option<JsonlLine>> {
        let Some(reader) = self.reader.as_mut() else {
            return Ok(None);
        };
        loop {
            self.buf.clear();
            let read = reader
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| cannot_read(&self.path, e))?;
            // End of file, or a last line without its newline: torn, dropped.
            if read == 0 || self.buf.last() != Some(&b'\n') {
                return Ok(None);
            }
            let offset = self.offset;
            self.offset += read as u64;
            self.number += 1;
            let text = line_text(&self.path, &self.buf)?;
            if !text.trim().is_empty() {
                return Ok(Some(JsonlLine {
                    number: self.number,
                    offset,
                    text: text.to_string(),
                }));
            }
        }
    }
}

impl Iterator for JsonlLines {
    type Item = Result<JsonlLine>;

    fn next(&mut self) -> Option<Self::Item> {
        match self.next_line() {
            Ok(line) => line.map(Ok),
            Err(e) => {
                // After an error the file is not read on.
                self.reader = None;
                Some(Err(e))
            }
        }
    }
}

/// The records of a JSONL file, parsed one line at a time (see [`JsonlLines`]).
pub struct JsonlRecords<T> {
    lines: JsonlLines,
    _record: PhantomData<fn() -> T>,
}

impl<T: DeserializeOwned> Iterator for JsonlRecords<T> {
    type Item = Result<T>;

    fn next(&mut self) -> Option<Self::Item> {
        let line = match self.lines.next()? {
            Ok(line) => line,
            Err(e) => return Some(Err(e)),
        };
        let record = self.lines.parse(&line);
        if record.is_err() {
            self.lines.reader = None;
        }
        Some(record)
    }
}

/// The records of the JSONL file `path`, one at a time: nothing when it does not exist,
/// a torn last line dropped, any other bad line an error naming the file and line.
pub fn jsonl_records<T: DeserializeOwned>(path: &Path) -> Result<JsonlRecords<T>> {
    Ok(JsonlRecords {
        lines: JsonlLines::open(path)?,
        _record: PhantomData,
    })
}

/// Records of a JSONL file read again by where their lines start (offsets from
/// [`JsonlLines`]); reading in file order reads the file once.
pub struct JsonlAt {
    path: PathBuf,
    reader: BufReader<File>,
    position: u64,
    buf: Vec<u8>,
}

impl JsonlAt {
    /// Opens `path`, which must exist.
    pub fn open(path: &Path) -> Result<JsonlAt> {
        let file = File::open(path).map_err(|e| cannot_read(path, e))?;
        Ok(JsonlAt {
            path: path.to_path_buf(),
            reader: BufReader::with_capacity(64 * 1024, file),
            position: 0,
            buf: Vec::new(),
        })
    }

    /// The record on the line that starts at byte `offset`. Its line number is counted
    /// only when it does not parse, for the error: an index of a large run keeps
    /// offsets alone.
    pub fn record<T: DeserializeOwned>(&mut self, offset: u64) -> Result<T> {
        if offset != self.position {
            let relative = offset as i64 - self.position as i64;
            self.reader
                .seek_relative(relative)
                .map_err(|e| cannot_read(&self.path, e))?;
        }
        self.buf.clear();
        let read = self
            .reader
            .read_until(b'\n', &mut self.buf)
            .map_err(|e| cannot_read(&self.path, e))?;
        self.position = offset + read as u64;
        let text = line_text(&self.path, &self.buf)?;
        serde_json::from_str(text).map_err(|e| Error::BadLine {
            file: self.path.clone(),
            line: line_number_at(&self.path, offset).unwrap_or(0),
            message: format!("not a loopbench record: {e}"),
        })
    }
}

/// The 1-based number of the line of `path` that starts at byte `offset`: the line ends
/// before it, plus one.
fn line_number_at(path: &Path, offset: u64) -> std::io::Result<usize> {
    use std::io::Read;
    let mut before = File::open(path)?.take(offset);
    let mut buf = vec![0; 64 * 1024];
    let mut ends = 0;
    loop {
        let n = before.read(&mut buf)?;
        if n == 0 {
            return Ok(ends + 1);
        }
        ends += buf[..n].iter().filter(|&&b| b == b'\n').count();
    }
}

fn parse_line<T: DeserializeOwned>(path: &Path, line: &JsonlLine) -> Result<T> {
    serde_json::from_str(&line.text).map_err(|e| Error::BadLine {
        file: path.to_path_buf(),
        line: line.number,
        message: format!("not a loopbench record: {e}"),
    })
}

/// A line's text without its `\n` (and a `\r` before it, as [`str::lines`] drops).
fn line_text<'a>(path: &Path, bytes: &'a [u8]) -> Result<&'a str> {
    let bytes = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    std::str::from_utf8(bytes).map_err(|_| {
        cannot_read(
            path,
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "stream did not contain valid UTF-8",
            ),
        )
    })
}

fn cannot_read(path: &Path, e: std::io::Error) -> Error {
    Error::io(format!("cannot read '{}'", path.display()), e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, serde::Deserialize)]
    struct R {
        n: u32,
    }

    fn records(text: &[u8]) -> Vec<Result<R>> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        std::fs::write(&path, text).unwrap();
        jsonl_records::<R>(&path).unwrap().collect()
    }

    #[test]
    fn blank_lines_are_skipped_and_counted_and_crlf_ends_are_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        std::fs::write(&path, "{\"n\":1}\r\n\n  \n{\"n\":2}\n").unwrap();
        let lines: Vec<JsonlLine> = JsonlLines::open(&path)
            .unwrap()
            .map(|l| l.unwrap())
            .collect();
        let at: Vec<(usize, u64)> = lines.iter().map(|l| (l.number, l.offset)).collect();
        assert_eq!(at, vec![(1, 0), (4, 13)]);
        assert_eq!(lines[0].text, "{\"n\":1}");
        let mut again = JsonlAt::open(&path).unwrap();
        assert_eq!(again.record::<R>(13).unwrap(), R { n: 2 });
        assert_eq!(again.record::<R>(0).unwrap(), R { n: 1 });
    }

    #[test]
    fn a_record_read_back_that_does_not_parse_names_its_line_counted_then() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        // Blank lines count, as `JsonlLines` counts them.
        std::fs::write(&path, "{\"n\":1}\n\n{\"n\":2}\n{\"n\":\"three\"}\n").unwrap();
        let mut at = JsonlAt::open(&path).unwrap();
        assert_eq!(at.record::<R>(9).unwrap(), R { n: 2 });
        let err = at.record::<R>(17).unwrap_err().to_string();
        assert!(err.contains("x.jsonl:4: not a loopbench record"), "{err}");
    }

    #[test]
    fn a_missing_file_has_no_records() {
        let dir = tempfile::tempdir().unwrap();
        let none: Vec<Result<R>> = jsonl_records(&dir.path().join("absent.jsonl"))
            .unwrap()
            .collect();
        assert!(none.is_empty());
    }

    #[test]
    fn reading_stops_at_the_first_bad_line() {
        let got = records(b"{\"n\":1}\nnope\n{\"n\":2}\n");
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].as_ref().unwrap(), &R { n: 1 });
        let err = got[1].as_ref().unwrap_err().to_string();
        assert!(err.contains("x.jsonl:2: not a loopbench record"), "{err}");
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error_saying_so() {
        let got = records(b"{\"n\":1}\n\xff\n");
        let err = crate::error::with_causes(got[1].as_ref().unwrap_err());
        assert!(
            err.contains("cannot read") && err.contains("UTF-8"),
            "{err}"
        );
    }
}
