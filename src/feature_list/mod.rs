//! Parsing and rendering of a coding agent's feature list file in JSON, YAML and Markdown.
//!
//! Parsing is deliberately tolerant of the edits agents make (reordered entries and keys,
//! extra fields, re-indentation), while rendering is deterministic so that a rendered file
//! can be compared byte for byte and edited literally (`"passes": false` -> `true`).
//! Format details (and the choices made where the formats differ) are documented in the
//! private submodules `json`, `yaml` and `markdown`; `tree` holds the lenient rules that
//! JSON and YAML share.
//!
//! # Two schemas
//!
//! A list follows one of two [`ListSchema`]s, chosen per arm:
//!
//! - **passes** (the original one, read by [`parse`] and written by [`render`]): each entry
//!   has `id`, `category`, `description`, `steps` and a `passes` boolean. JSON and YAML
//!   hold a top-level array of entries (or an object whose `features` key holds it), and
//!   Markdown holds `- [ ] **F1** description` task items with `[x]` for passes.
//! - **status** (the progress ledger): the file starts with a goal contract ([`Contract`]:
//!   a one-line `goal`, `acceptance` and `forbidden` lists) and each entry has a
//!   [`Status`] instead of `passes` (`pending`, `in_progress`, `blocked`, `needs_review`,
//!   `completed`, `failed`) plus free-text `notes`. JSON and YAML hold one object with
//!   `goal`, `acceptance`, `forbidden` and `features` keys. Markdown has a `# Goal` heading
//!   whose first non-blank line is the goal, `## Acceptance` and `## Forbidden` sections of
//!   bullets, and a `## Features` section of task items in which `[x]` means completed and
//!   otherwise a state word in parentheses right after the id, `- [ ] **K2** (in_progress)
//!   ...`, gives the state (no word: pending).
//!
//! Both are read by [`parse_with`] and written by [`render_with`]. A missing contract key
//! or section is an empty value and a missing state is `pending`, but a state word that is
//! not one of the six, or `[x]` with a word other than `completed`, makes the whole list
//! unparseable: guessing what an agent meant by `done` or `(in progress)` would turn a
//! slip into a claim, or hide one.
//!
//! # Ids as a reader sees them
//!
//! Every reader folds each id the way a person reads it (the private submodule `id`):
//! invisible characters (zero-width space, joiners, byte order mark, soft hyphen,
//! direction marks, ...) removed, Unicode compatibility forms (fullwidth `F１`) as the
//! characters they stand for, the whitespace around it dropped. `F1` followed by a
//! zero-width space is F1, and an entry claiming it claims F1; two entries whose ids fold
//! to one id make the list unparseable, as any id given twice does.
//!
//! Under the status schema a claim is an entry becoming `completed`, so [`Entry::passes`]
//! stays the one "claimed done" flag everything downstream reads: a parsed status-schema
//! entry has `passes == (status == Some(Completed))`, and [`Entry::set_state`] keeps the
//! two in step.

mod api;
mod id;
mod json;
mod markdown;
mod markdown_item;
mod markdown_visible;
mod schema;
mod tree;
mod yaml;

#[cfg(test)]
mod fuzz_support;

pub use api::{RenderOptions, parse, parse_with, render, render_with, with_canonical_ids};
pub use schema::{Contract, ListSchema, Status};

use std::fmt;
use std::str::FromStr;

/// Serialization format of the feature list file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ListFormat {
    /// `feature_list.json`: a JSON array of entry objects.
    Json,
    /// `FEATURES.md`: a Markdown task list with bold ids.
    Markdown,
    /// `feature_list.yaml`: a YAML sequence of entry mappings.
    Yaml,
}

impl ListFormat {
    /// Every supported format, in a fixed order.
    pub const ALL: [ListFormat; 3] = [ListFormat::Json, ListFormat::Markdown, ListFormat::Yaml];

    /// The conventional file name for a list in this format.
    pub fn file_name(self) -> &'static str {
        match self {
            ListFormat::Json => "feature_list.json",
            ListFormat::Markdown => "FEATURES.md",
            ListFormat::Yaml => "feature_list.yaml",
        }
    }

    /// The lowercase name of the format, as accepted by [`FromStr`] and used by serde.
    pub fn as_str(self) -> &'static str {
        match self {
            ListFormat::Json => "json",
            ListFormat::Markdown => "markdown",
            ListFormat::Yaml => "yaml",
        }
    }
}

impl FromStr for ListFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "json" => Ok(ListFormat::Json),
            "markdown" | "md" => Ok(ListFormat::Markdown),
            "yaml" | "yml" => Ok(ListFormat::Yaml),
            _ => Err(format!(
                "unknown feature list format {s:?}: expected one of json, markdown (md), yaml (yml)"
            )),
        }
    }
}

impl fmt::Display for ListFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One entry of a feature list.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Entry {
    /// Stable identifier of the feature, e.g. `F1`.
    pub id: String,
    /// Free-form grouping; in Markdown it comes from the nearest `## ` heading.
    pub category: String,
    /// What the feature is, in one line.
    pub description: String,
    /// How to verify the feature, in order.
    pub steps: Vec<String>,
    /// Whether the agent has marked the feature as passing; under the status schema,
    /// whether its state is `completed`.
    pub passes: bool,
    /// The entry's state under the status schema; `None` under the passes schema. When it
    /// is set it wins over `passes` in status-schema rendering, so change the two together
    /// with [`Entry::set_state`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<Status>,
    /// Free-text notes under the status schema (with the gate ledger, one attempt's
    /// outcome per line); empty under the passes schema.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub notes: String,
}

impl Entry {
    /// The entry's state: its `status` when it has one, otherwise `completed` or
    /// `pending` from `passes` (how a passes-schema entry is written as a status entry).
    pub fn state(&self) -> Status {
        match self.status {
            Some(state) => state,
            None if self.passes => Status::Completed,
            None => Status::Pending,
        }
    }

    /// Sets the state, keeping `passes` equal to `state.is_done()`.
    pub fn set_state(&mut self, state: Status) {
        self.status = Some(state);
        self.passes = state.is_done();
    }
}

/// A parsed list: the goal contract and the entries in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FeatureList {
    /// The entries, in the order they appear in the file (duplicate ids are kept).
    pub entries: Vec<Entry>,
    /// The goal contract at the top of a status-schema list; empty under the passes schema.
    pub contract: Contract,
}

impl FeatureList {
    /// The first entry with the given id, if any.
    pub fn get(&self, id: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.id == id)
    }

    /// The ids of all entries, in file order.
    pub fn ids(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.id.as_str())
    }
}

/// Why a list file could not be parsed (message for humans, with a line number where known).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line of the problem, when the underlying parser reported one.
    pub line: Option<usize>,
    /// What went wrong, without the line prefix.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ParseError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(id: &str) -> Entry {
        Entry {
            id: id.to_string(),
            category: String::new(),
            description: String::new(),
            steps: Vec::new(),
            passes: false,
            status: None,
            notes: String::new(),
        }
    }

    #[test]
    fn format_names_and_file_names_match_the_contract() {
        assert_eq!(ListFormat::Json.file_name(), "feature_list.json");
        assert_eq!(ListFormat::Markdown.file_name(), "FEATURES.md");
        assert_eq!(ListFormat::Yaml.file_name(), "feature_list.yaml");
        let names: Vec<String> = ListFormat::ALL.iter().map(|f| f.to_string()).collect();
        assert_eq!(names, ["json", "markdown", "yaml"]);
    }

    #[test]
    fn from_str_accepts_aliases_case_insensitively() {
        for (text, want) in [
            ("json", ListFormat::Json),
            ("JSON", ListFormat::Json),
            ("markdown", ListFormat::Markdown),
            ("Md", ListFormat::Markdown),
            ("yaml", ListFormat::Yaml),
            ("YML", ListFormat::Yaml),
        ] {
            assert_eq!(text.parse::<ListFormat>(), Ok(want), "{text}");
        }
    }

    #[test]
    fn from_str_rejects_unknown_names_with_the_expected_values() {
        let err = "toml".parse::<ListFormat>().err().unwrap_or_default();
        assert!(err.contains("json") && err.contains("markdown") && err.contains("yaml"));
        assert!(err.contains("toml"));
    }

    #[test]
    fn as_str_round_trips_through_from_str_and_serde() {
        for format in ListFormat::ALL {
            assert_eq!(format.as_str().parse::<ListFormat>(), Ok(format));
            let json = serde_json::to_string(&format).unwrap_or_default();
            assert_eq!(json, format!("\"{}\"", format.as_str()));
        }
    }

    #[test]
    fn get_returns_the_first_entry_with_an_id() {
        let mut second = entry("A");
        second.passes = true;
        let list = FeatureList {
            entries: vec![entry("A"), second, entry("B")],
            ..FeatureList::default()
        };
        assert_eq!(list.get("A").map(|e| e.passes), Some(false));
        assert!(list.get("C").is_none());
        assert_eq!(list.ids().collect::<Vec<_>>(), ["A", "A", "B"]);
    }

    #[test]
    fn state_falls_back_to_passes_when_there_is_no_status() {
        let mut e = entry("A");
        assert_eq!(e.state(), Status::Pending);
        e.passes = true;
        assert_eq!(e.state(), Status::Completed);
        e.status = Some(Status::Failed);
        assert_eq!(e.state(), Status::Failed);
    }

    #[test]
    fn set_state_keeps_passes_equal_to_completed() {
        let mut e = entry("A");
        for state in Status::ALL {
            e.set_state(state);
            assert_eq!((e.status, e.passes), (Some(state), state.is_done()));
        }
    }

    #[test]
    fn entry_serde_is_unchanged_for_passes_schema_entries() {
        let json = serde_json::to_string(&entry("A")).unwrap_or_default();
        assert_eq!(
            json,
            r#"{"id":"A","category":"","description":"","steps":[],"passes":false}"#
        );
        let back: Option<Entry> = serde_json::from_str(&json).ok();
        assert_eq!(back, Some(entry("A")));
    }

    #[test]
    fn parse_error_display_includes_the_line_when_known() {
        let with_line = ParseError {
            line: Some(3),
            message: "bad".into(),
        };
        assert_eq!(with_line.to_string(), "line 3: bad");
        let without = ParseError {
            line: None,
            message: "bad".into(),
        };
        assert_eq!(without.to_string(), "bad");
    }
}
