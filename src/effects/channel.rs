//! The channel a session's side-effect tools append to: a FIFO at `$LOOPBENCH_EFFECTS`
//! whose read end the harness holds for the length of one session. Every line that
//! comes through goes into the trial's [`EffectsLog`]; nothing the session does to the
//! path can take a line back out, since the record is the harness's, in its memory and
//! in a file no sandbox shows.
//!
//! - **Write only.** The FIFO is mode `0222`: a sandboxed agent (another user under a
//!   root harness; the owner, under an ordinary one, of a read-only bind that it cannot
//!   `chmod`) can open it to write, never to read, so it cannot take the lines out
//!   before the harness does. A truncation (`: > "$LOOPBENCH_EFFECTS"`, `O_TRUNC`) does
//!   nothing to a FIFO, and a bound FIFO can be neither removed nor renamed.
//! - **Never a blocked writer, never EOF between writers.** The harness holds a write end
//!   too, so that its reader sees an empty pipe, not an end, between two tools; the
//!   reader thread drains the pipe while the session runs, so a writer never waits on a
//!   full pipe, whatever it writes.
//! - **Bounded.** The record takes the first [`SESSION_BYTES`] a session writes; the rest
//!   is read and dropped, and the session is the agent's `error` with the reason. A line
//!   longer than `PIPE_BUF` (4,096 bytes) is one line as long as one tool writes at a
//!   time (the kernel keeps only shorter writes whole when writers race), and a last
//!   line without a newline is a line when the session ends.
//! - **Nothing outlives the session.** [`Channel::close`] reads what the session's
//!   processes left in the pipe, stops the reader, and removes the FIFO; a process that
//!   still writes after the session (which the process containment should make
//!   impossible) is read for at most [`DRAIN`], then cut off.
//!
//! An unsandboxed agent can do what its user can do to the path: replace it by a
//! regular file (whose lines are then counted as appended when the session ends), or by
//! something else, or change the FIFO's mode, or, as root, read the FIFO. Each of these
//! but the last is seen when the session ends ([`ChannelEnd`]); only the sandbox rules
//! them all out.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use nix::libc;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use super::record::EffectsLog;
use crate::agent_file::{self, AgentFile, Links};

/// The most bytes one session may write to its channel that the harness records.
pub const SESSION_BYTES: u64 = 1024 * 1024;

/// How long the reader goes on reading once the session has ended and the pipe is
/// still being written.
pub const DRAIN: Duration = Duration::from_secs(2);

/// The mode of the FIFO while a session runs: anyone it is shown to may write, nobody
/// may read (the harness opened its end before).
const WRITE_ONLY: u32 = 0o222;

/// Bytes read from the pipe at a time.
const CHUNK: usize = 64 * 1024;

/// The open channel of one session.
pub struct Channel {
    path: PathBuf,
    /// Device and inode of the FIFO the harness made.
    made: (u64, u64),
    log: EffectsLog,
    /// Dropped to wake the reader when the session has ended.
    wake: Option<std::io::PipeWriter>,
    /// The harness's own write end: the reader never sees an end while the session
    /// runs.
    _writer: File,
    done: mpsc::Receiver<Drained>,
    closed: bool,
}

/// What the reader thread did.
#[derive(Debug, Default)]
struct Drained {
    /// Bytes read from the pipe.
    total: u64,
    /// Of them, bytes recorded.
    recorded: u64,
    /// A writer still wrote [`DRAIN`] after the session had ended.
    held_open: bool,
    /// Reading failed.
    error: Option<String>,
}

/// What the end of a session's channel means for the session's record.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct ChannelEnd {
    /// Set when the session is the agent's `error`: it wrote more than the harness
    /// records, or left the path so that its lines may have gone elsewhere.
    pub error: Option<String>,
    /// What else the record should say (the path replaced by a regular file, whose lines
    /// were counted; the harness's copy could not be written).
    pub notes: Vec<String>,
}

impl Channel {
    /// Makes the FIFO of a new session at `path` (replacing whatever the last session
    /// left there) for the record `log`, and starts reading it.
    pub fn open(log: &EffectsLog, path: &Path) -> std::io::Result<Channel> {
        clear(path)?;
        nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o600))
            .map_err(std::io::Error::from)?;
        let flags = libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        let reader = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags)
            .open(path)?;
        let meta = reader.metadata()?;
        if !meta.file_type().is_fifo() {
            return Err(std::io::Error::other(format!(
                "'{}' is not the FIFO the harness made",
                path.display()
            )));
        }
        // The read end exists, so this open does not wait.
        let writer = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(flags)
            .open(path)?;
        reader.set_permissions(std::fs::Permissions::from_mode(WRITE_ONLY))?;
        let (wake_reader, wake) = std::io::pipe()?;
        log.begin_session();
        let (tx, done) = mpsc::channel();
        let thread_log = log.clone();
        std::thread::Builder::new()
            .name("effects".into())
            .spawn(move || {
                let drained = drain(&reader, &wake_reader, &thread_log, SESSION_BYTES);
                // Nobody listens any more once the session gave up waiting.
                let _ = tx.send(drained);
            })?;
        Ok(Channel {
            path: path.to_path_buf(),
            made: (meta.dev(), meta.ino()),
            log: log.clone(),
            wake: Some(wake),
            _writer: writer,
            done,
            closed: false,
        })
    }

    /// Ends the channel once every process of the session is gone: records what is
    /// left in the pipe, looks at what stands at the path, and removes it.
    pub fn close(mut self) -> ChannelEnd {
        self.closed = true;
        let mut end = ChannelEnd::default();
        self.wake = None;
        let drained = self
            .done
            .recv_timeout(DRAIN + Duration::from_secs(1))
            .unwrap_or(Drained {
                held_open: true,
                ..Drained::default()
            });
        let mut errors = Vec::new();
        if drained.total > SESSION_BYTES {
            errors.push(format!(
                "wrote {} bytes to the effects log ($LOOPBENCH_EFFECTS), more than the {SESSION_BYTES} \
                 the harness records of a session: the lines in the first {} bytes were counted, the rest dropped",
                drained.total, drained.recorded
            ));
        }
        if drained.held_open {
            errors.push(
                "the effects log ($LOOPBENCH_EFFECTS) was still written after the session \
                 ended; the harness stopped reading it"
                    .into(),
            );
        }
        if let Some(e) = drained.error {
            errors.push(format!(
                "the harness could not read the effects log ($LOOPBENCH_EFFECTS): {e}"
            ));
        }
        match self.left_at_path(SESSION_BYTES.saturating_sub(drained.recorded)) {
            Left::Intact => {}
            Left::Replaced(note) => {
                self.log.mark_tampered();
                end.notes.push(note);
            }
            Left::Lost(why) => {
                self.log.mark_tampered();
                errors.push(why);
            }
        }
        if let Err(e) = clear(&self.path) {
            end.notes.push(format!(
                "cannot remove the effects log's channel '{}': {e}",
                self.path.display()
            ));
        }
        if let Some(e) = self.log.flush() {
            end.notes.push(format!(
                "the harness's copy of the effects log is incomplete ({e}); the counts are whole"
            ));
        }
        end.error = (!errors.is_empty()).then(|| errors.join("; "));
        end
    }

    /// What the session left at the path: the harness's FIFO as it made it, or a
    /// regular file (whose lines, at most `room` bytes, are recorded as appended: the
    /// tools wrote them there), or something through which lines may have been lost.
    fn left_at_path(&self, room: u64) -> Left {
        let what = "$LOOPBENCH_EFFECTS";
        let meta = match std::fs::symlink_metadata(&self.path) {
            Ok(meta) => meta,
            Err(_) => {
                return Left::Lost(format!(
                    "the session removed the effects log's channel ({what}): actions after that \
                     may not have reached the harness"
                ));
            }
        };
        let ft = meta.file_type();
        if ft.is_fifo() && (meta.dev(), meta.ino()) == self.made {
            let mode = meta.mode() & 0o7777;
            return if mode == WRITE_ONLY {
                Left::Intact
            } else {
                Left::Lost(format!(
                    "the session changed the mode of the effects log's channel ({what}) to {mode:04o}: \
                     its lines may have been read before the harness read them"
                ))
            };
        }
        if !ft.is_file() {
            return Left::Lost(format!(
                "the session replaced the effects log's channel ({what}) by {}: actions after \
                 that may not have reached the harness",
                if ft.is_symlink() {
                    "a symlink"
                } else {
                    crate::fsutil::file_kind(ft)
                }
            ));
        }
        match agent_file::read(&self.path, room, Links::Refuse) {
            Ok(AgentFile::Bytes(bytes)) => {
                let before = self.log.tally().lines;
                self.log.append_lines(&bytes);
                let lines = self.log.tally().lines - before;
                Left::Replaced(format!(
                    "the session replaced the effects log's channel ({what}) by a regular file; \
                     its {lines} lines were counted as appended"
                ))
            }
            Ok(AgentFile::TooLarge(len)) => Left::Lost(format!(
                "the session replaced the effects log's channel ({what}) by a regular file of \
                 {len} bytes, more than the {room} left of the {SESSION_BYTES} the harness records \
                 of a session; it was not counted"
            )),
            Ok(other) => Left::Lost(format!(
                "the session replaced the effects log's channel ({what}): {}",
                other
                    .refusal("what stands there", room)
                    .unwrap_or_else(|| "it is gone".into())
            )),
            Err(e) => Left::Lost(format!(
                "the session replaced the effects log's channel ({what}) by a file the harness \
                 cannot read: {e}"
            )),
        }
    }
}

impl Drop for Channel {
    /// A channel that was never closed (the run was stopped): the reader stops and the
    /// FIFO goes, whatever the record says.
    fn drop(&mut self) {
        if !self.closed {
            self.wake = None;
            let _ = self.done.recv_timeout(DRAIN);
            let _ = clear(&self.path);
        }
    }
}

/// What a session left at its channel's path.
enum Left {
    Intact,
    /// A regular file, counted; the note for the record.
    Replaced(String),
    /// Something through which lines may have gone elsewhere: the reason.
    Lost(String),
}

/// Removes whatever stands at `path`, never following a symlink.
fn clear(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
    }
}

/// The reader: records the lines that come through `fifo` into `log`, at most
/// `limit` bytes of them, until `wake` says the session has ended and the pipe is
/// empty (or still written [`DRAIN`] later).
fn drain(fifo: &File, wake: &std::io::PipeReader, log: &EffectsLog, limit: u64) -> Drained {
    let mut drained = Drained::default();
    let mut buf = vec![0u8; CHUNK];
    let mut pending: Vec<u8> = Vec::new();
    let mut ended: Option<Instant> = None;
    loop {
        match (&*fifo).read(&mut buf) {
            Ok(n) if n > 0 => {
                drained.total = drained.total.saturating_add(n as u64);
                let room = usize::try_from(limit.saturating_sub(drained.recorded)).unwrap_or(n);
                let take = n.min(room);
                if take > 0 {
                    drained.recorded += take as u64;
                    pending.extend_from_slice(&buf[..take]);
                    if let Some(last) = pending.iter().rposition(|b| *b == b'\n') {
                        log.append_lines(&pending[..last]);
                        pending.drain(..=last);
                    }
                }
                if ended.is_some_and(|at| at.elapsed() > DRAIN) {
                    drained.held_open = true;
                    break;
                }
                continue;
            }
            // Empty (the harness's own write end keeps it from ending).
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => {}
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                drained.error = Some(e.to_string());
                break;
            }
        }
        if ended.is_some() {
            break;
        }
        let mut fds = [
            PollFd::new(fifo.as_fd(), PollFlags::POLLIN),
            PollFd::new(wake.as_fd(), PollFlags::POLLIN),
        ];
        match poll(&mut fds, PollTimeout::NONE) {
            Ok(_) => {
                if fds[1].any().unwrap_or(false) {
                    // The session has ended: read what is left, then stop.
                    ended = Some(Instant::now());
                }
            }
            Err(nix::errno::Errno::EINTR) => {}
            Err(e) => {
                drained.error = Some(e.to_string());
                break;
            }
        }
    }
    if !pending.is_empty() {
        log.append(&pending);
    }
    drained
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn write(path: &Path, bytes: &[u8]) {
        let mut f = std::fs::OpenOptions::new().append(true).open(path).unwrap();
        f.write_all(bytes).unwrap();
    }

    #[test]
    fn lines_written_by_many_writers_reach_the_record_and_the_fifo_goes_with_the_session() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("effects");
        let log = EffectsLog::new(None);
        let channel = Channel::open(&log, &path).unwrap();
        let mode = std::fs::symlink_metadata(&path).unwrap().mode() & 0o7777;
        assert_eq!(mode, WRITE_ONLY);
        write(&path, b"remind:A\n");
        write(&path, b"remind:B\nremind:A\n");
        // A line longer than PIPE_BUF, and a last line without its newline.
        let long = "k".repeat(10_000);
        write(&path, format!("{long}\n").as_bytes());
        write(&path, b"remind:C");
        assert_eq!(channel.close(), ChannelEnd::default());
        let tally = log.tally();
        assert_eq!((tally.lines, tally.repeated), (5, 1));
        assert_eq!(tally.listed, ["remind:A"]);
        assert!(!tally.tampered);
        assert!(
            std::fs::symlink_metadata(&path).is_err(),
            "the FIFO outlived the session"
        );
    }

    #[test]
    fn a_flood_is_recorded_up_to_the_bound_without_blocking_its_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("effects");
        let log = EffectsLog::new(None);
        let channel = Channel::open(&log, &path).unwrap();
        let line = b"remind:same-key-every-time\n";
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        for _ in 0..(3 * SESSION_BYTES as usize / line.len()) {
            f.write_all(line).unwrap();
        }
        drop(f);
        let end = channel.close();
        let error = end.error.unwrap();
        assert!(error.contains("more than the 1048576"), "{error}");
        let tally = log.tally();
        assert!(
            tally.lines <= SESSION_BYTES / line.len() as u64 + 1,
            "{tally:?}"
        );
        // The first line is new, and so is the last one, cut at the bound.
        assert_eq!(tally.repeated, tally.lines - 2);
        assert_eq!(tally.listed.len(), crate::effects::LISTED_KEYS);
    }

    #[test]
    fn a_path_replaced_by_a_regular_file_is_counted_and_anything_else_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("effects");
        let log = EffectsLog::new(None);
        let channel = Channel::open(&log, &path).unwrap();
        write(&path, b"remind:A\n");
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "remind:A\n").unwrap();
        let end = channel.close();
        assert_eq!(end.error, None);
        assert!(end.notes[0].contains("its 1 lines were counted"), "{end:?}");
        let tally = log.tally();
        assert_eq!((tally.lines, tally.repeated, tally.tampered), (2, 1, true));

        for (what, leave) in [
            ("removed", &(|_: &Path| {}) as &dyn Fn(&Path)),
            ("by a symlink", &|p: &Path| {
                std::os::unix::fs::symlink("/dev/zero", p).unwrap()
            }),
            ("by a FIFO", &|p: &Path| {
                nix::unistd::mkfifo(p, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap()
            }),
            ("by a directory", &|p: &Path| {
                std::fs::create_dir(p).unwrap()
            }),
        ] {
            let channel = Channel::open(&log, &path).unwrap();
            std::fs::remove_file(&path).unwrap();
            leave(&path);
            let error = channel.close().error.unwrap_or_default();
            assert!(error.contains(what), "{what}: {error}");
            assert!(log.tally().tampered, "{what}");
            assert!(std::fs::symlink_metadata(&path).is_err(), "{what}");
        }
        let channel = Channel::open(&log, &path).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o622)).unwrap();
        let error = channel.close().error.unwrap_or_default();
        assert!(error.contains("changed the mode"), "{error}");
        // A fresh channel of the next session starts untampered.
        let channel = Channel::open(&log, &path).unwrap();
        assert_eq!(channel.close(), ChannelEnd::default());
        assert!(!log.tally().tampered);
    }
}
