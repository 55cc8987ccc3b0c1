//! The end of what a command writes: each pipe read on a thread of its own as the
//! command writes, its last bytes kept.

use std::time::Duration;

/// How long the readers of a finished command's output may take to reach the end of
/// its pipes. A process that escaped the command's group and holds a pipe open is not
/// waited for: what was read by then is kept.
const TAIL_GRACE: Duration = Duration::from_secs(2);

/// The last bytes written to one pipe, read on a thread of its own.
pub(super) struct Tail {
    kept: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<u8>>>,
    done: std::sync::mpsc::Receiver<()>,
}

impl Tail {
    pub(super) fn read_in_background(mut reader: std::io::PipeReader, limit: usize) -> Tail {
        use std::io::Read;
        let kept = std::sync::Arc::new(std::sync::Mutex::new(std::collections::VecDeque::new()));
        let (tx, done) = std::sync::mpsc::channel();
        let shared = kept.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                if let Ok(mut kept) = shared.lock() {
                    kept.extend(&buf[..n]);
                    let excess = kept.len().saturating_sub(limit);
                    kept.drain(..excess);
                }
            }
            let _ = tx.send(());
        });
        Tail { kept, done }
    }

    pub(super) fn finish(self) -> Vec<u8> {
        let _ = self.done.recv_timeout(TAIL_GRACE);
        self.kept
            .lock()
            .map(|kept| kept.iter().copied().collect())
            .unwrap_or_default()
    }
}

/// The last `limit` bytes of `bytes`, starting at a UTF-8 character boundary where the
/// cut would split one (so the tail reads as text when the output was text).
pub fn last_bytes(bytes: &[u8], limit: usize) -> &[u8] {
    let mut start = bytes.len().saturating_sub(limit);
    let mut skipped = 0;
    while start < bytes.len() && (bytes[start] & 0b1100_0000) == 0b1000_0000 && skipped < 3 {
        start += 1;
        skipped += 1;
    }
    &bytes[start..]
}
