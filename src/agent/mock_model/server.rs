//! The scripted model server of one session: answers each model call of the CLI with
//! the session's next step, rendered for the API the CLI speaks, and logs every answer
//! with the usage it reported (one JSON object per line), so that what the CLI and the
//! harness recorded can be checked against what was served.
//!
//! A *main* call is one of the CLI's agent loop (its request offers the file and shell
//! tools); it gets the next step. Anything else (a title or commit message the CLI asks
//! a small model for, a token count) is a *side* call: a short text answer, logged apart.
//! A scripted fault fails main calls only (and counts only them), so that where it
//! lands does not depend on the side calls a CLI happens to make.

use std::collections::HashSet;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Notify;

use super::aider;
use super::http::{self, Request, Response};
use super::render::{self, Reply, Tokens};
use super::script::{Ending, Fault, FaultKind, ScriptedSession};
use super::tool_call::{ClaudeCall, ShellTool, claude_code_call, offers, shell_call};

/// The wire protocol of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Api {
    /// `POST /v1/messages` (Claude Code).
    Anthropic,
    /// `POST /v1/responses` (Codex).
    Responses,
    /// `POST /v1/chat/completions` (aider through litellm).
    Chat,
}

/// One line of the served log.
#[derive(Debug, Clone, Serialize)]
pub struct Served {
    /// The session number.
    pub session: u32,
    /// The protocol.
    pub api: Api,
    /// `main`, `side`, `extra` (a main call after the final answer), `crash` or
    /// `fault` (a main call failed on purpose; `reply` says how).
    pub kind: &'static str,
    /// The scripted step answered (0-based), when one was.
    pub step: Option<usize>,
    /// The tool called, or `text`.
    pub reply: String,
    /// Input tokens reported.
    pub input_tokens: u64,
    /// Output tokens reported.
    pub output_tokens: u64,
}

/// The last line of the served log: the session's totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// The session number.
    pub session: u32,
    /// Main calls answered (the CLI's turns).
    pub turns: u64,
    /// Input tokens reported on main calls.
    pub input_tokens: u64,
    /// Output tokens reported on main calls.
    pub output_tokens: u64,
    /// Side calls answered.
    pub side_calls: u64,
    /// Input tokens reported on side calls.
    pub side_input_tokens: u64,
    /// Output tokens reported on side calls.
    pub side_output_tokens: u64,
    /// Scripted steps answered, of `steps`.
    pub steps_served: usize,
    /// Scripted steps of the session.
    pub steps: usize,
    /// The final answer was given.
    pub finished: bool,
    /// The CLI was killed at the scripted crash.
    pub crashed: bool,
    /// Main calls failed by a scripted fault.
    pub faults: u64,
}

struct State {
    next: usize,
    /// Files Claude Code has read or written in this session (its Edit and Write refuse
    /// a file it has not read).
    known: HashSet<String>,
    calls: u64,
    calls_main: u64,
    /// Calls each fault of the session has failed so far.
    fault_used: Vec<u32>,
    summary: Summary,
}

/// The server of one scripted session.
pub struct Server {
    session: ScriptedSession,
    work_dir: PathBuf,
    state: Mutex<State>,
    log: Mutex<Option<std::fs::File>>,
    requests_dir: Option<PathBuf>,
    /// The attempt of the trial being served (faults may name attempts).
    attempt: u32,
    /// Notified when the CLI reaches the scripted crash.
    pub crash: Notify,
}

enum Answer {
    Reply(Response),
    Crash,
    /// The first part of this answer, then the connection is closed.
    Drop(Response),
    /// The answer stops coming: after the first part of this one, or before anything.
    Stall(Option<Response>),
}

impl Server {
    /// A server for `session` in attempt `attempt` of its trial, the CLI running in
    /// `work_dir`; answers are appended to `log`, and every request body is kept in
    /// `requests_dir` when given.
    pub fn new(
        session: ScriptedSession,
        attempt: u32,
        work_dir: PathBuf,
        log: Option<std::fs::File>,
        requests_dir: Option<PathBuf>,
    ) -> Arc<Server> {
        let summary = Summary {
            session: session.n,
            steps: session.steps.len(),
            ..Summary::default()
        };
        let faults = session.faults.len();
        Arc::new(Server {
            session,
            work_dir,
            state: Mutex::new(State {
                next: 0,
                known: HashSet::new(),
                calls: 0,
                calls_main: 0,
                fault_used: vec![0; faults],
                summary,
            }),
            log: Mutex::new(log),
            requests_dir,
            attempt,
            crash: Notify::new(),
        })
    }

    /// The totals so far.
    pub fn summary(&self) -> Summary {
        self.lock().summary.clone()
    }

    /// Appends `summary` as the log's last line.
    pub fn log_summary(&self, summary: &Summary) {
        self.log_line(&json!({"summary": summary}));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn log_line(&self, value: &impl Serialize) {
        let mut log = self.log.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(file) = log.as_mut()
            && let Ok(line) = serde_json::to_string(value)
        {
            let _ = writeln!(file, "{line}");
            let _ = file.flush();
        }
    }

    /// Accepts connections until the task is dropped.
    pub async fn serve(self: Arc<Self>, listener: TcpListener) {
        while let Ok((stream, _)) = listener.accept().await {
            let server = self.clone();
            tokio::spawn(async move { server.handle(stream).await });
        }
    }

    async fn handle(self: Arc<Self>, mut stream: TcpStream) {
        let Ok(Some(request)) = http::read_request(&mut stream).await else {
            return;
        };
        match self.answer(&request) {
            Answer::Reply(response) => {
                let _ = http::write_response(&mut stream, &response).await;
            }
            Answer::Crash => {
                self.crash.notify_one();
                // Hold the connection: the CLI is killed while it waits for its answer.
                std::future::pending::<()>().await;
            }
            Answer::Drop(response) => {
                // The head announced the whole answer; closing now cuts it short.
                let _ = http::write_first_part(&mut stream, &response).await;
            }
            Answer::Stall(first) => {
                if let Some(response) = first {
                    let _ = http::write_first_part(&mut stream, &response).await;
                }
                // Nothing more until the session ends (or the CLI gives up).
                std::future::pending::<()>().await;
            }
        }
    }

    /// The fault that fails this main call, if one applies: the first fault of the
    /// session, in the order written, that applies in this attempt (and environment), whose place among
    /// the steps has been reached and that has calls left to fail. For aider, which
    /// takes a whole session in one answer, a fault before the first step applies to
    /// that answer's call and any other one to the calls after it.
    fn take_fault(&self, api: Api) -> Option<Fault> {
        let mut state = self.lock();
        let reached = |fault: &Fault| {
            if api == Api::Chat {
                fault.at == 0 || state.calls_main > 0
            } else {
                state.next >= fault.at
            }
        };
        let index = self.session.faults.iter().enumerate().position(|(i, f)| {
            f.applies(self.attempt)
                && reached(f)
                && f.requests.is_none_or(|r| state.fault_used[i] < r)
        })?;
        state.fault_used[index] += 1;
        state.summary.faults += 1;
        Some(self.session.faults[index].clone())
    }

    /// The answer to a main call failed by `fault`, in the API's own error shape.
    fn fault_answer(&self, api: Api, body: &Value, id: &str, fault: &Fault) -> Answer {
        self.log_line(&Served {
            session: self.session.n,
            api,
            kind: "fault",
            step: None,
            reply: fault.label(),
            input_tokens: 0,
            output_tokens: 0,
        });
        let cut_short = || {
            let reply = Reply::Text("loopbench: an answer cut short".into());
            let tokens = Tokens::of(body.to_string().len(), &reply);
            match api {
                Api::Anthropic => render::anthropic(body, id, &reply, tokens),
                Api::Responses => render::responses(body, id, &reply, tokens),
                Api::Chat => render::chat(body, id, &reply, tokens),
            }
        };
        match fault.kind {
            FaultKind::Status {
                status,
                retry_after,
            } => Answer::Reply(Response::Error {
                status,
                body: match api {
                    Api::Anthropic => render::anthropic_error(status),
                    Api::Responses | Api::Chat => render::openai_error(status),
                },
                retry_after,
            }),
            FaultKind::Drop => Answer::Drop(cut_short()),
            FaultKind::Stall { in_stream } => Answer::Stall(in_stream.then(cut_short)),
        }
    }

    fn answer(&self, request: &Request) -> Answer {
        let n = self.count_call();
        self.keep_request(n, request);
        let api = match route(request) {
            Ok(api) => api,
            Err(response) => return Answer::Reply(response),
        };
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return Answer::Reply(Response::Json(
                400,
                json!({"error": {"type": "invalid_request_error",
                       "message": "the request body is not JSON"}}),
            ));
        };
        let id = format!("mock_{}_{n}", self.session.n);
        let main = is_main(api, &body);
        if main && let Some(fault) = self.take_fault(api) {
            return self.fault_answer(api, &body, &id, &fault);
        }
        let (kind, step, reply) = if main {
            match self.next_reply(api, &body, &id) {
                Some(served) => served,
                None => return self.crash(api),
            }
        } else {
            (
                "side",
                None,
                Reply::Text("loopbench: scripted change".into()),
            )
        };
        let tokens = Tokens::of(request.body.len(), &reply);
        self.count_usage(kind, tokens);
        self.log_line(&Served {
            session: self.session.n,
            api,
            kind,
            step,
            reply: match &reply {
                Reply::Text(_) => "text".into(),
                Reply::Tool { name, .. } => name.clone(),
            },
            input_tokens: tokens.input,
            output_tokens: tokens.output,
        });
        Answer::Reply(match api {
            Api::Anthropic => render::anthropic(&body, &id, &reply, tokens),
            Api::Responses => render::responses(&body, &id, &reply, tokens),
            Api::Chat => render::chat(&body, &id, &reply, tokens),
        })
    }

    /// Counts a call; returns its number in the session, from 1.
    fn count_call(&self) -> u64 {
        let mut state = self.lock();
        state.calls += 1;
        state.calls
    }

    /// Keeps the head and body of call `n` in the requests directory, when there is one.
    fn keep_request(&self, n: u64, request: &Request) {
        if let Some(dir) = &self.requests_dir {
            let head = format!("{} {}\n", request.method, request.path);
            let _ = std::fs::write(dir.join(format!("request-{n:03}.head")), head);
            let _ = std::fs::write(dir.join(format!("request-{n:03}.body")), &request.body);
        }
    }

    /// The scripted crash: logged, and the summary says the session crashed.
    fn crash(&self, api: Api) -> Answer {
        self.log_line(&Served {
            session: self.session.n,
            api,
            kind: "crash",
            step: None,
            reply: "crash".into(),
            input_tokens: 0,
            output_tokens: 0,
        });
        self.lock().summary.crashed = true;
        Answer::Crash
    }

    /// Adds the usage of one answer to the summary, as a turn or as a side call.
    fn count_usage(&self, kind: &str, tokens: Tokens) {
        let mut state = self.lock();
        let s = &mut state.summary;
        if kind == "side" {
            s.side_calls += 1;
            s.side_input_tokens += tokens.input;
            s.side_output_tokens += tokens.output;
        } else {
            s.turns += 1;
            s.input_tokens += tokens.input;
            s.output_tokens += tokens.output;
        }
    }

    /// The answer to the next main call: (kind, step, reply), or `None` at the crash.
    fn next_reply(
        &self,
        api: Api,
        body: &Value,
        id: &str,
    ) -> Option<(&'static str, Option<usize>, Reply)> {
        let mut state = self.lock();
        if api == Api::Chat {
            return self.aider_reply(&mut state, body);
        }
        if state.summary.finished {
            return Some(("extra", None, Reply::Text(self.session.summary.clone())));
        }
        let Some(step) = self.session.steps.get(state.next) else {
            if self.session.ending == Ending::Crash {
                return None;
            }
            state.summary.finished = true;
            return Some(("main", None, Reply::Text(self.session.summary.clone())));
        };
        let index = state.next;
        let reply = match api {
            Api::Anthropic => {
                let call_id = format!("toolu_{id}");
                match claude_code_call(step, &mut state.known, &self.work_dir, &call_id) {
                    ClaudeCall::ReadFirst(read) => return Some(("main", Some(index), read)),
                    ClaudeCall::Step(reply) => reply,
                }
            }
            Api::Responses => shell_call(step, body, ShellTool::ExecCommand, &format!("call_{id}")),
            Api::Chat => shell_call(step, body, ShellTool::Shell, &format!("call_{id}")),
        };
        state.next += 1;
        state.summary.steps_served = state.next;
        Some(("main", Some(index), reply))
    }

    /// aider takes a whole session's acts in one answer. It asks again without
    /// applying it when it first had to add the files the answer names: the same
    /// answer again. Any later call (aider reflects failing tests back under
    /// --auto-test, or a failed edit) is where a scripted crash lands.
    fn aider_reply(
        &self,
        state: &mut State,
        body: &Value,
    ) -> Option<(&'static str, Option<usize>, Reply)> {
        let steps = &self.session.steps;
        if state.calls_main > 0 && !aider::added_files_reflection(body) {
            return (self.session.ending != Ending::Crash)
                .then(|| ("extra", None, Reply::Text(self.session.summary.clone())));
        }
        state.calls_main += 1;
        state.next = steps.len();
        state.summary.steps_served = steps.len();
        state.summary.finished = self.session.ending != Ending::Crash;
        let text = aider::answer(steps, &self.session.summary, &self.work_dir);
        Some(("main", (!steps.is_empty()).then_some(0), Reply::Text(text)))
    }
}

/// The API of a request from its path, or the whole answer to a request that is not a
/// model call (a token count, the list of models, a path the server does not have).
fn route(request: &Request) -> Result<Api, Response> {
    let path = request.path.trim_end_matches('/');
    if path.ends_with("/messages") {
        Ok(Api::Anthropic)
    } else if path.ends_with("/responses") {
        Ok(Api::Responses)
    } else if path.ends_with("/chat/completions") {
        Ok(Api::Chat)
    } else if path.ends_with("/messages/count_tokens") {
        let tokens = (request.body.len() as u64).div_ceil(4);
        Err(Response::Json(200, json!({"input_tokens": tokens})))
    } else if path.ends_with("/models") {
        Err(Response::Json(
            200,
            json!({"object": "list", "data": [], "models": []}),
        ))
    } else {
        Err(Response::Json(
            404,
            json!({"error": {"type": "not_found_error",
                   "message": format!("the mock model server has no {}", request.path)}}),
        ))
    }
}

/// Whether a request is a call of the CLI's agent loop rather than a side call.
fn is_main(api: Api, body: &Value) -> bool {
    match api {
        Api::Anthropic => offers(body, "Bash") || offers(body, "Write"),
        Api::Responses => offers(body, "exec_command") || offers(body, "shell"),
        Api::Chat => {
            // aider's commit messages come from a prompt of their own.
            let system = body
                .pointer("/messages/0/content")
                .and_then(Value::as_str)
                .unwrap_or_default();
            !system.contains("commit message")
        }
    }
}

#[cfg(test)]
#[path = "server_tests.rs"]
mod tests;
