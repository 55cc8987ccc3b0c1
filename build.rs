//! Records the git commit loopbench was built from, for run manifests.

use std::path::Path;
use std::process::Command;

fn main() {
    let commit = Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=LOOPBENCH_GIT_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    // Only watch paths that exist: a missing one would rebuild on every invocation. In a
    // linked worktree `.git` is a file, and HEAD and the refs live in the git
    // directories git names, so ask it rather than assume `.git/`.
    let git_path = |flag: &str| {
        Command::new("git")
            .args(["rev-parse", flag])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let git_dir = git_path("--absolute-git-dir").unwrap_or_else(|| ".git".into());
    let common = git_path("--git-common-dir").unwrap_or_else(|| git_dir.clone());
    let watched = [
        format!("{git_dir}/HEAD"),
        format!("{common}/refs/heads"),
        format!("{common}/packed-refs"),
    ];
    for path in &watched {
        if Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
