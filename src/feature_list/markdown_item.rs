//! One Markdown task item read the way it renders: its block-quote markers, list marker
//! and checkbox, then its text as CommonMark shows it, whose first word is the id.
//!
//! The id is what a reader sees first after the checkbox, whatever its emphasis:
//! `**F1**`, `__F1__`, `*F1*`, `_F1_`, `~~F1~~`, a code span, a link (`[F1](url)`,
//! `[**F1**](url)`), or plain text (`- [x] F1 text`). An id in markup is the whole text
//! of that markup (`**F 1**` is `F 1`, as it always was); plain text gives its first word,
//! up to a space or a colon. A colon after the id, inside or outside the markup
//! (`**F1:**`, `**F1**:`), is not part of it. Inline HTML tags show nothing and are
//! passed over; an image's text is not shown, so it is no id. A plain first word counts
//! only when it could be a task's id (ASCII letters, digits, `_`, `.` and `-`, with at
//! least one letter or digit), so that prose such as `- [ ] **draft**...` or `- [ ] ~`
//! is no entry. Every id is then folded as all ids are (`super::id`). When the rendered
//! text gives no id, the literal form `**id**` still does (`** F 1 **` is `F 1`, which
//! CommonMark would not render bold), as before.
//!
//! The description is the item's text after the id, as written (its own Markdown kept),
//! so the normal form `- [ ] **F1** text` reads as it always did.

use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

use super::id::fold_id;

/// Tab stops used when comparing indentation, as CommonMark does.
const TAB_WIDTH: usize = 4;

/// An entry line, split into its parts.
#[derive(Debug, PartialEq)]
pub(crate) struct EntryLine<'a> {
    /// Indentation of the item inside its block quotes.
    pub(crate) indent: usize,
    /// Block quotes the item is in (`> - [x] ...` is in one).
    pub(crate) quotes: usize,
    pub(crate) passes: bool,
    /// The id as a reader sees it.
    pub(crate) id: String,
    pub(crate) description: &'a str,
}

impl<'a> EntryLine<'a> {
    /// Recognises a task item `- [ ] ID description` with any bullet or number, any
    /// indentation and spacing, inside any number of block quotes, with its id read as
    /// it renders (see the module documentation).
    pub(crate) fn parse(line: &'a str) -> Option<Self> {
        let (quotes, body) = unquote(line);
        let rest = bullet_text(body.trim_start())?.trim_start();
        let (passes, rest) = checkbox(rest)?;
        let (id, description) = item_text(rest.trim())?;
        Some(EntryLine {
            indent: indent_width(body),
            quotes,
            passes,
            id,
            description,
        })
    }
}

/// The checkbox `text` starts with as a reader sees it rendered, `[x]` or `[X]` (passes)
/// or `[ ]`, and the text after it. Its characters may be written escaped (`\[x\]`) or as
/// character references (`[&#120;]`, `&#91;x&#93;`, `[&nbsp;]`): CommonMark shows them
/// as the same box, and so does a person reading the page.
fn checkbox(text: &str) -> Option<(bool, &str)> {
    let (open, rest) = rendered_char(text)?;
    let (mark, rest) = rendered_char(rest)?;
    let (close, rest) = rendered_char(rest)?;
    if open != '[' || close != ']' {
        return None;
    }
    match mark {
        'x' | 'X' => Some((true, rest)),
        ' ' | '\u{a0}' => Some((false, rest)),
        _ => None,
    }
}

/// The first character `text` shows rendered, and the text after what wrote it: a
/// backslash-escaped punctuation character, a numeric character reference, one of the
/// named references a checkbox can be written with, or the character itself.
fn rendered_char(text: &str) -> Option<(char, &str)> {
    if let Some(rest) = text.strip_prefix('\\')
        && let Some(c) = rest.chars().next().filter(char::is_ascii_punctuation)
    {
        return Some((c, &rest[1..]));
    }
    if let Some(rest) = text.strip_prefix('&')
        && let Some((name, after)) = rest.split_once(';')
        && let Some(c) = character_reference(name)
    {
        return Some((c, after));
    }
    let c = text.chars().next()?;
    Some((c, &text[c.len_utf8()..]))
}

/// The character `&NAME;` stands for: a numeric reference, or one of the named ones a
/// checkbox can be written with.
fn character_reference(name: &str) -> Option<char> {
    let (digits, radix) = match name {
        "lbrack" | "lsqb" => return Some('['),
        "rbrack" | "rsqb" => return Some(']'),
        "nbsp" => return Some('\u{a0}'),
        _ => match name.strip_prefix('#')? {
            hex if hex.starts_with(['x', 'X']) => (&hex[1..], 16),
            decimal => (decimal, 10),
        },
    };
    let longest = if radix == 16 { 6 } else { 7 };
    if digits.is_empty() || digits.len() > longest || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let n = u32::from_str_radix(digits, radix).ok()?;
    // CommonMark shows U+FFFD for zero and for what is no character.
    Some(
        char::from_u32(n)
            .filter(|&c| c != '\0')
            .unwrap_or('\u{fffd}'),
    )
}

/// The block-quote markers `line` starts with (each `>` after any indentation, with
/// one space after it taken as part of the marker) and the rest of the line.
pub(crate) fn unquote(line: &str) -> (usize, &str) {
    let mut quotes = 0;
    let mut rest = line;
    while let Some(after) = rest.trim_start_matches([' ', '\t']).strip_prefix('>') {
        quotes += 1;
        rest = after.strip_prefix(' ').unwrap_or(after);
    }
    (quotes, rest)
}

/// `line` inside `quotes` block quotes: the rest after exactly that many markers, or
/// `None` when it is in fewer (it is outside the quote of an item that is in them).
pub(crate) fn within_quotes(line: &str, quotes: usize) -> Option<&str> {
    let mut rest = line;
    for _ in 0..quotes {
        let after = rest.trim_start_matches([' ', '\t']).strip_prefix('>')?;
        rest = after.strip_prefix(' ').unwrap_or(after);
    }
    Some(rest)
}

/// Column width of the leading whitespace, with tabs advancing to the next tab stop.
pub(crate) fn indent_width(line: &str) -> usize {
    let mut width = 0;
    for c in line.chars() {
        match c {
            ' ' => width += 1,
            '\t' => width += TAB_WIDTH - width % TAB_WIDTH,
            _ => break,
        }
    }
    width
}

/// The text after a list marker: a bullet (`-`, `*` or `+`) or an ordered-list number
/// (one to nine digits, then `.` or `)`), followed by whitespace or the line end. A task
/// item in a numbered list is shown with its checkbox like one in a bulleted list, so it
/// is read like one.
pub(crate) fn bullet_text(body: &str) -> Option<&str> {
    let digits = body.bytes().take_while(u8::is_ascii_digit).count();
    let rest = if (1..=9).contains(&digits) {
        body.get(digits..)?.strip_prefix(['.', ')'])?
    } else {
        body.strip_prefix(['-', '*', '+'])?
    };
    if rest.is_empty() || rest.starts_with([' ', '\t']) {
        Some(rest)
    } else {
        None
    }
}

/// The id and the description of an item's text (what follows its checkbox).
fn item_text(text: &str) -> Option<(String, &str)> {
    plain_bold_id(text)
        .or_else(|| rendered_id(text))
        .or_else(|| literal_bold_id(text))
}

/// The normal form, `**F1** text` with an id of ASCII letters, digits, `.` and `-`,
/// read without a parser: CommonMark renders it as the bold id and the text (nothing in
/// such an id can start other markup, and the closing `**` before a space or the end
/// closes the opening one), so this is what [`rendered_id`] gives, at a fraction of the
/// cost.
fn plain_bold_id(text: &str) -> Option<(String, &str)> {
    let rest = text.strip_prefix("**")?;
    let end = rest.find("**")?;
    let (id, after) = (rest.get(..end)?, rest.get(end + 2..)?);
    let simple = !id.is_empty()
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
    let closed = after.is_empty() || after.starts_with([' ', '\t']);
    (simple && closed).then(|| (id.to_string(), after.trim()))
}

/// Put before an item's text when it is parsed alone, so that CommonMark reads the text
/// as the inside of a paragraph, as it is in the list item (a text starting `# ` or
/// `1. ` is no heading or list there), with a space before it as after a checkbox.
const LEAD: &str = "a ";

/// The id as the text renders (see the module documentation) and the description after
/// it, or `None` when the rendered text starts with no usable id.
fn rendered_id(text: &str) -> Option<(String, &str)> {
    let source = format!("{LEAD}{text}");
    let mut id = String::new();
    // Whether any of the id was shown by markup (emphasis, a link, a code span).
    let mut marked = false;
    // Inline elements open, and how many of them are images (whose text is not shown).
    let mut depth = 0usize;
    let mut images = 0usize;
    // Where the description starts in `source`, once the id has ended.
    let mut after: Option<usize> = None;
    for (event, range) in Parser::new_ext(&source, Options::ENABLE_STRIKETHROUGH).into_offset_iter()
    {
        match event {
            Event::Start(Tag::Paragraph) | Event::End(TagEnd::Paragraph) => {}
            Event::Start(tag) => {
                depth += 1;
                images += usize::from(matches!(tag, Tag::Image { .. }));
            }
            Event::End(tag) => {
                depth = depth.saturating_sub(1);
                images = images.saturating_sub(usize::from(matches!(tag, TagEnd::Image)));
            }
            // An image's text is not shown.
            Event::Text(_) | Event::Code(_) if images > 0 => {}
            Event::Text(shown) | Event::Code(shown) if depth > 0 => {
                id.push_str(&shown);
                marked = true;
            }
            Event::Code(shown) => {
                id.push_str(&shown);
                marked = true;
            }
            Event::Text(shown) => {
                // The lead is the start of the first text; the raw text, to find where
                // the description starts as written.
                let (shown, raw_start) = if range.start == 0 {
                    (shown.strip_prefix(LEAD)?, LEAD.len())
                } else {
                    (&*shown, range.start)
                };
                let raw = source.get(raw_start..range.end).unwrap_or("");
                let (shown, raw) = if id.is_empty() {
                    (shown.trim_start(), raw.trim_start())
                } else {
                    (shown, raw)
                };
                let Some(at) = shown.find(|c: char| c.is_whitespace() || c == ':') else {
                    id.push_str(shown);
                    continue;
                };
                id.push_str(shown.get(..at).unwrap_or(""));
                // The raw text ends the id where the shown text does, unless an escape or
                // an entity made the space: then the description starts after this text.
                let raw_from = range.end - raw.len();
                let start = match raw
                    .char_indices()
                    .find(|&(_, c)| c.is_whitespace() || c == ':')
                {
                    Some((raw_at, c)) => raw_from + raw_at + c.len_utf8(),
                    None => range.end,
                };
                after = Some(start);
                break;
            }
            Event::SoftBreak | Event::HardBreak if depth == 0 => {
                after = Some(range.end);
                break;
            }
            // A tag shows nothing; nothing else can start a one-line paragraph's text.
            _ => {}
        }
    }
    let id = without_colon(&fold_id(&id));
    let plain_id_like = id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
        && id.chars().any(|c| c.is_ascii_alphanumeric());
    if id.is_empty() || (!marked && !plain_id_like) {
        return None;
    }
    // `source` is the lead and then `text`: the description is the rest of `text`.
    let description = after
        .and_then(|at| text.get(at.checked_sub(LEAD.len())?..))
        .unwrap_or("")
        .trim();
    Some((id, description))
}

/// `**id** description` read literally, as the original format is written, for text
/// that CommonMark does not render as it looks (`** F 1 **`).
fn literal_bold_id(text: &str) -> Option<(String, &str)> {
    let rest = text.strip_prefix("**")?;
    let (id, description) = rest.split_once("**")?;
    let id = without_colon(&fold_id(id));
    (!id.is_empty()).then(|| (id, description.trim()))
}

/// `id` without the colons after it (`F1:` is F1), unless it is nothing else.
fn without_colon(id: &str) -> String {
    let bare = id.trim_end_matches(':').trim_end();
    if bare.is_empty() { id } else { bare }.to_string()
}

/// `id` for a rendered entry line `**id**`: the characters CommonMark could read as
/// markup are escaped with a backslash, so that the id reads back as written. `_` is
/// escaped only where it could open or close emphasis (not between two letters or
/// digits, as in `F_1`), so that every id a task may have but one with a `_` at its
/// edge is written as it is.
pub(crate) fn escape_id(id: &str) -> String {
    let chars: Vec<char> = id.chars().collect();
    let mut out = String::with_capacity(id.len());
    for (i, &c) in chars.iter().enumerate() {
        let inside_word = |at: Option<usize>| {
            at.and_then(|at| chars.get(at))
                .is_some_and(|c| c.is_alphanumeric())
        };
        let escape = match c {
            '\\' | '`' | '*' | '[' | ']' | '<' | '&' | '~' | '!' => true,
            '_' => !(inside_word(i.checked_sub(1)) && inside_word(Some(i + 1))),
            _ => false,
        };
        if escape {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn read(line: &str) -> Option<(bool, String, String)> {
        EntryLine::parse(line).map(|e| (e.passes, e.id, e.description.to_string()))
    }

    fn f1(description: &str) -> Option<(bool, String, String)> {
        Some((true, "F1".to_string(), description.to_string()))
    }

    #[test]
    fn a_checkbox_counts_however_its_characters_are_written() {
        for (boxed, passes) in [
            ("\\[x\\]", true),
            ("[&#120;]", true),
            ("&#91;x&#93;", true),
            ("[&#x58;]", true),
            ("&lbrack;X&rsqb;", true),
            ("\\[ \\]", false),
            ("[&nbsp;]", false),
            ("[&#32;]", false),
        ] {
            let line = format!("- {boxed} **F1** adds");
            assert_eq!(
                read(&line),
                Some((passes, "F1".to_string(), "adds".to_string())),
                "{line}"
            );
        }
        // What shows another box, or none: no entry.
        for boxed in [
            "[\\x]",
            "[&#121;]",
            "&#91x&#93;",
            "[&#+120;]",
            "[&bogus;]",
            "(x)",
        ] {
            let line = format!("- {boxed} **F1** adds");
            assert_eq!(read(&line), None, "{line}");
        }
    }

    #[test]
    fn an_id_counts_whatever_its_emphasis() {
        for line in [
            "- [x] **F1** adds",
            "- [x] __F1__ adds",
            "- [x] F1 adds",
            "- [x] *F1* adds",
            "- [x] _F1_ adds",
            "- [x] ***F1*** adds",
            "- [x] **_F1_** adds",
            "- [x] ~~F1~~ adds",
            "- [x] `F1` adds",
            "- [x] **F1:** adds",
            "- [x] **F1**: adds",
            "- [x] F1: adds",
            "- [x] F1:adds",
            "- [x] [**F1**](https://example.com) adds",
            "- [x] [F1](https://example.com) adds",
            "- [x] **[F1](https://example.com)** adds",
            "- [x] <b>F1</b> adds",
            "- [x] **F**1 adds",
            "- [x] F&#49; adds",
            "> - [x] **F1** adds",
            ">> - [x] **F1** adds",
            "  > > * [x] **F1** adds",
            ">1. [x] **F1** adds",
        ] {
            assert_eq!(read(line), f1("adds"), "{line}");
        }
    }

    #[test]
    fn look_alike_ids_read_as_the_id_they_show() {
        for line in [
            "- [x] **F1\u{200b}** adds",
            "- [x] **F\u{ff11}** adds",
            "- [x] F\u{ff11} adds",
            "- [x] \u{feff}F1 adds",
            "- [x] F\u{ad}1 adds",
            "- [x] __F1\u{200e}__ adds",
            "- [x] [F1\u{2060}](x) adds",
            "- [x] **F1\u{ff1a}** adds",
        ] {
            assert_eq!(read(line), f1("adds"), "{line:?}");
        }
    }

    #[test]
    fn the_description_keeps_its_markdown_as_written() {
        assert_eq!(
            read("- [ ] **F1** uses **bold** and `code`  "),
            Some((false, "F1".into(), "uses **bold** and `code`".into()))
        );
        assert_eq!(read("- [x] **F1**"), f1(""));
        assert_eq!(read("- [x] F1"), f1(""));
        assert_eq!(
            read("- [ ] **K2** (in_progress) delete"),
            Some((false, "K2".into(), "(in_progress) delete".into()))
        );
        assert_eq!(read("- [x] F1 &amp; more"), f1("&amp; more"));
        assert_eq!(read("- [x] F1 : more"), f1(": more"));
        // An image shows no text: the id is the first word after it.
        assert_eq!(
            read("- [ ] ![F1](img.png) G2"),
            Some((false, "G2".into(), String::new()))
        );
    }

    #[test]
    fn markup_gives_its_whole_text_and_plain_text_its_first_word() {
        assert_eq!(
            read("- [ ] **F 1** x"),
            Some((false, "F 1".into(), "x".into()))
        );
        assert_eq!(
            read("- [ ] ** F 1 ** x"),
            Some((false, "F 1".into(), "x".into()))
        );
        assert_eq!(
            read("- [ ] not bold"),
            Some((false, "not".into(), "bold".into()))
        );
        assert_eq!(
            read("- [x] **Ünï** x"),
            Some((true, "Ünï".into(), "x".into()))
        );
    }

    #[test]
    fn text_that_shows_no_id_is_no_entry() {
        for line in [
            "- [ ] **** empty",
            "- [ ] **broken",
            "- [ ] ~ tilde",
            "- [ ] ... and more",
            "- [ ] Ünï x",
            "- [ ] ![F1](img.png)",
            "- [x]",
            "- [x] <b></b>",
            "- [ ] `` ``",
            "[ ] **F1** no bullet",
            "-[x] **F1** no space",
            "> not an item",
        ] {
            assert_eq!(read(line), None, "{line}");
        }
    }

    #[test]
    fn the_normal_form_reads_as_the_parser_reads_it() {
        for text in [
            "**F1** text",
            "**F1**",
            "**F-2.b3**\ttext **more**",
            "**9** `x`",
            "**-** x",
            "**1.** x",
        ] {
            assert!(plain_bold_id(text).is_some(), "{text}");
            assert_eq!(plain_bold_id(text), rendered_id(text), "{text}");
        }
        for text in ["**F_1** x", "**F1**x", "**F1:** x", "**F 1** x", "**F1"] {
            assert_eq!(plain_bold_id(text), None, "{text}");
        }
    }

    #[test]
    fn quote_markers_are_counted_and_stripped_once_each() {
        assert_eq!(unquote("> > - [x]"), (2, "- [x]"));
        assert_eq!(unquote(">   - step"), (1, "  - step"));
        assert_eq!(unquote("  - x"), (0, "  - x"));
        assert_eq!(within_quotes(">   - step", 1), Some("  - step"));
        assert_eq!(within_quotes("  - step", 1), None);
        assert_eq!(within_quotes("  - step", 0), Some("  - step"));
        let item = EntryLine::parse(">   - [x] **F1** a");
        assert_eq!(item.map(|e| (e.quotes, e.indent)), Some((1, 2)));
    }

    #[test]
    fn escaped_ids_read_back_as_written() {
        for id in [
            "F1", "F_1", "_a_", "__", "a_", "_", "*x*", "a**b", "[F1](x)", "`c`", "a\\b", "&amp;",
            "<b>", "~~s~~", "-", ".", "1.", "F-2.b_3", "!x",
        ] {
            let line = format!("- [ ] **{}** text", escape_id(id));
            assert_eq!(
                read(&line),
                Some((false, id.to_string(), "text".to_string())),
                "{id}: {line}"
            );
        }
        assert_eq!(escape_id("F_1"), "F_1");
        assert_eq!(escape_id("F1_"), "F1\\_");
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 5_000, ..ProptestConfig::default() })]

        #[test]
        fn any_item_text_is_read_without_panicking_into_a_folded_id(
            text in prop_oneof![
                ".{0,40}",
                "[*_`~\\[\\]()<>!&#:; a-zF1\u{200b}\u{ff11}]{0,24}",
            ],
            quotes in 0..3usize,
        ) {
            let line = format!("{}- [x] {text}", "> ".repeat(quotes));
            if let Some(item) = EntryLine::parse(&line) {
                prop_assert!(!item.id.is_empty());
                prop_assert_eq!(fold_id(&item.id), item.id.clone());
                prop_assert_eq!(item.quotes, quotes);
                prop_assert!(line.contains(item.description));
            }
        }
    }
}
