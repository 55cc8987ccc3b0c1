//! A writer that makes JSON safe inside a `<script>` element as it passes through, so
//! that a page's data can be written a row at a time: the escapes of
//! `page::escape_script_json`, byte for byte.

use std::io::{self, Write};

/// Escapes `<`, `>`, `&`, U+2028 and U+2029 in the JSON written through it (a
/// character split across two writes included).
pub struct ScriptJsonWriter<W: Write> {
    inner: W,
    /// Bytes of a possible U+2028/U+2029 (`E2 80 ..`) seen at the end of a write.
    held: Vec<u8>,
}

impl<W: Write> ScriptJsonWriter<W> {
    /// Escapes into `inner`.
    pub fn new(inner: W) -> ScriptJsonWriter<W> {
        ScriptJsonWriter {
            inner,
            held: Vec::new(),
        }
    }

    /// Writes any held bytes (only an incomplete character) and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        let held = std::mem::take(&mut self.held);
        self.inner.write_all(&held)?;
        Ok(self.inner)
    }

    fn escape(&mut self, buf: &[u8]) -> io::Result<()> {
        let mut rest = buf;
        // A character begun at the end of the last write.
        while !self.held.is_empty() {
            let Some((&b, after)) = rest.split_first() else {
                return Ok(());
            };
            match (self.held.as_slice(), b) {
                ([0xE2], 0x80) => {
                    self.held.push(b);
                    rest = after;
                }
                ([0xE2, 0x80], 0xA8 | 0xA9) => {
                    self.held.clear();
                    let escape: &[u8] = if b == 0xA8 { b"\\u2028" } else { b"\\u2029" };
                    self.inner.write_all(escape)?;
                    rest = after;
                }
                _ => {
                    // Not a separator: its bytes as they were; `b` is read below.
                    let held = std::mem::take(&mut self.held);
                    self.inner.write_all(&held)?;
                }
            }
        }
        while let Some(at) = rest
            .iter()
            .position(|b| matches!(b, b'<' | b'>' | b'&' | 0xE2))
        {
            self.inner.write_all(&rest[..at])?;
            let (escape, len): (&[u8], usize) = match (rest[at], rest.get(at + 1), rest.get(at + 2))
            {
                (b'<', ..) => (b"\\u003c", 1),
                (b'>', ..) => (b"\\u003e", 1),
                (b'&', ..) => (b"\\u0026", 1),
                (_, Some(0x80), Some(0xA8)) => (b"\\u2028", 3),
                (_, Some(0x80), Some(0xA9)) => (b"\\u2029", 3),
                // A separator's start at the end of this write: the next decides.
                (_, None, _) | (_, Some(0x80), None) => {
                    self.held.extend_from_slice(&rest[at..]);
                    return Ok(());
                }
                _ => (b"\xE2", 1),
            };
            self.inner.write_all(escape)?;
            rest = &rest[at + len..];
        }
        self.inner.write_all(rest)
    }
}

impl<W: Write> Write for ScriptJsonWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.escape(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writing_in_any_pieces_escapes_as_the_whole_string_does() {
        let text = "a<b>&c\u{2028}d\u{2029}e\u{2026}é</script>\u{e2}";
        let json = serde_json::to_string(&text).unwrap();
        let want =
            "\"a\\u003cb\\u003e\\u0026c\\u2028d\\u2029e\u{2026}é\\u003c/script\\u003e\u{e2}\"";
        let bytes = json.as_bytes();
        for size in 1..=bytes.len() {
            let mut w = ScriptJsonWriter::new(Vec::new());
            for chunk in bytes.chunks(size) {
                w.write_all(chunk).unwrap();
            }
            let got = String::from_utf8(w.finish().unwrap()).unwrap();
            assert_eq!(got, want, "pieces of {size}");
        }
    }
}
