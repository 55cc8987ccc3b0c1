//! Importers never panic on what a transcript might hold, and whatever they import is
//! a trace replay accepts.

use std::path::Path;

use loopbench::agent::trace::Trace;
use loopbench::import::{claude_code, stream_json};
use proptest::prelude::*;
use serde_json::{Map, Value};

/// Words the importers look for, so that random lines often look like real ones.
const WORDS: &[&str] = &[
    "type",
    "user",
    "assistant",
    "system",
    "result",
    "init",
    "sessionId",
    "session_id",
    "message",
    "content",
    "id",
    "name",
    "input",
    "tool_use",
    "tool_result",
    "tool_use_id",
    "is_error",
    "toolUseResult",
    "tool_use_result",
    "originalFile",
    "file_path",
    "old_string",
    "new_string",
    "replace_all",
    "edits",
    "command",
    "Write",
    "Edit",
    "MultiEdit",
    "Bash",
    "NotebookEdit",
    "usage",
    "input_tokens",
    "output_tokens",
    "num_turns",
    "total_cost_usd",
    "subtype",
    "success",
    "error_max_turns",
    "timestamp",
    "2025-06-01T10:00:00Z",
    "cwd",
    "/w",
    "/w/a",
    "a",
    "",
    "..",
    "isSidechain",
    "uuid",
    "costUSD",
    "model",
    "<synthetic>",
];

fn word() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(WORDS).prop_map(str::to_string),
        1 => ".{0,6}",
    ]
}

fn value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        word().prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((word(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => value().prop_map(|v| v.to_string()),
        1 => ".{0,30}",
    ]
}

fn check(form: &str, path: &Path) {
    let imported = match form {
        "claude-code" => claude_code::import(&[path.to_path_buf()], None),
        _ => stream_json::import(&[path.to_path_buf()], Some("/w")),
    };
    if let Ok(imported) = imported {
        let text = imported.to_trace();
        Trace::parse(Path::new("t"), &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_lines_never_panic_and_give_valid_traces(lines in proptest::collection::vec(line(), 0..12)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.jsonl");
        std::fs::write(&path, lines.join("\n")).unwrap();
        check("claude-code", &path);
        check("stream-json", &path);
    }
}
