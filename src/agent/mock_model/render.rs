//! Each scripted step as the calling CLI's own tool call, in the wire format of its API:
//! Anthropic Messages for Claude Code (its `Read`, `Write`, `Edit` and `Bash` tools),
//! OpenAI Responses for Codex (its `exec_command` function and `apply_patch` custom
//! tool) and Chat Completions for aider (its SEARCH/REPLACE edit blocks and shell
//! block in the answer's text, see `aider`). Streaming and non-streaming both, as the request asks.

use serde_json::{Value, json};

use super::http::Response;

/// The model name the server answers with when the request names none.
const MODEL: &str = "loopbench-mock";

/// What one answer of the model holds, vendor-neutral.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A final text answer: the CLI's turn ends.
    Text(String),
    /// One tool call: `name` with `input` (a JSON object, or a string for a custom tool).
    Tool {
        /// The call's id, unique in the session.
        id: String,
        /// The CLI's tool name.
        name: String,
        /// Its arguments.
        input: Value,
        /// Whether `input` is free text (an OpenAI custom tool), not JSON arguments.
        custom: bool,
    },
}

/// Token counts the server reports for one answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tokens {
    /// Prompt tokens: the request body's bytes / 4, rounded up.
    pub input: u64,
    /// Output tokens: the answer's JSON bytes / 4, rounded up.
    pub output: u64,
}

impl Tokens {
    /// The counts of `request_bytes` in and `reply` out.
    pub fn of(request_bytes: usize, reply: &Reply) -> Tokens {
        let out = match reply {
            Reply::Text(t) => t.len(),
            Reply::Tool { name, input, .. } => name.len() + input.to_string().len(),
        };
        Tokens {
            input: (request_bytes as u64).div_ceil(4).max(1),
            output: (out as u64).div_ceil(4).max(1),
        }
    }
}

/// A shell word: `text` in single quotes.
pub fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// A shell command that writes `content` to `path` byte for byte (parents created).
pub fn write_command(path: &str, content: &str) -> String {
    let mkdir = match path.rsplit_once('/') {
        Some((dir, _)) if !dir.is_empty() => format!("mkdir -p {} && ", shell_quote(dir)),
        _ => String::new(),
    };
    format!(
        "{mkdir}printf '%s' {} > {}",
        shell_quote(content),
        shell_quote(path)
    )
}

/// A Codex `apply_patch` patch replacing the lines `old` by `new` in `path`.
pub fn apply_patch(path: &str, old: &str, new: &str) -> String {
    let mut patch = format!("*** Begin Patch\n*** Update File: {path}\n@@\n");
    for line in old.strip_suffix('\n').unwrap_or(old).split('\n') {
        patch.push('-');
        patch.push_str(line);
        patch.push('\n');
    }
    for line in new.strip_suffix('\n').unwrap_or(new).split('\n') {
        patch.push('+');
        patch.push_str(line);
        patch.push('\n');
    }
    patch.push_str("*** End Patch\n");
    patch
}

/// The model named in a request body, or the server's own name.
pub fn model_of(body: &Value) -> String {
    body.get("model")
        .and_then(Value::as_str)
        .unwrap_or(MODEL)
        .to_string()
}

/// Whether the request asks for a stream.
pub fn streams(body: &Value) -> bool {
    body.get("stream").and_then(Value::as_bool).unwrap_or(false)
}

/// An Anthropic Messages answer.
pub fn anthropic(body: &Value, id: &str, reply: &Reply, tokens: Tokens) -> Response {
    let model = model_of(body);
    let (content, stop) = match reply {
        Reply::Text(text) => (json!([{"type": "text", "text": text}]), "end_turn"),
        Reply::Tool {
            id, name, input, ..
        } => (
            json!([{"type": "tool_use", "id": id, "name": name, "input": input}]),
            "tool_use",
        ),
    };
    let usage = json!({"input_tokens": tokens.input, "output_tokens": tokens.output,
                       "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0});
    if !streams(body) {
        return Response::Json(
            200,
            json!({"id": id, "type": "message", "role": "assistant", "model": model,
                   "content": content, "stop_reason": stop, "stop_sequence": null,
                   "usage": usage}),
        );
    }
    let event = |name: &str, data: Value| (Some(name.to_string()), data.to_string());
    let mut events = vec![event(
        "message_start",
        json!({"type": "message_start", "message": {"id": id, "type": "message",
               "role": "assistant", "model": model, "content": [], "stop_reason": null,
               "stop_sequence": null,
               "usage": {"input_tokens": tokens.input, "output_tokens": 1,
                         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}),
    )];
    match reply {
        Reply::Text(text) => {
            events.push(event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "text", "text": ""}}),
            ));
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": text}}),
            ));
        }
        Reply::Tool {
            id, name, input, ..
        } => {
            events.push(event(
                "content_block_start",
                json!({"type": "content_block_start", "index": 0,
                       "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}}),
            ));
            events.push(event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "input_json_delta", "partial_json": input.to_string()}}),
            ));
        }
    }
    events.push(event(
        "content_block_stop",
        json!({"type": "content_block_stop", "index": 0}),
    ));
    events.push(event(
        "message_delta",
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": tokens.output}}),
    ));
    events.push(event("message_stop", json!({"type": "message_stop"})));
    Response::Events(events)
}

/// An OpenAI Responses answer (Codex streams; a plain JSON response otherwise).
pub fn responses(body: &Value, id: &str, reply: &Reply, tokens: Tokens) -> Response {
    let model = model_of(body);
    let item = match reply {
        Reply::Text(text) => json!({"type": "message", "id": format!("msg_{id}"),
            "status": "completed", "role": "assistant",
            "content": [{"type": "output_text", "text": text, "annotations": []}]}),
        Reply::Tool {
            id: call,
            name,
            input,
            custom: true,
        } => json!({"type": "custom_tool_call", "id": format!("ctc_{call}"), "status": "completed",
            "call_id": call, "name": name, "input": input.as_str().unwrap_or_default()}),
        Reply::Tool {
            id: call,
            name,
            input,
            custom: false,
        } => json!({"type": "function_call", "id": format!("fc_{call}"), "status": "completed",
            "call_id": call, "name": name, "arguments": input.to_string()}),
    };
    let usage = json!({"input_tokens": tokens.input,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": tokens.output,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": tokens.input + tokens.output});
    let response = |status: &str, output: Value, usage: Value| {
        json!({"id": id, "object": "response", "created_at": 0, "status": status,
               "model": model, "output": output, "usage": usage})
    };
    if !streams(body) {
        return Response::Json(200, response("completed", json!([item]), usage));
    }
    let event = |name: &str, data: Value| (Some(name.to_string()), data.to_string());
    Response::Events(vec![
        event(
            "response.created",
            json!({"type": "response.created", "sequence_number": 0,
                   "response": response("in_progress", json!([]), Value::Null)}),
        ),
        event(
            "response.output_item.added",
            json!({"type": "response.output_item.added", "sequence_number": 1,
                   "output_index": 0, "item": item}),
        ),
        event(
            "response.output_item.done",
            json!({"type": "response.output_item.done", "sequence_number": 2,
                   "output_index": 0, "item": item}),
        ),
        event(
            "response.completed",
            json!({"type": "response.completed", "sequence_number": 3,
                   "response": response("completed", json!([item]), usage)}),
        ),
    ])
}

/// A Chat Completions answer (tool calls as `tool_calls`; aider's edits are text).
pub fn chat(body: &Value, id: &str, reply: &Reply, tokens: Tokens) -> Response {
    let model = model_of(body);
    let usage = json!({"prompt_tokens": tokens.input, "completion_tokens": tokens.output,
                       "total_tokens": tokens.input + tokens.output});
    let (message, finish) = match reply {
        Reply::Text(text) => (json!({"role": "assistant", "content": text}), "stop"),
        Reply::Tool {
            id: call,
            name,
            input,
            ..
        } => (
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": call,
                   "type": "function", "function": {"name": name, "arguments": input.to_string()}}]}),
            "tool_calls",
        ),
    };
    if !streams(body) {
        return Response::Json(
            200,
            json!({"id": id, "object": "chat.completion", "created": 0, "model": model,
                   "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                   "usage": usage}),
        );
    }
    let chunk = |delta: Value, finish: Value, usage: Value| {
        let mut c = json!({"id": id, "object": "chat.completion.chunk", "created": 0,
                           "model": model,
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        if !usage.is_null() {
            c["usage"] = usage;
        }
        (None, c.to_string())
    };
    let mut delta = message.clone();
    if let Some(calls) = delta.get_mut("tool_calls").and_then(Value::as_array_mut) {
        for (i, call) in calls.iter_mut().enumerate() {
            call["index"] = json!(i);
        }
    }
    Response::Events(vec![
        chunk(delta, Value::Null, Value::Null),
        chunk(json!({}), json!(finish), usage),
        (None, "[DONE]".to_string()),
    ])
}

/// The error body of the Anthropic Messages API for `status`, as the API sends it:
/// `{"type": "error", "error": {"type": "overloaded_error", "message": ...}}`.
pub fn anthropic_error(status: u16) -> Value {
    let (kind, message) = match status {
        400 => ("invalid_request_error", "Invalid request."),
        401 => ("authentication_error", "invalid x-api-key"),
        403 => (
            "permission_error",
            "Your API key does not have permission to use the specified resource.",
        ),
        404 => (
            "not_found_error",
            "The requested resource could not be found.",
        ),
        413 => (
            "request_too_large",
            "Request exceeds the maximum allowed number of bytes.",
        ),
        429 => (
            "rate_limit_error",
            "This request would exceed the rate limit for your organization.",
        ),
        529 => ("overloaded_error", "Overloaded"),
        _ => ("api_error", "Internal server error"),
    };
    json!({"type": "error", "error": {"type": kind, "message": message},
           "request_id": format!("req_loopbench_mock_{status}")})
}

/// The error body of the OpenAI APIs (Responses and Chat Completions) for `status`:
/// `{"error": {"message": ..., "type": ..., "param": null, "code": ...}}`.
pub fn openai_error(status: u16) -> Value {
    let (message, kind, code) = match status {
        400 => ("Invalid request.", "invalid_request_error", Value::Null),
        401 => (
            "Incorrect API key provided: loopbenc*******-key. You can find your API key at https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            json!("invalid_api_key"),
        ),
        403 => (
            "You are not allowed to sample from this model",
            "invalid_request_error",
            json!("permission_denied"),
        ),
        404 => (
            "The model does not exist.",
            "invalid_request_error",
            json!("model_not_found"),
        ),
        429 => (
            "Rate limit reached for requests. Please try again later.",
            "requests",
            json!("rate_limit_exceeded"),
        ),
        503 | 529 => (
            "The engine is currently overloaded, please try again later.",
            "server_error",
            Value::Null,
        ),
        _ => (
            "The server had an error while processing your request. Sorry about that!",
            "server_error",
            Value::Null,
        ),
    };
    json!({"error": {"message": message, "type": kind, "param": null, "code": code}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_files_and_patches_keep_every_byte() {
        assert_eq!(
            write_command("src/a b.py", "it's\n"),
            r"mkdir -p 'src' && printf '%s' 'it'\''s
' > 'src/a b.py'"
        );
        assert_eq!(write_command("x", ""), "printf '%s' '' > 'x'");
        assert_eq!(
            apply_patch("F.md", "- [ ] **F1** x\n", "- [x] **F1** x"),
            "*** Begin Patch\n*** Update File: F.md\n@@\n-- [ ] **F1** x\n+- [x] **F1** x\n*** End Patch\n"
        );
    }

    #[test]
    fn a_streamed_tool_call_ends_with_its_usage() {
        let reply = Reply::Tool {
            id: "toolu_1".into(),
            name: "Bash".into(),
            input: json!({"command": "ls"}),
            custom: false,
        };
        let tokens = Tokens {
            input: 10,
            output: 3,
        };
        let Response::Events(events) = anthropic(&json!({"stream": true}), "m1", &reply, tokens)
        else {
            panic!("expected a stream");
        };
        let names: Vec<&str> = events.iter().filter_map(|(n, _)| n.as_deref()).collect();
        assert_eq!(
            names,
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop"
            ]
        );
        assert!(events[4].1.contains("\"output_tokens\":3"));
        assert!(events[4].1.contains("tool_use"));
        let Response::Json(200, plain) = anthropic(&json!({}), "m1", &reply, tokens) else {
            panic!("expected JSON");
        };
        assert_eq!(plain["content"][0]["input"]["command"], "ls");
        assert_eq!(plain["usage"]["input_tokens"], 10);
    }

    #[test]
    fn a_streamed_chat_answer_carries_its_usage_in_the_last_chunk() {
        let reply = Reply::Text("edit blocks".into());
        let tokens = Tokens {
            input: 7,
            output: 2,
        };
        let Response::Events(events) = chat(&json!({"stream": true}), "c1", &reply, tokens) else {
            panic!("expected a stream");
        };
        assert!(
            events.iter().all(|(name, _)| name.is_none()),
            "data lines only"
        );
        let first: Value = serde_json::from_str(&events[0].1).unwrap();
        assert_eq!(first["choices"][0]["delta"]["content"], "edit blocks");
        let last: Value = serde_json::from_str(&events[1].1).unwrap();
        assert_eq!(last["choices"][0]["finish_reason"], "stop");
        assert_eq!(
            (
                last["usage"]["prompt_tokens"].as_u64(),
                last["usage"]["completion_tokens"].as_u64()
            ),
            (Some(7), Some(2))
        );
        assert_eq!(events[2].1, "[DONE]");
        let Response::Json(200, plain) = chat(&json!({}), "c1", &reply, tokens) else {
            panic!("expected JSON");
        };
        assert_eq!(plain["usage"]["total_tokens"], 9);
    }
}
