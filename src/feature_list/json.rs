//! The JSON feature list format (`feature_list.json`): lenient parsing and pretty rendering.
//!
//! Nesting depth is bounded by serde_json's built-in recursion limit (128 levels), which
//! turns hostile inputs like ten thousand `[` into a [`ParseError`] instead of a stack
//! overflow; real feature lists nest four levels deep at most. Size is bounded too: a file
//! past [`MAX_BYTES`], or one holding more than [`MAX_NODES`] values, is unparseable with
//! that reason, so that a flat list of millions of values cannot cost gigabytes of memory.
//!
//! Under the passes schema the file is an array of entry objects with the keys `id`,
//! `category`, `description`, `steps`, `passes` (plus `"blocked": true` after `passes` on
//! the entries the harness has blocked). Under the status schema it is one object,
//! `goal`, `acceptance`, `forbidden`, `features`, whose entries end in `status` (a state
//! word) and `notes` instead of `passes`. Keys are written in exactly these orders.

use serde::Serialize;

use super::tree;
use super::{Contract, Entry, FeatureList, ListSchema, ParseError, RenderOptions, Status};

/// Parses a JSON feature list (an array of entries, or an object with a `features` array).
#[cfg(test)]
pub(crate) fn parse_json(text: &str) -> Result<FeatureList, ParseError> {
    parse_json_with(ListSchema::Passes, text)
}

/// Parses a JSON feature list under `schema` (see the module documentation).
pub(crate) fn parse_json_with(schema: ListSchema, text: &str) -> Result<FeatureList, ParseError> {
    // Editors on Windows sometimes save a byte-order mark, which serde_json rejects.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.len() > MAX_BYTES {
        return Err(ParseError {
            line: None,
            message: format!(
                "the file holds {} bytes, more than the reader's budget of {MAX_BYTES}",
                text.len()
            ),
        });
    }
    let left = std::cell::Cell::new(MAX_NODES);
    let mut de = serde_json::Deserializer::from_str(text);
    let root =
        serde::de::DeserializeSeed::deserialize(tree::Bounded::new(&left, MAX_NODES), &mut de)
            .and_then(|root| de.end().map(|()| root))
            .map_err(|e| error_from(&e))?;
    let list = match schema {
        ListSchema::Passes => tree::to_feature_list(&root),
        ListSchema::Status => tree::to_status_list(&root),
    };
    list.map_err(|message| ParseError {
        line: None,
        message,
    })
}

/// Most values (strings, numbers, arrays, objects, keys included) in one JSON list: the
/// YAML reader's node budget, so that neither format lets a flat list of millions of
/// values cost the harness gigabytes of memory.
pub(crate) const MAX_NODES: usize = super::yaml::MAX_NODES;

/// Largest JSON list read, in bytes (about 30 times a list of 10,000 entries of ten steps
/// each would need).
pub(crate) const MAX_BYTES: usize = 32 * 1024 * 1024;

/// Renders entries as a pretty-printed JSON array with keys in declaration order.
pub(crate) fn render_json(entries: &[Entry]) -> String {
    render_json_with(
        ListSchema::Passes,
        &Contract::default(),
        entries,
        &RenderOptions::default(),
    )
}

/// Renders a list under `schema`, pretty-printed, with keys in the documented order.
pub(crate) fn render_json_with(
    schema: ListSchema,
    contract: &Contract,
    entries: &[Entry],
    options: &RenderOptions<'_>,
) -> String {
    let rendered = match schema {
        ListSchema::Passes => {
            let items: Vec<PassesItem<'_>> = entries
                .iter()
                .map(|e| PassesItem {
                    id: &e.id,
                    category: &e.category,
                    description: &e.description,
                    steps: &e.steps,
                    passes: e.passes,
                    blocked: options.is_blocked(e),
                })
                .collect();
            serde_json::to_string_pretty(&items)
        }
        ListSchema::Status => serde_json::to_string_pretty(&StatusDocument {
            goal: &contract.goal,
            acceptance: &contract.acceptance,
            forbidden: &contract.forbidden,
            features: entries
                .iter()
                .map(|e| StatusItem {
                    id: &e.id,
                    category: &e.category,
                    description: &e.description,
                    steps: &e.steps,
                    status: e.state(),
                    notes: &e.notes,
                })
                .collect(),
        }),
    };
    // Serializing strings and booleans cannot fail; the fallback only keeps this panic-free.
    let mut out = rendered.unwrap_or_else(|_| "[]".to_string());
    out.push('\n');
    out
}

/// A passes-schema entry as written: the field order here is the key order in the file.
#[derive(Serialize)]
struct PassesItem<'a> {
    id: &'a str,
    category: &'a str,
    description: &'a str,
    steps: &'a [String],
    passes: bool,
    #[serde(skip_serializing_if = "is_false")]
    blocked: bool,
}

/// A status-schema entry as written.
#[derive(Serialize)]
struct StatusItem<'a> {
    id: &'a str,
    category: &'a str,
    description: &'a str,
    steps: &'a [String],
    status: Status,
    notes: &'a str,
}

/// A status-schema list as written: the contract, then the entries.
#[derive(Serialize)]
struct StatusDocument<'a> {
    goal: &'a str,
    acceptance: &'a [String],
    forbidden: &'a [String],
    features: Vec<StatusItem<'a>>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Moves serde_json's " at line L column C" suffix into the structured `line` field.
fn error_from(e: &serde_json::Error) -> ParseError {
    let full = e.to_string();
    if e.line() == 0 {
        return ParseError {
            line: None,
            message: full,
        };
    }
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    let message = match full.strip_suffix(&suffix) {
        Some(head) => format!("{head} (column {})", e.column()),
        None => full.clone(),
    };
    ParseError {
        line: Some(e.line()),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature_list::fuzz_support::*;
    use proptest::prelude::*;

    fn ids(list: &FeatureList) -> Vec<&str> {
        list.ids().collect()
    }

    #[test]
    fn a_rendered_list_parses_back_to_the_same_entries() {
        let entries = vec![Entry {
            id: "F1".into(),
            category: "core".into(),
            description: "say \"hi\"\nand: more # not a comment".into(),
            steps: vec!["open".into(), "".into(), "🎉".into()],
            passes: true,
            status: None,
            notes: String::new(),
        }];
        let text = render_json(&entries);
        assert_eq!(parse_json(&text).map(|l| l.entries), Ok(entries));
    }

    #[test]
    fn rendering_uses_the_documented_key_order_and_literal_passes() {
        let entry = Entry {
            id: "F1".into(),
            category: "c".into(),
            description: "d".into(),
            steps: vec!["s".into()],
            passes: false,
            status: None,
            notes: String::new(),
        };
        let text = render_json(&[entry]);
        let want = "[\n  {\n    \"id\": \"F1\",\n    \"category\": \"c\",\n    \"description\": \"d\",\n    \"steps\": [\n      \"s\"\n    ],\n    \"passes\": false\n  }\n]\n";
        assert_eq!(text, want);
        assert_eq!(render_json(&[]), "[]\n");
    }

    #[test]
    fn reordered_entries_and_keys_and_extra_fields_are_tolerated() {
        let text = r#"[
            {"passes": true, "extra": {"deep": [1, 2]}, "steps": ["b"], "id": "F2"},
            {"description": "first", "id": "F1", "category": "ui", "notes": null}
        ]"#;
        let list = parse_json(text).unwrap_or_default();
        assert_eq!(ids(&list), ["F2", "F1"]);
        assert_eq!(list.get("F2").map(|e| e.passes), Some(true));
        assert_eq!(list.get("F1").map(|e| e.category.as_str()), Some("ui"));
        assert_eq!(list.get("F1").map(|e| e.steps.len()), Some(0));
    }

    #[test]
    fn an_object_with_a_features_array_is_accepted_and_other_keys_ignored() {
        let text = r#"{"project": "x", "features": [{"id": "A"}], "version": 2}"#;
        assert_eq!(parse_json(text).map(|l| ids(&l).len()), Ok(1));
    }

    #[test]
    fn integer_ids_become_their_decimal_string() {
        let list = parse_json(r#"[{"id": 42}, {"id": -3}, {"id": 18446744073709551615}]"#);
        let list = list.unwrap_or_default();
        assert_eq!(ids(&list), ["42", "-3", "18446744073709551615"]);
    }

    #[test]
    fn items_without_a_usable_id_are_skipped() {
        let text = r#"[{"id": 1.5}, {"id": null}, {"name": "x"}, "F9", 7, [], {"id": "ok"}]"#;
        assert_eq!(parse_json(text).map(|l| l.entries.len()), Ok(1));
    }

    #[test]
    fn passes_must_be_a_boolean_and_anything_else_makes_the_list_unparseable() {
        let text = r#"[{"id":"a","passes":true},{"id":"b","passes":false},{"id":"c"}]"#;
        let list = parse_json(text).unwrap_or_default();
        let passes: Vec<bool> = list.entries.iter().map(|e| e.passes).collect();
        assert_eq!(passes, [true, false, false]);
        for value in [
            r#""true""#,
            r#"" False ""#,
            r#""yes""#,
            "1",
            "0",
            "null",
            "[]",
        ] {
            let text = format!(r#"[{{"id":"a","passes":true}},{{"id":"b","passes":{value}}}]"#);
            let err = parse_json(&text)
                .err()
                .map(|e| e.message)
                .unwrap_or_default();
            assert!(
                err.contains("\"b\"") && err.contains("passes must be true or false"),
                "{value}: {err}"
            );
        }
    }

    #[test]
    fn a_flat_list_past_the_value_budget_is_refused_quickly_with_a_reason() {
        let start = std::time::Instant::now();
        let values = vec!["1"; MAX_NODES + 1].join(",");
        let err = parse_json(&format!("[{values}]"))
            .err()
            .map(|e| e.message)
            .unwrap_or_default();
        assert!(err.contains("more than 250000 values"), "{err}");
        let at_budget = vec!["1"; MAX_NODES - 1].join(",");
        assert!(parse_json(&format!("[{at_budget}]")).is_ok());
        let huge = " ".repeat(MAX_BYTES + 1);
        let err = parse_json(&huge)
            .err()
            .map(|e| e.message)
            .unwrap_or_default();
        assert!(err.contains("budget"), "{err}");
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
    }

    #[test]
    fn steps_keep_strings_convert_scalars_and_skip_the_rest() {
        let text =
            r#"[{"id":"a","steps":["x", 3, 2.5, true, null, ["n"], {"k":1}], "description": 9}]"#;
        let list = parse_json(text).unwrap_or_default();
        let entry = list.get("a");
        assert_eq!(
            entry.map(|e| e.steps.clone()),
            Some(vec!["x".into(), "3".into(), "2.5".into(), "true".into()])
        );
        assert_eq!(entry.map(|e| e.description.as_str()), Some("9"));
    }

    #[test]
    fn an_empty_array_is_an_empty_list() {
        assert_eq!(parse_json(" [ ] "), Ok(FeatureList::default()));
    }

    #[test]
    fn a_leading_byte_order_mark_is_ignored() {
        assert_eq!(parse_json("\u{feff}[]"), Ok(FeatureList::default()));
    }

    #[test]
    fn malformed_json_is_an_error_with_a_line_number() {
        let err = parse_json("[\n  {\"id\": \"a\",}\n]").err();
        assert_eq!(err.as_ref().and_then(|e| e.line), Some(2));
        let shown = err.map(|e| e.to_string()).unwrap_or_default();
        assert!(shown.starts_with("line 2: "), "{shown}");
        assert!(parse_json("").is_err());
        assert!(parse_json("[] []").is_err());
    }

    #[test]
    fn a_top_level_scalar_or_object_without_features_is_an_error() {
        for text in ["\"F1\"", "42", "true", "null", "{}", r#"{"features": {}}"#] {
            assert!(parse_json(text).is_err(), "{text}");
        }
    }

    #[test]
    fn deep_nesting_is_rejected_by_the_recursion_limit_not_a_stack_overflow() {
        let deep = "[".repeat(MAX_DEPTH) + &"]".repeat(MAX_DEPTH);
        let err = parse_json(&deep)
            .err()
            .map(|e| e.message)
            .unwrap_or_default();
        assert!(err.contains("recursion limit"), "{err}");
        // Moderate nesting inside an ignored field stays acceptable.
        let ok = format!(
            r#"[{{"id":"a","x":{}{}}}]"#,
            "[".repeat(100),
            "]".repeat(100)
        );
        assert_eq!(parse_json(&ok).map(|l| l.entries.len()), Ok(1));
    }

    fn status_json(text: &str) -> Result<FeatureList, ParseError> {
        parse_json_with(ListSchema::Status, text)
    }

    #[test]
    fn a_status_list_renders_as_one_object_with_the_documented_key_order() {
        let mut entry = Entry {
            id: "F1".into(),
            category: "functional".into(),
            description: "d".into(),
            steps: vec!["s".into()],
            passes: false,
            status: None,
            notes: String::new(),
        };
        entry.set_state(Status::NeedsReview);
        let contract = Contract {
            goal: "g".into(),
            acceptance: vec!["a".into()],
            forbidden: vec![],
        };
        let text = render_json_with(
            ListSchema::Status,
            &contract,
            std::slice::from_ref(&entry),
            &RenderOptions::default(),
        );
        let want = "{\n  \"goal\": \"g\",\n  \"acceptance\": [\n    \"a\"\n  ],\n  \"forbidden\": [],\n  \"features\": [\n    {\n      \"id\": \"F1\",\n      \"category\": \"functional\",\n      \"description\": \"d\",\n      \"steps\": [\n        \"s\"\n      ],\n      \"status\": \"needs_review\",\n      \"notes\": \"\"\n    }\n  ]\n}\n";
        assert_eq!(text, want);
        let parsed = status_json(&text);
        assert_eq!(parsed.as_ref().map(|l| &l.contract), Ok(&contract));
        assert_eq!(parsed.map(|l| l.entries), Ok(vec![entry]));
    }

    #[test]
    fn the_status_schema_reads_the_contract_states_and_notes() {
        let text = r#"{"goal": "A store", "acceptance": ["checks pass"], "forbidden": ["edit tests"],
            "features": [
              {"id": "K1", "status": "completed", "notes": "done in s2"},
              {"id": "K2", "status": "in_progress"},
              {"id": "K3"},
              {"id": "K4", "status": null}
            ]}"#;
        let list = status_json(text).unwrap_or_default();
        assert_eq!(list.contract.goal, "A store");
        assert_eq!(list.contract.acceptance, ["checks pass"]);
        assert_eq!(list.contract.forbidden, ["edit tests"]);
        let states: Vec<Option<Status>> = list.entries.iter().map(|e| e.status).collect();
        assert_eq!(
            states,
            [
                Some(Status::Completed),
                Some(Status::InProgress),
                Some(Status::Pending),
                Some(Status::Pending)
            ]
        );
        let passes: Vec<bool> = list.entries.iter().map(|e| e.passes).collect();
        assert_eq!(passes, [true, false, false, false]);
        assert_eq!(list.get("K1").map(|e| e.notes.as_str()), Some("done in s2"));
    }

    #[test]
    fn an_unknown_status_makes_a_json_list_unparseable() {
        for status in [
            r#""done""#,
            r#""in-progress""#,
            r#""""#,
            "true",
            "1",
            "[]",
            "{}",
        ] {
            let text =
                format!(r#"{{"features": [{{"id": "K1"}}, {{"id": "K2", "status": {status}}}]}}"#);
            let message = status_json(&text)
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
    fn json_status_words_ignore_case_and_outer_whitespace_like_passes_strings() {
        let text = r#"[{"id": "a", "status": " Completed "}, {"id": "b", "status": "FAILED"}]"#;
        let states: Vec<Option<Status>> = status_json(text)
            .map(|l| l.entries.iter().map(|e| e.status).collect())
            .unwrap_or_default();
        assert_eq!(states, [Some(Status::Completed), Some(Status::Failed)]);
    }

    #[test]
    fn a_passes_key_is_not_a_claim_under_the_status_schema() {
        let list = status_json(r#"[{"id": "a", "passes": true}]"#).unwrap_or_default();
        assert_eq!(
            list.get("a").map(|e| (e.passes, e.status)),
            Some((false, Some(Status::Pending)))
        );
    }

    #[test]
    fn the_passes_schema_ignores_status_and_notes_keys() {
        let text = r#"[{"id": "a", "passes": true, "status": "nonsense", "notes": "n"}]"#;
        let list = parse_json(text).unwrap_or_default();
        assert_eq!(
            list.get("a")
                .map(|e| (e.passes, e.status, e.notes.as_str())),
            Some((true, None, ""))
        );
        assert_eq!(parse_json_with(ListSchema::Passes, text), Ok(list));
    }

    fn json_input() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => ".*",
            4 => mutated(rendered(crate::feature_list::ListFormat::Json)),
            1 => mutated(Just(r#"{"features": [{"id": 1, "passes": "true", "steps": [1, null]}]}"#.to_string())),
            1 => nested("[", "]"),
            1 => nested("{\"a\":", "}"),
            1 => nested("[{\"features\":", "}]"),
            1 => fragment_soup(),
        ]
    }

    proptest! {
        #![proptest_config(fuzz_config())]

        #[test]
        fn the_json_parser_never_panics(text in json_input()) {
            let _ = parse_json(&text);
        }
    }

    fn json_status_input() -> impl Strategy<Value = String> {
        prop_oneof![
            2 => ".*",
            4 => mutated(rendered_status(crate::feature_list::ListFormat::Json)),
            3 => status_document_value().prop_map(|v| v.to_string()),
            2 => mutated(status_document_value().prop_map(|v| v.to_string())),
            1 => status_fragment_soup(),
        ]
    }

    proptest! {
        #![proptest_config(fuzz_config())]

        #[test]
        fn the_json_status_parser_never_panics(text in json_status_input()) {
            if let Ok(list) = status_json(&text) {
                prop_assert!(status_invariants_hold(&list), "{list:?}");
            }
        }
    }
}
