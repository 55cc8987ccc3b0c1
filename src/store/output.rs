//! Where a command may write: a path the user names as an output must be a regular
//! file (or a directory, for `--out DIR`) or not exist yet, so that no command replaces
//! a device, a FIFO or a socket; and a new run goes only into a new or empty directory.

use std::path::Path;

use super::lock::{RunLock, busy};

use crate::error::{Error, IoContext, Result, ResultsDirError};
use crate::run_dir::{LOCK_FILE, MANIFEST, SESSIONS_JSONL, TRIALS_JSONL};

/// Refuses `dir` as an output directory when it exists and is not a directory. Exit 2,
/// naming the path.
pub fn check_output_dir(dir: &Path) -> Result<()> {
    match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => Ok(()),
        Ok(meta) => Err(ResultsDirError::OutIsNotADirectory {
            dir: dir.to_path_buf(),
            kind: crate::fsutil::file_kind(meta.file_type()).to_string(),
        }
        .into()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(format!("cannot read '{}'", dir.display()), e)),
    }
}

/// Makes `dir` the results directory of a new run (`run`, `replay`, `merge --out`) and
/// locks it. `dir` must not exist or be empty: results already there are refused
/// (`resume` continues them), and so is anything else (a user's notes, a stray
/// summary), which is never overwritten. The check is repeated under the lock, so two
/// processes given the same directory cannot both start.
pub fn claim_new_run_dir(dir: &Path) -> Result<RunLock> {
    check_output_dir(dir)?;
    if dir.exists() {
        refuse_unless_empty(dir)?;
    }
    std::fs::create_dir_all(dir)
        .io_context(|| format!("cannot create results directory '{}'", dir.display()))?;
    let lock = RunLock::acquire(dir)?;
    refuse_unless_empty(dir)?;
    Ok(lock)
}

/// Refuses a directory that holds anything but the lock file.
fn refuse_unless_empty(dir: &Path) -> Result<()> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .io_context(|| format!("cannot list '{}'", dir.display()))?
        .map(|entry| entry.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<std::io::Result<_>>()
        .io_context(|| format!("cannot list '{}'", dir.display()))?;
    names.retain(|n| n != LOCK_FILE);
    if names.is_empty() {
        return Ok(());
    }
    if [MANIFEST, SESSIONS_JSONL, TRIALS_JSONL]
        .iter()
        .any(|r| names.iter().any(|n| n == r))
    {
        if RunLock::is_held(dir) {
            return Err(busy(dir));
        }
        return Err(ResultsDirError::HoldsResults {
            dir: dir.to_path_buf(),
        }
        .into());
    }
    names.sort();
    let shown = names
        .iter()
        .take(2)
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ");
    let more = match names.len() {
        0..=2 => String::new(),
        n => format!(" and {} more", n - 2),
    };
    Err(ResultsDirError::NotEmpty {
        dir: dir.to_path_buf(),
        holds: format!("{shown}{more}"),
    }
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fsutil::check_output_file;

    #[test]
    fn a_device_is_not_an_output_file_or_directory() {
        let err = check_output_file(Path::new("/dev/null")).unwrap_err();
        assert_eq!(err.exit_code(), crate::exit_code::BAD_INPUT);
        assert!(
            err.to_string()
                .contains("'/dev/null' is not a regular file"),
            "{err}"
        );
        assert!(err.to_string().contains("character device"), "{err}");
        let err = check_output_dir(Path::new("/dev/null")).unwrap_err();
        assert!(
            matches!(
                &err,
                Error::ResultsDir(ResultsDirError::OutIsNotADirectory { dir, kind })
                    if dir == Path::new("/dev/null") && kind.contains("character device")
            ),
            "{err:?}"
        );
    }

    #[test]
    fn a_missing_path_or_a_regular_file_may_be_written() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("trace.jsonl");
        check_output_file(&file).unwrap();
        std::fs::write(&file, "").unwrap();
        check_output_file(&file).unwrap();
        check_output_dir(&dir.path().join("new")).unwrap();
        check_output_dir(dir.path()).unwrap();
    }

    #[test]
    fn an_empty_directory_is_claimed_and_an_unrelated_one_refused_naming_two_files() {
        let root = tempfile::tempdir().unwrap();
        let empty = root.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        drop(claim_new_run_dir(&empty).unwrap());
        let mine = root.path().join("mine");
        std::fs::create_dir(&mine).unwrap();
        for name in ["notes.md", "summary.md", "todo.txt"] {
            std::fs::write(mine.join(name), "mine\n").unwrap();
        }
        let err = claim_new_run_dir(&mine).unwrap_err();
        assert!(
            matches!(
                &err,
                Error::ResultsDir(ResultsDirError::NotEmpty { dir, holds })
                    if dir == &mine && holds == "'notes.md', 'summary.md' and 1 more"
            ),
            "{err:?}"
        );
        std::fs::write(mine.join("manifest.json"), "{}").unwrap();
        let err = claim_new_run_dir(&mine).unwrap_err();
        assert!(
            matches!(
                &err,
                Error::ResultsDir(ResultsDirError::HoldsResults { dir }) if dir == &mine
            ),
            "{err:?}"
        );
        assert!(
            !crate::run_dir::RunDir::new(&mine).lock().exists(),
            "nothing is written into it"
        );
    }
}
