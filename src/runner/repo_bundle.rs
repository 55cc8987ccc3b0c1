//! `--keep-repos`: a git bundle of every trial, one commit per session, made by the
//! harness from the trees it observed after each session (never from the agent's own
//! commits, which are the agent's word), so that `git clone` of the bundle and
//! `git log -p` show what each session did to the work directory. A bundle holds no
//! value passed by `pass_env`: each tree is rewritten with the values replaced before
//! it is committed, and so is each message.

use std::collections::HashMap;
use std::path::Path;

use crate::agent::Outcome;
use crate::agent::SessionKind;
use crate::error::{Error, IoContext, Result};
use crate::git::store_trees::{self, TreeEdit};
use crate::git::{CommitBy, GIT_EMAIL, GIT_NAME, bundle_main, commit_tree};
use crate::metrics::Evidence;
use crate::sandbox::Redactor;

/// The mode git gives a symlink.
const SYMLINK_MODE: &str = "120000";

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
/// the tree before it, and its message says so. Every value `redactor` knows is
/// replaced by `[redacted NAME]` in the trees (bytes, symlink targets, paths) and the
/// messages; a commit whose tree was rewritten says so.
pub fn write_bundle(
    store: &Path,
    start: &str,
    start_message: &str,
    sessions: &[SessionTree],
    redactor: &Redactor,
    out: &Path,
) -> Result<()> {
    let by_harness = CommitBy {
        name: GIT_NAME,
        email: GIT_EMAIL,
        seconds: 0,
    };
    let mut trees = RedactedTrees::new(store, redactor)?;
    let (first, rewritten) = trees.of(start)?;
    let message = with_redaction_note(start_message.to_string(), rewritten);
    let mut head = commit_tree(store, &first, None, &redactor.text(&message), &by_harness)?;
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
        let (committed, rewritten) = trees.of(&tree)?;
        let message = with_redaction_note(commit_message(s, observed.is_some()), rewritten);
        head = commit_tree(
            store,
            &committed,
            Some(&head),
            &redactor.text(&message),
            &by,
        )?;
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

/// The trees of a bundle with the values passed by `pass_env` replaced, each tree
/// rewritten once.
struct RedactedTrees<'a> {
    store: &'a Path,
    redactor: &'a Redactor,
    /// Where the blobs being rewritten and git's lists go; removed on drop.
    scratch: Option<tempfile::TempDir>,
    /// The strings `git grep` looks for, one a line, in `scratch`.
    patterns: Option<std::path::PathBuf>,
    /// Each tree asked for: its rewritten tree and in how many files.
    done: HashMap<String, (String, usize)>,
}

impl<'a> RedactedTrees<'a> {
    /// Nothing to rewrite when `redactor` knows no value.
    fn new(store: &'a Path, redactor: &'a Redactor) -> Result<RedactedTrees<'a>> {
        let mut trees = RedactedTrees {
            store,
            redactor,
            scratch: None,
            patterns: None,
            done: HashMap::new(),
        };
        if redactor.is_empty() {
            return Ok(trees);
        }
        // Beside the store, in the trial's scratch: never the run directory.
        let parent = store.parent().unwrap_or(store);
        let scratch = tempfile::Builder::new()
            .prefix("redact-")
            .tempdir_in(parent)
            .io_context(|| format!("cannot create a directory in '{}'", parent.display()))?;
        let lines: Vec<Vec<u8>> = redactor.spellings();
        if lines
            .iter()
            .any(|l| l.split(|b| *b == b'\n').any(|p| !p.is_empty()))
        {
            let patterns = scratch.path().join("patterns");
            store_trees::write_patterns(&patterns, &lines)?;
            trees.patterns = Some(patterns);
        }
        trees.scratch = Some(scratch);
        Ok(trees)
    }

    /// `tree` as the bundle holds it, and how many of its files were rewritten.
    fn of(&mut self, tree: &str) -> Result<(String, usize)> {
        let Some(scratch) = &self.scratch else {
            return Ok((tree.to_string(), 0));
        };
        if let Some(done) = self.done.get(tree) {
            return Ok(done.clone());
        }
        let scratch = scratch.path();
        let items = store_trees::tree_files(self.store, tree)?;
        // Files whose bytes hold a value: found by git in the store, without reading
        // every file here.
        let holding: std::collections::HashSet<Vec<u8>> = match &self.patterns {
            Some(patterns) => store_trees::files_holding(self.store, tree, patterns)?
                .into_iter()
                .collect(),
            None => Default::default(),
        };
        // `git grep` does not read symlink targets: they are read here, all at once.
        let links: Vec<&store_trees::TreeItem> =
            items.iter().filter(|i| i.mode == SYMLINK_MODE).collect();
        let link_objects: Vec<String> = links.iter().map(|i| i.object.clone()).collect();
        let targets = store_trees::small_blobs(self.store, &link_objects, scratch)?;
        let target_of: HashMap<&[u8], &Vec<u8>> = links
            .iter()
            .map(|i| i.path.as_slice())
            .zip(targets.iter())
            .collect();
        let blob = scratch.join("blob");
        let mut edits = Vec::new();
        for item in &items {
            let new_path = self.redactor.bytes(&item.path).into_owned();
            let new_object = if let Some(target) = target_of.get(item.path.as_slice()) {
                match self.redactor.bytes(target) {
                    std::borrow::Cow::Owned(redacted) => {
                        std::fs::write(&blob, redacted)
                            .io_context(|| format!("cannot write '{}'", blob.display()))?;
                        store_trees::blob_from_file(self.store, &blob)?
                    }
                    std::borrow::Cow::Borrowed(_) => item.object.clone(),
                }
            } else if holding.contains(&item.path) {
                store_trees::blob_to_file(self.store, &item.object, &blob)?;
                self.redactor
                    .file(&blob)
                    .io_context(|| format!("cannot redact '{}'", blob.display()))?;
                store_trees::blob_from_file(self.store, &blob)?
            } else {
                item.object.clone()
            };
            if new_object != item.object || new_path != item.path {
                edits.push(TreeEdit {
                    mode: item.mode.clone(),
                    old_path: item.path.clone(),
                    new_object,
                    new_path,
                });
            }
        }
        let done = if edits.is_empty() {
            (tree.to_string(), 0)
        } else {
            (
                store_trees::edit_tree(self.store, tree, &edits, scratch)?,
                edits.len(),
            )
        };
        self.done.insert(tree.to_string(), done.clone());
        Ok(done)
    }
}

/// `message` with a line saying that `rewritten` files of its tree held a value passed
/// by `pass_env`, when any did.
fn with_redaction_note(mut message: String, rewritten: usize) -> String {
    if rewritten == 0 {
        return message;
    }
    let note = format!(
        "redacted: {rewritten} files held a value passed by pass_env (in their bytes, link \
         target or path), replaced by [redacted NAME]; this tree is not the evidence's tree"
    );
    let body = if message.contains("\n\n") { "" } else { "\n" };
    message = message.trim_end().to_string();
    message.push_str(body);
    message.push('\n');
    message.push_str(&note);
    message.push('\n');
    message
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

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) -> Vec<u8> {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        out.stdout
    }

    fn holds(bytes: &[u8], needle: &str) -> bool {
        bytes.windows(needle.len()).any(|w| w == needle.as_bytes())
    }

    #[test]
    fn a_bundle_holds_no_passed_value_in_files_paths_links_or_messages() {
        const KEY: &str = "sk-unit-secret-4242";
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(work.join("src")).unwrap();
        std::fs::write(work.join("src/main.txt"), "clean\n").unwrap();
        let store = dir.path().join("trees.git");
        let start = crate::git::write_tree(&work, &store, &|_| true)
            .unwrap()
            .seen;
        std::fs::write(work.join(".env"), format!("KEY={KEY}\nOTHER=1\n")).unwrap();
        std::fs::create_dir_all(work.join(format!("cache/{KEY}"))).unwrap();
        std::fs::write(work.join(format!("cache/{KEY}/x")), "x\n").unwrap();
        std::os::unix::fs::symlink(format!("../{KEY}"), work.join("link")).unwrap();
        let leaky = crate::git::write_tree(&work, &store, &|_| true)
            .unwrap()
            .seen;
        // The second session leaves the same tree: rewritten once, the same commit tree.
        let session = |n: u32, tree: &str| SessionTree {
            session: n,
            kind: SessionKind::Coding,
            outcome: Outcome::Completed,
            evidence: Evidence {
                tree: Some(tree.to_string()),
                entries_added: Some(vec![format!("id-{KEY}")]),
                ..Evidence::default()
            },
        };
        let sessions = [session(1, &leaky), session(2, &leaky)];
        let redactor = Redactor::of(&[("LB_KEY", KEY)]);
        let out = dir.path().join("repos/t.bundle");
        write_bundle(&store, &start, "start", &sessions, &redactor, &out).unwrap();

        let clone = dir.path().join("clone");
        let done = std::process::Command::new("git")
            .args(["clone", "-q"])
            .arg(&out)
            .arg(&clone)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .unwrap();
        assert!(done.success());
        let log = git(&clone, &["log", "-p", "--all"]);
        let objects = git(
            &clone,
            &["cat-file", "--batch-all-objects", "--batch", "--unordered"],
        );
        for bytes in [&log, &objects] {
            assert!(!holds(bytes, KEY), "{}", String::from_utf8_lossy(bytes));
        }
        let log = String::from_utf8(log).unwrap();
        assert!(log.contains("entries added: id-[redacted LB_KEY]"), "{log}");
        assert_eq!(log.matches("redacted: 3 files held").count(), 2, "{log}");
        assert_eq!(
            std::fs::read_to_string(clone.join(".env")).unwrap(),
            "KEY=[redacted LB_KEY]\nOTHER=1\n"
        );
        assert!(clone.join("cache/[redacted LB_KEY]/x").is_file());
        assert_eq!(
            std::fs::read_link(clone.join("link")).unwrap(),
            Path::new("../[redacted LB_KEY]")
        );
        // The root commit's tree needed nothing: it is the tree observed.
        let root_tree = git(&clone, &["rev-parse", "HEAD~2^{tree}"]);
        assert_eq!(String::from_utf8(root_tree).unwrap().trim(), start);
        // Nothing of the rewriting is left beside the store.
        let beside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert!(
            beside
                .iter()
                .all(|n| !n.to_string_lossy().starts_with("redact-")),
            "{beside:?}"
        );
    }

    #[test]
    fn without_a_value_to_keep_out_the_bundle_holds_the_observed_trees() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(work.join(".env"), "KEY=sk-not-passed-1234\n").unwrap();
        let store = dir.path().join("trees.git");
        let tree = crate::git::write_tree(&work, &store, &|_| true)
            .unwrap()
            .seen;
        let none = Redactor::default();
        let mut trees = RedactedTrees::new(&store, &none).unwrap();
        assert_eq!(trees.of(&tree).unwrap(), (tree.clone(), 0));
        let other = Redactor::of(&[("OTHER", "sk-something-else")]);
        let mut trees = RedactedTrees::new(&store, &other).unwrap();
        assert_eq!(trees.of(&tree).unwrap(), (tree, 0));
    }
}
