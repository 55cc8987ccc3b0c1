//! The write lock of a results directory: one loopbench process at a time may write a
//! run (`run`, `resume`, `merge --out`, `report`, `replay`), so that a second writer
//! cannot replace the records a live run is appending to, or add its trials twice.
//!
//! The lock is advisory (`flock` on a file in the directory) and is held by an open
//! file, so the kernel releases it when the process ends, however it ends (`kill -9`
//! included): a crashed run never leaves a directory locked.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::{Error, IoContext, Result, ResultsDirError};
use crate::run_dir::RunDir;

/// An exclusive write lock on one results directory, held until it is dropped.
#[derive(Debug)]
pub struct RunLock {
    dir: RunDir,
    // Never read: holding the open file is what holds the lock.
    _file: File,
}

impl RunLock {
    /// Locks `dir`, which must be an existing directory, for this process. A directory
    /// another loopbench process is writing is refused with [`Error::BadInput`] (exit 2)
    /// naming it.
    pub fn acquire(dir: &Path) -> Result<RunLock> {
        match std::fs::metadata(dir) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => {
                return Err(ResultsDirError::NotADirectory {
                    dir: dir.to_path_buf(),
                }
                .into());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ResultsDirError::Missing {
                    dir: dir.to_path_buf(),
                }
                .into());
            }
            Err(e) => {
                return Err(Error::io(format!("cannot read '{}'", dir.display()), e));
            }
        }
        let run_dir = RunDir::new(dir);
        let path = run_dir.lock();
        let mut file = open_lock_file(&path, true)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Err(busy(dir)),
            Err(TryLockError::Error(e)) => {
                return Err(Error::io(format!("cannot lock '{}'", path.display()), e));
            }
        }
        // The holder's pid, only to name it in a refusal; the lock itself is the flock.
        file.set_len(0)
            .and_then(|()| writeln!(file, "{}", std::process::id()))
            .io_context(|| format!("cannot write '{}'", path.display()))?;
        Ok(RunLock {
            dir: run_dir,
            _file: file,
        })
    }

    /// Whether another process holds the lock of `dir` now; writes nothing.
    pub fn is_held(dir: &Path) -> bool {
        let Ok(file) = open_lock_file(&RunDir::new(dir).lock(), false) else {
            return false;
        };
        matches!(file.try_lock(), Err(TryLockError::WouldBlock))
    }

    /// The locked directory.
    pub fn dir(&self) -> &RunDir {
        &self.dir
    }
}

/// The refusal of a second writer of `dir`.
pub(crate) fn busy(dir: &Path) -> Error {
    let holder = std::fs::read_to_string(RunDir::new(dir).lock())
        .ok()
        .and_then(|text| text.trim().parse::<u32>().ok());
    ResultsDirError::Locked {
        dir: dir.to_path_buf(),
        holder,
    }
    .into()
}

/// Opens the lock file without following a symlink (a link planted in the directory
/// must not make loopbench truncate the file it points to) and without blocking on a
/// FIFO; anything but a regular file is refused.
fn open_lock_file(path: &Path, create: bool) -> Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(create)
        .create(create)
        .truncate(false)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK | nix::libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(nix::libc::ELOOP) => not_regular(path),
            _ => Error::io(format!("cannot open '{}'", path.display()), e),
        })?;
    let meta = file
        .metadata()
        .io_context(|| format!("cannot read '{}'", path.display()))?;
    if !meta.is_file() {
        return Err(not_regular(path));
    }
    Ok(file)
}

fn not_regular(path: &Path) -> Error {
    ResultsDirError::LockIsNotAFile {
        path: path.to_path_buf(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_directory_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let first = RunLock::acquire(dir.path()).unwrap();
        let err = RunLock::acquire(dir.path()).unwrap_err();
        assert_eq!(err.exit_code(), crate::exit_code::BAD_INPUT);
        assert!(
            matches!(
                &err,
                Error::ResultsDir(ResultsDirError::Locked { dir: locked, holder })
                    if locked == dir.path() && *holder == Some(std::process::id())
            ),
            "{err:?}"
        );
        assert!(RunLock::is_held(dir.path()));
        drop(first);
        assert!(!RunLock::is_held(dir.path()));
        RunLock::acquire(dir.path()).unwrap();
    }

    #[test]
    fn a_missing_directory_is_bad_input_and_not_created() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing");
        let err = RunLock::acquire(&missing).unwrap_err();
        assert!(
            matches!(&err, Error::ResultsDir(ResultsDirError::Missing { dir }) if dir == &missing),
            "{err:?}"
        );
        assert!(!missing.exists());
    }

    #[test]
    fn a_symlinked_lock_file_is_refused_and_its_target_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious.txt");
        std::fs::write(&target, "keep me\n").unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        std::os::unix::fs::symlink(&target, RunDir::new(&run).lock()).unwrap();
        let err = RunLock::acquire(&run).unwrap_err();
        assert!(
            matches!(
                &err,
                Error::ResultsDir(ResultsDirError::LockIsNotAFile { path })
                    if path == &RunDir::new(&run).lock()
            ),
            "{err:?}"
        );
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me\n");
    }
}
