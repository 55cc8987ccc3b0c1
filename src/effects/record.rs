//! The harness's record of a trial's effects log: every line a session's channel
//! delivered, appended to the harness's own copy (a file no sandbox shows), and in
//! memory only what the metrics need: how many lines, how many repeated an earlier key
//! (each key is remembered by a 128-bit hash, never as text), and the first
//! [`LISTED_KEYS`] repeated keys of the last session for its evidence. So the harness's
//! memory and its records stay bounded whatever the log holds.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// The most repeated keys a session's evidence lists; the others are counted
/// (`dup_side_effects_unlisted`).
pub const LISTED_KEYS: usize = 100;

/// The longest key text a session's evidence lists: a longer key is listed as its first
/// bytes up to this many, then `… (N bytes)`.
pub const LISTED_KEY_BYTES: usize = 256;

/// The effects record of one trial. Clones share it: the channel's reader appends
/// while a session runs, the observer reads its [`EffectsTally`] between sessions.
#[derive(Debug, Clone)]
pub struct EffectsLog {
    shared: Arc<Mutex<Record>>,
}

/// What an observation keeps of the effects record: counts, never the lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EffectsTally {
    /// Lines recorded in the trial so far (blank lines are not lines).
    pub lines: u64,
    /// Of them, those whose key stood on an earlier line of the trial.
    pub repeated: u64,
    /// How many sessions have had a channel to the record so far.
    pub sessions: u64,
    /// The first [`LISTED_KEYS`] repeated keys of the last of those sessions, in order,
    /// each cut at [`LISTED_KEY_BYTES`].
    pub listed: Vec<String>,
    /// The last session's channel was not as the harness made it when the session
    /// ended (see [`super::ChannelEnd`]).
    pub tampered: bool,
}

impl EffectsTally {
    /// Whether a session since `before` wrote to the record or left its channel other
    /// than the harness made it. (A session that had a channel and wrote nothing is no
    /// change: `sessions` counts channels opened, not what went through them.)
    pub fn changed_since(&self, before: &EffectsTally) -> bool {
        self.lines != before.lines || self.tampered_since(before)
    }

    /// The repeated lines recorded since `before`: the keys listed (those of the last
    /// session, when a session ran since) and how many more there are.
    pub fn repeated_since(&self, before: &EffectsTally) -> (&[String], u64) {
        let repeated = self.repeated.saturating_sub(before.repeated);
        let listed: &[String] = if self.sessions > before.sessions {
            &self.listed
        } else {
            &[]
        };
        let shown = listed
            .len()
            .min(usize::try_from(repeated).unwrap_or(usize::MAX));
        (&listed[..shown], repeated - shown as u64)
    }

    /// Whether a session since `before` left its channel other than the harness made it.
    pub fn tampered_since(&self, before: &EffectsTally) -> bool {
        self.sessions > before.sessions && self.tampered
    }
}

/// The record itself, behind the lock.
#[derive(Debug)]
struct Record {
    /// Where the harness's own copy of the lines goes; `None` keeps no copy.
    copy_path: Option<PathBuf>,
    copy: Option<BufWriter<File>>,
    /// Why the copy could not be written (its first error); the counts still hold.
    copy_error: Option<String>,
    /// A 128-bit hash of every key recorded.
    seen: HashSet<u128>,
    tally: EffectsTally,
}

impl EffectsLog {
    /// An empty record whose lines are also appended to the file `copy` (created on
    /// the first line), or to no file.
    pub fn new(copy: Option<PathBuf>) -> EffectsLog {
        EffectsLog {
            shared: Arc::new(Mutex::new(Record {
                copy_path: copy,
                copy: None,
                copy_error: None,
                seen: HashSet::new(),
                tally: EffectsTally::default(),
            })),
        }
    }

    /// What the record holds now.
    pub fn tally(&self) -> EffectsTally {
        self.lock().tally.clone()
    }

    /// Records `line` (without its newline) as appended by the session now running.
    pub fn append(&self, line: &[u8]) {
        self.lock().add(line);
    }

    /// Records every line of `lines` (each ended by a newline, the last one maybe not).
    pub fn append_lines(&self, lines: &[u8]) {
        let mut record = self.lock();
        for line in lines.split(|b| *b == b'\n') {
            record.add(line);
        }
    }

    /// Starts the lines of a new session: its repeated keys are listed afresh.
    pub(super) fn begin_session(&self) {
        let mut record = self.lock();
        record.tally.sessions += 1;
        record.tally.listed.clear();
        record.tally.tampered = false;
    }

    /// Marks the session now ending as having tampered with its channel.
    pub(super) fn mark_tampered(&self) {
        self.lock().tally.tampered = true;
    }

    /// Writes out what the copy buffers; the first error the copy met, if any.
    pub(super) fn flush(&self) -> Option<String> {
        let mut record = self.lock();
        if let Some(copy) = record.copy.as_mut()
            && let Err(e) = copy.flush()
        {
            record.copy_error.get_or_insert_with(|| e.to_string());
        }
        record.copy_error.take()
    }

    /// The lock; a reader that panicked left the counts as they were, which still hold.
    fn lock(&self) -> MutexGuard<'_, Record> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Record {
    /// One line: its key is the text without trailing whitespace (bytes that are not
    /// UTF-8 read as U+FFFD); a blank line is no line.
    fn add(&mut self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let key = text.trim_end();
        if key.is_empty() {
            return;
        }
        self.tally.lines += 1;
        self.copy_line(key);
        let hash = blake3::hash(key.as_bytes());
        let mut first = [0u8; 16];
        first.copy_from_slice(&hash.as_bytes()[..16]);
        if !self.seen.insert(u128::from_le_bytes(first)) {
            self.tally.repeated += 1;
            if self.tally.listed.len() < LISTED_KEYS {
                self.tally.listed.push(listed_key(key));
            }
        }
    }

    /// Appends `key` to the harness's copy; a copy that cannot be written is given up
    /// (the counts do not depend on it) and the reason kept.
    fn copy_line(&mut self, key: &str) {
        if self.copy_error.is_some() {
            return;
        }
        let Some(path) = &self.copy_path else {
            return;
        };
        if self.copy.is_none() {
            match open_copy(path) {
                Ok(file) => self.copy = Some(BufWriter::new(file)),
                Err(e) => {
                    self.copy_error = Some(format!("cannot open '{}': {e}", path.display()));
                    return;
                }
            }
        }
        if let Some(copy) = self.copy.as_mut()
            && let Err(e) = copy
                .write_all(key.as_bytes())
                .and_then(|()| copy.write_all(b"\n"))
        {
            self.copy_error = Some(format!("cannot write '{}': {e}", path.display()));
            self.copy = None;
        }
    }
}

/// The harness's copy, opened to append, never through a symlink.
fn open_copy(path: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
}

/// `key` as the evidence lists it: whole, or its first [`LISTED_KEY_BYTES`] bytes (cut
/// at a character) marked as cut with the key's length.
fn listed_key(key: &str) -> String {
    if key.len() <= LISTED_KEY_BYTES {
        return key.to_string();
    }
    let mut end = LISTED_KEY_BYTES;
    while !key.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}… ({} bytes)", &key[..end], key.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_repeated_in_a_later_session_is_counted_and_listed_there_only() {
        let log = EffectsLog::new(None);
        let start = log.tally();
        log.begin_session();
        log.append_lines(b"remind:A\nremind:B\n\n  \n");
        let first = log.tally();
        assert_eq!((first.lines, first.repeated), (2, 0));
        assert_eq!(first.repeated_since(&start), (&[][..], 0));
        log.begin_session();
        log.append_lines(b"remind:A \r\nremind:C\nremind:C");
        let second = log.tally();
        assert_eq!((second.lines, second.repeated), (5, 2));
        let (listed, more) = second.repeated_since(&first);
        assert_eq!(listed, ["remind:A", "remind:C"]);
        assert_eq!(more, 0);
        // Nothing ran between two observations of one moment.
        assert_eq!(second.repeated_since(&second), (&[][..], 0));
    }

    #[test]
    fn a_session_that_only_had_a_channel_changed_nothing_one_that_wrote_did() {
        let log = EffectsLog::new(None);
        let start = log.tally();
        log.begin_session();
        let quiet = log.tally();
        assert!(!quiet.changed_since(&start), "{quiet:?}");
        log.begin_session();
        log.append_lines(b"remind:A\n");
        assert!(log.tally().changed_since(&quiet));
        // Blank lines are no lines.
        let wrote = log.tally();
        log.begin_session();
        log.append_lines(b"\n  \n");
        assert!(!log.tally().changed_since(&wrote));
    }

    #[test]
    fn the_evidence_lists_a_bounded_number_of_keys_each_cut_and_counts_the_rest() {
        let log = EffectsLog::new(None);
        log.begin_session();
        let keys: Vec<u8> = (0..500)
            .flat_map(|i| format!("charge:{i}\n").into_bytes())
            .collect();
        log.append_lines(&keys);
        let before = log.tally();
        log.begin_session();
        log.append_lines(&keys);
        let long = "x".repeat(1000);
        log.append(long.as_bytes());
        log.append(long.as_bytes());
        let after = log.tally();
        let (listed, more) = after.repeated_since(&before);
        assert_eq!(listed.len(), LISTED_KEYS);
        assert_eq!(listed[0], "charge:0");
        assert_eq!(more, 501 - LISTED_KEYS as u64);
        assert_eq!(
            listed_key(&long),
            format!("{}… (1000 bytes)", "x".repeat(256))
        );
        // A cut never splits a character.
        let wide = "é".repeat(200);
        assert!(listed_key(&wide).starts_with(&"é".repeat(128)));
    }

    #[test]
    fn the_harness_keeps_its_own_copy_of_every_line() {
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("effects.log");
        let log = EffectsLog::new(Some(copy.clone()));
        log.begin_session();
        log.append_lines(b"remind:A\nremind:A\n");
        assert_eq!(log.flush(), None);
        assert_eq!(
            std::fs::read_to_string(&copy).unwrap(),
            "remind:A\nremind:A\n"
        );
    }
}
