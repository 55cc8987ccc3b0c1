//! The crate's doc comments hold no example rustdoc would compile and run: doc-tests are
//! off in Cargo.toml (`doctest = false`), which saves rustdoc's pass over the whole crate
//! in every `cargo test`. An example written later fails here, naming its line, instead
//! of going untested.

use crate::common::repo_root;

/// Whether a fence's info string makes rustdoc run its block: no language, `rust`, or
/// only rustdoc's own attributes.
fn runs_as_doctest(info: &str) -> bool {
    const RUSTDOC: &[&str] = &[
        "rust",
        "ignore",
        "should_panic",
        "no_run",
        "compile_fail",
        "test_harness",
        "standalone_crate",
    ];
    info.split([',', ' '])
        .map(str::trim)
        .filter(|word| !word.is_empty())
        .all(|word| RUSTDOC.contains(&word) || word.starts_with("edition"))
}

/// The `file:line`s of doc-comment fences that open a block rustdoc would run.
fn doctest_blocks(path: &std::path::Path, text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut open: Option<usize> = None;
    for (n, line) in text.lines().enumerate() {
        let Some(doc) = line
            .trim_start()
            .strip_prefix("///")
            .or_else(|| line.trim_start().strip_prefix("//!"))
        else {
            continue;
        };
        let doc = doc.trim_start();
        let ticks = doc.chars().take_while(|&c| c == '`').count();
        if ticks < 3 {
            continue;
        }
        match open {
            Some(width) if doc.trim_end().len() == ticks && ticks >= width => open = None,
            Some(_) => {}
            None => {
                open = Some(ticks);
                if runs_as_doctest(&doc[ticks..]) {
                    found.push(format!("{}:{}", path.display(), n + 1));
                }
            }
        }
    }
    found
}

#[test]
fn the_fence_reader_finds_the_blocks_rustdoc_would_run() {
    let text = "/// ```\n/// a\n/// ```\n//! ```json\n//! {}\n//! ```\n\
                /// ````text\n/// ```\n/// ````\n/// ```no_run,edition2021\n/// ```\n";
    assert_eq!(
        doctest_blocks(std::path::Path::new("x.rs"), text),
        ["x.rs:1", "x.rs:10"]
    );
}

#[test]
fn no_doc_comment_holds_an_example_rustdoc_would_run() {
    let manifest = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    assert!(
        manifest.contains("doctest = false"),
        "doc-tests are on again: this test is then not needed"
    );
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(repo_root().join("src")) {
        let entry = entry.unwrap();
        if entry.path().extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            found.extend(doctest_blocks(entry.path(), &text));
        }
    }
    assert!(
        found.is_empty(),
        "doc-tests are off (Cargo.toml: doctest = false), so these examples would never \
         run: tag them (```text) or turn doc-tests on and run them in .ci/run:\n{}",
        found.join("\n")
    );
}
