//! What an import produces (sessions of trace lines, notes, counts), how it is written
//! as a trace, and how transcript files are read line by line.

use std::io::BufReader;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::emit::Known;
use super::tally::Tally;
use crate::agent::Usage;
use crate::agent::trace::{EndStatus, Line, Trace};
use crate::error::{Error, Result, TranscriptError};
use crate::lines::{BoundedLines, Line as TextLine};

/// One imported session.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedSession {
    /// Actions and skips, in order.
    pub lines: Vec<Line>,
    /// The importer reset a file to what the agent saw.
    pub divergent: bool,
    /// What the session used.
    pub usage: Usage,
    /// How it ended.
    pub status: EndStatus,
    /// Where it came from (the foreign session id or file), for people.
    pub source: String,
    /// What became of its tool calls.
    pub tally: Tally,
    /// The number the transcript itself gives the session (loopbench's own export keeps
    /// the run's: 0 for an initializer), kept in the trace when every session of the
    /// import has one and they increase; else sessions are numbered 1..k.
    pub n: Option<u32>,
}

/// The result of an import.
#[derive(Debug, Default)]
pub struct Imported {
    /// Sessions, numbered 1..k in this order in the trace.
    pub sessions: Vec<ImportedSession>,
    /// Things worth telling the user (skipped lines and paths), each naming file:line.
    pub notes: Vec<String>,
    /// Counts over all sessions (the sum of theirs).
    pub tally: Tally,
    /// File contents the importer knows, carried across sessions ([`super::mapping`]).
    pub known: Known,
}

impl Imported {
    /// The trace text, parsed back once: an importer that wrote a trace replay refuses
    /// would be a bug of the harness, not bad input.
    pub fn checked_trace(&self) -> Result<String> {
        let text = self.to_trace();
        Trace::parse(Path::new("<imported trace>"), &text)
            .map_err(|e| Error::Tool(format!("import produced an invalid trace: {e}")))?;
        Ok(text)
    }

    /// The trace: per session a `session` line, the actions, a `usage` line and an
    /// `end` line whose summary names the source.
    pub fn to_trace(&self) -> String {
        let given: Option<Vec<u32>> = self.sessions.iter().map(|s| s.n).collect();
        let numbers: Vec<u32> = match given {
            Some(given) if !given.is_empty() && given.windows(2).all(|w| w[0] < w[1]) => given,
            _ => (1..=self.sessions.len())
                .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
                .collect(),
        };
        let mut out = String::new();
        let mut push = |line: &Line| {
            // A Line is plain data: serializing it cannot fail.
            out += &serde_json::to_string(line).unwrap_or_default();
            out.push('\n');
        };
        for (s, n) in self.sessions.iter().zip(numbers) {
            push(&Line::Session {
                n,
                divergent: s.divergent,
            });
            s.lines.iter().for_each(&mut push);
            push(&Line::Usage {
                turns: s.usage.turns,
                input_tokens: s.usage.input_tokens,
                output_tokens: s.usage.output_tokens,
                cost_usd: s.usage.cost_usd,
            });
            push(&Line::End {
                status: s.status,
                summary: Some(format!("imported from {}", s.source)),
            });
        }
        out
    }

    /// One line per session for stderr: how many of its file and shell calls were
    /// applied, skipped (and why) and found divergent, so that a user sees at once
    /// whether a transcript was understood.
    pub fn session_lines(&self) -> Vec<String> {
        self.sessions
            .iter()
            .enumerate()
            .map(|(i, s)| format!("session {} ({}): {}", i + 1, s.source, s.tally.describe()))
            .collect()
    }

    /// Adds one session, with its counts to the import's.
    pub fn push(&mut self, session: ImportedSession) {
        self.tally.add(&session.tally);
        self.sessions.push(session);
    }

    /// One paragraph for stderr: what was imported and what was left out.
    pub fn summary(&self) -> String {
        let t = &self.tally;
        let divergent = self.sessions.iter().filter(|s| s.divergent).count();
        let unmatched = if t.diverged > 0 {
            format!(", {} other divergent call(s)", t.diverged)
        } else {
            String::new()
        };
        let mut text = format!(
            "imported {} session(s): {} action(s); not applied: {} failed call(s) ({} refused), {} call(s) without a result; {} skip(s); {} file reset(s){unmatched} in {divergent} divergent session(s)",
            self.sessions.len(),
            t.actions,
            t.failed,
            t.refused,
            t.unanswered,
            t.skipped,
            t.resets,
        );
        if !t.ignored.is_empty() {
            let ignored: Vec<String> = t.ignored.iter().map(|(k, v)| format!("{k} {v}")).collect();
            text += &format!("; no file effect: {}", ignored.join(", "));
        }
        text
    }
}

/// A line of a transcript file: its number and its JSON, or why it is not JSON.
pub type JsonLine = (usize, std::result::Result<Value, String>);

/// The longest transcript line parsed; a longer one is skipped with a note (the bound
/// keeps a file of any size from having to fit in memory).
pub const JSON_LINE_MAX: usize = 64 * 1024 * 1024;

/// Reads a transcript file as JSON lines, one at a time; blank lines are left out. A
/// missing or unreadable file is bad input naming it; bytes that are not UTF-8 are
/// replaced; a line longer than [`JSON_LINE_MAX`] comes back as an `Err` (not JSON).
pub fn read_json_lines(path: &Path) -> Result<JsonLines> {
    let file = std::fs::File::open(path).map_err(|e| unreadable(path, &e))?;
    Ok(JsonLines {
        path: path.to_path_buf(),
        lines: BoundedLines::new(BufReader::new(file), JSON_LINE_MAX),
    })
}

/// The lines of one transcript file (see [`read_json_lines`]).
pub struct JsonLines {
    path: PathBuf,
    lines: BoundedLines<BufReader<std::fs::File>>,
}

impl Iterator for JsonLines {
    type Item = Result<JsonLine>;

    fn next(&mut self) -> Option<Result<JsonLine>> {
        loop {
            let (number, line) = match self.lines.next_line() {
                Ok(Some(found)) => found,
                Ok(None) => return None,
                Err(e) => return Some(Err(unreadable(&self.path, &e))),
            };
            let parsed = match line {
                TextLine::TooLong(len) => Err(format!(
                    "line of {len} bytes is longer than {} MiB",
                    JSON_LINE_MAX >> 20
                )),
                TextLine::Text(bytes) => {
                    let text = String::from_utf8_lossy(bytes);
                    if text.trim().is_empty() {
                        continue;
                    }
                    serde_json::from_str(&text).map_err(|e| e.to_string())
                }
            };
            return Some(Ok((number, parsed)));
        }
    }
}

/// A transcript line as a JSON object, with its 1-based number.
pub type ObjectLine = (usize, serde_json::Map<String, Value>);

/// Reads a JSONL transcript whose every line is a JSON object. A line that is not one
/// is bad input naming the file, the line and `expected`, unless it is the last line:
/// a CLI stopped while writing leaves its last line cut off, which is dropped with a
/// note. Blank lines are left out.
pub fn read_objects(
    path: &Path,
    expected: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<ObjectLine>> {
    let cannot = |e: std::io::Error| unreadable(path, &e);
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut reader = BoundedLines::new(BufReader::new(file), JSON_LINE_MAX);
    let mut lines = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    while let Some((number, line)) = reader.next_line().map_err(cannot)? {
        let found = match line {
            TextLine::TooLong(len) => format!(
                "a line of {len} bytes, longer than {} MiB",
                JSON_LINE_MAX >> 20
            ),
            TextLine::Text(bytes) => {
                let text = String::from_utf8_lossy(bytes);
                if text.trim().is_empty() {
                    continue;
                }
                match serde_json::from_str::<Value>(&text) {
                    Ok(Value::Object(map)) => {
                        if let Some((line, found)) = pending.take() {
                            return Err(bad_line(path, line, expected, &found));
                        }
                        lines.push((number, map));
                        continue;
                    }
                    Ok(other) => format!("a JSON {}", json_kind(&other)),
                    Err(_) => describe_text(&text),
                }
            }
        };
        if let Some((line, found)) = pending.take() {
            return Err(bad_line(path, line, expected, &found));
        }
        pending = Some((number, found));
    }
    if let Some((line, found)) = pending {
        notes.push(format!(
            "{}:{line}: the last line is cut off ({found}), dropped: the CLI was stopped while writing it",
            path.display()
        ));
    }
    Ok(lines)
}

/// The error for a transcript line that is not what its format has: `found` says what
/// it is by its shape ([`describe_shape`], [`describe_text`]); which other format it
/// belongs to, if any, is named where every format is known (`format::import`).
pub fn bad_line(path: &Path, line: usize, expected: &str, found: &str) -> Error {
    TranscriptError::BadLine {
        file: path.to_path_buf(),
        line,
        expected: expected.into(),
        found: found.into(),
    }
    .into()
}

/// The error for a transcript (a file, or a path given) that cannot be read.
pub fn unreadable(path: &Path, e: &std::io::Error) -> Error {
    TranscriptError::Unreadable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    }
    .into()
}

/// What the JSON line `line` is by its shape, for a message about a line of the wrong
/// format.
pub fn describe_shape(line: &serde_json::Map<String, Value>) -> String {
    match line.get("type").and_then(Value::as_str) {
        Some(kind) => format!("a JSON object with \"type\": {kind:?}"),
        None => "a JSON object without \"type\"".to_string(),
    }
}

/// What a text line that is not JSON is, for the same messages.
pub fn describe_text(line: &str) -> String {
    let shown: String = line.chars().take(40).collect();
    format!("text that is not JSON ({shown:?})")
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `path`, or every file under the directory `path` whose name `keep` accepts, sorted.
/// A path that does not exist is bad input naming it.
pub fn expand(path: &Path, keep: impl Fn(&Path) -> bool) -> Result<Vec<PathBuf>> {
    let meta = std::fs::metadata(path).map_err(|e| unreadable(path, &e))?;
    if !meta.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(path)
        .sort_by_file_name()
        .into_iter()
        .filter_map(std::result::Result::ok)
        .filter(|e| e.file_type().is_file() && keep(e.path()))
        .map(walkdir::DirEntry::into_path)
        .collect();
    files.sort();
    Ok(files)
}

/// The `session-<n>.stdout` files directly in a trial's capture directory of the
/// `command` driver (`RUN_DIR/agents/<trial_id>/`), by n.
pub fn capture_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut numbered: Vec<(u64, PathBuf)> = expand(dir, |_| true)?
        .into_iter()
        .filter(|p| p.parent() == Some(dir))
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            let n = name
                .strip_prefix("session-")?
                .strip_suffix(".stdout")?
                .parse()
                .ok()?;
            Some((n, p))
        })
        .collect();
    numbered.sort();
    Ok(numbered.into_iter().map(|(_, p)| p).collect())
}

/// Fails when nothing was imported: a trace needs at least one session.
pub fn require_sessions(imported: &Imported, inputs: &[PathBuf]) -> Result<()> {
    if imported.sessions.is_empty() {
        return Err(TranscriptError::NoSessions {
            inputs: inputs.to_vec(),
        }
        .into());
    }
    Ok(())
}
