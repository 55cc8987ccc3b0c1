//! Unit tests of the scripted model server: answers, aider's calls, injected faults.

use super::*;
use crate::agent::mock_model::script::Scenario;
use std::path::Path;

fn chat(last_user: &str) -> Request {
    let body = json!({"model": "gpt-4o", "stream": false, "messages": [
        {"role": "system", "content": "Act as an expert software developer."},
        {"role": "user", "content": last_user}]});
    Request {
        method: "POST".into(),
        path: "/v1/chat/completions".into(),
        headers: Vec::new(),
        body: body.to_string().into_bytes(),
    }
}

fn text(answer: Answer) -> (u16, String) {
    match answer {
        Answer::Reply(Response::Json(status, value)) => (
            status,
            value
                .pointer("/choices/0/message/content")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        ),
        Answer::Reply(other) => panic!("expected JSON, got {other:?}"),
        _ => panic!("unexpected crash or fault"),
    }
}

fn server(ending: &str) -> (tempfile::TempDir, Arc<Server>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("NOTES.md"), "old\n").unwrap();
    let scenario = Scenario::parse(
        Path::new("s.jsonl"),
        &format!(
            "{{\"op\":\"session\",\"n\":1}}\n\
             {{\"op\":\"write\",\"path\":\"NOTES.md\",\"content\":\"new\\n\"}}\n\
             {{\"op\":\"run\",\"cmd\":\"bin/tool A\"}}\n\
             {{\"op\":\"end\",\"status\":\"{ending}\",\"summary\":\"done\"}}\n"
        ),
    )
    .unwrap();
    let session = scenario.session(1).unwrap().clone();
    let server = Server::new(session, 1, dir.path().to_path_buf(), None, None);
    (dir, server)
}

fn anthropic_main() -> Request {
    let body = json!({"model": "m", "stream": false,
        "tools": [{"name": "Bash"}, {"name": "Write"}],
        "messages": [{"role": "user", "content": "go"}]});
    Request {
        method: "POST".into(),
        path: "/v1/messages".into(),
        headers: Vec::new(),
        body: body.to_string().into_bytes(),
    }
}

fn faulted(faults: &str, attempt: u32) -> (tempfile::TempDir, Arc<Server>) {
    let dir = tempfile::tempdir().unwrap();
    let scenario = Scenario::parse(
        Path::new("s.jsonl"),
        &format!(
            "{{\"op\":\"session\",\"n\":1}}\n{faults}\
             {{\"op\":\"end\",\"status\":\"completed\",\"summary\":\"done\"}}\n"
        ),
    )
    .unwrap();
    let session = scenario.session(1).unwrap().clone();
    let server = Server::new(session, attempt, dir.path().to_path_buf(), None, None);
    (dir, server)
}

fn status_of(answer: Answer) -> (u16, Value, Option<u32>) {
    match answer {
        Answer::Reply(Response::Error {
            status,
            body,
            retry_after,
        }) => (status, body, retry_after),
        Answer::Reply(Response::Json(status, body)) => (status, body, None),
        _ => panic!("expected a JSON answer"),
    }
}

#[test]
fn a_status_fault_fails_its_number_of_main_calls_in_its_attempts_only() {
    let faults = concat!(
        "{\"op\":\"fault\",\"status\":529,\"requests\":2,\"attempts\":[1]}\n",
        "{\"op\":\"write\",\"path\":\"a.txt\",\"content\":\"x\"}\n",
        "{\"op\":\"fault\",\"status\":429,\"requests\":1,\"retry_after\":7}\n",
    );
    let (_dir, server) = faulted(faults, 1);
    for _ in 0..2 {
        let (status, body, _) = status_of(server.answer(&anthropic_main()));
        assert_eq!(status, 529);
        assert_eq!(body["type"], "error");
        assert_eq!(body["error"]["type"], "overloaded_error");
    }
    // The 529s are spent: the step is answered, and the 429 placed after it fails
    // the next call, with its retry-after.
    let (status, body, _) = status_of(server.answer(&anthropic_main()));
    assert_eq!(
        (status, body["content"][0]["name"].as_str()),
        (200, Some("Write"))
    );
    let (status, body, retry_after) = status_of(server.answer(&anthropic_main()));
    assert_eq!((status, retry_after), (429, Some(7)));
    assert_eq!(body["error"]["type"], "rate_limit_error");
    let (status, body, _) = status_of(server.answer(&anthropic_main()));
    assert_eq!(
        (status, body["content"][0]["text"].as_str()),
        (200, Some("done"))
    );
    let summary = server.summary();
    assert_eq!((summary.faults, summary.turns), (3, 2));
    assert!(summary.finished);

    // Attempt 2: the first fault is attempt 1's only.
    let (_dir, server) = faulted(faults, 2);
    let (status, _, _) = status_of(server.answer(&anthropic_main()));
    assert_eq!(status, 200);
    assert_eq!(status_of(server.answer(&anthropic_main())).0, 429);
}

#[test]
fn openai_apis_get_their_own_error_objects_and_side_calls_no_fault() {
    let (_dir, server) = faulted("{\"op\":\"fault\",\"status\":401}\n", 1);
    let (status, body, _) = status_of(server.answer(&chat("go")));
    assert_eq!(status, 401);
    assert_eq!(body["error"]["code"], "invalid_api_key");
    assert_eq!(body["error"]["type"], "invalid_request_error");
    // Without `requests`, every later main call fails; a side call is answered.
    assert_eq!(status_of(server.answer(&chat("again"))).0, 401);
    let side = json!({"model": "m", "messages": [
        {"role": "system", "content": "Write a commit message."},
        {"role": "user", "content": "diff"}]});
    let side = Request {
        body: side.to_string().into_bytes(),
        ..chat("x")
    };
    assert_eq!(status_of(server.answer(&side)).0, 200);
    assert_eq!(server.summary().faults, 2);
}

#[test]
fn a_dropped_answer_is_cut_after_its_first_part_and_a_stalled_one_never_comes() {
    let (_dir, server) = faulted(
        "{\"op\":\"fault\",\"drop\":true,\"requests\":1}\n\
         {\"op\":\"fault\",\"stall\":\"request\",\"requests\":1}\n\
         {\"op\":\"fault\",\"stall\":\"stream\",\"requests\":1}\n",
        1,
    );
    assert!(matches!(server.answer(&anthropic_main()), Answer::Drop(_)));
    assert!(matches!(
        server.answer(&anthropic_main()),
        Answer::Stall(None)
    ));
    assert!(matches!(
        server.answer(&anthropic_main()),
        Answer::Stall(Some(Response::Json(200, _)))
    ));
    let (status, body, _) = status_of(server.answer(&anthropic_main()));
    assert_eq!(
        (status, body["content"][0]["text"].as_str()),
        (200, Some("done"))
    );
}

#[test]
fn aider_gets_the_session_again_after_adding_files_and_the_summary_after_that() {
    let (_dir, server) = server("completed");
    let (status, first) = text(server.answer(&chat("go")));
    assert_eq!(status, 200);
    assert!(
        first.starts_with("NOTES.md\n````\n<<<<<<< SEARCH\nold\n=======\nnew\n"),
        "{first}"
    );
    assert!(
        first.ends_with("```bash\nbin/tool A\n```\n\ndone"),
        "{first}"
    );
    let again = chat(
        "I added these files to the chat: NOTES.md\nLet me know if there are others we should add.",
    );
    assert_eq!(text(server.answer(&again)).1, first);
    assert_eq!(text(server.answer(&chat("FAILED (errors=1)"))).1, "done");
    let summary = server.summary();
    assert_eq!((summary.turns, summary.steps_served), (3, 2));
    assert!(summary.finished && !summary.crashed);
}

#[test]
fn aiders_call_after_the_answer_is_where_a_scripted_crash_lands() {
    let (_dir, server) = server("interrupted");
    text(server.answer(&chat("go")));
    assert!(matches!(
        server.answer(&chat("FAILED (errors=1)")),
        Answer::Crash
    ));
    let summary = server.summary();
    assert!(summary.crashed && !summary.finished);
    assert_eq!(summary.turns, 1);
}
