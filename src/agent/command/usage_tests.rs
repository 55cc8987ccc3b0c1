//! Unit tests of the usage readers: the usage file, the stream-json result line, failures.

use super::*;

fn file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f");
    std::fs::write(&path, text).unwrap();
    (dir, path)
}

#[test]
fn a_usage_file_gives_usage_and_status() {
    let (_d, p) = file(
        r#"{"turns":24,"input_tokens":1148210,"output_tokens":9120,"cost_usd":1.5,"status":"declared_complete","model":"x"}"#,
    );
    let r = read_usage_file(&p).unwrap();
    assert_eq!(
        r.usage,
        Usage {
            turns: Some(24),
            input_tokens: Some(1_148_210),
            output_tokens: Some(9120),
            cost_usd: Some(1.5),
        }
    );
    assert_eq!(r.status, Some(EndStatus::DeclaredComplete));
    assert!(r.notes.is_empty());
}

#[test]
fn a_missing_or_empty_usage_file_means_not_written() {
    let (_d, p) = file("  \n");
    assert_eq!(read_usage_file(&p), None);
    assert_eq!(read_usage_file(Path::new("/nonexistent/usage.json")), None);
}

#[test]
fn a_bad_usage_file_is_a_note_never_a_failure() {
    let (_d, p) = file("turns: 3");
    let r = read_usage_file(&p).unwrap();
    assert_eq!(r.usage, Usage::default());
    assert!(r.notes[0].contains("not JSON"), "{:?}", r.notes);
    let (_d, p) = file(r#"{"turns":"many","output_tokens":7,"status":"done"}"#);
    let r = read_usage_file(&p).unwrap();
    assert_eq!(r.usage.turns, None);
    assert_eq!(r.usage.output_tokens, Some(7));
    assert_eq!(r.status, None);
    assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
}

#[test]
fn the_last_result_line_of_a_stream_json_transcript_gives_usage() {
    let (_d, p) = file(concat!(
        "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}\n",
        "not json at all \"result\"\n",
        "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"\\\"result\\\"\"}]}}\n",
        "{\"type\":\"result\",\"subtype\":\"success\",\"num_turns\":1,\"total_cost_usd\":0.1}\n",
        "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"duration_ms\":1000,",
        "\"num_turns\":7,\"result\":\"done\",\"session_id\":\"s\",\"total_cost_usd\":0.2345,",
        "\"usage\":{\"input_tokens\":12,\"cache_creation_input_tokens\":1000,",
        "\"cache_read_input_tokens\":30000,\"output_tokens\":456,\"service_tier\":\"standard\"}}\n",
        "\u{0}\u{1}garbage",
    ));
    let r = read_stream_json(&p).unwrap();
    assert_eq!(
        r.usage,
        Usage {
            turns: Some(7),
            input_tokens: Some(31_012),
            output_tokens: Some(456),
            cost_usd: Some(0.2345),
        }
    );
    assert_eq!(r.status, None);
}

#[test]
fn a_max_turns_result_means_out_of_budget() {
    let (_d, p) = file(
        "{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"num_turns\":60,\"usage\":{\"output_tokens\":9}}\n",
    );
    let r = read_stream_json(&p).unwrap();
    assert_eq!(r.status, Some(EndStatus::OutOfBudget));
    assert_eq!(r.usage.turns, Some(60));
    assert_eq!(r.usage.input_tokens, None);
}

#[test]
fn a_usage_file_larger_than_its_bound_is_a_note_and_is_not_parsed() {
    let padding = " ".repeat(USAGE_FILE_MAX as usize);
    let (_d, p) = file(&format!("{{\"turns\": 3{padding}}}"));
    let r = read_usage_file(&p).unwrap();
    assert_eq!(r.usage.turns, None);
    assert_eq!(r.notes, vec!["usage file: larger than 1024 KiB, not read"]);
}

#[test]
fn a_stdout_line_longer_than_the_bound_is_skipped_and_the_result_after_it_found() {
    let huge = "x".repeat(RESULT_LINE_MAX + 1);
    let (_d, p) = file(&format!(
        "{huge}\"result\"\n{{\"type\":\"result\",\"num_turns\":4}}\n"
    ));
    assert_eq!(read_stream_json(&p).unwrap().usage.turns, Some(4));
}

#[test]
fn a_wrappers_failure_object_is_read_and_a_malformed_one_is_a_note() {
    let (_d, p) = file(
        r#"{"turns": 2, "failure": {"kind": "infra", "reason": "HTTP 529 overloaded_error\u001b[2J\u202e", "http_status": 529}}"#,
    );
    let r = read_usage_file(&p).unwrap();
    let f = r.failure.unwrap();
    assert_eq!(f.kind, FailureKind::Infra);
    assert_eq!(f.http_status, Some(529));
    assert_eq!(f.reason, "HTTP 529 overloaded_error\\e[2J\\u{202e}");
    let (_d, p) = file(r#"{"failure": {"kind": "outage"}}"#);
    let r = read_usage_file(&p).unwrap();
    assert_eq!(r.failure, None);
    assert!(
        r.notes[0].contains("not one of agent, infra, auth"),
        "{:?}",
        r.notes
    );
    let (_d, p) = file(r#"{"failure": {"kind": "infra", "retry_after_ms": 30000}}"#);
    assert_eq!(
        read_usage_file(&p).unwrap().failure.unwrap().retry_after_ms,
        Some(30000)
    );
    let (_d, p) = file(r#"{"failure": {"kind": "infra", "retry_after_ms": "soon"}}"#);
    let r = read_usage_file(&p).unwrap();
    assert_eq!(r.failure.unwrap().retry_after_ms, None);
    assert!(r.notes[0].contains("retry_after_ms"), "{:?}", r.notes);
    let (_d, p) = file(r#"{"failure": {"kind": "auth", "http_status": 99999}}"#);
    let r = read_usage_file(&p).unwrap();
    assert_eq!(r.failure.unwrap().http_status, None);
    assert!(r.notes[0].contains("not an HTTP status"), "{:?}", r.notes);
}

#[test]
fn a_claude_error_result_with_an_api_status_is_a_failure_with_the_clis_retries() {
    let (_d, p) = file(concat!(
        "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1,\"max_retries\":2,\"error_status\":529}\n",
        "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":2,\"max_retries\":2,\"error_status\":529}\n",
        "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":true,\"terminal_reason\":\"api_error\",",
        "\"api_error_status\":529,\"result\":\"API Error: 529 overloaded\",\"num_turns\":1}\n",
    ));
    let f = read_stream_json(&p).unwrap().failure.unwrap();
    assert_eq!(f.kind, FailureKind::Infra);
    assert_eq!(f.http_status, Some(529));
    assert_eq!(
        f.reason,
        "HTTP 529 (api_error) in the CLI's result after 2 retries by the CLI"
    );
    let (_d, p) = file(
        "{\"type\":\"result\",\"is_error\":true,\"terminal_reason\":\"api_error\",\"api_error_status\":401}\n",
    );
    assert_eq!(
        read_stream_json(&p).unwrap().failure.unwrap().kind,
        FailureKind::Auth
    );
}

#[test]
fn a_claude_success_after_its_own_retries_and_the_agents_prose_are_no_failure() {
    // The CLI recovered by itself: no failure, whatever it retried.
    let (_d, p) = file(concat!(
        "{\"type\":\"system\",\"subtype\":\"api_retry\",\"attempt\":1,\"error_status\":529}\n",
        "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"num_turns\":3}\n",
    ));
    assert_eq!(read_stream_json(&p).unwrap().failure, None);
    // A tool's output is a string inside a message line: never evidence, even when
    // it holds a whole error result line.
    let (_d, p) = file(concat!(
        "{\"type\":\"user\",\"message\":{\"content\":[{\"type\":\"tool_result\",\"content\":",
        "\"API Error: 529\\n{\\\"type\\\":\\\"result\\\",\\\"is_error\\\":true,\\\"api_error_status\\\":529}\"}]}}\n",
        "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"num_turns\":3}\n",
    ));
    assert_eq!(read_stream_json(&p).unwrap().failure, None);
    // An error result that is not an API error says nothing about the provider,
    // whatever its text: its words may be the model's.
    let (_d, p) = file(
        "{\"type\":\"result\",\"subtype\":\"error_during_execution\",\"is_error\":true,\"result\":\"authentication failed: invalid api key\"}\n",
    );
    assert_eq!(read_stream_json(&p).unwrap().failure, None);
    let (_d, p) = file(
        "{\"type\":\"result\",\"is_error\":true,\"terminal_reason\":\"api_error\",\"result\":\"Invalid API key\"}\n",
    );
    assert_eq!(
        read_stream_json(&p).unwrap().failure.map(|f| f.kind),
        Some(FailureKind::Auth)
    );
    // A 400 is a request the agent made; max turns is a budget.
    let (_d, p) = file("{\"type\":\"result\",\"is_error\":true,\"api_error_status\":400}\n");
    assert_eq!(read_stream_json(&p).unwrap().failure, None);
    let (_d, p) = file("{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":true}\n");
    assert_eq!(read_stream_json(&p).unwrap().failure, None);
}

#[test]
fn output_without_a_result_line_gives_nothing() {
    let (_d, p) = file("hello\n{\"type\":\"assistant\"}\n");
    assert_eq!(read_stream_json(&p), None);
}
