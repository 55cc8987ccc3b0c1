//! `docs/metrics.md` holds the rate table generated from the metric declarations; this
//! test fails when the two disagree. `LOOPBENCH_BLESS=1 cargo test --test integration docs_metrics`
//! rewrites the block.

use crate::common;

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
        "docs/metrics.md is stale: run LOOPBENCH_BLESS=1 cargo test --test integration docs_metrics\n--- in the file\n{}\n--- generated\n{generated}",
        &text[start..end]
    );
}

/// The lines of `docs/metrics.md` from the heading `heading` to the next heading.
fn section(text: &str, heading: &str) -> String {
    let start = text
        .find(heading)
        .unwrap_or_else(|| panic!("docs/metrics.md has no {heading:?}"));
    let rest = &text[start + heading.len()..];
    rest[..rest.find("\n## ").unwrap_or(rest.len())].to_string()
}

/// The serialized field names of `value` (a struct), in order.
fn fields_of<T: serde::Serialize>(value: &T) -> Vec<String> {
    match serde_json::to_value(value).unwrap() {
        serde_json::Value::Object(map) => map.keys().cloned().collect(),
        other => panic!("not a struct: {other}"),
    }
}

#[test]
fn the_per_session_table_of_docs_metrics_md_defines_every_session_field_once() {
    let text = std::fs::read_to_string(common::repo_root().join("docs/metrics.md")).unwrap();
    let table = section(&text, "## Per session (columns of `sessions.csv`)");
    // The first cell of each row names the field (`a` / `b` for a pair).
    let mut defined: Vec<String> = Vec::new();
    for row in table.lines().filter(|l| l.starts_with("| `")) {
        let first = row.trim_start_matches('|').split('|').next().unwrap();
        defined.extend(
            first
                .split('/')
                .map(|name| name.trim().trim_matches('`').to_string()),
        );
    }
    let mut fields = vec!["outcome".to_string()];
    fields.extend(fields_of(&loopbench::metrics::SessionMetrics::default()));
    assert_eq!(
        defined, fields,
        "docs/metrics.md's per-session table and the fields of SessionMetrics differ"
    );
    // Every column a session rate reads is among them.
    for metric in loopbench::rates::Metric::ALL {
        if metric.def().unit == loopbench::rates::Unit::Session {
            for (column, _) in metric.def().tally.columns() {
                assert!(
                    defined.iter().any(|d| d == column),
                    "{metric} reads {column}, undefined"
                );
            }
        }
    }
}

#[test]
fn the_per_trial_section_of_docs_metrics_md_names_every_trial_field() {
    let text = std::fs::read_to_string(common::repo_root().join("docs/metrics.md")).unwrap();
    let prose = section(&text, "## Per trial (columns of `trials.csv`)");
    let sample = loopbench::metrics::TrialMetrics {
        features_verified: 0,
        features_total: 0,
        sessions: 0,
        ended_by: loopbench::metrics::EndedBy::Error,
        premature_victory: false,
        plan_omissions: None,
        tokens: None,
    };
    for field in fields_of(&sample) {
        assert!(
            prose.contains(&format!("`{field}`")),
            "docs/metrics.md's per-trial section does not define `{field}`"
        );
    }
}
