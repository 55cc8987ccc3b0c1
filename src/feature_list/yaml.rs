//! The YAML feature list format (`feature_list.yaml`): hardened parsing and quoted rendering.
//!
//! Parsing uses serde-saphyr with a tightened budget: nesting deeper than [`MAX_DEPTH`],
//! alias bombs ("billion laughs") and oversized documents become a [`ParseError`] rather
//! than a stack overflow or a memory blow-up. Booleans follow YAML 1.2 (`true`/`false` only),
//! so a step reading `no` stays the string "no"; numbers with leading zeros or underscores
//! keep their spelling (`id: 007` is "007"); `.inf`/`.nan` stay text.
//!
//! Rendering is hand-written rather than serde-saphyr's serializer so that the bytes do not
//! depend on a dependency's quoting heuristics: every string is double-quoted with escapes,
//! which round-trips any text (colons, `#`, leading `-`, quotes, newlines, control chars).
//!
//! Under the passes schema the document is a sequence of entry mappings, each ending in a
//! bare `passes: true|false` (followed by `blocked: true` on the entries the harness has
//! blocked). Under the status schema it is one mapping, `goal`, `acceptance`, `forbidden`,
//! `features`, whose entries end in a bare `status: <state word>` and a quoted `notes`;
//! the state word is bare, like `passes`, so that it can be edited literally.

use std::fmt::Write as _;

use serde_saphyr::options::{AliasLimits, DuplicateKeyPolicy, NonFiniteFloatPolicy};
use serde_saphyr::{Budget, Options};

use super::tree::{self, Node};
use super::{Contract, Entry, FeatureList, ListSchema, ParseError, RenderOptions};

/// Deepest collection nesting accepted; a feature list needs four levels.
pub(crate) const MAX_DEPTH: usize = 64;

/// Most events that alias expansion may inject in one document.
///
/// Generous for sharing step lists via anchors, small enough that an alias bomb is
/// rejected in milliseconds.
pub(crate) const MAX_ALIAS_REPLAY_EVENTS: usize = 10_000;

/// Most YAML nodes in one document (about 10,000 entries of ten steps).
pub(crate) const MAX_NODES: usize = 250_000;

fn options() -> Options {
    let mut budget = Budget::default();
    budget.max_depth = MAX_DEPTH;
    budget.flow_nesting_limit = MAX_DEPTH;
    budget.max_nodes = MAX_NODES;
    let mut alias_limits = AliasLimits::default();
    alias_limits.max_total_replayed_events = MAX_ALIAS_REPLAY_EVENTS;
    alias_limits.max_replay_stack_depth = MAX_DEPTH;
    serde_saphyr::options! {
        budget: Some(budget),
        alias_limits: alias_limits,
        // Every pair reaches the tree, which resolves duplicates last-wins like JSON does.
        duplicate_keys: DuplicateKeyPolicy::PassThrough,
        strict_booleans: true,
        leading_zero_numbers_as_strings: true,
        underscored_numbers_as_strings: true,
        non_finite_float_policy: NonFiniteFloatPolicy::AsString,
        // The rustc-style snippet is multi-line; ParseError carries the line separately.
        with_snippet: false,
        emit_comments: false,
    }
}

/// Parses a YAML feature list (a sequence of entries, or a mapping with a `features` sequence).
#[cfg(test)]
pub(crate) fn parse_yaml(text: &str) -> Result<FeatureList, ParseError> {
    parse_yaml_with(ListSchema::Passes, text)
}

/// Parses a YAML feature list under `schema` (see the module documentation).
pub(crate) fn parse_yaml_with(schema: ListSchema, text: &str) -> Result<FeatureList, ParseError> {
    let root: Node =
        serde_saphyr::from_str_with_options(text, options()).map_err(|e| error_from(&e))?;
    let list = match schema {
        ListSchema::Passes => tree::to_feature_list(&root),
        ListSchema::Status => tree::to_status_list(&root),
    };
    list.map_err(|message| ParseError {
        line: None,
        message,
    })
}

/// Moves serde-saphyr's " at line L, column C" suffix into the structured `line` field.
fn error_from(e: &serde_saphyr::Error) -> ParseError {
    let full = e.without_snippet().to_string();
    let Some(location) = e.location() else {
        return ParseError {
            line: None,
            message: full,
        };
    };
    let line = usize::try_from(location.line()).ok().filter(|&l| l > 0);
    let suffix = format!(" at line {}, column {}", location.line(), location.column());
    let message = match full.strip_suffix(&suffix) {
        Some(head) => format!("{head} (column {})", location.column()),
        None => full.clone(),
    };
    ParseError { line, message }
}

/// Renders entries as a YAML sequence of mappings with every string double-quoted.
pub(crate) fn render_yaml(entries: &[Entry]) -> String {
    render_yaml_with(
        ListSchema::Passes,
        &Contract::default(),
        entries,
        &RenderOptions::default(),
    )
}

/// Renders a list under `schema` with every string double-quoted (see the module docs).
pub(crate) fn render_yaml_with(
    schema: ListSchema,
    contract: &Contract,
    entries: &[Entry],
    options: &RenderOptions<'_>,
) -> String {
    match schema {
        ListSchema::Passes => {
            if entries.is_empty() {
                return "[]\n".to_string();
            }
            let mut out = String::new();
            for entry in entries {
                push_common_fields(&mut out, "", entry);
                out.push_str(if entry.passes {
                    "\n  passes: true\n"
                } else {
                    "\n  passes: false\n"
                });
                if options.is_blocked(entry) {
                    out.push_str("  blocked: true\n");
                }
            }
            out
        }
        ListSchema::Status => {
            let mut out = "goal: ".to_string();
            push_quoted(&mut out, &contract.goal);
            out.push('\n');
            push_text_list(&mut out, "acceptance", &contract.acceptance);
            push_text_list(&mut out, "forbidden", &contract.forbidden);
            if entries.is_empty() {
                out.push_str("features: []\n");
                return out;
            }
            out.push_str("features:\n");
            for entry in entries {
                push_common_fields(&mut out, "  ", entry);
                out.push_str("\n    status: ");
                out.push_str(entry.state().as_str());
                out.push_str("\n    notes: ");
                push_quoted(&mut out, &entry.notes);
                out.push('\n');
            }
            out
        }
    }
}

/// Appends `- id:` through `steps` of one entry at `indent`, without a final newline.
fn push_common_fields(out: &mut String, indent: &str, entry: &Entry) {
    out.push_str(indent);
    out.push_str("- id: ");
    push_quoted(out, &entry.id);
    let field = |out: &mut String, key: &str| {
        out.push('\n');
        out.push_str(indent);
        out.push_str("  ");
        out.push_str(key);
        out.push(':');
    };
    field(out, "category");
    out.push(' ');
    push_quoted(out, &entry.category);
    field(out, "description");
    out.push(' ');
    push_quoted(out, &entry.description);
    field(out, "steps");
    if entry.steps.is_empty() {
        out.push_str(" []");
    }
    for step in &entry.steps {
        out.push('\n');
        out.push_str(indent);
        out.push_str("    - ");
        push_quoted(out, step);
    }
}

/// Appends a top-level `key:` with its items, or `key: []` when there are none.
fn push_text_list(out: &mut String, key: &str, items: &[String]) {
    out.push_str(key);
    out.push(':');
    if items.is_empty() {
        out.push_str(" []");
    }
    for item in items {
        out.push_str("\n  - ");
        push_quoted(out, item);
    }
    out.push('\n');
}

/// Appends `s` as a YAML double-quoted scalar that parses back to exactly `s`.
fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // Non-printable for YAML, or a line break / BOM that some readers would fold or strip.
            c if c.is_control()
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                let code = u32::from(c);
                // Writing to a String cannot fail.
                let _ = if code <= 0xff {
                    write!(out, "\\x{code:02X}")
                } else {
                    write!(out, "\\u{code:04X}")
                };
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature_list::fuzz_support::{self as fz, fuzz_config};
    use crate::feature_list::{ListFormat, Status};
    use proptest::prelude::*;
    use std::time::{Duration, Instant};

    fn ids(list: &FeatureList) -> Vec<&str> {
        list.ids().collect()
    }

    fn entry(id: &str, description: &str, steps: &[&str], passes: bool) -> Entry {
        Entry {
            id: id.into(),
            category: "core".into(),
            description: description.into(),
            steps: steps.iter().map(|s| s.to_string()).collect(),
            passes,
            status: None,
            notes: String::new(),
        }
    }

    #[test]
    fn rendering_quotes_every_string_and_writes_passes_literally() {
        let text = render_yaml(&[
            entry("F1", "a: b", &["x"], false),
            entry("F2", "", &[], true),
        ]);
        let want = "- id: \"F1\"\n  category: \"core\"\n  description: \"a: b\"\n  steps:\n    - \"x\"\n  passes: false\n- id: \"F2\"\n  category: \"core\"\n  description: \"\"\n  steps: []\n  passes: true\n";
        assert_eq!(text, want);
        assert_eq!(render_yaml(&[]), "[]\n");
    }

    #[test]
    fn awkward_strings_round_trip_through_the_quoting() {
        let nasty = [
            "- leading dash",
            "# not a comment",
            "key: value",
            "'single' \"double\" \\back",
            "line\nbreak\r\n\ttab",
            " padded ",
            "null",
            "~",
            "yes",
            "007",
            "*alias &anchor !tag",
            "ünïcødé 🎉 \u{202e}",
            "\u{0}\u{7}\u{1b}\u{7f}\u{85}\u{a0}\u{2028}\u{feff}",
            "",
        ];
        let entries: Vec<Entry> = nasty.iter().map(|d| entry(d, d, &[d], false)).collect();
        let entries: Vec<Entry> = entries
            .into_iter()
            .filter(|e| !e.id.trim().is_empty())
            .collect();
        // Ids are read as a reader sees them (without the whitespace around them or
        // invisible characters); everything else as written.
        let read: Vec<Entry> = entries
            .iter()
            .cloned()
            .map(|mut e| {
                e.id = crate::feature_list::id::fold_id(&e.id);
                e
            })
            .collect();
        let parsed = parse_yaml(&render_yaml(&entries)).map(|l| l.entries);
        assert_eq!(parsed, Ok(read));
    }

    #[test]
    fn reordered_entries_and_keys_and_extra_fields_are_tolerated() {
        let text = "
- passes: true
  notes: {who: agent, when: [1, 2]}
  steps:
  - b
  id: F2
-   description: first
    id: F1
    category: ui
";
        let list = parse_yaml(text).unwrap_or_default();
        assert_eq!(ids(&list), ["F2", "F1"]);
        assert_eq!(
            list.get("F2").map(|e| (e.passes, e.steps.len())),
            Some((true, 1))
        );
        assert_eq!(list.get("F1").map(|e| e.category.as_str()), Some("ui"));
    }

    #[test]
    fn a_mapping_with_a_features_sequence_is_accepted_and_other_keys_ignored() {
        let text = "project: x\nfeatures:\n  - id: A\n  - {id: B, passes: true}\nversion: 2\n";
        assert_eq!(parse_yaml(text).map(|l| l.entries.len()), Ok(2));
    }

    #[test]
    fn integer_ids_become_their_decimal_string_and_keep_leading_zeros() {
        let list = parse_yaml("- id: 42\n- id: -3\n- id: 007\n- id: 1_000\n- id: 1.5\n");
        assert_eq!(
            list.map(|l| ids(&l).join(",")),
            Ok("42,-3,007,1_000".into())
        );
    }

    #[test]
    fn passes_reads_yaml_1_2_booleans_and_refuses_yaml_1_1_words_and_strings() {
        let text = "- {id: a, passes: true}\n- {id: b, passes: FALSE}\n- {id: c}\n- {id: d, passes: True}\n";
        let list = parse_yaml(text).unwrap_or_default();
        let passes: Vec<bool> = list.entries.iter().map(|e| e.passes).collect();
        assert_eq!(passes, [true, false, false, true]);
        // A YAML 1.1 reader takes these for booleans, a YAML 1.2 reader for strings.
        for word in [
            "yes",
            "No",
            "ON",
            "off",
            "y",
            "N",
            "'true'",
            "' FALSE '",
            "1",
            "~",
            "",
        ] {
            let text = format!("- {{id: a, passes: true}}\n- id: b\n  passes: {word}\n");
            let err = parse_yaml(&text)
                .err()
                .map(|e| e.message)
                .unwrap_or_default();
            assert!(
                err.contains("\"b\"") && err.contains("passes must be true or false"),
                "{word}: {err}"
            );
        }
    }

    #[test]
    fn steps_keep_strings_convert_scalars_and_skip_the_rest() {
        let text = "- id: a\n  steps: [x, 3, 2.5, true, no, .inf, null, [n], {k: 1}]\n";
        let steps = parse_yaml(text).map(|l| l.get("a").map(|e| e.steps.clone()));
        let want: Vec<String> = ["x", "3", "2.5", "true", "no", ".inf"]
            .map(String::from)
            .into();
        assert_eq!(steps, Ok(Some(want)));
    }

    #[test]
    fn anchors_and_aliases_can_share_steps() {
        let text = "- id: A\n  steps: &common [open, click]\n- id: B\n  steps: *common\n";
        let list = parse_yaml(text).unwrap_or_default();
        assert_eq!(list.get("B").map(|e| e.steps.len()), Some(2));
    }

    #[test]
    fn duplicate_keys_and_odd_keys_do_not_fail_the_document() {
        let text = "- {id: A, id: A, 1: one, [k]: v, ? {m: 1} : w}\n";
        assert_eq!(parse_yaml(text).map(|l| ids(&l).join(",")), Ok("A".into()));
        // An id given twice with different values could be read either way.
        assert!(parse_yaml("- {id: A, id: B}\n").is_err());
    }

    #[test]
    fn malformed_yaml_is_an_error_with_a_line_number() {
        let err = parse_yaml("- id: a\n  steps: [x,\n- id: b: c\n").err();
        assert!(err.as_ref().and_then(|e| e.line).is_some(), "{err:?}");
        let err = parse_yaml("- id: a\n  description: \"unterminated\n").err();
        assert!(err.is_some());
    }

    #[test]
    fn a_top_level_scalar_empty_document_or_several_documents_is_an_error() {
        for text in [
            "F1",
            "42",
            "",
            "# only a comment\n",
            "{}",
            "features: 3",
            "- id: a\n---\n- id: b\n",
        ] {
            assert!(parse_yaml(text).is_err(), "{text:?}");
        }
        assert_eq!(parse_yaml("[]"), Ok(FeatureList::default()));
    }

    #[test]
    fn deep_nesting_is_rejected_by_the_budget_not_a_stack_overflow() {
        for deep in [
            "[".repeat(fz::MAX_DEPTH),
            "[".repeat(fz::MAX_DEPTH) + &"]".repeat(fz::MAX_DEPTH),
            "- ".repeat(fz::MAX_DEPTH) + "x",
            "{a: ".repeat(fz::MAX_DEPTH),
        ] {
            let err = parse_yaml(&deep).err();
            assert!(err.is_some(), "{}", &deep[..10]);
        }
        let ok = format!(
            "- id: a\n  x: {}{}\n",
            "[".repeat(MAX_DEPTH - 2),
            "]".repeat(MAX_DEPTH - 2)
        );
        assert_eq!(parse_yaml(&ok).map(|l| l.entries.len()), Ok(1));
    }

    fn billion_laughs(levels: usize, width: usize) -> String {
        let mut text = "a0: &a0 [lol]\n".to_string();
        for level in 1..=levels {
            let refs = vec![format!("*a{}", level - 1); width].join(", ");
            text.push_str(&format!("a{level}: &a{level} [{refs}]\n"));
        }
        text
    }

    #[test]
    fn an_alias_bomb_is_rejected_quickly() {
        let start = Instant::now();
        let err = parse_yaml(&billion_laughs(9, 10)).err();
        assert!(err.is_some());
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn the_error_message_has_no_location_suffix_or_snippet() {
        let err = parse_yaml("a: b: c").err().unwrap_or(ParseError {
            line: None,
            message: String::new(),
        });
        assert_eq!(err.line, Some(1));
        assert!(
            !err.message.contains('\n') && !err.message.contains("at line"),
            "{}",
            err.message
        );
    }

    fn status_yaml(text: &str) -> Result<FeatureList, ParseError> {
        parse_yaml_with(ListSchema::Status, text)
    }

    #[test]
    fn a_status_list_renders_as_one_mapping_with_bare_state_words() {
        let mut first = entry("F1", "a: b", &["x"], false);
        first.set_state(Status::Blocked);
        first.notes = "tried\ntwice".into();
        let mut second = entry("F2", "", &[], false);
        second.set_state(Status::Completed);
        let contract = Contract {
            goal: "g # not a comment".into(),
            acceptance: vec![],
            forbidden: vec!["x".into(), "y".into()],
        };
        let entries = vec![first, second];
        let text = render_yaml_with(
            ListSchema::Status,
            &contract,
            &entries,
            &RenderOptions::default(),
        );
        let want = "goal: \"g # not a comment\"\nacceptance: []\nforbidden:\n  - \"x\"\n  - \"y\"\nfeatures:\n  - id: \"F1\"\n    category: \"core\"\n    description: \"a: b\"\n    steps:\n      - \"x\"\n    status: blocked\n    notes: \"tried\\ntwice\"\n  - id: \"F2\"\n    category: \"core\"\n    description: \"\"\n    steps: []\n    status: completed\n    notes: \"\"\n";
        assert_eq!(text, want);
        let parsed = status_yaml(&text);
        assert_eq!(parsed.as_ref().map(|l| &l.contract), Ok(&contract));
        assert_eq!(parsed.map(|l| l.entries), Ok(entries));
    }

    #[test]
    fn an_empty_status_list_still_writes_the_contract_keys() {
        let text = render_yaml_with(
            ListSchema::Status,
            &Contract::default(),
            &[],
            &RenderOptions::default(),
        );
        assert_eq!(
            text,
            "goal: \"\"\nacceptance: []\nforbidden: []\nfeatures: []\n"
        );
        assert_eq!(status_yaml(&text), Ok(FeatureList::default()));
    }

    #[test]
    fn the_status_schema_reads_the_contract_states_and_notes_from_yaml() {
        let text = "goal: A store\nacceptance:\n- checks pass\nforbidden: [edit tests]\nfeatures:\n- {id: K1, status: completed, notes: done}\n- id: K2\n  status: In_Progress\n- id: K3\n  status:\n- id: K4\n";
        let list = status_yaml(text).unwrap_or_default();
        assert_eq!(list.contract.goal, "A store");
        assert_eq!(list.contract.acceptance, ["checks pass"]);
        assert_eq!(list.contract.forbidden, ["edit tests"]);
        let states: Vec<Status> = list.entries.iter().map(Entry::state).collect();
        assert_eq!(
            states,
            [
                Status::Completed,
                Status::InProgress,
                Status::Pending,
                Status::Pending
            ]
        );
        assert_eq!(
            list.get("K1").map(|e| (e.passes, e.notes.as_str())),
            Some((true, "done"))
        );
    }

    #[test]
    fn an_unknown_status_makes_a_yaml_list_unparseable() {
        for status in [
            "done",
            "yes",
            "true",
            "'in progress'",
            "3",
            "[completed]",
            "{a: b}",
        ] {
            let text = format!("features:\n  - id: K1\n  - id: K2\n    status: {status}\n");
            let message = status_yaml(&text)
                .err()
                .map(|e| e.message)
                .unwrap_or_default();
            assert!(
                message.contains("\"K2\"") && message.contains("status"),
                "{status}: {message}"
            );
        }
    }

    #[test]
    fn contract_keys_of_the_wrong_type_are_empty_not_errors() {
        let text = "goal: [a, b]\nacceptance: one line\nforbidden: {k: v}\nfeatures: []\n";
        assert_eq!(status_yaml(text), Ok(FeatureList::default()));
        let text = "goal: 42\nacceptance: [1, true, null, [x]]\nfeatures: []\n";
        let contract = status_yaml(text).map(|l| l.contract).unwrap_or_default();
        assert_eq!(contract.goal, "42");
        assert_eq!(contract.acceptance, ["1", "true"]);
    }

    fn block_nesting() -> impl Strategy<Value = String> {
        // Past MAX_DEPTH the budget stops the parse, so deeper ladders add only generation cost.
        (1..80usize, fz::fragment()).prop_map(|(n, tail)| {
            let mut text = String::new();
            for level in 0..n {
                text.push_str(&" ".repeat(level));
                text.push_str(if level % 2 == 0 { "k:\n" } else { "- \n" });
            }
            text + &tail
        })
    }

    fn aliases() -> impl Strategy<Value = String> {
        prop_oneof![
            // Full bombs cost the whole replay budget (~8 ms in debug), so they are rare here;
            // `an_alias_bomb_is_rejected_quickly` covers the largest one deterministically.
            1 => (5..10usize, 5..10usize).prop_map(|(l, w)| billion_laughs(l, w)),
            60 => fz::mutated((1..4usize, 1..4usize).prop_map(|(l, w)| billion_laughs(l, w))),
            2 => Just("a: &a [*a]\n".to_string()),
            2 => Just("- &x {id: A, <<: *x}\n".to_string()),
        ]
    }

    fn tabs_and_indents() -> impl Strategy<Value = String> {
        let pieces = prop::sample::select(vec!["\t", " ", "- ", "a: ", "\n", "\t- x", "\n\t"]);
        prop::collection::vec(pieces, 0..30).prop_map(|p| p.concat())
    }

    fn yaml_input() -> impl Strategy<Value = String> {
        let sample = "features:\n  - id: 1\n    steps: &s\n      - \"a\\tb\"\n      - |\n        block\n    passes: 'true'\n  - {id: F2, steps: *s, <<: {category: x}}\n";
        prop_oneof![
            3 => ".*",
            4 => fz::mutated(fz::rendered(ListFormat::Yaml)),
            2 => fz::mutated(Just(sample.to_string())),
            1 => fz::nested("[", "]"),
            1 => fz::nested("{a: ", "}"),
            1 => fz::nested("- ", ""),
            1 => block_nesting(),
            1 => aliases(),
            1 => fz::fragment_soup(),
            1 => fz::mutated(tabs_and_indents()),
        ]
    }

    proptest! {
        #![proptest_config(fuzz_config())]

        #[test]
        fn the_yaml_parser_never_panics(text in yaml_input()) {
            let _ = parse_yaml(&text);
        }
    }

    fn yaml_status_input() -> impl Strategy<Value = String> {
        prop_oneof![
            2 => ".*",
            4 => fz::mutated(fz::rendered_status(ListFormat::Yaml)),
            3 => fz::status_document_value().prop_map(|v| fz::yaml_block(&v)),
            1 => fz::status_document_value().prop_map(|v| v.to_string()),
            2 => fz::mutated(fz::status_document_value().prop_map(|v| fz::yaml_block(&v))),
            1 => fz::status_fragment_soup(),
        ]
    }

    proptest! {
        #![proptest_config(fuzz_config())]

        #[test]
        fn the_yaml_status_parser_never_panics(text in yaml_status_input()) {
            if let Ok(list) = status_yaml(&text) {
                prop_assert!(fz::status_invariants_hold(&list), "{list:?}");
            }
        }
    }
}
