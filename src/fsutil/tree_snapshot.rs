//! A snapshot of a file tree: every entry with its type, mode and content (regular
//! files read without ever blocking on what stands there), and a content hash over all
//! of it.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{
    COPIED_DIR_BITS, Opened, kind_of, mode_of, open_regular, relative_slash_path, walk_error,
    walk_without_git,
};
use crate::error::{IoContext, Result};

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
                let cannot = || format!("cannot read '{}'", entry.path().display());
                // Opened without blocking: a process left running may have put a FIFO
                // or a device there since the walk saw a file.
                match open_regular(entry.path(), false).io_context(cannot)? {
                    Opened::Regular(file, meta) => {
                        let mut content = Vec::new();
                        std::io::Read::read_to_end(
                            &mut std::io::Read::take(file, meta.len()),
                            &mut content,
                        )
                        .io_context(cannot)?;
                        let mode = meta.permissions().mode() & 0o7777;
                        files.push(TreeFile {
                            path: rel,
                            content,
                            executable: mode & 0o111 != 0,
                            mode,
                        });
                    }
                    Opened::NotRegular(kind) if kind != b'l' => others.push(TreeEntry {
                        path: rel,
                        kind,
                        mode: mode_of(&entry),
                    }),
                    // Gone, or replaced by a symlink: what the copy will not see either.
                    Opened::NotRegular(_) | Opened::Missing => {}
                }
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

    /// This tree without the entries whose path `drop` matches.
    pub fn without(&self, drop: impl Fn(&str) -> bool) -> TreeSnapshot {
        let mut out = TreeSnapshot {
            files: self
                .files
                .iter()
                .filter(|f| !drop(&f.path))
                .cloned()
                .collect(),
            links: self
                .links
                .iter()
                .filter(|(p, _)| !drop(p))
                .cloned()
                .collect(),
            others: self
                .others
                .iter()
                .filter(|e| !drop(&e.path))
                .cloned()
                .collect(),
            hash: self.hash,
        };
        out.hash = out.hash_where(|_| true);
        out
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

fn hash_field(hasher: &mut blake3::Hasher, bytes: &[u8]) {
    hasher.update(&(bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fsutil::{copy_tree, name_text};

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
}
