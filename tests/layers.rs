//! Layers import downward only: every module of the crate sits in one layer, and no
//! `crate::` path in a module names a layer above its own. The order is the data flow
//! of docs/architecture.md (suite → plan → trial → session → observation → record →
//! report), under the plumbing every layer may use.

use std::collections::BTreeMap;
use std::path::Path;

/// Top-level modules from the bottom up.
const LAYERS: &[&str] = &[
    // plumbing
    "exit_code",
    "error",
    "lines",
    "terminal",
    "timestamp",
    "seed",
    "fsutil",
    "agent_file",
    "sandbox",
    "process_group",
    "process",
    "git",
    "stats",
    // what an experiment is
    "rates",
    "feature_list",
    "suite",
    "workspace",
    "notice",
    // sessions and what is observed of them
    "agent",
    "observe",
    "metrics",
    "record",
    "events",
    // the engine and the results
    "runner",
    "store",
    "import",
    "report",
    "taskcheck",
    // the commands
    "cmd",
    "cli",
];

fn top_module(rel: &str) -> &str {
    let first = rel.split('/').next().unwrap_or(rel);
    first.strip_suffix(".rs").unwrap_or(first)
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let rank: BTreeMap<&str, usize> = LAYERS.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let module = top_module(&rel);
        if module == "lib" || module == "main" {
            continue;
        }
        let own = *rank
            .get(module)
            .unwrap_or_else(|| panic!("module '{module}' has no layer: add it to LAYERS"));
        let text = std::fs::read_to_string(entry.path()).unwrap();
        for (n, line) in text.lines().enumerate() {
            for part in line.split("crate::").skip(1) {
                let used: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if let Some(&theirs) = rank.get(used.as_str())
                    && theirs > own
                {
                    found.push(format!("src/{rel}:{}: {module} uses {used}", n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "upward imports:\n{}", found.join("\n"));
}
