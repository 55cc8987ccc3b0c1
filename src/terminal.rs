//! Text an agent wrote, made safe to print on a terminal: every control character is
//! written as a visible escape, so that a description, a file name or a check's output
//! cannot move the cursor, set the window title, write the clipboard (OSC 52), clear the
//! screen or forge a line of loopbench's own output.
//!
//! Escaped: the C0 controls (U+0000 to U+001F, so ESC and CR too), DEL, the C1 controls
//! (U+0080 to U+009F, among them the one-character CSI and OSC), and the Unicode
//! direction overrides and isolates (U+202A to U+202E, U+2066 to U+2069), which reorder
//! what a terminal shows. ESC becomes `\e`, CR `\r`, LF `\n`, TAB `\t`, the others
//! `\xNN` (below U+0100) or `\u{NNNN}`. Text without any of them is returned as it is.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` for one line of output: every control character escaped, line breaks too.
pub fn line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

/// `text` for several lines of output: like [`line`], but line feeds and tabs stay (the
/// output's own line structure); CR is still escaped, since it overwrites a line.
pub fn block(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

fn needs_escape(c: char, keep_lines: bool) -> bool {
    match c {
        '\n' | '\t' => !keep_lines,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
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
