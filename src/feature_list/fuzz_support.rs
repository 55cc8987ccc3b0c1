//! Proptest strategies shared by the parser fuzz tests: arbitrary text and near-valid documents.

use proptest::prelude::*;
use proptest::test_runner::Config;

use super::{Entry, ListFormat, render};

/// Cases per "parser never panics" property; one place to tune the fuzzing effort.
pub(crate) const FUZZ_CASES: u32 = 100_000;

/// Deepest nesting the hostile-input strategies generate.
pub(crate) const MAX_DEPTH: usize = 10_000;

/// Proptest configuration for the fuzz properties.
pub(crate) fn fuzz_config() -> Config {
    Config {
        cases: FUZZ_CASES,
        ..Config::default()
    }
}

/// Ids as the round-trip property allows them.
pub(crate) fn plain_id() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_.-]{1,10}"
}

/// An entry with arbitrary (possibly hostile) strings, for feeding the renderers.
pub(crate) fn any_entry() -> impl Strategy<Value = Entry> {
    let text = prop_oneof![3 => ".{0,24}", 1 => any::<String>()];
    (
        prop_oneof![3 => plain_id().boxed(), 1 => ".{0,8}".boxed()],
        text.clone(),
        text.clone(),
        prop::collection::vec(text, 0..4),
        any::<bool>(),
    )
        .prop_map(|(id, category, description, steps, passes)| Entry {
            id,
            category,
            description,
            steps,
            passes,
            status: None,
            notes: String::new(),
        })
}

/// Awkward field values; picking from a pool is far cheaper than regex generation,
/// which matters at a hundred thousand cases in a debug build.
const TEXT_POOL: &[&str] = &[
    "",
    "F1",
    "F-2.b_3",
    "42",
    "007",
    "core",
    "UI / UX",
    "plain words here",
    "a: b",
    "# hash",
    "- dash",
    "[ ] **X** fake",
    "**bold**",
    "\"quoted\"",
    "'single'",
    "back\\slash",
    "line\nbreak",
    "cr\r\nlf",
    "\ttab",
    " padded ",
    "null",
    "~",
    "yes",
    "true",
    "1e999",
    "&anchor",
    "*alias",
    "!tag",
    "{flow: map}",
    "[flow, seq]",
    "```",
    "~~~",
    "ünïcødé",
    "🎉🎉",
    "\u{202e}rtl",
    "\u{0}nul",
    "\u{85}nel",
    "\u{2028}ls",
    "\u{feff}bom",
];

fn pooled() -> impl Strategy<Value = String> + Clone {
    prop::sample::select(TEXT_POOL).prop_map(str::to_string)
}

/// An entry built from [`TEXT_POOL`], for seeding structure-aware mutations.
fn pooled_entry() -> impl Strategy<Value = Entry> {
    (
        pooled(),
        pooled(),
        pooled(),
        prop::collection::vec(pooled(), 0..4),
        any::<bool>(),
    )
        .prop_map(|(id, category, description, steps, passes)| Entry {
            id,
            category,
            description,
            steps,
            passes,
            status: None,
            notes: String::new(),
        })
}

/// A rendered list in `format`, the seed for structure-aware mutations.
pub(crate) fn rendered(format: ListFormat) -> impl Strategy<Value = String> {
    prop::collection::vec(pooled_entry(), 0..4).prop_map(move |entries| render(format, &entries))
}

/// Short pieces that are meaningful to one of the three syntaxes, or just awkward.
pub(crate) fn fragment() -> impl Strategy<Value = String> {
    let special = prop::sample::select(vec![
        "[",
        "]",
        "{",
        "}",
        "\"",
        "'",
        ":",
        ": ",
        ",",
        "\t",
        "\n",
        "\r\n",
        "\r",
        " ",
        "- ",
        "* ",
        "+ ",
        "#",
        "## ",
        "**",
        "- [ ] **",
        "- [x] **F1** ",
        "```",
        "~~~",
        "&a ",
        "*a",
        "<<: *a",
        "!!binary ",
        "!!int ",
        "!custom ",
        "? ",
        "|",
        ">-",
        "---",
        "...",
        "%YAML 1.2",
        "\\",
        "\\u",
        "\\ud800",
        "\u{feff}",
        "\0",
        "\u{85}",
        "\u{2028}",
        "\u{202e}",
        "é",
        "🎉",
        "\"id\":",
        "id: ",
        "1e999",
        "-0",
        "null",
        "true",
        "\"true\"",
        "features",
    ]);
    prop_oneof![
        4 => special.prop_map(str::to_string),
        1 => prop::collection::vec(any::<char>(), 0..4).prop_map(String::from_iter),
    ]
}

/// One edit applied to a document; positions are taken modulo the text's char boundaries
/// at apply time, so earlier edits cannot make later ones invalid.
#[derive(Debug, Clone)]
pub(crate) enum Mutation {
    Truncate(usize),
    Insert(usize, String),
    Delete(usize, usize),
    Duplicate(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => any::<usize>().prop_map(Mutation::Truncate),
        4 => (any::<usize>(), fragment()).prop_map(|(i, s)| Mutation::Insert(i, s)),
        2 => (any::<usize>(), 1..16usize).prop_map(|(i, n)| Mutation::Delete(i, n)),
        1 => (any::<usize>(), 1..64usize).prop_map(|(i, n)| Mutation::Duplicate(i, n)),
    ]
}

/// The char boundaries of `text`, including its end, so that slicing never splits a char.
fn boundaries(text: &str) -> Vec<usize> {
    text.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(text.len()))
        .collect()
}

fn apply(text: &mut String, m: &Mutation) {
    let bounds = boundaries(text);
    let at = |i: &usize| bounds.get(i % bounds.len()).copied().unwrap_or(0);
    let after = |start: usize, n: usize| {
        let pos = bounds.partition_point(|&b| b < start);
        bounds.get(pos + n).or(bounds.last()).copied().unwrap_or(0)
    };
    match m {
        Mutation::Truncate(i) => text.truncate(at(i)),
        Mutation::Insert(i, s) => text.insert_str(at(i), s),
        Mutation::Delete(i, n) => {
            let start = at(i);
            text.replace_range(start..after(start, *n), "");
        }
        Mutation::Duplicate(i, n) => {
            let start = at(i);
            let piece = text.get(start..after(start, *n)).unwrap_or("").to_string();
            text.insert_str(start, &piece);
        }
    }
}

/// `base` documents with a few random edits applied.
pub(crate) fn mutated(base: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    (base, prop::collection::vec(mutation(), 0..6)).prop_map(|(mut text, muts)| {
        for m in &muts {
            apply(&mut text, m);
        }
        text
    })
}

/// A nesting depth, biased towards both shallow and the maximum.
pub(crate) fn depth() -> impl Strategy<Value = usize> {
    prop_oneof![2 => 1..300usize, 1 => 300..MAX_DEPTH, 1 => Just(MAX_DEPTH)]
}

/// `open` repeated to a random depth, optionally closed again, with some text in the middle.
pub(crate) fn nested(open: &'static str, close: &'static str) -> impl Strategy<Value = String> {
    (depth(), any::<bool>(), fragment()).prop_map(move |(n, closed, middle)| {
        let mut text = open.repeat(n);
        text.push_str(&middle);
        if closed {
            text.push_str(&close.repeat(n));
        }
        text
    })
}

/// Lines of fragments: a document in no particular syntax but full of syntax.
pub(crate) fn fragment_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(fragment(), 0..40).prop_map(|parts| parts.concat())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_keep_text_valid_at_any_position() {
        let mut text = "é🎉a".to_string();
        for n in 0..8 {
            apply(&mut text, &Mutation::Duplicate(n, 3));
            apply(&mut text, &Mutation::Delete(n * 7, 2));
            apply(&mut text, &Mutation::Insert(n * 3, "ü".into()));
            apply(&mut text, &Mutation::Truncate(usize::MAX - n));
        }
        // Reaching here means no edit sliced inside a multi-byte char.
        assert!(text.chars().all(|c| c != '\u{fffd}'));
    }
}
