//! Every path a suite or a task names stays inside its directory: a prompt template
//! and a scripted model server's scenario inside the suite's, every file of a task
//! (`task.toml`, `repo/`, `oracle/tests`, `oracle/gold/<ID>` and all they hold) inside
//! the task's, with no `..` and no symlink on the way out. A suite may come from
//! anywhere, and the harness reads what it names as whoever runs it (root in CI): a
//! prompt is handed to the agent, a scenario is served to it, a task's `repo/` is
//! copied into its work directory and `check-task` prints what its checks say. A
//! suite's tasks and its agents' programs are its choice, like a program on `PATH`:
//! they may lie elsewhere (a shipped suite uses `../examples/tasks/latefees` and
//! `../../scripts/agents/claude.sh`); a task's own files may not.

use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result, SuiteFileError};

/// `rel` (as a suite names it) resolved inside `dir`: relative, without `..`, and
/// with no symlink on the way that leads outside `dir`. `Err` says why not.
pub(super) fn inside(dir: &Path, rel: &str) -> std::result::Result<PathBuf, String> {
    match crate::fsutil::confine(dir, rel) {
        Ok(path) => Ok(path),
        Err(Error::PathEscape { reason, .. }) => Err(reason.to_string()),
        Err(other) => Err(other.to_string()),
    }
}

/// A symlink of a task directory that leads outside it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct EscapingLink {
    /// Its path relative to the task directory, `/`-separated (`repo`, `oracle/tests`).
    pub rel: String,
    /// Where it leads.
    pub target: PathBuf,
}

/// The first symlink under `dir` (in walk order, shallowest first) whose target
/// resolves outside `dir`; a link that resolves nowhere (dangling, a loop) is judged by
/// its text. `dir` itself may be a symlink: the task is wherever it resolves.
pub(super) fn escaping_link(dir: &Path) -> Result<Option<EscapingLink>> {
    let root = std::fs::canonicalize(dir)
        .map_err(|e| Error::io(format!("cannot resolve '{}'", dir.display()), e))?;
    let walker = walkdir::WalkDir::new(&root)
        .follow_links(false)
        .sort_by_file_name()
        .min_depth(1);
    let mut links: Vec<(usize, PathBuf)> = Vec::new();
    for entry in walker {
        let entry = entry.map_err(|e| SuiteFileError::TaskDirUnreadable {
            dir: dir.to_path_buf(),
            reason: e.to_string(),
        })?;
        if entry.path_is_symlink() {
            links.push((entry.depth(), entry.path().to_path_buf()));
        }
    }
    // Shallowest first: a root (`repo`, `oracle`) is named before what lies under it.
    links.sort_by_key(|(depth, _)| *depth);
    for (_, link) in links {
        let target = match std::fs::canonicalize(&link) {
            Ok(real) => real,
            Err(_) => lexical_target(&link)?,
        };
        if !target.starts_with(&root) {
            let rel = crate::fsutil::relative_slash_path(&root, &link);
            return Ok(Some(EscapingLink { rel, target }));
        }
    }
    Ok(None)
}

/// Where the symlink `link` points by its text alone, `..` taken lexically.
fn lexical_target(link: &Path) -> Result<PathBuf> {
    let text = std::fs::read_link(link)
        .map_err(|e| Error::io(format!("cannot read link '{}'", link.display()), e))?;
    let joined = link.parent().unwrap_or(Path::new("/")).join(text);
    let mut clean = PathBuf::from("/");
    for component in joined.components() {
        match component {
            Component::ParentDir => {
                clean.pop();
            }
            Component::Normal(part) => clean.push(part),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Ok(clean)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_path_inside_is_resolved_and_a_climb_an_absolute_path_or_a_link_out_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("suite");
        std::fs::create_dir_all(dir.join("prompts")).unwrap();
        std::fs::write(dir.join("prompts/a.md"), "a").unwrap();
        std::fs::write(tmp.path().join("secret"), "s").unwrap();
        symlink("a.md", dir.join("prompts/inside.md")).unwrap();
        symlink(tmp.path().join("secret"), dir.join("prompts/out.md")).unwrap();
        symlink(tmp.path(), dir.join("up")).unwrap();
        let canon = std::fs::canonicalize(&dir).unwrap();
        assert_eq!(inside(&dir, "prompts/a.md"), Ok(canon.join("prompts/a.md")));
        assert!(inside(&dir, "prompts/inside.md").is_ok());
        // Absent files resolve (their reading says they are missing).
        assert!(inside(&dir, "prompts/missing.md").is_ok());
        for (rel, why) in [
            ("../secret", "'..'"),
            ("prompts/../../secret", "'..'"),
            ("/etc/passwd", "absolute"),
            ("prompts/out.md", "outside"),
            ("up/secret", "outside"),
        ] {
            let err = inside(&dir, rel).unwrap_err();
            assert!(err.contains(why), "{rel}: {err}");
        }
    }

    #[test]
    fn a_task_link_out_is_found_shallowest_first_and_links_inside_are_fine() {
        let tmp = tempfile::tempdir().unwrap();
        let task = tmp.path().join("task");
        std::fs::create_dir_all(task.join("repo/src")).unwrap();
        std::fs::create_dir_all(task.join("real-oracle/tests")).unwrap();
        std::fs::create_dir_all(tmp.path().join("host/tests")).unwrap();
        symlink("real-oracle", task.join("oracle")).unwrap();
        symlink("../README", task.join("repo/src/readme")).unwrap();
        symlink("missing-but-inside", task.join("repo/dangling")).unwrap();
        assert_eq!(escaping_link(&task).unwrap(), None);
        // A dangling link is judged by its text.
        symlink("../../../nowhere", task.join("repo/src/up")).unwrap();
        let found = escaping_link(&task).unwrap().unwrap();
        assert_eq!(found.rel, "repo/src/up");
        // A root leading out is named before what lies deeper.
        std::fs::remove_dir(task.join("real-oracle/tests")).unwrap();
        symlink(
            tmp.path().join("host/tests"),
            task.join("real-oracle/tests"),
        )
        .unwrap();
        let found = escaping_link(&task).unwrap().unwrap();
        assert_eq!(found.rel, "real-oracle/tests");
        assert_eq!(
            found.target,
            std::fs::canonicalize(tmp.path().join("host/tests")).unwrap()
        );
    }
}
