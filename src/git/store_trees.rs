//! Reading and editing the trees of the harness's object store (the one the observed
//! trees go to, never the agent's repository): each file of a tree, the files whose
//! bytes hold one of some fixed strings, a blob written from a file, and a tree with
//! some of its files replaced or renamed. `--keep-repos` uses them to leave out of a
//! bundle every value passed by `pass_env`.

use std::io::Write;
use std::path::Path;
use std::process::Stdio;

use super::{GIT_TIMEOUT, output_within, run_store, store_command};
use crate::error::{Error, IoContext, Result};

/// One file of a tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeItem {
    /// Its mode as git writes it (`100644`, `100755`, `120000`).
    pub mode: String,
    /// Its object (a blob's hash).
    pub object: String,
    /// Its path from the top of the tree, as bytes.
    pub path: Vec<u8>,
}

/// Every blob of `tree` in `store` (recursively; a gitlink, which the harness's trees
/// never hold, is left out).
pub fn tree_files(store: &Path, tree: &str) -> Result<Vec<TreeItem>> {
    let mut cmd = store_command(store, None, None);
    cmd.args(["ls-tree", "-r", "-z", "--full-tree", tree]);
    let out = bytes_of("ls-tree", cmd)?;
    let mut items = Vec::new();
    for record in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        let bad = || Error::Tool(format!("git ls-tree: unexpected line in tree {tree}"));
        let tab = record.iter().position(|b| *b == b'\t').ok_or_else(bad)?;
        let head = std::str::from_utf8(&record[..tab]).map_err(|_| bad())?;
        let mut fields = head.split(' ');
        let (Some(mode), Some(kind), Some(object)) = (fields.next(), fields.next(), fields.next())
        else {
            return Err(bad());
        };
        if kind == "blob" {
            items.push(TreeItem {
                mode: mode.to_string(),
                object: object.to_string(),
                path: record[tab + 1..].to_vec(),
            });
        }
    }
    Ok(items)
}

/// The paths of the files of `tree` whose bytes hold one of the fixed strings in
/// `patterns` (a file of the harness's, one string per line: a string is never put on
/// a command line, where any user of the machine could read it). Binary files count.
pub fn files_holding(store: &Path, tree: &str, patterns: &Path) -> Result<Vec<Vec<u8>>> {
    let mut cmd = store_command(store, None, None);
    cmd.args(["grep", "-l", "-z", "-a", "--no-textconv", "-F", "-f"])
        .arg(patterns)
        .arg(tree);
    let out = output_within(cmd, GIT_TIMEOUT)
        .map_err(|e| Error::Tool(format!("cannot run git (is it installed?): {e}")))?
        .ok_or_else(|| Error::Tool("git grep: no answer in time".into()))?;
    // 1: nothing matched.
    match out.status.code() {
        Some(0) => {}
        Some(1) => return Ok(Vec::new()),
        _ => {
            return Err(Error::Tool(format!(
                "git grep failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
    }
    let prefix = format!("{tree}:");
    Ok(out
        .stdout
        .split(|b| *b == 0)
        .filter(|r| !r.is_empty())
        .map(|r| r.strip_prefix(prefix.as_bytes()).unwrap_or(r).to_vec())
        .collect())
}

/// Writes the bytes of `blob` to the file `to`.
pub fn blob_to_file(store: &Path, blob: &str, to: &Path) -> Result<()> {
    let file =
        std::fs::File::create(to).io_context(|| format!("cannot create '{}'", to.display()))?;
    let mut cmd = store_command(store, None, None);
    cmd.args(["cat-file", "blob", blob])
        .stdout(Stdio::from(file));
    run_store("cat-file", cmd).map(drop)
}

/// Writes the file `from` to `store` as a blob; returns its hash.
pub fn blob_from_file(store: &Path, from: &Path) -> Result<String> {
    let mut cmd = store_command(store, None, None);
    cmd.args(["hash-object", "-w", "--no-filters", "--"])
        .arg(from);
    run_store("hash-object", cmd)
}

/// How many blobs one `git cat-file --batch` of [`small_blobs`] reads.
const BLOBS_A_CALL: usize = 1000;

/// The bytes of each of `blobs`, in order: small objects only (a symlink's target, at
/// most `PATH_MAX` bytes in a tree the harness wrote), read by one `git cat-file
/// --batch` per [`BLOBS_A_CALL`] blobs, its list in a file in `scratch`.
pub fn small_blobs(store: &Path, blobs: &[String], scratch: &Path) -> Result<Vec<Vec<u8>>> {
    let mut all = Vec::with_capacity(blobs.len());
    for chunk in blobs.chunks(BLOBS_A_CALL) {
        let list = scratch.join("blobs.list");
        std::fs::write(&list, chunk.join("\n") + "\n")
            .io_context(|| format!("cannot write '{}'", list.display()))?;
        let mut cmd = store_command(store, None, None);
        cmd.args(["cat-file", "--batch"]).stdin(Stdio::from(
            std::fs::File::open(&list)
                .io_context(|| format!("cannot read '{}'", list.display()))?,
        ));
        let out = bytes_of("cat-file", cmd)?;
        let mut rest = out.as_slice();
        for blob in chunk {
            let bad = || Error::Tool(format!("git cat-file: unexpected answer for {blob}"));
            let eol = rest.iter().position(|b| *b == b'\n').ok_or_else(bad)?;
            let head = std::str::from_utf8(&rest[..eol]).map_err(|_| bad())?;
            let size: usize = match head.split(' ').collect::<Vec<_>>()[..] {
                [object, "blob", size] if object == blob => size.parse().map_err(|_| bad())?,
                _ => return Err(bad()),
            };
            let body = rest.get(eol + 1..eol + 1 + size).ok_or_else(bad)?;
            all.push(body.to_vec());
            // The body is followed by a line feed.
            rest = rest.get(eol + 2 + size..).unwrap_or_default();
        }
    }
    Ok(all)
}

/// One change to a tree: the file at `old_path` becomes `new_object` at `new_path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEdit {
    /// The file's mode, kept.
    pub mode: String,
    /// Where it is in the tree.
    pub old_path: Vec<u8>,
    /// Its new blob.
    pub new_object: String,
    /// Where it goes.
    pub new_path: Vec<u8>,
}

/// `tree` with `edits` made, in a throw-away index in `scratch`; returns the new tree.
pub fn edit_tree(store: &Path, tree: &str, edits: &[TreeEdit], scratch: &Path) -> Result<String> {
    let index = scratch.join("edit.index");
    let _ = std::fs::remove_file(&index);
    let mut read = store_command(store, None, Some(&index));
    read.args(["read-tree", tree]);
    run_store("read-tree", read)?;
    let mut info = Vec::new();
    for edit in edits {
        if edit.old_path != edit.new_path {
            // Mode 0 takes the path out of the index.
            info.extend_from_slice(b"0 0000000000000000000000000000000000000000\t");
            info.extend_from_slice(&edit.old_path);
            info.push(0);
        }
        info.extend_from_slice(format!("{} {}\t", edit.mode, edit.new_object).as_bytes());
        info.extend_from_slice(&edit.new_path);
        info.push(0);
    }
    let info_file = scratch.join("edit.info");
    std::fs::write(&info_file, &info)
        .io_context(|| format!("cannot write '{}'", info_file.display()))?;
    let mut update = store_command(store, None, Some(&index));
    // `--replace`: a renamed path that meets another (a file where a directory was)
    // takes its place.
    update
        .args(["update-index", "-z", "--replace", "--index-info"])
        .stdin(Stdio::from(std::fs::File::open(&info_file).io_context(
            || format!("cannot read '{}'", info_file.display()),
        )?));
    run_store("update-index", update)?;
    let mut write = store_command(store, None, Some(&index));
    write.arg("write-tree");
    run_store("write-tree", write)
}

/// The whole stdout of a store command, as bytes.
fn bytes_of(what: &str, cmd: std::process::Command) -> Result<Vec<u8>> {
    let out = output_within(cmd, GIT_TIMEOUT)
        .map_err(|e| Error::Tool(format!("cannot run git (is it installed?): {e}")))?
        .ok_or_else(|| Error::Tool(format!("git {what}: no answer in time")))?;
    if !out.status.success() {
        return Err(Error::Tool(format!(
            "git {what} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(out.stdout)
}

/// Writes `strings` to `file` for [`files_holding`], readable by the harness alone: one
/// per line, a string holding a line break as its lines (a file holding the string
/// holds each of them, so none is missed; an empty line, which every file would
/// match, is left out).
pub fn write_patterns(file: &Path, strings: &[Vec<u8>]) -> Result<()> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(file)
        .io_context(|| format!("cannot create '{}'", file.display()))?;
    for line in strings
        .iter()
        .flat_map(|s| s.split(|b| *b == b'\n'))
        .filter(|l| !l.is_empty())
    {
        out.write_all(line)
            .and_then(|()| out.write_all(b"\n"))
            .io_context(|| format!("cannot write '{}'", file.display()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_holding_a_string_are_found_and_rewritten_and_renamed_in_a_new_tree() {
        let dir = tempfile::tempdir().unwrap();
        let work = dir.path().join("work");
        std::fs::create_dir_all(work.join("config")).unwrap();
        std::fs::write(work.join(".env"), "KEY=sk-store-secret\n").unwrap();
        std::fs::write(work.join("config/sk-store-secret.json"), "{}\n").unwrap();
        std::fs::write(work.join("plain.txt"), "nothing here\n").unwrap();
        let bin = [0u8, 159, 146, 150];
        std::fs::write(
            work.join("blob.bin"),
            [&bin[..], b"sk-store-secret"].concat(),
        )
        .unwrap();
        let store = dir.path().join("store.git");
        let tree = super::super::write_tree(&work, &store, &|_| true)
            .unwrap()
            .seen;

        let patterns = dir.path().join("patterns");
        write_patterns(&patterns, &[b"sk-store-secret".to_vec(), b"\n".to_vec()]).unwrap();
        assert_eq!(std::fs::read(&patterns).unwrap(), b"sk-store-secret\n");
        let mut holding = files_holding(&store, &tree, &patterns).unwrap();
        holding.sort();
        assert_eq!(holding, [b".env".to_vec(), b"blob.bin".to_vec()]);

        let items = tree_files(&store, &tree).unwrap();
        assert_eq!(items.len(), 4, "{items:?}");
        let env = items.iter().find(|i| i.path == b".env").unwrap();
        let json = items
            .iter()
            .find(|i| i.path == b"config/sk-store-secret.json")
            .unwrap();
        let file = dir.path().join("blob");
        blob_to_file(&store, &env.object, &file).unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"KEY=sk-store-secret\n");
        std::fs::write(&file, "KEY=[redacted]\n").unwrap();
        let redacted = blob_from_file(&store, &file).unwrap();
        let edits = [
            TreeEdit {
                mode: env.mode.clone(),
                old_path: env.path.clone(),
                new_object: redacted.clone(),
                new_path: env.path.clone(),
            },
            TreeEdit {
                mode: json.mode.clone(),
                old_path: json.path.clone(),
                new_object: json.object.clone(),
                new_path: b"config/[redacted].json".to_vec(),
            },
        ];
        let new_tree = edit_tree(&store, &tree, &edits, dir.path()).unwrap();
        let mut paths: Vec<(Vec<u8>, String)> = tree_files(&store, &new_tree)
            .unwrap()
            .into_iter()
            .map(|i| (i.path, i.object))
            .collect();
        paths.sort();
        let names: Vec<&[u8]> = paths.iter().map(|(p, _)| p.as_slice()).collect();
        assert_eq!(
            names,
            [
                &b".env"[..],
                b"blob.bin",
                b"config/[redacted].json",
                b"plain.txt"
            ]
        );
        assert_eq!(paths[0].1, redacted);
        assert_eq!(
            files_holding(&store, &new_tree, &patterns).unwrap(),
            [b"blob.bin".to_vec()]
        );
    }
}
