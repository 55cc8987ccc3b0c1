//! The harness's reads of an agent's repository done in its own process, with gix
//! instead of a `git` process: the commit `HEAD` names and that commit's tree.
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
fn open(work_dir: &Path) -> Option<gix::Repository> {
    let options = gix::open::Options::isolated()
        .config_overrides(["core.useReplaceRefs=false"])
        .open_path_as_is(true);
    gix::open_opts(work_dir.join(GIT_DIR), options).ok()
}

/// Whether `work_dir/.git` may be read in process: a plain directory tree.
fn readable_in_process(work_dir: &Path) -> bool {
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
const MAX_TREES_READ: usize = 100_000;

/// What committing a top-level file of the work directory takes, read in process: the
/// answers of the gate's `git add -- NAME` and `git diff --cached -- NAME` known
/// without running them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileCommit {
    /// `HEAD` and the index hold the file as it is: `git add` would change nothing
    /// that `git diff --cached` or a commit could see.
    Nothing,
    /// `HEAD` holds the file as it is and the index does not: `git add` alone.
    AddOnly,
    /// The index holds the path as a plain entry and `HEAD` differs from the file:
    /// `git commit -- NAME` alone stages and commits it, as `git add` and the commit
    /// did.
    CommitOnly,
    /// Anything else (a configuration or attributes that could change what `git add`
    /// stages, a `.gitattributes`, an index that is not plain, no `HEAD`, a lock
    /// left behind): ask git, as before.
    AskGit,
}

/// How the top-level file `name` of `work_dir` stands against `HEAD` and the agent's
/// index. Only a repository that the harness's template made and the agent left
/// alone is read here: its `.git/config` byte for byte the one `git init` wrote (so
/// no setting changes what `git add` stages: `core.filemode` on, no conversion, no
/// filter), no `.gitattributes` at the top and no `.git/info/attributes` (so nothing
/// converts the file), an index git would read (its checksum checked, no split or
/// sparse index), the path's only entry of stage 0 with no flag (no
/// `assume-unchanged`, `skip-worktree` or `intent-to-add`) and no lock file.
pub(super) fn file_commit(work_dir: &Path, name: &str) -> FileCommit {
    file_commit_read(work_dir, name).unwrap_or(FileCommit::AskGit)
}

fn file_commit_read(work_dir: &Path, name: &str) -> Option<FileCommit> {
    use gix::index::entry::{Flags, Stage};
    use std::os::unix::fs::PermissionsExt;
    if !readable_in_process(work_dir) || name.contains('/') {
        return None;
    }
    let dot_git = work_dir.join(GIT_DIR);
    let template = super::first_commit::work_template()?;
    let pristine = std::fs::read(template.join("config")).ok()?;
    if std::fs::read(dot_git.join("config")).ok()? != pristine {
        return None;
    }
    let absent = |p: &Path| std::fs::symlink_metadata(p).is_err();
    let untouched = [
        work_dir.join(".gitattributes"),
        dot_git.join("info/attributes"),
        dot_git.join("index.lock"),
        dot_git.join("HEAD.lock"),
        dot_git.join("config.worktree"),
        dot_git.join("commondir"),
    ];
    if !untouched.iter().all(|p| absent(p)) {
        return None;
    }
    let crate::fsutil::Opened::Regular(mut file, meta) =
        crate::fsutil::open_regular(&work_dir.join(name), false).ok()?
    else {
        return None;
    };
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(&mut file, &mut bytes).ok()?;
    // With `core.filemode` on, `git add` takes the owner's execute bit.
    let mode = if meta.permissions().mode() & 0o100 != 0 {
        gix::objs::tree::EntryKind::BlobExecutable
    } else {
        gix::objs::tree::EntryKind::Blob
    };
    let blob =
        gix::objs::compute_hash(gix::hash::Kind::Sha1, gix::objs::Kind::Blob, &bytes).ok()?;
    let options = gix::index::decode::Options {
        alloc_limit_bytes: Some(64 << 20),
        thread_limit: Some(1),
        ..Default::default()
    };
    let index =
        gix::index::File::at(dot_git.join("index"), gix::hash::Kind::Sha1, false, options).ok()?;
    if index.link().is_some() || index.is_sparse() {
        return None;
    }
    let dir_prefix = format!("{name}/");
    let mut entries = index.entries().iter().filter(|e| {
        let path = e.path(&index);
        path == name.as_bytes() || path.starts_with(dir_prefix.as_bytes())
    });
    let indexed = match (entries.next(), entries.next()) {
        (None, _) => return None,
        (Some(e), None) => e,
        (Some(_), Some(_)) => return None,
    };
    let odd = Flags::ASSUME_VALID | Flags::SKIP_WORKTREE | Flags::INTENT_TO_ADD;
    let indexed_kind = indexed.mode.to_tree_entry_mode().map(|m| m.kind());
    if indexed.path(&index) != name.as_bytes()
        || !indexed_kind.is_some_and(is_file_kind)
        || indexed.stage() != Stage::Unconflicted
        || indexed.flags.intersects(odd)
    {
        return None;
    }
    let in_index = indexed_kind == Some(mode) && indexed.id == blob;
    let repo = open(work_dir)?;
    let tree = repo.head_commit().ok()?.tree().ok()?;
    let in_head = match tree.find_entry(name) {
        None => false,
        Some(entry) => {
            let kind = entry.mode().kind();
            if !is_file_kind(kind) {
                return None;
            }
            kind == mode && entry.object_id() == blob
        }
    };
    Some(match (in_head, in_index) {
        (true, true) => FileCommit::Nothing,
        (true, false) => FileCommit::AddOnly,
        (false, _) => FileCommit::CommitOnly,
    })
}

/// A file or a symlink, as opposed to a directory or a nested repository.
fn is_file_kind(kind: gix::objs::tree::EntryKind) -> bool {
    use gix::objs::tree::EntryKind;
    matches!(
        kind,
        EntryKind::Blob | EntryKind::BlobExecutable | EntryKind::Link
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .envs(super::super::identity())
            // Fixed dates: twin repositories' commits are compared by their ids.
            .env("GIT_AUTHOR_DATE", "@0 +0000")
            .env("GIT_COMMITTER_DATE", "@0 +0000")
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

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

    /// The gate's three git calls (add, diff, commit when staged) in `dir`; whether
    /// they went through.
    fn commit_as_before(dir: &Path, name: &str) -> bool {
        let git = |args: &[&str]| super::super::git(dir, args);
        let Ok(_) = git(&["add", "--", name]) else {
            return false;
        };
        let staged = git(&[
            "diff",
            "--cached",
            "--name-only",
            "--no-ext-diff",
            "--",
            name,
        ])
        .unwrap();
        staged.trim().is_empty()
            || git(&["commit", "-q", "--no-verify", "-m", "gate", "--", name]).is_ok()
    }

    /// What the gate runs on the in-process answer, and whether it went through.
    fn commit_as_now(dir: &Path, name: &str) -> (FileCommit, bool) {
        let git = |args: &[&str]| super::super::git(dir, args).is_ok();
        let answer = file_commit(dir, name);
        let done = match answer {
            FileCommit::Nothing => true,
            FileCommit::AddOnly => git(&["add", "--", name]),
            FileCommit::CommitOnly => {
                git(&["commit", "-q", "--no-verify", "-m", "gate", "--", name])
            }
            FileCommit::AskGit => commit_as_before(dir, name),
        };
        (answer, done)
    }

    #[test]
    fn the_gates_commit_read_in_process_leaves_what_add_diff_and_commit_left() {
        type Shape = fn(&Path);
        let shapes: [(&str, Shape, FileCommit); 9] = [
            ("unchanged", |_| {}, FileCommit::Nothing),
            (
                "changed",
                |d| std::fs::write(d.join("list.json"), "new\n").unwrap(),
                FileCommit::CommitOnly,
            ),
            (
                "staged otherwise, file as committed",
                |d| {
                    std::fs::write(d.join("list.json"), "other\n").unwrap();
                    git(d, &["add", "list.json"]);
                    std::fs::write(d.join("list.json"), "list\n").unwrap();
                },
                FileCommit::AddOnly,
            ),
            (
                "made executable",
                |d| {
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(
                        d.join("list.json"),
                        std::fs::Permissions::from_mode(0o755),
                    )
                    .unwrap();
                },
                FileCommit::CommitOnly,
            ),
            (
                "untracked",
                |d| {
                    git(d, &["rm", "-q", "--cached", "list.json"]);
                    git(d, &["commit", "-qm", "gone"]);
                },
                FileCommit::AskGit,
            ),
            (
                "assume-unchanged",
                |d| {
                    git(d, &["update-index", "--assume-unchanged", "list.json"]);
                    std::fs::write(d.join("list.json"), "new\n").unwrap();
                },
                FileCommit::AskGit,
            ),
            (
                "skip-worktree",
                |d| {
                    git(d, &["update-index", "--skip-worktree", "list.json"]);
                    std::fs::write(d.join("list.json"), "new\n").unwrap();
                },
                FileCommit::AskGit,
            ),
            (
                "attributes",
                |d| {
                    std::fs::write(d.join(".gitattributes"), "list.json ident\n").unwrap();
                    std::fs::write(d.join("list.json"), "$Id: x $\n").unwrap();
                },
                FileCommit::AskGit,
            ),
            (
                "configured",
                |d| {
                    git(d, &["config", "core.filemode", "false"]);
                    use std::os::unix::fs::PermissionsExt;
                    std::fs::set_permissions(
                        d.join("list.json"),
                        std::fs::Permissions::from_mode(0o755),
                    )
                    .unwrap();
                },
                FileCommit::AskGit,
            ),
        ];
        for (what, shape, expected) in shapes {
            let twins = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
            for d in &twins {
                std::fs::write(d.path().join("a.txt"), "a\n").unwrap();
                std::fs::write(d.path().join("list.json"), "list\n").unwrap();
                super::super::init_and_commit_all(d.path(), "start").unwrap();
                shape(d.path());
            }
            let (now, before) = (twins[0].path(), twins[1].path());
            let (answer, done) = commit_as_now(now, "list.json");
            assert_eq!(answer, expected, "{what}");
            assert_eq!(
                done,
                commit_as_before(before, "list.json"),
                "{what}: went through"
            );
            for args in [
                &["rev-parse", "HEAD"][..],
                &["ls-files", "-s", "--debug"][..],
                &["status", "--porcelain"][..],
            ] {
                let (a, b) = (git(now, args), git(before, args));
                if args[0] == "ls-files" {
                    // Stat data aside (a file rewritten has a new inode): the entries.
                    let entries = |s: &str| {
                        s.lines()
                            .filter(|l| !l.starts_with("  "))
                            .map(String::from)
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(entries(&a), entries(&b), "{what}: git {args:?}");
                } else {
                    assert_eq!(a, b, "{what}: git {args:?}");
                }
            }
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("list.json"), "list\n").unwrap();
        super::super::init_and_commit_all(dir.path(), "start").unwrap();
        std::fs::write(dir.path().join(".git/index.lock"), "").unwrap();
        assert_eq!(
            file_commit(dir.path(), "list.json"),
            FileCommit::AskGit,
            "a lock"
        );
    }
}
