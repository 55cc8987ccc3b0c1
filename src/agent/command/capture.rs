//! Bounded capture of an agent's stdout and stderr: one thread per stream copies the
//! pipe into its file up to a cap and reads whatever comes after it to nowhere, so that
//! the agent never blocks on a full pipe and neither the harness's memory nor its disk
//! grows with what the agent prints.
//!
//! Past the cap a file keeps the first `cap − tail` bytes and, after them, the last
//! whole lines that fit in `tail` bytes (`tail` = a quarter of the cap, at most 1 MiB):
//! Claude Code reports a session's usage on the last line of its stream-json output.
//! Whatever lay between is discarded and counted, and the session's `error` says so.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// The most of a stream's end kept past the cap.
const TAIL_MAX: u64 = 1024 * 1024;

/// Bytes read from a pipe at a time: the only buffer of a stream besides its tail.
const CHUNK: usize = 64 * 1024;

/// What became of one captured stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Captured {
    /// `stdout` or `stderr`.
    pub stream: &'static str,
    /// The cap.
    pub limit: u64,
    /// Bytes the agent wrote to the stream (as far as they were read).
    pub total: u64,
    /// Bytes written to the capture file.
    pub kept: u64,
    /// The stream was still open after the session ended and its process group was
    /// killed: a process that left the group holds it. Capture stopped there.
    pub held_open: bool,
    /// Writing the file failed (disk full); the stream was drained to its end anyway.
    pub write_error: Option<String>,
}

impl Captured {
    /// The sentence for the session's `error` field, `None` when the file holds
    /// everything the agent wrote.
    pub fn note(&self) -> Option<String> {
        let mut parts = Vec::new();
        if self.total > self.limit {
            let head = self.limit - tail_of(self.limit);
            let dropped = human_bytes(self.total.saturating_sub(self.kept));
            parts.push(if head == self.limit {
                format!(
                    "{} capture cap of {} reached; the rest ({dropped}) was discarded",
                    self.stream,
                    human_bytes(self.limit)
                )
            } else {
                format!(
                    "{} capture cap of {} reached; {dropped} in the middle were discarded (the first {} and the last lines are kept)",
                    self.stream,
                    human_bytes(self.limit),
                    human_bytes(head)
                )
            });
        }
        if let Some(e) = &self.write_error {
            parts.push(format!(
                "cannot write the {} capture ({e}); the rest was discarded",
                self.stream
            ));
        }
        if self.held_open {
            parts.push(format!(
                "{} was still open after the session ended (a process outside the agent's process group holds it); capture stopped there",
                self.stream
            ));
        }
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// The part of a cap kept for a stream's last lines.
fn tail_of(limit: u64) -> u64 {
    (limit / 4).min(TAIL_MAX)
}

/// `n` bytes for people: `64 MiB`, `190.7 MiB`, `512 bytes`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (size, unit) in UNITS {
        if n >= size {
            return if n.is_multiple_of(size) {
                format!("{} {unit}", n / size)
            } else {
                format!("{:.1} {unit}", n as f64 / size as f64)
            };
        }
    }
    format!("{n} bytes")
}

/// Counters a copier shares with its session.
#[derive(Debug, Default)]
struct Shared {
    stop: AtomicBool,
    total: AtomicU64,
    kept: AtomicU64,
}

/// A running copy of one stream into its file.
pub struct Copier {
    stream: &'static str,
    limit: u64,
    shared: Arc<Shared>,
    done: mpsc::Receiver<Captured>,
}

impl Copier {
    /// Starts copying `reader` into `file`, at most `limit` bytes of it. The thread
    /// reads until the stream's last writer closes it.
    pub fn start(
        stream: &'static str,
        reader: impl Read + Send + 'static,
        file: File,
        limit: u64,
    ) -> std::io::Result<Copier> {
        let shared = Arc::new(Shared::default());
        let (tx, done) = mpsc::channel();
        let thread_shared = shared.clone();
        std::thread::Builder::new()
            .name(format!("capture-{stream}"))
            .spawn(move || {
                let captured = copy(stream, reader, file, limit, &thread_shared);
                // Nobody listens any more once the session gave up waiting.
                let _ = tx.send(captured);
            })?;
        Ok(Copier {
            stream,
            limit,
            shared,
            done,
        })
    }

    /// Waits up to `wait` for the stream to end (every process holding it is gone),
    /// then stops the capture where it is.
    pub fn finish(self, wait: Duration) -> Captured {
        match self.done.recv_timeout(wait) {
            Ok(captured) => captured,
            Err(_) => {
                // The thread is blocked in a read; it ends after its next one, without
                // writing anything more, and drops the pipe.
                self.shared.stop.store(true, Ordering::SeqCst);
                Captured {
                    stream: self.stream,
                    limit: self.limit,
                    total: self.shared.total.load(Ordering::SeqCst),
                    kept: self.shared.kept.load(Ordering::SeqCst),
                    held_open: true,
                    write_error: None,
                }
            }
        }
    }
}

/// The copy loop of one stream.
fn copy(
    stream: &'static str,
    mut reader: impl Read,
    file: File,
    limit: u64,
    shared: &Shared,
) -> Captured {
    let head_cap = limit - tail_of(limit);
    let tail_cap = usize::try_from(tail_of(limit)).unwrap_or(usize::MAX);
    let mut out = Sink {
        file,
        kept: 0,
        error: None,
    };
    let mut tail: VecDeque<u8> = VecDeque::new();
    let mut total: u64 = 0;
    let mut buf = vec![0u8; CHUNK];
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => {
                out.error
                    .get_or_insert_with(|| format!("reading the pipe: {e}"));
                break;
            }
        };
        if shared.stop.load(Ordering::SeqCst) {
            return out.captured(stream, limit, total, true);
        }
        total += n as u64;
        let mut chunk = &buf[..n];
        let room = usize::try_from(head_cap.saturating_sub(out.kept)).unwrap_or(usize::MAX);
        if room > 0 {
            let now = chunk.len().min(room);
            out.write(&chunk[..now]);
            chunk = &chunk[now..];
        }
        if !chunk.is_empty() && tail_cap > 0 {
            // Only the last `tail_cap` bytes past the head are kept.
            if chunk.len() >= tail_cap {
                tail.clear();
                tail.extend(&chunk[chunk.len() - tail_cap..]);
            } else {
                let excess = (tail.len() + chunk.len()).saturating_sub(tail_cap);
                tail.drain(..excess);
                tail.extend(chunk);
            }
        }
        shared.total.store(total, Ordering::SeqCst);
        shared.kept.store(out.kept, Ordering::SeqCst);
    }
    let (a, b) = tail.as_slices();
    if total <= limit {
        // Nothing was dropped: the tail simply continues the head.
        out.write(a);
        out.write(b);
    } else {
        // Start at the first newline of what is left, so that the head's cut line ends
        // there and every line after it is whole.
        let tail: Vec<u8> = tail.into_iter().collect();
        if let Some(i) = tail.iter().position(|&b| b == b'\n') {
            out.write(&tail[i..]);
        }
    }
    if let Err(e) = out.file.flush() {
        out.error.get_or_insert_with(|| e.to_string());
    }
    out.captured(stream, limit, total, false)
}

/// The capture file, which stops taking bytes at its first write error.
struct Sink {
    file: File,
    kept: u64,
    error: Option<String>,
}

impl Sink {
    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_some() || bytes.is_empty() {
            return;
        }
        match self.file.write_all(bytes) {
            Ok(()) => self.kept += bytes.len() as u64,
            Err(e) => self.error = Some(e.to_string()),
        }
    }

    fn captured(self, stream: &'static str, limit: u64, total: u64, held_open: bool) -> Captured {
        Captured {
            stream,
            limit,
            total,
            kept: self.kept,
            held_open,
            write_error: self.error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn capture(input: &[u8], limit: u64) -> (Captured, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out");
        let file = File::create(&path).unwrap();
        let copier = Copier::start("stdout", Cursor::new(input.to_vec()), file, limit).unwrap();
        let captured = copier.finish(Duration::from_secs(10));
        (captured, std::fs::read(&path).unwrap())
    }

    #[test]
    fn output_within_the_cap_is_kept_whole_and_noted_nowhere() {
        let input = b"line one\nline two\n".repeat(100);
        let (captured, file) = capture(&input, input.len() as u64);
        assert_eq!(file, input);
        assert_eq!(captured.kept, input.len() as u64);
        assert_eq!(captured.note(), None);
    }

    #[test]
    fn past_the_cap_the_head_and_the_last_whole_lines_are_kept_within_the_cap() {
        let mut input = Vec::new();
        for i in 0..10_000 {
            input.extend(format!("line {i:05} of the agent's chatter\n").bytes());
        }
        input.extend(b"{\"type\":\"result\",\"num_turns\":3}\n");
        let (captured, file) = capture(&input, 4096);
        assert!(file.len() <= 4096, "{}", file.len());
        assert_eq!(
            &file[..3072],
            &input[..3072],
            "the head is the stream's start"
        );
        let text = String::from_utf8(file).unwrap();
        assert!(text.ends_with(
            "line 09999 of the agent's chatter\n{\"type\":\"result\",\"num_turns\":3}\n"
        ));
        let after_head = &text[3072..];
        assert!(after_head.starts_with('\n'), "the cut line is ended");
        assert!(after_head[1..].starts_with("line "), "{after_head}");
        assert_eq!(captured.total, input.len() as u64);
        let note = captured.note().unwrap();
        assert!(
            note.starts_with("stdout capture cap of 4 KiB reached; ")
                && note.contains(
                    "in the middle were discarded (the first 3 KiB and the last lines are kept)"
                ),
            "{note}"
        );
    }

    #[test]
    fn a_tiny_cap_keeps_only_the_head() {
        let (captured, file) = capture(b"abcdef", 3);
        assert_eq!(file, b"abc");
        assert_eq!(
            captured.note().unwrap(),
            "stdout capture cap of 3 bytes reached; the rest (3 bytes) was discarded"
        );
    }

    #[test]
    fn a_stream_held_open_past_the_wait_is_stopped_and_noted() {
        let (reader, mut writer) = std::io::pipe().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = File::create(dir.path().join("out")).unwrap();
        let copier = Copier::start("stderr", reader, file, 1024).unwrap();
        writer.write_all(b"hello\n").unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while copier.shared.kept.load(Ordering::SeqCst) < 6 {
            assert!(std::time::Instant::now() < deadline, "nothing was copied");
            std::thread::sleep(Duration::from_millis(10));
        }
        let captured = copier.finish(Duration::from_millis(100));
        assert!(captured.held_open);
        assert_eq!(captured.kept, 6);
        assert!(captured.note().unwrap().contains("stderr was still open"));
        drop(writer);
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(human_bytes(64 * 1024 * 1024), "64 MiB");
        assert_eq!(human_bytes(200_000_000), "190.7 MiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(7), "7 bytes");
    }
}
