//! Which ATIF trajectories an import reads, and in which order they are sessions.
//!
//! **Inputs.** Files, or directories: every `*.json` under a directory that is a
//! trajectory (a directory's other JSON files are left out with a note; a file named
//! on the command line that is not a trajectory is bad input).
//!
//! **Chains.** A trajectory continued in another file names it in
//! `continued_trajectory_ref` (a file beside it; that file is read even when it was not
//! given). loopbench's export chains the sessions of a trial this way, so a chain is
//! sessions in its order, one session per document; a chain that loops, or names a
//! file that is missing or not a trajectory, is bad input. Chains are ordered by the
//! time of their first step when every chain has one, else as given (a directory's
//! files by name). One import is one trial: pass one trial's trajectories.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::document::{Document, is_trajectory, read_json};
use super::map::map_document;
use crate::error::{Result, TranscriptError};
use crate::import::importer::{Importer, Recognize, SniffedLine};
use crate::import::session::{Imported, expand, require_sessions};

/// `loopbench import atif`.
pub const IMPORTER: Importer = Importer {
    name: "atif",
    summary: "ATIF trajectories (Harbor's, converters', loopbench's export)",
    one: "an ATIF trajectory",
    about: "ATIF trajectories (Harbor's Agent Trajectory Interchange Format): one trial's \
            *.json files, or a directory of them (a trial's folder of `loopbench export \
            --to atif`, Harbor's agent/trajectory.json); a trajectory continued in \
            another file (continued_trajectory_ref) is the next session",
    examples: "\
Examples:
  loopbench import atif tests/data/atif/latefees --out latefees-atif.jsonl
  loopbench import atif RUN_DIR/exports/atif/ARM/TASK/0 --out trial.jsonl   # a trial of `loopbench export --to atif`",
    reads: "ATIF trajectories (`schema_version` `ATIF-v1.x`): Harbor's `trajectory.json`, \
            converters' output, and `loopbench export --to atif`; one trial's files or a \
            directory of them; a trajectory's `continued_trajectory_ref` is the next session",
    actions: "loopbench's own `edit` and `command` steps where the harness applied them; \
              otherwise the agent's tool calls with their results: Claude Code's `Write`, \
              `Edit`, `MultiEdit` and `Bash` as `claude-code` maps them, Codex's shell \
              commands and `apply_patch` as `codex` maps them; `final_metrics` (else the \
              steps' `metrics`) as usage",
    fixture: "tests/data/atif/latefees",
    captures: None,
    recognize: Recognize {
        file_name: is_json,
        line: is_trajectory_line,
        document: Some(is_trajectory_file),
    },
    import,
};

fn is_json(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "json")
}

/// A trajectory written on one line.
fn is_trajectory_line(line: SniffedLine) -> bool {
    matches!(line, SniffedLine::Json(map) if is_trajectory(map))
}

/// A file that is one trajectory.
fn is_trajectory_file(path: &Path) -> bool {
    matches!(read_json(path), Ok(Ok(Value::Object(map))) if is_trajectory(&map))
}

/// Imports the trajectories `inputs` (files or directories).
pub fn import(inputs: &[PathBuf], root: Option<&str>) -> Result<Imported> {
    let mut imported = Imported::default();
    let mut documents: Vec<Document> = Vec::new();
    let mut seen = HashSet::new();
    for input in inputs {
        let is_dir = input.is_dir();
        for file in expand(input, is_json)? {
            if !seen.insert(canonical(&file)) {
                continue;
            }
            match Document::read(&file) {
                Ok(document) => documents.push(document),
                Err(e) if is_dir => imported
                    .notes
                    .push(format!("{}: left out: {e}", file.display())),
                Err(e) => return Err(e),
            }
        }
    }
    for chain in chains(documents)? {
        for document in &chain {
            let session = map_document(document, root.or(document.cwd()), &mut imported);
            imported.push(session);
        }
    }
    require_sessions(&imported, inputs)?;
    Ok(imported)
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// The documents as chains in session order (see the module's documentation).
fn chains(documents: Vec<Document>) -> Result<Vec<Vec<Document>>> {
    let mut by_file: BTreeMap<PathBuf, Document> = BTreeMap::new();
    let mut order: Vec<PathBuf> = Vec::new();
    for document in documents {
        let key = canonical(&document.file);
        order.push(key.clone());
        by_file.insert(key, document);
    }
    // Follow every continuation, reading the files not given.
    let mut continued: BTreeMap<PathBuf, PathBuf> = BTreeMap::new();
    let mut pending = order.clone();
    while let Some(key) = pending.pop() {
        let Some(next) = by_file.get(&key).and_then(Document::continuation) else {
            continue;
        };
        let file = &by_file[&key].file;
        let next = next?;
        if !next.is_file() {
            return Err(TranscriptError::ContinuationMissing {
                file: file.clone(),
                next,
            }
            .into());
        }
        let next_key = canonical(&next);
        if !by_file.contains_key(&next_key) {
            by_file.insert(next_key.clone(), Document::read(&next)?);
            pending.push(next_key.clone());
        }
        continued.insert(key, next_key);
    }
    let targets: HashSet<&PathBuf> = continued.values().collect();
    let heads: Vec<PathBuf> = order
        .iter()
        .filter(|k| !targets.contains(k))
        .cloned()
        .collect();
    let mut chains: Vec<Vec<PathBuf>> = Vec::new();
    let mut placed: HashSet<PathBuf> = HashSet::new();
    for head in heads {
        let mut chain = Vec::new();
        let mut at = Some(head);
        while let Some(key) = at {
            if !placed.insert(key.clone()) {
                return Err(TranscriptError::ContinuedTwice {
                    file: by_file[&key].file.clone(),
                }
                .into());
            }
            at = continued.get(&key).cloned();
            chain.push(key);
        }
        chains.push(chain);
    }
    if let Some(left) = by_file.keys().find(|k| !placed.contains(*k)) {
        return Err(TranscriptError::ChainLoops {
            file: by_file[left].file.clone(),
        }
        .into());
    }
    let mut chains: Vec<Vec<Document>> = chains
        .into_iter()
        .map(|chain| chain.iter().filter_map(|key| by_file.remove(key)).collect())
        .collect();
    if chains.iter().all(|c| c[0].started().is_some()) {
        chains.sort_by_key(|c| c[0].started());
    }
    Ok(chains)
}
