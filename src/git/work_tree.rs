//! The work directory's tree as the harness sees it, in its own object store (written
//! in process, `tree_writer.rs`; git and a throw-away index only where the clean check
//! starts from `HEAD`): the tree hash every session's evidence carries, the files of nested
//! repositories recorded as files (never as a gitlink, which would hide them), and
//! whether the tree is clean, judged against `HEAD^{tree}` with nothing of the agent's
//! index or configuration (`skip-worktree`, `assume-unchanged`,
//! `status.showUntrackedFiles`, `info/exclude`) taking part.
//!
//! Two trees are written. The tree as `git add -A` gives it (the tree's `.gitignore`
//! files honoured) says whether the tree is clean, as `git status` and an exit check of
//! the form `git diff --quiet` would. The tree the checks saw adds every git-ignored
//! file a check can read: work kept only in such files is verified but never
//! committed, so those files are listed on their own ([`WorkTree::ignored_seen`]), the
//! evidence's tree hash and the `--keep-repos` bundle hold them, and a suite may count
//! them as uncommitted work (`clean_tree = "strict"`). A file is left out of both only
//! when a `.gitignore` matches it and no check reads it (`verify_ignores`, tool caches).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{GIT_TIMEOUT, ensure_store, harness_command, output_within, run_store, store_command};
use crate::error::{Error, IoContext, Result};
use crate::fsutil::GIT_DIR;

use super::tree_writer::SeenByChecks;

/// The trees of a work directory ([`write_tree`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkTree {
    /// The tree the checks saw: what `git add -A` takes, plus every git-ignored file a
    /// check can read.
    pub seen: String,
    /// The tree as `git add -A && git write-tree` gives it in an index that starts
    /// empty (so a committed file that a `.gitignore` matches is not in it; [`is_clean`]
    /// knows).
    pub added: String,
    /// The git-ignored files a check can read, `/`-separated and relative to the work
    /// directory, in git's order.
    pub ignored_seen: Vec<String>,
    /// `added` is what `git add -A` also takes in an index that starts from a commit
    /// holding no gitlink: no `.gitignore` left a path out (so no tracked file can be
    /// kept in that the empty index left out) and nothing in the tree makes git's
    /// reading differ from the harness's (a `.gitattributes`, a nested repository).
    pub any_start_alike: bool,
}

/// The trees of `work_dir` in a throw-away index: as `git add -A && git write-tree`
/// gives it (uncommitted and untracked files count, files ignored by the tree's
/// `.gitignore` files do not), and with the ignored files that `seen` says a check can
/// read added; `.git` itself never counts. A directory below the top that holds a
/// `.git` of its own (a nested repository) is recorded with every file in it that a
/// check can read, `.git` directories left out, instead of as a gitlink. The objects go
/// to the harness's store `store` (created when missing), so that the trees can be
/// committed later ([`super::commit_tree`]) and the agent's repository is never
/// touched. An agent's `.git/info/exclude` is not its tree's and is not honoured.
pub fn write_tree(work_dir: &Path, store: &Path, seen: SeenByChecks<'_>) -> Result<WorkTree> {
    ensure_store(store)?;
    tree_in_fresh_index(work_dir, store, None, seen)
}

/// Whether the work directory holds exactly `HEAD^{tree}` of its repository as `git
/// add -A` would take it, given its trees `tree` ([`write_tree`]): the same tree, or,
/// when they differ, the same tree once the index starts from `HEAD` (so that a
/// committed file that a `.gitignore` also matches, which `git status` calls clean, is
/// clean here too). Git-ignored files do not make it false, whether a check reads them
/// or not. False when there is no commit, no tree, or git cannot tell.
pub fn is_clean(
    work_dir: &Path,
    store: &Path,
    tree: Option<&WorkTree>,
    seen: SeenByChecks<'_>,
) -> bool {
    let (Some(tree), Some(head)) = (tree, head_tree(work_dir)) else {
        return false;
    };
    if tree.added == head {
        return true;
    }
    // The index started from `HEAD` would give `added` again: three git processes
    // spared, a dirty tree's usual case.
    let same_again = tree.any_start_alike
        && super::in_process::tree_holds_gitlink(work_dir, &head) == Some(false);
    !same_again
        && tree_in_fresh_index(work_dir, store, Some(&head), seen).is_ok_and(|t| t.added == head)
}

/// `HEAD^{tree}` of the repository in `work_dir`, with replace refs ignored: read in
/// process, or by git (under its time limit) when `.git` holds a symlink or a special
/// file.
fn head_tree(work_dir: &Path) -> Option<String> {
    if !std::fs::symlink_metadata(work_dir.join(GIT_DIR)).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    match super::in_process::head_tree(work_dir) {
        super::in_process::Read::Answer(tree) => return tree,
        super::in_process::Read::AskGit => {}
    }
    let mut cmd = harness_command(work_dir, &[]);
    cmd.args(["rev-parse", "--verify", "-q", "HEAD^{tree}"]);
    let out = output_within(cmd, GIT_TIMEOUT).ok()??;
    let tree = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && !tree.is_empty()).then_some(tree)
}

/// The trees of `work_dir` in an index of the harness that starts empty, or from
/// `start` (a tree of the agent's repository, read through its object directory as an
/// alternate, read only).
fn tree_in_fresh_index(
    work_dir: &Path,
    store: &Path,
    start: Option<&str>,
    seen: SeenByChecks<'_>,
) -> Result<WorkTree> {
    if start.is_none() {
        let written = super::tree_writer::write(work_dir, store, seen)?;
        return Ok(WorkTree {
            seen: written.seen,
            added: written.added,
            ignored_seen: untracked_in_head(work_dir, written.forced)?,
            any_start_alike: !written.excluded_any && !written.unlike_git,
        });
    }
    let scratch = crate::fsutil::scratch_dir("loopbench-index-")?;
    let index = scratch.path().join("index");
    let objects = work_dir.join(GIT_DIR).join("objects");
    let command = || {
        let mut cmd = store_command(store, Some(work_dir), Some(&index));
        if start.is_some() {
            cmd.env("GIT_ALTERNATE_OBJECT_DIRECTORIES", &objects);
        }
        cmd
    };
    if let Some(tree) = start {
        let mut read = command();
        read.args(["read-tree", tree]);
        run_store("read-tree (throw-away index)", read)?;
    }
    let scan = scan(work_dir)?;
    let mut add = command();
    add.args(["add", "-A", "--", "."]);
    run_store("add -A (throw-away index)", add)?;
    if !scan.nested.is_empty() {
        record_files_of(work_dir, &scan.nested, scratch.path(), &command, seen)?;
    }
    let write = || {
        let mut write = command();
        write.arg("write-tree");
        run_store("write-tree", write)
    };
    let added = write()?;
    // Only the trees the harness keeps take the ignored files a check reads; a
    // comparison with `HEAD` needs the tree as `git add -A` gives it alone.
    let forced = if scan.has_gitignore && start.is_none() {
        add_ignored_files_checks_read(scratch.path(), &command, seen)?
    } else {
        Vec::new()
    };
    let seen = if forced.is_empty() {
        added.clone()
    } else {
        write()?
    };
    Ok(WorkTree {
        seen,
        added,
        ignored_seen: untracked_in_head(work_dir, forced)?,
        any_start_alike: false,
    })
}

/// The paths of `forced` (bytes as git lists them, and text) that `HEAD^{tree}` does not
/// hold, as text: git never ignores a tracked file, so a committed file that a
/// `.gitignore` also matches is no ignored work, though the throw-away index, which
/// starts empty, forced it in.
fn untracked_in_head(work_dir: &Path, forced: Vec<(Vec<u8>, String)>) -> Result<Vec<String>> {
    if forced.is_empty() {
        return Ok(Vec::new());
    }
    let Some(head) = head_tree(work_dir) else {
        return Ok(forced.into_iter().map(|(_, text)| text).collect());
    };
    let mut list = harness_command(work_dir, &[]);
    list.args(["ls-tree", "-r", "-z", "--name-only", &head]);
    let out = output_within(list, GIT_TIMEOUT)
        .map_err(|e| Error::Tool(format!("cannot run git (is it installed?): {e}")))?
        .ok_or_else(|| Error::Tool("git ls-tree HEAD timed out".into()))?;
    if !out.status.success() {
        return Err(Error::Tool(format!(
            "git ls-tree HEAD failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let tracked: std::collections::HashSet<&[u8]> = out.stdout.split(|b| *b == 0).collect();
    Ok(forced
        .into_iter()
        .filter(|(path, _)| !tracked.contains(path.as_slice()))
        .map(|(_, text)| text)
        .collect())
}

/// What one walk of a work directory finds for [`tree_in_fresh_index`].
struct Scan {
    /// Directories below the top that hold a `.git` entry, relative to it, outermost
    /// only.
    nested: Vec<Vec<u8>>,
    /// Some entry is named `.gitignore` (outside nested repositories), so that git may
    /// leave out files a check reads.
    has_gitignore: bool,
}

/// Adds, with `--force`, every file that a `.gitignore` of the tree kept out of the
/// index and that a check can read (`seen`); their paths as git lists them and as text.
fn add_ignored_files_checks_read(
    scratch: &Path,
    command: &dyn Fn() -> std::process::Command,
    seen: SeenByChecks<'_>,
) -> Result<Vec<(Vec<u8>, String)>> {
    let mut list = command();
    list.args([
        "ls-files",
        "-z",
        "--others",
        "--ignored",
        "--exclude-standard",
    ]);
    let out = super::output_within(list, super::GIT_TIMEOUT)
        .map_err(|e| Error::Tool(format!("cannot run git (is it installed?): {e}")))?
        .ok_or_else(|| Error::Tool("git ls-files (throw-away index) timed out".into()))?;
    if !out.status.success() {
        return Err(Error::Tool(format!(
            "git ls-files (throw-away index) failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let mut paths = Vec::new();
    let mut named = Vec::new();
    for path in out.stdout.split(|b| *b == 0) {
        // A directory (a nested repository) is recorded by its files elsewhere.
        if path.is_empty() || path.ends_with(b"/") {
            continue;
        }
        let text: Vec<_> = path
            .split(|b| *b == b'/')
            .map(|part| crate::fsutil::name_text(OsStr::from_bytes(part)).into_owned())
            .collect();
        let text = text.join("/");
        if seen(&text) {
            paths.extend_from_slice(path);
            paths.push(0);
            named.push((path.to_vec(), text));
        }
    }
    if paths.is_empty() {
        return Ok(named);
    }
    let file = scratch.join("ignored-paths");
    std::fs::write(&file, &paths).io_context(|| format!("cannot write '{}'", file.display()))?;
    let mut add = command();
    add.args(["add", "--force", "--pathspec-file-nul"])
        .arg(format!("--pathspec-from-file={}", file.display()))
        .env("GIT_LITERAL_PATHSPECS", "1");
    run_store("add --force (throw-away index)", add).map(|_| named)
}

/// Walks `work_dir` once: its nested repositories and whether it holds a `.gitignore`.
fn scan(work_dir: &Path) -> Result<Scan> {
    let mut found = Vec::new();
    let mut has_gitignore = false;
    let mut walk = walkdir::WalkDir::new(work_dir)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter();
    while let Some(entry) = walk.next() {
        let entry =
            entry.map_err(|e| Error::Tool(format!("cannot walk '{}': {e}", work_dir.display())))?;
        if entry.depth() == 1 && entry.file_name() == GIT_DIR {
            walk.skip_current_dir();
            continue;
        }
        if entry.depth() >= 1
            && entry.file_type().is_dir()
            && std::fs::symlink_metadata(entry.path().join(GIT_DIR)).is_ok()
        {
            let rel = entry.path().strip_prefix(work_dir).unwrap_or(entry.path());
            found.push(rel.as_os_str().as_bytes().to_vec());
            walk.skip_current_dir();
            continue;
        }
        has_gitignore |= entry.file_name() == ".gitignore";
    }
    Ok(Scan {
        nested: found,
        has_gitignore,
    })
}

/// Replaces the gitlinks `git add` made for the nested repositories `dirs` with every
/// file under them that a check can read (`seen`; regular files and symlinks; `.git`
/// directories left out), hashed into the store.
fn record_files_of(
    work_dir: &Path,
    dirs: &[Vec<u8>],
    scratch: &Path,
    command: &dyn Fn() -> std::process::Command,
    seen: SeenByChecks<'_>,
) -> Result<()> {
    let mut remove = command();
    remove.args(["update-index", "-q", "--force-remove", "--"]);
    for dir in dirs {
        remove.arg(OsStr::from_bytes(dir));
    }
    run_store("update-index --force-remove", remove)?;

    let entries = files_to_record(work_dir, dirs, scratch, seen)?;
    if entries.is_empty() {
        return Ok(());
    }
    let mut paths = Vec::new();
    for (_, _, source) in &entries {
        paths.extend_from_slice(source);
        paths.push(b'\n');
    }
    let ids = run_store_with_input(
        &command,
        &["hash-object", "-w", "--no-filters", "--stdin-paths"],
        &paths,
        scratch,
    )?;
    let ids: Vec<&str> = ids.lines().collect();
    if ids.len() != entries.len() {
        return Err(Error::Tool(format!(
            "git hash-object gave {} ids for {} files",
            ids.len(),
            entries.len()
        )));
    }
    let mut info = Vec::new();
    for ((mode, rel, _), id) in entries.iter().zip(ids) {
        info.extend_from_slice(format!("{mode} {id}\t").as_bytes());
        info.extend_from_slice(rel);
        info.push(b'\n');
    }
    run_store_with_input(&command, &["update-index", "--index-info"], &info, scratch).map(drop)
}

/// A file to record in the index: (mode, path relative to the work directory, what to
/// hash).
type RecordedFile = (&'static str, Vec<u8>, Vec<u8>);

/// The files under the nested repositories `dirs` that a check can read; a link's target is written to a
/// file of `scratch` to be hashed.
fn files_to_record(
    work_dir: &Path,
    dirs: &[Vec<u8>],
    scratch: &Path,
    seen: SeenByChecks<'_>,
) -> Result<Vec<RecordedFile>> {
    let mut entries: Vec<RecordedFile> = Vec::new();
    for dir in dirs {
        let root = work_dir.join(OsStr::from_bytes(dir));
        let walk = walkdir::WalkDir::new(&root)
            .follow_links(false)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.file_name() != GIT_DIR);
        for entry in walk {
            let entry =
                entry.map_err(|e| Error::Tool(format!("cannot walk '{}': {e}", root.display())))?;
            if !seen(&crate::fsutil::relative_slash_path(work_dir, entry.path())) {
                continue;
            }
            let rel = entry.path().strip_prefix(work_dir).unwrap_or(entry.path());
            let rel = rel.as_os_str().as_bytes().to_vec();
            if rel.contains(&b'\n') {
                return Err(Error::Tool(format!(
                    "a file name in the nested repository '{}' holds a newline",
                    root.display()
                )));
            }
            let ft = entry.file_type();
            if ft.is_symlink() {
                let target = std::fs::read_link(entry.path())
                    .io_context(|| format!("cannot read link '{}'", entry.path().display()))?;
                // A link's blob is its target: hashed from a file that holds it.
                let holder = scratch.join(format!("link-{}", entries.len()));
                std::fs::write(&holder, target.as_os_str().as_bytes())
                    .io_context(|| format!("cannot write '{}'", holder.display()))?;
                entries.push(("120000", rel, holder.as_os_str().as_bytes().to_vec()));
            } else if ft.is_file() {
                let executable = entry
                    .metadata()
                    .is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
                let mode = if executable { "100755" } else { "100644" };
                let source = entry.path().as_os_str().as_bytes().to_vec();
                entries.push((mode, rel, source));
            }
        }
    }
    Ok(entries)
}

/// Runs a store command with `input` on its stdin (through a file of `scratch`).
fn run_store_with_input(
    command: &dyn Fn() -> std::process::Command,
    args: &[&str],
    input: &[u8],
    scratch: &Path,
) -> Result<String> {
    let file = scratch.join("stdin");
    std::fs::write(&file, input).io_context(|| format!("cannot write '{}'", file.display()))?;
    let stdin =
        std::fs::File::open(&file).io_context(|| format!("cannot read '{}'", file.display()))?;
    let mut cmd = command();
    cmd.args(args).stdin(stdin);
    run_store(&args.join(" "), cmd)
}

#[cfg(test)]
mod tests {
    use super::super::{git, status_porcelain};
    use super::*;

    /// The agent's own git, as a session runs it.
    fn agent_git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=agent", "-c", "user.email=agent@x"])
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn repo() -> (tempfile::TempDir, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]).unwrap();
        git(dir.path(), &["add", "-A"]).unwrap();
        git(dir.path(), &["commit", "-q", "-m", "start"]).unwrap();
        (dir, tempfile::tempdir().unwrap())
    }

    fn clean(dir: &Path, store: &Path) -> bool {
        let store = store.join("trees.git");
        // As for a task whose checks never read `*.log` files (`verify_ignores`).
        let seen = |path: &str| !path.ends_with(".log");
        let tree = write_tree(dir, &store, &seen).ok();
        is_clean(dir, &store, tree.as_ref(), &seen)
    }

    #[test]
    fn uncommitted_work_that_the_agents_index_or_configuration_hides_is_not_clean() {
        let (dir, store) = repo();
        let d = dir.path();
        assert!(clean(d, store.path()));

        std::fs::write(d.join("a.txt"), "changed\n").unwrap();
        agent_git(d, &["update-index", "--skip-worktree", "a.txt"]);
        assert_eq!(
            status_porcelain(d).unwrap(),
            "",
            "the attack hides the change"
        );
        assert!(!clean(d, store.path()), "skip-worktree");
        agent_git(d, &["update-index", "--no-skip-worktree", "a.txt"]);
        agent_git(d, &["update-index", "--assume-unchanged", "a.txt"]);
        assert_eq!(status_porcelain(d).unwrap(), "");
        assert!(!clean(d, store.path()), "assume-unchanged");
        agent_git(d, &["update-index", "--no-assume-unchanged", "a.txt"]);
        agent_git(d, &["checkout", "--", "a.txt"]);
        assert!(clean(d, store.path()));

        std::fs::write(d.join("new.txt"), "untracked\n").unwrap();
        agent_git(d, &["config", "status.showUntrackedFiles", "no"]);
        assert_eq!(status_porcelain(d).unwrap(), "");
        assert!(!clean(d, store.path()), "status.showUntrackedFiles");
        agent_git(d, &["config", "--unset", "status.showUntrackedFiles"]);
        std::fs::write(d.join(".git/info/exclude"), "new.txt\n").unwrap();
        assert_eq!(status_porcelain(d).unwrap(), "");
        assert!(!clean(d, store.path()), "info/exclude");
        std::fs::remove_file(d.join(".git/info/exclude")).unwrap();
        std::fs::write(d.join(".git/excludes"), "new.txt\n").unwrap();
        let excludes = d.join(".git/excludes");
        agent_git(
            d,
            &["config", "core.excludesFile", excludes.to_str().unwrap()],
        );
        assert_eq!(status_porcelain(d).unwrap(), "");
        assert!(!clean(d, store.path()), "core.excludesFile");
    }

    #[test]
    fn a_replace_ref_does_not_stand_in_for_the_commit() {
        let (dir, store) = repo();
        let d = dir.path();
        std::fs::write(d.join("a.txt"), "uncommitted\n").unwrap();
        // A commit with the dirty tree, put in place of HEAD by a replace ref.
        let stash = tempfile::tempdir().unwrap();
        let index = stash.path().join("index");
        let index = index.to_str().unwrap();
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!(
                "GIT_INDEX_FILE={index} git add -A && GIT_INDEX_FILE={index} git write-tree"
            ))
            .current_dir(d)
            .output()
            .unwrap();
        let tree = String::from_utf8_lossy(&out.stdout).trim().to_string();
        let fake = agent_git(d, &["commit-tree", &tree, "-m", "fake"]);
        let head = agent_git(d, &["rev-parse", "HEAD"]);
        agent_git(d, &["replace", &head, &fake]);
        assert_eq!(agent_git(d, &["rev-parse", "HEAD^{tree}"]), tree);
        assert!(!clean(d, store.path()));
    }

    #[test]
    fn a_committed_file_that_a_gitignore_matches_is_clean_as_git_status_says() {
        let (dir, store) = repo();
        let d = dir.path();
        std::fs::write(d.join("build.log"), "log\n").unwrap();
        std::fs::write(d.join(".gitignore"), "*.log\n").unwrap();
        agent_git(d, &["add", "-A"]);
        agent_git(d, &["add", "-f", "build.log"]);
        agent_git(d, &["commit", "-qm", "ignored but tracked"]);
        std::fs::write(d.join("other.log"), "untracked and ignored\n").unwrap();
        assert_eq!(status_porcelain(d).unwrap(), "");
        assert!(clean(d, store.path()));
        std::fs::write(d.join("build.log"), "changed\n").unwrap();
        assert!(!clean(d, store.path()));
    }

    #[test]
    fn work_kept_in_git_ignored_files_that_a_check_reads_is_listed_and_clean_as_git_says() {
        let (dir, store) = repo();
        let d = dir.path();
        std::fs::write(d.join(".gitignore"), "ledger/\n*.log\n").unwrap();
        agent_git(d, &["add", "-A"]);
        agent_git(d, &["commit", "-qm", "ignore rules"]);
        std::fs::create_dir(d.join("ledger")).unwrap();
        std::fs::write(d.join("ledger/f1.py"), "VALUE = 1\n").unwrap();
        std::fs::write(d.join("run.log"), "noise\n").unwrap();
        assert_eq!(
            status_porcelain(d).unwrap(),
            "",
            "git status calls it clean"
        );
        let checks_read = |path: &str| !path.ends_with(".log");
        let store = store.path().join("trees.git");
        let tree = write_tree(d, &store, &checks_read).unwrap();
        assert!(
            is_clean(d, &store, Some(&tree), &checks_read),
            "clean as git status says"
        );
        assert_eq!(tree.ignored_seen, ["ledger/f1.py"], "the check reads it");
        let listing = |tree: &str| {
            let mut ls = store_command(&store, None, None);
            ls.args(["ls-tree", "-r", "--name-only", tree]);
            run_store("ls-tree", ls).unwrap()
        };
        let seen = listing(&tree.seen);
        assert!(seen.contains("ledger/f1.py"), "{seen}");
        assert!(!seen.contains("run.log"), "{seen}");
        let added = listing(&tree.added);
        assert!(!added.contains("ledger/f1.py"), "{added}");
        // Once the work is committed (forced past the .gitignore), only the log is
        // left, which no check reads: nothing ignored is seen.
        agent_git(d, &["add", "-f", "ledger/f1.py"]);
        agent_git(d, &["commit", "-qm", "f1"]);
        let tree = write_tree(d, &store, &checks_read).unwrap();
        assert!(is_clean(d, &store, Some(&tree), &checks_read));
        assert!(tree.ignored_seen.is_empty(), "git ignores no tracked file");
        // A change to the committed file is dirty, whatever the .gitignore says.
        std::fs::write(d.join("ledger/f1.py"), "VALUE = 2\n").unwrap();
        let tree = write_tree(d, &store, &checks_read).unwrap();
        assert!(!is_clean(d, &store, Some(&tree), &checks_read));
    }

    /// A shape of a work directory, made as a session would: its name and how.
    type Shape<'a> = (&'a str, Box<dyn Fn(&Path) + 'a>);

    #[test]
    fn clean_agrees_with_git_status_on_every_shape_without_local_tricks() {
        let write = |d: &Path, path: &str, text: &str| {
            let path = d.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let commit_all = |d: &Path| {
            agent_git(d, &["add", "-A"]);
            agent_git(d, &["commit", "-qm", "work"]);
        };
        let shapes: Vec<Shape<'_>> = vec![
            ("nothing changed", Box::new(|_| {})),
            (
                "a tracked file changed",
                Box::new(move |d| write(d, "a.txt", "b\n")),
            ),
            (
                "an untracked file",
                Box::new(move |d| write(d, "new.txt", "n\n")),
            ),
            (
                "a tracked file deleted",
                Box::new(|d| std::fs::remove_file(d.join("a.txt")).unwrap()),
            ),
            (
                "work committed",
                Box::new(move |d| {
                    write(d, "src/f1.txt", "done\n");
                    commit_all(d);
                }),
            ),
            (
                "an ignored scratch note and build output, the rest committed",
                Box::new(move |d| {
                    write(d, ".gitignore", "scratch/\n*.o\n");
                    commit_all(d);
                    write(d, "scratch/notes.txt", "try again\n");
                    write(d, "src/f1.o", "object\n");
                }),
            ),
            (
                "an ignored file a check reads, the .gitignore committed",
                Box::new(move |d| {
                    write(d, ".gitignore", "ledger/\n");
                    commit_all(d);
                    write(d, "ledger/f1.py", "VALUE = 1\n");
                }),
            ),
            (
                "a .gitignore not committed",
                Box::new(move |d| {
                    write(d, ".gitignore", "scratch/\n");
                    write(d, "scratch/notes.txt", "n\n");
                }),
            ),
            (
                "a .gitignore in a subdirectory",
                Box::new(move |d| {
                    write(d, "sub/.gitignore", "*.tmp\n");
                    write(d, "sub/keep.txt", "k\n");
                    commit_all(d);
                    write(d, "sub/x.tmp", "t\n");
                }),
            ),
            (
                "a negated pattern brings a file back",
                Box::new(move |d| {
                    write(d, ".gitignore", "*.log\n!keep.log\n");
                    commit_all(d);
                    write(d, "keep.log", "k\n");
                    write(d, "drop.log", "d\n");
                }),
            ),
            (
                "a committed file that a .gitignore matches, unchanged",
                Box::new(move |d| {
                    write(d, "build.log", "log\n");
                    write(d, ".gitignore", "*.log\n");
                    agent_git(d, &["add", "-A"]);
                    agent_git(d, &["add", "-f", "build.log"]);
                    agent_git(d, &["commit", "-qm", "tracked and ignored"]);
                }),
            ),
            (
                "a committed file that a .gitignore matches, changed",
                Box::new(move |d| {
                    write(d, "build.log", "log\n");
                    write(d, ".gitignore", "*.log\n");
                    agent_git(d, &["add", "-A"]);
                    agent_git(d, &["add", "-f", "build.log"]);
                    agent_git(d, &["commit", "-qm", "tracked and ignored"]);
                    write(d, "build.log", "changed\n");
                }),
            ),
            (
                "a file made executable",
                Box::new(|d| {
                    let path = d.join("a.txt");
                    let mut mode = std::fs::metadata(&path).unwrap().permissions();
                    mode.set_mode(0o755);
                    std::fs::set_permissions(path, mode).unwrap();
                }),
            ),
            (
                "a symlink added",
                Box::new(|d| std::os::unix::fs::symlink("a.txt", d.join("link")).unwrap()),
            ),
            (
                "an empty directory",
                Box::new(|d| std::fs::create_dir(d.join("empty")).unwrap()),
            ),
            (
                "a file renamed and committed",
                Box::new(move |d| {
                    agent_git(d, &["mv", "a.txt", "b.txt"]);
                    agent_git(d, &["commit", "-qm", "rename"]);
                }),
            ),
            (
                "an untracked nested repository",
                Box::new(move |d| {
                    write(d, "inner/x.txt", "x\n");
                    agent_git(&d.join("inner"), &["init", "-q"]);
                }),
            ),
            (
                // An index started from `HEAD` keeps the gitlink of an empty directory,
                // one that starts empty does not.
                "a committed gitlink whose directory is empty",
                Box::new(move |d| {
                    let gitlink = format!("160000,{},sub", "1".repeat(40));
                    agent_git(d, &["update-index", "--add", "--cacheinfo", &gitlink]);
                    agent_git(d, &["commit", "-qm", "gitlink"]);
                    std::fs::create_dir(d.join("sub")).unwrap();
                }),
            ),
        ];
        for (name, shape) in &shapes {
            let (dir, store) = repo();
            let d = dir.path();
            shape(d);
            let git_says = status_porcelain(d).unwrap();
            // As a task whose checks read everything: ignored files are read too.
            let store = store.path().join("trees.git");
            let tree = write_tree(d, &store, &|_| true).ok();
            let clean = is_clean(d, &store, tree.as_ref(), &|_| true);
            assert_eq!(
                clean,
                git_says.is_empty(),
                "{name}: the harness says clean = {clean}, git status says {git_says:?}"
            );
            // The same once git's index, started from `HEAD`, is always asked.
            let asking_git = tree.map(|tree| WorkTree {
                any_start_alike: false,
                ..tree
            });
            assert_eq!(
                is_clean(d, &store, asking_git.as_ref(), &|_| true),
                clean,
                "{name}: asking git"
            );
        }
    }

    #[test]
    fn where_git_status_reads_the_agents_index_the_harness_reads_the_work_directory() {
        // A change staged and then undone in the work directory: git status reports the
        // agent's index ("MM"), but the work directory holds HEAD's tree, which is what
        // `clean_tree` asks.
        let (dir, store) = repo();
        let d = dir.path();
        std::fs::write(d.join("a.txt"), "staged\n").unwrap();
        agent_git(d, &["add", "a.txt"]);
        std::fs::write(d.join("a.txt"), "a\n").unwrap();
        assert!(!status_porcelain(d).unwrap().is_empty());
        assert!(clean(d, store.path()));
        // A nested repository committed as a gitlink: git status compares the gitlink
        // only; the harness compares the files a check reads, which HEAD does not hold.
        let (dir, store) = repo();
        let d = dir.path();
        std::fs::create_dir(d.join("inner")).unwrap();
        std::fs::write(d.join("inner/x.txt"), "x\n").unwrap();
        agent_git(&d.join("inner"), &["init", "-q"]);
        agent_git(&d.join("inner"), &["add", "-A"]);
        agent_git(&d.join("inner"), &["commit", "-qm", "inner"]);
        agent_git(d, &["add", "-A"]);
        agent_git(d, &["commit", "-qm", "gitlink"]);
        assert_eq!(status_porcelain(d).unwrap(), "");
        assert!(!clean(d, store.path()), "stricter than git status");
    }

    #[test]
    fn a_nested_repository_is_recorded_with_its_files_not_as_a_gitlink() {
        let (dir, store) = repo();
        let d = dir.path();
        let nested = d.join("unittest");
        std::fs::create_dir_all(nested.join("deep")).unwrap();
        std::fs::write(nested.join("__main__.py"), "").unwrap();
        std::fs::write(nested.join("deep/x.py"), "x = 1\n").unwrap();
        std::os::unix::fs::symlink("deep/x.py", nested.join("link.py")).unwrap();
        agent_git(&nested, &["init", "-q"]);
        agent_git(&nested, &["add", "-A"]);
        agent_git(&nested, &["commit", "-qm", "nested"]);
        let store = store.path().join("trees.git");
        let tree = write_tree(d, &store, &|_| true).unwrap().seen;
        let mut ls = store_command(&store, None, None);
        ls.args(["ls-tree", "-r", &tree]);
        let listing = run_store("ls-tree", ls).unwrap();
        assert!(!listing.contains("160000"), "{listing}");
        for path in ["unittest/__main__.py", "unittest/deep/x.py"] {
            assert!(listing.contains("100644 blob"), "{listing}");
            assert!(listing.contains(&format!("\t{path}")), "{path}: {listing}");
        }
        assert!(listing.contains("120000 blob"), "{listing}");
        assert!(!listing.contains("unittest/.git"), "{listing}");
        // A plain tree gives what `git add -A && git write-tree` gives.
        std::fs::remove_dir_all(nested.join(".git")).unwrap();
        agent_git(d, &["add", "-A"]);
        assert_eq!(agent_git(d, &["write-tree"]), tree);
    }
}
