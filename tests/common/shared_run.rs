//! Whole-suite runs that several tests read, made once and shared between test
//! processes (cargo-nextest runs each test in a process of its own): the first test to ask
//! for a run makes it under a file lock; the others wait for that lock and read the same
//! directory. A run is keyed by its arguments, the binary under test and the contents of
//! the suite it runs, so an edited suite or a rebuilt binary never reads an old run.
//!
//! The directory is shared: a test reads it and never writes into it (copy it first).

use std::fs::File;
use std::path::{Path, PathBuf};

use super::{loopbench, repo_root};

/// The default run, `loopbench run suites/seed-replication` as the README gives it: every
/// arm of the shipped suite on its own seed. The calibration, the seed patterns, the
/// sim's ground truth and the reference tables are all read from this one run.
pub fn default_suite_run() -> PathBuf {
    shared_run("suites/seed-replication", &[])
}

/// The results directory of `loopbench run SUITE ARGS... --quiet --out DIR`, `suite`
/// relative to the repository root (or absolute: a suite a test wrote, shared with every
/// test that wrote the same files), made once for every test that asks for the same run.
pub fn shared_run(suite: impl AsRef<Path>, args: &[&str]) -> PathBuf {
    let suite = suite.as_ref();
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("shared-runs");
    std::fs::create_dir_all(&root).unwrap();
    let suite_dir = repo_root().join(suite);
    let key = key(&suite_dir, args);
    let dir = root.join(&key);
    let lock = File::create(root.join(format!("{key}.lock"))).unwrap();
    lock.lock().unwrap();
    if !dir.join("complete").exists() {
        let partial = root.join(format!("{key}.partial"));
        if partial.exists() {
            std::fs::remove_dir_all(&partial).unwrap();
        }
        let out = loopbench()
            .arg("run")
            .arg(&suite_dir)
            .args(args)
            .args(["--quiet", "--out"])
            .arg(&partial)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "loopbench run {} {args:?}: {}",
            suite.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::write(partial.join("complete"), "").unwrap();
        std::fs::rename(&partial, &dir).unwrap();
        forget_older_builds(&root);
    }
    lock.unlock().unwrap();
    dir
}

/// Removes the runs made by an earlier build of the binary: no test of this build reads
/// them.
fn forget_older_builds(root: &Path) {
    let built = std::fs::metadata(env!("CARGO_BIN_EXE_loopbench"))
        .and_then(|m| m.modified())
        .unwrap();
    for entry in std::fs::read_dir(root).unwrap().flatten() {
        let path = entry.path();
        let older = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|made| made < built);
        if older && path.extension().is_none() && path.join("complete").exists() {
            let _ = std::fs::remove_dir_all(&path);
        }
    }
}

/// A name for the run: its arguments, the binary's size and modification time, and
/// every file of the suite (the tasks it names through a symlink included).
fn key(suite: &Path, args: &[&str]) -> String {
    let mut hasher = blake3::Hasher::new();
    for arg in args {
        hasher.update(arg.as_bytes());
        hasher.update(&[0]);
    }
    let binary = std::fs::metadata(env!("CARGO_BIN_EXE_loopbench")).unwrap();
    let modified = binary
        .modified()
        .unwrap()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    hasher.update(&binary.len().to_le_bytes());
    hasher.update(&modified.as_nanos().to_le_bytes());
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(suite)
        .follow_links(true)
        .into_iter()
        .map(|entry| entry.unwrap())
        .filter(|entry| entry.file_type().is_file())
        .map(|entry| entry.into_path())
        .collect();
    files.sort();
    for file in files {
        hasher.update(
            file.strip_prefix(suite)
                .unwrap()
                .as_os_str()
                .as_encoded_bytes(),
        );
        hasher.update(&[0]);
        hasher.update(&std::fs::read(&file).unwrap());
    }
    hasher.finalize().to_hex()[..16].to_string()
}
