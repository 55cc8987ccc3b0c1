//! The repository stands alone: no tracked file points at documents outside it (a
//! contract kept elsewhere, a shared folder), which a user who clones it cannot read.

use std::process::Command;

#[test]
fn no_tracked_file_refers_to_anything_outside_the_repository() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .expect("git ls-files");
    if !out.status.success() {
        eprintln!("skipped: not a git checkout");
        return;
    }
    // Built from parts, so that this file does not name them itself.
    let design = ["DES", "IGN"].concat();
    let outside = [
        ["..", "/shared"].concat(),
        format!("{design}.md"),
        format!("{design} §"),
        ["DEPEND", "ENCIES.md"].concat(),
        ["STY", "LE.md"].concat(),
    ];
    let mut found = Vec::new();
    for file in out.stdout.split(|b| *b == 0).filter(|f| !f.is_empty()) {
        let name = String::from_utf8_lossy(file).into_owned();
        if name == "Cargo.lock" {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(std::path::Path::new(root).join(&name)) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            if outside.iter().any(|o| line.contains(o.as_str())) {
                found.push(format!("{name}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "references outside the repository:\n{}",
        found.join("\n")
    );
}
