//! `docs/metrics.md` holds the rate table generated from the metric declarations; this
//! test fails when the two disagree. `LOOPBENCH_BLESS=1 cargo test --test docs_metrics`
//! rewrites the block.

mod common;

const START: &str = "<!-- generated: rates -->\n";
const END: &str = "<!-- end generated -->";

#[test]
fn the_rate_table_in_docs_metrics_md_is_the_generated_one() {
    let path = common::repo_root().join("docs/metrics.md");
    let text = std::fs::read_to_string(&path).unwrap();
    let start = text.find(START).expect("no generated block start") + START.len();
    let end = text.find(END).expect("no generated block end");
    let generated = loopbench::rates::rates_markdown();
    if std::env::var_os("LOOPBENCH_BLESS").is_some() {
        let blessed = format!("{}{generated}{}", &text[..start], &text[end..]);
        std::fs::write(&path, blessed).unwrap();
        return;
    }
    assert!(
        text[start..end] == generated,
        "docs/metrics.md is stale: run LOOPBENCH_BLESS=1 cargo test --test docs_metrics\n--- in the file\n{}\n--- generated\n{generated}",
        &text[start..end]
    );
}
