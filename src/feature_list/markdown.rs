//! The Markdown feature list format (`FEATURES.md`): a task list with bold ids.
//!
//! An entry is a task-list item such as `- [ ] **F1** description` (`[x]`/`[X]` = passes),
//! with `*` or `+` bullets, or in a numbered list (`1. [x] **F1** ...`, `2) [ ] ...`), in a
//! block quote (`> - [x] **F1** ...`), and any indentation allowed. The item's text is
//! read as it renders (`super::markdown_item`): its id is what a reader sees first after
//! the checkbox, whatever its emphasis (`**F1**`, `__F1__`, `*F1*`, plain `F1`, a link
//! `[F1](url)`, a colon after it), and the description is the rest as written. Its steps
//! are the following lines that are list items (bullets or numbers) indented deeper than
//! the entry's marker (inside the same block quotes); blank lines between steps are
//! allowed, and any other non-blank line ends the steps. The category is the text of the
//! nearest preceding `## ` heading. Lines inside ``` or ~~~ fences are ignored, text inside
//! HTML comments (`<!-- ... -->`, over several lines too) is not read where CommonMark hides
//! it, since a reader of the rendered file never sees it (`markdown_visible`), and all
//! other prose is skipped. Two entries with the same
//! id make the list unparseable (in both schemas).
//!
//! Choices where Markdown differs from the other formats:
//! - Parsing never fails under the passes schema: any text is a valid list, possibly with
//!   zero entries, because prose-tolerant parsing has no reliable way to tell a broken
//!   entry from prose. (The status schema refuses what it can tell: bad state words.)
//! - Rendering is line-based, so newlines inside ids, categories, descriptions and steps
//!   are replaced by spaces and surrounding whitespace is trimmed; a step whose text itself
//!   looks like an entry line (`[ ] **X** ...`) reads back as an entry, an id that
//!   ends in a colon reads back without it. Markdown punctuation in an id is written
//!   escaped (`**F\_**`), so that it reads back as written, and so is `<!--` in any other
//!   text outside a code span (`\<!--`, shown as `<!--`), so that it reads back as text,
//!   not as a comment. A fence or a heading inside a block quote is not recognised.
//! - A category that becomes empty after a non-empty one is rendered as a bare `##`
//!   heading, so that the change survives a round trip.
//!
//! # The status schema
//!
//! A status-schema file is made of sections, found by their headings in any order (ASCII
//! case and outer whitespace of the heading text are ignored):
//! - `# Goal`: the goal is its first non-blank line before the next heading, trimmed;
//!   empty when there is none.
//! - `## Acceptance` and `## Forbidden`: the text of every bullet in the section, trimmed.
//!   A missing section is an empty list.
//! - `## Features`: the entries, read as above, except that `### ` headings give the
//!   category (the `## ` level now names sections) and the checkbox and a state word give
//!   the state: `[x]` is completed; otherwise `(word)` right after the id is the state
//!   (`- [ ] **K2** (in_progress) delete a key`), and no word is pending. The word is not
//!   part of the description. A state word is one parenthesised run of ASCII letters, `_`
//!   and `-` (case and the spaces inside the parentheses are ignored); parentheses holding
//!   anything else, like `(see notes)`, are description. Lines such as `  > text`,
//!   indented deeper than the entry like its steps, are its notes: unlike the other
//!   fields, notes keep their line breaks, one `>` line per line (each trimmed).
//!
//! An unknown state word, or `[x]` with a word other than `completed`, makes the file
//! unparseable ([`ParseError`] with the line). Entries outside `## Features` and other
//! sections are skipped like prose.
//!
//! Rendering writes the sections in the order above (every heading, even of an empty
//! list), with `(word)` for every state but pending and completed; those two get an
//! explicit word only when the description itself starts with something that reads as
//! one, so that it stays description. Categories are `### ` headings, with a bare `###`
//! for an emptied one as above. A goal that reads as a heading (`# x`, `## x`, ...) or
//! opens a code fence cannot be represented: it reads back as that heading or fence.

use std::borrow::Cow;

use super::markdown_item::{EntryLine, bullet_text, escape_id, indent_width, within_quotes};
use super::markdown_visible::{escape_openers, visible_lines};
use super::{Contract, Entry, FeatureList, ListSchema, ParseError, RenderOptions, Status};

/// The first line of a rendered Markdown list.
pub(crate) const TITLE: &str = "# Feature list";

/// Parses a Markdown feature list; never fails (see the module documentation).
pub(crate) fn parse_markdown(text: &str) -> FeatureList {
    let mut entries: Vec<Entry> = Vec::new();
    let mut category = String::new();
    // The entry whose steps are being collected, if any.
    let mut open: Option<Open> = None;
    for seen in visible_lines(text) {
        // A fenced code block ends the steps, and what it holds is shown as code.
        if seen.fenced {
            open = None;
            continue;
        }
        let line = seen.text.trim_end();
        if line.is_empty() {
            continue;
        }
        if let Some(item) = EntryLine::parse(line) {
            open = Some(Open::of(&item));
            entries.push(Entry {
                id: item.id,
                category: category.clone(),
                description: item.description.to_string(),
                steps: Vec::new(),
                passes: item.passes,
                status: None,
                notes: String::new(),
            });
            continue;
        }
        if let Some(heading) = heading(line) {
            category = heading.to_string();
            open = None;
            continue;
        }
        if let (Some(open), Some(entry)) = (open, entries.last_mut())
            && let Some(body) = open.inner(line)
            && let Some(step) = bullet_text(body.trim_start())
        {
            entry.steps.push(step.trim().to_string());
            continue;
        }
        open = None;
    }
    FeatureList {
        entries,
        contract: Contract::default(),
    }
}

/// An entry whose steps (and notes) are being read: where its item is.
#[derive(Debug, Clone, Copy)]
struct Open {
    /// Indentation of its list marker, inside its block quotes.
    indent: usize,
    /// Block quotes it is in.
    quotes: usize,
}

impl Open {
    fn of(item: &EntryLine<'_>) -> Open {
        Open {
            indent: item.indent,
            quotes: item.quotes,
        }
    }

    /// `line` inside the entry's block quotes when it is indented deeper than the
    /// entry there (a step or a note of it), else `None`.
    fn inner(self, line: &str) -> Option<&str> {
        let body = within_quotes(line, self.quotes)?;
        (indent_width(body) > self.indent).then_some(body)
    }
}

/// Parses a Markdown feature list under `schema`; only the status schema can fail.
pub(crate) fn parse_markdown_with(
    schema: ListSchema,
    text: &str,
) -> Result<FeatureList, ParseError> {
    match schema {
        ListSchema::Passes => Ok(parse_markdown(text)),
        ListSchema::Status => parse_status_markdown(text),
    }
}

/// Renders entries as a Markdown task list grouped under `## category` headings.
pub(crate) fn render_markdown(entries: &[Entry]) -> String {
    render_markdown_with(
        ListSchema::Passes,
        &Contract::default(),
        entries,
        &RenderOptions::default(),
    )
}

/// Renders a list under `schema` (see the module documentation).
pub(crate) fn render_markdown_with(
    schema: ListSchema,
    contract: &Contract,
    entries: &[Entry],
    options: &RenderOptions<'_>,
) -> String {
    match schema {
        ListSchema::Passes => render_passes(entries, options),
        ListSchema::Status => render_status(contract, entries),
    }
}

/// The passes-schema rendering, with ` (blocked)` after the description of blocked entries.
fn render_passes(entries: &[Entry], options: &RenderOptions<'_>) -> String {
    let mut out = format!("{TITLE}\n");
    let mut previous: Option<String> = None;
    for entry in entries {
        let category = shown(&entry.category);
        if previous.as_deref() != Some(category.as_str()) {
            if !category.is_empty() {
                out.push_str("\n## ");
                out.push_str(&category);
                out.push('\n');
            } else if previous.is_some() {
                out.push_str("\n##\n");
            }
            out.push('\n');
            previous = Some(category);
        }
        out.push_str(if entry.passes { "- [x] **" } else { "- [ ] **" });
        out.push_str(&escape_id(&one_line(&entry.id)));
        out.push_str("**");
        let description = if options.is_blocked(entry) && !entry.description.ends_with(BLOCKED) {
            Cow::Owned(format!("{} {BLOCKED}", entry.description.trim_end()))
        } else {
            Cow::Borrowed(entry.description.as_str())
        };
        push_text(&mut out, &shown(&description));
        out.push('\n');
        push_steps(&mut out, &entry.steps);
    }
    out
}

/// The passes-schema mark of an entry the harness has blocked.
const BLOCKED: &str = "(blocked)";

/// Appends the step lines of an entry.
fn push_steps(out: &mut String, steps: &[String]) {
    for step in steps {
        out.push_str("  -");
        push_text(out, &shown(step));
        out.push('\n');
    }
}

/// The first line of a rendered status-schema list.
const GOAL_HEADING: &str = "# Goal";

/// The status-schema rendering: goal, acceptance, forbidden, then the features.
fn render_status(contract: &Contract, entries: &[Entry]) -> String {
    let mut out = format!("{GOAL_HEADING}\n");
    let goal = shown(&contract.goal);
    if !goal.is_empty() {
        out.push_str(&goal);
        out.push('\n');
    }
    for (heading, items) in [
        ("Acceptance", &contract.acceptance),
        ("Forbidden", &contract.forbidden),
    ] {
        out.push_str("\n## ");
        out.push_str(heading);
        out.push('\n');
        for item in items {
            out.push('-');
            push_text(&mut out, &shown(item));
            out.push('\n');
        }
    }
    out.push_str("\n## Features\n");
    let mut previous: Option<String> = None;
    for entry in entries {
        let category = shown(&entry.category);
        if previous.as_deref() != Some(category.as_str()) {
            if !category.is_empty() {
                out.push_str("\n### ");
                out.push_str(&category);
                out.push('\n');
            } else if previous.is_some() {
                out.push_str("\n###\n");
            }
            previous = Some(category);
        }
        let state = entry.state();
        out.push_str(if state.is_done() {
            "- [x] **"
        } else {
            "- [ ] **"
        });
        out.push_str(&escape_id(&one_line(&entry.id)));
        out.push_str("**");
        let description = shown(&entry.description);
        let implied = matches!(state, Status::Pending | Status::Completed);
        if !implied || state_word(&description).is_some() {
            out.push_str(" (");
            out.push_str(state.as_str());
            out.push(')');
        }
        push_text(&mut out, &description);
        out.push('\n');
        push_steps(&mut out, &entry.steps);
        if !entry.notes.is_empty() {
            for line in entry.notes.replace("\r\n", "\n").split(['\n', '\r']) {
                out.push_str("  >");
                push_text(&mut out, &shown(line));
                out.push('\n');
            }
        }
    }
    out
}

/// The section of a status-schema file a line is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Section {
    /// Before any heading, or under a heading the schema does not name.
    #[default]
    Other,
    Goal,
    Acceptance,
    Forbidden,
    Features,
}

/// Parses a status-schema Markdown list (see the module documentation).
fn parse_status_markdown(text: &str) -> Result<FeatureList, ParseError> {
    let mut parser = StatusParser::default();
    for (index, seen) in visible_lines(text).into_iter().enumerate() {
        if seen.fenced {
            parser.open = None;
            continue;
        }
        let line = seen.text.trim_end();
        if line.is_empty() {
            continue;
        }
        if let Some((level, title)) = any_heading(line) {
            parser.heading(level, title);
            continue;
        }
        match parser.section {
            Section::Other => {}
            Section::Goal => {
                if parser.goal.is_none() {
                    parser.goal = Some(line.trim().to_string());
                }
            }
            Section::Acceptance | Section::Forbidden => parser.contract_item(line),
            Section::Features => parser.features_line(line).map_err(|message| ParseError {
                line: Some(index + 1),
                message,
            })?,
        }
    }
    Ok(FeatureList {
        entries: parser.entries,
        contract: Contract {
            goal: parser.goal.unwrap_or_default(),
            acceptance: parser.acceptance,
            forbidden: parser.forbidden,
        },
    })
}

/// What a status-schema list holds so far, and where its parser is.
#[derive(Default)]
struct StatusParser {
    entries: Vec<Entry>,
    goal: Option<String>,
    acceptance: Vec<String>,
    forbidden: Vec<String>,
    section: Section,
    category: String,
    /// The entry whose steps and notes are being collected, if any.
    open: Option<Open>,
    /// Whether the last entry has a note line yet.
    noted: bool,
}

impl StatusParser {
    /// A heading: level 1 and 2 start a section, level 3 a category of features.
    fn heading(&mut self, level: usize, title: &str) {
        self.open = None;
        match level {
            1 => self.section = section_named(title, &[("goal", Section::Goal)]),
            2 => {
                self.section = section_named(
                    title,
                    &[
                        ("acceptance", Section::Acceptance),
                        ("forbidden", Section::Forbidden),
                        ("features", Section::Features),
                    ],
                );
                self.category.clear();
            }
            3 if self.section == Section::Features => self.category = title.to_string(),
            _ => {}
        }
    }

    /// A line of the acceptance or forbidden section: a bullet is one item.
    fn contract_item(&mut self, line: &str) {
        if let Some(item) = bullet_text(line.trim_start()) {
            let list = if self.section == Section::Acceptance {
                &mut self.acceptance
            } else {
                &mut self.forbidden
            };
            list.push(item.trim().to_string());
        }
    }

    /// A line of the features section: an entry, or a step or note of the open entry
    /// (indented deeper than it); anything else closes the entry.
    fn features_line(&mut self, line: &str) -> Result<(), String> {
        if let Some(item) = EntryLine::parse(line) {
            let (state, description) = item_state(&item)?;
            self.open = Some(Open::of(&item));
            self.noted = false;
            let mut entry = Entry {
                id: item.id,
                category: self.category.clone(),
                description: description.to_string(),
                steps: Vec::new(),
                passes: false,
                status: None,
                notes: String::new(),
            };
            entry.set_state(state);
            self.entries.push(entry);
            return Ok(());
        }
        if let (Some(open), Some(entry)) = (self.open, self.entries.last_mut())
            && let Some(body) = open.inner(line)
        {
            let body = body.trim_start();
            if let Some(step) = bullet_text(body) {
                entry.steps.push(step.trim().to_string());
                return Ok(());
            }
            if let Some(note) = body.strip_prefix('>') {
                // A blank first line is kept, so the line count is tracked apart.
                if self.noted {
                    entry.notes.push('\n');
                }
                entry.notes.push_str(note.trim());
                self.noted = true;
                return Ok(());
            }
        }
        self.open = None;
        Ok(())
    }
}

/// The section a heading names, matched without regard to ASCII case.
fn section_named(title: &str, names: &[(&str, Section)]) -> Section {
    names
        .iter()
        .find(|(name, _)| title.eq_ignore_ascii_case(name))
        .map_or(Section::Other, |&(_, section)| section)
}

/// The state of an entry line and its description without the state word, or why the
/// line's state cannot be read.
fn item_state<'a>(item: &EntryLine<'a>) -> Result<(Status, &'a str), String> {
    let Some((word, rest)) = state_word(item.description) else {
        let state = if item.passes {
            Status::Completed
        } else {
            Status::Pending
        };
        return Ok((state, item.description));
    };
    let state = word
        .parse::<Status>()
        .map_err(|e| format!("feature {:?}: {e}", item.id))?;
    if item.passes && !state.is_done() {
        return Err(format!(
            "feature {:?}: [x] marks it completed, but its state word says {state}",
            item.id
        ));
    }
    Ok((state, rest))
}

/// Splits a leading state word off `text`: `(word) rest` gives `word` and `rest`, when
/// the parentheses hold one run of ASCII letters, `_` and `-` (spaces around it aside).
fn state_word(text: &str) -> Option<(&str, &str)> {
    let inner = text.strip_prefix('(')?;
    let (word, rest) = inner.split_once(')')?;
    let word = word.trim();
    let is_word = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphabetic() || c == '_' || c == '-');
    is_word.then(|| (word, rest.trim()))
}

/// The level and text of an ATX heading (`#` to `######` followed by whitespace or the
/// line end), with the text trimmed.
fn any_heading(line: &str) -> Option<(usize, &str)> {
    let body = line.trim_start();
    let level = body.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let rest = body.get(level..)?;
    if rest.is_empty() || rest.starts_with([' ', '\t']) {
        Some((level, rest.trim()))
    } else {
        None
    }
}

/// Appends a space and `text`, or nothing for empty text, so no line ends in whitespace.
fn push_text(out: &mut String, text: &str) {
    if !text.is_empty() {
        out.push(' ');
        out.push_str(text);
    }
}

/// `text` on one line: line breaks become spaces, outer whitespace is dropped.
fn one_line(text: &str) -> String {
    text.replace("\r\n", " ")
        .replace(['\r', '\n'], " ")
        .trim()
        .to_string()
}

/// `text` as it is written into a rendered list: on one line (see [`one_line`]), with
/// each `<!--` escaped so that it reads back as text, not as a hidden comment.
fn shown(text: &str) -> String {
    escape_openers(&one_line(text))
}

/// The text of a `## ` heading (a bare `##` is an empty heading); deeper levels do not count.
fn heading(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("##")?;
    if rest.is_empty() || rest.starts_with([' ', '\t']) {
        Some(rest.trim())
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::super::markdown_visible::Fence;
    use super::*;
    use crate::feature_list::ListFormat;
    use crate::feature_list::fuzz_support as fz;
    use proptest::prelude::*;

    fn summary(text: &str) -> Vec<String> {
        parse_markdown(text)
            .entries
            .iter()
            .map(|e| {
                let mark = if e.passes { "x" } else { " " };
                format!(
                    "[{mark}]{}|{}|{}|{}",
                    e.id,
                    e.category,
                    e.description,
                    e.steps.join(";")
                )
            })
            .collect()
    }

    fn entry(id: &str, category: &str, steps: &[&str], passes: bool) -> Entry {
        Entry {
            id: id.into(),
            category: category.into(),
            description: format!("about {id}"),
            steps: steps.iter().map(|s| s.to_string()).collect(),
            passes,
            status: None,
            notes: String::new(),
        }
    }

    #[test]
    fn rendering_groups_entries_under_category_headings() {
        let text = render_markdown(&[
            entry("F1", "core", &["open", "click"], false),
            entry("F2", "core", &[], true),
            entry("F3", "ui", &[""], false),
        ]);
        let want = "# Feature list\n\n## core\n\n- [ ] **F1** about F1\n  - open\n  - click\n- [x] **F2** about F2\n\n## ui\n\n- [ ] **F3** about F3\n  -\n";
        assert_eq!(text, want);
        assert_eq!(render_markdown(&[]), "# Feature list\n");
    }

    #[test]
    fn an_empty_first_category_gets_no_heading_but_a_later_one_gets_a_bare_heading() {
        let entries = [
            entry("A", "", &[], false),
            entry("B", "x", &[], false),
            entry("C", "", &[], false),
        ];
        let text = render_markdown(&entries);
        assert!(text.starts_with("# Feature list\n\n- [ ] **A**"), "{text}");
        assert!(text.contains("\n##\n\n- [ ] **C**"), "{text}");
        assert_eq!(parse_markdown(&text).entries, entries);
    }

    #[test]
    fn newlines_in_rendered_text_become_spaces() {
        let mut e = entry("F1", "a\nb", &["one\r\ntwo"], false);
        e.description = "first\nsecond\n".into();
        let text = render_markdown(&[e]);
        assert!(
            text.contains("## a b\n") && text.contains("**F1** first second\n"),
            "{text}"
        );
        assert!(text.contains("  - one two\n"), "{text}");
    }

    #[test]
    fn checked_boxes_in_either_case_mean_passes() {
        let text = "- [x] **A** a\n- [X] **B** b\n- [ ] **C** c\n";
        assert_eq!(summary(text), ["[x]A||a|", "[x]B||b|", "[ ]C||c|"]);
    }

    #[test]
    fn prose_headings_and_other_lists_around_entries_are_ignored() {
        // A task item reads as an entry whatever the emphasis of its first word, so the
        // unchecked `not bold` is the entry `not` (a reader sees an item, and a plain
        // `- [x] F1` is a claim of F1); a bullet without a checkbox is prose.
        let text = "# Title\n\nSome prose about the project.\n\n- a plain bullet\n- [ ] not bold\n\n## Core\n\nIntro paragraph.\n- [ ] **F1** First feature   \n  - step one\nTrailing prose.\n  - not a step\n";
        assert_eq!(
            summary(text),
            ["[ ]not||bold|", "[ ]F1|Core|First feature|step one"]
        );
    }

    #[test]
    fn star_and_plus_bullets_and_any_indentation_are_accepted() {
        let text = "* [ ] **A** star\n    + [x] **B** plus\n\t- [ ]   **C**   spaced  \n";
        assert_eq!(
            summary(text),
            ["[ ]A||star|", "[x]B||plus|", "[ ]C||spaced|"]
        );
    }

    #[test]
    fn steps_use_any_bullet_and_survive_blank_lines() {
        let text = "- [ ] **A** a\n  - one\n\n    * two\n\n  +   three  \n  -\nend\n  - late\n";
        assert_eq!(summary(text), ["[ ]A||a|one;two;three;"]);
    }

    #[test]
    fn steps_must_be_indented_deeper_than_their_entry() {
        let text = "  - [ ] **A** a\n  - sibling\n- [ ] **B** b\n\t- tabbed step\n";
        assert_eq!(summary(text), ["[ ]A||a|", "[ ]B||b|tabbed step"]);
    }

    #[test]
    fn an_indented_entry_line_is_a_new_entry_not_a_step() {
        let text = "- [ ] **A** a\n  - step\n  - [x] **B** nested\n    - its step\n";
        assert_eq!(summary(text), ["[ ]A||a|step", "[x]B||nested|its step"]);
    }

    #[test]
    fn category_comes_from_the_nearest_level_two_heading() {
        let text = "- [ ] **A** a\n## One \n### Sub\n- [ ] **B** b\n# Top\n##\tTwo\n- [ ] **C** c\n##\n- [ ] **D** d\n";
        assert_eq!(
            summary(text),
            ["[ ]A||a|", "[ ]B|One|b|", "[ ]C|Two|c|", "[ ]D||d|"]
        );
    }

    #[test]
    fn lines_inside_code_fences_are_ignored() {
        let text = "```markdown\n- [ ] **X** example\n```\n~~~~\n- [ ] **Y** y\n~~~\n- [ ] **Z** still fenced\n~~~~\n- [ ] **A** a\n  - s\n  ```\n  - in fence\n  ```\n  - after fence\n````\n- [ ] **U** unclosed\n```\n";
        assert_eq!(summary(text), ["[ ]A||a|s"]);
    }

    #[test]
    fn task_items_in_numbered_lists_are_entries_with_numbered_steps() {
        let text = "1. [x] **F1** one\n   1. open\n   2) click\n2) [ ] **F2** two\n10. [X] **F3** three\n1234567890. [x] **F4** not a list item\n3.[x] **F5** no space\n";
        assert_eq!(
            summary(text),
            ["[x]F1||one|open;click", "[ ]F2||two|", "[x]F3||three|"]
        );
    }

    #[test]
    fn text_inside_html_comments_is_not_read() {
        // F4 is seen, as CommonMark renders it: F3's comment is never closed in its
        // paragraph, which F4's list item ends, so it is text.
        let text = "## Core\n<!-- - [x] **F9** hidden -->\n- [ ] **F1** shown <!-- [x] --> too\n<!--\n- [x] **F2** hidden\n-->\n- [x] **F3** <!-- open\n- [x] **F4** seen\n  still --> visible again\n<!-- a block --> - [x] **F5** hidden by the block\n```\n<!--\n```\n- [ ] **F6** after a fence\n";
        assert_eq!(
            summary(text),
            [
                "[ ]F1|Core|shown  too|",
                "[x]F3|Core|<!-- open|",
                "[x]F4|Core|seen|",
                "[ ]F6|Core|after a fence|"
            ]
        );
        // A comment that is never closed hides the rest of the file.
        assert_eq!(
            summary("- [ ] **A** a\n<!--\n- [x] **B** b\n"),
            ["[ ]A||a|"]
        );
    }

    #[test]
    fn a_comment_opener_escaped_with_a_backslash_is_text() {
        let text = "- [ ] **F1** a \\<!-- b\n\\<!--\n- [x] **F2** shown\n- [ ] **F3** c \\\\<!-- hidden --> d\n";
        assert_eq!(
            summary(text),
            ["[ ]F1||a <!-- b|", "[x]F2||shown|", "[ ]F3||c \\ d|"]
        );
    }

    #[test]
    fn text_holding_a_comment_opener_round_trips() {
        let texts = ["<!--", "a <!-- b --> c", "\\<!--", "x\\\\<!--<!--", "\\"];
        let entries: Vec<Entry> = texts
            .iter()
            .enumerate()
            .map(|(n, text)| Entry {
                id: format!("F{n}"),
                category: text.to_string(),
                description: text.to_string(),
                steps: vec![text.to_string()],
                passes: n % 2 == 0,
                status: None,
                notes: String::new(),
            })
            .collect();
        let text = render_markdown(&entries);
        assert_eq!(parse_markdown(&text).entries, entries, "{text}");

        let contract = Contract {
            goal: "<!-- the goal".into(),
            acceptance: vec!["<!--".into()],
            forbidden: vec!["\\<!-- x -->".into()],
        };
        let mut noted = entries.clone();
        for entry in &mut noted {
            entry.set_state(Status::InProgress);
            entry.notes = format!("{}\n<!--", entry.description);
        }
        let text = render_markdown_with(
            ListSchema::Status,
            &contract,
            &noted,
            &RenderOptions::default(),
        );
        let list = status(&text).unwrap_or_default();
        assert_eq!((list.contract, list.entries), (contract, noted), "{text}");
    }

    #[test]
    fn the_status_schema_skips_comments_and_reads_numbered_items_too() {
        let text = "# Goal\n<!-- not the goal -->\ng\n## Features\n1. [ ] **K1** (in_progress) a\n<!--\n2. [x] **K2** b\n-->\n";
        let list = status(text).unwrap_or_default();
        assert_eq!(list.contract.goal, "g");
        assert_eq!(
            list.entries
                .iter()
                .map(|e| (e.id.as_str(), e.state()))
                .collect::<Vec<_>>(),
            [("K1", Status::InProgress)]
        );
        // Line numbers of errors stay those of the file.
        let err = status("## Features\n<!--\n-->\n- [ ] **K1** (done) x\n").err();
        assert_eq!(err.and_then(|e| e.line), Some(4));
    }

    #[test]
    fn ids_and_descriptions_are_trimmed_and_may_contain_bold() {
        let text = "- [ ] ** F 1 ** uses **bold** text\n- [ ] **** empty id\n- [ ]**B**\n";
        assert_eq!(summary(text), ["[ ]F 1||uses **bold** text|", "[ ]B|||"]);
    }

    #[test]
    fn crlf_line_endings_and_no_entries_are_fine() {
        assert_eq!(
            summary("## C\r\n- [x] **A** a\r\n  - s\r\n"),
            ["[x]A|C|a|s"]
        );
        assert_eq!(parse_markdown(""), FeatureList::default());
        assert_eq!(
            parse_markdown("just prose\n- [ ] **broken"),
            FeatureList::default()
        );
    }

    /// The example ledger of the status schema, exactly as the harness writes it.
    const LEDGER: &str = "# Goal\nA tiny key-value store with delete, expiry and CSV export.\n\n## Acceptance\n- every feature's check passes\n\n## Forbidden\n- editing files under tests/\n\n## Features\n- [x] **K1** set and get a value by key\n  - set a to 1\n- [ ] **K2** (in_progress) delete a key so that get returns None\n- [ ] **K3** keys set with a ttl expire after it\n";

    fn status(text: &str) -> Result<FeatureList, ParseError> {
        parse_markdown_with(ListSchema::Status, text)
    }

    /// `state|id|category|description|steps|notes` per entry, or the error with its line.
    fn status_summary(text: &str) -> Result<Vec<String>, String> {
        let list = status(text).map_err(|e| e.to_string())?;
        Ok(list
            .entries
            .iter()
            .map(|e| {
                format!(
                    "{}|{}|{}|{}|{}|{}",
                    e.state(),
                    e.id,
                    e.category,
                    e.description,
                    e.steps.join(";"),
                    e.notes.replace('\n', "/")
                )
            })
            .collect())
    }

    fn contract(text: &str) -> Contract {
        status(text).map(|l| l.contract).unwrap_or_default()
    }

    #[test]
    fn the_example_ledger_parses_and_renders_back_byte_for_byte() {
        let list = status(LEDGER).unwrap_or_default();
        assert_eq!(
            list.contract,
            Contract {
                goal: "A tiny key-value store with delete, expiry and CSV export.".into(),
                acceptance: vec!["every feature's check passes".into()],
                forbidden: vec!["editing files under tests/".into()],
            }
        );
        assert_eq!(
            status_summary(LEDGER),
            Ok(vec![
                "completed|K1||set and get a value by key|set a to 1|".to_string(),
                "in_progress|K2||delete a key so that get returns None||".to_string(),
                "pending|K3||keys set with a ttl expire after it||".to_string(),
            ])
        );
        let passes: Vec<bool> = list.entries.iter().map(|e| e.passes).collect();
        assert_eq!(passes, [true, false, false]);
        let text = render_markdown_with(
            ListSchema::Status,
            &list.contract,
            &list.entries,
            &RenderOptions::default(),
        );
        assert_eq!(text, LEDGER);
    }

    #[test]
    fn the_goal_is_the_first_non_blank_line_under_the_goal_heading() {
        let text = "# Goal\n\n\n   Build it.   \nA second line.\n## Features\n";
        assert_eq!(contract(text).goal, "Build it.");
    }

    #[test]
    fn a_goal_heading_with_no_line_before_the_next_heading_gives_an_empty_goal() {
        assert_eq!(contract("# Goal\n\n## Acceptance\n- a\n").goal, "");
        assert_eq!(contract("# Goal\n").goal, "");
        // A line under another heading is not the goal.
        assert_eq!(contract("# Title\nNot the goal.\n").goal, "");
    }

    #[test]
    fn missing_sections_give_an_empty_goal_and_empty_lists() {
        let list = status("## Features\n- [ ] **A** a\n").unwrap_or_default();
        assert!(list.contract.is_empty(), "{:?}", list.contract);
        assert_eq!(list.entries.len(), 1);
        assert_eq!(status(""), Ok(FeatureList::default()));
    }

    #[test]
    fn sections_are_found_in_any_order_and_their_bullets_are_the_lists() {
        let text = "## Features\n- [x] **A** a\n## Forbidden\n* never this  \n+ nor that\nprose is skipped\n# Goal\nLast but read.\n## Acceptance\n-   it works\n-\n";
        let list = status(text).unwrap_or_default();
        assert_eq!(
            list.contract,
            Contract {
                goal: "Last but read.".into(),
                acceptance: vec!["it works".into(), String::new()],
                forbidden: vec!["never this".into(), "nor that".into()],
            }
        );
        assert_eq!(list.ids().collect::<Vec<_>>(), ["A"]);
    }

    #[test]
    fn section_headings_ignore_case_and_outer_whitespace() {
        let text =
            "#   GOAL  \ng\n##  acceptance \n- a\n## FORBIDDEN\n- f\n## features\n- [ ] **A** a\n";
        let list = status(text).unwrap_or_default();
        assert_eq!(list.contract.goal, "g");
        assert_eq!(list.contract.acceptance, ["a"]);
        assert_eq!(list.contract.forbidden, ["f"]);
        assert_eq!(list.entries.len(), 1);
    }

    #[test]
    fn entries_outside_the_features_section_are_skipped() {
        let text = "- [ ] **A** before any section\n# Goal\n- [ ] **B** the goal line\n## Acceptance\n- [x] **C** an acceptance item\n## Notes\n- [ ] **D** another section\n## Features\n- [ ] **E** read\n# Appendix\n- [ ] **F** after the features\n";
        let list = status(text).unwrap_or_default();
        assert_eq!(list.ids().collect::<Vec<_>>(), ["E"]);
        assert_eq!(list.contract.goal, "- [ ] **B** the goal line");
        assert_eq!(list.contract.acceptance, ["[x] **C** an acceptance item"]);
    }

    #[test]
    fn a_checked_box_means_completed_and_no_state_word_means_pending() {
        let text = "## Features\n- [x] **A** a\n- [X] **B** b\n- [ ] **C** c\n";
        assert_eq!(
            status_summary(text),
            Ok(vec![
                "completed|A||a||".to_string(),
                "completed|B||b||".to_string(),
                "pending|C||c||".to_string(),
            ])
        );
    }

    #[test]
    fn every_state_word_gives_its_state_and_is_not_part_of_the_description() {
        for state in Status::ALL {
            let text = format!("## Features\n- [ ] **A** ({state}) the feature\n");
            let list = status(&text).unwrap_or_default();
            let entry = list.entries.first();
            assert_eq!(entry.map(Entry::state), Some(state), "{text}");
            assert_eq!(entry.map(|e| e.passes), Some(state.is_done()), "{text}");
            assert_eq!(
                entry.map(|e| e.description.as_str()),
                Some("the feature"),
                "{text}"
            );
        }
    }

    #[test]
    fn state_words_ignore_case_and_spaces_inside_the_parentheses() {
        let text = "## Features\n- [ ] **A** ( Needs_Review )desc\n- [x] **B** (COMPLETED)\n";
        assert_eq!(
            status_summary(text),
            Ok(vec![
                "needs_review|A||desc||".to_string(),
                "completed|B||||".to_string(),
            ])
        );
    }

    #[test]
    fn a_checked_box_with_a_state_word_other_than_completed_is_refused() {
        for state in Status::ALL.into_iter().filter(|s| !s.is_done()) {
            let text = format!("## Features\n- [ ] **A** a\n- [x] **B** ({state}) b\n");
            let err = status(&text).err();
            assert_eq!(err.as_ref().and_then(|e| e.line), Some(3), "{text}");
            let message = err.map(|e| e.message).unwrap_or_default();
            assert!(
                message.contains("\"B\"") && message.contains(state.as_str()),
                "{message}"
            );
        }
        assert!(status("## Features\n- [x] **B** (completed) b\n").is_ok());
    }

    #[test]
    fn an_unknown_state_word_is_refused_with_its_line() {
        for word in ["done", "in-progress", "optional", "WIP", "pass_ed"] {
            let text = format!("# Goal\ng\n\n## Features\n- [ ] **K9** ({word}) x\n");
            let err = status(&text).err();
            assert_eq!(err.as_ref().and_then(|e| e.line), Some(5), "{word}");
            let shown = err.map(|e| e.to_string()).unwrap_or_default();
            assert!(
                shown.starts_with("line 5: ") && shown.contains(word) && shown.contains("K9"),
                "{shown}"
            );
        }
    }

    #[test]
    fn parentheses_that_hold_more_than_one_word_are_description() {
        let text = "## Features\n- [ ] **A** (see notes) a\n- [ ] **B** (v2) b\n- [ ] **C** () c\n- [ ] **D** (blocked c\n- [ ] **E** desc (blocked)\n";
        assert_eq!(
            status_summary(text),
            Ok(vec![
                "pending|A||(see notes) a||".to_string(),
                "pending|B||(v2) b||".to_string(),
                "pending|C||() c||".to_string(),
                "pending|D||(blocked c||".to_string(),
                "pending|E||desc (blocked)||".to_string(),
            ])
        );
    }

    #[test]
    fn a_description_that_starts_like_a_state_word_is_rendered_after_an_explicit_word() {
        let mut pending = entry("A", "", &[], false);
        pending.description = "(optional) extra".into();
        pending.set_state(Status::Pending);
        let mut done = pending.clone();
        done.id = "B".into();
        done.set_state(Status::Completed);
        let entries = [pending, done];
        let text = render_markdown_with(
            ListSchema::Status,
            &Contract::default(),
            &entries,
            &RenderOptions::default(),
        );
        assert!(
            text.contains("- [ ] **A** (pending) (optional) extra\n")
                && text.contains("- [x] **B** (completed) (optional) extra\n"),
            "{text}"
        );
        assert_eq!(status(&text).map(|l| l.entries), Ok(entries.to_vec()));
    }

    #[test]
    fn trailing_whitespace_is_trimmed_as_under_the_passes_schema() {
        let text = "# Goal  \n  Goal text \t\n## Acceptance \n- a  \n## Features\t\n- [ ]   **A**   (blocked)   the text  \n  - step  \n  >   a note  \n";
        let list = status(text).unwrap_or_default();
        assert_eq!(list.contract.goal, "Goal text");
        assert_eq!(list.contract.acceptance, ["a"]);
        assert_eq!(
            status_summary(text),
            Ok(vec!["blocked|A||the text|step|a note".to_string()])
        );
        // The same entry line reads the same way under the passes schema, word aside.
        let passes = parse_markdown(text);
        assert_eq!(
            passes.entries.first().map(|e| e.description.as_str()),
            Some("(blocked)   the text")
        );
    }

    #[test]
    fn level_three_headings_under_features_give_the_category() {
        let text = "## Features\n- [ ] **A** a\n### Core \n- [ ] **B** b\n#### Deeper\n- [ ] **C** c\n###\n- [ ] **D** d\n## Features\n- [ ] **E** e\n";
        assert_eq!(
            status_summary(text),
            Ok(vec![
                "pending|A||a||".to_string(),
                "pending|B|Core|b||".to_string(),
                "pending|C|Core|c||".to_string(),
                "pending|D||d||".to_string(),
                "pending|E||e||".to_string(),
            ])
        );
    }

    #[test]
    fn quoted_lines_under_an_entry_are_its_notes_one_line_each() {
        let text = "## Features\n- [ ] **A** (failed) a\n  - s1\n  > attempt 1: failed\n\n  >\n  > attempt 2: failed\n  - s2\n> not indented: ends the entry\n  > ignored\n- [ ] **B** b\n    >first\n";
        assert_eq!(
            status_summary(text),
            Ok(vec![
                "failed|A||a|s1;s2|attempt 1: failed//attempt 2: failed".to_string(),
                "pending|B||b||first".to_string(),
            ])
        );
    }

    #[test]
    fn the_status_rendering_puts_categories_under_the_features_section() {
        let mut a = entry("A", "core", &["s"], false);
        a.set_state(Status::InProgress);
        a.notes = "one\r\ntwo\n".into();
        let b = entry("B", "", &[], true);
        let text = render_markdown_with(
            ListSchema::Status,
            &Contract::default(),
            &[a, b],
            &RenderOptions::default(),
        );
        let want = "# Goal\n\n## Acceptance\n\n## Forbidden\n\n## Features\n\n### core\n- [ ] **A** (in_progress) about A\n  - s\n  > one\n  > two\n  >\n\n###\n- [x] **B** about B\n";
        assert_eq!(text, want);
        assert_eq!(
            status_summary(&text),
            Ok(vec![
                "in_progress|A|core|about A|s|one/two/".to_string(),
                "completed|B||about B||".to_string(),
            ])
        );
    }

    #[test]
    fn the_passes_schema_reads_state_words_and_notes_as_before() {
        let passes = parse_markdown(LEDGER);
        let summary: Vec<String> = passes
            .entries
            .iter()
            .map(|e| format!("{}|{}|{}", e.passes, e.category, e.description))
            .collect();
        assert_eq!(
            summary,
            [
                "true|Features|set and get a value by key",
                "false|Features|(in_progress) delete a key so that get returns None",
                "false|Features|keys set with a ttl expire after it",
            ]
        );
        assert!(passes.entries.iter().all(|e| e.status.is_none()));
        assert!(passes.contract.is_empty());
        assert_eq!(parse_markdown_with(ListSchema::Passes, LEDGER), Ok(passes));
    }

    fn bullet_ladder() -> impl Strategy<Value = String> {
        (
            1..150usize,
            prop::sample::select(vec!["- ", "* [ ] **A** x", "- [x] **", "```"]),
        )
            .prop_map(|(n, item)| {
                (0..n)
                    .map(|i| format!("{}{item}\n", " ".repeat(i % 97)))
                    .collect()
            })
    }

    fn markdown_input() -> impl Strategy<Value = String> {
        let sample = "# Features\n\nProse.\n\n## Core\n\n- [ ] **F1** one\n  - a\n\n  * b\n```\n- [ ] **F2** code\n```\n+ [X] **F3** three\n\t+ c\n";
        prop_oneof![
            3 => ".*",
            4 => fz::mutated(fz::rendered(ListFormat::Markdown)),
            2 => fz::mutated(Just(sample.to_string())),
            1 => fz::nested("- ", ""),
            1 => fz::depth().prop_map(|n| format!("{0}- [ ] **A** a\n{0} - step\n", " ".repeat(n))),
            1 => bullet_ladder(),
            1 => fz::fragment_soup(),
        ]
    }

    proptest! {
        #[test]
        fn any_text_reads_back_as_one_trimmed_line(
            entries in prop::collection::vec(fz::any_entry(), 0..5),
            ids in prop::collection::vec(fz::plain_id(), 5),
        ) {
            let mut entries = entries;
            for (e, id) in entries.iter_mut().zip(ids) {
                e.id = id;
            }
            let expected: Vec<Entry> = entries.iter().map(|e| Entry {
                id: e.id.clone(),
                category: one_line(&e.category),
                description: one_line(&e.description),
                steps: e.steps.iter().map(|s| one_line(s)).collect(),
                passes: e.passes,
                status: None,
                notes: String::new(),
            }).collect();
            // A step spelled like an entry line is read back as an entry (documented).
            prop_assume!(!expected.iter().flat_map(|e| &e.steps).any(|s| s.starts_with('[')));
            prop_assert_eq!(parse_markdown(&render_markdown(&entries)).entries, expected);
        }
    }

    /// Notes as Markdown reads them back: one trimmed line per line of the text.
    fn note_lines(notes: &str) -> String {
        let notes = notes.replace("\r\n", "\n");
        let lines: Vec<&str> = notes.split(['\n', '\r']).map(str::trim).collect();
        lines.join("\n")
    }

    proptest! {
        #[test]
        fn any_text_reads_back_as_trimmed_lines_under_the_status_schema(
            contract in fz::any_contract(),
            entries in prop::collection::vec(fz::any_status_entry(), 0..5),
            ids in prop::collection::vec(fz::plain_id(), 5),
        ) {
            let mut entries = entries;
            for (e, id) in entries.iter_mut().zip(ids) {
                e.id = id;
            }
            let goal = one_line(&contract.goal);
            // A goal spelled like a heading or a fence reads back as one (documented).
            prop_assume!(any_heading(&goal).is_none() && Fence::opened_by(&goal).is_none());
            let expected_entries: Vec<Entry> = entries.iter().map(|e| Entry {
                id: e.id.clone(),
                category: one_line(&e.category),
                description: one_line(&e.description),
                steps: e.steps.iter().map(|s| one_line(s)).collect(),
                passes: e.passes,
                status: e.status,
                notes: if e.notes.is_empty() { String::new() } else { note_lines(&e.notes) },
            }).collect();
            // A step spelled like an entry line is read back as an entry (documented).
            prop_assume!(!expected_entries.iter().flat_map(|e| &e.steps).any(|s| s.starts_with('[')));
            let expected = FeatureList {
                entries: expected_entries,
                contract: Contract {
                    goal,
                    acceptance: contract.acceptance.iter().map(|s| one_line(s)).collect(),
                    forbidden: contract.forbidden.iter().map(|s| one_line(s)).collect(),
                },
            };
            let text = render_markdown_with(ListSchema::Status, &contract, &entries, &RenderOptions::default());
            prop_assert_eq!(status(&text), Ok(expected), "{}", text);
        }
    }

    proptest! {
        #![proptest_config(fz::fuzz_config())]

        #[test]
        fn the_markdown_parser_never_panics(text in markdown_input()) {
            let _ = parse_markdown(&text);
        }
    }

    fn markdown_status_input() -> impl Strategy<Value = String> {
        prop_oneof![
            2 => ".*",
            4 => fz::status_markdown_document(),
            3 => fz::mutated(fz::status_markdown_document()),
            3 => fz::mutated(fz::rendered_status(ListFormat::Markdown)),
            1 => fz::status_fragment_soup(),
            1 => bullet_ladder(),
        ]
    }

    proptest! {
        #![proptest_config(fz::fuzz_config())]

        #[test]
        fn the_markdown_status_parser_never_panics(text in markdown_status_input()) {
            if let Ok(list) = status(&text) {
                prop_assert!(fz::status_invariants_hold(&list), "{list:?}");
            }
        }
    }
}
