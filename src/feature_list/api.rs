//! Format dispatch: the crate-facing `parse`/`render` (passes schema) and
//! `parse_with`/`render_with` (either schema) over all three formats.

use std::collections::BTreeSet;

use super::json::{parse_json, parse_json_with, render_json, render_json_with};
use super::markdown::{parse_markdown, parse_markdown_with, render_markdown, render_markdown_with};
use super::yaml::{parse_yaml, parse_yaml_with, render_yaml, render_yaml_with};
use super::{Contract, Entry, FeatureList, ListFormat, ListSchema, ParseError};

/// Parses a feature list file's text in the given format, under the passes schema.
///
/// Markdown never fails; JSON and YAML fail on invalid syntax or a top level that is
/// neither an array of entries nor an object with a `features` array.
pub fn parse(format: ListFormat, text: &str) -> Result<FeatureList, ParseError> {
    match format {
        ListFormat::Json => parse_json(text),
        ListFormat::Markdown => Ok(parse_markdown(text)),
        ListFormat::Yaml => parse_yaml(text),
    }
}

/// Parses a feature list file's text in the given format and schema.
///
/// Under [`ListSchema::Passes`] this is [`parse`]. Under [`ListSchema::Status`] every
/// format can also fail on a state word that is not one of the six, and Markdown on `[x]`
/// with a state word other than `completed`; every parsed entry then has a `status`, with
/// `passes` true exactly when it is `completed`.
pub fn parse_with(
    format: ListFormat,
    schema: ListSchema,
    text: &str,
) -> Result<FeatureList, ParseError> {
    match format {
        ListFormat::Json => parse_json_with(schema, text),
        ListFormat::Markdown => parse_markdown_with(schema, text),
        ListFormat::Yaml => parse_yaml_with(schema, text),
    }
}

/// Renders entries in the given format under the passes schema: deterministic, ending
/// with a newline.
pub fn render(format: ListFormat, entries: &[Entry]) -> String {
    match format {
        ListFormat::Json => render_json(entries),
        ListFormat::Markdown => render_markdown(entries),
        ListFormat::Yaml => render_yaml(entries),
    }
}

/// Renders a list in the given format and schema: deterministic, ending with a newline,
/// and read back unchanged by [`parse_with`] (within each format's documented limits).
///
/// Under [`ListSchema::Passes`] the contract is not written (the schema has no place for
/// it) and, with default options, the text is exactly [`render`]'s. Under
/// [`ListSchema::Status`] each entry is written with [`Entry::state`].
pub fn render_with(
    format: ListFormat,
    schema: ListSchema,
    contract: &Contract,
    entries: &[Entry],
    options: &RenderOptions<'_>,
) -> String {
    match format {
        ListFormat::Json => render_json_with(schema, contract, entries, options),
        ListFormat::Markdown => render_markdown_with(schema, contract, entries, options),
        ListFormat::Yaml => render_yaml_with(schema, contract, entries, options),
    }
}

/// No blocked entries, for [`RenderOptions::default`].
static NOTHING_BLOCKED: BTreeSet<String> = BTreeSet::new();

/// How [`render_with`] writes what the entries themselves do not say.
#[derive(Debug, Clone, Copy)]
pub struct RenderOptions<'a> {
    /// Ids of the entries the harness has blocked, marked under the passes schema only:
    /// `"blocked": true` after `passes` (JSON), `blocked: true` after `passes:` (YAML),
    /// ` (blocked)` at the end of the description unless it already ends so (Markdown).
    /// The status schema ignores it, since there the entry's own state says `blocked`.
    /// Parsing does not read the mark back: it is extra text every parser tolerates.
    pub blocked: &'a BTreeSet<String>,
}

impl Default for RenderOptions<'_> {
    fn default() -> Self {
        RenderOptions {
            blocked: &NOTHING_BLOCKED,
        }
    }
}

impl RenderOptions<'_> {
    /// Whether `entry` is marked blocked (by id, so duplicates of a blocked id are too).
    pub fn is_blocked(&self, entry: &Entry) -> bool {
        self.blocked.contains(&entry.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature_list::fuzz_support as fz;
    use proptest::prelude::*;

    fn sample() -> Vec<Entry> {
        vec![
            Entry {
                id: "F1".into(),
                category: "Core: setup".into(),
                description: "Run `init` # once, then \"start\"".into(),
                steps: vec!["- open".into(), "click **Go**".into()],
                passes: false,
                status: None,
                notes: String::new(),
            },
            Entry {
                id: "F-2.b_3".into(),
                category: "Core: setup".into(),
                description: "Ünïcødé 🎉 works".into(),
                steps: vec![],
                passes: true,
                status: None,
                notes: String::new(),
            },
            Entry {
                id: "9".into(),
                category: String::new(),
                description: "x".into(),
                steps: vec!["".into(), "yes".into(), "007".into()],
                passes: false,
                status: None,
                notes: String::new(),
            },
        ]
    }

    #[test]
    fn rendered_lists_parse_back_unchanged_in_every_format() {
        let entries = sample();
        for format in ListFormat::ALL {
            let text = render(format, &entries);
            assert!(text.ends_with('\n'), "{format}");
            assert_eq!(
                parse(format, &text).map(|l| l.entries),
                Ok(entries.clone()),
                "{format}:\n{text}"
            );
        }
    }

    #[test]
    fn rendering_is_deterministic_and_marks_unfinished_entries_literally() {
        let entries = sample();
        for format in ListFormat::ALL {
            assert_eq!(render(format, &entries), render(format, &entries));
        }
        assert!(render(ListFormat::Json, &entries).contains("\"passes\": false"));
        assert!(render(ListFormat::Yaml, &entries).contains("passes: false"));
        assert!(render(ListFormat::Markdown, &entries).contains("- [ ] **F1**"));
    }

    #[test]
    fn only_markdown_accepts_any_text() {
        assert!(parse(ListFormat::Json, "not a list").is_err());
        assert!(parse(ListFormat::Yaml, "not a list").is_err());
        assert_eq!(
            parse(ListFormat::Markdown, "not a list"),
            Ok(FeatureList::default())
        );
    }

    /// Text without line breaks or outer whitespace, which every format must preserve.
    fn clean_text() -> impl Strategy<Value = String> {
        prop_oneof![".{0,30}", "[ -~]{0,30}"]
            .prop_map(|s: String| s.replace(['\n', '\r'], " ").trim().to_string())
    }

    fn clean_entry() -> impl Strategy<Value = Entry> {
        (
            fz::plain_id(),
            prop::sample::select(vec!["", "Core", "UI / UX", "a: b # c"]).prop_map(String::from),
            clean_text(),
            prop::collection::vec(clean_text(), 0..4),
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
            // A step spelled like an entry line is read back as an entry (documented).
            .prop_filter("step looks like an entry", |e| {
                !e.steps.iter().any(|s| s.starts_with('['))
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

        #[test]
        fn clean_entries_round_trip_in_every_format(
            entries in prop::collection::vec(clean_entry(), 0..6),
        ) {
            for format in ListFormat::ALL {
                let text = render(format, &entries);
                prop_assert_eq!(parse(format, &text).map(|l| l.entries), Ok(entries.clone()));
            }
        }

        #[test]
        fn json_and_yaml_round_trip_any_strings(entries in prop::collection::vec(fz::any_entry(), 0..4)) {
            // Blank ids are not usable and are skipped on parse; everything else survives.
            let kept: Vec<Entry> = entries.iter().filter(|e| !e.id.trim().is_empty()).cloned().collect();
            for format in [ListFormat::Json, ListFormat::Yaml] {
                let text = render(format, &entries);
                prop_assert_eq!(parse(format, &text).map(|l| l.entries), Ok(kept.clone()));
            }
        }
    }
}
