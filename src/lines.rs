//! Reading untrusted text one line at a time with a bound on the length of a line, so
//! that a file an agent wrote (a capture, a transcript) never has to fit in memory.

use std::io::{BufRead, ErrorKind};

/// One line as [`BoundedLines::next_line`] returns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line<'a> {
    /// The line's bytes, without its `\n` (or `\r\n`).
    Text(&'a [u8]),
    /// The line was longer than the bound and was skipped; its length in bytes.
    TooLong(u64),
}

/// Lines of a reader, each at most `max` bytes held in memory: a longer line is read
/// through and dropped, never buffered whole.
pub struct BoundedLines<R> {
    reader: R,
    max: usize,
    buf: Vec<u8>,
    number: usize,
}

impl<R: BufRead> BoundedLines<R> {
    /// Lines of `reader`, none of them held longer than `max` bytes.
    pub fn new(reader: R, max: usize) -> BoundedLines<R> {
        BoundedLines {
            reader,
            max,
            buf: Vec::new(),
            number: 0,
        }
    }

    /// The next line with its 1-based number, `None` at the end. A last line without
    /// its newline is a line like the others.
    pub fn next_line(&mut self) -> std::io::Result<Option<(usize, Line<'_>)>> {
        self.buf.clear();
        let mut len: u64 = 0;
        let mut read_any = false;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if available.is_empty() {
                break;
            }
            read_any = true;
            let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], i + 1, true),
                None => (available, available.len(), false),
            };
            let total = len + chunk.len() as u64;
            if total <= self.max as u64 {
                self.buf.extend_from_slice(chunk);
            } else if !self.buf.is_empty() {
                // Over the bound: what was kept so far goes, and nothing more is kept.
                self.buf = Vec::new();
            }
            len = total;
            self.reader.consume(used);
            if done {
                break;
            }
        }
        if !read_any {
            return Ok(None);
        }
        self.number += 1;
        if len > self.max as u64 {
            return Ok(Some((self.number, Line::TooLong(len))));
        }
        if self.buf.last() == Some(&b'\r') {
            self.buf.pop();
        }
        Ok(Some((self.number, Line::Text(&self.buf))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufReader, Cursor};

    fn all(text: &[u8], max: usize) -> Vec<(usize, String)> {
        let mut lines = BoundedLines::new(BufReader::with_capacity(4, Cursor::new(text)), max);
        let mut out = Vec::new();
        while let Some((n, line)) = lines.next_line().unwrap() {
            out.push((
                n,
                match line {
                    Line::Text(t) => String::from_utf8_lossy(t).into_owned(),
                    Line::TooLong(len) => format!("<{len} bytes>"),
                },
            ));
        }
        out
    }

    #[test]
    fn lines_come_back_numbered_without_their_line_ends() {
        assert_eq!(
            all(b"one\r\ntwo\n\nlast", 100),
            vec![
                (1, "one".into()),
                (2, "two".into()),
                (3, String::new()),
                (4, "last".into())
            ]
        );
        assert!(all(b"", 100).is_empty());
    }

    #[test]
    fn a_line_longer_than_the_bound_is_skipped_and_the_next_one_read() {
        assert_eq!(
            all(b"short\nmuch too long\nok\n", 8),
            vec![
                (1, "short".into()),
                (2, "<13 bytes>".into()),
                (3, "ok".into())
            ]
        );
        assert_eq!(all(b"exactly8", 8), vec![(1, "exactly8".into())]);
    }

    #[test]
    fn a_huge_line_is_never_held_in_memory() {
        let huge = vec![b'x'; 10 * 1024 * 1024];
        let mut lines = BoundedLines::new(BufReader::new(Cursor::new(huge)), 1024);
        let (_, line) = lines.next_line().unwrap().unwrap();
        assert_eq!(line, Line::TooLong(10 * 1024 * 1024));
        assert!(lines.buf.capacity() <= 2048, "{}", lines.buf.capacity());
    }
}
