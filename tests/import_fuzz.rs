//! Importers never panic on what a transcript might hold, whatever they import is a
//! trace replay accepts, and a last line cut off by a crash is dropped with a warning.

use std::path::Path;

use loopbench::agent::trace::Trace;
use loopbench::import::codex::patch;
use loopbench::import::{aider, claude_code, codex, stream_json};
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

/// A line of a Codex rollout or `exec --json` capture, from templates of the shapes the
/// importer reads, with random parts (so that random input gets past the first checks).
fn codex_line() -> impl Strategy<Value = String> {
    let path = proptest::sample::select(vec!["/w", "/w/a", "a", "/elsewhere/x", "", "../x", "b/c"])
        .prop_map(str::to_string);
    let id = proptest::sample::select(vec!["c1", "c2", "c3", "exec-9", "item_0"])
        .prop_map(str::to_string);
    let text = prop_oneof![
        proptest::sample::select(vec![
            "Exit code: 0\nOutput:\nSuccess. Updated the following files:\nM a\n",
            "Process exited with code 1\n",
            "Process running with session ID 3\n",
            "exec command rejected by user",
            "apply_patch verification failed: x",
            "{\"output\":\"x\",\"metadata\":{\"exit_code\":0}}",
            "Success.",
            "",
        ])
        .prop_map(str::to_string),
        ".{0,12}",
    ];
    let patch = proptest::collection::vec(
        proptest::sample::select(vec![
            "*** Begin Patch",
            "*** End Patch",
            "*** Add File: a",
            "*** Add File: /w/b",
            "*** Update File: a",
            "*** Delete File: a",
            "*** Move to: c",
            "@@",
            "@@ x",
            "+x",
            "-x",
            " x",
            "",
            "*** End of File",
            "<<'EOF'",
            "EOF",
        ]),
        0..10,
    )
    .prop_map(|l| l.join("\n"));
    let num = || 0u64..2000;
    prop_oneof![
        (id.clone(), path.clone()).prop_map(|(i, p)| serde_json::json!({"type": "session_meta", "payload": {"id": i, "cwd": p, "timestamp": "2026-01-01T00:00:00Z"}}).to_string()),
        (id.clone(), proptest::sample::select(vec!["shell", "exec_command", "shell_command", "apply_patch", "write_stdin", "update_plan"]), proptest::collection::vec(word(), 0..4), path.clone(), patch.clone())
            .prop_map(|(i, name, words, p, patch)| {
                let args = serde_json::json!({"command": words, "cmd": words.join(" "), "workdir": p, "input": patch});
                serde_json::json!({"type": "response_item", "payload": {"type": "function_call", "name": name, "arguments": args.to_string(), "call_id": i}}).to_string()
            }),
        (id.clone(), patch.clone(), proptest::sample::select(vec!["apply_patch", "exec", "other"]))
            .prop_map(|(i, p, n)| serde_json::json!({"type": "response_item", "payload": {"type": "custom_tool_call", "name": n, "input": p, "call_id": i}}).to_string()),
        (id.clone(), text.clone(), any::<bool>()).prop_map(|(i, t, custom)| {
            let kind = if custom { "custom_tool_call_output" } else { "function_call_output" };
            serde_json::json!({"type": "response_item", "payload": {"type": kind, "call_id": i, "output": t}}).to_string()
        }),
        (id.clone(), proptest::collection::vec(word(), 0..3), path.clone())
            .prop_map(|(i, w, p)| serde_json::json!({"type": "response_item", "payload": {"type": "local_shell_call", "call_id": i, "action": {"type": "exec", "command": w, "working_directory": p}}}).to_string()),
        (num(), num(), num(), num()).prop_map(|(a, b, c, d)| serde_json::json!({"type": "event_msg", "payload": {"type": "token_count", "info": {"total_token_usage": {"input_tokens": a, "output_tokens": b, "reasoning_output_tokens": c, "total_tokens": d}, "last_token_usage": {"input_tokens": c, "output_tokens": d}}}}).to_string()),
        proptest::sample::select(vec!["task_started", "task_complete", "turn_aborted", "undo_completed", "thread_rolled_back", "context_compacted"])
            .prop_map(|t| serde_json::json!({"type": "event_msg", "payload": {"type": t}}).to_string()),
        (id.clone(), path.clone(), proptest::sample::select(vec!["CommandExecution", "FileChange", "file_change"]), text.clone(), proptest::option::of(-2i64..3))
            .prop_map(|(i, p, t, out, code)| serde_json::json!({"type": "event_msg", "payload": {"type": "item_completed", "item": {"type": t, "id": i, "command": ["bash", "-lc", out], "cwd": format!("file://{p}"), "exit_code": code, "status": "completed", "changes": {p.clone(): {"type": "update", "unified_diff": out}, "/w/n": {"type": "add", "content": "x"}}}}}).to_string()),
        (id.clone(), text, proptest::sample::select(vec!["command_execution", "file_change", "mcp_tool_call"]))
            .prop_map(|(i, t, kind)| serde_json::json!({"type": "item.completed", "item": {"id": i, "type": kind, "command": t, "exit_code": 0, "status": "completed", "changes": [{"path": "/w/a", "kind": "update"}]}}).to_string()),
        proptest::sample::select(vec![r#"{"type":"thread.started","thread_id":"t"}"#, r#"{"type":"turn.started"}"#, r#"{"type":"turn.completed","usage":{"input_tokens":5,"output_tokens":1}}"#, r#"{"type":"compacted","payload":{"message":"m","replacement_history":[]}}"#])
            .prop_map(str::to_string),
        line(),
    ]
}

/// A line of an aider chat history, from the shapes the importer reads.
fn aider_line() -> impl Strategy<Value = String> {
    prop_oneof![
        8 => proptest::sample::select(vec![
            "# aider chat started at 2026-01-01 10:00:00",
            "> Main model: m with diff edit format  ",
            "> Main model: m with whole edit format  ",
            "> Editor model: m with editor-diff edit format  ",
            "#### do it  ",
            "#### /run echo hi  ",
            "#### !ls  ",
            "> Applied edit to a.txt  ",
            "> Applied edit to b/a.txt  ",
            "> a.txt  ",
            "> Create new file? (Y)es/(N)o [Yes]: y  ",
            "> Add file to the chat? (Y)es/(N)o [Yes]: y  ",
            "a.txt",
            "```",
            "````python",
            "<<<<<<< SEARCH",
            "=======",
            ">>>>>>> REPLACE",
            "x",
            "",
            "> Running echo hi  ",
            "> Tokens: 1.2k sent, 3 received. Cost: $0.01 message, $0.01 session.  ",
            "> Commit abc1234 fix: x  ",
            "> Removed: abc1234 fix: x  ",
            "> The LLM did not conform to the edit format.  ",
            "> # 1 SEARCH/REPLACE block failed to match!",
            "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in a.txt",
            "Just reply with fixed versions of the block above that failed to match.  ",
            "> Attempt to fix test errors? (Y)es/(N)o [Yes]: y  ",
            "> python3 x.py ",
        ])
        .prop_map(str::to_string),
        1 => ".{0,12}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn random_codex_transcripts_never_panic_and_give_valid_traces(lines in proptest::collection::vec(codex_line(), 0..14)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rollout-x.jsonl");
        std::fs::write(&path, lines.join("\n")).unwrap();
        for root in [None, Some("/w")] {
            if let Ok(imported) = codex::import(std::slice::from_ref(&path), root) {
                let text = imported.to_trace();
                Trace::parse(Path::new("t"), &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
            }
        }
    }

    #[test]
    fn random_aider_histories_never_panic_and_give_valid_traces(lines in proptest::collection::vec(aider_line(), 0..30), newline in any::<bool>()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".aider.chat.history.md");
        let mut text = lines.join("\n");
        if newline {
            text.push('\n');
        }
        std::fs::write(&path, text).unwrap();
        if let Ok(imported) = aider::import(&[path], Some("/w")) {
            let text = imported.to_trace();
            Trace::parse(Path::new("t"), &text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        }
    }

    #[test]
    fn random_patches_never_panic_when_read_or_applied(
        lines in proptest::collection::vec(proptest::sample::select(vec![
            "*** Begin Patch", "*** End Patch", "*** Update File: a", "*** Add File: a",
            "@@", "@@ x", "+x", "-x", " x", "-", "", "*** End of File", "y",
        ]), 0..16),
        content in "[xy\n ]{0,20}",
    ) {
        if let Ok(hunks) = patch::parse(&lines.join("\n")) {
            for hunk in hunks {
                if let patch::Hunk::Update { chunks, .. } = hunk {
                    let _ = patch::apply(&content, &chunks);
                }
            }
        }
        let _ = patch::unified_diff_chunks(&lines.join("\n"));
    }
}

/// The Codex fixtures' rollouts: real (0.171) and hand-written older shapes.
fn rollouts() -> Vec<std::path::PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/codex");
    let mut files: Vec<_> = ["v0.4x", "v0.13x", "exec-tool", "failed-patch", "latefees"]
        .iter()
        .flat_map(|d| std::fs::read_dir(root.join(d)).unwrap())
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A crash while Codex wrote its rollout cuts the last line anywhere: the import
    /// drops that line with a warning naming it, and is otherwise the import of the
    /// file without it.
    #[test]
    fn a_rollout_cut_off_in_its_last_line_imports_as_without_that_line(pick in any::<prop::sample::Index>(), at in any::<prop::sample::Index>()) {
        let files = rollouts();
        let source = &files[pick.index(files.len())];
        let text = std::fs::read_to_string(source).unwrap();
        let body = text.trim_end_matches('\n');
        let start = body.rfind('\n').map_or(0, |i| i + 1);
        let last = &body[start..];
        let mut cut = 1 + at.index(last.len() - 1);
        while !last.is_char_boundary(cut) {
            cut -= 1;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(source.file_name().unwrap());
        std::fs::write(&path, format!("{}{}", &body[..start], &last[..cut])).unwrap();
        let cut_off = codex::import(std::slice::from_ref(&path), Some("/home/dev/latefees"));
        std::fs::write(&path, &body[..start]).unwrap();
        let without = codex::import(std::slice::from_ref(&path), Some("/home/dev/latefees"));
        match (cut_off, without) {
            (Ok(cut_off), Ok(without)) => {
                let number = body[..start].lines().count() + 1;
                let note = format!("{}:{number}: the last line is cut off", path.display());
                prop_assert!(cut_off.notes.iter().any(|n| n.starts_with(&note)), "{:?}", cut_off.notes);
                prop_assert_eq!(cut_off.to_trace(), without.to_trace());
            }
            (Err(a), Err(b)) => prop_assert_eq!(a.to_string(), b.to_string()),
            (a, b) => prop_assert!(false, "{:?} / {:?}", a.map(|i| i.to_trace()), b.map(|i| i.to_trace())),
        }
    }

    /// The same for an aider history: the cut-off line is dropped with a warning and
    /// the session it belonged to ends `interrupted`.
    #[test]
    fn a_history_cut_off_in_its_last_line_is_read_without_it_and_ends_interrupted(pick in any::<prop::sample::Index>(), at in any::<prop::sample::Index>()) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/aider");
        let sources = ["latefees", "failed-edit"];
        let source = root.join(sources[pick.index(sources.len())]).join(".aider.chat.history.md");
        let text = std::fs::read_to_string(source).unwrap();
        let body = text.trim_end_matches('\n');
        let start = body.rfind('\n').map_or(0, |i| i + 1);
        let last = &body[start..];
        let mut cut = 1 + at.index(last.len().max(2) - 1);
        while !last.is_char_boundary(cut) {
            cut -= 1;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".aider.chat.history.md");
        std::fs::write(&path, format!("{}{}", &body[..start], &last[..cut.min(last.len())])).unwrap();
        let imported = aider::import(std::slice::from_ref(&path), None).unwrap();
        prop_assert!(imported.notes.iter().any(|n| n.contains("the last line is cut off")), "{:?}", imported.notes);
        let trace = imported.to_trace();
        Trace::parse(Path::new("t"), &trace).unwrap();
        prop_assert!(trace.trim_end().lines().last().unwrap().contains(r#""status":"interrupted""#), "{}", trace);
    }
}
