//! The default run against `results/reference/`: what the README says a newcomer gets
//! from `loopbench run suites/seed-replication` is what this build writes, byte for byte.

use crate::common;

use common::repo_root;
use common::shared_run::default_suite_run;
use serde_json::Value;

/// The manifest's fields that say what ran (the rest say when, where, by which commit
/// and with which of the machine's isolation, which a non-root user's machine may lack).
const WHAT_RAN: &[&str] = &[
    "suite",
    "suite_hash",
    "arms",
    "baseline",
    "tasks",
    "seed",
    "replicates",
    "driver",
    "simulated",
    "shard",
    "replay",
    "keep_repos",
];

#[test]
#[ignore = "reads the default run of the full suite; .ci/run runs it"]
fn the_default_run_writes_the_reference_tables_byte_for_byte() {
    let run = default_suite_run();
    let reference = repo_root().join("results/reference/seed-replication");
    for table in ["summary.csv", "summary.json", "summary.md"] {
        let ours = std::fs::read(run.join(table)).unwrap();
        let theirs = std::fs::read(reference.join(table)).unwrap();
        assert!(
            ours == theirs,
            "{table} of the default run differs from results/reference (diff {} {})",
            run.join(table).display(),
            reference.join(table).display()
        );
    }
    let manifest = |dir: &std::path::Path| -> Value {
        serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap()
    };
    let (ours, theirs) = (manifest(&run), manifest(&reference));
    for field in WHAT_RAN {
        assert_eq!(ours[field], theirs[field], "manifest.json's {field}");
    }
}
