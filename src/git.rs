//! The harness's own git calls, hardened against the repository they look at.
//!
//! A work directory's `.git` belongs to the agent under test: it can set
//! `core.fsmonitor`, hooks, clean/smudge filters or `core.worktree`, or replace parts of
//! `.git` with symlinks, so that a harmless-looking `git status` or `git commit` of the
//! harness runs its program on the host or writes outside the work directory. So every
//! call here:
//!
//! - names the repository and work tree explicitly (`GIT_DIR`, `GIT_WORK_TREE`), so
//!   `core.worktree` and a `.git` file pointing elsewhere are never followed;
//! - starts from an empty environment and reads no system or global configuration;
//! - overrides, with command-line scope (which wins over the repository's), every
//!   setting that makes these commands execute something: fsmonitor, hooks, signing,
//!   automatic gc and maintenance, pagers, credential helpers, remote protocols, and
//!   every filter driver the repository's configuration names;
//! - refuses to write (init, add, commit) into a `.git` that is not a plain directory
//!   tree: a symlink anywhere in it could lead a write outside;
//! - has a time limit, so that a configuration that includes a FIFO cannot hang it.
//!
//! Reads and writes of the work directory that need no git process are done in the
//! harness's own process with gix (`in_process.rs`: `HEAD` and its tree;
//! `file_commit.rs`: what committing the gate's list takes, and that commit;
//! `tree_writer.rs`: the work directory's trees, written to the harness's store;
//! `first_commit.rs`: a trial's first commit, into a `.git` copied from what the
//! hardened `git init` wrote once a process), under the same rules: no configuration
//! but the repository's own, no includes, no replace refs, no filter or hook, and a
//! `.git` holding a symlink or a special file left to git and its time limit.
//!
//! Sessions themselves get [`session_env`]: the same fixed identity and a global
//! configuration file of their own trial, never a device such as `/dev/null` (which
//! `git config --global` would replace with a regular file).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use crate::error::{Error, Result};
use crate::fsutil::GIT_DIR;
use crate::process_group::Group;

mod file_commit;
mod first_commit;
mod in_process;
pub mod store_trees;
mod tree_writer;
mod work_tree;

pub use file_commit::Committed;
pub use first_commit::init_and_commit_all;
pub use work_tree::{WorkTree, is_clean, write_tree};

/// Identity of every commit made in a work directory, by harness or agent.
pub const GIT_NAME: &str = "loopbench";
/// E-mail of [`GIT_NAME`].
pub const GIT_EMAIL: &str = "loopbench@localhost";
/// Commit date of the harness's own commits, fixed so that trees hash alike across runs.
const HARNESS_COMMIT_DATE: &str = "2026-01-01T00:00:00+00:00";
/// [`HARNESS_COMMIT_DATE`] in seconds since the epoch.
const HARNESS_COMMIT_EPOCH: u64 = 1_767_225_600;
/// Longest a harness git call may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(120);

/// Settings that make status, add, commit or init run a program, switched off.
const NEUTRAL_CONFIG: &[(&str, &str)] = &[
    ("core.fsmonitor", "false"),
    ("core.useBuiltinFSMonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.askPass", ""),
    ("core.sshCommand", "false"),
    ("core.attributesFile", "/dev/null"),
    ("core.bare", "false"),
    ("core.logAllRefUpdates", "false"),
    ("core.untrackedCache", "false"),
    ("core.splitIndex", "false"),
    ("core.sparseCheckout", "false"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("diff.external", ""),
    ("diff.ignoreSubmodules", "all"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
];

/// Environment of an agent session's git: the fixed identity, no system config, the
/// trial's own global config file, and no discovery of repositories above the work
/// directory.
pub fn session_env(work_dir: &Path, global_config: &Path) -> Vec<(String, OsString)> {
    let mut env = identity();
    env.extend([
        ("GIT_CONFIG_NOSYSTEM".into(), "1".into()),
        (
            "GIT_CONFIG_GLOBAL".into(),
            global_config.as_os_str().to_owned(),
        ),
        ("GIT_CEILING_DIRECTORIES".into(), ceiling(work_dir)),
        ("GIT_TERMINAL_PROMPT".into(), "0".into()),
    ]);
    env
}

fn identity() -> Vec<(String, OsString)> {
    vec![
        ("GIT_AUTHOR_NAME".into(), GIT_NAME.into()),
        ("GIT_AUTHOR_EMAIL".into(), GIT_EMAIL.into()),
        ("GIT_COMMITTER_NAME".into(), GIT_NAME.into()),
        ("GIT_COMMITTER_EMAIL".into(), GIT_EMAIL.into()),
    ]
}

fn ceiling(work_dir: &Path) -> OsString {
    work_dir.parent().unwrap_or(work_dir).as_os_str().to_owned()
}

/// The git program, found once on the harness's `PATH`. An absolute path, because a
/// command whose environment sets `PATH` and whose program is a bare name makes the
/// standard library fork the whole harness to search it, instead of spawning without a
/// copy: with about five git calls a session, that copying was a tenth of the default
/// run's CPU time.
fn git_program() -> &'static Path {
    static GIT: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    GIT.get_or_init(|| {
        crate::sandbox::find_program("git", std::env::var_os("PATH").as_deref())
            .unwrap_or_else(|| "git".into())
    })
}

/// A git command of the harness in `work_dir`, with the hardened environment.
fn harness_command(work_dir: &Path, extra_config: &[(String, String)]) -> Command {
    let mut cmd = Command::new(git_program());
    cmd.current_dir(work_dir)
        .env_clear()
        .envs(std::env::var_os("PATH").map(|p| ("PATH", p)))
        .env("LC_ALL", "C")
        .env("GIT_DIR", work_dir.join(GIT_DIR))
        .env("GIT_WORK_TREE", work_dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_ATTR_NOSYSTEM", "1")
        .env("GIT_CEILING_DIRECTORIES", ceiling(work_dir))
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_PAGER", "cat")
        // A replace ref would let the repository answer for another commit's tree.
        .env("GIT_NO_REPLACE_OBJECTS", "1")
        .envs(identity())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // A root harness hands the work directory over to the sandbox's user; git refuses
    // a repository another user owns ("dubious ownership") unless a protected scope
    // (this command-line one) says it is safe. The harness reads it defused anyway.
    let config: Vec<(&str, &str)> = NEUTRAL_CONFIG
        .iter()
        .copied()
        .chain([("safe.directory", "*")])
        .chain(extra_config.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .collect();
    // GIT_CONFIG_COUNT/KEY/VALUE: command-line scope without `-c`'s parsing of `=`.
    cmd.env("GIT_CONFIG_COUNT", config.len().to_string());
    for (i, (key, value)) in config.iter().enumerate() {
        cmd.env(format!("GIT_CONFIG_KEY_{i}"), key)
            .env(format!("GIT_CONFIG_VALUE_{i}"), value);
    }
    cmd
}

/// Runs `cmd` to its end or until `timeout`, when its process group is killed.
fn output_within(mut cmd: Command, timeout: Duration) -> std::io::Result<Option<Output>> {
    // The child moves to the thread that reads its output; the group stays here.
    let child = cmd.spawn()?;
    let group = Group::led_by(child.id());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(out) => out.map(Some),
        Err(_) => {
            group.kill();
            // The reader thread ends once the pipes close.
            let _ = rx.recv_timeout(Duration::from_secs(5));
            Ok(None)
        }
    }
}

/// Whether the repository's own configuration could define a filter driver (system and
/// global configuration are off for the harness's git). Asking git costs a process per
/// harness command, so a config file that names no filter and includes nothing, with
/// no per-worktree config and no shared common directory, is answered here. Section
/// names are case-insensitive and cannot be escaped, so a lowercase search is enough.
fn config_may_define_filters(work_dir: &Path) -> bool {
    let git_dir = work_dir.join(GIT_DIR);
    if ["config.worktree", "commondir"]
        .iter()
        .any(|f| std::fs::symlink_metadata(git_dir.join(f)).is_ok())
    {
        return true;
    }
    match std::fs::read(git_dir.join("config")) {
        Ok(bytes) => {
            let lower = bytes.to_ascii_lowercase();
            [&b"filter"[..], b"include"]
                .iter()
                .any(|word| lower.windows(word.len()).any(|w| w == *word))
        }
        Err(e) => e.kind() != std::io::ErrorKind::NotFound,
    }
}

/// Every filter driver the repository's configuration defines, each switched off (no
/// clean, smudge or process command; not required).
fn neutral_filters(work_dir: &Path) -> Result<Vec<(String, String)>> {
    if !config_may_define_filters(work_dir) {
        return Ok(Vec::new());
    }
    let mut cmd = harness_command(work_dir, &[]);
    cmd.args([
        "config",
        "--null",
        "--name-only",
        "--get-regexp",
        r"^filter\.",
    ]);
    let out = output_within(cmd, GIT_TIMEOUT)
        .map_err(|e| Error::Tool(format!("cannot run git (is it installed?): {e}")))?
        .ok_or_else(|| Error::Tool(format!("git config timed out in '{}'", work_dir.display())))?;
    let mut names: Vec<String> = out
        .stdout
        .split(|b| *b == 0)
        .filter_map(|key| {
            let key = String::from_utf8_lossy(key);
            let rest = key.strip_prefix("filter.")?;
            let (name, _) = rest.rsplit_once('.')?;
            Some(name.to_string())
        })
        .collect();
    names.sort();
    names.dedup();
    Ok(names
        .into_iter()
        .flat_map(|name| {
            [
                (format!("filter.{name}.clean"), String::new()),
                (format!("filter.{name}.smudge"), String::new()),
                (format!("filter.{name}.process"), String::new()),
                (format!("filter.{name}.required"), "false".to_string()),
            ]
        })
        .collect())
}

/// Why the harness must not write into `work_dir/.git`: it is not a directory, or a
/// symlink inside it could lead a write outside. `None` when it is safe (or absent).
pub fn unsafe_repository(work_dir: &Path) -> Option<String> {
    let dot_git = work_dir.join(GIT_DIR);
    match std::fs::symlink_metadata(&dot_git) {
        Err(_) => return None,
        Ok(m) if !m.is_dir() => {
            return Some(format!(
                "'{GIT_DIR}' is not a directory (a symlink or a file pointing elsewhere)"
            ));
        }
        Ok(_) => {}
    }
    for entry in walkdir::WalkDir::new(&dot_git).follow_links(false) {
        let Ok(entry) = entry else {
            return Some(format!("'{GIT_DIR}' cannot be read through"));
        };
        let ft = entry.file_type();
        if !(ft.is_dir() || ft.is_file()) {
            let rel = crate::fsutil::relative_slash_path(work_dir, entry.path());
            return Some(format!("'{rel}' is not a plain file or directory"));
        }
    }
    None
}

/// Runs a writing git command (init, add, commit) of the harness in `dir`; returns
/// stdout. Refuses a repository that [`unsafe_repository`] rejects.
pub fn git(dir: &Path, args: &[&str]) -> Result<String> {
    if let Some(why) = unsafe_repository(dir) {
        return Err(Error::Tool(format!(
            "git {} refused in '{}': {why}",
            args.join(" "),
            dir.display()
        )));
    }
    let filters = if dir.join(GIT_DIR).is_dir() {
        neutral_filters(dir)?
    } else {
        Vec::new()
    };
    let mut cmd = harness_command(dir, &filters);
    cmd.args(args)
        .env("GIT_AUTHOR_DATE", HARNESS_COMMIT_DATE)
        .env("GIT_COMMITTER_DATE", HARNESS_COMMIT_DATE);
    let failed = |why: String| {
        Error::Tool(format!(
            "git {} failed in '{}': {why}",
            args.join(" "),
            dir.display()
        ))
    };
    let out = output_within(cmd, GIT_TIMEOUT)
        .map_err(|e| Error::Tool(format!("cannot run git (is it installed?): {e}")))?
        .ok_or_else(|| failed(format!("no answer within {}s", GIT_TIMEOUT.as_secs())))?;
    if !out.status.success() {
        return Err(failed(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `git status --porcelain` without taking the index lock or refreshing the index, so
/// that looking never changes the work directory. `None` when git cannot tell (no
/// repository any more, or one git refuses to read).
pub fn status_porcelain(dir: &Path) -> Option<String> {
    if !std::fs::symlink_metadata(dir.join(GIT_DIR)).is_ok_and(|m| m.is_dir()) {
        return None;
    }
    let filters = neutral_filters(dir).ok()?;
    let mut cmd = harness_command(dir, &filters);
    cmd.args(["--no-optional-locks", "status", "--porcelain"])
        .env("GIT_OPTIONAL_LOCKS", "0");
    let out = output_within(cmd, GIT_TIMEOUT).ok()??;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The commit `HEAD` names, `None` when there is none or it cannot be told. Read in
/// process; a `.git` that [`unsafe_repository`] rejects has none, as [`git`] refuses it.
pub fn head(dir: &Path) -> Option<String> {
    match in_process::head_commit(dir) {
        in_process::Read::Answer(commit) => commit,
        in_process::Read::AskGit => None,
    }
}

/// Commits the top-level file `name` of `dir` alone with the one-line `message`, as
/// `git add -- NAME`, `git diff --cached -- NAME` and, when staged, `git commit -q
/// --no-verify -m MESSAGE -- NAME` of [`git`] do; read and made in process wherever
/// that gives git's own result.
pub fn commit_file(dir: &Path, name: &str, message: &str) -> Result<Committed> {
    file_commit::commit_alone(dir, name, message)
}

/// The author and committer of the harness's commits in a work directory: [`GIT_NAME`]
/// at [`HARNESS_COMMIT_DATE`].
fn harness_signature() -> gix::actor::Signature {
    gix::actor::Signature {
        name: GIT_NAME.into(),
        email: GIT_EMAIL.into(),
        time: gix::date::Time {
            seconds: HARNESS_COMMIT_EPOCH as i64,
            offset: 0,
        },
    }
}

/// Puts the work tree and index back to `commit` and removes every file git does not
/// track, ignored ones included (`git reset --hard` + `git clean -fdx`), through the
/// hardened git. Files outside the work directory (the effects log) are not touched.
pub fn reset_hard(dir: &Path, commit: &str) -> Result<()> {
    git(dir, &["reset", "-q", "--hard", commit])?;
    git(dir, &["clean", "-q", "-f", "-d", "-x"])?;
    Ok(())
}

/// A harness git command on its own object store `store` (a bare repository that is
/// no part of any work directory), looking at `work_tree` when given. Nothing of the
/// agent's `.git` is read or written: not its config, hooks, index or objects.
fn store_command(store: &Path, work_tree: Option<&Path>, index: Option<&Path>) -> Command {
    let mut cmd = harness_command(work_tree.unwrap_or(store), &[]);
    cmd.env("GIT_DIR", store);
    if work_tree.is_none() {
        cmd.env_remove("GIT_WORK_TREE");
    }
    if let Some(index) = index {
        cmd.env("GIT_INDEX_FILE", index);
    }
    cmd
}

fn run_store(what: &str, cmd: Command) -> Result<String> {
    let failed = |why: String| Error::Tool(format!("git {what} failed: {why}"));
    let out = output_within(cmd, GIT_TIMEOUT)
        .map_err(|e| Error::Tool(format!("cannot run git (is it installed?): {e}")))?
        .ok_or_else(|| failed(format!("no answer within {}s", GIT_TIMEOUT.as_secs())))?;
    if !out.status.success() {
        return Err(failed(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn ensure_store(store: &Path) -> Result<()> {
    if store.join("HEAD").is_file() {
        return Ok(());
    }
    if first_commit::init_bare_from_template(store)? {
        return Ok(());
    }
    std::fs::create_dir_all(store)
        .map_err(|e| Error::io(format!("cannot create '{}'", store.display()), e))?;
    let mut cmd = store_command(store, None, None);
    cmd.args(["init", "-q", "--bare", "-b", "main"]);
    run_store("init", cmd).map(drop)
}

/// Who made a commit of [`commit_tree`], and when (fixed dates keep bundles alike
/// between identical runs).
pub struct CommitBy<'a> {
    /// Author and committer name.
    pub name: &'a str,
    /// Their e-mail.
    pub email: &'a str,
    /// Seconds after the harness's fixed commit date, so that commits keep their order.
    pub seconds: u64,
}

/// Commits `tree` (already in `store`) with `parent` and `message`; returns the commit.
pub fn commit_tree(
    store: &Path,
    tree: &str,
    parent: Option<&str>,
    message: &str,
    by: &CommitBy<'_>,
) -> Result<String> {
    let date = format!("@{} +0000", HARNESS_COMMIT_EPOCH + by.seconds);
    let mut cmd = store_command(store, None, None);
    cmd.arg("commit-tree").arg(tree);
    if let Some(parent) = parent {
        cmd.args(["-p", parent]);
    }
    cmd.args(["-m", message])
        .env("GIT_AUTHOR_NAME", by.name)
        .env("GIT_AUTHOR_EMAIL", by.email)
        .env("GIT_COMMITTER_NAME", by.name)
        .env("GIT_COMMITTER_EMAIL", by.email)
        .env("GIT_AUTHOR_DATE", &date)
        .env("GIT_COMMITTER_DATE", &date);
    run_store("commit-tree", cmd)
}

/// Points `main` of `store` at `commit` and writes a bundle of it to `out`.
pub fn bundle_main(store: &Path, commit: &str, out: &Path) -> Result<()> {
    let mut update = store_command(store, None, None);
    update.args(["update-ref", "refs/heads/main", commit]);
    run_store("update-ref", update)?;
    let mut bundle = store_command(store, None, None);
    bundle
        .args(["bundle", "create", "-q"])
        .arg(out)
        .args(["HEAD", "main"]);
    run_store("bundle create", bundle).map(drop)
}

/// The global git configuration file of a trial's sessions: inside `dir`, a directory
/// of the trial that sessions may write (git replaces the file through a lock file
/// beside it, so the directory must be writable, not only the file).
pub fn session_config_path(dir: &Path) -> PathBuf {
    dir.join("config")
}

/// What an agent's own git prints in `dir` (its stdout, trimmed), with the fixed
/// identity and dates of the tests: twin repositories' commits are compared by their ids.
#[cfg(test)]
fn agent_git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .envs(identity())
        .env("GIT_AUTHOR_DATE", "@0 +0000")
        .env("GIT_COMMITTER_DATE", "@0 +0000")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        git(dir.path(), &["init", "-q", "-b", "main"]).unwrap();
        git(dir.path(), &["add", "-A"]).unwrap();
        git(dir.path(), &["commit", "-q", "-m", "start"]).unwrap();
        dir
    }

    #[test]
    fn only_a_config_that_names_a_filter_or_includes_one_is_asked_about_filters() {
        let dir = repo();
        let config = dir.path().join(".git/config");
        assert!(!config_may_define_filters(dir.path()), "git init's config");
        assert!(neutral_filters(dir.path()).unwrap().is_empty());
        let plain = std::fs::read_to_string(&config).unwrap();
        for extra in [
            "[Filter \"x\"]\n\tclean = cat\n",
            "[filter.y]\n\tsmudge = cat\n",
            "[include]\n\tpath = elsewhere\n",
            "[includeIf \"gitdir:/\"]\n\tpath = elsewhere\n",
        ] {
            std::fs::write(&config, format!("{plain}{extra}")).unwrap();
            assert!(config_may_define_filters(dir.path()), "{extra}");
        }
        std::fs::write(&config, format!("{plain}[filter \"lfs\"]\n\tclean = cat\n")).unwrap();
        let filters = neutral_filters(dir.path()).unwrap();
        assert!(filters.contains(&("filter.lfs.clean".to_string(), String::new())));
        std::fs::write(&config, &plain).unwrap();
        std::fs::write(dir.path().join(".git/config.worktree"), "").unwrap();
        assert!(
            config_may_define_filters(dir.path()),
            "a per-worktree config"
        );
    }

    fn append_config(dir: &Path, text: &str) {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.join(".git/config"))
            .unwrap();
        f.write_all(text.as_bytes()).unwrap();
    }

    fn canary_script(dir: &Path, canary: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let script = dir.join("evil.sh");
        std::fs::write(
            &script,
            format!("#!/bin/sh\necho ran >> {}\ncat\n", canary.display()),
        )
        .unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        script
    }

    #[test]
    fn reset_hard_restores_the_commit_and_removes_untracked_and_ignored_files() {
        let dir = repo();
        let start = head(dir.path()).unwrap();
        std::fs::write(dir.path().join("a.txt"), "changed\n").unwrap();
        std::fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
        git(dir.path(), &["add", "-A"]).unwrap();
        git(dir.path(), &["commit", "-q", "-m", "later"]).unwrap();
        std::fs::write(dir.path().join("new.txt"), "n\n").unwrap();
        std::fs::write(dir.path().join("x.log"), "l\n").unwrap();
        reset_hard(dir.path(), &start).unwrap();
        assert_eq!(head(dir.path()).as_deref(), Some(start.as_str()));
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
            "a\n"
        );
        for gone in ["new.txt", "x.log", ".gitignore"] {
            assert!(!dir.path().join(gone).exists(), "{gone}");
        }
        assert_eq!(status_porcelain(dir.path()).as_deref(), Some(""));
    }

    #[test]
    fn status_does_not_run_a_configured_fsmonitor_or_filter() {
        let dir = repo();
        let outside = tempfile::tempdir().unwrap();
        let canary = outside.path().join("canary");
        let script = canary_script(outside.path(), &canary);
        append_config(
            dir.path(),
            &format!(
                "[core]\n\tfsmonitor = {0}\n[filter \"x\"]\n\tclean = {0}\n\tsmudge = {0}\n\trequired = true\n",
                script.display()
            ),
        );
        std::fs::write(dir.path().join(".gitattributes"), "* filter=x\n").unwrap();
        std::fs::write(dir.path().join("a.txt"), "changed\n").unwrap();
        let status = status_porcelain(dir.path()).unwrap();
        assert!(status.contains("a.txt"), "{status}");
        git(dir.path(), &["add", "-A"]).unwrap();
        git(dir.path(), &["commit", "-q", "-m", "x"]).unwrap();
        assert!(!canary.exists(), "the repository's program ran");
    }

    #[test]
    fn commit_runs_no_hook_of_the_repository() {
        use std::os::unix::fs::PermissionsExt;
        let dir = repo();
        let outside = tempfile::tempdir().unwrap();
        let canary = outside.path().join("canary");
        for hook in [
            "pre-commit",
            "post-commit",
            "commit-msg",
            "prepare-commit-msg",
        ] {
            let path = dir.path().join(".git/hooks").join(hook);
            std::fs::write(
                &path,
                format!("#!/bin/sh\necho {hook} >> {}\n", canary.display()),
            )
            .unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let hooks = outside.path().join("hooks");
        std::fs::create_dir(&hooks).unwrap();
        append_config(
            dir.path(),
            &format!(
                "[core]\n\thooksPath = {}\n",
                dir.path().join(".git/hooks").display()
            ),
        );
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        git(dir.path(), &["add", "-A"]).unwrap();
        git(dir.path(), &["commit", "-q", "-m", "b"]).unwrap();
        assert!(!canary.exists(), "a hook ran");
    }

    #[test]
    fn a_configured_work_tree_elsewhere_is_not_followed() {
        let dir = repo();
        let elsewhere = tempfile::tempdir().unwrap();
        std::fs::write(elsewhere.path().join("secret.txt"), "x\n").unwrap();
        append_config(
            dir.path(),
            &format!("[core]\n\tworktree = {}\n", elsewhere.path().display()),
        );
        let status = status_porcelain(dir.path()).unwrap();
        assert!(!status.contains("secret.txt"), "{status}");
    }

    #[test]
    fn a_symlink_inside_git_refuses_writes_and_touches_nothing_outside() {
        let dir = repo();
        let outside = tempfile::tempdir().unwrap();
        let objects = dir.path().join(".git/objects");
        let moved = outside.path().join("objects");
        std::fs::rename(&objects, &moved).unwrap();
        std::os::unix::fs::symlink(&moved, &objects).unwrap();
        let before = walkdir::WalkDir::new(&moved).into_iter().count();
        std::fs::write(dir.path().join("c.txt"), "c\n").unwrap();
        let err = git(dir.path(), &["add", "-A"]).unwrap_err();
        assert!(err.to_string().contains(".git/objects"), "{err}");
        assert_eq!(walkdir::WalkDir::new(&moved).into_iter().count(), before);
    }

    #[test]
    fn a_git_file_pointing_elsewhere_is_not_a_repository() {
        let dir = repo();
        let other = repo();
        std::fs::remove_dir_all(dir.path().join(".git")).unwrap();
        std::fs::write(
            dir.path().join(".git"),
            format!("gitdir: {}\n", other.path().join(".git").display()),
        )
        .unwrap();
        assert_eq!(status_porcelain(dir.path()), None);
        assert!(git(dir.path(), &["add", "-A"]).is_err());
    }

    #[test]
    fn write_tree_equals_git_write_tree_and_leaves_the_repository_alone() {
        let dir = repo();
        std::fs::write(dir.path().join("a.txt"), "changed\n").unwrap();
        std::fs::write(dir.path().join("new.txt"), "untracked\n").unwrap();
        std::fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(dir.path().join("noise.log"), "ignored\n").unwrap();
        let index = std::fs::read(dir.path().join(".git/index")).unwrap();
        let objects = || {
            walkdir::WalkDir::new(dir.path().join(".git/objects"))
                .into_iter()
                .count()
        };
        let objects_before = objects();
        let store = tempfile::tempdir().unwrap();
        // The checks read no `*.log` file, so the ignored one is left out, as git does.
        let seen = |path: &str| !path.ends_with(".log");
        let tree = write_tree(dir.path(), &store.path().join("trees.git"), &seen).unwrap();
        assert_eq!(tree.seen, tree.added, "no ignored file is read by a check");
        assert!(tree.ignored_seen.is_empty());
        let tree = tree.added;
        assert_eq!(std::fs::read(dir.path().join(".git/index")).unwrap(), index);
        assert_eq!(
            objects(),
            objects_before,
            "the agent's object store is not written"
        );
        assert_eq!(status_porcelain(dir.path()).unwrap().lines().count(), 3);
        git(dir.path(), &["add", "-A"]).unwrap();
        assert_eq!(git(dir.path(), &["write-tree"]).unwrap().trim(), tree);
    }

    #[test]
    fn committed_trees_bundle_into_a_clonable_history() {
        let dir = repo();
        let store = tempfile::tempdir().unwrap();
        let store = store.path().join("trees.git");
        let first = write_tree(dir.path(), &store, &|_| true).unwrap().seen;
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        let second = write_tree(dir.path(), &store, &|_| true).unwrap().seen;
        let by = |name, seconds| CommitBy {
            name,
            email: "x@loopbench",
            seconds,
        };
        let root = commit_tree(&store, &first, None, "start", &by("loopbench", 0)).unwrap();
        let next = commit_tree(&store, &second, Some(&root), "s1", &by("session-1", 1)).unwrap();
        let out = tempfile::tempdir().unwrap();
        let bundle = out.path().join("t.bundle");
        bundle_main(&store, &next, &bundle).unwrap();
        let clone = out.path().join("clone");
        let status = Command::new("git")
            .args(["clone", "-q"])
            .arg(&bundle)
            .arg(&clone)
            .status()
            .unwrap();
        assert!(status.success());
        assert_eq!(std::fs::read_to_string(clone.join("b.txt")).unwrap(), "b\n");
        let log = Command::new("git")
            .args(["log", "--format=%an"])
            .current_dir(&clone)
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&log.stdout),
            "session-1\nloopbench\n"
        );
    }

    #[test]
    fn session_env_names_a_file_of_the_trial_as_global_config() {
        let env = session_env(Path::new("/w/work"), Path::new("/w/git/config"));
        let global = env.iter().find(|(k, _)| k == "GIT_CONFIG_GLOBAL").unwrap();
        assert_eq!(global.1, OsString::from("/w/git/config"));
    }
}
