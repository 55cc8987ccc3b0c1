//! A trial's repository and the harness's object store started with one git process a
//! trial instead of four: `git init` is run once a process, by the hardened git, into a
//! template that every new `.git` is copied from (so each holds the bytes `git init`
//! writes: config, `HEAD`, hooks' samples, `info/exclude`), and the first commit is
//! written in process (its tree by `tree_writer.rs`, the commit object with the
//! harness's identity and fixed date, `refs/heads/main`). The one process left is `git
//! add -A`, which writes the agent's index as the first commit left it before.
//!
//! Where the tree written in process could differ from the one `git add -A` takes (a
//! `.gitattributes` that may ask for a conversion, a nested repository, a message git
//! would clean up, a `.git` already there), the commit is left to git as before, so the
//! first commit is byte for byte the one git makes.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{git, run_store, store_command};
use crate::error::{Error, IoContext, Result};
use crate::fsutil::GIT_DIR;

/// A template made once a process: its scratch directory and the repository in it.
type Template = OnceLock<Option<(tempfile::TempDir, PathBuf)>>;

/// What `git init` writes, made once a process: a work directory's `.git`, and a bare
/// store.
static WORK_TEMPLATE: Template = OnceLock::new();
static BARE_TEMPLATE: Template = OnceLock::new();

/// The repository `init` writes into a fresh scratch directory (`None` when it fails,
/// and each caller then runs git itself), made at the first call of the process.
fn made_once(
    template: &'static Template,
    init: impl FnOnce(&Path) -> Result<PathBuf>,
) -> Option<&'static Path> {
    template
        .get_or_init(|| {
            let dir = crate::fsutil::scratch_dir("loopbench-git-template-").ok()?;
            let repo = init(dir.path()).ok()?;
            Some((dir, repo))
        })
        .as_ref()
        .map(|(_, repo)| repo.as_path())
}

/// The `.git` that `git init -q -b main` of the harness writes.
pub(super) fn work_template() -> Option<&'static Path> {
    made_once(&WORK_TEMPLATE, |dir| {
        git(dir, &["init", "-q", "-b", "main"])?;
        Ok(dir.join(GIT_DIR))
    })
}

/// The bare repository `git init -q --bare -b main` of the harness writes.
fn bare_template() -> Option<&'static Path> {
    made_once(&BARE_TEMPLATE, |dir| {
        let store = dir.join("store.git");
        std::fs::create_dir(&store)
            .io_context(|| format!("cannot create '{}'", store.display()))?;
        let mut cmd = store_command(&store, None, None);
        cmd.args(["init", "-q", "--bare", "-b", "main"]);
        run_store("init", cmd)?;
        Ok(store)
    })
}

/// Makes the harness's object store `store` (a bare repository) as `git init -q --bare
/// -b main` does, by copying the process's template; false when there is none.
pub(super) fn init_bare_from_template(store: &Path) -> Result<bool> {
    let Some(template) = bare_template() else {
        return Ok(false);
    };
    crate::fsutil::copy_tree(template, store, false)?;
    Ok(true)
}

/// `git init`, `git add -A` and a first commit of everything with `message`, as
/// [`super::git`] would make them; the `.git` copied from the template and the commit
/// written in process where that gives git's own commit, else git's three calls.
pub fn init_and_commit_all(work_dir: &Path, message: &str) -> Result<()> {
    let dot_git = work_dir.join(GIT_DIR);
    let plain_message = !message.is_empty()
        && !message.contains('\n')
        && message.trim() == message
        && !message.starts_with('#');
    let template = work_template().filter(|_| plain_message);
    let (Some(template), false) = (template, std::fs::symlink_metadata(&dot_git).is_ok()) else {
        return with_git(work_dir, message);
    };
    crate::fsutil::copy_tree(template, &dot_git, false)?;
    let written = super::tree_writer::write(work_dir, &dot_git, &|_| false);
    match written {
        Ok(w) if !w.unlike_git => {
            git(work_dir, &["add", "-A"])?;
            commit_first(&dot_git, &w.added, message)
        }
        // Git's own reading (or its own refusal) decides: start again with git alone.
        _ => {
            std::fs::remove_dir_all(&dot_git)
                .io_context(|| format!("cannot remove '{}'", dot_git.display()))?;
            with_git(work_dir, message)
        }
    }
}

/// The three git calls the in-process start stands for.
fn with_git(work_dir: &Path, message: &str) -> Result<()> {
    git(work_dir, &["init", "-q", "-b", "main"])?;
    git(work_dir, &["add", "-A"])?;
    git(
        work_dir,
        &[
            "commit",
            "-q",
            "--allow-empty",
            "--no-verify",
            "-m",
            message,
        ],
    )
    .map(drop)
}

/// Writes the root commit of `tree` with the harness's identity and date and `message`
/// (as `git commit -m` stores a one-line message: with a newline) into `dot_git`, and
/// points `refs/heads/main` (which the template's `HEAD` names) at it, leaving the
/// message in `COMMIT_EDITMSG` as git does. No reflog: the harness's git commits with
/// `core.logAllRefUpdates` off.
fn commit_first(dot_git: &Path, tree: &str, message: &str) -> Result<()> {
    let repo = gix::open_opts(dot_git, gix::open::Options::isolated())
        .map_err(|e| Error::Tool(format!("cannot open '{}': {e}", dot_git.display())))?;
    let tree = gix::ObjectId::from_hex(tree.as_bytes())
        .map_err(|e| Error::Tool(format!("not a tree id '{tree}': {e}")))?;
    let signature = super::harness_signature();
    let commit = gix::objs::Commit {
        tree,
        parents: Default::default(),
        author: signature.clone(),
        committer: signature,
        encoding: None,
        message: format!("{message}\n").as_str().into(),
        extra_headers: Vec::new(),
    };
    let id = repo
        .write_object(&commit)
        .map_err(|e| Error::Tool(format!("cannot write the first commit: {e}")))?;
    let edit_message = dot_git.join("COMMIT_EDITMSG");
    std::fs::write(&edit_message, format!("{message}\n"))
        .io_context(|| format!("cannot write '{}'", edit_message.display()))?;
    let main = dot_git.join("refs/heads/main");
    crate::fsutil::write_atomic(&main, format!("{id}\n").as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git_says(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_DATE", "@0 +0000")
            .env("GIT_COMMITTER_DATE", "@0 +0000")
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn files_of(dot_git: &Path) -> Vec<(String, String, u32)> {
        use std::os::unix::fs::PermissionsExt;
        let mut files: Vec<_> = walkdir::WalkDir::new(dot_git)
            .into_iter()
            .map(|e| e.unwrap())
            .filter(|e| {
                let rel = e.path().strip_prefix(dot_git).unwrap();
                !rel.starts_with("objects") && rel != Path::new("index")
            })
            .map(|e| {
                let rel = e
                    .path()
                    .strip_prefix(dot_git)
                    .unwrap()
                    .display()
                    .to_string();
                let bytes = if e.file_type().is_file() {
                    blake3::hash(&std::fs::read(e.path()).unwrap())
                        .to_hex()
                        .to_string()
                } else {
                    String::new()
                };
                (
                    rel,
                    bytes,
                    e.metadata().unwrap().permissions().mode() & 0o7777,
                )
            })
            .collect();
        files.sort();
        files
    }

    /// A task-like tree: files, an executable, a symlink, an ignored file, a subdirectory.
    fn shaped(dir: &Path) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::create_dir_all(dir.join("src/deep")).unwrap();
        std::fs::write(dir.join("a.txt"), "a\n").unwrap();
        std::fs::write(dir.join("src/deep/b.py"), "b\n").unwrap();
        std::fs::write(dir.join("run.sh"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(dir.join("run.sh"), std::fs::Permissions::from_mode(0o755))
            .unwrap();
        std::os::unix::fs::symlink("a.txt", dir.join("link")).unwrap();
        std::fs::write(dir.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(dir.join("x.log"), "ignored\n").unwrap();
        std::fs::create_dir(dir.join("empty")).unwrap();
    }

    #[test]
    fn the_first_commit_made_in_process_is_the_one_git_makes_and_the_tree_is_clean() {
        let ours = tempfile::tempdir().unwrap();
        let theirs = tempfile::tempdir().unwrap();
        shaped(ours.path());
        shaped(theirs.path());
        let message = "loopbench: start task todo";
        init_and_commit_all(ours.path(), message).unwrap();
        with_git(theirs.path(), message).unwrap();
        let head = |d: &Path| git_says(d, &["rev-parse", "HEAD"]);
        assert_eq!(head(ours.path()), head(theirs.path()), "the same commit");
        assert_eq!(
            files_of(&ours.path().join(GIT_DIR)),
            files_of(&theirs.path().join(GIT_DIR)),
            "the same files in .git, objects and index aside"
        );
        assert_eq!(git_says(ours.path(), &["status", "--porcelain"]), "");
        assert_eq!(
            git_says(ours.path(), &["ls-files", "-s"]),
            git_says(theirs.path(), &["ls-files", "-s"]),
            "the same index"
        );
        git_says(ours.path(), &["fsck", "--strict"]);
    }

    #[test]
    fn attributes_or_a_nested_repository_leave_the_first_commit_to_git() {
        for extra in ["attributes", "nested"] {
            let ours = tempfile::tempdir().unwrap();
            let theirs = tempfile::tempdir().unwrap();
            for d in [ours.path(), theirs.path()] {
                shaped(d);
                match extra {
                    "attributes" => {
                        std::fs::write(d.join(".gitattributes"), "*.txt text eol=crlf\n").unwrap();
                        std::fs::write(d.join("c.txt"), "crlf\r\n").unwrap();
                    }
                    _ => {
                        std::fs::create_dir(d.join("inner")).unwrap();
                        let inner = d.join("inner");
                        git_says(&inner, &["init", "-q"]);
                        std::fs::write(inner.join("f"), "f\n").unwrap();
                        git_says(&inner, &["add", "f"]);
                        git_says(
                            &inner,
                            &[
                                "-c",
                                "user.name=a",
                                "-c",
                                "user.email=b",
                                "commit",
                                "-qm",
                                "f",
                            ],
                        );
                    }
                }
            }
            init_and_commit_all(ours.path(), "start").unwrap();
            with_git(theirs.path(), "start").unwrap();
            let head = |d: &Path| git_says(d, &["rev-parse", "HEAD"]);
            assert_eq!(head(ours.path()), head(theirs.path()), "{extra}");
        }
    }

    #[test]
    fn the_store_copied_from_the_template_is_what_git_init_bare_writes() {
        let dir = tempfile::tempdir().unwrap();
        let ours = dir.path().join("ours.git");
        let theirs = dir.path().join("theirs.git");
        assert!(init_bare_from_template(&ours).unwrap());
        std::fs::create_dir(&theirs).unwrap();
        let mut cmd = store_command(&theirs, None, None);
        cmd.args(["init", "-q", "--bare", "-b", "main"]);
        run_store("init", cmd).unwrap();
        assert_eq!(files_of(&ours), files_of(&theirs));
    }
}
