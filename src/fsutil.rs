//! File-tree helpers: copying a tree, hashing it, and confining paths to a directory;
//! the harness's scratch and directories of a bounded size.

use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use walkdir::WalkDir;

use crate::error::{Error, IoContext, Result};

mod bounded;
mod scratch;
mod tree_snapshot;

pub use bounded::{Bound, BoundedDir, Fill, kernel_bounds};
pub use scratch::{
    PROCESS_DIR_PREFIX, clear_dead_leftovers, clear_leftovers, clear_process_scratch,
    keep_out_of_process_dir, mounts_under, out_of_room, process_scratch, remove_tree, scratch_dir,
    scratch_full, scratch_root,
};
pub use tree_snapshot::{TreeEntry, TreeFile, TreeSnapshot};

/// Name of the directory that never takes part in copies, hashes or test discovery.
pub const GIT_DIR: &str = ".git";

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

/// What [`open_regular`] found at a path.
#[derive(Debug)]
pub enum Opened {
    /// A regular file, open for reading, with its metadata (from `fstat` on the open
    /// descriptor, so it is the file that was opened).
    Regular(std::fs::File, std::fs::Metadata),
    /// Something else: `l` a symlink (not followed), else a kind letter of
    /// [`TreeEntry::kind`].
    NotRegular(u8),
    /// Nothing (or a directory component that is missing).
    Missing,
}

/// Opens `path` for reading without ever blocking on what stands there: `O_NONBLOCK`
/// (a FIFO with no writer would block a plain open forever), `O_NOCTTY`, and
/// `O_NOFOLLOW` unless `follow_link`; then `fstat` on the descriptor says whether it is
/// a regular file. A process left running can put a FIFO or a device where a file was
/// a moment before; this open sees what is there when it opens, never something that
/// blocks. I/O errors other than a missing path are errors.
pub fn open_regular(path: &Path, follow_link: bool) -> std::io::Result<Opened> {
    use nix::libc;
    use std::os::unix::fs::OpenOptionsExt;
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
    if !follow_link {
        flags |= libc::O_NOFOLLOW;
    }
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) => {
            return match e.raw_os_error() {
                Some(libc::ENOENT) | Some(libc::ENOTDIR) => Ok(Opened::Missing),
                // O_NOFOLLOW on a symlink.
                Some(libc::ELOOP) => Ok(Opened::NotRegular(b'l')),
                // open(2) of a socket.
                Some(libc::ENXIO) | Some(libc::EOPNOTSUPP) => Ok(Opened::NotRegular(b's')),
                _ => Err(e),
            };
        }
    };
    let meta = file.metadata()?;
    if meta.is_file() {
        Ok(Opened::Regular(file, meta))
    } else {
        Ok(Opened::NotRegular(kind_of(meta.file_type())))
    }
}

/// What a kind letter of [`Opened::NotRegular`] is, in words (`a FIFO`, `a symlink`).
pub fn kind_words(kind: u8) -> &'static str {
    match kind {
        b'l' => "a symlink",
        b'd' => "a directory",
        b'p' => "a FIFO",
        b's' => "a socket",
        b'c' => "a character device",
        b'b' => "a block device",
        _ => "not a file",
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
            copy_regular(entry.path(), &target)?;
        }
    }
    for (dir, mode) in dir_modes.iter().rev() {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(*mode))
            .io_context(|| format!("cannot set the mode of '{}'", dir.display()))?;
    }
    Ok(())
}

/// Copies the regular file at `src` to the new file `target` with its permission
/// bits. What stands at `src` is opened without blocking and must still be a regular
/// file (a FIFO or a device swapped in since the walk is not copied, as the walk skips
/// them); at most the length `fstat` gave is copied.
fn copy_regular(src: &Path, target: &Path) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let failed = || format!("cannot copy '{}' to '{}'", src.display(), target.display());
    let (file, meta) = match open_regular(src, false).io_context(failed)? {
        Opened::Regular(file, meta) => (file, meta),
        Opened::NotRegular(_) | Opened::Missing => return Ok(()),
    };
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .open(target)
        .io_context(failed)?;
    std::io::copy(&mut std::io::Read::take(file, meta.len()), &mut out).io_context(failed)?;
    out.set_permissions(std::fs::Permissions::from_mode(
        meta.permissions().mode() & 0o7777,
    ))
    .io_context(failed)
}

/// Removes what [`remove_any`] removes; nothing when `path` is absent.
pub fn remove_if_present(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        _ => remove_any(path),
    }
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
    write_atomic_with(path, |out| {
        out.write_all(bytes)
            .io_context(|| format!("cannot write '{}'", path.display()))
    })
}

/// Writes `path` atomically like [`write_atomic`], its bytes written by `write` into a
/// buffered temporary file beside it, so that a large file is never held in memory.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> Result<()>,
) -> Result<()> {
    use std::io::Write;
    check_output_file(path)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    // The kernel takes the umask (or the directory's default ACL) off the mode at
    // creation, as for any `File::create`, so it need not be read here.
    let mut tmp = tempfile::Builder::new()
        .permissions(std::fs::Permissions::from_mode(0o666))
        .tempfile_in(dir)
        .io_context(|| format!("cannot create a temporary file in '{}'", dir.display()))?;
    {
        let mut out = std::io::BufWriter::with_capacity(64 * 1024, &mut tmp);
        write(&mut out)?;
        out.flush()
            .io_context(|| format!("cannot write '{}'", path.display()))?;
    }
    tmp.as_file()
        .sync_all()
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
