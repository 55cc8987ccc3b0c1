//! Where each attempt at a trial keeps what its sessions left in the run directory
//! (captured output, the served model log, the CLI's HOME): the counted attempt in
//! `agents/<trial>/`, each failed one moved to `agents/<trial>/attempt-<n>/`, so that a
//! retry starts from a clean HOME and the evidence of a failure is not overwritten.

use std::ffi::OsStr;
use std::path::Path;

use crate::error::{Error, IoContext, Result};

/// A failed attempt's directory is `attempt-<n>` in `agents/<trial>/`.
pub const ATTEMPT_DIR_PREFIX: &str = "attempt-";

/// Whether a name in `agents/<trial>/` is a failed attempt's directory.
fn is_attempt_dir(name: &OsStr) -> bool {
    name.to_str().is_some_and(|n| {
        n.strip_prefix(ATTEMPT_DIR_PREFIX)
            .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
    })
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
}
