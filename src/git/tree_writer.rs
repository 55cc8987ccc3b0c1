//! The trees of a work directory written in the harness's own process, with gix, into
//! the harness's object store: what `git add -A && git write-tree` in an index that
//! starts empty gives, and the same with the git-ignored files a check reads added,
//! without starting git (two or three processes an observation before).
//!
//! What `git add -A` takes, as git 2.47 does it with the store's configuration (no
//! filters, no global excludes, `core.filemode` and `core.symlinks` on): every regular
//! file and symlink below the top but `.git`, in directories that no `.gitignore` of
//! the tree excludes (a deeper file's patterns over a shallower one's, the last
//! matching line of a file winning, `!` bringing a path back unless a directory above
//! it is excluded; a `.gitignore` that is not a regular file is not read, as git does
//! not follow one that is a symlink); a file is `100755` when its owner may execute
//! it; FIFOs, sockets and devices are left out; empty directories give no tree. A
//! directory below the top that holds a `.git` entry (a nested repository) is recorded
//! with every file in it that a check can read, wherever it lies, `.git` left out.
//!
//! Where the two could differ, the harness's reading is the stricter one, and the
//! tests say so: the bytes of a file are hashed as they are (git would convert a file
//! that `.gitattributes` marks `text`, `eol` or `ident`, and apply a `working-tree-
//! encoding`; the harness never runs or emulates a conversion, so such a file reads as
//! changed where git might call it clean); a path component spelled `.git` in another
//! case, which git refuses to add, makes the tree unobservable here too.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use gix::bstr::{BStr, BString};
use gix::objs::tree::{Entry, EntryKind};

use crate::error::{Error, IoContext, Result};
use crate::fsutil::{GIT_DIR, Opened};

/// The trees of a work directory and the ignored files the checks read.
pub(super) struct Written {
    /// The tree with the ignored files a check reads.
    pub seen: String,
    /// The tree as `git add -A` gives it.
    pub added: String,
    /// The git-ignored files a check reads: their paths as bytes and as text, in
    /// git's order.
    pub forced: Vec<(Vec<u8>, String)>,
    /// The tree holds what git could take otherwise: a `.gitattributes` (which may ask
    /// `git add` to convert a file) or a nested repository (which `git add` takes as a
    /// gitlink), so that `added` is this harness's stricter reading, not git's.
    pub unlike_git: bool,
    /// A `.gitignore` excluded some file or directory from `added`.
    pub excluded_any: bool,
}

/// Whether a check can read the file at a `/`-separated path relative to the work
/// directory (paths as [`crate::fsutil::relative_slash_path`] gives them).
pub type SeenByChecks<'a> = &'a dyn Fn(&str) -> bool;

/// Where a directory lies, which says what of it a tree takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// Not excluded: `git add -A` takes what no `.gitignore` excludes.
    Plain,
    /// Excluded by a `.gitignore`: only the seen tree takes its files a check reads.
    Ignored,
    /// In a nested repository: both trees take its files a check reads.
    Nested,
}

/// Writes the trees of `work_dir` into `store` (which exists).
pub(super) fn write(work_dir: &Path, store: &Path, seen: SeenByChecks<'_>) -> Result<Written> {
    let repo = gix::open_opts(store, gix::open::Options::isolated())
        .map_err(|e| Error::Tool(format!("cannot open '{}': {e}", store.display())))?;
    let mut writer = Writer {
        repo,
        seen,
        ignores: gix_ignore::Search::default(),
        forced: Vec::new(),
        work_dir,
        unlike_git: false,
        excluded_any: false,
    };
    let (added, seen_tree) = writer.walk()?;
    let added = writer.tree(added)?;
    let seen_tree = writer.tree(seen_tree)?;
    let mut forced = std::mem::take(&mut writer.forced);
    forced.sort();
    Ok(Written {
        seen: seen_tree,
        added,
        forced,
        unlike_git: writer.unlike_git,
        excluded_any: writer.excluded_any,
    })
}

struct Writer<'a> {
    repo: gix::Repository,
    seen: SeenByChecks<'a>,
    /// The patterns of the `.gitignore` files of the directories being walked, the
    /// deepest last.
    ignores: gix_ignore::Search,
    forced: Vec<(Vec<u8>, String)>,
    work_dir: &'a Path,
    unlike_git: bool,
    excluded_any: bool,
}

/// A directory of the walk: the entries it has left to take, and what it gave so far.
struct Level {
    dir: PathBuf,
    /// From the top, as bytes and as text.
    rel: Vec<u8>,
    rel_text: String,
    place: Place,
    /// Its entries not taken yet, the next last.
    left: Vec<(OsString, std::fs::FileType)>,
    /// Its `.gitignore` was read into the patterns.
    pushed: bool,
    added: Vec<Entry>,
    seen: Vec<Entry>,
}

impl Writer<'_> {
    /// The entries of the work directory for the tree `git add -A` gives and for the
    /// tree the checks saw. The walk keeps its directories in a list of its own, not in
    /// frames of the harness's stack: an agent's directories may nest as deep as a
    /// path allows.
    fn walk(&mut self) -> Result<(Vec<Entry>, Vec<Entry>)> {
        let top = self.work_dir.to_path_buf();
        let mut levels = vec![self.level(top, Vec::new(), String::new(), Place::Plain)?];
        loop {
            let level = levels.last_mut().expect("the walk ends with the top");
            if let Some((name, kind)) = level.left.pop() {
                if let Some(inner) = self.take(level, &name, kind)? {
                    levels.push(inner);
                }
                continue;
            }
            let done = levels.pop().expect("a level is there");
            if done.pushed {
                self.ignores.patterns.pop();
            }
            let Some(parent) = levels.last_mut() else {
                return Ok((done.added, done.seen));
            };
            let name = done.dir.file_name().expect("below the top").as_bytes();
            if !done.added.is_empty() {
                let id = self.tree_id(done.added)?;
                parent.added.push(self.entry(EntryKind::Tree, name, id));
            }
            if !done.seen.is_empty() {
                let id = self.tree_id(done.seen)?;
                parent.seen.push(self.entry(EntryKind::Tree, name, id));
            }
        }
    }

    /// Takes the entry `name` of `level`: a file or symlink into its trees, a directory
    /// as the level to walk next.
    fn take(
        &mut self,
        level: &mut Level,
        name: &OsString,
        kind: std::fs::FileType,
    ) -> Result<Option<Level>> {
        let place = level.place;
        let bytes = name.as_bytes();
        if bytes == GIT_DIR.as_bytes() {
            return Ok(None);
        }
        let child = level.dir.join(name);
        if bytes.eq_ignore_ascii_case(GIT_DIR.as_bytes()) {
            return Err(Error::Tool(format!(
                "'{}' cannot be recorded: git refuses a path named '{GIT_DIR}' in any case",
                child.display()
            )));
        }
        if place == Place::Plain && bytes == b".gitattributes" {
            self.unlike_git = true;
        }
        let child_rel = joined(&level.rel, bytes, b"/");
        let name_text = crate::fsutil::name_text(name);
        let child_text = if level.rel_text.is_empty() {
            name_text.into_owned()
        } else {
            format!("{}/{name_text}", level.rel_text)
        };
        if kind.is_dir() {
            let inner = if place != Place::Nested
                && std::fs::symlink_metadata(child.join(GIT_DIR)).is_ok()
            {
                self.unlike_git = true;
                Place::Nested
            } else if place == Place::Plain && self.ignored(&child_rel, true) {
                self.excluded_any = true;
                Place::Ignored
            } else {
                place
            };
            return self.level(child, child_rel, child_text, inner).map(Some);
        }
        if !(kind.is_file() || kind.is_symlink()) {
            return Ok(None);
        }
        let (added, seen) = match place {
            Place::Plain if !self.ignored(&child_rel, false) => (true, true),
            Place::Nested => {
                let read = (self.seen)(&child_text);
                (read, read)
            }
            Place::Plain | Place::Ignored => {
                self.excluded_any = true;
                let read = (self.seen)(&child_text);
                if read {
                    self.forced.push((child_rel, child_text));
                }
                (false, read)
            }
        };
        if !(added || seen) {
            return Ok(None);
        }
        if let Some((kind, id)) = self.blob(&child, kind.is_symlink(), place)? {
            let entry = self.entry(kind, bytes, id);
            if added {
                level.added.push(entry.clone());
            }
            if seen {
                level.seen.push(entry);
            }
        }
        Ok(None)
    }

    /// The directory `dir` as a level of the walk: its entries read, its `.gitignore`
    /// (where git reads one) among the patterns.
    fn level(
        &mut self,
        dir: PathBuf,
        rel: Vec<u8>,
        rel_text: String,
        place: Place,
    ) -> Result<Level> {
        let cannot = |e: std::io::Error| Error::io(format!("cannot read '{}'", dir.display()), e);
        let mut left = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(cannot)? {
            let entry = entry.map_err(cannot)?;
            let kind = entry.file_type().map_err(cannot)?;
            left.push((entry.file_name(), kind));
        }
        // Taken from the end: in git's order, byte by byte.
        left.sort_by(|a, b| b.0.as_bytes().cmp(a.0.as_bytes()));
        let pushed = place == Place::Plain && self.push_gitignore(&dir)?;
        Ok(Level {
            dir,
            rel,
            rel_text,
            place,
            left,
            pushed,
            added: Vec::new(),
            seen: Vec::new(),
        })
    }

    /// Reads the `.gitignore` of `dir` into the patterns when it is a regular file;
    /// whether it did.
    fn push_gitignore(&mut self, dir: &Path) -> Result<bool> {
        let path = dir.join(".gitignore");
        let Opened::Regular(mut file, _) = crate::fsutil::open_regular(&path, false)
            .io_context(|| format!("cannot open '{}'", path.display()))?
        else {
            return Ok(false);
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .io_context(|| format!("cannot read '{}'", path.display()))?;
        self.ignores
            .add_patterns_buffer(
                &bytes,
                path,
                Some(self.work_dir),
                gix_ignore::search::Ignore::default(),
            )
            .io_context(|| format!("cannot read '{}'", dir.display()))?;
        Ok(true)
    }

    /// Whether the `.gitignore` files above `rel` exclude it.
    fn ignored(&self, rel: &[u8], is_dir: bool) -> bool {
        self.ignores
            .pattern_matching_relative_path(
                BStr::new(rel),
                Some(is_dir),
                gix::glob::pattern::Case::Sensitive,
            )
            .is_some_and(|m| !m.pattern.is_negative())
    }

    /// The blob of a file or symlink, written to the store, with its kind; `None` when
    /// what stands there now is neither (git leaves such a path out).
    fn blob(
        &self,
        path: &Path,
        link: bool,
        place: Place,
    ) -> Result<Option<(EntryKind, gix::ObjectId)>> {
        if link {
            let target = std::fs::read_link(path)
                .io_context(|| format!("cannot read link '{}'", path.display()))?;
            return Ok(Some((
                EntryKind::Link,
                self.write_blob(target.as_os_str().as_bytes())?,
            )));
        }
        let Opened::Regular(mut file, meta) = crate::fsutil::open_regular(path, false)
            .io_context(|| format!("cannot open '{}'", path.display()))?
        else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .io_context(|| format!("cannot read '{}'", path.display()))?;
        // `git add` takes the owner's execute bit; a nested repository's files were
        // always recorded with any execute bit.
        let bits = if place == Place::Nested { 0o111 } else { 0o100 };
        let kind = if meta.permissions().mode() & bits != 0 {
            EntryKind::BlobExecutable
        } else {
            EntryKind::Blob
        };
        Ok(Some((kind, self.write_blob(&bytes)?)))
    }

    fn write_blob(&self, bytes: &[u8]) -> Result<gix::ObjectId> {
        self.repo
            .write_blob(bytes)
            .map(|id| id.detach())
            .map_err(|e| Error::Tool(format!("cannot write a blob to the store: {e}")))
    }

    fn entry(&self, kind: EntryKind, name: &[u8], oid: gix::ObjectId) -> Entry {
        Entry {
            mode: kind.into(),
            filename: BString::from(name),
            oid,
        }
    }

    fn tree_id(&self, mut entries: Vec<Entry>) -> Result<gix::ObjectId> {
        entries.sort();
        self.repo
            .write_object(gix::objs::Tree { entries })
            .map(|id| id.detach())
            .map_err(|e| Error::Tool(format!("cannot write a tree to the store: {e}")))
    }

    fn tree(&self, entries: Vec<Entry>) -> Result<String> {
        self.tree_id(entries).map(|id| id.to_string())
    }
}

/// `a` and `b` joined by `sep` (just `b` when `a` is empty).
fn joined(a: &[u8], b: &[u8], sep: &[u8]) -> Vec<u8> {
    if a.is_empty() {
        return b.to_vec();
    }
    [a, sep, b].concat()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// Git's own trees of `work` in an index that starts empty, in `store`: `git add
    /// -A`, then the ignored files `seen` takes added with `--force`, as the harness
    /// asked git before it wrote the trees itself.
    fn as_git_writes(work: &Path, store: &Path, seen: SeenByChecks<'_>) -> (String, String) {
        let index = tempfile::tempdir().unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .args(args)
                .current_dir(work)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap())
                .env("GIT_DIR", store)
                .env("GIT_WORK_TREE", work)
                .env("GIT_INDEX_FILE", index.path().join("index"))
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .output()
                .unwrap();
            assert!(out.status.success(), "git {args:?}: {out:?}");
            String::from_utf8(out.stdout).unwrap()
        };
        git(&["add", "-A"]);
        let added = git(&["write-tree"]).trim().to_string();
        let ignored = git(&[
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
        ]);
        for path in ignored.split('\0').filter(|p| !p.is_empty() && seen(p)) {
            git(&["add", "-f", "--", path]);
        }
        (git(&["write-tree"]).trim().to_string(), added)
    }

    #[test]
    fn directories_nested_a_thousand_deep_are_recorded_as_git_records_them() {
        let work = tempfile::tempdir().unwrap();
        let store = tempfile::tempdir().unwrap();
        let store = store.path().join("trees.git");
        super::super::ensure_store(&store).unwrap();
        let mut dir = work.path().to_path_buf();
        for _ in 0..1_000 {
            dir.push("a");
        }
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("f"), "x\n").unwrap();
        // A stack of 1 MiB: a walk that recursed once a directory would overflow it
        // (a debug build's frame of it took some 7 KiB).
        let (path, ours) = (work.path().to_path_buf(), store.clone());
        let written = std::thread::Builder::new()
            .stack_size(1 << 20)
            .spawn(move || write(&path, &ours, &|_| true).map(|w| w.added))
            .unwrap()
            .join()
            .unwrap()
            .unwrap();
        let (added, _) = as_git_writes(work.path(), &store, &|_| true);
        assert_eq!(written, added);
    }

    #[test]
    fn the_trees_written_in_process_are_the_ones_git_writes_on_every_shape() {
        use std::os::unix::fs::PermissionsExt;
        let put = |d: &Path, path: &str, text: &str| {
            let path = d.join(path);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        };
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        put(d, "a.txt", "a\n");
        put(d, "src/b.rs", "b\n");
        put(d, "src/deep/er/c.py", "c\n");
        put(d, "a-b", "dash sorts before the directory a/\n");
        put(d, "a/x", "x\n");
        put(d, "run.sh", "#!/bin/sh\n");
        std::fs::set_permissions(d.join("run.sh"), std::fs::Permissions::from_mode(0o755)).unwrap();
        put(d, "group-x", "only the group may run it\n");
        std::fs::set_permissions(d.join("group-x"), std::fs::Permissions::from_mode(0o654))
            .unwrap();
        std::os::unix::fs::symlink("a.txt", d.join("link")).unwrap();
        std::os::unix::fs::symlink("/nowhere", d.join("dangling")).unwrap();
        std::fs::create_dir_all(d.join("empty/also-empty")).unwrap();
        nix::unistd::mkfifo(
            &d.join("fifo"),
            nix::sys::stat::Mode::from_bits_truncate(0o600),
        )
        .unwrap();
        put(
            d,
            ".gitignore",
            "*.log\n!keep.log\nbuild/\n/top-only.txt\ndoc/**/*.tmp\nnotes\n",
        );
        put(d, "x.log", "ignored\n");
        put(d, "keep.log", "brought back\n");
        put(d, "sub/y.log", "ignored below too\n");
        put(d, "sub/.gitignore", "!y.log\nlocal.txt\n");
        put(d, "sub/local.txt", "ignored by the deeper file\n");
        put(
            d,
            "sub/top-only.txt",
            "anchored pattern: not ignored here\n",
        );
        put(d, "top-only.txt", "ignored\n");
        put(d, "build/out.o", "ignored directory\n");
        put(
            d,
            "build/keep.log",
            "cannot be brought back from an ignored directory\n",
        );
        put(d, "doc/a/b/c.tmp", "ignored by **\n");
        put(d, "doc/a/b/c.md", "kept\n");
        put(d, "notes/n.txt", "a directory matched by a bare name\n");
        put(d, "unicode-é.txt", "é\n");
        put(d, "space name.txt", "s\n");
        put(d, ".hidden", "h\n");
        let store = tempfile::tempdir().unwrap();
        for (name, seen) in [
            ("every file read", &(|_: &str| true) as SeenByChecks<'_>),
            ("no log read", &|p: &str| !p.ends_with(".log")),
            ("nothing ignored read", &|p: &str| {
                !p.ends_with(".log") && !p.starts_with("build") && !p.ends_with("tmp")
            }),
        ] {
            let ours = store
                .path()
                .join(format!("ours-{}.git", name.replace(' ', "-")));
            let theirs = store
                .path()
                .join(format!("git-{}.git", name.replace(' ', "-")));
            for s in [&ours, &theirs] {
                super::super::ensure_store(s).unwrap();
            }
            let written = write(d, &ours, seen).unwrap();
            let (seen_tree, added) = as_git_writes(d, &theirs, seen);
            assert_eq!(written.added, added, "{name}: the tree of git add -A");
            assert_eq!(
                written.seen, seen_tree,
                "{name}: with the ignored files read"
            );
        }
    }

    #[test]
    fn a_file_git_would_convert_is_hashed_as_it_is_the_stricter_reading() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join(".gitattributes"), "*.txt text eol=lf\n").unwrap();
        std::fs::write(d.join("a.txt"), "line\r\n").unwrap();
        let store = tempfile::tempdir().unwrap();
        let (ours, theirs) = (store.path().join("o.git"), store.path().join("t.git"));
        super::super::ensure_store(&ours).unwrap();
        super::super::ensure_store(&theirs).unwrap();
        let written = write(d, &ours, &|_| true).unwrap();
        let (_, added) = as_git_writes(d, &theirs, &|_| true);
        assert_ne!(written.added, added, "git normalises the line ending");
        let blob = |store: &Path, tree: &str| {
            let out = Command::new("git")
                .args(["cat-file", "blob", &format!("{tree}:a.txt")])
                .env("GIT_DIR", store)
                .output()
                .unwrap();
            out.stdout
        };
        assert_eq!(
            blob(&ours, &written.added),
            b"line\r\n",
            "the bytes as they are"
        );
        assert_eq!(blob(&theirs, &added), b"line\n");
    }

    #[test]
    fn a_path_named_git_in_another_case_is_refused_as_git_refuses_it() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".GIT")).unwrap();
        std::fs::write(dir.path().join(".GIT/config"), "x").unwrap();
        let store = tempfile::tempdir().unwrap();
        let store = store.path().join("s.git");
        super::super::ensure_store(&store).unwrap();
        assert!(write(dir.path(), &store, &|_| true).is_err());
    }
}
