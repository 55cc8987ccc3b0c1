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
use crate::error::{Error, Result};

/// The first line of `path` that is not blank (at most [`JSON_LINE_MAX`] bytes of it).
fn first_line(path: &Path) -> Result<Option<String>> {
    let file = std::fs::File::open(path).map_err(|e| {
        Error::BadInput(format!("cannot read transcript '{}': {e}", path.display()))
    })?;
    let mut reader = BufReader::new(file).take(JSON_LINE_MAX as u64);
    let mut bytes = Vec::new();
    loop {
        bytes.clear();
        let read = reader.read_until(b'\n', &mut bytes).map_err(|e| {
            Error::BadInput(format!("cannot read transcript '{}': {e}", path.display()))
        })?;
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
        let meta = std::fs::metadata(input).map_err(|e| {
            Error::BadInput(format!("cannot read transcript '{}': {e}", input.display()))
        })?;
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
                    return Err(Error::BadInput(format!(
                        "cannot tell the format of '{}' from its first line; name it: {}",
                        input.display(),
                        choices()
                    )));
                }
            }
        }
    }
    let mut formats = found.iter();
    match (formats.next(), formats.next()) {
        (Some((format, _)), None) => Ok(*format),
        (None, _) => Err(Error::BadInput(format!(
            "no transcript found in {}; name the format: {}",
            names(inputs),
            choices()
        ))),
        (Some(_), Some(_)) => {
            let each: Vec<String> = found
                .iter()
                .map(|(format, files)| {
                    format!(
                        "{} ({} file(s), e.g. '{}')",
                        format.name(),
                        files.len(),
                        files[0].display()
                    )
                })
                .collect();
            let verb = if inputs.len() == 1 { "holds" } else { "hold" };
            Err(Error::BadInput(format!(
                "{} {verb} transcripts of more than one format: {}; import one with `loopbench import {} PATH...`",
                names(inputs),
                each.join(", "),
                found.keys().map(|f| f.name()).collect::<Vec<_>>().join("|")
            )))
        }
    }
}

fn choices() -> String {
    let names: Vec<&str> = Format::all().map(Format::name).collect();
    format!("loopbench import {} PATH...", names.join("|"))
}

fn names(inputs: &[PathBuf]) -> String {
    inputs
        .iter()
        .map(|p| format!("'{}'", p.display()))
        .collect::<Vec<_>>()
        .join(", ")
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
        let err = detect(&[dir.path().to_path_buf()]).unwrap_err().to_string();
        assert!(
            err.contains("codex (1 file(s)") && err.contains("aider (1 file(s)"),
            "{err}"
        );
        assert!(err.contains("loopbench import codex|aider"), "{err}");
        let other = dir.path().join("trace.jsonl");
        std::fs::write(&other, "{\"op\":\"session\",\"n\":1}\n").unwrap();
        let err = detect(&[other]).unwrap_err().to_string();
        assert!(err.contains("cannot tell the format"), "{err}");
    }
}
