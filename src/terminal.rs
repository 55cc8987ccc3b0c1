//! Text an agent wrote, made safe to print on a terminal: every control character and
//! every invisible character is written as a visible escape, so that a description, a
//! file name or a check's output cannot move the cursor, set the window title, write the
//! clipboard (OSC 52), clear the screen, forge a line of loopbench's own output, or read
//! as something it is not (`F1` followed by a zero-width space prints as `F1\u{200b}`,
//! never as `F1`).
//!
//! Escaped: the C0 controls (U+0000 to U+001F, so ESC and CR too), DEL, the C1 controls
//! (U+0080 to U+009F, among them the one-character CSI and OSC), and the invisible
//! characters of [`is_invisible`]: every format character (Unicode general category Cf:
//! zero-width space and joiners, the byte order mark, soft hyphen, the direction marks,
//! overrides and isolates, which reorder what a terminal shows), the line and paragraph
//! separators U+2028 and U+2029, and the other characters Unicode says to show as
//! nothing (variation selectors, the combining grapheme joiner, Hangul fillers, ...).
//! ESC becomes `\e`, CR `\r`, LF `\n`, TAB `\t`, the others `\xNN` (below U+0100) or
//! `\u{NNNN}`. Text without any of them is returned as it is.

use std::borrow::Cow;
use std::fmt::Write as _;

use unicode_properties::{GeneralCategory, UnicodeGeneralCategory};

/// `text` for one line of output: every control character escaped, line breaks too.
pub fn line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// `text` for several lines of output: like [`line`], but line feeds and tabs stay (the
/// output's own line structure); CR is still escaped, since it overwrites a line.
pub fn block(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

/// Whether `c` shows as nothing, or changes how the text around it shows, while a
/// reader takes the text for what is visible: a format character (general category Cf),
/// the line or paragraph separator, or one of the other default-ignorable code points
/// of Unicode (variation selectors, the combining grapheme joiner, the Hangul fillers,
/// the Khmer inherent vowels, the Mongolian free variation selectors). The feature-list
/// readers drop these from ids, and every printout of agent text escapes them.
pub fn is_invisible(c: char) -> bool {
    if c.is_ascii() {
        return false;
    }
    matches!(
        c,
        '\u{034f}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{ffa0}'
            | '\u{e0100}'..='\u{e01ef}'
    ) || matches!(
        c.general_category(),
        GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

fn needs_escape(c: char, keep_lines: bool) -> bool {
    match c {
        '\n' | '\t' => !keep_lines,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        c => is_invisible(c),
    }
}

fn escape(text: &str, keep_lines: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| needs_escape(c, keep_lines)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if !needs_escape(c, keep_lines) {
            out.push(c);
            continue;
        }
        // Writing to a String cannot fail.
        let _ = match c {
            '\u{1b}' => out.write_str("\\e"),
            '\r' => out.write_str("\\r"),
            '\n' => out.write_str("\\n"),
            '\t' => out.write_str("\\t"),
            c if u32::from(c) < 0x100 => write!(out, "\\x{:02x}", u32::from(c)),
            c => write!(out, "\\u{{{:04x}}}", u32::from(c)),
        };
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_text_is_unchanged_and_borrowed() {
        let text = "F1: 2% late fee — ünïcødé 🎉 \\ back";
        assert!(matches!(line(text), Cow::Borrowed(t) if t == text));
        assert!(matches!(block("a\n\tb"), Cow::Borrowed("a\n\tb")));
    }

    #[test]
    fn terminal_sequences_and_forged_lines_are_escaped() {
        let title = "\u{1b}]0;pwned\u{7}";
        assert_eq!(line(title), "\\e]0;pwned\\x07");
        let clipboard = "\u{1b}]52;c;ZWNobyBoaQ==\u{1b}\\";
        assert_eq!(line(clipboard), "\\e]52;c;ZWNobyBoaQ==\\e\\");
        assert_eq!(line("\u{1b}[2J\u{1b}[H"), "\\e[2J\\e[H");
        assert_eq!(
            line("ok\rclaimed F2; its check passes"),
            "ok\\rclaimed F2; its check passes"
        );
        assert_eq!(line("a\nb\tc"), "a\\nb\\tc");
        assert_eq!(block("a\nb\r\n"), "a\nb\\r\n");
        assert_eq!(
            line("\u{9b}31m\u{9d}0;t\u{7f}\u{0}"),
            "\\x9b31m\\x9d0;t\\x7f\\x00"
        );
        assert_eq!(line("abc\u{202e}fed"), "abc\\u{202e}fed");
    }

    #[test]
    fn invisible_characters_are_escaped_so_a_look_alike_reads_differently() {
        assert_eq!(line("claimed F1\u{200b}"), "claimed F1\\u{200b}");
        assert_ne!(line("claimed F1\u{200b}"), line("claimed F1"));
        for (text, want) in [
            ("\u{feff}F1", "\\u{feff}F1"),
            ("F\u{ad}1", "F\\xad1"),
            ("F1\u{200d}", "F1\\u{200d}"),
            ("F1\u{200e}", "F1\\u{200e}"),
            ("F1\u{2060}", "F1\\u{2060}"),
            ("a\u{2028}b\u{2029}c", "a\\u{2028}b\\u{2029}c"),
            ("F1\u{fe0f}", "F1\\u{fe0f}"),
            ("F1\u{e0001}", "F1\\u{e0001}"),
            ("F1\u{34f}", "F1\\u{034f}"),
        ] {
            assert_eq!(line(text), want, "{text:?}");
            assert_eq!(block(text), want, "{text:?}");
        }
        // Visible text of any script, fullwidth forms and emoji stay as they are.
        for text in ["Ｆ１", "ü €", "日本語", "🎉", "a\u{a0}b"] {
            assert!(matches!(line(text), Cow::Borrowed(_)), "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn escaped_text_holds_no_control_character(text in any::<String>()) {
            let one = line(&text);
            prop_assert!(!one.chars().any(|c| needs_escape(c, false)), "{:?}", one);
            let many = block(&text);
            prop_assert!(!many.chars().any(|c| needs_escape(c, true)), "{:?}", many);
        }
    }
}
