//! Where each attempt at a trial keeps what its sessions left in the run directory
//! (captured output, the served model log, the CLI's HOME): the counted attempt in
//! `agents/<trial>/`, each failed one moved to `agents/<trial>/attempt-<n>/`, so that a
//! retry starts from a clean HOME and the evidence of a failure is not overwritten; a
//! session that failed outside the agent and runs again in place keeps its captures in
//! `agents/<trial>/attempt-<n>-session-<s>-<k>/`.

use std::ffi::OsStr;
use std::path::Path;

use crate::error::{Error, IoContext, Result};

/// A failed attempt's directory is `attempt-<n>` in `agents/<trial>/`.
pub const ATTEMPT_DIR_PREFIX: &str = "attempt-";

/// Whether a name in `agents/<trial>/` is a failed attempt's directory, or a failed
/// session's (`attempt-<n>-session-<s>-<k>`).
fn is_attempt_dir(name: &OsStr) -> bool {
    let number = |k: &str| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit());
    name.to_str().is_some_and(|n| {
        n.strip_prefix(ATTEMPT_DIR_PREFIX).is_some_and(|rest| {
            number(rest)
                || rest.split_once("-session-").is_some_and(|(a, s)| {
                    number(a)
                        && s.split_once('-')
                            .is_some_and(|(s, k)| number(s) && number(k))
                })
        })
    })
}

/// Moves what session `session` of attempt `attempt` left in `dir` (its
/// `session-<session>.*` captures) to `dir/attempt-<attempt>-session-<session>-<again>/`,
/// before it runs again; returns that directory's name, `None` when it left nothing.
pub fn archive_session(
    dir: &Path,
    attempt: u32,
    session: u32,
    again: u32,
) -> Result<Option<String>> {
    let prefix = format!("session-{session}.");
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(format!("cannot read '{}'", dir.display()), e)),
    };
    let name = format!("{ATTEMPT_DIR_PREFIX}{attempt}-session-{session}-{again}");
    let dest = dir.join(&name);
    let context = || format!("cannot put session {session} aside in '{}'", dest.display());
    let mut moved = false;
    for entry in entries {
        let entry = entry.io_context(context)?;
        if !entry.file_name().to_string_lossy().starts_with(&prefix) {
            continue;
        }
        if !moved {
            if std::fs::symlink_metadata(&dest).is_ok() {
                std::fs::remove_dir_all(&dest).io_context(context)?;
            }
            std::fs::create_dir(&dest).io_context(context)?;
            moved = true;
        }
        std::fs::rename(entry.path(), dest.join(entry.file_name())).io_context(context)?;
    }
    Ok(moved.then_some(name))
}

/// Moves what attempt `attempt` left in `dir` (all but earlier attempts' directories)
/// to `dir/attempt-<attempt>/`; returns that directory's name, `None` when the attempt
/// left nothing.
pub fn archive(dir: &Path, attempt: u32) -> Result<Option<String>> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let name = format!("{ATTEMPT_DIR_PREFIX}{attempt}");
    let dest = dir.join(&name);
    let context = || format!("cannot put attempt {attempt} aside in '{}'", dest.display());
    if std::fs::symlink_metadata(&dest).is_ok() {
        // Left by a process that stopped before it recorded this attempt.
        std::fs::remove_dir_all(&dest).io_context(context)?;
    }
    std::fs::create_dir(&dest).io_context(context)?;
    for entry in std::fs::read_dir(dir).io_context(context)? {
        let entry = entry.io_context(context)?;
        if is_attempt_dir(&entry.file_name()) {
            continue;
        }
        std::fs::rename(entry.path(), dest.join(entry.file_name())).io_context(context)?;
    }
    Ok(Some(name))
}

/// Removes what an attempt that was cut off (the harness stopped before it was recorded
/// or put aside) left in `dir`, so that this attempt starts from a clean HOME and
/// captures of its own; failed attempts' directories stay.
pub fn clear_unrecorded(dir: &Path) -> Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::io(format!("cannot read '{}'", dir.display()), e)),
    };
    for entry in entries {
        let entry = entry.io_context(|| format!("cannot read '{}'", dir.display()))?;
        if is_attempt_dir(&entry.file_name()) {
            continue;
        }
        let path = entry.path();
        let removed = match entry.file_type() {
            Ok(t) if t.is_dir() => std::fs::remove_dir_all(&path),
            _ => std::fs::remove_file(&path),
        };
        removed.io_context(|| format!("cannot remove '{}'", path.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failed_attempt_is_put_aside_whole_and_leftovers_of_a_cut_off_one_are_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("home/.claude")).unwrap();
        std::fs::write(d.join("session-1.stdout"), "first").unwrap();
        assert_eq!(archive(d, 1).unwrap().as_deref(), Some("attempt-1"));
        assert_eq!(
            std::fs::read_to_string(d.join("attempt-1/session-1.stdout")).unwrap(),
            "first"
        );
        assert!(d.join("attempt-1/home/.claude").is_dir());
        std::fs::write(d.join("session-1.stdout"), "second").unwrap();
        assert_eq!(archive(d, 2).unwrap().as_deref(), Some("attempt-2"));
        assert!(
            !d.join("attempt-2/attempt-1").exists(),
            "earlier attempts stay put"
        );
        std::fs::create_dir_all(d.join("home")).unwrap();
        std::fs::write(d.join("session-1.stderr"), "cut off").unwrap();
        std::fs::create_dir_all(d.join("attempt-x")).unwrap();
        clear_unrecorded(d).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["attempt-1", "attempt-2"]);
        assert_eq!(archive(&d.join("missing"), 1).unwrap(), None);
    }

    #[test]
    fn a_failed_session_is_put_aside_alone_and_kept_through_the_attempts_moves() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("home")).unwrap();
        for name in ["session-1.stdout", "session-2.stdout", "session-2.stderr"] {
            std::fs::write(d.join(name), name).unwrap();
        }
        let name = archive_session(d, 1, 2, 1).unwrap().unwrap();
        assert_eq!(name, "attempt-1-session-2-1");
        let mut put: Vec<String> = std::fs::read_dir(d.join(&name))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        put.sort();
        assert_eq!(put, ["session-2.stderr", "session-2.stdout"]);
        assert!(d.join("session-1.stdout").exists() && d.join("home").is_dir());
        assert_eq!(
            archive_session(d, 1, 3, 1).unwrap(),
            None,
            "nothing to put aside"
        );
        // A later failed attempt and a cut-off one leave the session's directory alone.
        assert_eq!(archive(d, 1).unwrap().as_deref(), Some("attempt-1"));
        assert!(d.join(&name).is_dir());
        clear_unrecorded(d).unwrap();
        assert!(d.join(&name).is_dir());
    }
}
