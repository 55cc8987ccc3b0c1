//! Which Codex sessions an import reads, in which order, relative to which root.
//!
//! **Inputs.** Files, or directories: every `rollout-*.jsonl` under a directory; a
//! directory without one is a trial's capture directory of the command driver, whose
//! `session-<n>.stdout` files (the `codex exec --json` streams) are read in order of n.
//! A file is a rollout or a capture by its first line; a file of another format is bad
//! input naming its first line (exit 2).
//!
//! **Order and project.** Rollouts are sessions in time order (`session_meta`'s
//! timestamp, then the file name); captures, which carry no time, keep the order given.
//! One import is one project: the root is `--root`, else the cwd of the first session,
//! and a session whose cwd is not under the root (another project's, in a `~/.codex`
//! that holds them all) is left out with a note. Rollouts and captures of the same
//! sessions would be the sessions twice, so one import takes one form.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::session::CodexSession;
use super::{exec_json, line_kind, map, rollout};
use crate::agent::command::cli_usage::CliFormat;
use crate::agent::trace::EndStatus;
use crate::error::{Result, TranscriptError};
use crate::import::emit::Emitter;
use crate::import::importer::{Importer, Recognize, SniffedLine};
use crate::import::paths::within;
use crate::import::session::{
    Imported, ImportedSession, capture_files, expand, read_objects, require_sessions,
};
use crate::import::tally::Tally;

/// `loopbench import codex`.
pub const IMPORTER: Importer = Importer {
    name: "codex",
    summary: "Codex CLI rollouts and `codex exec --json` captures",
    one: "a Codex rollout or `codex exec --json` capture",
    about: "Codex CLI rollouts (~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl; a directory \
            means every rollout-*.jsonl under it), in time order, of one project (--root, else \
            the first session's cwd); or `codex exec --json` captures (a trial's capture \
            directory means its session-<n>.stdout files)",
    examples: "\
Examples:
  loopbench import codex tests/data/codex/latefees --out latefees-codex.jsonl
  loopbench import codex ~/.codex/sessions --root /home/me/myproject --out myproject.jsonl
  loopbench import codex RUN_DIR/agents/TRIAL_ID --out trial.jsonl   # a command agent's rollouts",
    reads: "Codex CLI rollouts, `~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`, one file a \
            session (a directory means every `rollout-*.jsonl` under it, else its \
            `session-<n>.stdout` captures); captured `codex exec --json` output",
    actions: "`shell` (an argv and a `workdir`), `exec_command`, `local_shell_call` and the \
              `exec` tool's nested commands, with their exit codes; `apply_patch` (Add File, \
              Update File with `@@` hunks, Delete File, Move to), applied when its output says \
              it succeeded; `token_count` events as usage; `turn_aborted` or a turn never \
              completed as `interrupted`",
    fixture: "tests/data/codex/latefees",
    captures: Some(CliFormat::Codex),
    recognize: Recognize {
        file_name: is_transcript_name,
        line: is_codex_line,
        document: None,
    },
    import,
};

/// A file a rollout or a capture may be in.
fn is_transcript_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e == "jsonl" || e == "stdout")
}

/// A line of a rollout or an event of `codex exec --json`.
fn is_codex_line(line: SniffedLine) -> bool {
    let SniffedLine::Json(line) = line else {
        return false;
    };
    line_kind::is_rollout_line(line) || line_kind::is_exec_json_event(line)
}

/// What a line of a Codex transcript is, for messages about one that is not.
const EXPECTED: &str = "a Codex rollout line (a JSON object with \"type\" and \"payload\") or a `codex exec --json` event";

/// Imports the Codex transcripts `inputs` (files or directories).
pub fn import(inputs: &[PathBuf], root: Option<&str>) -> Result<Imported> {
    let mut imported = Imported::default();
    let mut sessions: Vec<CodexSession> = Vec::new();
    for input in inputs {
        for file in files_of(input)? {
            let lines = read_objects(&file, EXPECTED, &mut imported.notes)?;
            let Some((_, first)) = lines.first() else {
                imported
                    .notes
                    .push(format!("{}: no line, skipped", file.display()));
                continue;
            };
            let session = if line_kind::is_exec_json_event(first) {
                exec_json::read(&file, lines)?
            } else {
                rollout::read(&file, lines)?
            };
            sessions.push(session);
        }
    }
    let rollouts = sessions.iter().filter(|s| s.form == "rollout").count();
    if rollouts > 0 && rollouts < sessions.len() {
        return Err(TranscriptError::MixedCodexForms {
            inputs: inputs.to_vec(),
        }
        .into());
    }
    // Stable: captures keep the order given.
    sessions.sort_by_key(|s| (s.started.is_none(), s.started));
    let root = root
        .map(str::to_string)
        .or_else(|| sessions.iter().find_map(|s| s.cwd.clone()));
    let mut seen = HashSet::new();
    for session in &sessions {
        if let (Some(cwd), Some(root)) = (&session.cwd, &root)
            && within(cwd, root).is_none()
        {
            imported.notes.push(format!(
                "{}: left out: its cwd {cwd} is not under the root {root} (another project; pass --root to choose)",
                session.file.display()
            ));
            continue;
        }
        let imported_session = import_session(session, root.as_deref(), &mut seen, &mut imported);
        imported.push(imported_session);
    }
    require_sessions(&imported, inputs)?;
    Ok(imported)
}

fn import_session(
    session: &CodexSession,
    root: Option<&str>,
    seen: &mut HashSet<String>,
    imported: &mut Imported,
) -> ImportedSession {
    let mut tally = Tally::default();
    let mut out = Emitter::new(root, &mut imported.known, &mut tally, &mut imported.notes);
    map::map_session(session, &mut out, seen);
    let mapped = out.finish();
    let status = if mapped.unanswered {
        EndStatus::Interrupted
    } else {
        session.status
    };
    let id = session.id.as_deref().unwrap_or("without an id");
    ImportedSession {
        lines: mapped.lines,
        divergent: mapped.divergent,
        usage: session.usage,
        status,
        source: format!("codex {} {id} ({})", session.form, session.file.display()),
        tally,
        n: None,
    }
}

fn is_rollout(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
}

/// The transcript files of one input.
fn files_of(input: &Path) -> Result<Vec<PathBuf>> {
    if !input.is_dir() {
        return expand(input, |_| true);
    }
    let rollouts = expand(input, is_rollout)?;
    if !rollouts.is_empty() {
        return Ok(rollouts);
    }
    let captures = capture_files(input)?;
    if captures.is_empty() {
        return Err(TranscriptError::HoldsNone {
            dir: input.to_path_buf(),
            expected: "rollout-*.jsonl file and no session-<n>.stdout capture".into(),
        }
        .into());
    }
    Ok(captures)
}
