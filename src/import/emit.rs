//! The actions of one imported session, written the same way by every importer: paths
//! made relative to the root or skipped with a reason, shell commands as `run` lines in
//! the directory the agent's shell was in, the importer's model of file contents, the
//! counts of the [`Tally`] and the `divergent` mark.
//!
//! Each importer decides what a call of its CLI did (a Claude Code `Edit`, a Codex
//! `apply_patch`, an aider SEARCH/REPLACE block); this module is where that decision
//! becomes trace lines, so that the rules every importer follows (docs/formats.md,
//! "Importers") hold for all of them alike.

use std::collections::HashMap;

use super::paths::{leading_cd, relative, rewrite_command, within};
use super::tally::{SkipReason, Tally};
use crate::agent::trace::Line;

/// What the importer knows each file (relative path) to hold. It is carried from one
/// session to the next, as replay carries the work directory.
pub type Known = HashMap<String, String>;

/// What the calls of one session became.
#[derive(Debug, Default, PartialEq)]
pub struct Mapped {
    /// Actions and skips, in order.
    pub lines: Vec<Line>,
    /// At least one call was found divergent: a file reset to what the agent saw, or an
    /// edit the transcript does not let the importer reconstruct.
    pub divergent: bool,
    /// Some call never got a result.
    pub unanswered: bool,
}

/// Who made a call, for skip lines and notes.
#[derive(Debug, Clone, Copy)]
pub struct Caller<'c> {
    /// The foreign tool's name (`Bash`, `apply_patch`, `shell`...).
    pub tool: &'c str,
    /// `file:line` the call came from.
    pub origin: &'c str,
    /// The absolute directory the agent's shell was in, when the transcript says.
    pub cwd: Option<&'c str>,
}

/// Writes the trace lines of one session; see the module documentation.
pub struct Emitter<'a> {
    root: Option<&'a str>,
    /// Counts of the session.
    pub tally: &'a mut Tally,
    /// Things worth a user's attention, each naming file:line.
    pub notes: &'a mut Vec<String>,
    /// Content the importer knows each file to have; absent: unknown.
    pub files: &'a mut Known,
    out: Mapped,
}

impl<'a> Emitter<'a> {
    /// An emitter for one session whose paths are relative to `root`.
    pub fn new(
        root: Option<&'a str>,
        files: &'a mut Known,
        tally: &'a mut Tally,
        notes: &'a mut Vec<String>,
    ) -> Self {
        Emitter {
            root,
            tally,
            notes,
            files,
            out: Mapped::default(),
        }
    }

    /// The root paths are made relative to.
    pub fn root(&self) -> Option<&'a str> {
        self.root
    }

    /// The session's lines and marks.
    pub fn finish(self) -> Mapped {
        self.out
    }

    /// Maps one answered file or shell call with `apply`, which emits its actions or a
    /// skip; the call counts as applied when it emitted an action and no skip.
    pub fn call(&mut self, apply: impl FnOnce(&mut Self)) {
        let (actions, skipped) = (self.tally.actions, self.tally.skipped);
        apply(self);
        if self.tally.skipped == skipped && self.tally.actions > actions {
            self.tally.applied += 1;
        }
    }

    /// A call that never got a result: not applied, and its session was cut off.
    pub fn unanswered(&mut self) {
        self.tally.unanswered += 1;
        self.out.unanswered = true;
    }

    /// A call whose result says it failed (or was `refused`): not applied.
    pub fn failed(&mut self, refused: bool) {
        self.tally.failed += 1;
        self.tally.refused += u64::from(refused);
    }

    /// A failed call recorded as a `skip` line with its reason as well (aider's edit
    /// blocks that did not match: the transcript holds what was not applied).
    pub fn failed_skip(&mut self, caller: &Caller, path: Option<&str>, reason: &str) {
        self.failed(false);
        self.tally.skipped += 1;
        self.push_skip(caller, path, reason, true);
    }

    /// A call of a tool without a file effect.
    pub fn ignored(&mut self, tool: &str) {
        *self.tally.ignored.entry(tool.to_string()).or_default() += 1;
    }

    /// Where a shell in the absolute directory `cwd` was, relative to the root (`""`:
    /// the root itself), or why that is outside the work directory. Unknown (no cwd,
    /// no root, a relative cwd) is the root.
    pub fn shell_dir(&self, cwd: Option<&str>) -> Result<String, String> {
        let (Some(cwd), Some(root)) = (cwd, self.root) else {
            return Ok(String::new());
        };
        if !cwd.starts_with('/') {
            return Ok(String::new());
        }
        within(cwd, root).ok_or_else(|| format!("its shell was in {cwd}, outside the root {root}"))
    }

    /// A shell command: a `run` in the directory its shell was in, the root's absolute
    /// path rewritten relative to it. A command that starts with `cd` to an absolute
    /// directory does not depend on where the shell was: it runs at the root, and what
    /// follows the `cd` is rewritten relative to that directory. A shell outside the
    /// root is a `skip`.
    pub fn run(&mut self, caller: &Caller, cmd: &str) {
        let depth = |dir: &str| dir.split('/').filter(|p| !p.is_empty()).count();
        if let Some((end, target)) = leading_cd(cmd) {
            let after = self.root.and_then(|r| within(&target, r));
            let tail = rewrite_command(&cmd[end..], self.root, after.as_deref().map_or(0, depth));
            return self.emit(Line::Run {
                cmd: rewrite_command(&cmd[..end], self.root, 0) + &tail,
                cwd: None,
            });
        }
        match self.shell_dir(caller.cwd) {
            Ok(dir) => self.emit(Line::Run {
                cmd: rewrite_command(cmd, self.root, depth(&dir)),
                cwd: (!dir.is_empty()).then_some(dir),
            }),
            Err(reason) => {
                self.notes.push(format!(
                    "{}: {} call skipped: {reason}",
                    caller.origin, caller.tool
                ));
                self.skip(caller, None, SkipReason::OutsideRoot, &reason);
            }
        }
    }

    /// `given` relative to the root, or `None` after recording a skip. A relative path
    /// is taken from the directory the call's shell was in.
    pub fn path(&mut self, caller: &Caller, given: &str) -> Option<String> {
        let from_shell = match self.shell_dir(caller.cwd) {
            Ok(dir) if !dir.is_empty() && !given.starts_with('/') => Ok(format!("{dir}/{given}")),
            Ok(_) => Ok(given.to_string()),
            Err(reason) if !given.starts_with('/') => Err(reason),
            Err(_) => Ok(given.to_string()),
        };
        match from_shell.and_then(|p| relative(&p, self.root)) {
            Ok(rel) => Some(rel),
            Err(reason) => {
                self.notes.push(format!(
                    "{}: {} of '{given}' skipped: {reason}",
                    caller.origin, caller.tool
                ));
                self.skip(caller, Some(given), SkipReason::OutsideRoot, &reason);
                None
            }
        }
    }

    /// Records a call that was not turned into an action, with its reason.
    pub fn skip(&mut self, caller: &Caller, path: Option<&str>, why: SkipReason, reason: &str) {
        self.tally.skipped += 1;
        *self.tally.skips.entry(why).or_default() += 1;
        self.push_skip(caller, path, reason, false);
    }

    /// A skip line; `rejected` when the agent's own program refused the call.
    fn push_skip(&mut self, caller: &Caller, path: Option<&str>, reason: &str, rejected: bool) {
        self.out.lines.push(Line::Skip {
            tool: Some(caller.tool.to_string()),
            path: path.map(str::to_string),
            reason: Some(reason.to_string()),
            rejected,
        });
    }

    /// A line of the session's trajectory (`say`, `call`, `output`): what the transcript
    /// showed besides file actions, which replay keeps and never applies.
    pub fn note(&mut self, line: Line) {
        self.out.lines.push(line);
    }

    /// Emits an action.
    pub fn emit(&mut self, line: Line) {
        self.tally.actions += 1;
        self.out.lines.push(line);
    }

    /// A `write`: the file holds `content` from now on.
    pub fn write(&mut self, path: String, content: String) {
        self.files.insert(path.clone(), content.clone());
        self.emit(Line::Write { path, content });
    }

    /// A `delete`: the importer knows the file is gone (an empty model entry is not
    /// kept: a later edit of it has nothing to match).
    pub fn delete(&mut self, path: String) {
        self.files.remove(&path);
        self.emit(Line::Delete { path });
    }

    /// A `write` of what the agent's file held, which the importer's model did not: the
    /// file is reset and the session is divergent.
    pub fn reset(&mut self, path: String, content: String) {
        self.tally.resets += 1;
        self.out.divergent = true;
        self.write(path, content);
    }

    /// A call whose effect the transcript does not let the importer reconstruct (an
    /// edit whose context does not match what the importer knows of the file, a change
    /// recorded without its content): the session is divergent, and the file's content
    /// is unknown from now on.
    pub fn diverged(&mut self, caller: &Caller, path: Option<&str>, reason: &str) {
        self.tally.diverged += 1;
        self.out.divergent = true;
        if let Some(path) = path {
            self.files.remove(path);
        }
        self.notes.push(format!(
            "{}: {} found divergent: {reason}",
            caller.origin, caller.tool
        ));
    }

    /// A shell command ran: it may have changed any file, in ways the transcript does
    /// not show, so the importer knows no file's content any more.
    pub fn forget_all(&mut self) {
        self.files.clear();
    }
}
