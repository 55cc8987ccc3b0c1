//! The environment of agents and checks, built rather than inherited: a few variables
//! of the harness's own by name, a HOME of the trial's, and what the suite names. A key
//! exported for one provider reaches only the agents that list it in `pass_env`, and
//! every value passed that way is replaced by `[redacted NAME]` in what the harness
//! stores or prints.

use std::borrow::Cow;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// Variables taken from the harness's environment by name for every agent and check.
pub const INHERITED: &[&str] = &["PATH", "LANG", "TERM"];

/// The PATH of a harness started without one.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The base of every built environment: [`INHERITED`] (with defaults where the harness
/// has none) and `HOME`.
pub fn base(home: &Path) -> Vec<(String, OsString)> {
    let get = |name: &str, default: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .unwrap_or_else(|| default.into())
    };
    vec![
        ("PATH".into(), get("PATH", DEFAULT_PATH)),
        ("HOME".into(), home.as_os_str().to_owned()),
        ("LANG".into(), get("LANG", "C.UTF-8")),
        ("TERM".into(), get("TERM", "dumb")),
    ]
}

/// The values of the harness's environment named by `pass_env`, for an agent; a name
/// the harness does not have is left out (the CLI reports its missing key itself).
pub fn passed(pass_env: &[String]) -> Vec<(String, OsString)> {
    pass_env
        .iter()
        .filter_map(|name| Some((name.clone(), std::env::var_os(name)?)))
        .collect()
}

/// Replaces the values passed by `pass_env` with `[redacted NAME]`. Values are bytes: a
/// value that is not UTF-8 is passed to the agent as it is, and redacted in its raw
/// bytes and in the spelling a lossy decoding of them gives (how text the harness
/// stores shows it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Redactor {
    /// (name, value), longest value first so that one secret holding another is
    /// replaced whole.
    secrets: Vec<(String, Vec<u8>)>,
}

impl Redactor {
    /// The redactor of the values the harness has for `names`. Values shorter than 4
    /// bytes are not secrets worth the false hits and are left alone.
    pub fn for_names<'a>(names: impl IntoIterator<Item = &'a String>) -> Redactor {
        use std::os::unix::ffi::OsStrExt;
        Redactor::from_pairs(
            names
                .into_iter()
                .filter_map(|n| Some((n.clone(), std::env::var_os(n)?.as_bytes().to_vec())))
                .collect(),
        )
    }

    /// A redactor of these (name, value) pairs, for tests and for values known otherwise.
    pub fn of(pairs: &[(&str, &str)]) -> Redactor {
        Redactor::from_pairs(
            pairs
                .iter()
                .map(|(n, v)| (n.to_string(), v.as_bytes().to_vec()))
                .collect(),
        )
    }

    /// Keeps the pairs whose value is long enough to be a secret, longest first.
    fn from_pairs(mut secrets: Vec<(String, Vec<u8>)>) -> Redactor {
        secrets.retain(|(_, v)| v.len() >= 4);
        secrets.sort_by(|a, b| b.1.len().cmp(&a.1.len()).then_with(|| a.0.cmp(&b.0)));
        secrets.dedup();
        Redactor { secrets }
    }

    /// Whether there is nothing to redact.
    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// The spellings of one value in text: its lossy decoding and that JSON-escaped.
    fn text_spellings(value: &[u8]) -> [String; 2] {
        let text = String::from_utf8_lossy(value).into_owned();
        let escaped = serde_json::to_string(&text).unwrap_or_default();
        let escaped = escaped.trim_matches('"').to_string();
        [text, escaped]
    }

    /// `text` with every secret replaced, also in its JSON-escaped spelling.
    pub fn text<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let mut out = Cow::Borrowed(text);
        for (name, value) in &self.secrets {
            for spelling in Redactor::text_spellings(value) {
                if !spelling.is_empty() && out.contains(&spelling) {
                    out = Cow::Owned(out.replace(&spelling, &format!("[redacted {name}]")));
                }
            }
        }
        out
    }

    /// `bytes` with every secret replaced, in each of its spellings.
    pub fn bytes<'b>(&self, bytes: &'b [u8]) -> Cow<'b, [u8]> {
        let mut out = Cow::Borrowed(bytes);
        for (needle, label) in self.needles() {
            if find(&out, &needle).is_none() {
                continue;
            }
            let mut replaced = Vec::with_capacity(out.len());
            let mut rest: &[u8] = &out;
            while let Some(at) = find(rest, &needle) {
                replaced.extend_from_slice(&rest[..at]);
                replaced.extend_from_slice(&label);
                rest = &rest[at + needle.len()..];
            }
            replaced.extend_from_slice(rest);
            out = Cow::Owned(replaced);
        }
        out
    }

    /// Every string inside a JSON value, redacted in place.
    pub fn json(&self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::String(s) => {
                if let Cow::Owned(r) = self.text(s) {
                    *s = r;
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| self.json(v)),
            serde_json::Value::Object(map) => map.values_mut().for_each(|v| self.json(v)),
            _ => {}
        }
    }

    /// Rewrites every regular file under `dir` (not following symlinks) that holds a
    /// secret, in its raw or JSON-escaped spelling: the captures, logs and CLI state a
    /// session left in the run directory. Files are read in chunks, so a file of any
    /// size costs [`REDACT_CHUNK`] bytes of memory; only files whose status changed
    /// since `changed_since` are read (an earlier session's were redacted then, and the
    /// change time cannot be set back). At most `cap` bytes are read in all: a file past
    /// the cap is removed, never kept unread, and returned.
    pub fn files_under(
        &self,
        dir: &Path,
        changed_since: Option<std::time::SystemTime>,
        cap: u64,
    ) -> std::io::Result<Vec<PathBuf>> {
        use std::os::unix::fs::MetadataExt;
        let mut removed = Vec::new();
        if self.is_empty() || !dir.is_dir() {
            return Ok(removed);
        }
        let since = changed_since.map(|t| {
            t.duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        });
        let mut read: u64 = 0;
        for entry in walkdir::WalkDir::new(dir).follow_links(false) {
            let entry = entry.map_err(std::io::Error::other)?;
            if !entry.file_type().is_file() {
                continue;
            }
            let meta = entry.metadata().map_err(std::io::Error::other)?;
            // A second of slack: change times are compared in whole seconds.
            if since.is_some_and(|s| meta.ctime() < s - 1) {
                continue;
            }
            if read.saturating_add(meta.len()) > cap {
                std::fs::remove_file(entry.path())?;
                removed.push(entry.path().to_path_buf());
                continue;
            }
            read += meta.len();
            self.redact_file(entry.path(), &meta)?;
        }
        Ok(removed)
    }

    /// Every spelling of every secret (raw bytes, lossy text, JSON-escaped), longest
    /// first: what a search for the secrets must look for.
    pub fn spellings(&self) -> Vec<Vec<u8>> {
        self.needles().into_iter().map(|(n, _)| n).collect()
    }

    /// Rewrites the regular file at `path` (never through a symlink) with every secret
    /// replaced, read in chunks as [`Redactor::files_under`] reads.
    pub fn file(&self, path: &Path) -> std::io::Result<()> {
        let meta = std::fs::symlink_metadata(path)?;
        if self.is_empty() || !meta.is_file() {
            return Ok(());
        }
        self.redact_file(path, &meta)
    }

    /// Every spelling of every secret (raw bytes, lossy text, JSON-escaped) with its
    /// label, longest first.
    fn needles(&self) -> Vec<(Vec<u8>, Vec<u8>)> {
        let mut needles: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for (name, value) in &self.secrets {
            let label = format!("[redacted {name}]").into_bytes();
            let [text, escaped] = Redactor::text_spellings(value);
            for spelling in [value.clone(), text.into_bytes(), escaped.into_bytes()] {
                if !spelling.is_empty() && !needles.iter().any(|(n, _)| *n == spelling) {
                    needles.push((spelling, label.clone()));
                }
            }
        }
        needles.sort_by_key(|n| std::cmp::Reverse(n.0.len()));
        needles
    }

    /// Redacts one file through a temporary file beside it, which replaces it (with
    /// the file's mode and owner) only when a secret was found.
    fn redact_file(&self, path: &Path, meta: &std::fs::Metadata) -> std::io::Result<()> {
        use std::io::{Read, Write};
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
        let needles = self.needles();
        let keep = needles.iter().map(|(n, _)| n.len()).max().unwrap_or(1) - 1;
        let mut source = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_NONBLOCK)
            .open(path)?;
        let parent = path.parent().unwrap_or(Path::new("."));
        let mut out = tempfile::NamedTempFile::new_in(parent)?;
        let mut found = false;
        let mut window: Vec<u8> = Vec::new();
        let mut chunk = vec![0u8; REDACT_CHUNK];
        loop {
            let n = source.read(&mut chunk)?;
            window.extend_from_slice(&chunk[..n]);
            // Bytes before `cut` can no longer start a secret the next chunk completes.
            let cut = if n == 0 {
                window.len()
            } else {
                window.len().saturating_sub(keep)
            };
            let mut at = 0;
            while at < cut {
                let next = needles
                    .iter()
                    .filter_map(|(needle, label)| {
                        find(&window[at..], needle).map(|p| (at + p, needle.len(), label))
                    })
                    .min_by_key(|(p, len, _)| (*p, std::cmp::Reverse(*len)));
                match next {
                    Some((p, len, label)) if p < cut => {
                        out.write_all(&window[at..p])?;
                        out.write_all(label)?;
                        found = true;
                        at = p + len;
                    }
                    _ => {
                        out.write_all(&window[at..cut])?;
                        at = cut;
                    }
                }
            }
            window.drain(..at.min(window.len()));
            if n == 0 {
                break;
            }
        }
        if !found {
            return Ok(());
        }
        out.as_file()
            .set_permissions(std::fs::Permissions::from_mode(meta.mode() & 0o7777))?;
        if nix::unistd::geteuid().is_root() {
            std::os::unix::fs::fchown(out.as_file(), Some(meta.uid()), Some(meta.gid()))?;
        }
        out.persist(path).map_err(|e| e.error)?;
        Ok(())
    }
}

/// How much of a file [`Redactor::files_under`] holds in memory at once.
pub const REDACT_CHUNK: usize = 64 * 1024;

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return None;
    }
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_passed_value_is_redacted_in_text_json_and_bytes() {
        let r = Redactor::of(&[("API_KEY", "sk-secret-1234"), ("SHORT", "ab")]);
        assert_eq!(
            r.text("auth failed for sk-secret-1234!"),
            "auth failed for [redacted API_KEY]!"
        );
        assert_eq!(r.text("ab stays"), "ab stays");
        assert_eq!(
            &*r.bytes(b"x sk-secret-1234 y sk-secret-1234"),
            b"x [redacted API_KEY] y [redacted API_KEY]"
        );
        let mut v = serde_json::json!({"error": "key sk-secret-1234", "n": [1, "sk-secret-1234"]});
        r.json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"error": "key [redacted API_KEY]", "n": [1, "[redacted API_KEY]"]})
        );
    }

    #[test]
    fn a_value_that_is_not_utf8_is_redacted_raw_and_as_text_shows_it() {
        let r = Redactor::from_pairs(vec![("RAW".into(), b"sk-\xffraw-secret".to_vec())]);
        assert!(!r.is_empty(), "a non-UTF-8 value was dropped");
        assert_eq!(
            &*r.bytes(b"key sk-\xffraw-secret end"),
            b"key [redacted RAW] end"
        );
        let shown = String::from_utf8_lossy(b"error: sk-\xffraw-secret").into_owned();
        assert_eq!(r.text(&shown), "error: [redacted RAW]");
    }

    #[test]
    fn a_secret_is_redacted_in_its_json_escaped_spelling_too() {
        let r = Redactor::of(&[("TOKEN", "a\"b\\c-long")]);
        let json = serde_json::to_string(&serde_json::json!({"e": "a\"b\\c-long"})).unwrap();
        assert_eq!(r.text(&json), r#"{"e":"[redacted TOKEN]"}"#);
    }

    #[test]
    fn the_longer_of_two_nested_secrets_is_replaced_whole() {
        let r = Redactor::of(&[("A", "secret"), ("B", "secret-and-more")]);
        assert_eq!(r.text("secret-and-more"), "[redacted B]");
    }

    #[test]
    fn files_left_by_a_session_are_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("home")).unwrap();
        std::fs::write(dir.path().join("home/log"), "Bearer sk-secret-1234\n").unwrap();
        std::fs::write(dir.path().join("clean"), "nothing\n").unwrap();
        Redactor::of(&[("API_KEY", "sk-secret-1234")])
            .files_under(dir.path(), None, u64::MAX)
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("home/log")).unwrap(),
            "Bearer [redacted API_KEY]\n"
        );
    }

    #[test]
    fn a_file_larger_than_memory_allows_is_redacted_in_chunks_across_their_borders() {
        let dir = tempfile::tempdir().unwrap();
        let secret = "sk-secret-0123456789";
        // Secrets at every offset around the chunk borders, and one JSON-escaped.
        let mut text = Vec::new();
        let mut expected = Vec::new();
        for i in 0..40 {
            let pad = "x".repeat(REDACT_CHUNK - 7 + i);
            text.extend_from_slice(pad.as_bytes());
            expected.extend_from_slice(pad.as_bytes());
            text.extend_from_slice(secret.as_bytes());
            expected.extend_from_slice(b"[redacted KEY]");
        }
        let file = dir.path().join("big.log");
        std::fs::write(&file, &text).unwrap();
        let r = Redactor::of(&[("KEY", secret)]);
        assert_eq!(
            r.files_under(dir.path(), None, u64::MAX).unwrap(),
            Vec::<PathBuf>::new()
        );
        assert!(
            std::fs::read(&file).unwrap() == expected,
            "not redacted whole"
        );
    }

    #[test]
    fn files_past_the_cap_are_removed_and_old_files_are_not_read_again() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.log"), "key sk-secret-1234\n").unwrap();
        std::fs::write(dir.path().join("b.log"), "key sk-secret-1234\n").unwrap();
        let r = Redactor::of(&[("API_KEY", "sk-secret-1234")]);
        let removed = r.files_under(dir.path(), None, 30).unwrap();
        assert_eq!(removed.len(), 1, "{removed:?}");
        assert!(!removed[0].exists());
        let kept: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(kept.len(), 1);
        assert_eq!(
            std::fs::read_to_string(kept[0].path()).unwrap(),
            "key [redacted API_KEY]\n"
        );
        // A file that has not changed since the last pass is not read.
        let later = std::time::SystemTime::now() + std::time::Duration::from_secs(10);
        std::fs::write(dir.path().join("c.log"), "sk-secret-1234").unwrap();
        r.files_under(dir.path(), Some(later), u64::MAX).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("c.log")).unwrap(),
            "sk-secret-1234"
        );
    }
}
