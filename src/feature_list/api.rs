//! Format dispatch: the crate-facing `parse`/`render` (passes schema) and
//! `parse_with`/`render_with` (either schema) over all three formats.

use std::collections::BTreeSet;

use super::json::{parse_json_with, render_json, render_json_with};
use super::markdown::{parse_markdown_with, render_markdown, render_markdown_with};
use super::tree::refuse_duplicate_ids;
use super::yaml::{parse_yaml_with, render_yaml, render_yaml_with};
use super::{Contract, Entry, FeatureList, ListFormat, ListSchema, ParseError};

/// Parses a feature list file's text in the given format, under the passes schema.
///
/// JSON and YAML fail on invalid syntax, a top level that is neither an array of entries
/// nor an object with a `features` array, a `passes` that is not a boolean, or a list over
/// the reader's size budget; every format fails on two entries with the same id, ids
/// compared as they look (see the module documentation).
pub fn parse(format: ListFormat, text: &str) -> Result<FeatureList, ParseError> {
    parse_with(format, ListSchema::Passes, text)
}

/// Parses a feature list file's text in the given format and schema.
///
/// Under [`ListSchema::Passes`] this is [`parse`]. Under [`ListSchema::Status`] every
/// format can also fail on a state word that is not one of the six, and Markdown on `[x]`
/// with a state word other than `completed`; every parsed entry then has a `status`, with
/// `passes` true exactly when it is `completed`. In both schemas a list in which two
/// entries share an id is unparseable: a reader could take either entry's claim.
pub fn parse_with(
    format: ListFormat,
    schema: ListSchema,
    text: &str,
) -> Result<FeatureList, ParseError> {
    let list = match format {
        ListFormat::Json => parse_json_with(schema, text),
        ListFormat::Markdown => parse_markdown_with(schema, text),
        ListFormat::Yaml => parse_yaml_with(schema, text),
    }?;
    refuse_duplicate_ids(&list).map_err(|message| ParseError {
        line: None,
        message,
    })?;
    Ok(list)
}

/// `list` with its ids read against the task's `canonical` ids the way a person reads
/// them: an id that is no canonical id but equals exactly one of them when ASCII case is
/// ignored (`f1` in a task whose features are `F1`, `F2`) is that feature's id. Ids are
/// already read as they look by the readers (`"F1 "`, `F1` with a zero-width space and
/// a fullwidth `F１` are `F1`). A list in which two entries then
/// share an id is refused, as [`parse_with`] refuses one that says it outright: a reader
/// could take either entry's claim.
pub fn with_canonical_ids(
    mut list: FeatureList,
    canonical: &[&str],
) -> Result<FeatureList, ParseError> {
    for entry in &mut list.entries {
        if canonical.contains(&entry.id.as_str()) {
            continue;
        }
        let mut same = canonical
            .iter()
            .filter(|c| c.eq_ignore_ascii_case(&entry.id));
        if let (Some(one), None) = (same.next(), same.next()) {
            entry.id = (*one).to_string();
        }
    }
    refuse_duplicate_ids(&list).map_err(|message| ParseError {
        line: None,
        message,
    })?;
    Ok(list)
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
    use crate::feature_list::Status;
    use crate::feature_list::fuzz_support as fz;
    use crate::feature_list::id::fold_id;
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

    fn ledger() -> (Contract, Vec<Entry>) {
        let contract = Contract {
            goal: "A tiny key-value store with delete, expiry and CSV export.".into(),
            acceptance: vec!["every feature's check passes".into(), "no warnings".into()],
            forbidden: vec!["editing files under tests/".into()],
        };
        let mut entries = sample();
        entries.extend(sample().into_iter().map(|mut e| {
            e.id = format!("{}-again", e.id);
            e.category = "Second".into();
            e
        }));
        for (e, state) in entries.iter_mut().zip(Status::ALL) {
            e.set_state(state);
        }
        if let Some(e) = entries.get_mut(2) {
            e.notes = "attempt 1: failed\nattempt 2: failed".into();
        }
        (contract, entries)
    }

    #[test]
    fn parse_with_the_passes_schema_is_parse() {
        for format in ListFormat::ALL {
            let text = render(format, &sample());
            assert_eq!(
                parse_with(format, ListSchema::Passes, &text),
                parse(format, &text)
            );
        }
    }

    #[test]
    fn render_with_the_passes_schema_and_default_options_is_render() {
        let (contract, _) = ledger();
        for format in ListFormat::ALL {
            for entries in [sample(), vec![]] {
                let with = render_with(
                    format,
                    ListSchema::Passes,
                    &contract,
                    &entries,
                    &RenderOptions::default(),
                );
                assert_eq!(with, render(format, &entries), "{format}");
            }
        }
    }

    #[test]
    fn status_lists_round_trip_in_every_format() {
        let (contract, entries) = ledger();
        for format in ListFormat::ALL {
            let text = render_with(
                format,
                ListSchema::Status,
                &contract,
                &entries,
                &RenderOptions::default(),
            );
            assert!(text.ends_with('\n'), "{format}");
            let want = FeatureList {
                entries: entries.clone(),
                contract: contract.clone(),
            };
            assert_eq!(
                parse_with(format, ListSchema::Status, &text),
                Ok(want),
                "{format}:\n{text}"
            );
        }
    }

    #[test]
    fn passes_schema_entries_are_written_as_pending_or_completed_under_the_status_schema() {
        for format in ListFormat::ALL {
            let entries = sample();
            let text = render_with(
                format,
                ListSchema::Status,
                &Contract::default(),
                &entries,
                &RenderOptions::default(),
            );
            let states: Vec<Status> = parse_with(format, ListSchema::Status, &text)
                .map(|l| l.entries.iter().map(Entry::state).collect())
                .unwrap_or_default();
            assert_eq!(
                states,
                [Status::Pending, Status::Completed, Status::Pending],
                "{format}"
            );
        }
    }

    #[test]
    fn an_unknown_state_makes_the_list_unparseable_in_every_format() {
        let (contract, entries) = ledger();
        for format in ListFormat::ALL {
            let text = render_with(
                format,
                ListSchema::Status,
                &contract,
                &entries,
                &RenderOptions::default(),
            );
            let broken = text.replacen("needs_review", "nearly_done", 1);
            assert_ne!(broken, text, "{format}");
            let err = parse_with(format, ListSchema::Status, &broken).err();
            assert!(
                err.is_some_and(|e| e.message.contains("nearly_done")),
                "{format}:\n{broken}"
            );
            // The passes schema does not read states, so the same text parses there.
            assert!(
                parse_with(format, ListSchema::Passes, &broken).is_ok(),
                "{format}"
            );
        }
    }

    fn two_with_one_blocked() -> (Vec<Entry>, BTreeSet<String>) {
        let entries = vec![
            Entry {
                id: "F1".into(),
                category: "c".into(),
                description: "done".into(),
                steps: vec!["s".into()],
                passes: true,
                status: None,
                notes: String::new(),
            },
            Entry {
                id: "F2".into(),
                category: "c".into(),
                description: "stuck ".into(),
                steps: vec![],
                passes: false,
                status: None,
                notes: String::new(),
            },
        ];
        (entries, BTreeSet::from(["F2".to_string()]))
    }

    #[test]
    fn render_with_marks_blocked_entries_in_each_format_under_the_passes_schema() {
        let (entries, blocked) = two_with_one_blocked();
        let options = RenderOptions { blocked: &blocked };
        let render_blocked = |format| {
            render_with(
                format,
                ListSchema::Passes,
                &Contract::default(),
                &entries,
                &options,
            )
        };
        assert_eq!(
            render_blocked(ListFormat::Json),
            "[\n  {\n    \"id\": \"F1\",\n    \"category\": \"c\",\n    \"description\": \"done\",\n    \"steps\": [\n      \"s\"\n    ],\n    \"passes\": true\n  },\n  {\n    \"id\": \"F2\",\n    \"category\": \"c\",\n    \"description\": \"stuck \",\n    \"steps\": [],\n    \"passes\": false,\n    \"blocked\": true\n  }\n]\n"
        );
        assert_eq!(
            render_blocked(ListFormat::Yaml),
            "- id: \"F1\"\n  category: \"c\"\n  description: \"done\"\n  steps:\n    - \"s\"\n  passes: true\n- id: \"F2\"\n  category: \"c\"\n  description: \"stuck \"\n  steps: []\n  passes: false\n  blocked: true\n"
        );
        assert_eq!(
            render_blocked(ListFormat::Markdown),
            "# Feature list\n\n## c\n\n- [x] **F1** done\n  - s\n- [ ] **F2** stuck (blocked)\n"
        );
        // The mark is extra text every parser tolerates; the passes flags read back as written.
        for format in ListFormat::ALL {
            let passes: Vec<bool> = parse(format, &render_blocked(format))
                .map(|l| l.entries.iter().map(|e| e.passes).collect())
                .unwrap_or_default();
            assert_eq!(passes, [true, false], "{format}");
        }
    }

    #[test]
    fn a_description_already_ending_in_the_blocked_mark_is_not_marked_twice() {
        let (mut entries, blocked) = two_with_one_blocked();
        if let Some(e) = entries.get_mut(1) {
            e.description = "stuck (blocked)".into();
        }
        let text = render_with(
            ListFormat::Markdown,
            ListSchema::Passes,
            &Contract::default(),
            &entries,
            &RenderOptions { blocked: &blocked },
        );
        assert!(text.ends_with("- [ ] **F2** stuck (blocked)\n"), "{text}");
    }

    #[test]
    fn the_status_schema_ignores_the_blocked_option() {
        let (entries, blocked) = two_with_one_blocked();
        for format in ListFormat::ALL {
            let plain = render_with(
                format,
                ListSchema::Status,
                &Contract::default(),
                &entries,
                &RenderOptions::default(),
            );
            let with_blocked = render_with(
                format,
                ListSchema::Status,
                &Contract::default(),
                &entries,
                &RenderOptions { blocked: &blocked },
            );
            assert_eq!(plain, with_blocked, "{format}");
        }
    }

    /// Text without line breaks or outer whitespace, which every format must preserve.
    fn clean_text() -> impl Strategy<Value = String> {
        // The third mixes in what Markdown could read as markup: comment ends and escapes.
        prop_oneof![".{0,30}", "[ -~]{0,30}", "([ -~]|<!--|-->|\\\\){0,12}"]
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

    fn clean_contract() -> impl Strategy<Value = Contract> {
        (
            clean_text(),
            prop::collection::vec(clean_text(), 0..3),
            prop::collection::vec(clean_text(), 0..3),
        )
            .prop_map(|(goal, acceptance, forbidden)| Contract {
                goal,
                acceptance,
                forbidden,
            })
            // A goal spelled like a heading or a fence reads back as one in Markdown (documented).
            .prop_filter("goal looks like a heading or a fence", |c| {
                !c.goal.starts_with(['#', '`', '~'])
            })
    }

    fn clean_status_entry() -> impl Strategy<Value = Entry> {
        (
            clean_entry(),
            fz::any_status(),
            prop::collection::vec(clean_text(), 0..3),
        )
            .prop_map(|(mut entry, state, notes)| {
                entry.set_state(state);
                entry.notes = notes.join("\n");
                entry
            })
    }

    /// `entries` as a reader reads them back: ids as a reader sees them (without the
    /// whitespace around them or invisible characters, in compatibility form), entries
    /// without a usable (non-blank) id left out.
    fn as_read(entries: &[Entry]) -> Vec<Entry> {
        entries
            .iter()
            .filter(|e| !fold_id(&e.id).is_empty())
            .cloned()
            .map(|mut e| {
                e.id = fold_id(&e.id);
                e
            })
            .collect()
    }

    /// Whether no two entries share an id (a list with a repeated id is unparseable).
    fn unique_ids(entries: &[Entry]) -> bool {
        let mut seen = BTreeSet::new();
        entries.iter().all(|e| seen.insert(e.id.as_str()))
    }

    /// How an entry's claim is written in a generated JSON or YAML list: a boolean a
    /// reader cannot misread, or a value a reader could take either way.
    #[derive(Debug, Clone)]
    enum Claim {
        Plain(bool),
        Absent,
        Ambiguous(&'static str, &'static str),
    }

    fn claim() -> impl Strategy<Value = Claim> {
        prop_oneof![
            6 => any::<bool>().prop_map(Claim::Plain),
            1 => Just(Claim::Absent),
            // (JSON spelling, YAML spelling) of values a reader could take either way.
            2 => prop::sample::select(vec![
                ("1", "1"), ("0", "0"), ("\"yes\"", "yes"), ("\"true\"", "'true'"),
                ("\"on\"", "On"), ("\"n\"", "N"), ("null", "~"), ("\"false\"", "OFF"),
            ]).prop_map(|(j, y)| Claim::Ambiguous(j, y)),
        ]
    }

    /// A list as a person reads it: ids, with each entry's claim; `None` when a person
    /// could read it either way (an ambiguous value, an id given twice).
    fn reference(items: &[(String, Claim)]) -> Option<Vec<(String, bool)>> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for (id, claim) in items {
            if !seen.insert(id.clone()) {
                return None;
            }
            out.push((
                id.clone(),
                match claim {
                    Claim::Plain(b) => *b,
                    Claim::Absent => false,
                    Claim::Ambiguous(..) => return None,
                },
            ));
        }
        Some(out)
    }

    fn read(format: ListFormat, text: &str) -> Option<Vec<(String, bool)>> {
        parse(format, text)
            .ok()
            .map(|l| l.entries.into_iter().map(|e| (e.id, e.passes)).collect())
    }

    /// Ids as an agent may write them: a canonical-looking id, sometimes with
    /// whitespace around it.
    fn padded_id() -> impl Strategy<Value = String> {
        (
            prop::sample::select(vec!["", "", " ", "\t"]),
            "F[1-6]",
            prop::sample::select(vec!["", "", " ", "  "]),
        )
            .prop_map(|(before, id, after)| format!("{before}{id}{after}"))
    }

    /// One visible Markdown entry line with `marker`, or a decoy inside a comment.
    fn markdown_line(marker: &str, id: &str, passes: bool) -> String {
        format!(
            "{marker} [{}] **{id}** text\n",
            if passes { "x" } else { " " }
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

        #[test]
        fn json_and_yaml_readers_agree_with_a_person_on_generated_lists(
            items in prop::collection::vec(
                (padded_id(), claim(), prop::option::weighted(0.2, padded_id())),
                0..6,
            ),
        ) {
            // An id given twice in one entry: the same id twice is one id, two
            // different ids could be read either way.
            let twice_differs = items
                .iter()
                .any(|(id, _, again)| again.as_ref().is_some_and(|a| a.trim() != id.trim()));
            let trimmed: Vec<(String, Claim)> =
                items.iter().map(|(id, c, _)| (id.trim().to_string(), c.clone())).collect();
            let want = if twice_differs { None } else { reference(&trimmed) };
            let mut json = String::from("[");
            let mut yaml = String::new();
            for (i, (id, claim, again)) in items.iter().enumerate() {
                if i > 0 {
                    json.push(',');
                }
                let (j, y) = match claim {
                    Claim::Plain(b) => (format!(", \"passes\": {b}"), format!("\n  passes: {b}")),
                    Claim::Absent => (String::new(), String::new()),
                    Claim::Ambiguous(j, y) => (format!(", \"passes\": {j}"), format!("\n  passes: {y}")),
                };
                let quoted = |id: &str| serde_json::to_string(id).unwrap();
                let (j2, y2) = match again {
                    Some(a) => (format!(", \"id\": {}", quoted(a)), format!("\n  id: {}", quoted(a))),
                    None => (String::new(), String::new()),
                };
                json.push_str(&format!("{{\"id\": {}{j}{j2}}}", quoted(id)));
                yaml.push_str(&format!("- id: {}{y}{y2}\n", quoted(id)));
            }
            json.push(']');
            if items.is_empty() {
                yaml.push_str("[]");
            }
            prop_assert_eq!(read(ListFormat::Json, &json), want.clone(), "{}", json);
            prop_assert_eq!(read(ListFormat::Yaml, &yaml), want, "{}", yaml);
        }

        #[test]
        fn ids_are_matched_to_the_tasks_as_a_person_reads_them(
            ids in prop::collection::vec(
                prop::sample::select(vec!["F1", "f1", "F2", "f2", "F3", "x1", "X1", "G"]),
                0..5,
            ),
        ) {
            let canonical = ["F1", "F2", "F3", "x1"];
            // A person's reading: an id of the task as it is; else the one task id it
            // equals ignoring case; else the id as written. Two entries read as one id
            // could be read either way.
            let person: Vec<String> = ids
                .iter()
                .map(|id| {
                    if canonical.contains(id) {
                        return id.to_string();
                    }
                    let same: Vec<&&str> =
                        canonical.iter().filter(|c| c.eq_ignore_ascii_case(id)).collect();
                    match same.as_slice() {
                        [one] => one.to_string(),
                        _ => id.to_string(),
                    }
                })
                .collect();
            let mut unique = person.clone();
            unique.sort();
            unique.dedup();
            let want = (unique.len() == person.len()).then_some(person);
            let entries: Vec<Entry> = ids
                .iter()
                .map(|id| Entry {
                    id: id.to_string(),
                    category: String::new(),
                    description: String::new(),
                    steps: Vec::new(),
                    passes: false,
                    status: None,
                    notes: String::new(),
                })
                .collect();
            let text = render(ListFormat::Json, &entries);
            let got = parse(ListFormat::Json, &text)
                .and_then(|l| with_canonical_ids(l, &canonical))
                .ok()
                .map(|l| l.entries.into_iter().map(|e| e.id).collect::<Vec<_>>());
            // A list that repeats an id as written is refused before any matching.
            let repeated = {
                let mut seen = BTreeSet::new();
                !ids.iter().all(|id| seen.insert(*id))
            };
            prop_assert_eq!(got, if repeated { None } else { want });
        }

        #[test]
        fn the_markdown_reader_agrees_with_a_person_on_generated_lists(
            visible in prop::collection::vec(("F[1-6]", any::<bool>(), prop::sample::select(vec!["-", "*", "+", "1.", "2)", "10."])), 0..6),
            decoys in prop::collection::vec(("F[1-9]", any::<bool>(), 0..3usize), 0..4),
        ) {
            let mut items: Vec<(String, Claim)> = Vec::new();
            let mut text = String::from("# Feature list\n\n");
            for (n, (id, passes, marker)) in visible.iter().enumerate() {
                // Decoys go into comments a reader never sees, in one of two shapes, or
                // after a comment that its paragraph never closes, where a person sees them.
                for (decoy, claimed, shape) in decoys.iter().filter(|d| d.2 == n % 3) {
                    text += &match shape {
                        0 => format!("<!-- {}-->\n", markdown_line("-", decoy, *claimed)),
                        1 => format!("<!--\n{}-->\n", markdown_line("1.", decoy, *claimed)),
                        _ => {
                            items.push((decoy.clone(), Claim::Plain(*claimed)));
                            format!("prose <!-- open\n{}still --> shown prose\n", markdown_line("*", decoy, *claimed))
                        }
                    };
                }
                text += &markdown_line(marker, id, *passes);
                items.push((id.clone(), Claim::Plain(*passes)));
            }
            let want = reference(&items);
            prop_assert_eq!(read(ListFormat::Markdown, &text), want, "{}", text);
        }

        #[test]
        fn clean_entries_round_trip_in_every_format(
            entries in prop::collection::vec(clean_entry(), 0..6),
        ) {
            for format in ListFormat::ALL {
                let text = render(format, &entries);
                if unique_ids(&entries) {
                    prop_assert_eq!(parse(format, &text).map(|l| l.entries), Ok(entries.clone()));
                } else {
                    prop_assert!(parse(format, &text).is_err(), "a repeated id is refused:\n{}", text);
                }
            }
        }

        #[test]
        fn clean_status_lists_round_trip_in_every_format(
            contract in clean_contract(),
            entries in prop::collection::vec(clean_status_entry(), 0..6),
        ) {
            let want = FeatureList { entries: entries.clone(), contract: contract.clone() };
            for format in ListFormat::ALL {
                let text = render_with(format, ListSchema::Status, &contract, &entries, &RenderOptions::default());
                if unique_ids(&entries) {
                    prop_assert_eq!(parse_with(format, ListSchema::Status, &text), Ok(want.clone()), "{}", text);
                } else {
                    prop_assert!(parse_with(format, ListSchema::Status, &text).is_err(), "{}", text);
                }
            }
        }

        #[test]
        fn json_and_yaml_round_trip_any_strings_under_the_status_schema(
            contract in fz::any_contract(),
            entries in prop::collection::vec(fz::any_status_entry(), 0..4),
        ) {
            // Blank ids are not usable and are skipped on parse; ids lose the whitespace
            // around them; everything else survives.
            let want = FeatureList { entries: as_read(&entries), contract: contract.clone() };
            for format in [ListFormat::Json, ListFormat::Yaml] {
                let text = render_with(format, ListSchema::Status, &contract, &entries, &RenderOptions::default());
                if unique_ids(&want.entries) {
                    prop_assert_eq!(parse_with(format, ListSchema::Status, &text), Ok(want.clone()));
                } else {
                    prop_assert!(parse_with(format, ListSchema::Status, &text).is_err());
                }
            }
        }

        #[test]
        fn json_and_yaml_round_trip_any_strings(entries in prop::collection::vec(fz::any_entry(), 0..4)) {
            // Blank ids are not usable and are skipped on parse; ids lose the whitespace
            // around them; everything else survives.
            let kept = as_read(&entries);
            for format in [ListFormat::Json, ListFormat::Yaml] {
                let text = render(format, &entries);
                if unique_ids(&kept) {
                    prop_assert_eq!(parse(format, &text).map(|l| l.entries), Ok(kept.clone()));
                } else {
                    prop_assert!(parse(format, &text).is_err());
                }
            }
        }
    }
}
