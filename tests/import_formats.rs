//! Every importer of the table is whole: a fixture in the repository that imports and
//! is detected as its format, examples in its `--help` that use it, a row of the docs'
//! list of formats (made from the table) and a line of the README. A format added to the
//! table without one of them fails here.

use crate::common;

use common::{loopbench, repo_root};
use loopbench::import::format::{Format, docs_table};

#[test]
fn the_docs_list_of_formats_is_the_one_the_table_makes() {
    let docs = std::fs::read_to_string(repo_root().join("docs/formats.md")).unwrap();
    let table = docs_table();
    assert!(
        docs.contains(&table),
        "docs/formats.md (Importers) must hold the list the importers' table makes:\n{table}"
    );
    let readme = std::fs::read_to_string(repo_root().join("README.md")).unwrap();
    for format in Format::all() {
        let command = format!("loopbench import {} ", format.name());
        assert!(
            readme.contains(&command),
            "README.md shows no `{command}...`"
        );
    }
}

#[test]
fn every_format_has_a_fixture_that_imports_and_is_detected_as_it() {
    for format in Format::all() {
        let importer = format.importer();
        let fixture = repo_root().join(importer.fixture);
        assert!(
            fixture.exists(),
            "{}: its fixture {} does not exist",
            importer.name,
            importer.fixture
        );
        let out = loopbench()
            .args(["import", importer.name])
            .arg(&fixture)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stderr}", importer.name);
        let trace = String::from_utf8(out.stdout).unwrap();
        assert!(
            trace.contains("{\"op\":\"session\",\"n\":1"),
            "{}: no session imported from {}",
            importer.name,
            importer.fixture
        );
        let detected = loopbench().arg("import").arg(&fixture).output().unwrap();
        let stderr = String::from_utf8_lossy(&detected.stderr);
        assert!(
            detected.status.success()
                && stderr.contains(&format!("detected format: {}\n", importer.name)),
            "{}: {} is not detected as its format: {stderr}",
            importer.name,
            importer.fixture
        );
        assert_eq!(
            String::from_utf8(detected.stdout).unwrap(),
            trace,
            "{}",
            importer.name
        );
    }
}

#[test]
fn every_format_has_examples_in_its_help_that_use_it() {
    for format in Format::all() {
        let out = loopbench()
            .args(["import", format.name(), "--help"])
            .assert()
            .success();
        let help = String::from_utf8(out.get_output().stdout.clone()).unwrap();
        let examples = help
            .split_once("\nExamples:\n")
            .map(|(_, e)| e)
            .unwrap_or_else(|| panic!("{}: --help has no examples:\n{help}", format.name()));
        assert!(
            examples.contains(&format!("loopbench import {} ", format.name())),
            "{}: no example uses it:\n{examples}",
            format.name()
        );
        let listed = loopbench().args(["import", "--help"]).assert().success();
        let listed = String::from_utf8(listed.get_output().stdout.clone()).unwrap();
        assert!(
            listed.contains(&format!("  {}  ", format.name()))
                && listed.contains(&format!("- {}:", format.name())),
            "`import --help` lists {} as neither a command nor a --format value:\n{listed}",
            format.name()
        );
    }
}
