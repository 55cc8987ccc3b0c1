//! The harness's reads of an agent's repository done in its own process, with gix
//! instead of a `git` process: the commit `HEAD` names, that commit's tree, and
//! whether a tree holds a gitlink (the gate's commit of its list: `file_commit.rs`).
//!
//! Reading in process must keep what the hardened git command gives (see the top of
//! `git.rs`): nothing the agent's repository says can make the harness run a program
//! (gix reads objects and references here, and never runs filters, hooks or
//! fsmonitors), no configuration but the repository's own is read (no system, global
//! or environment settings, no includes), and replace refs never stand in for a commit
//! (`core.useReplaceRefs` is overridden). What the time limit of a git call guards
//! against, a FIFO or a symlink in `.git` that would block a read or lead it outside,
//! is refused up front: a `.git` that [`super::unsafe_repository`] rejects is not read
//! here, and the caller asks git, under its time limit, as before.

use std::path::Path;

use crate::fsutil::GIT_DIR;

/// What an in-process read found: the answer, or that it must be asked of git.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Read {
    /// The object id, or `None` when the repository has none to give (no commit, a
    /// missing or broken object): what `git rev-parse --verify -q` says by failing.
    Answer(Option<String>),
    /// The repository's `.git` holds a symlink, FIFO or other special file: not read
    /// in process.
    AskGit,
}

/// The repository of `work_dir` opened with only its own configuration, no includes
/// and no replace refs; `None` when gix cannot open it.
pub(super) fn open(work_dir: &Path) -> Option<gix::Repository> {
    let options = gix::open::Options::isolated()
        .config_overrides(["core.useReplaceRefs=false"])
        .open_path_as_is(true);
    gix::open_opts(work_dir.join(GIT_DIR), options).ok()
}

/// Whether `work_dir/.git` may be read in process: a plain directory tree.
pub(super) fn readable_in_process(work_dir: &Path) -> bool {
    super::unsafe_repository(work_dir).is_none()
}

/// The commit `HEAD` names, as `git rev-parse --verify -q HEAD^{commit}` gives it.
pub(super) fn head_commit(work_dir: &Path) -> Read {
    if !readable_in_process(work_dir) {
        return Read::AskGit;
    }
    Read::Answer(open(work_dir).and_then(|repo| repo.head_commit().ok().map(|c| c.id.to_string())))
}

/// The tree of the commit `HEAD` names, as `git rev-parse --verify -q HEAD^{tree}`
/// gives it.
pub(super) fn head_tree(work_dir: &Path) -> Read {
    if !readable_in_process(work_dir) {
        return Read::AskGit;
    }
    Read::Answer(open(work_dir).and_then(|repo| {
        let commit = repo.head_commit().ok()?;
        commit.tree_id().ok().map(|id| id.to_string())
    }))
}

/// Whether the tree `tree` of `work_dir`'s repository holds a gitlink (a nested
/// repository's commit) at any depth; `None` when it cannot be read in process, or
/// holds more than [`MAX_TREES_READ`] distinct trees (the caller asks git, under its
/// time limit). Each tree is read once however often it is named, and without
/// recursion: an agent's commit can nest trees without end or name one a million
/// times.
pub(super) fn tree_holds_gitlink(work_dir: &Path, tree: &str) -> Option<bool> {
    gitlink_within(work_dir, tree, MAX_TREES_READ)
}

/// [`tree_holds_gitlink`], reading at most `max_trees` distinct trees.
fn gitlink_within(work_dir: &Path, tree: &str, max_trees: usize) -> Option<bool> {
    use gix::objs::tree::EntryKind;
    if !readable_in_process(work_dir) {
        return None;
    }
    let repo = open(work_dir)?;
    let mut to_read = vec![gix::ObjectId::from_hex(tree.as_bytes()).ok()?];
    let mut seen: std::collections::HashSet<gix::ObjectId> = to_read.iter().copied().collect();
    while let Some(id) = to_read.pop() {
        let tree = repo.find_tree(id).ok()?;
        for entry in tree.decode().ok()?.entries {
            match entry.mode.kind() {
                EntryKind::Commit => return Some(true),
                EntryKind::Tree if seen.insert(entry.oid.into()) => {
                    if seen.len() > max_trees {
                        return None;
                    }
                    to_read.push(entry.oid.into());
                }
                _ => {}
            }
        }
    }
    Some(false)
}

/// The most distinct trees [`tree_holds_gitlink`] reads.
pub(super) const MAX_TREES_READ: usize = 100_000;

#[cfg(test)]
mod tests {
    use super::super::agent_git as git;
    use super::*;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]);
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        git(dir.path(), &["add", "-A"]);
        git(dir.path(), &["commit", "-qm", "a"]);
        dir
    }

    fn answers(dir: &Path) -> (Read, Read) {
        (head_commit(dir), head_tree(dir))
    }

    fn as_git_says(dir: &Path) -> (Read, Read) {
        let said = |rev: &str| {
            let id = git(dir, &["rev-parse", "--verify", "-q", rev]);
            Read::Answer((!id.is_empty()).then_some(id))
        };
        (said("HEAD^{commit}"), said("HEAD^{tree}"))
    }

    #[test]
    fn head_and_its_tree_read_in_process_are_what_git_rev_parse_says() {
        let dir = repo();
        let d = dir.path();
        assert_eq!(answers(d), as_git_says(d), "loose objects and refs");
        std::fs::write(d.join("b.txt"), "b\n").unwrap();
        git(d, &["add", "-A"]);
        git(d, &["commit", "-qm", "b"]);
        git(d, &["tag", "-a", "-m", "t", "v1"]);
        git(d, &["gc", "-q", "--prune=now"]);
        assert!(!d.join(".git/refs/heads/main").exists(), "refs packed");
        assert_eq!(answers(d), as_git_says(d), "packed objects and refs");
        git(d, &["checkout", "-q", "v1"]);
        assert_eq!(answers(d), as_git_says(d), "a detached HEAD");
        let empty = tempfile::tempdir().unwrap();
        git(empty.path(), &["init", "-q"]);
        assert_eq!(
            answers(empty.path()),
            (Read::Answer(None), Read::Answer(None)),
            "no commit"
        );
        assert_eq!(answers(empty.path()), as_git_says(empty.path()));
    }

    #[test]
    fn a_gitlink_is_found_at_any_depth_of_a_tree() {
        let dir = repo();
        let d = dir.path();
        let holds = |d: &Path| tree_holds_gitlink(d, &git(d, &["rev-parse", "HEAD^{tree}"]));
        assert_eq!(holds(d), Some(false));
        let gitlink = format!("160000,{},deep/er/sub", "1".repeat(40));
        git(d, &["update-index", "--add", "--cacheinfo", &gitlink]);
        git(d, &["commit", "-qm", "gitlink"]);
        assert_eq!(holds(d), Some(true));
        assert_eq!(tree_holds_gitlink(d, &"2".repeat(40)), None, "no such tree");
        // Nested deeper than a small stack would take by recursion, each level naming
        // the one below twice: each read once, and the gitlink found at the bottom.
        let repo = gix::open(d.join(".git")).unwrap();
        let mut tree = repo.head_tree_id().unwrap().detach();
        for _ in 0..5_000 {
            let entry = |name: &str| gix::objs::tree::Entry {
                mode: gix::objs::tree::EntryKind::Tree.into(),
                filename: name.into(),
                oid: tree,
            };
            let entries = vec![entry("a"), entry("b")];
            tree = repo
                .write_object(gix::objs::Tree { entries })
                .unwrap()
                .detach();
        }
        let dir = d.to_path_buf();
        let found = std::thread::Builder::new()
            .stack_size(256 << 10)
            .spawn(move || tree_holds_gitlink(&dir, &tree.to_string()))
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(found, Some(true), "deep and shared");
        assert_eq!(
            gitlink_within(d, &tree.to_string(), 4_999),
            None,
            "too many trees"
        );
        assert_eq!(gitlink_within(d, &tree.to_string(), 10_000), Some(true));
        std::os::unix::fs::symlink("/dev/null", d.join(".git/link")).unwrap();
        assert_eq!(holds(d), None, "a symlink in .git: not read here");
    }

    #[test]
    fn a_damaged_repository_has_no_head_in_process_as_for_git() {
        let dir = repo();
        let d = dir.path();
        let commit = git(d, &["rev-parse", "HEAD"]);
        let object = d.join(".git/objects").join(&commit[..2]).join(&commit[2..]);
        // Git writes its objects read-only: replaced, as an ordinary user can.
        std::fs::remove_file(&object).unwrap();
        std::fs::write(&object, b"not zlib").unwrap();
        assert_eq!(answers(d), (Read::Answer(None), Read::Answer(None)));
        assert_eq!(answers(d), as_git_says(d));
        std::fs::remove_file(&object).unwrap();
        assert_eq!(answers(d), (Read::Answer(None), Read::Answer(None)));
        std::fs::write(d.join(".git/HEAD"), "garbage\n").unwrap();
        assert_eq!(answers(d), (Read::Answer(None), Read::Answer(None)));
    }

    #[test]
    fn a_git_directory_with_a_fifo_or_symlink_is_left_to_git_and_includes_are_not_read() {
        let dir = repo();
        let d = dir.path();
        let outside = tempfile::tempdir().unwrap();
        // An include of a FIFO outside `.git` would block a reader that follows it.
        let fifo = outside.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        let config = d.join(".git/config");
        let mut text = std::fs::read_to_string(&config).unwrap();
        text.push_str(&format!("[include]\n\tpath = {}\n", fifo.display()));
        std::fs::write(&config, text).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let path = d.to_path_buf();
        std::thread::spawn(move || tx.send(answers(&path)).unwrap());
        let read = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("an include of a FIFO blocked the read");
        assert!(matches!(read.1, Read::Answer(Some(_))), "{read:?}");
        // A FIFO or a symlink inside `.git`: not read here at all.
        let inside = d.join(".git/refs/heads/fifo");
        nix::unistd::mkfifo(&inside, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        assert_eq!(answers(d), (Read::AskGit, Read::AskGit));
        std::fs::remove_file(&inside).unwrap();
        std::os::unix::fs::symlink(outside.path(), d.join(".git/elsewhere")).unwrap();
        assert_eq!(answers(d), (Read::AskGit, Read::AskGit));
    }
}
