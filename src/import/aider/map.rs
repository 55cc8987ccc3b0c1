//! What happened in an aider session → trace actions.
//!
//! | in the history | action |
//! | --- | --- |
//! | a reply's SEARCH/REPLACE block, its file in the "Applied edit to PATH" lines that follow | `edit` of SEARCH into REPLACE; on a file whose content the importer knows, as aider matches it (a `write` when that is not the first place the text occurs); an empty SEARCH on a file aider created (`Create new file? y`) or one it knows: `write` |
//! | a whole-file block (`whole` edit format) of an applied file | `write` |
//! | a block aider listed as `SearchReplaceNoExactMatch` | `skip` with the reason (failed); the reply's other blocks were applied |
//! | a block whose file no "Applied edit" line names, or an applied file no block names (the edit went to another file in the chat, or an edit format the importer does not read: `udiff`, `patch`...) | `skip`, and the session is divergent |
//! | `Running CMD` (a command the model suggested and the user confirmed) | `run` at the repository root |
//! | `/run CMD`, `!CMD`, `/test CMD`, `/git ARGS` typed by the user | `run` |
//! | `Commit HASH MESSAGE` (aider's own commits) | `run` of `git add` and `git commit` of the files the reply edited (`git commit -a` for a commit of other changes) |
//! | `Removed: HASH MESSAGE` (`/undo`) | `run` that restores the last commit's files and resets it |
//!
//! A reply whose edits aider never confirmed (it asked again first, after adding files
//! to the chat) is not applied. What the importer knows of a file: what it wrote and
//! edited since the last command (a command may change anything).
//!
//! **Usage**: the "Tokens: ... Cost: ..." lines, read as `loopbench usage aider` reads
//! aider's output: one turn each, tokens as printed (aider rounds them: "2.3k"), the
//! last session cost. **Status**: `interrupted` when the session ends while aider
//! waited for the model (the user's message, a retry after failed edits, tests or lint
//! errors it was asked to fix, files it added, were never answered), or on a cut-off
//! last line; otherwise `completed`.

use std::collections::HashSet;

use super::blocks::{Replace, WholeFile, failed_blocks, search_replace, whole_files};
use super::history::{AiderSession, Event, failed_count};
use super::replace::{apply, unwrap_quoted, with_newline};
use crate::agent::Usage;
use crate::agent::command::cli_usage::{CliFormat, parse};
use crate::agent::trace::{EndStatus, Line};
use crate::import::emit::{Caller, Emitter};
use crate::import::paths::shell_quote;
use crate::import::tally::SkipReason;

/// What aider's `/undo` does: the last commit's files back as they were before it,
/// and the commit undone (its changes kept out of the index).
const UNDO: &str = "git diff -z --name-only HEAD~1 HEAD | xargs -0 git checkout -q HEAD~1 -- && git reset -q --soft HEAD~1";

/// A reply whose edits may be applied.
struct Pending {
    /// `file:line` of the reply.
    origin: String,
    /// Its SEARCH/REPLACE blocks, or why they are malformed.
    blocks: Result<Vec<Replace>, String>,
    /// Its whole-file blocks.
    wholes: Vec<WholeFile>,
    /// "Applied edit to" paths, in order.
    applied: Vec<String>,
    /// Files aider created for it (`Create new file? y`).
    created: HashSet<String>,
    /// The blocks aider listed as failed, and how many it said failed.
    failed: Option<(Vec<Replace>, usize)>,
}

/// Maps one session onto `out`; returns its usage and status.
pub fn map_session(session: &AiderSession, file: &str, out: &mut Emitter) -> (Usage, EndStatus) {
    let mut m = Mapper {
        file,
        out,
        format: String::from("diff"),
        editor_format: None,
        pending: None,
        previous: None,
        last_edited: Vec::new(),
        waiting: false,
        tokens: String::new(),
    };
    for event in &session.events {
        m.event(event);
    }
    m.flush();
    let report = parse(CliFormat::Aider, &m.tokens);
    let usage = Usage {
        turns: report.turns,
        input_tokens: report.input_tokens,
        output_tokens: report.output_tokens,
        cost_usd: report.cost_usd,
    };
    let status = if m.waiting || session.cut_off {
        EndStatus::Interrupted
    } else {
        EndStatus::Completed
    };
    (usage, status)
}

struct Mapper<'m, 'e> {
    file: &'m str,
    out: &'m mut Emitter<'e>,
    /// The main model's edit format.
    format: String,
    /// An architect's editor model's edit format.
    editor_format: Option<String>,
    pending: Option<Pending>,
    /// The text of the message before the current one (a question's subject).
    previous: Option<String>,
    /// The files the last applied reply edited, for aider's commit of them.
    last_edited: Vec<String>,
    /// aider waits for the model.
    waiting: bool,
    /// The "Tokens:" lines.
    tokens: String,
}

/// The answer to a question aider asked (`... [Yes]: y`).
fn answered_yes(question: &str) -> bool {
    question
        .rsplit_once("]:")
        .is_some_and(|(_, a)| matches!(a.trim(), "y" | "a"))
}

impl Mapper<'_, '_> {
    fn at(&self, line: usize) -> String {
        format!("{}:{line}", self.file)
    }

    fn event(&mut self, event: &Event) {
        match event {
            Event::User { line, text } => {
                self.flush();
                self.out.note(Line::Say {
                    text: text.clone(),
                    from: Some("user".into()),
                });
                self.user(*line, text);
                self.previous = None;
            }
            Event::Reply { line, text } => {
                // The reply before: its edits apply as far as aider confirmed them (none,
                // when aider asked again first).
                self.flush();
                self.waiting = false;
                self.out.note(Line::Say {
                    text: text.clone(),
                    from: None,
                });
                self.pending = Some(Pending {
                    origin: self.at(*line),
                    blocks: search_replace(text),
                    wholes: whole_files(text),
                    applied: Vec::new(),
                    created: HashSet::new(),
                    failed: None,
                });
                self.previous = None;
            }
            Event::Tool { line, text } => {
                self.tool(*line, text);
                self.previous = Some(text.clone());
            }
        }
    }

    fn user(&mut self, line: usize, text: &str) {
        let first = text.lines().next().unwrap_or("").trim();
        let command = first
            .strip_prefix("/run ")
            .or_else(|| first.strip_prefix("/test "))
            .or_else(|| first.strip_prefix('!'))
            .map(str::to_string)
            .or_else(|| first.strip_prefix("/git ").map(|a| format!("git {a}")));
        if let Some(cmd) = command {
            let origin = self.at(line);
            return self.run(&origin, "user command", cmd.trim());
        }
        let asks = ["/ask ", "/code ", "/architect ", "/context "]
            .iter()
            .any(|p| first.starts_with(p));
        if asks || (!first.starts_with('/') && !text.trim().is_empty()) {
            self.waiting = true;
        }
    }

    fn tool(&mut self, line: usize, text: &str) {
        let first = text.lines().next().unwrap_or("");
        if first.starts_with("Tokens: ") {
            self.tokens += first;
            self.tokens.push('\n');
            self.waiting = false;
        } else if let Some(format) = edit_format(first) {
            if first.starts_with("Editor model:") {
                self.editor_format = Some(format);
            } else {
                self.format = format;
            }
        } else if first.starts_with("Create new file?") {
            if answered_yes(first)
                && let (Some(p), Some(subject)) = (self.pending.as_mut(), &self.previous)
            {
                p.created.insert(subject.trim().to_string());
            }
        } else if let Some(path) = first.strip_prefix("Applied edit to ") {
            if let Some(p) = self.pending.as_mut() {
                p.applied.push(path.trim().to_string());
            }
        } else if let Some(count) = failed_count(first) {
            if let Some(p) = self.pending.as_mut() {
                p.failed = Some((failed_blocks(text), count));
            }
            self.flush();
            // aider hands the failures back to the model.
            self.waiting = true;
        } else if first == "The LLM did not conform to the edit format." {
            // Unless a list of failed blocks follows, the reply's blocks were malformed
            // and aider applied none of them.
            self.waiting = true;
        } else if let Some(cmd) = first.strip_prefix("Running ") {
            self.flush();
            let origin = self.at(line);
            self.run(&origin, "shell", cmd.trim());
        } else if let Some(rest) = first.strip_prefix("Commit ") {
            self.commit(line, rest);
        } else if first.starts_with("Removed: ") {
            self.flush();
            let origin = self.at(line);
            self.run(&origin, "/undo", UNDO);
        } else if first.starts_with("Attempt to fix") {
            if answered_yes(first) {
                self.waiting = true;
            }
        } else if first.starts_with("Add file to the chat?")
            || first.starts_with("Add URL to the chat?")
        {
            // Files a reply named are added and the model asked again.
            if answered_yes(first) && self.pending.as_ref().is_some_and(|p| p.applied.is_empty()) {
                self.waiting = true;
            }
        } else if first.starts_with("Only ") && first.contains("reflections allowed") {
            self.waiting = false;
        }
    }

    fn run(&mut self, origin: &str, tool: &str, cmd: &str) {
        let caller = Caller {
            tool,
            origin,
            cwd: None,
        };
        self.out.call(|out| {
            out.run(&caller, cmd);
            out.forget_all();
        });
    }

    /// `Commit HASH MESSAGE`: after a reply's edits, aider commits the files it edited;
    /// before them (a commit of the files' earlier changes) or on `/commit`, every
    /// changed file.
    fn commit(&mut self, line: usize, rest: &str) {
        let message = rest.split_once(' ').map_or("", |(_, m)| m).trim();
        let after_edits = self.pending.as_ref().is_some_and(|p| !p.applied.is_empty());
        if after_edits {
            self.flush();
        }
        let files: Vec<String> = if after_edits {
            std::mem::take(&mut self.last_edited)
        } else {
            Vec::new()
        };
        let message = shell_quote(if message.is_empty() { "aider" } else { message });
        let cmd = if files.is_empty() {
            format!("git commit -q --no-verify -a -m {message}")
        } else {
            let names: Vec<String> = files.iter().map(|f| shell_quote(f)).collect();
            let names = names.join(" ");
            format!("git add -- {names} && git commit -q --no-verify -m {message} -- {names}")
        };
        let origin = self.at(line);
        self.run(&origin, "commit", &cmd);
    }

    /// Applies the pending reply's edits, as far as aider confirmed them.
    fn flush(&mut self) {
        let Some(p) = self.pending.take() else {
            return;
        };
        if p.applied.is_empty() && p.failed.is_none() {
            // Never applied: aider asked the model again, or there was nothing to apply.
            return;
        }
        let replaces = p.blocks.clone().unwrap_or_default();
        let whole = is_whole(&self.format) || self.editor_format.as_deref().is_some_and(is_whole);
        let format = self
            .editor_format
            .clone()
            .unwrap_or_else(|| self.format.clone());
        if let Some((mut failed, count)) = p.failed.clone() {
            // aider said more blocks failed than its listing shows whole: which of the
            // others it applied cannot be told.
            let listed = failed.len();
            let unknown = count > listed;
            for block in &replaces {
                let caller = Caller {
                    tool: "SEARCH/REPLACE",
                    origin: &p.origin,
                    cwd: None,
                };
                let at = failed
                    .iter()
                    .position(|f| f.search == block.search && same_file(&f.path, &block.path));
                if let Some(at) = at {
                    failed.remove(at);
                    self.out.failed_skip(
                        &caller,
                        Some(&block.path),
                        &format!(
                            "SearchReplaceNoExactMatch: aider found its SEARCH lines nowhere in {}",
                            block.path
                        ),
                    );
                    continue;
                }
                if unknown {
                    let reason = format!(
                        "aider says {count} block(s) of the reply failed to match and its listing shows {listed}: whether it applied this one is unknown"
                    );
                    self.out.skip(
                        &caller,
                        Some(&block.path),
                        SkipReason::Unreconstructed,
                        &reason,
                    );
                    self.out.diverged(&caller, Some(&block.path), &reason);
                    continue;
                }
                self.out
                    .call(|out| replace(out, &caller, block, &p.created));
            }
        } else if !(whole && replaces.is_empty()) {
            let mut claimed: HashSet<String> = HashSet::new();
            for block in &replaces {
                let caller = Caller {
                    tool: "SEARCH/REPLACE",
                    origin: &p.origin,
                    cwd: None,
                };
                match resolve(&block.path, &p.applied) {
                    Some(path) => {
                        claimed.insert(path.clone());
                        let block = Replace {
                            path,
                            ..block.clone()
                        };
                        self.out
                            .call(|out| replace(out, &caller, &block, &p.created));
                    }
                    None => {
                        let reason = format!(
                            "aider names no edit of {} among the files it applied edits to",
                            block.path
                        );
                        self.out.skip(
                            &caller,
                            Some(&block.path),
                            SkipReason::Unreconstructed,
                            &reason,
                        );
                        self.out.diverged(&caller, None, &reason);
                    }
                }
            }
            self.unclaimed(&p, &claimed, &format);
        } else {
            let mut claimed: HashSet<String> = HashSet::new();
            for file in &p.wholes {
                let Some(path) = resolve(&file.path, &p.applied) else {
                    continue;
                };
                if !claimed.insert(path.clone()) {
                    continue;
                }
                let caller = Caller {
                    tool: "whole file",
                    origin: &p.origin,
                    cwd: None,
                };
                self.out.call(|out| {
                    if let Some(path) = out.path(&caller, &path) {
                        out.write(path, file.content.clone());
                    }
                });
            }
            self.unclaimed(&p, &claimed, &format);
        }
        // What aider commits next: the files it applied edits to (after failed blocks,
        // every file the reply's blocks named).
        self.last_edited = if p.applied.is_empty() {
            let mut named: Vec<String> = replaces.iter().map(|b| b.path.clone()).collect();
            named.dedup();
            named
        } else {
            p.applied.clone()
        };
    }

    /// Files aider says it edited that no block of the reply accounts for.
    fn unclaimed(&mut self, p: &Pending, claimed: &HashSet<String>, format: &str) {
        for path in p.applied.iter().filter(|a| !claimed.contains(*a)) {
            let caller = Caller {
                tool: "aider",
                origin: &p.origin,
                cwd: None,
            };
            let reason = match &p.blocks {
                Err(e) => {
                    format!("aider applied an edit to {path} that the importer cannot read: {e}")
                }
                Ok(_) => format!(
                    "aider applied an edit to {path} that no block of the reply names (its {format} edit format, or a block it moved to another file in the chat)"
                ),
            };
            self.out
                .skip(&caller, Some(path), SkipReason::Unreconstructed, &reason);
            self.out.diverged(&caller, Some(path), &reason);
        }
    }
}

/// `with diff edit format` in a "Main model: ..." or "Editor model: ..." line.
fn edit_format(line: &str) -> Option<String> {
    if !(line.starts_with("Main model:")
        || line.starts_with("Model:")
        || line.starts_with("Editor model:"))
    {
        return None;
    }
    let before = line.strip_suffix(" edit format")?.rsplit_once(" with ")?.1;
    Some(before.trim().to_string())
}

fn is_whole(format: &str) -> bool {
    matches!(format, "whole" | "editor-whole")
}

fn same_file(a: &str, b: &str) -> bool {
    a == b || a.rsplit('/').next() == b.rsplit('/').next()
}

/// The applied path a block's file name stands for: itself, or the one applied path
/// with its base name (aider matches a bare name to a file in the chat).
fn resolve(name: &str, applied: &[String]) -> Option<String> {
    if applied.iter().any(|a| a == name) {
        return Some(name.to_string());
    }
    let base = name.rsplit('/').next().unwrap_or(name);
    let mut same: Vec<&String> = applied
        .iter()
        .filter(|a| a.rsplit('/').next() == Some(base))
        .collect();
    same.dedup();
    match same.as_slice() {
        [one] => Some((*one).clone()),
        _ => None,
    }
}

/// One SEARCH/REPLACE block that aider applied.
fn replace(out: &mut Emitter, caller: &Caller, block: &Replace, created: &HashSet<String>) {
    let Some(path) = out.path(caller, &block.path) else {
        return;
    };
    let search = unwrap_quoted(&block.search, &block.path);
    let new = unwrap_quoted(&block.replace, &block.path);
    let known = out.files.get(&path).cloned();
    if search.trim().is_empty() {
        // Creates the file, or appends to it.
        let base = match (
            &known,
            created.contains(&block.path) || created.contains(&path),
        ) {
            (_, true) => Some(String::new()),
            (Some(text), false) => Some(with_newline(text)),
            (None, false) => None,
        };
        match base {
            Some(base) => out.write(path, base + &new),
            None => {
                let reason = format!(
                    "an empty SEARCH appends to {path}, whose content the transcript does not show"
                );
                out.skip(caller, Some(&path), SkipReason::Unreconstructed, &reason);
                out.diverged(caller, Some(&path), &reason);
            }
        }
        return;
    }
    if let Some(text) = known {
        match apply(&text, &search, &new) {
            Some(edited) => {
                if with_newline(&text).replacen(&search, &new, 1) == edited {
                    out.files.insert(path.clone(), edited);
                    out.emit(Line::Edit {
                        path,
                        old: search,
                        new,
                        all: false,
                        original: None,
                    });
                } else {
                    out.write(path, edited);
                }
                return;
            }
            None => out.diverged(
                caller,
                Some(&path),
                &format!("its SEARCH lines are not in what the transcript says {path} held"),
            ),
        }
    }
    out.emit(Line::Edit {
        path,
        old: search,
        new,
        all: false,
        original: None,
    });
}
