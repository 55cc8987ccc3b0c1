//! Proptest strategies shared by the parser fuzz tests: arbitrary text and near-valid documents.

use proptest::prelude::*;
use proptest::test_runner::Config;
use serde_json::Value;

use super::{Contract, Entry, ListFormat, ListSchema, RenderOptions, Status, render, render_with};

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

/// Any of the six states.
pub(crate) fn any_status() -> impl Strategy<Value = Status> {
    prop::sample::select(Status::ALL.to_vec())
}

/// A status-schema entry with arbitrary (possibly hostile) strings and notes.
pub(crate) fn any_status_entry() -> impl Strategy<Value = Entry> {
    let notes = prop_oneof![3 => ".{0,24}", 1 => any::<String>()];
    (any_entry(), any_status(), notes).prop_map(|(mut entry, state, notes)| {
        entry.set_state(state);
        entry.notes = notes;
        entry
    })
}

/// A contract with arbitrary (possibly hostile) strings.
pub(crate) fn any_contract() -> impl Strategy<Value = Contract> {
    let text = || prop_oneof![3 => ".{0,24}", 1 => any::<String>()];
    (
        text(),
        prop::collection::vec(text(), 0..3),
        prop::collection::vec(text(), 0..3),
    )
        .prop_map(|(goal, acceptance, forbidden)| Contract {
            goal,
            acceptance,
            forbidden,
        })
}

/// A status-schema entry built from [`TEXT_POOL`].
fn pooled_status_entry() -> impl Strategy<Value = Entry> {
    (pooled_entry(), any_status(), pooled()).prop_map(|(mut entry, state, notes)| {
        entry.set_state(state);
        entry.notes = notes;
        entry
    })
}

/// A rendered status-schema list in `format`, the seed for structure-aware mutations.
pub(crate) fn rendered_status(format: ListFormat) -> impl Strategy<Value = String> {
    (
        pooled(),
        prop::collection::vec(pooled(), 0..3),
        prop::collection::vec(pooled(), 0..3),
        prop::collection::vec(pooled_status_entry(), 0..4),
    )
        .prop_map(move |(goal, acceptance, forbidden, entries)| {
            let contract = Contract {
                goal,
                acceptance,
                forbidden,
            };
            render_with(
                format,
                ListSchema::Status,
                &contract,
                &entries,
                &RenderOptions::default(),
            )
        })
}

/// What an agent might write as a state: the six words, near misses, other types' text.
const STATE_POOL: &[&str] = &[
    "pending",
    "in_progress",
    "blocked",
    "needs_review",
    "completed",
    "failed",
    "Completed",
    " COMPLETED ",
    "in-progress",
    "in progress",
    "done",
    "complete",
    "passes",
    "WIP",
    "",
    " ",
    "true",
    "null",
    "(",
    ")",
    "completed)(failed",
    "ünïcødé",
    "🎉",
];

/// A state word: one from [`STATE_POOL`], or arbitrary short text.
pub(crate) fn state_text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(STATE_POOL).prop_map(str::to_string),
        1 => ".{0,12}",
    ]
}

/// Pieces of status-schema syntax, for soups of fragments.
pub(crate) fn status_fragment() -> impl Strategy<Value = String> {
    let special = prop::sample::select(vec![
        "# Goal\n",
        "## Acceptance\n",
        "## Forbidden\n",
        "## Features\n",
        "### ",
        "#",
        "- [x] **K1** (completed) ",
        "- [x] **K1** (in_progress) ",
        "- [ ] **K2** (",
        ") ",
        "  > ",
        ">",
        "\"goal\": ",
        "\"acceptance\": [",
        "\"status\": \"",
        "\"notes\": ",
        "goal: ",
        "acceptance:\n  - ",
        "status: ",
        "notes: ",
        "features:\n  - id: K1\n",
    ]);
    prop_oneof![
        2 => special.prop_map(str::to_string),
        1 => state_text().prop_map(|w| format!("({w})")),
        2 => fragment(),
    ]
}

/// Lines of status fragments.
pub(crate) fn status_fragment_soup() -> impl Strategy<Value = String> {
    prop::collection::vec(status_fragment(), 0..40).prop_map(|parts| parts.concat())
}

/// One task-list line as an agent might write it under `## Features`: any bullet and
/// indentation, any box, `[x]` with or without words, random state words.
fn status_entry_line() -> impl Strategy<Value = String> {
    let boxes = prop::sample::select(vec!["[ ]", "[x]", "[X]", "[]", "[ x]", "[-]"]);
    let word = prop_oneof![
        2 => Just(String::new()),
        3 => state_text().prop_map(|w| format!("({w})")),
        1 => state_text().prop_map(|w| format!("( {w} ) ")),
    ];
    (
        prop::sample::select(vec!["", "  ", "\t", "    "]),
        prop::sample::select(vec!["-", "*", "+"]),
        boxes,
        pooled(),
        word,
        pooled(),
    )
        .prop_map(|(indent, bullet, checkbox, id, word, description)| {
            format!("{indent}{bullet} {checkbox} **{id}** {word}{description}")
        })
}

/// A line under an entry: a step, a note, or prose.
fn status_detail_line() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["  - ", "    * ", "  > ", "  >", "> ", "", "\t- "]),
        pooled(),
    )
        .prop_map(|(prefix, text)| format!("{prefix}{text}"))
}

/// One section of a status-schema Markdown file, its heading spelled as an agent might.
fn status_section() -> impl Strategy<Value = String> {
    let lines = |line: BoxedStrategy<String>| prop::collection::vec(line, 0..5);
    let bullets = || {
        lines(
            (
                prop::sample::select(vec!["- ", "* ", "-", "  + "]),
                pooled(),
            )
                .prop_map(|(b, t)| format!("{b}{t}"))
                .boxed(),
        )
    };
    let feature_lines = prop::collection::vec(
        prop_oneof![
            3 => status_entry_line(),
            3 => status_detail_line(),
            1 => pooled().prop_map(|c| format!("### {c}")),
        ],
        0..10,
    );
    prop_oneof![
        (
            prop::sample::select(vec!["# Goal", "#  goal  ", "# GOAL", "#Goal"]),
            lines(pooled().boxed()),
        )
            .prop_map(|(h, body)| (h.to_string(), body)),
        (
            prop::sample::select(vec!["## Acceptance", "## acceptance ", "##Acceptance"]),
            bullets(),
        )
            .prop_map(|(h, body)| (h.to_string(), body)),
        (
            prop::sample::select(vec!["## Forbidden", "##  FORBIDDEN"]),
            bullets(),
        )
            .prop_map(|(h, body)| (h.to_string(), body)),
        (
            prop::sample::select(vec!["## Features", "## features", "# Features", "###"]),
            feature_lines,
        )
            .prop_map(|(h, body)| (h.to_string(), body)),
        (
            prop::sample::select(vec!["# Feature list", "## Notes", "```", ""]),
            lines(pooled().boxed()),
        )
            .prop_map(|(h, body)| (h.to_string(), body)),
    ]
    .prop_map(|(heading, body)| format!("{heading}\n{}\n", body.join("\n")))
}

/// Status-schema Markdown files: sections missing, repeated or in any order.
pub(crate) fn status_markdown_document() -> impl Strategy<Value = String> {
    prop::collection::vec(status_section(), 0..7).prop_map(|sections| sections.join("\n"))
}

/// Any small JSON value, of any type, with strings that are often state words.
fn any_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        state_text().prop_map(Value::String),
        pooled().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 12, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((pooled(), inner), 0..4)
                .prop_map(|pairs| Value::Object(pairs.into_iter().collect())),
        ]
    })
}

/// `good` most of the time, otherwise a value of any type, or no key at all (`None`).
fn sometimes_wrong(good: BoxedStrategy<Value>) -> impl Strategy<Value = Option<Value>> {
    prop_oneof![
        3 => good.prop_map(Some),
        2 => any_value().prop_map(Some),
        1 => Just(None),
    ]
}

/// An object of `(key, value)` pairs, leaving out the keys whose value is `None`.
fn object(pairs: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
            .collect(),
    )
}

/// A status-schema entry object whose every field may be missing or of the wrong type.
fn status_item_value() -> impl Strategy<Value = Value> {
    let text = || pooled().prop_map(Value::String).boxed();
    let texts = || {
        prop::collection::vec(pooled().prop_map(Value::String), 0..3)
            .prop_map(Value::Array)
            .boxed()
    };
    (
        sometimes_wrong(text()),
        sometimes_wrong(text()),
        sometimes_wrong(text()),
        sometimes_wrong(texts()),
        sometimes_wrong(state_text().prop_map(Value::String).boxed()),
        sometimes_wrong(text()),
        sometimes_wrong(any::<bool>().prop_map(Value::Bool).boxed()),
    )
        .prop_map(
            |(id, category, description, steps, status, notes, passes)| {
                object(vec![
                    ("id", id),
                    ("category", category),
                    ("description", description),
                    ("steps", steps),
                    ("status", status),
                    ("notes", notes),
                    ("passes", passes),
                ])
            },
        )
}

/// A status-schema document whose every key may be missing or of the wrong type.
pub(crate) fn status_document_value() -> impl Strategy<Value = Value> {
    let texts = || {
        prop::collection::vec(pooled().prop_map(Value::String), 0..3)
            .prop_map(Value::Array)
            .boxed()
    };
    let features = prop::collection::vec(status_item_value(), 0..4)
        .prop_map(Value::Array)
        .boxed();
    let document = (
        sometimes_wrong(pooled().prop_map(Value::String).boxed()),
        sometimes_wrong(texts()),
        sometimes_wrong(texts()),
        sometimes_wrong(features.clone()),
    )
        .prop_map(|(goal, acceptance, forbidden, features)| {
            object(vec![
                ("goal", goal),
                ("acceptance", acceptance),
                ("forbidden", forbidden),
                ("features", features),
            ])
        });
    prop_oneof![4 => document, 1 => features, 1 => any_value()]
}

/// `value` as YAML in block style, with every string double-quoted.
pub(crate) fn yaml_block(value: &Value) -> String {
    let mut out = String::new();
    push_yaml(&mut out, value, 0);
    out
}

fn push_yaml(out: &mut String, value: &Value, indent: usize) {
    let pad = " ".repeat(indent);
    match value {
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                out.push_str(&pad);
                out.push('-');
                push_yaml_value(out, item, indent + 2);
            }
        }
        Value::Object(pairs) if !pairs.is_empty() => {
            for (key, item) in pairs {
                out.push_str(&pad);
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                push_yaml_value(out, item, indent + 2);
            }
        }
        // Scalars and empty collections print the same in JSON and YAML flow style.
        other => {
            out.push_str(&pad);
            out.push_str(&other.to_string());
            out.push('\n');
        }
    }
}

/// A value after `key:` or `-`: on the same line when it is flat, else on the next lines.
fn push_yaml_value(out: &mut String, value: &Value, indent: usize) {
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            push_yaml(out, value, indent);
        }
        Value::Object(pairs) if !pairs.is_empty() => {
            out.push('\n');
            push_yaml(out, value, indent);
        }
        other => {
            out.push(' ');
            out.push_str(&other.to_string());
            out.push('\n');
        }
    }
}

/// Checks what every successful status-schema parse promises: each entry has a state,
/// and `passes` is true exactly for `completed`.
pub(crate) fn status_invariants_hold(list: &super::FeatureList) -> bool {
    list.entries
        .iter()
        .all(|e| e.status.is_some_and(|s| s.is_done() == e.passes))
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

    #[test]
    fn yaml_block_writes_nested_values_in_block_style() {
        let value = serde_json::json!({"goal": "g", "features": [{"id": 1, "steps": []}, [true]]});
        assert_eq!(
            yaml_block(&value),
            "\"goal\": \"g\"\n\"features\":\n  -\n    \"id\": 1\n    \"steps\": []\n  -\n    - true\n"
        );
    }
}
