//! `--keep-repos`: a git bundle of every trial, one commit per session, made by the
//! harness from the trees it observed after each session (never from the agent's own
//! commits, which are the agent's word), so that `git clone` of the bundle and
//! `git log -p` show what each session did to the work directory.

use std::path::Path;

use crate::agent::Outcome;
use crate::agent::SessionKind;
use crate::error::{Error, IoContext, Result};
use crate::git::{CommitBy, GIT_EMAIL, GIT_NAME, bundle_main, commit_tree};
use crate::metrics::Evidence;

/// One session as its commit tells it.
pub struct SessionTree {
    /// Session number.
    pub session: u32,
    /// Initializer or coding.
    pub kind: SessionKind,
    /// How it ended.
    pub outcome: Outcome,
    /// The evidence of the session (its `tree` is the commit's tree).
    pub evidence: Evidence,
}

/// Commits, in the harness's object store `store`, the tree the trial started from
/// (`start`) and then one commit per session, authored `session-N
/// <session-N@loopbench>`, and writes the history as a bundle to `out` (atomically:
/// a bundle that exists is whole). A session whose tree could not be observed keeps
/// the tree before it, and its message says so.
pub fn write_bundle(
    store: &Path,
    start: &str,
    start_message: &str,
    sessions: &[SessionTree],
    out: &Path,
) -> Result<()> {
    let by_harness = CommitBy {
        name: GIT_NAME,
        email: GIT_EMAIL,
        seconds: 0,
    };
    let mut head = commit_tree(store, start, None, start_message, &by_harness)?;
    let mut tree = start.to_string();
    for (i, s) in sessions.iter().enumerate() {
        let observed = s.evidence.tree.clone();
        if let Some(t) = &observed {
            tree.clone_from(t);
        }
        let name = format!("session-{}", s.session);
        let email = format!("{name}@loopbench");
        let by = CommitBy {
            name: &name,
            email: &email,
            seconds: i as u64 + 1,
        };
        let message = commit_message(s, observed.is_some());
        head = commit_tree(store, &tree, Some(&head), &message, &by)?;
    }
    let dir = out
        .parent()
        .ok_or_else(|| Error::Tool(format!("no directory for '{}'", out.display())))?;
    std::fs::create_dir_all(dir).io_context(|| format!("cannot create '{}'", dir.display()))?;
    // git writes the bundle from inside the store, so a relative `--out` would land
    // (or fail) there.
    let dir =
        &std::fs::canonicalize(dir).io_context(|| format!("cannot resolve '{}'", dir.display()))?;
    let partial = dir.join(format!(
        ".{}.partial",
        out.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    ));
    let _ = std::fs::remove_file(&partial);
    bundle_main(store, &head, &partial)?;
    std::fs::rename(&partial, out)
        .io_context(|| format!("cannot move the bundle to '{}'", out.display()))
}

/// The subject says which session and how it ended; the body names what the harness
/// counted, so that `git log` reads as the trial's timeline.
fn commit_message(s: &SessionTree, observed: bool) -> String {
    let kind = match s.kind {
        SessionKind::Initializer => "initializer",
        SessionKind::Coding => "coding",
    };
    let mut message = format!(
        "session {} ({kind}): {}",
        s.session,
        outcome_word(s.outcome)
    );
    let e = &s.evidence;
    let mut body = Vec::new();
    if !observed {
        body.push("the work directory could not be observed; the tree is the one before".into());
    }
    let mut ids = |label: &str, ids: Option<&Vec<String>>| {
        if let Some(ids) = ids.filter(|l| !l.is_empty()) {
            body.push(format!("{label}: {}", ids.join(", ")));
        }
    };
    ids("claimed", e.newly_claimed.as_ref());
    ids("premature", e.premature.as_ref());
    ids("newly verified", Some(&e.newly_verified));
    ids("regressed", Some(&e.regressions));
    ids("told false", e.told_false.as_ref());
    ids("step edits", e.step_edits.as_ref());
    ids("entries removed", e.entries_removed.as_ref());
    ids("entries added", e.entries_added.as_ref());
    ids("tests weakened", Some(&e.tests_weakened));
    ids("repeated side effects", Some(&e.dup_side_effects));
    if e.dup_side_effects_unlisted > 0 {
        body.push(format!(
            "repeated side effects not listed: {}",
            e.dup_side_effects_unlisted
        ));
    }
    if let Some(edits) = e.desc_edits.as_ref().filter(|l| !l.is_empty()) {
        let ids: Vec<&str> = edits.iter().map(|d| d.id.as_str()).collect();
        body.push(format!("reworded: {}", ids.join(", ")));
    }
    for t in &e.tests_removed {
        body.push(format!(
            "tests removed: {} ({} -> {})",
            t.path, t.before, t.after
        ));
    }
    if !body.is_empty() {
        message.push_str("\n\n");
        message.push_str(&body.join("\n"));
    }
    message.push('\n');
    message
}

fn outcome_word(outcome: Outcome) -> String {
    serde_json::to_value(outcome)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| format!("{outcome:?}"))
}
