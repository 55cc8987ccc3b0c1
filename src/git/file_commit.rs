//! The gate's commit of one top-level file of the agent's repository ([`commit_alone`]:
//! what the hardened `git add -- NAME`, `git diff --cached -- NAME` and `git commit -q
//! --no-verify -m MESSAGE -- NAME` leave), in the harness's own process where that gives
//! what git gives: what committing the file takes ([`FileCommit`], read), and the
//! commit itself ([`commit_in_process`]), each leaving to git every repository whose
//! answer or commit could differ.
//!
//! The same rules as `in_process.rs` hold: only a `.git` of plain files and directories
//! is read, with its own configuration alone, and nothing in it makes the harness run a
//! program (git's commit runs no hook either: `core.hooksPath` is `/dev/null`).

use std::path::Path;

use gix::index::entry::Stage;
use gix::objs::tree::EntryKind;

use super::in_process::{MAX_TREES_READ, open, readable_in_process};
use crate::error::{Error, Result};
use crate::fsutil::GIT_DIR;

/// What committing a top-level file of the work directory takes, read in process: the
/// answers of the gate's `git add -- NAME` and `git diff --cached -- NAME` known
/// without running them. Where anything else could change them (a configuration or
/// attributes that could change what `git add` stages, a `.gitattributes`, an index
/// that is not plain, no `HEAD`, a lock left behind), [`read`] has no answer and git
/// is asked, as before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FileCommit {
    /// `HEAD` and the index hold the file as it is: `git add` would change nothing
    /// that `git diff --cached` or a commit could see.
    Nothing,
    /// `HEAD` holds the file as it is and the index does not: `git add` alone.
    AddOnly,
    /// The index holds the path as a plain entry and `HEAD` differs from the file:
    /// `git commit -- NAME` alone stages and commits it, as `git add` and the commit
    /// did.
    CommitOnly,
}

/// How [`commit_alone`] went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Committed {
    /// Nothing to commit: `HEAD` holds the file as it is (the index brought to it
    /// where it differed).
    Nothing,
    /// The file written in process as the commit's, and committed.
    InProcess,
    /// Committed by the hardened git's `commit -- NAME`.
    ByGit,
}

/// Commits the top-level file `name` of `work_dir` alone with the one-line `message`,
/// as the hardened git's `add -- NAME`, `diff --cached -- NAME` and, when that shows
/// it staged, `commit -q --no-verify -m MESSAGE -- NAME` do. Read in process where
/// [`FileCommit`] can tell what they would do: nothing, the `add` alone, or the commit
/// alone, made in process where [`commit_in_process`] can make it. The `add` is the
/// only call git is asked for when the index alone differs, and where the reading
/// cannot tell, the three run as they did, the commit after them again in process
/// where it then can.
pub(super) fn commit_alone(work_dir: &Path, name: &str, message: &str) -> Result<Committed> {
    let git = |args: &[&str]| super::git(work_dir, args);
    let commit = |reading: Option<Reading>| {
        let made = reading
            .filter(|r| r.answer == FileCommit::CommitOnly)
            .and_then(|r| commit_in_process(r, work_dir, name, message));
        match made {
            Some(done) => done.map(|()| Committed::InProcess),
            None => git(&["commit", "-q", "--no-verify", "-m", message, "--", name])
                .map(|_| Committed::ByGit),
        }
    };
    let reading = read(work_dir, name);
    match reading.as_ref().map(|r| r.answer) {
        Some(FileCommit::Nothing) => return Ok(Committed::Nothing),
        Some(FileCommit::AddOnly) => return git(&["add", "--", name]).map(|_| Committed::Nothing),
        Some(FileCommit::CommitOnly) => return commit(reading),
        None => {}
    }
    git(&["add", "--", name])?;
    let staged = git(&[
        "diff",
        "--cached",
        "--name-only",
        "--no-ext-diff",
        "--",
        name,
    ])?;
    if staged.trim().is_empty() {
        return Ok(Committed::Nothing);
    }
    commit(read(work_dir, name))
}

/// What [`read`] found: the answer, and what the commit in process needs of it.
struct Reading {
    answer: FileCommit,
    /// The file as `git add` stages it: its bytes, kind and blob id.
    bytes: Vec<u8>,
    kind: EntryKind,
    blob: gix::ObjectId,
    /// The file's stat data, as the index keeps it, taken from the file read.
    stat: gix::index::entry::Stat,
    index: gix::index::File,
    repo: gix::Repository,
}

/// How the top-level file `name` of `work_dir` stands against `HEAD` and the agent's
/// index. Only a repository that the harness's template made and the agent left
/// alone is read here: its `.git/config` byte for byte the one `git init` wrote (so
/// no setting changes what `git add` stages: `core.filemode` on, no conversion, no
/// filter), no `.gitattributes` at the top and no `.git/info/attributes` (so nothing
/// converts the file), an index git would read (its checksum checked, no split or
/// sparse index), the path's only entry of stage 0 with no flag (no
/// `assume-unchanged`, `skip-worktree` or `intent-to-add`) and no lock file.
fn read(work_dir: &Path, name: &str) -> Option<Reading> {
    use gix::index::entry::Flags;
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
    let stat =
        gix::index::entry::Stat::from_fs(&gix::index::fs::Metadata::from_file(&file).ok()?).ok()?;
    // With `core.filemode` on, `git add` takes the owner's execute bit.
    let kind = if meta.permissions().mode() & 0o100 != 0 {
        EntryKind::BlobExecutable
    } else {
        EntryKind::Blob
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
    let in_index = indexed_kind == Some(kind) && indexed.id == blob;
    let repo = open(work_dir)?;
    let in_head = match repo.head_commit().ok()?.tree().ok()?.find_entry(name) {
        None => false,
        Some(entry) => {
            let in_head = entry.mode().kind();
            if !is_file_kind(in_head) {
                return None;
            }
            in_head == kind && entry.object_id() == blob
        }
    };
    let answer = match (in_head, in_index) {
        (true, true) => FileCommit::Nothing,
        (true, false) => FileCommit::AddOnly,
        (false, _) => FileCommit::CommitOnly,
    };
    Some(Reading {
        answer,
        bytes,
        kind,
        blob,
        stat,
        index,
        repo,
    })
}

/// Commits the top-level file `name` of `work_dir` alone, with `message` (one line),
/// as the hardened `git commit -q --no-verify -m MESSAGE -- NAME` does where
/// `reading` says [`FileCommit::CommitOnly`]: the file's blob, `HEAD`'s tree
/// with the file in it, the commit with the harness's identity and date on the
/// branch `HEAD` names, the index's entry of the file, the reflogs that exist (the
/// harness's git makes none: `core.logAllRefUpdates` is off) and `COMMIT_EDITMSG`.
///
/// `None` when the commit is left to git: any other answer, a merge, cherry-pick or
/// revert under way (git refuses a commit of one path then), a detached `HEAD`, one
/// reflog without the other, a conflicted index, or a `HEAD` tree that git's commit
/// would write back otherwise than it is (git rebuilds every tree of the commit from
/// an index read from `HEAD`; a tree with an unusual mode, order, name or an empty
/// subtree would not come back the same). Up to the reference's update nothing the
/// agent could see has changed but `COMMIT_EDITMSG`, which git writes first too, and
/// objects no reference names; the index is written after the reference, as git does.
///
/// `Some(Err)` only when the branch has moved and the index could not replace the old
/// one: the commit is made, and asking git again would commit nothing.
fn commit_in_process(
    reading: Reading,
    work_dir: &Path,
    name: &str,
    message: &str,
) -> Option<Result<()>> {
    use gix::refs::transaction::{Change, LogChange, PreviousValue, RefEdit, RefLog};
    let Reading {
        answer: FileCommit::CommitOnly,
        bytes,
        kind,
        blob,
        stat,
        mut index,
        mut repo,
    } = reading
    else {
        return None;
    };
    let plain = !message.is_empty()
        && !message.contains('\n')
        && message.trim() == message
        && !message.starts_with('#');
    if !plain {
        return None;
    }
    let dot_git = work_dir.join(GIT_DIR);
    let present = |rel: &str| std::fs::symlink_metadata(dot_git.join(rel)).ok();
    let under_way = ["MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD"];
    if under_way.iter().any(|f| present(f).is_some())
        || index
            .entries()
            .iter()
            .any(|e| e.stage() != Stage::Unconflicted)
    {
        return None;
    }
    let (branch, parent) = {
        let head = repo.head().ok()?;
        (
            head.referent_name()?.as_bstr().to_string(),
            head.id()?.detach(),
        )
    };
    if !branch.starts_with("refs/heads/") || present(&format!("{branch}.lock")).is_some() {
        return None;
    }
    repo.refs.write_reflog = match [present("logs/HEAD"), present(&format!("logs/{branch}"))]
        .map(|m| m.map(|m| m.is_file()))
    {
        [Some(true), Some(true)] => gix::refs::store::WriteReflog::Normal,
        [None, None] => gix::refs::store::WriteReflog::Disable,
        _ => return None,
    };
    let head_tree = repo.find_commit(parent).ok()?.tree_id().ok()?.detach();
    if !reads_back_alike(&repo, head_tree)? {
        return None;
    }
    std::fs::write(dot_git.join("COMMIT_EDITMSG"), format!("{message}\n")).ok()?;
    repo.write_blob(&bytes).ok()?;
    let mut editor = repo.edit_tree(head_tree).ok()?;
    editor.upsert(name, kind, blob).ok()?;
    let tree = editor.write().ok()?.detach();
    let signature = super::harness_signature();
    let commit = gix::objs::Commit {
        tree,
        parents: [parent].into_iter().collect(),
        author: signature.clone(),
        committer: signature.clone(),
        encoding: None,
        message: format!("{message}\n").as_str().into(),
        extra_headers: Vec::new(),
    };
    let id = repo.write_object(&commit).ok()?.detach();
    let entry = index.entry_mut_by_path_and_stage(name.into(), Stage::Unconflicted)?;
    entry.id = blob;
    entry.mode = match kind {
        EntryKind::BlobExecutable => gix::index::entry::Mode::FILE_EXECUTABLE,
        _ => gix::index::entry::Mode::FILE,
    };
    entry.stat = stat;
    // Held from before the reference moves, as git holds `index.lock`: the new index
    // replaces the old only once the commit is on the branch.
    let mut lock = gix::lock::File::acquire_to_update_resource(
        index.path(),
        gix::lock::acquire::Fail::Immediately,
        None,
        // The process's umask, as git's own index.
        Default::default(),
    )
    .ok()?;
    index.write_to(&mut lock, Default::default()).ok()?;
    let mut time = gix::date::parse::TimeBuf::default();
    let edit = RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: format!("commit: {message}").into(),
            },
            expected: PreviousValue::MustExistAndMatch(gix::refs::Target::Object(parent)),
            new: gix::refs::Target::Object(id),
        },
        name: "HEAD".try_into().ok()?,
        deref: true,
    };
    repo.edit_references_as([edit], Some(signature.to_ref(&mut time)))
        .ok()?;
    Some(lock.commit().map(drop).map_err(|e| {
        Error::Tool(format!(
            "committed, but the index could not be written: {}",
            e.error
        ))
    }))
}

/// Whether every tree of `root` is as git writes it back from an index: entries in
/// git's order without a name twice, canonical modes, names git's index takes, and no
/// empty tree below the root. `None` past [`MAX_TREES_READ`] distinct trees or where
/// a tree cannot be read. Each tree is read once, without recursion.
fn reads_back_alike(repo: &gix::Repository, root: gix::ObjectId) -> Option<bool> {
    let mut to_read = vec![root];
    let mut seen: std::collections::HashSet<gix::ObjectId> = to_read.iter().copied().collect();
    while let Some(id) = to_read.pop() {
        let tree = repo.find_tree(id).ok()?;
        let entries = tree.decode().ok()?.entries;
        if entries.is_empty() && id != root {
            return Some(false);
        }
        let mut names = Vec::with_capacity(entries.len());
        let mut previous: Option<Vec<u8>> = None;
        for entry in &entries {
            let name: &[u8] = entry.filename;
            if entry.mode != entry.mode.normalized() || !plain_name(name) {
                return Some(false);
            }
            // Git's order: a tree's name compares as if it ended in '/'.
            let mut key = name.to_vec();
            if entry.mode.is_tree() {
                key.push(b'/');
            }
            if previous.as_ref().is_some_and(|p| *p >= key) {
                return Some(false);
            }
            previous = Some(key);
            names.push(name);
            if entry.mode.is_tree() && seen.insert(entry.oid.into()) {
                if seen.len() > MAX_TREES_READ {
                    return None;
                }
                to_read.push(entry.oid.into());
            }
        }
        names.sort_unstable();
        if names.windows(2).any(|w| w[0] == w[1]) {
            return Some(false);
        }
    }
    Some(true)
}

/// A name git's index takes from any tree on any platform setting: not empty, no
/// `/`, `\` or `:`, not `.` or `..`, and nothing a case-, dot- or Unicode-insensitive
/// file system could read as `.git` (`.GIT`, `.git.`, `git~1`, `.g\u{200c}it`).
fn plain_name(name: &[u8]) -> bool {
    if name.is_empty() || name == b"." || name == b".." {
        return false;
    }
    if name.iter().any(|b| matches!(b, b'/' | b'\\' | b':' | 0)) {
        return false;
    }
    let ascii: Vec<u8> = name
        .iter()
        .filter(|b| b.is_ascii())
        .map(u8::to_ascii_lowercase)
        .collect();
    let trimmed = ascii
        .iter()
        .rposition(|b| !matches!(b, b'.' | b' '))
        .map_or(&ascii[..0], |end| &ascii[..=end]);
    trimmed != b".git" && !ascii.starts_with(b"git~")
}

/// A file or a symlink, as opposed to a directory or a nested repository.
fn is_file_kind(kind: EntryKind) -> bool {
    matches!(
        kind,
        EntryKind::Blob | EntryKind::BlobExecutable | EntryKind::Link
    )
}

#[cfg(test)]
mod tests {
    use super::super::agent_git as git;
    use super::*;
    use std::process::Command;

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

    /// What reading in process answers, and how the gate's commit went (`None`: git
    /// refused it).
    fn commit_as_now(dir: &Path, name: &str) -> (Option<FileCommit>, Option<Committed>) {
        let answer = read(dir, name).map(|r| r.answer);
        (answer, commit_alone(dir, name, "gate").ok())
    }

    /// Every file and directory of `dot_git` but its objects, with its bytes' hash (the
    /// index's left out: stat data differs between twins) and its permissions.
    fn files_of(dot_git: &Path) -> Vec<(String, String, u32)> {
        use std::os::unix::fs::PermissionsExt;
        let mut files: Vec<_> = walkdir::WalkDir::new(dot_git)
            .into_iter()
            .map(|e| e.unwrap())
            .filter(|e| {
                !e.path()
                    .strip_prefix(dot_git)
                    .unwrap()
                    .starts_with("objects")
            })
            .map(|e| {
                let rel = e.path().strip_prefix(dot_git).unwrap();
                let bytes = if e.file_type().is_file() && rel != Path::new("index") {
                    blake3::hash(&std::fs::read(e.path()).unwrap())
                        .to_hex()
                        .to_string()
                } else {
                    String::new()
                };
                let mode = e.metadata().unwrap().permissions().mode() & 0o7777;
                (rel.display().to_string(), bytes, mode)
            })
            .collect();
        files.sort();
        files
    }

    /// An agent's commit of a tree of `entries` as given, in their order, on `main`,
    /// as plumbing can make one that `git commit` never would.
    fn commit_tree_as_is(d: &Path, entries: Vec<gix::objs::tree::Entry>) {
        let mut raw = Vec::new();
        for e in &entries {
            raw.extend_from_slice(format!("{:o} ", e.mode.value()).as_bytes());
            raw.extend_from_slice(&e.filename);
            raw.push(0);
            raw.extend_from_slice(e.oid.as_slice());
        }
        let mut child = Command::new("git")
            .args(["hash-object", "-w", "-t", "tree", "--literally", "--stdin"])
            .current_dir(d)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), &raw).unwrap();
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success());
        let tree = String::from_utf8(out.stdout).unwrap().trim().to_string();
        let parent = git(d, &["rev-parse", "HEAD"]);
        let commit = git(d, &["commit-tree", "-p", &parent, "-m", "odd", &tree]);
        git(d, &["update-ref", "refs/heads/main", &commit]);
        git(d, &["read-tree", "HEAD"]);
        std::fs::write(d.join("list.json"), "new\n").unwrap();
    }

    /// The entries of `HEAD`'s tree, to build an odd one from.
    fn head_entries(d: &Path) -> Vec<gix::objs::tree::Entry> {
        let repo = gix::open(d.join(".git")).unwrap();
        let tree = repo.head_tree().unwrap();
        tree.decode()
            .unwrap()
            .entries
            .iter()
            .map(|e| gix::objs::tree::Entry {
                mode: e.mode,
                filename: e.filename.into(),
                oid: e.oid.into(),
            })
            .collect()
    }

    #[test]
    fn the_gates_commit_in_process_leaves_what_add_diff_and_commit_left() {
        use gix::objs::tree::{Entry, EntryMode};
        use std::os::unix::fs::PermissionsExt;
        type Shape = fn(&Path);
        let changed: Shape = |d| std::fs::write(d.join("list.json"), "new\n").unwrap();
        let shapes: [(&str, Shape, Option<FileCommit>, Option<Committed>); 20] = [
            (
                "unchanged",
                |_| {},
                Some(FileCommit::Nothing),
                Some(Committed::Nothing),
            ),
            (
                "changed",
                changed,
                Some(FileCommit::CommitOnly),
                Some(Committed::InProcess),
            ),
            (
                "changed after the agent's own commits (its reflogs appended to)",
                |d| {
                    std::fs::write(d.join("a.txt"), "b\n").unwrap();
                    std::fs::create_dir(d.join("src")).unwrap();
                    std::fs::write(d.join("src/x.py"), "x\n").unwrap();
                    git(d, &["add", "-A"]);
                    git(d, &["commit", "-qm", "work"]);
                    std::fs::write(d.join("list.json"), "new\n").unwrap();
                },
                Some(FileCommit::CommitOnly),
                Some(Committed::InProcess),
            ),
            (
                "refs packed, an index of version 4",
                |d| {
                    git(d, &["commit", "-q", "--allow-empty", "-m", "logged"]);
                    git(d, &["pack-refs", "--all"]);
                    git(d, &["update-index", "--index-version", "4"]);
                    assert!(!d.join(".git/refs/heads/main").exists());
                    std::fs::write(d.join("list.json"), "new\n").unwrap();
                },
                Some(FileCommit::CommitOnly),
                Some(Committed::InProcess),
            ),
            (
                "staged, never committed",
                |d| {
                    git(d, &["rm", "-q", "--cached", "list.json"]);
                    git(d, &["commit", "-qm", "gone"]);
                    git(d, &["add", "list.json"]);
                },
                Some(FileCommit::CommitOnly),
                Some(Committed::InProcess),
            ),
            (
                "staged otherwise, file as committed",
                |d| {
                    std::fs::write(d.join("list.json"), "other\n").unwrap();
                    git(d, &["add", "list.json"]);
                    std::fs::write(d.join("list.json"), "list\n").unwrap();
                },
                Some(FileCommit::AddOnly),
                Some(Committed::Nothing),
            ),
            (
                "made executable",
                |d| {
                    std::fs::set_permissions(
                        d.join("list.json"),
                        std::fs::Permissions::from_mode(0o755),
                    )
                    .unwrap();
                },
                Some(FileCommit::CommitOnly),
                Some(Committed::InProcess),
            ),
            (
                "untracked",
                |d| {
                    git(d, &["rm", "-q", "--cached", "list.json"]);
                    git(d, &["commit", "-qm", "gone"]);
                },
                None,
                Some(Committed::InProcess),
            ),
            (
                "assume-unchanged",
                |d| {
                    git(d, &["update-index", "--assume-unchanged", "list.json"]);
                    std::fs::write(d.join("list.json"), "new\n").unwrap();
                },
                None,
                Some(Committed::Nothing),
            ),
            (
                "skip-worktree",
                |d| {
                    git(d, &["update-index", "--skip-worktree", "list.json"]);
                    std::fs::write(d.join("list.json"), "new\n").unwrap();
                },
                None,
                None,
            ),
            (
                "attributes",
                |d| {
                    std::fs::write(d.join(".gitattributes"), "list.json ident\n").unwrap();
                    std::fs::write(d.join("list.json"), "$Id: x $\n").unwrap();
                },
                None,
                Some(Committed::ByGit),
            ),
            (
                "configured",
                |d| {
                    git(d, &["config", "core.filemode", "false"]);
                    std::fs::set_permissions(
                        d.join("list.json"),
                        std::fs::Permissions::from_mode(0o755),
                    )
                    .unwrap();
                },
                None,
                Some(Committed::Nothing),
            ),
            (
                "one reflog without the other",
                |d| {
                    git(d, &["commit", "-q", "--allow-empty", "-m", "logged"]);
                    std::fs::remove_file(d.join(".git/logs/HEAD")).unwrap();
                    std::fs::write(d.join("list.json"), "new\n").unwrap();
                },
                Some(FileCommit::CommitOnly),
                Some(Committed::ByGit),
            ),
            (
                "a detached HEAD",
                |d| {
                    git(d, &["checkout", "-q", "--detach"]);
                    std::fs::write(d.join("list.json"), "new\n").unwrap();
                },
                Some(FileCommit::CommitOnly),
                Some(Committed::ByGit),
            ),
            (
                "a merge under way (git refuses)",
                |d| {
                    let head = git(d, &["rev-parse", "HEAD"]);
                    std::fs::write(d.join(".git/MERGE_HEAD"), format!("{head}\n")).unwrap();
                    std::fs::write(d.join("list.json"), "new\n").unwrap();
                },
                Some(FileCommit::CommitOnly),
                None,
            ),
            (
                "a conflicted index elsewhere",
                |d| {
                    let blob = git(d, &["rev-parse", "HEAD:a.txt"]);
                    let info = format!("100644 {blob} 1\tc.txt\n100644 {blob} 2\tc.txt\n");
                    let mut cmd = Command::new("git");
                    cmd.args(["update-index", "--index-info"]).current_dir(d);
                    cmd.stdin(std::process::Stdio::piped());
                    let mut child = cmd.spawn().unwrap();
                    std::io::Write::write_all(&mut child.stdin.take().unwrap(), info.as_bytes())
                        .unwrap();
                    assert!(child.wait().unwrap().success());
                    std::fs::write(d.join("list.json"), "new\n").unwrap();
                },
                Some(FileCommit::CommitOnly),
                Some(Committed::ByGit),
            ),
            (
                "a mode git writes otherwise in HEAD's tree",
                |d| {
                    let mut entries = head_entries(d);
                    entries[0].mode = EntryMode::try_from(0o100664).unwrap();
                    commit_tree_as_is(d, entries);
                },
                Some(FileCommit::CommitOnly),
                Some(Committed::ByGit),
            ),
            (
                "an empty tree in HEAD's tree",
                |d| {
                    let repo = gix::open(d.join(".git")).unwrap();
                    let empty = repo
                        .write_object(gix::objs::Tree::empty())
                        .unwrap()
                        .detach();
                    let mut entries = head_entries(d);
                    entries.push(Entry {
                        mode: gix::objs::tree::EntryKind::Tree.into(),
                        filename: "zz".into(),
                        oid: empty,
                    });
                    commit_tree_as_is(d, entries);
                },
                Some(FileCommit::CommitOnly),
                Some(Committed::ByGit),
            ),
            (
                "HEAD's tree out of git's order",
                |d| {
                    let mut entries = head_entries(d);
                    entries.reverse();
                    commit_tree_as_is(d, entries);
                },
                Some(FileCommit::CommitOnly),
                Some(Committed::ByGit),
            ),
            (
                "a name git's index refuses in HEAD's tree",
                |d| {
                    let mut entries = head_entries(d);
                    entries[0].filename = ".GIT".into();
                    entries.sort_by(|a, b| a.filename.cmp(&b.filename));
                    commit_tree_as_is(d, entries);
                },
                Some(FileCommit::CommitOnly),
                None,
            ),
        ];
        for (what, shape, expected, expected_made) in shapes {
            let twins = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
            for d in &twins {
                std::fs::write(d.path().join("a.txt"), "a\n").unwrap();
                std::fs::write(d.path().join("list.json"), "list\n").unwrap();
                super::super::init_and_commit_all(d.path(), "start").unwrap();
                shape(d.path());
            }
            let (now, before) = (twins[0].path(), twins[1].path());
            let (answer, made) = commit_as_now(now, "list.json");
            assert_eq!((answer, made), (expected, expected_made), "{what}");
            let done = made.is_some();
            assert_eq!(
                done,
                commit_as_before(before, "list.json"),
                "{what}: went through"
            );
            // Where git refuses the commit, the three calls had staged the file first;
            // its commit alone leaves the index as it was.
            let refused = !done;
            let alike = |stage: &str| {
                for args in [
                    &["rev-parse", "HEAD"][..],
                    &["ls-files", "-s", "--debug"][..],
                    &["diff-files", "--name-status"][..],
                    &["status", "--porcelain"][..],
                    &["reflog", "show", "--format=%H %gs", "main"][..],
                ] {
                    if refused && ["ls-files", "diff-files", "status"].contains(&args[0]) {
                        continue;
                    }
                    let (a, b) = (git(now, args), git(before, args));
                    if args[0] == "ls-files" {
                        // Stat data aside (a file rewritten has a new inode): the entries.
                        let entries = |s: &str| {
                            s.lines()
                                .filter(|l| !l.starts_with("  "))
                                .map(String::from)
                                .collect::<Vec<_>>()
                        };
                        assert_eq!(entries(&a), entries(&b), "{what}, {stage}: git {args:?}");
                    } else {
                        assert_eq!(a, b, "{what}, {stage}: git {args:?}");
                    }
                }
                assert_eq!(
                    files_of(&now.join(GIT_DIR)),
                    files_of(&before.join(GIT_DIR)),
                    "{what}, {stage}: the files of .git, objects aside"
                );
            };
            alike("the gate's commit");
            if made == Some(Committed::InProcess) {
                let fsck = Command::new("git")
                    .args(["fsck", "--strict", "--no-dangling"])
                    .current_dir(now)
                    .output()
                    .unwrap();
                assert!(fsck.status.success(), "{what}: {fsck:?}");
            }
            if refused {
                continue;
            }
            // The agent's next commit: a stale tree cache in the index would give it an
            // old tree.
            for d in [now, before] {
                std::fs::write(d.join("a.txt"), "later\n").unwrap();
                git(d, &["add", "a.txt"]);
                git(d, &["commit", "-q", "-m", "later"]);
            }
            alike("the agent's next commit");
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("list.json"), "list\n").unwrap();
        super::super::init_and_commit_all(dir.path(), "start").unwrap();
        std::fs::write(dir.path().join(".git/index.lock"), "").unwrap();
        assert_eq!(
            read(dir.path(), "list.json").map(|r| r.answer),
            None,
            "a lock"
        );
    }
}
