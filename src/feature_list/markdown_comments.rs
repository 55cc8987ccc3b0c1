//! What a reader of a rendered Markdown list sees of each line: the text of its HTML
//! comments removed where CommonMark hides it, and nowhere else, so that no claim a
//! person reads can be kept from the harness by something that only looks like a
//! comment (one inside a code span, one that its paragraph never closes).
//!
//! Where this reading cannot follow CommonMark exactly (the containers a comment lies
//! in), it shows more than CommonMark would, never less: an entry it shows that a
//! person would not see counts against the agent that wrote it so.

use std::borrow::Cow;

use super::markdown::Fence;
use super::markdown_item::{bullet_text, indent_width};

/// Opens an HTML comment.
pub(super) const COMMENT_OPEN: &str = "<!--";
/// Closes an HTML comment.
pub(super) const COMMENT_CLOSE: &str = "-->";

/// `line` with each `<!--` outside a code span escaped, so that it reads back as text:
/// as in CommonMark, the backslashes right before it are doubled and one more escapes
/// the `<`; [`visible_lines`] halves them again. Inside a code span `<!--` is text
/// already, and a backslash would be shown.
pub(super) fn escape_openers(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    let mut at = 0;
    while let Some(rest) = line.get(at..).filter(|r| !r.is_empty()) {
        let opener = rest.find(COMMENT_OPEN);
        if let Some(tick) = rest.find('`').filter(|t| opener.is_none_or(|o| *t < o)) {
            let end = code_span_end(rest, tick);
            out.push_str(&rest[..end]);
            at += end;
            continue;
        }
        let Some(open) = opener else {
            out.push_str(rest);
            break;
        };
        let before = &rest[..open];
        let plain = before.trim_end_matches('\\');
        out.push_str(plain);
        out.push_str(&"\\".repeat(2 * (before.len() - plain.len()) + 1));
        out.push_str(COMMENT_OPEN);
        at += open + COMMENT_OPEN.len();
    }
    out
}

/// A comment that hides whole lines, and where it ends.
#[derive(Debug, Clone, Copy)]
enum Hiding {
    /// A comment block (a line that starts with `<!--`): every line up to and including
    /// the one holding `-->`. Opened `indent` columns in, it may lie in a list item,
    /// which a non-blank line indented less ends, and the block with it.
    Block { indent: usize },
    /// An inline comment that its paragraph closes on line `line`, at byte `end`: the
    /// lines before that one, and that one up to `end`.
    Inline { line: usize, end: usize },
}

/// The lines of `text` as a reader of the rendered file sees them, one output line per
/// input line, so that line numbers stay those of the file.
///
/// As in CommonMark:
/// - a line that starts with `<!--` (indented three columns or less) opens a comment
///   block that hides every line up to and including the one holding `-->`; one
///   indented at all ends early at a non-blank line indented less (the end of the list
///   item it lies in);
/// - elsewhere a comment hides its own span, over the following lines only while they
///   continue its paragraph: a comment that its paragraph does not close (before a blank
///   line, a list item, a heading, a fence, a comment block or a thematic break) is
///   text, and so is everything after it;
/// - `<!--` inside a code span (`` `<!--` ``) is text, and an odd run of backslashes
///   right before it escapes it (as [`escape_openers`] writes one); the backslashes
///   right before `<!--` are halved, as CommonMark shows them;
/// - lines inside code fences are passed on as they are, and the parsers skip them.
pub(super) fn visible_lines(text: &str) -> Vec<Cow<'_, str>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut fence: Option<Fence> = None;
    let mut hiding: Option<Hiding> = None;
    // No line before this one closes a comment within its paragraph: a look ahead from
    // an earlier line found the paragraph's end first.
    let mut no_close_before = 0;
    for (index, &raw) in lines.iter().enumerate() {
        if let Some(current) = fence {
            if current.is_closed_by(raw.trim_end()) {
                fence = None;
            }
            out.push(Cow::Borrowed(raw));
            continue;
        }
        let (rest, line_start) = match hiding {
            Some(Hiding::Block { indent })
                if indent > 0 && !raw.trim().is_empty() && indent_width(raw) < indent =>
            {
                hiding = None;
                (raw, true)
            }
            Some(Hiding::Block { .. }) => {
                if raw.contains(COMMENT_CLOSE) {
                    hiding = None;
                }
                out.push(Cow::Borrowed(""));
                continue;
            }
            Some(Hiding::Inline { line, .. }) if index < line => {
                out.push(Cow::Borrowed(""));
                continue;
            }
            Some(Hiding::Inline { end, .. }) => {
                hiding = None;
                (raw.get(end..).unwrap_or(""), false)
            }
            None => (raw, true),
        };
        if line_start && indent_width(rest) <= 3 && rest.trim_start().starts_with(COMMENT_OPEN) {
            if !rest.contains(COMMENT_CLOSE) {
                hiding = Some(Hiding::Block {
                    indent: indent_width(rest),
                });
            }
            out.push(Cow::Borrowed(""));
            continue;
        }
        // A fence's opening line is shown as it is (its info string is not HTML), and the
        // parsers see the same line and open the same fence.
        if let Some(opened) = Fence::opened_by(rest.trim_end()) {
            fence = Some(opened);
            out.push(Cow::Borrowed(rest));
            continue;
        }
        if !rest.contains(COMMENT_OPEN) {
            out.push(Cow::Borrowed(rest));
            continue;
        }
        let (mut visible, open) = inline(rest, true);
        if let Some(at) = open {
            let closed = if index + 1 < no_close_before {
                Err(no_close_before)
            } else {
                close_in_paragraph(&lines, index + 1)
            };
            match closed {
                Ok(found) => hiding = Some(found),
                Err(paragraph_end) => {
                    no_close_before = paragraph_end;
                    visible.push_str(&inline(rest.get(at..).unwrap_or(""), false).0);
                }
            }
        }
        // What is left may open a fence; the parsers will see it so, and so does this.
        if let Some(opened) = Fence::opened_by(visible.trim_end()) {
            fence = Some(opened);
            hiding = None;
        }
        out.push(Cow::Owned(visible));
    }
    out
}

/// What a reader sees of `text`, part of one line outside any comment: its comments
/// closed on the line removed. With `closable` false every `<!--` is text (one that
/// cannot close). Also where a comment the line leaves open starts (what is seen ends
/// before it).
fn inline(text: &str, closable: bool) -> (String, Option<usize>) {
    let mut visible = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(rest) = text.get(at..).filter(|r| !r.is_empty()) {
        let opener = rest.find(COMMENT_OPEN);
        if let Some(tick) = rest.find('`').filter(|t| opener.is_none_or(|o| *t < o)) {
            let end = code_span_end(rest, tick);
            visible.push_str(&rest[..end]);
            at += end;
            continue;
        }
        let Some(open) = opener else {
            visible.push_str(rest);
            break;
        };
        let before = &rest[..open];
        let plain = before.trim_end_matches('\\');
        let backslashes = before.len() - plain.len();
        visible.push_str(plain);
        visible.push_str(&"\\".repeat(backslashes / 2));
        let inside = open + COMMENT_OPEN.len();
        if backslashes % 2 == 1 || !closable {
            visible.push_str(COMMENT_OPEN);
            at += inside;
            continue;
        }
        match rest[inside..].find(COMMENT_CLOSE) {
            Some(end) => at += inside + end + COMMENT_CLOSE.len(),
            None => return (visible, Some(at + open)),
        }
    }
    (visible, None)
}

/// Where what starts with the run of backticks at `tick` of `text` ends: the code span
/// it opens, shown as it is, or the run alone, text, when no run of the same length
/// closes it on the line.
fn code_span_end(text: &str, tick: usize) -> usize {
    let run = text[tick..].bytes().take_while(|&b| b == b'`').count();
    let after = tick + run;
    closing_run(&text[after..], run).map_or(after, |close| after + close + run)
}

/// Where the first run of exactly `len` backticks in `text` starts.
fn closing_run(text: &str, len: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = 0;
    while at < bytes.len() {
        let run = bytes[at..].iter().take_while(|&&b| b == b'`').count();
        if run == len {
            return Some(at);
        }
        at += run.max(1);
    }
    None
}

/// The first line from `from` on that closes a comment left open in the paragraph of the
/// line before it, or the index of the line that ends that paragraph first (the comment
/// is then text).
fn close_in_paragraph(lines: &[&str], from: usize) -> Result<Hiding, usize> {
    for (line, text) in lines.iter().enumerate().skip(from) {
        if ends_paragraph(text) {
            return Err(line);
        }
        if let Some(at) = text.find(COMMENT_CLOSE) {
            return Ok(Hiding::Inline {
                line,
                end: at + COMMENT_CLOSE.len(),
            });
        }
    }
    Err(lines.len())
}

/// Whether `line` cannot continue a paragraph: it is blank or starts another block (a
/// list item, a heading, a fence, a comment block, a thematic break or a heading's
/// underline), inside block quotes too. A list marker counts at any indentation, which
/// may end a paragraph that CommonMark would go on with: the reading then shows more.
fn ends_paragraph(line: &str) -> bool {
    let mut body = line.trim_start();
    while let Some(rest) = body.strip_prefix('>') {
        body = rest.trim_start();
    }
    let hashes = body.bytes().take_while(|&b| b == b'#').count();
    let heading = (1..=6).contains(&hashes)
        && (body.len() == hashes || body[hashes..].starts_with([' ', '\t']));
    body.is_empty()
        || bullet_text(body).is_some()
        || heading
        || Fence::opened_by(body).is_some()
        || body.starts_with(COMMENT_OPEN)
        || is_break_or_underline(body)
}

/// A thematic break (three or more `*`, `-` or `_`) or a setext heading's underline (a
/// run of `=` or `-`), spaces allowed between.
fn is_break_or_underline(body: &str) -> bool {
    let marks: Vec<char> = body.chars().filter(|c| !c.is_whitespace()).collect();
    let Some(&first) = marks.first() else {
        return false;
    };
    marks.iter().all(|&c| c == first)
        && match first {
            '=' | '-' => true,
            '*' | '_' => marks.len() >= 3,
            _ => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(text: &str) -> Vec<String> {
        visible_lines(text)
            .into_iter()
            .map(Cow::into_owned)
            .collect()
    }

    #[test]
    fn a_comment_its_paragraph_does_not_close_is_text_and_the_lines_after_it_are_seen() {
        assert_eq!(
            seen("- [x] **F3** <!-- open\n- [x] **F4** seen\n  still --> seen\n"),
            [
                "- [x] **F3** <!-- open",
                "- [x] **F4** seen",
                "  still --> seen"
            ]
        );
        // Closed within its paragraph, it hides the lines in between.
        assert_eq!(
            seen("para <!-- a\nhidden\nstill --> end\n- [x] **F1**\n"),
            ["para ", "", " end", "- [x] **F1**"]
        );
        // A blank line, a heading or a fence ends the paragraph first.
        for after in ["", "## Core", "```", "***", "===", "> - [x] **F1**"] {
            let text = format!("a <!-- b\n{after}\n-->\n");
            assert_eq!(seen(&text)[0], "a <!-- b", "{text}");
        }
    }

    #[test]
    fn a_comment_block_in_a_list_item_ends_with_the_item() {
        assert_eq!(
            seen("- [ ] **F0** x\n  <!--\n\n    hidden\n- [x] **F1** y\n-->\n"),
            ["- [ ] **F0** x", "", "", "", "- [x] **F1** y", "-->"]
        );
        // Not indented, it hides every line up to `-->`.
        assert_eq!(
            seen("- [ ] **F0** x\n<!--\n- [x] **F1** y\n-->\nafter\n"),
            ["- [ ] **F0** x", "", "", "", "after"]
        );
        // Indented four columns, it is not a comment block: inline, its paragraph ends at
        // the list item.
        assert_eq!(seen("    <!--\n- [x] **F1**\n")[1], "- [x] **F1**");
    }

    #[test]
    fn an_opener_in_a_code_span_is_text() {
        assert_eq!(
            seen("- [ ] **F0** see `<!--` and ``a ` <!--``\n- [x] **F1** y\n-->\n"),
            [
                "- [ ] **F0** see `<!--` and ``a ` <!--``",
                "- [x] **F1** y",
                "-->"
            ]
        );
        // A comment that starts first holds its backticks; unmatched backticks are text.
        assert_eq!(seen("a <!-- ` --> b ` <!-- c -->"), ["a  b ` "]);
    }

    #[test]
    fn escaped_openers_are_text_and_their_backslashes_are_halved() {
        for line in [
            "a <!-- b",
            "\\<!--",
            "x\\\\<!--<!--",
            "<!-- c -->",
            "`<!--`",
        ] {
            let written = escape_openers(line);
            assert_eq!(seen(&written), [line], "{written}");
        }
        assert_eq!(seen("a \\\\<!-- hidden --> b"), ["a \\ b"]);
    }

    #[test]
    fn many_unclosed_openers_in_one_paragraph_are_each_text() {
        let text = "a <!-- b\n".repeat(200_000);
        // Each line's look ahead would read the rest of the paragraph again: 2 * 10^10
        // line reads, where one is enough.
        let lines = seen(&text);
        assert_eq!(lines.len(), 200_000);
        assert!(lines.iter().all(|l| l == "a <!-- b"));
    }
}
