//! Reading and writing the files an agent can replace (the usage file, the effects log,
//! the prompt file, the feature list, PROGRESS.md): never a blocking open, never data
//! from anything but a regular file.
//!
//! An unsandboxed agent can put a FIFO, a device or a socket where the harness expects a
//! file. A plain `open` of a FIFO blocks until someone opens the other end, which nobody
//! will once the session is over, so the harness would hang past SIGTERM; a device such
//! as `/dev/zero` reached through a symlink never ends. So every read here opens with
//! `O_NONBLOCK` (and `O_NOFOLLOW` unless the caller means to follow a link), checks with
//! `fstat` on the open descriptor that it is a regular file, and reads at most a bound;
//! every write replaces the path by a rename instead of opening what stands there.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use nix::libc;

use crate::error::{IoContext, Result};
use crate::fsutil::{Opened, kind_words};

/// What stood at a path the harness read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentFile {
    /// Nothing (or a directory component that is missing).
    Missing,
    /// Something other than a regular file: its kind (`a FIFO`, `a symlink`, `a socket`,
    /// `a character device`, ...). Its content was not read.
    NotRegular(&'static str),
    /// A regular file longer than the bound: its length. Its content was not read.
    TooLarge(u64),
    /// A regular file's content.
    Bytes(Vec<u8>),
}

impl AgentFile {
    /// Why the content is not data, for a note in the session record; `None` for
    /// [`AgentFile::Bytes`] and [`AgentFile::Missing`].
    pub fn refusal(&self, what: &str, limit: u64) -> Option<String> {
        match self {
            AgentFile::NotRegular(kind) => Some(format!(
                "{what} is {kind}, not a regular file; it was not read"
            )),
            AgentFile::TooLarge(len) => Some(format!(
                "{what} holds {len} bytes, more than the {limit} read; it was not read"
            )),
            AgentFile::Missing | AgentFile::Bytes(_) => None,
        }
    }
}

/// Whether the last component of a path may be a symlink the read goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// A symlink at the path is [`AgentFile::NotRegular`]`("a symlink")`.
    Refuse,
    /// A symlink at the path is followed (the caller has checked where it leads).
    Follow,
}

/// Reads the regular file at `path`, at most `limit` bytes, without ever blocking on
/// what stands there (see the module documentation). I/O errors other than a missing
/// path are errors; everything an agent can put there is a value.
pub fn read(path: &Path, limit: u64, links: Links) -> Result<AgentFile> {
    let opened = crate::fsutil::open_regular(path, links == Links::Follow)
        .io_context(|| format!("cannot open '{}'", path.display()))?;
    let (file, meta) = match opened {
        Opened::Regular(file, meta) => (file, meta),
        Opened::NotRegular(kind) => return Ok(AgentFile::NotRegular(kind_words(kind))),
        Opened::Missing => return Ok(AgentFile::Missing),
    };
    if meta.len() > limit {
        return Ok(AgentFile::TooLarge(meta.len()));
    }
    let mut bytes = Vec::new();
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .io_context(|| format!("cannot read '{}'", path.display()))?;
    // The file grew between fstat and read.
    if bytes.len() as u64 > limit {
        return Ok(AgentFile::TooLarge(bytes.len() as u64));
    }
    Ok(AgentFile::Bytes(bytes))
}

/// Puts `bytes` at `path` as a new regular file, first removing whatever stands there
/// (a FIFO, a symlink, a device node, a directory) without opening it, so that nothing
/// the agent left can block the write or redirect it.
pub fn replace(path: &Path, bytes: &[u8]) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
    .io_context(|| format!("cannot replace '{}'", path.display()))?;
    // `create_new` is O_EXCL: it never opens what another process put there meanwhile.
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .io_context(|| format!("cannot create '{}'", path.display()))?;
    std::io::Write::write_all(&mut file, bytes)
        .io_context(|| format!("cannot write '{}'", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_regular_file_is_read_within_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, "hello").unwrap();
        assert_eq!(
            read(&path, 5, Links::Refuse).unwrap(),
            AgentFile::Bytes(b"hello".to_vec())
        );
        assert_eq!(
            read(&path, 4, Links::Refuse).unwrap(),
            AgentFile::TooLarge(5)
        );
        assert_eq!(
            read(&dir.path().join("nope"), 4, Links::Refuse).unwrap(),
            AgentFile::Missing
        );
    }

    #[test]
    fn a_fifo_is_refused_at_once_instead_of_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&path).status();
        assert!(made.is_ok_and(|s| s.success()));
        let start = Instant::now();
        assert_eq!(
            read(&path, 1024, Links::Follow).unwrap(),
            AgentFile::NotRegular("a FIFO")
        );
        assert!(start.elapsed() < Duration::from_secs(2));
        // Writing replaces the FIFO instead of opening it (which would block too).
        replace(&path, b"x").unwrap();
        assert_eq!(
            read(&path, 1024, Links::Refuse).unwrap(),
            AgentFile::Bytes(b"x".to_vec())
        );
    }

    #[test]
    fn a_symlink_is_refused_unless_followed_and_a_device_is_never_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("link");
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        assert_eq!(
            read(&path, 1024, Links::Refuse).unwrap(),
            AgentFile::NotRegular("a symlink")
        );
        assert_eq!(
            read(&path, 1024, Links::Follow).unwrap(),
            AgentFile::NotRegular("a character device")
        );
        let note = AgentFile::NotRegular("a FIFO").refusal("the usage file", 9);
        assert_eq!(
            note.as_deref(),
            Some("the usage file is a FIFO, not a regular file; it was not read")
        );
    }
}
