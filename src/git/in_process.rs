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
    fn a_damaged_repository_has_no_head_in_process_as_for_git() {
        let dir = repo();
        let d = dir.path();
        let commit = git(d, &["rev-parse", "HEAD"]);
        let object = d.join(".git/objects").join(&commit[..2]).join(&commit[2..]);
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
