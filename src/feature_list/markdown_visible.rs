//! What a reader of a rendered Markdown list sees of each line: the text of its HTML
//! comments removed where CommonMark hides it, and the lines of its fenced code blocks
//! marked (shown as code, never as entries), each where CommonMark has them and nowhere
//! else, so that no claim a person reads can be kept from the harness by something that
//! only looks like a comment or a fence (a comment in a code span or one its paragraph
//! never closes, a fence indented as code or left open in a list item).
//!
//! Where this reading cannot follow CommonMark exactly (the containers a comment or a
//! fence lies in), it shows more than CommonMark would, never less: an entry it shows
//! that a person would not see counts against the agent that wrote it so.

use std::borrow::Cow;

use super::markdown_item::{bullet_text, indent_width};

/// Opens an HTML comment.
const COMMENT_OPEN: &str = "<!--";
/// Closes an HTML comment.
const COMMENT_CLOSE: &str = "-->";

/// `line` with each `<!--` outside a code span escaped, so that it reads back as text:
/// as in CommonMark, the backslashes right before it are doubled and one more escapes
/// the `<`; [`visible_lines`] halves them again. Inside a code span `<!--` is text
/// already, and a backslash would be shown.
pub(super) fn escape_openers(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    for step in Scan::new(line) {
        out.push_str(step.text);
        if let Some(opener) = step.opener {
            out.push_str(&"\\".repeat(2 * opener.backslashes + 1));
            out.push_str(COMMENT_OPEN);
        }
    }
    out
}

/// A `<!--` outside a code span: where its `<` is in the line, and how many backslashes
/// stand right before it.
#[derive(Debug, Clone, Copy)]
struct Opener {
    at: usize,
    backslashes: usize,
}

/// One step along a line: text as it is written (a code span whole), then perhaps an
/// opener (the backslashes right before it are not in the text).
struct Step<'a> {
    text: &'a str,
    opener: Option<Opener>,
}

/// A line cut into [`Step`]s, from byte `at` on (which a reader may move past a
/// comment it closed).
struct Scan<'a> {
    line: &'a str,
    at: usize,
}

impl<'a> Scan<'a> {
    fn new(line: &'a str) -> Scan<'a> {
        Scan { line, at: 0 }
    }
}

impl<'a> Iterator for Scan<'a> {
    type Item = Step<'a>;

    fn next(&mut self) -> Option<Step<'a>> {
        let rest = self.line.get(self.at..).filter(|r| !r.is_empty())?;
        let opener = rest.find(COMMENT_OPEN);
        if let Some(tick) = rest.find('`').filter(|t| opener.is_none_or(|o| *t < o)) {
            let end = code_span_end(rest, tick);
            self.at += end;
            return Some(Step {
                text: &rest[..end],
                opener: None,
            });
        }
        let Some(open) = opener else {
            self.at = self.line.len();
            return Some(Step {
                text: rest,
                opener: None,
            });
        };
        let before = &rest[..open];
        let plain = before.trim_end_matches('\\');
        let at = self.at + open;
        self.at = at + COMMENT_OPEN.len();
        Some(Step {
            text: plain,
            opener: Some(Opener {
                at,
                backslashes: before.len() - plain.len(),
            }),
        })
    }
}

/// A comment that hides whole lines, and where it ends.
#[derive(Debug, Clone, Copy)]
enum Hiding {
    /// A comment block (a line that starts with `<!--`): every line up to and including
    /// the one holding `-->`. Opened in a list item whose text starts at column `item`,
    /// it ends with the item: at a non-blank line indented less.
    Block { item: Option<usize> },
    /// An inline comment that its paragraph closes on line `line`, at byte `end`: the
    /// lines before that one, and that one up to `end`.
    Inline { line: usize, end: usize },
}

/// One line of a list as a reader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Seen<'a> {
    /// The line without the text of its comments.
    pub text: Cow<'a, str>,
    /// The line opens, lies in or closes a fenced code block: it is shown as code.
    pub fenced: bool,
}

impl<'a> Seen<'a> {
    fn text(text: impl Into<Cow<'a, str>>) -> Seen<'a> {
        Seen {
            text: text.into(),
            fenced: false,
        }
    }

    fn code(text: &'a str) -> Seen<'a> {
        Seen {
            text: Cow::Borrowed(text),
            fenced: true,
        }
    }
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
/// - a fenced code block ([`Fence`]) is code, its lines passed on as they are, and so
///   is `<!--` in it; a fence or a comment block in a list item ends with the innermost
///   item it lies in ([`Items`]);
/// - in a raw HTML block (a line that starts with a tag, up to a blank line) no fence or
///   comment block starts.
///
/// Where it differs, it shows more: a block it ended with its item opens nothing new up
/// to what would have closed it ([`Unsure`]), so that showing more cannot turn into
/// hiding more further down.
pub(super) fn visible_lines(text: &str) -> Vec<Seen<'_>> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut fence: Option<Fence> = None;
    let mut hiding: Option<Hiding> = None;
    let mut items = Items::default();
    // In an HTML block other than a comment, up to a blank line: raw HTML, where no
    // fence or comment block starts.
    let mut html_block = false;
    // A block ended with its list item, which CommonMark may not have ended: up to what
    // would have closed it, no block starts (the reading shows more).
    let mut unsure: Option<Unsure> = None;
    // No line before this one closes a comment within its paragraph: a look ahead from
    // an earlier line found the paragraph's end first.
    let mut no_close_before = 0;
    for (index, &raw) in lines.iter().enumerate() {
        if let Some(current) = fence {
            // Closing first: a fence in a list item that a dedented fence line ends opens
            // another one in CommonMark, which this reading does not, showing more.
            if current.is_closed_by(raw) {
                fence = None;
                out.push(Seen::code(raw));
                continue;
            }
            if !current.ended_by(raw) {
                out.push(Seen::code(raw));
                continue;
            }
            fence = None;
            unsure = Some(Unsure::Fence(current));
        }
        let (rest, line_start) = match hiding {
            Some(Hiding::Block { item }) if ends_item(item, raw) => {
                hiding = None;
                unsure = Some(Unsure::Comment);
                (raw, true)
            }
            Some(Hiding::Block { .. }) => {
                if raw.contains(COMMENT_CLOSE) {
                    hiding = None;
                }
                out.push(Seen::text(""));
                continue;
            }
            Some(Hiding::Inline { line, .. }) if index < line => {
                out.push(Seen::text(""));
                continue;
            }
            Some(Hiding::Inline { end, .. }) => {
                hiding = None;
                (raw.get(end..).unwrap_or(""), false)
            }
            None => (raw, true),
        };
        if line_start {
            let indent = indent_width(rest);
            let closes_unsure = unsure.is_some_and(|u| u.is_closed_by(rest));
            if rest.trim().is_empty() {
                html_block = false;
            } else if closes_unsure {
                unsure = None;
            } else if !html_block && unsure.is_none() && indent <= 3 {
                if rest.trim_start().starts_with(COMMENT_OPEN) {
                    let item = items.enter_block(indent);
                    if !rest.contains(COMMENT_CLOSE) {
                        hiding = Some(Hiding::Block { item });
                    }
                    out.push(Seen::text(""));
                    continue;
                }
                if let Some(opened) = Fence::opened_by(rest) {
                    fence = Some(Fence {
                        item: items.enter_block(indent),
                        ..opened
                    });
                    out.push(Seen::code(rest));
                    continue;
                }
                html_block = starts_html_block(rest);
            }
            items.read(rest);
        }
        if !rest.contains(COMMENT_OPEN) {
            out.push(Seen::text(rest));
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
        out.push(Seen::text(visible));
    }
    out
}

/// A block this reading ended with its list item, and what would close it if
/// CommonMark had not ended it.
#[derive(Debug, Clone, Copy)]
enum Unsure {
    /// A comment block: a line holding `-->`.
    Comment,
    /// A fenced code block: its closing fence.
    Fence(Fence),
}

impl Unsure {
    fn is_closed_by(self, line: &str) -> bool {
        match self {
            Unsure::Comment => line.contains(COMMENT_CLOSE),
            Unsure::Fence(fence) => fence.is_closed_by(line),
        }
    }
}

/// The list items a line may lie in, innermost last: the column where the text of each
/// starts.
#[derive(Debug, Default)]
struct Items {
    columns: Vec<usize>,
    after_blank: bool,
}

impl Items {
    /// Takes in a line read at its start, outside fences and comments.
    fn read(&mut self, line: &str) {
        if line.trim().is_empty() {
            self.after_blank = true;
            return;
        }
        // A list item ends the items whose text starts after its marker; after a blank
        // line, any line indented less than an item's text ends the item. Right after a
        // line of the item, it may continue the item's paragraph, and the item is kept.
        let item = list_item_column(line);
        if self.after_blank || item.is_some() {
            self.end_before(indent_width(line));
        }
        self.columns.extend(item);
        self.after_blank = false;
    }

    /// The innermost item a block that starts at column `indent` lies in, the items it
    /// ends ended.
    fn enter_block(&mut self, indent: usize) -> Option<usize> {
        self.end_before(indent);
        self.after_blank = false;
        self.columns.last().copied()
    }

    fn end_before(&mut self, indent: usize) {
        while self.columns.last().is_some_and(|&column| column > indent) {
            self.columns.pop();
        }
    }
}

/// What a reader sees of `text`, part of one line outside any comment: its comments
/// closed on the line removed. With `closable` false every `<!--` is text (one that
/// cannot close). Also where a comment the line leaves open starts (what is seen ends
/// before it).
fn inline(text: &str, closable: bool) -> (String, Option<usize>) {
    let mut visible = String::with_capacity(text.len());
    let mut scan = Scan::new(text);
    while let Some(step) = scan.next() {
        visible.push_str(step.text);
        let Some(opener) = step.opener else {
            continue;
        };
        visible.push_str(&"\\".repeat(opener.backslashes / 2));
        // An odd run of backslashes escapes the `<`: the opener is text.
        if opener.backslashes % 2 == 1 || !closable {
            visible.push_str(COMMENT_OPEN);
            continue;
        }
        let inside = opener.at + COMMENT_OPEN.len();
        match text[inside..].find(COMMENT_CLOSE) {
            Some(end) => scan.at = inside + end + COMMENT_CLOSE.len(),
            None => return (visible, Some(opener.at)),
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

/// Whether `line` ends the list item whose text starts at column `item`: it is not
/// blank and indented less. (A lazy continuation line of a paragraph does not end an
/// item in CommonMark; this takes it for the end, which shows more.)
fn ends_item(item: Option<usize>, line: &str) -> bool {
    item.is_some_and(|column| !line.trim().is_empty() && indent_width(line) < column)
}

/// The column where the text of the list item `line` starts, if it starts one: after
/// its marker and the one to four spaces that follow (one when there are more).
fn list_item_column(line: &str) -> Option<usize> {
    let body = line.trim_start();
    let after = bullet_text(body)?;
    let marker = body.len() - after.len();
    let spaces = after.len() - after.trim_start_matches(' ').len();
    let gap = if (1..=4).contains(&spaces) { spaces } else { 1 };
    Some(indent_width(line) + marker + gap)
}

/// Whether `line` starts an HTML block that a blank line ends (CommonMark's kinds 6 and
/// 7: an opening or closing tag first on the line), taken for one whatever the tag:
/// inside it no fence or comment block starts, which shows more when it is not one.
fn starts_html_block(line: &str) -> bool {
    let body = line.trim_start();
    let tag = body
        .strip_prefix("</")
        .or_else(|| body.strip_prefix('<'))
        .unwrap_or("");
    tag.starts_with(|c: char| c.is_ascii_alphabetic())
}

/// An open fenced code block: its fence character, how many of them opened it, how far
/// its opening line was indented, and the list item it lies in.
///
/// As in CommonMark, a fence is indented three columns or less (deeper is code or text),
/// a backtick fence's info string holds no backtick (else the line is a code span), and
/// a closing fence is at least as long as the opening one and bare. A fence in a list
/// item ends with the item (a non-blank line indented less than the item's text).
#[derive(Debug, Clone, Copy)]
pub(super) struct Fence {
    marker: char,
    len: usize,
    indent: usize,
    /// Where the text of the list item it lies in starts, if it lies in one.
    item: Option<usize>,
}

impl Fence {
    fn run_length(body: &str, marker: char) -> usize {
        body.chars().take_while(|&c| c == marker).count()
    }

    /// The fence `line` opens, if any, taken for one in no list item.
    pub(super) fn opened_by(line: &str) -> Option<Fence> {
        let indent = indent_width(line);
        if indent > 3 {
            return None;
        }
        let body = line.trim_start();
        ['`', '~'].into_iter().find_map(|marker| {
            let len = Self::run_length(body, marker);
            let info = body.get(len..).unwrap_or("");
            (len >= 3 && !(marker == '`' && info.contains('`'))).then_some(Fence {
                marker,
                len,
                indent,
                item: None,
            })
        })
    }

    /// Whether `line` closes this fence (and is its last line).
    fn is_closed_by(self, line: &str) -> bool {
        let line = line.trim_end();
        let body = line.trim_start();
        let len = Self::run_length(body, self.marker);
        indent_width(line) <= self.indent + 3
            && len >= self.len
            && body.chars().skip(len).all(char::is_whitespace)
    }

    /// Whether `line` ends the list item this fence lies in, and so the fence, before it.
    fn ended_by(self, line: &str) -> bool {
        ends_item(self.item, line)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(text: &str) -> Vec<String> {
        visible_lines(text)
            .into_iter()
            .map(|line| line.text.into_owned())
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

    fn fenced(text: &str) -> Vec<bool> {
        visible_lines(text)
            .into_iter()
            .map(|line| line.fenced)
            .collect()
    }

    #[test]
    fn only_what_opens_a_fence_as_commonmark_says_hides_the_lines_after_it() {
        // A fence left open in a list item ends with the item.
        assert_eq!(
            fenced("- [ ] **F0** x\n  ```\n- [x] **F1** y\n"),
            [false, true, false]
        );
        // Closed in the item, it holds what a person sees as code.
        assert_eq!(
            fenced("- [ ] **F0** x\n\n  ```\n  - [x] **F1** in code\n  ```\n- [x] **F2** y\n"),
            [false, false, true, true, true, false]
        );
        // Indented four columns (a tab too), or a backtick in a backtick fence's info
        // string: no fence at all.
        for opener in ["    ```", "\t~~~", "```a`b", "para\n    ```"] {
            let text = format!("{opener}\n- [x] **F1** y\n");
            assert!(!fenced(&text).contains(&true), "{text}");
        }
        // Not indented, it runs to its closing fence or the end; indented, a closing
        // fence less indented still closes it.
        assert_eq!(fenced("````\n- [x] **F1**\n```\n"), [true, true, true]);
        assert_eq!(fenced("  ```\n```\n- [x] **F1**\n"), [true, true, false]);
    }

    /// The entries a reader sees: the ids of the unfenced lines that are task items.
    fn entries(text: &str) -> Vec<String> {
        visible_lines(text)
            .into_iter()
            .filter(|line| !line.fenced)
            .filter_map(|line| {
                super::super::markdown_item::EntryLine::parse(&line.text).map(|e| e.id)
            })
            .collect()
    }

    /// Cases where a list item's end decides what a block hides, each checked against
    /// CommonMark's rendering: the claims it shows are seen here too.
    #[test]
    fn a_block_ends_with_the_innermost_list_item_it_lies_in() {
        // The fence lies in F1's item (text at column 2), not in F2's (column 6).
        let text = "+ [x] **F1** a\n    - [x] **F2** b\n   ```\n>  * [x] **F3** c\n";
        assert_eq!(entries(text), ["F1", "F2", "F3"]);
        // A line right after an item's line, indented less, continues its paragraph:
        // the comment block after it still lies in the item and ends with it.
        let text = "1. [x] **F1** a\n  ===\n   <!--\n ``\n   + [x] **F2** b\n<!-- x -->\n";
        assert_eq!(entries(text), ["F1", "F2"]);
        // Once a block ended with its item, what would have closed it opens nothing.
        let text = "- [ ] **F0** a\n  ```\n- [x] **F1** b\n  ```\n- [x] **F2** c\n";
        assert_eq!(entries(text), ["F0", "F1", "F2"]);
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
