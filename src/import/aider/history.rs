//! aider's chat history file (`.aider.chat.history.md`) split into sessions and, within
//! each, into what wrote it: the user, the model, or aider itself.
//!
//! aider appends to the file as it goes: `# aider chat started at TIME` opens a session;
//! what the user typed is written as `#### ` lines, each ending in two spaces; aider's own messages (questions and
//! their answers, "Applied edit to PATH", "Running CMD", "Tokens: ... Cost: ...") as
//! `> ` lines, each ending in two spaces, a message of several lines with `> ` on its
//! first line only and the two spaces on its last; a model's reply as plain Markdown
//! after a blank line. So a reply ends where a blank line is followed by a `> ` or
//! `#### ` line that ends in two spaces: a quote inside a reply (`> note`) does not end
//! it. A reply that imitates aider's own line exactly (`> Applied edit to x  ` after a
//! blank line) cannot be told from one; the importer reads it as aider's.
//!
//! Every line aider writes ends with a newline: a file that does not was cut off while
//! aider wrote it, and its last line is dropped with a note.

use std::path::Path;

use crate::error::{Result, TranscriptError};
use crate::import::session::{bad_line, describe_shape, describe_text};

/// The line that starts every session of an aider chat history.
pub const AIDER_HEADER: &str = "# aider chat started at";

/// One session of a history.
#[derive(Debug, Clone, PartialEq)]
pub struct AiderSession {
    /// 1-based line of its `# aider chat started at` header.
    pub line: usize,
    /// The header's time, as written.
    pub started: String,
    /// What was written, in order.
    pub events: Vec<Event>,
    /// The last line of the file was cut off in this session.
    pub cut_off: bool,
}

/// Who wrote a part of the history.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// What the user typed (`####` lines), joined by newlines.
    User {
        /// 1-based line of its first line.
        line: usize,
        /// The text.
        text: String,
    },
    /// A model's reply.
    Reply {
        /// 1-based line of its first line.
        line: usize,
        /// The text, as the model wrote it.
        text: String,
    },
    /// One of aider's own messages, without its `> ` and trailing spaces; the lines of a
    /// message of several lines joined by newlines.
    Tool {
        /// 1-based line of its first line.
        line: usize,
        /// The text.
        text: String,
    },
}

/// What a history is, for the message of a file that is not one.
pub const EXPECTED: &str = "an aider chat history (its first line \"# aider chat started at ...\")";

/// Reads the history `path` into its sessions; notes are pushed onto `notes`.
pub fn read(path: &Path, notes: &mut Vec<String>) -> Result<Vec<AiderSession>> {
    let bytes = std::fs::read(path).map_err(|e| TranscriptError::Unreadable {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.split('\n').collect();
    // The piece after the last newline: empty, or a line aider was still writing.
    let tail = lines.pop().unwrap_or("");
    let cut_off = !tail.is_empty();
    if cut_off {
        notes.push(format!(
            "{}:{}: the last line is cut off (no newline at its end), dropped: aider was stopped while writing it",
            path.display(),
            lines.len() + 1
        ));
    }
    let first = lines.iter().position(|l| !l.trim().is_empty());
    match first {
        Some(i) if lines[i].starts_with(AIDER_HEADER) => {}
        Some(i) => return Err(bad_line(path, i + 1, EXPECTED, &describe_first(lines[i]))),
        None if cut_off && tail.starts_with(AIDER_HEADER) => return Ok(Vec::new()),
        None => {
            return Err(TranscriptError::Empty {
                file: path.to_path_buf(),
                expected: EXPECTED.into(),
            }
            .into());
        }
    }
    let mut sessions: Vec<AiderSession> = Vec::new();
    let mut start = 0;
    for (i, line) in lines.iter().enumerate() {
        if let Some(time) = line.strip_prefix(AIDER_HEADER) {
            if let Some(session) = sessions.last_mut() {
                session.events = events(&lines[start..i], start);
            }
            sessions.push(AiderSession {
                line: i + 1,
                started: time.trim().to_string(),
                events: Vec::new(),
                cut_off: false,
            });
            start = i + 1;
        }
    }
    if let Some(session) = sessions.last_mut() {
        session.events = events(&lines[start..], start);
        session.cut_off = cut_off;
    }
    Ok(sessions)
}

fn describe_first(line: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(line) {
        Ok(serde_json::Value::Object(map)) => describe_shape(&map),
        _ => describe_text(line),
    }
}

/// A line aider ends a message of its own with.
fn closes(line: &str) -> bool {
    line.ends_with("  ")
}

fn is_tool(line: &str) -> bool {
    line.starts_with('>')
}

/// A line of what the user typed: aider ends each with two spaces, which tells it from a
/// Markdown heading in a reply (`#### Next`).
fn is_user(line: &str) -> bool {
    line.starts_with("####") && closes(line)
}

/// The text of a `>` or `####` line without its prefix and trailing spaces.
fn strip(line: &str, prefix: &str) -> String {
    let rest = line.strip_prefix(prefix).unwrap_or(line);
    rest.strip_prefix(' ')
        .unwrap_or(rest)
        .trim_end()
        .to_string()
}

/// The last line aider writes of the listing of blocks that failed to match: after the
/// blocks, the SEARCH rule, and when other blocks of the reply were applied, the request
/// for the failed ones alone.
const FAILURE_LISTING_ENDS: [&str; 3] = [
    "The SEARCH section must exactly match an existing block of lines including all white space, comments, indentation, docstrings, etc",
    "Just reply with fixed versions of the block above that failed to match.",
    "Just reply with fixed versions of the blocks above that failed to match.",
];

/// Whether `line` opens aider's listing of the blocks of a reply that failed to match
/// (`> # 2 SEARCH/REPLACE blocks failed to match!`); `None` for any other line.
pub fn failed_count(line: &str) -> Option<usize> {
    let rest = line.trim().strip_prefix("# ")?;
    let (count, rest) = rest.split_once(' ')?;
    matches!(
        rest,
        "SEARCH/REPLACE block failed to match!" | "SEARCH/REPLACE blocks failed to match!"
    )
    .then(|| count.parse().ok())
    .flatten()
}

/// When `lines[at]` opens aider's listing of failed blocks, the index of its last line:
/// the first of its closing sentences that ends aider's message (two spaces), before the
/// next session. `None` for any other line, or a listing cut off before its end (read
/// then as any message of aider's).
fn failure_listing_end(lines: &[&str], at: usize) -> Option<usize> {
    let first = lines[at].strip_prefix('>')?;
    failed_count(first)?;
    lines[at + 1..]
        .iter()
        .take_while(|l| !l.starts_with(AIDER_HEADER))
        .position(|l| closes(l) && FAILURE_LISTING_ENDS.contains(&l.trim()))
        .map(|offset| at + 1 + offset)
}

/// The events of one session's lines; `offset` is the index of its first line.
fn events(lines: &[&str], offset: usize) -> Vec<Event> {
    let mut out = Vec::new();
    let mut i = 0;
    let mut blank_before = true;
    while i < lines.len() {
        let line = lines[i];
        let number = offset + i + 1;
        if line.trim().is_empty() {
            blank_before = true;
            i += 1;
            continue;
        }
        if is_user(line) {
            let mut text = vec![strip(line, "####")];
            i += 1;
            while i < lines.len() && is_user(lines[i]) {
                text.push(strip(lines[i], "####"));
                i += 1;
            }
            out.push(Event::User {
                line: number,
                text: text.join("\n"),
            });
        } else if let Some(last) = failure_listing_end(lines, i) {
            // The listing quotes the failed blocks' lines as the model wrote them: a
            // Markdown line ending in two spaces, a `####` heading, a blank line among
            // them do not end it; its own last line does.
            // Its lines kept as written (a SEARCH line's trailing spaces are the
            // model's), but the two spaces that end the message.
            let mut text = vec![strip(line, ">")];
            text.extend(lines[i + 1..last].iter().map(|l| l.to_string()));
            text.push(lines[last].trim_end().to_string());
            out.push(Event::Tool {
                line: number,
                text: text.join("\n"),
            });
            i = last + 1;
        } else if is_tool(line) && (!blank_before || closes(line)) {
            let mut text = vec![strip(line, ">")];
            let mut closed = closes(line);
            i += 1;
            // A message of several lines: `> ` on its first, two spaces on its last,
            // which the next message or a blank line follows (a line padded with spaces
            // inside it goes on).
            while i < lines.len() {
                let next = lines[i];
                let ends_here = next.trim().is_empty() || is_tool(next) || is_user(next);
                if (closed && ends_here) || is_user(next) || next.starts_with(AIDER_HEADER) {
                    break;
                }
                if closed && is_tool(next) {
                    break;
                }
                closed = closes(next);
                text.push(next.trim_end().to_string());
                i += 1;
            }
            out.push(Event::Tool {
                line: number,
                text: text.join("\n"),
            });
        } else {
            // A reply: up to a blank line followed by a line of aider's or the user's.
            let mut end = i + 1;
            let mut last = i;
            while end < lines.len() {
                let next = lines[end];
                if next.trim().is_empty() {
                    end += 1;
                    continue;
                }
                if lines[end - 1].trim().is_empty()
                    && (is_user(next)
                        || (is_tool(next) && closes(next))
                        || failure_listing_end(lines, end).is_some())
                {
                    break;
                }
                last = end;
                end += 1;
            }
            out.push(Event::Reply {
                line: number,
                text: lines[i..=last].join("\n"),
            });
            i = last + 1;
        }
        blank_before = false;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Vec<AiderSession>, Vec<String>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.md");
        std::fs::write(&path, text).unwrap();
        let mut notes = Vec::new();
        let sessions = read(&path, &mut notes).unwrap();
        (sessions, notes)
    }

    fn tool(line: usize, text: &str) -> Event {
        Event::Tool {
            line,
            text: text.into(),
        }
    }

    #[test]
    fn users_replies_and_aiders_messages_are_told_apart() {
        let text = "\n# aider chat started at 2026-12-01 10:00:00\n\n\
                    > Aider v0.86.2  \n\
                    > Main model: gpt-4o with diff edit format  \n\n\
                    #### fix it  \n\
                    ####   \n\
                    #### please  \n\n\
                    a.py\n```\n> a quote in the reply\n\nmore reply\n```\n\n\
                    > Tokens: 1.0k sent, 5 received. Cost: $0.01 message, $0.01 session.  \n\
                    > python3 x.py \n\
                    ls             \n\
                    true  \n\
                    > Run shell commands? (Y)es/(N)o [Yes]: y  \n";
        let (sessions, notes) = parse(text);
        assert!(notes.is_empty());
        assert_eq!(sessions.len(), 1);
        assert_eq!(sessions[0].started, "2026-12-01 10:00:00");
        assert_eq!(
            sessions[0].events,
            vec![
                tool(4, "Aider v0.86.2"),
                tool(5, "Main model: gpt-4o with diff edit format"),
                Event::User {
                    line: 7,
                    text: "fix it\n\nplease".into()
                },
                Event::Reply {
                    line: 11,
                    text: "a.py\n```\n> a quote in the reply\n\nmore reply\n```".into()
                },
                tool(
                    18,
                    "Tokens: 1.0k sent, 5 received. Cost: $0.01 message, $0.01 session."
                ),
                tool(19, "python3 x.py\nls\ntrue"),
                tool(22, "Run shell commands? (Y)es/(N)o [Yes]: y"),
            ]
        );
    }

    #[test]
    fn a_failed_blocks_listing_is_one_message_whatever_lines_it_quotes() {
        let text = "\n# aider chat started at A\n\nPROGRESS.md\n#### Done\n\n- a  \n\n\
                    > # 1 SEARCH/REPLACE block failed to match!\n\n\
                    ## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in PROGRESS.md\n\
                    <<<<<<< SEARCH\n- a  \n\n#### Next\n=======\n- b  \n>>>>>>> REPLACE\n\n\
                    The SEARCH section must exactly match an existing block of lines including all white space, comments, indentation, docstrings, etc  \n\n\
                    > Tokens: 1 sent, 1 received.  \n";
        let (sessions, _) = parse(text);
        let events = &sessions[0].events;
        assert_eq!(events.len(), 3, "{events:?}");
        // A heading in a reply is the model's, not the user's (whose lines end in two spaces).
        assert_eq!(
            events[0],
            Event::Reply {
                line: 4,
                text: "PROGRESS.md\n#### Done\n\n- a  ".into()
            }
        );
        let Event::Tool { line: 9, text } = &events[1] else {
            panic!("{events:?}")
        };
        // The SEARCH lines as written, their two spaces kept; the message's own dropped.
        assert!(
            text.contains("<<<<<<< SEARCH\n- a  \n\n#### Next\n=======\n"),
            "{text}"
        );
        assert!(text.ends_with("docstrings, etc"), "{text}");
        assert_eq!(failed_count(text.lines().next().unwrap()), Some(1));
        assert_eq!(events[2], tool(22, "Tokens: 1 sent, 1 received."));
        assert_eq!(
            failed_count("# 2 SEARCH/REPLACE blocks failed to match!"),
            Some(2)
        );
        assert_eq!(failed_count("# Progress"), None);
    }

    #[test]
    fn sessions_split_at_each_header_and_a_cut_off_last_line_is_dropped() {
        let text =
            "\n# aider chat started at A\n\n> one  \n\n# aider chat started at B\n\n> two  \n> thr";
        let (sessions, notes) = parse(text);
        assert_eq!(sessions.len(), 2);
        assert_eq!(sessions[0].events, vec![tool(4, "one")]);
        assert_eq!(sessions[1].events, vec![tool(8, "two")]);
        assert!(sessions[1].cut_off && !sessions[0].cut_off);
        assert!(
            notes[0].contains("h.md:9: the last line is cut off"),
            "{notes:?}"
        );
    }
}
