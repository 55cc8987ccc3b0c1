//! File-tree helpers: copying a tree, hashing it, and confining paths to a directory.

use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use walkdir::WalkDir;

use crate::error::{Error, IoContext, Result};

/// Name of the directory that never takes part in copies, hashes or test discovery.
pub const GIT_DIR: &str = ".git";

/// Where work directories and scratch copies go: `$LOOPBENCH_TMPDIR` when set, else
/// `/dev/shm` when it is a writable directory (memory-backed: copying and deleting small
/// trees there is several times cheaper than on disk), else the system temp dir.
pub fn scratch_root() -> PathBuf {
    static ROOT: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    ROOT.get_or_init(|| {
        if let Some(dir) = std::env::var_os("LOOPBENCH_TMPDIR") {
            return PathBuf::from(dir);
        }
        let shm = Path::new("/dev/shm");
        let writable = tempfile::Builder::new()
            .prefix("loopbench-probe-")
            .tempdir_in(shm)
            .is_ok();
        if writable {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        }
    })
    .clone()
}

/// A fresh temporary directory under [`scratch_root`].
pub fn scratch_dir(prefix: &str) -> Result<tempfile::TempDir> {
    let root = scratch_root();
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(&root)
        .io_context(|| {
            format!(
                "cannot create a temporary directory in '{}'",
                root.display()
            )
        })
}

/// One regular file of a tree, with its content.
#[derive(Debug, Clone)]
pub struct TreeFile {
    /// Path relative to the tree root, with `/` separators.
    pub path: String,
    /// File content.
    pub content: Vec<u8>,
    /// Whether any execute bit is set (it changes what a verify command can do).
    pub executable: bool,
    /// Its permission bits (`mode & 0o7777`), which a check can read too.
    pub mode: u32,
}

/// A directory entry that is neither a regular file nor a symlink: a directory (empty
/// ones included), a FIFO, a socket or a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    /// Path relative to the tree root, with `/` separators.
    pub path: String,
    /// `d` directory, `p` FIFO, `s` socket, `c` character device, `b` block device.
    pub kind: u8,
    /// Its permission bits (`mode & 0o7777`).
    pub mode: u32,
}

/// Every entry of a tree (without `.git`) in path order: regular files with their
/// content, symlinks with their target, and every other entry with its type, plus a
/// hash over all of it.
#[derive(Debug, Clone)]
pub struct TreeSnapshot {
    /// Regular files in path order.
    pub files: Vec<TreeFile>,
    /// Symlinks (path, target) in path order.
    pub links: Vec<(String, std::ffi::OsString)>,
    /// Directories and special files in path order (the root left out).
    pub others: Vec<TreeEntry>,
    /// Content hash of every entry: paths, types, permission bits, contents and
    /// symlink targets.
    pub hash: blake3::Hash,
}

/// The permission bits a walk entry has, 0 when they cannot be read.
fn mode_of(entry: &walkdir::DirEntry) -> u32 {
    entry
        .metadata()
        .map(|m| m.permissions().mode() & 0o7777)
        .unwrap_or(0)
}

/// The kind letter of an entry that is neither a regular file nor a symlink.
fn kind_of(ft: std::fs::FileType) -> u8 {
    use std::os::unix::fs::FileTypeExt;
    if ft.is_dir() {
        b'd'
    } else if ft.is_fifo() {
        b'p'
    } else if ft.is_socket() {
        b's'
    } else if ft.is_char_device() {
        b'c'
    } else if ft.is_block_device() {
        b'b'
    } else {
        b'?'
    }
}

/// Whether `path` (relative, `/`-separated) is left out because it or a directory
/// above it is matched by `skip`.
pub fn skipped_with_parents(path: &str, skip: impl Fn(&str) -> bool) -> bool {
    let mut end = 0;
    for part in path.split('/') {
        end += part.len();
        if skip(&path[..end]) {
            return true;
        }
        end += 1;
    }
    false
}

impl TreeSnapshot {
    /// Reads the tree under `root`. Symlinks are hashed by target and never followed.
    pub fn read(root: &Path) -> Result<TreeSnapshot> {
        let mut files = Vec::new();
        let mut links = Vec::new();
        let mut others = Vec::new();
        for entry in walk_without_git(root) {
            let entry = entry.map_err(|e| walk_error(root, e))?;
            if entry.depth() == 0 {
                continue;
            }
            let rel = relative_slash_path(root, entry.path());
            let ft = entry.file_type();
            if ft.is_symlink() {
                let target = std::fs::read_link(entry.path())
                    .io_context(|| format!("cannot read link '{}'", entry.path().display()))?;
                links.push((rel, target.into_os_string()));
            } else if ft.is_file() {
                let content = std::fs::read(entry.path())
                    .io_context(|| format!("cannot read '{}'", entry.path().display()))?;
                let mode = mode_of(&entry);
                files.push(TreeFile {
                    path: rel,
                    content,
                    executable: mode & 0o111 != 0,
                    mode,
                });
            } else {
                others.push(TreeEntry {
                    path: rel,
                    kind: kind_of(ft),
                    mode: mode_of(&entry),
                });
            }
        }
        let mut snapshot = TreeSnapshot {
            files,
            links,
            others,
            hash: blake3::Hasher::new().finalize(),
        };
        snapshot.hash = snapshot.hash_where(|_| true);
        Ok(snapshot)
    }

    /// The content hash over the entries whose path passes `keep`.
    pub fn hash_where(&self, keep: impl Fn(&str) -> bool) -> blake3::Hash {
        let mut hasher = blake3::Hasher::new();
        for f in self.files.iter().filter(|f| keep(&f.path)) {
            hasher.update(b"F");
            hasher.update(&f.mode.to_le_bytes());
            hash_field(&mut hasher, f.path.as_bytes());
            hash_field(&mut hasher, &f.content);
        }
        for (path, target) in self.links.iter().filter(|(p, _)| keep(p)) {
            hasher.update(b"L");
            hash_field(&mut hasher, path.as_bytes());
            hash_field(&mut hasher, target.as_encoded_bytes());
        }
        for e in self.others.iter().filter(|e| keep(&e.path)) {
            hasher.update(&[e.kind]);
            hasher.update(&e.mode.to_le_bytes());
            hash_field(&mut hasher, e.path.as_bytes());
        }
        hasher.finalize()
    }

    /// This tree as it is after `overlay` is copied over `target/` with [`copy_tree`]:
    /// overlay files replace what stood at their paths (and at the directories on the
    /// way), everything else stays.
    pub fn overlaid(&self, target: &str, overlay: &TreeSnapshot) -> TreeSnapshot {
        let placed: Vec<String> = overlay
            .files
            .iter()
            .map(|f| format!("{target}/{}", f.path))
            .collect();
        let displaced = |path: &str| {
            placed.iter().any(|p| {
                p == path
                    || p.strip_prefix(path)
                        .is_some_and(|rest| rest.starts_with('/'))
                    || path
                        .strip_prefix(p.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            })
        };
        let mut files: Vec<TreeFile> = self
            .files
            .iter()
            .filter(|f| !displaced(&f.path))
            .cloned()
            .chain(overlay.files.iter().zip(&placed).map(|(f, p)| TreeFile {
                path: p.clone(),
                content: f.content.clone(),
                executable: f.executable,
                mode: f.mode,
            }))
            .collect();
        files.sort_by(|a, b| a.path.cmp(&b.path));
        let links = self
            .links
            .iter()
            .filter(|(p, _)| !displaced(p))
            .cloned()
            .collect();
        // The overlay's directories take its modes (as [`copy_tree`] leaves them); a
        // directory where the overlay puts a file is gone.
        let overlay_dirs: Vec<TreeEntry> = overlay
            .others
            .iter()
            .filter(|e| e.kind == b'd')
            .map(|e| TreeEntry {
                path: format!("{target}/{}", e.path),
                kind: e.kind,
                mode: e.mode | COPIED_DIR_BITS,
            })
            .collect();
        let mut others: Vec<TreeEntry> = self
            .others
            .iter()
            .filter(|e| {
                !placed.iter().any(|p| {
                    p == &e.path
                        || e.path
                            .strip_prefix(p.as_str())
                            .is_some_and(|rest| rest.starts_with('/'))
                }) && !overlay_dirs.iter().any(|d| d.path == e.path)
            })
            .cloned()
            .chain(overlay_dirs.iter().cloned())
            .collect();
        others.sort_by(|a, b| a.path.cmp(&b.path));
        let mut out = TreeSnapshot {
            files,
            links,
            others,
            hash: self.hash,
        };
        out.hash = out.hash_where(|_| true);
        out
    }

    /// The file at `path` (relative, `/`-separated), if present.
    ///
    /// A linear search: the walk orders names per directory, which is not the order of
    /// the joined paths (`feature_list/a` comes before `feature_list.json` in the walk,
    /// after it as a string), so a binary search could miss a file that is there.
    pub fn get(&self, path: &str) -> Option<&TreeFile> {
        self.files.iter().find(|f| f.path == path)
    }
}

/// How much a tree holds, counted up to its limits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeSize {
    /// Within both limits: bytes of regular files, and entries of every kind.
    Within {
        /// Bytes of the regular files.
        bytes: u64,
        /// Files, directories, symlinks and special files.
        entries: u64,
    },
    /// More bytes of regular files than the limit.
    OverBytes,
    /// More entries than the limit (empty files and directories count too).
    OverEntries,
}

/// The bytes of the regular files and the entries of every kind under `root` (`.git`
/// left out, symlinks not followed), counted until they pass `max_bytes` or
/// `max_entries`, so that a huge tree is refused before anything reads or copies it,
/// and a tree of a million empty files before anything walks it again.
pub fn tree_size_within(root: &Path, max_bytes: u64, max_entries: u64) -> Result<TreeSize> {
    let mut bytes: u64 = 0;
    let mut entries: u64 = 0;
    for entry in walk_without_git(root) {
        let entry = entry.map_err(|e| walk_error(root, e))?;
        if entry.depth() == 0 {
            continue;
        }
        entries += 1;
        if entries > max_entries {
            return Ok(TreeSize::OverEntries);
        }
        if entry.file_type().is_file() {
            let len = entry.metadata().map_err(|e| walk_error(root, e))?.len();
            bytes = bytes.saturating_add(len);
            if bytes > max_bytes {
                return Ok(TreeSize::OverBytes);
            }
        }
    }
    Ok(TreeSize::Within { bytes, entries })
}

fn hash_field(hasher: &mut blake3::Hasher, bytes: &[u8]) {
    hasher.update(&(bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

fn walk_without_git(root: &Path) -> impl Iterator<Item = walkdir::Result<walkdir::DirEntry>> {
    WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.depth() == 0 || e.file_name() != GIT_DIR)
}

fn walk_error(root: &Path, e: walkdir::Error) -> Error {
    let path = e.path().unwrap_or(root).display().to_string();
    match e.into_io_error() {
        Some(io) => Error::io(format!("cannot walk '{path}'"), io),
        None => Error::Tool(format!("cannot walk '{path}': filesystem loop")),
    }
}

/// `path` relative to `root`, with `/` separators, each component as [`name_text`]
/// gives it: two paths that differ in any byte are two strings.
pub fn relative_slash_path(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| name_text(c.as_os_str()))
        .collect::<Vec<_>>()
        .join("/")
}

/// Permission bits every copied directory keeps, whatever its source's: the harness
/// must be able to fill it and remove it again.
pub const COPIED_DIR_BITS: u32 = 0o700;
/// A file name as text without losing a byte: valid UTF-8 stays as it is, a byte that is
/// not valid UTF-8 becomes U+FFFD followed by its two hex digits (`\xff` → `�ff`), and a
/// U+FFFD the name itself holds is written twice. Names are bytes: this way two names that
/// differ only in invalid UTF-8 are two strings (a lossy conversion makes them one, and a
/// deleted test file would go uncounted), and every UTF-8 name without U+FFFD is its own
/// text.
pub fn name_text(name: &std::ffi::OsStr) -> std::borrow::Cow<'_, str> {
    use std::fmt::Write as _;
    use std::os::unix::ffi::OsStrExt;
    let bytes = name.as_bytes();
    if let Ok(text) = std::str::from_utf8(bytes)
        && !text.contains('\u{fffd}')
    {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(bytes.len() + 8);
    for chunk in bytes.utf8_chunks() {
        out.push_str(&chunk.valid().replace('\u{fffd}', "\u{fffd}\u{fffd}"));
        for byte in chunk.invalid() {
            // Writing to a String cannot fail.
            let _ = write!(out, "\u{fffd}{byte:02x}");
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Copies the tree under `src` into `dst` (created if needed), keeping permissions and
/// copying symlinks as symlinks. With `skip_git`, every `.git` is left out, a nested
/// repository's too: what a check's copy holds is what the snapshot hashes and the
/// tree limits count, none of which looks into a `.git`.
pub fn copy_tree(src: &Path, dst: &Path, skip_git: bool) -> Result<()> {
    copy_tree_except(src, dst, skip_git, |_| false)
}

/// [`copy_tree`], leaving out every entry whose relative `/`-separated path `skip`
/// matches (a directory with everything under it). Directories keep their permission
/// bits, with [`COPIED_DIR_BITS`] added; FIFOs, sockets and devices are not copied.
pub fn copy_tree_except(
    src: &Path,
    dst: &Path,
    skip_git: bool,
    skip: impl Fn(&str) -> bool,
) -> Result<()> {
    if std::fs::symlink_metadata(dst).is_ok_and(|m| !m.file_type().is_dir()) {
        remove_any(dst)?;
    }
    std::fs::create_dir_all(dst).io_context(|| format!("cannot create '{}'", dst.display()))?;
    let walker = WalkDir::new(src)
        .follow_links(false)
        .into_iter()
        .filter_entry(|e| {
            !(skip_git && e.depth() > 0 && e.file_name() == GIT_DIR)
                && (e.depth() == 0 || !skip(&relative_slash_path(src, e.path())))
        });
    // Set once the directories are filled, so that a read-only one can be filled.
    let mut dir_modes = Vec::new();
    for entry in walker {
        let entry = entry.map_err(|e| walk_error(src, e))?;
        if entry.depth() == 0 {
            continue;
        }
        let rel = entry.path().strip_prefix(src).unwrap_or(entry.path());
        let target = dst.join(rel);
        let ft = entry.file_type();
        // Whatever stands at the target is replaced, never written through: a symlink
        // there (planted by an agent) could otherwise lead a copy outside `dst`.
        if let Ok(existing) = std::fs::symlink_metadata(&target) {
            let keep_dir = ft.is_dir() && existing.file_type().is_dir();
            if !keep_dir {
                remove_any(&target)?;
            }
        }
        if ft.is_dir() {
            std::fs::create_dir_all(&target)
                .io_context(|| format!("cannot create '{}'", target.display()))?;
            dir_modes.push((target, mode_of(&entry) | COPIED_DIR_BITS));
        } else if ft.is_symlink() {
            let link = std::fs::read_link(entry.path())
                .io_context(|| format!("cannot read link '{}'", entry.path().display()))?;
            std::os::unix::fs::symlink(&link, &target)
                .io_context(|| format!("cannot create link '{}'", target.display()))?;
        } else if ft.is_file() {
            std::fs::copy(entry.path(), &target).io_context(|| {
                format!(
                    "cannot copy '{}' to '{}'",
                    entry.path().display(),
                    target.display()
                )
            })?;
        }
    }
    for (dir, mode) in dir_modes.iter().rev() {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(*mode))
            .io_context(|| format!("cannot set the mode of '{}'", dir.display()))?;
    }
    Ok(())
}

/// Removes a file, symlink or whole directory at `path` (never following a link).
fn remove_any(path: &Path) -> Result<()> {
    let meta = std::fs::symlink_metadata(path)
        .io_context(|| format!("cannot inspect '{}'", path.display()))?;
    if meta.file_type().is_dir() {
        std::fs::remove_dir_all(path)
    } else {
        std::fs::remove_file(path)
    }
    .io_context(|| format!("cannot remove '{}'", path.display()))
}

/// Resolves `rel` inside `root` for writing or deleting, refusing anything that would
/// touch a file outside: absolute paths, `..`, and symlinks (in any existing component)
/// that lead out of `root`. The returned path may not exist yet.
pub fn confine(root: &Path, rel: &str) -> Result<PathBuf> {
    let escape = |reason| Error::PathEscape {
        path: rel.to_string(),
        reason,
    };
    let given = Path::new(rel);
    if rel.is_empty() {
        return Err(escape("empty path"));
    }
    let mut clean = PathBuf::new();
    for component in given.components() {
        match component {
            Component::Normal(c) => clean.push(c),
            Component::CurDir => {}
            Component::ParentDir => return Err(escape("contains '..'")),
            Component::RootDir | Component::Prefix(_) => return Err(escape("absolute path")),
        }
    }
    if clean.as_os_str().is_empty() {
        return Err(escape("names the work directory itself"));
    }
    let root_real = root
        .canonicalize()
        .io_context(|| format!("cannot resolve '{}'", root.display()))?;
    // Every existing prefix, including the file itself when it is a symlink, must
    // resolve inside the root: a link anywhere on the way could lead out.
    let mut current = root_real.clone();
    for component in clean.components() {
        current.push(component);
        match std::fs::symlink_metadata(&current) {
            Ok(_) => {
                let real = current
                    .canonicalize()
                    .map_err(|_| escape("dangling symlink"))?;
                if !real.starts_with(&root_real) {
                    return Err(escape("a symlink on the way leads outside"));
                }
            }
            Err(_) => break,
        }
    }
    Ok(root_real.join(clean))
}

/// Refuses `path` as a file to (re)write when it exists and is not a regular file (a
/// symlink is judged by what it points to). Exit 2, naming the path.
pub fn check_output_file(path: &Path) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(meta) => Err(Error::BadInput(format!(
            "'{}' is not a regular file (it is {}); refusing to replace it",
            path.display(),
            file_kind(meta.file_type())
        ))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io(format!("cannot read '{}'", path.display()), e)),
    }
}

/// What a file type is, in words, for messages.
pub fn file_kind(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if std::os::unix::fs::FileTypeExt::is_char_device(&t) {
        "a character device"
    } else if std::os::unix::fs::FileTypeExt::is_block_device(&t) {
        "a block device"
    } else if std::os::unix::fs::FileTypeExt::is_fifo(&t) {
        "a FIFO"
    } else if std::os::unix::fs::FileTypeExt::is_socket(&t) {
        "a socket"
    } else if t.is_file() {
        "a regular file"
    } else {
        "not a file"
    }
}

/// Writes `bytes` to a temporary file beside `path`, syncs it, and renames it over
/// `path`, so that readers see the old or the new content, never half of it. The file
/// gets the mode any new file gets (0666 less the umask: 0644 under umask 022), not a
/// temporary file's private 0600: results are meant to be read by others. An existing
/// `path` that is not a regular file (a device such as /dev/null, a FIFO, a directory)
/// is refused: the rename would replace it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    check_output_file(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    // The kernel takes the umask (or the directory's default ACL) off the mode at
    // creation, as for any `File::create`, so it need not be read here.
    let mut tmp = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .io_context(|| format!("cannot create a temporary file in '{}'", dir.display()))?;
    std::io::Write::write_all(&mut tmp, bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .io_context(|| format!("cannot write '{}'", path.display()))?;
    tmp.persist(path)
        .map_err(|e| Error::io(format!("cannot replace '{}'", path.display()), e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checks_copy_holds_exactly_what_the_snapshot_hashes_and_the_limits_count() {
        let src = tempfile::tempdir().unwrap();
        let s = src.path();
        for dir in [".git/objects", "sub/.git/objects", "sub/deeper/.git"] {
            std::fs::create_dir_all(s.join(dir)).unwrap();
        }
        for i in 0..50 {
            std::fs::write(s.join(format!("sub/.git/objects/{i}")), "x".repeat(1000)).unwrap();
        }
        std::fs::write(s.join("sub/deeper/.git/note"), "hidden").unwrap();
        std::fs::write(s.join("sub/a.txt"), "a").unwrap();
        std::fs::write(s.join("b.txt"), "b").unwrap();
        let dst = tempfile::tempdir().unwrap();
        let copy = dst.path().join("copy");
        copy_tree(s, &copy, true).unwrap();
        assert!(!copy.join("sub/.git").exists());
        assert!(!copy.join("sub/deeper/.git").exists());
        assert_eq!(
            TreeSnapshot::read(s).unwrap().hash,
            TreeSnapshot::read(&copy).unwrap().hash
        );
        let copied = WalkDir::new(&copy).min_depth(1).into_iter().count() as u64;
        assert_eq!(
            tree_size_within(s, u64::MAX, u64::MAX).unwrap(),
            TreeSize::Within {
                bytes: 2,
                entries: copied
            }
        );
    }

    #[test]
    fn a_file_is_found_whatever_names_sort_around_it() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("feature_list")).unwrap();
        let names = [
            "feature_list/a",
            "feature_list/b",
            "feature_list/c",
            "feature_list.json",
        ];
        for name in names {
            std::fs::write(root.path().join(name), name).unwrap();
        }
        let tree = TreeSnapshot::read(root.path()).unwrap();
        for name in names {
            assert!(tree.get(name).is_some(), "{name}");
        }
    }

    #[test]
    fn names_that_differ_only_in_invalid_utf8_are_two_paths() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let root = tempfile::tempdir().unwrap();
        let tests = root.path().join("tests");
        std::fs::create_dir(&tests).unwrap();
        for name in [
            &b"test_\xff.py"[..],
            b"test_\xfe.py",
            "test_\u{fffd}ff.py".as_bytes(),
        ] {
            std::fs::write(tests.join(OsStr::from_bytes(name)), "def test_a(): pass\n").unwrap();
        }
        let tree = TreeSnapshot::read(root.path()).unwrap();
        let paths: Vec<&str> = tree.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths.len(), 3, "{paths:?}");
        let mut unique = paths.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 3, "{paths:?}");
        assert!(paths.contains(&"tests/test_\u{fffd}ff.py"), "{paths:?}");
        assert!(
            paths.contains(&"tests/test_\u{fffd}\u{fffd}ff.py"),
            "{paths:?}"
        );
        assert_eq!(name_text(OsStr::new("plain é.py")), "plain é.py");
    }

    #[test]
    fn confine_rejects_absolute_parent_and_symlink_escapes() {
        let outside = tempfile::tempdir().unwrap();
        let root = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("out")).unwrap();
        for bad in ["/tmp/x", "../x", "a/../../x", "out/x", "out", ""] {
            assert!(
                matches!(confine(root.path(), bad), Err(Error::PathEscape { .. })),
                "{bad} was accepted"
            );
        }
        let ok = confine(root.path(), "src/new/file.py").unwrap();
        assert!(ok.starts_with(root.path().canonicalize().unwrap()));
    }

    #[test]
    fn symlink_inside_the_root_is_allowed() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("real")).unwrap();
        std::os::unix::fs::symlink("real", root.path().join("alias")).unwrap();
        assert!(confine(root.path(), "alias/f.txt").is_ok());
    }

    #[test]
    fn snapshot_hash_changes_with_content_and_ignores_git() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("a.txt"), "one").unwrap();
        let first = TreeSnapshot::read(root.path()).unwrap();
        std::fs::create_dir(root.path().join(".git")).unwrap();
        std::fs::write(root.path().join(".git/HEAD"), "x").unwrap();
        assert_eq!(TreeSnapshot::read(root.path()).unwrap().hash, first.hash);
        std::fs::write(root.path().join("a.txt"), "two").unwrap();
        assert_ne!(TreeSnapshot::read(root.path()).unwrap().hash, first.hash);
    }

    #[test]
    fn copy_over_a_planted_symlink_replaces_the_link_and_writes_nothing_outside() {
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim.txt");
        std::fs::write(&victim, "untouched").unwrap();
        let src = tempfile::tempdir().unwrap();
        std::fs::write(src.path().join("t.py"), "pristine").unwrap();
        let dst = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(&victim, dst.path().join("t.py")).unwrap();
        copy_tree(src.path(), dst.path(), false).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        assert_eq!(
            std::fs::read_to_string(dst.path().join("t.py")).unwrap(),
            "pristine"
        );
    }

    #[test]
    fn an_overlaid_snapshot_hashes_like_the_tree_the_copy_produces() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("tests")).unwrap();
        std::fs::write(root.path().join("tests/a.sh"), "weakened").unwrap();
        std::fs::write(root.path().join("src.sh"), "code").unwrap();
        let oracle = tempfile::tempdir().unwrap();
        std::fs::write(oracle.path().join("a.sh"), "pristine").unwrap();
        std::fs::write(oracle.path().join("b.sh"), "deleted by the agent").unwrap();
        let tree = TreeSnapshot::read(root.path()).unwrap();
        let predicted = tree.overlaid("tests", &TreeSnapshot::read(oracle.path()).unwrap());
        copy_tree(oracle.path(), &root.path().join("tests"), false).unwrap();
        assert_eq!(
            predicted.hash,
            TreeSnapshot::read(root.path()).unwrap().hash
        );
        assert_ne!(predicted.hash, tree.hash);
    }

    #[test]
    fn copy_tree_skips_git_and_keeps_exec_bits() {
        let src = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(src.path().join(".git")).unwrap();
        std::fs::write(src.path().join(".git/HEAD"), "x").unwrap();
        std::fs::create_dir_all(src.path().join("bin")).unwrap();
        let tool = src.path().join("bin/tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let dst = tempfile::tempdir().unwrap();
        copy_tree(src.path(), dst.path(), true).unwrap();
        assert!(!dst.path().join(".git").exists());
        let mode = std::fs::metadata(dst.path().join("bin/tool"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111);
    }
}
