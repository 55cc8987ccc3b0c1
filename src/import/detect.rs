//! Which transcript format a file or a directory of them is, from each file's first
//! line (or, for a format whose file is one JSON document, the document): what
//! `loopbench import` uses when no format is named. Each importer says how its files
//! are recognized ([`super::importer::Recognize`]).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::format::{Format, format_of_line};
use super::importer::SniffedLine;
use super::session::JSON_LINE_MAX;
use super::session::unreadable;
use crate::error::{FormatFound, Result, TranscriptError};

/// The first line of `path` that is not blank (at most [`JSON_LINE_MAX`] bytes of it).
fn first_line(path: &Path) -> Result<Option<String>> {
    let file = std::fs::File::open(path).map_err(|e| unreadable(path, &e))?;
    let mut reader = BufReader::new(file).take(JSON_LINE_MAX as u64);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        let read = reader
            .read_until(b'\n', &mut bytes)
            .map_err(|e| unreadable(path, &e))?;
        if read == 0 {
            return Ok(None);
        }
        let line = String::from_utf8_lossy(&bytes);
        if !line.trim().is_empty() {
            return Ok(Some(line.trim_end_matches(['\n', '\r']).to_string()));
        }
    }
}

/// The format of the file `path`, from its first line, else from the whole file for a
/// format whose file is one JSON document; `None` when it is none of them.
pub fn sniff(path: &Path) -> Result<Option<Format>> {
    let Some(line) = first_line(path)? else {
        return Ok(None);
    };
    let found = match serde_json::from_str::<Value>(&line) {
        Ok(Value::Object(map)) => format_of_line(SniffedLine::Json(&map)),
        _ => format_of_line(SniffedLine::Text(&line)),
    };
    if found.is_some() || !line.trim_start().starts_with('{') {
        return Ok(found);
    }
    Ok(Format::all().find(|f| {
        f.importer()
            .recognize
            .document
            .is_some_and(|document| document(path))
    }))
}

/// Whether a file in a directory could be a transcript: a name some importer's files
/// have.
fn candidate(path: &Path) -> bool {
    Format::all().any(|f| (f.importer().recognize.file_name)(path))
}

/// The one format of every transcript in `inputs` (files, or directories searched for
/// `*.jsonl`, `*.stdout` and `*.md` files). A file of no known format, inputs of two
/// formats, or none at all are bad input naming the choices.
pub fn detect(inputs: &[PathBuf]) -> Result<Format> {
    let mut found: std::collections::BTreeMap<Format, Vec<PathBuf>> = Default::default();
    for input in inputs {
        let meta = std::fs::metadata(input).map_err(|e| unreadable(input, &e))?;
        if meta.is_dir() {
            for file in super::session::expand(input, candidate)? {
                if let Some(format) = sniff(&file)? {
                    found.entry(format).or_default().push(file);
                }
            }
        } else {
            match sniff(input)? {
                Some(format) => found.entry(format).or_default().push(input.clone()),
                None => {
                    return Err(TranscriptError::FormatUnknown {
                        file: input.clone(),
                        formats: format_names(),
                    }
                    .into());
                }
            }
        }
    }
    let mut formats = found.iter();
    match (formats.next(), formats.next()) {
        (Some((format, _)), None) => Ok(*format),
        (None, _) => Err(TranscriptError::NoTranscript {
            inputs: inputs.to_vec(),
            formats: format_names(),
        }
        .into()),
        (Some(_), Some(_)) => Err(TranscriptError::MixedFormats {
            inputs: inputs.to_vec(),
            found: found
                .iter()
                .map(|(format, files)| FormatFound {
                    format: format.name().to_string(),
                    files: files.len(),
                    example: files[0].clone(),
                })
                .collect(),
        }
        .into()),
    }
}

/// The names of the formats, in the table's order.
fn format_names() -> Vec<String> {
    Format::all().map(|f| f.name().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directory_of_two_formats_names_both_and_one_of_one_format_is_that_format() {
        let dir = tempfile::tempdir().unwrap();
        let codex = dir.path().join("rollout-1.jsonl");
        std::fs::write(&codex, "{\"type\":\"session_meta\",\"payload\":{}}\n").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a transcript").unwrap();
        let format = Format::named("codex").unwrap();
        assert_eq!(detect(&[dir.path().to_path_buf()]).unwrap(), format);
        std::fs::write(
            dir.path().join(".aider.chat.history.md"),
            "\n# aider chat started at 2026-12-01 10:00:00\n",
        )
        .unwrap();
        let found = |format: &str, file: &str| FormatFound {
            format: format.into(),
            files: 1,
            example: dir.path().join(file),
        };
        assert_eq!(
            transcript_error(detect(&[dir.path().to_path_buf()])),
            TranscriptError::MixedFormats {
                inputs: vec![dir.path().to_path_buf()],
                found: vec![
                    found("codex", "rollout-1.jsonl"),
                    found("aider", ".aider.chat.history.md")
                ],
            }
        );
        let other = dir.path().join("trace.jsonl");
        std::fs::write(&other, "{\"op\":\"session\",\"n\":1}\n").unwrap();
        assert_eq!(
            transcript_error(detect(std::slice::from_ref(&other))),
            TranscriptError::FormatUnknown {
                file: other,
                formats: format_names(),
            }
        );
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(
            transcript_error(detect(&[empty.path().to_path_buf()])),
            TranscriptError::NoTranscript {
                inputs: vec![empty.path().to_path_buf()],
                formats: format_names(),
            }
        );
        let missing = dir.path().join("missing.jsonl");
        assert!(matches!(
            transcript_error(detect(std::slice::from_ref(&missing))),
            TranscriptError::Unreadable { path, .. } if path == missing
        ));
    }

    fn transcript_error(result: Result<Format>) -> TranscriptError {
        match result {
            Err(crate::error::Error::Transcript(e)) => e,
            other => panic!("{other:?}"),
        }
    }
}
