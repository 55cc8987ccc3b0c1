//! The real agent CLIs for the tests that run them: looked up in `$LOOPBENCH_CLI_DIR`
//! (default `~/.cache/loopbench-clis`, where `.ci/run` installs the pinned versions):
//! `npm/node_modules/.bin/` and `aider/bin/`. A CLI that is not there is skipped with a
//! message; under `CI=true` it fails the test.

use std::ffi::OsString;
use std::path::PathBuf;

/// Where the pinned CLIs are installed.
pub fn cli_dirs() -> Vec<PathBuf> {
    let root = std::env::var_os("LOOPBENCH_CLI_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default())
                .join(".cache/loopbench-clis")
        });
    vec![root.join("npm/node_modules/.bin"), root.join("aider/bin")]
}

/// PATH with the CLI directories first, when `binary` is installed there.
pub fn path_with(binary: &str) -> Option<OsString> {
    let dirs = cli_dirs();
    dirs.iter().find(|d| d.join(binary).is_file())?;
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(dirs.into_iter().chain(std::env::split_paths(&rest))).ok()
}

/// PATH without any directory that holds `binary`: a wrapper finds no CLI.
pub fn path_without(binary: &str) -> OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::env::split_paths(&rest).filter(|d| !d.join(binary).exists()))
        .unwrap_or_default()
}

/// Whether the test can run here, with the PATH to give it; otherwise it says why,
/// and fails under CI=true.
pub fn available(binary: &str) -> Option<OsString> {
    sandbox_works(binary)?;
    match path_with(binary) {
        Some(path) => Some(path),
        None => skipped(
            binary,
            format!(
                "'{binary}' is not installed in {:?} (.ci/run installs the pinned versions)",
                cli_dirs()
            ),
        ),
    }
}

/// Whether bubblewrap works here; otherwise says why, and fails under CI=true.
pub fn sandbox_works(binary: &str) -> Option<()> {
    if loopbench::sandbox::bwrap_works() {
        Some(())
    } else {
        skipped(binary, "bubblewrap does not work here".into())
    }
}

fn skipped<T>(binary: &str, why: String) -> Option<T> {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    assert!(!ci, "CI=true: {why}");
    eprintln!("SKIPPED real CLI test of {binary}: {why}");
    None
}
