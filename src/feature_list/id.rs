//! Feature ids as a reader sees them: two ids that look the same are one id.
//!
//! An agent can write `F1` followed by a zero-width space, or `F１` with a fullwidth
//! digit: a person and the next session read F1, so the harness does too. Every reader
//! (JSON, YAML, Markdown, both schemas) passes each id through [`fold_id`]: the
//! invisible characters of [`crate::terminal::is_invisible`] (format characters such as
//! U+200B, U+200D, U+FEFF, the soft hyphen and the direction marks, and the other
//! default-ignorable code points) are removed, the rest is put in Unicode compatibility
//! form (NFKC: fullwidth and other compatibility forms become the characters they stand
//! for), and the whitespace around it is dropped. So `F1<U+200B>` is a claim of F1, and a
//! list that holds both `F1` and `F１` holds one id twice and is unparseable, as any list
//! that gives an id twice is. Letter case is left as written: matching `f1` to a task's
//! `F1` is [`super::with_canonical_ids`]' job, which knows the task's ids.

use unicode_normalization::UnicodeNormalization;

use crate::terminal::is_invisible;

/// `raw` as a reader sees it (see the module documentation). Folding an id again
/// changes nothing.
pub(crate) fn fold_id(raw: &str) -> String {
    if raw.is_ascii() {
        return raw.trim().to_string();
    }
    // Invisible characters go before normalizing, so that a mark they kept apart from
    // its letter composes with it, and after, in case a compatibility form holds one.
    let visible: String = raw.chars().filter(|&c| !is_invisible(c)).collect();
    let folded: String = visible.nfkc().filter(|&c| !is_invisible(c)).collect();
    folded.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn look_alike_ids_fold_to_the_id_a_reader_sees() {
        for raw in [
            "F1",
            " F1\t",
            "F1\u{200b}",
            "\u{200b}F1",
            "F\u{200b}1",
            "F1\u{200c}",
            "F1\u{200d}",
            "\u{feff}F1",
            "F\u{ad}1",
            "F1\u{200e}",
            "\u{200f}F1",
            "\u{202e}F1\u{202c}",
            "\u{2066}F1\u{2069}",
            "F1\u{2060}",
            "F1\u{fe0f}",
            "F\u{ff11}",
            "\u{ff26}\u{ff11}",
            "F1\u{3000}",
            "F1\u{a0}",
            "\u{1d405}1",
        ] {
            assert_eq!(fold_id(raw), "F1", "{raw:?}");
        }
    }

    #[test]
    fn other_ids_are_kept_as_written() {
        for id in ["f1", "F-2.b_3", "9", "F 1", "Ünïcødé", "日本"] {
            assert_eq!(fold_id(id), id);
        }
        assert_eq!(fold_id("\u{200b}"), "");
        // A combining mark kept from its letter by an invisible character composes.
        assert_eq!(fold_id("e\u{200b}\u{301}"), "\u{e9}");
    }

    proptest! {
        #[test]
        fn folding_twice_is_folding_once(raw in any::<String>()) {
            let once = fold_id(&raw);
            prop_assert_eq!(fold_id(&once), once.clone());
            prop_assert!(!once.chars().any(is_invisible), "{:?}", once);
        }
    }
}
