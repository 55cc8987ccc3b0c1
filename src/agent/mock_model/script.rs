//! A mock-model scenario: what the scripted "model" does in each session, written in
//! the trace format (`write`, `edit`, `delete`, `run`, `end`), vendor-neutral. The
//! server renders each action as the calling CLI's own tool call; the `end` line says
//! how the session ends: `completed` (the model answers with the `summary` text),
//! `declared_complete` (the same, and it declares the whole project done) or
//! `interrupted` (the CLI is killed when it asks for the next step: a crash mid-session).
//! `usage` and `skip` lines are ignored: the server reports its own usage.
//!
//! A `fault` line, the scenario's own (a trace has none), makes the server fail the
//! CLI's model calls from where it stands among the steps: an HTTP error status for
//! the next `requests` calls, a connection dropped mid-answer, or an answer that
//! stalls, in the attempts of the trial it names. So a provider outage can be played
//! against the real CLIs.

use std::path::Path;

use serde::Deserialize;

use crate::agent::trace::{EndStatus, Line, Trace};
use crate::error::{Error, IoContext, Result};

/// One thing the model does.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// Create or replace a file with `content`.
    Write {
        /// Relative to the work directory.
        path: String,
        /// The whole content.
        content: String,
    },
    /// Replace `old` (whole lines, found once) by `new`.
    Edit {
        /// Relative to the work directory.
        path: String,
        /// The text to replace.
        old: String,
        /// Its replacement.
        new: String,
    },
    /// Delete a file.
    Delete {
        /// Relative to the work directory.
        path: String,
    },
    /// Run a shell command in the work directory.
    Run {
        /// The command line.
        cmd: String,
    },
}

/// How a scripted session ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// A final answer.
    Completed,
    /// A final answer that declares the project complete.
    DeclaredComplete,
    /// The CLI is killed before it gets its next answer.
    Crash,
}

/// What a fault does to a model call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// An error answer with this HTTP status, in the error body the API uses, and a
    /// `retry-after` header of this many seconds when given.
    Status {
        /// 401, 403, 429, 500, 529, ...
        status: u16,
        /// Seconds for the `retry-after` header.
        retry_after: Option<u32>,
    },
    /// The answer's head and its first part are sent, then the connection is closed.
    Drop,
    /// The answer stops coming (the connection stays open until the session ends),
    /// and the CLI's own timeout decides: with `in_stream`, after its head and first
    /// part (a stream that goes idle), else before anything (a request that hangs).
    Stall {
        /// The head and the first part are sent first.
        in_stream: bool,
    },
}

/// A fault of a scripted session: from the moment `at` steps were served, the next
/// `requests` model calls of the CLI's loop fail this way, in the attempts named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// Steps served before it applies (its place among the session's steps).
    pub at: usize,
    /// What it does.
    pub kind: FaultKind,
    /// How many model calls it fails; `None`: every later one of the session.
    pub requests: Option<u32>,
    /// The attempts of the trial it applies in (1 is the first); `None`: every one.
    pub attempts: Option<Vec<u32>>,
    /// It lasts while this environment variable is unset or empty in the server's
    /// environment (the agent's, under the harness: pass it with `pass_env`), so that
    /// an outage can last until the operator fixes it (a new key exported) and resumes.
    pub while_unset: Option<String>,
}

impl Fault {
    /// Whether it applies in attempt `attempt` of the trial, with the server's
    /// environment as it is.
    pub fn applies(&self, attempt: u32) -> bool {
        self.attempts.as_ref().is_none_or(|a| a.contains(&attempt))
            && self
                .while_unset
                .as_ref()
                .is_none_or(|name| std::env::var_os(name).is_none_or(|v| v.is_empty()))
    }

    /// A short name for the served log: `http 529`, `drop`, `stall`.
    pub fn label(&self) -> String {
        match self.kind {
            FaultKind::Status { status, .. } => format!("http {status}"),
            FaultKind::Drop => "drop".into(),
            FaultKind::Stall { in_stream: false } => "stall request".into(),
            FaultKind::Stall { in_stream: true } => "stall stream".into(),
        }
    }
}

/// A `fault` line as written: exactly one of `status`, `drop` and `stall`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultLine {
    #[serde(rename = "op")]
    _op: String,
    #[serde(default)]
    status: Option<u16>,
    #[serde(default)]
    retry_after: Option<u32>,
    #[serde(default)]
    drop: bool,
    #[serde(default)]
    stall: Option<String>,
    #[serde(default)]
    requests: Option<u32>,
    #[serde(default)]
    attempts: Option<Vec<u32>>,
    #[serde(default)]
    while_unset: Option<String>,
}

impl FaultLine {
    fn into_fault(self, at: usize) -> std::result::Result<Fault, String> {
        let kind = match (self.status, self.drop, self.stall.as_deref()) {
            (Some(status), false, None) => {
                if !(400..=599).contains(&status) {
                    return Err(format!(
                        "fault: status {status} is not an HTTP error status (400-599)"
                    ));
                }
                FaultKind::Status {
                    status,
                    retry_after: self.retry_after,
                }
            }
            (None, true, None) => FaultKind::Drop,
            (None, false, Some("request")) => FaultKind::Stall { in_stream: false },
            (None, false, Some("stream")) => FaultKind::Stall { in_stream: true },
            (None, false, Some(other)) => {
                return Err(format!(
                    "fault: stall is \"request\" (no answer at all) or \"stream\" (the answer stops after its first part), not \"{other}\""
                ));
            }
            _ => {
                return Err(
                    "fault: give exactly one of \"status\": N, \"drop\": true, \"stall\": \"request\"|\"stream\""
                        .into(),
                );
            }
        };
        if self.retry_after.is_some() && !matches!(kind, FaultKind::Status { .. }) {
            return Err("fault: retry_after goes with a status".into());
        }
        if self.requests == Some(0) {
            return Err(
                "fault: requests must be at least 1 (leave it out for every later call)".into(),
            );
        }
        if let Some(a) = &self.attempts
            && (a.is_empty() || a.contains(&0))
        {
            return Err("fault: attempts lists attempts from 1, e.g. [1]".into());
        }
        if self.while_unset.as_deref().is_some_and(str::is_empty) {
            return Err("fault: while_unset names an environment variable".into());
        }
        Ok(Fault {
            at,
            kind,
            requests: self.requests,
            attempts: self.attempts,
            while_unset: self.while_unset,
        })
    }
}

/// One scripted session.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptedSession {
    /// The session number, as the harness numbers sessions.
    pub n: u32,
    /// What the model does, in order, one step per model call.
    pub steps: Vec<Step>,
    /// How it ends.
    pub ending: Ending,
    /// The final answer's text.
    pub summary: String,
    /// Injected failures of the provider, in the order written.
    pub faults: Vec<Fault>,
}

/// A whole scenario.
#[derive(Debug, Clone, PartialEq)]
pub struct Scenario {
    /// Sessions in increasing order of `n`.
    pub sessions: Vec<ScriptedSession>,
}

impl Scenario {
    /// Reads a scenario file; errors name the file and line (exit 2).
    pub fn load(path: &Path) -> Result<Scenario> {
        let text = std::fs::read_to_string(path)
            .io_context(|| format!("cannot read scenario '{}'", path.display()))?;
        Scenario::parse(path, &text)
    }

    /// Parses scenario text; `path` is only used in messages.
    pub fn parse(path: &Path, text: &str) -> Result<Scenario> {
        Trace::parse(path, &without_faults(text))?;
        let mut sessions: Vec<ScriptedSession> = Vec::new();
        let mut ended = false;
        for (index, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let err = |message: String| Error::BadLine {
                file: path.to_path_buf(),
                line: index + 1,
                message,
            };
            if is_fault(raw) {
                let Some(session) = sessions.last_mut().filter(|_| !ended) else {
                    return Err(err(
                        "a fault belongs to a session, before its end line".into()
                    ));
                };
                let fault = fault_of(raw, session.steps.len()).map_err(err)?;
                session.faults.push(fault);
                continue;
            }
            let line: Line = serde_json::from_str(raw).map_err(|e| err(e.to_string()))?;
            if let Line::Session { n, .. } = line {
                sessions.push(ScriptedSession {
                    n,
                    steps: Vec::new(),
                    ending: Ending::Completed,
                    summary: String::new(),
                    faults: Vec::new(),
                });
                ended = false;
                continue;
            }
            let Some(session) = sessions.last_mut() else {
                continue;
            };
            ended |= matches!(line, Line::End { .. });
            session.add(line).map_err(err)?;
        }
        Ok(Scenario { sessions })
    }

    /// The session numbered `n`.
    pub fn session(&self, n: u32) -> Option<&ScriptedSession> {
        self.sessions.iter().find(|s| s.n == n)
    }
}

/// Whether a scenario line is a `fault` line. They are the scenario's own: the trace
/// parser, which checks the structure (sessions, order, one end per session), sees them
/// as blank lines.
fn is_fault(raw: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(raw)
        .is_ok_and(|v| v.get("op").and_then(|o| o.as_str()) == Some("fault"))
}

/// The scenario as the trace parser sees it: its fault lines blank.
fn without_faults(text: &str) -> String {
    text.lines()
        .map(|raw| if is_fault(raw) { "" } else { raw })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The fault of a `fault` line, in a session that has `steps` steps so far.
fn fault_of(raw: &str, steps: usize) -> std::result::Result<Fault, String> {
    let fault: FaultLine = serde_json::from_str(raw).map_err(|e| {
        format!(
            "fault: {e} (fields: status, retry_after, drop, stall, requests, attempts, while_unset)"
        )
    })?;
    fault.into_fault(steps)
}

/// `p` when it is a path inside the work directory.
fn relative(p: &str) -> std::result::Result<String, String> {
    if p.is_empty() || Path::new(p).is_absolute() || p.split('/').any(|c| c == "..") {
        Err(format!(
            "path '{p}': expected a path inside the work directory"
        ))
    } else {
        Ok(p.to_string())
    }
}

impl ScriptedSession {
    /// Adds a trace line of this session: a step, or its end; the lines a scenario
    /// does not script (usage, skip) are left out.
    fn add(&mut self, line: Line) -> std::result::Result<(), String> {
        match line {
            Line::Write { path, content } => self.steps.push(Step::Write {
                path: relative(&path)?,
                content,
            }),
            Line::Edit {
                path,
                old,
                new,
                all,
                original,
            } => {
                if all || original.is_some() {
                    return Err(
                        "a scenario edit replaces one occurrence: 'all' and 'original' are for imported traces".into(),
                    );
                }
                if old.is_empty() {
                    return Err("edit: 'old' must not be empty".into());
                }
                self.steps.push(Step::Edit {
                    path: relative(&path)?,
                    old,
                    new,
                });
            }
            Line::Delete { path } => self.steps.push(Step::Delete {
                path: relative(&path)?,
            }),
            Line::Run { cmd, cwd } => {
                if cwd.is_some() {
                    return Err("run: 'cwd' is not supported in a scenario (use cd in cmd)".into());
                }
                self.steps.push(Step::Run { cmd });
            }
            Line::End { status, summary } => {
                self.ending = match status {
                    EndStatus::Completed => Ending::Completed,
                    EndStatus::DeclaredComplete => Ending::DeclaredComplete,
                    EndStatus::Interrupted => Ending::Crash,
                    EndStatus::OutOfBudget => {
                        return Err(
                            "end: a scenario ends completed, declared_complete or interrupted (a crash)".into(),
                        );
                    }
                };
                self.summary = summary.unwrap_or_default();
            }
            Line::Session { .. }
            | Line::Usage { .. }
            | Line::Skip { .. }
            | Line::Say { .. }
            | Line::Call { .. }
            | Line::Output { .. } => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Scenario> {
        Scenario::parse(Path::new("s.jsonl"), text)
    }

    #[test]
    fn sessions_keep_their_steps_ending_and_summary() {
        let s = parse(concat!(
            "{\"op\":\"session\",\"n\":1}\n",
            "{\"op\":\"write\",\"path\":\"a.txt\",\"content\":\"x\"}\n",
            "{\"op\":\"run\",\"cmd\":\"git add -A\"}\n",
            "{\"op\":\"usage\",\"turns\":3}\n",
            "{\"op\":\"end\",\"status\":\"completed\",\"summary\":\"done a\"}\n",
            "{\"op\":\"session\",\"n\":2}\n",
            "{\"op\":\"delete\",\"path\":\"a.txt\"}\n",
            "{\"op\":\"end\",\"status\":\"interrupted\"}\n",
        ))
        .unwrap();
        assert_eq!(s.sessions.len(), 2);
        let one = s.session(1).unwrap();
        assert_eq!(one.steps.len(), 2);
        assert_eq!(
            (one.ending, one.summary.as_str()),
            (Ending::Completed, "done a")
        );
        assert_eq!(s.session(2).unwrap().ending, Ending::Crash);
        assert!(s.session(3).is_none());
    }

    #[test]
    fn faults_keep_their_place_among_the_steps_and_their_attempts() {
        let s = parse(concat!(
            "{\"op\":\"session\",\"n\":1}\n",
            "{\"op\":\"fault\",\"status\":529,\"requests\":3,\"retry_after\":2,\"attempts\":[1]}\n",
            "{\"op\":\"write\",\"path\":\"a.txt\",\"content\":\"x\"}\n",
            "{\"op\":\"fault\",\"drop\":true}\n",
            "{\"op\":\"fault\",\"stall\":\"stream\",\"requests\":1}\n",
            "{\"op\":\"fault\",\"status\":401,\"while_unset\":\"LOOPBENCH_TEST_SURELY_UNSET_VARIABLE\"}\n",
            "{\"op\":\"fault\",\"status\":401,\"while_unset\":\"PATH\"}\n",
            "{\"op\":\"end\",\"status\":\"completed\"}\n",
        ))
        .unwrap();
        let faults = &s.session(1).unwrap().faults;
        assert_eq!(
            faults[0],
            Fault {
                at: 0,
                kind: FaultKind::Status {
                    status: 529,
                    retry_after: Some(2)
                },
                requests: Some(3),
                attempts: Some(vec![1]),
                while_unset: None,
            }
        );
        assert!(faults[0].applies(1) && !faults[0].applies(2));
        assert_eq!((faults[1].at, faults[1].kind), (1, FaultKind::Drop));
        assert_eq!(faults[1].requests, None);
        assert!(faults[1].applies(7));
        assert_eq!(
            (faults[2].label(), faults[2].requests),
            ("stall stream".into(), Some(1))
        );
        assert!(faults[3].applies(1), "its variable is unset");
        assert!(!faults[4].applies(1), "PATH is set: the outage is over");
        assert_eq!(s.session(1).unwrap().steps.len(), 1);
    }

    #[test]
    fn a_bad_fault_names_its_line_and_what_was_expected() {
        let with = |fault: &str| {
            parse(&format!(
                "{{\"op\":\"session\",\"n\":1}}\n{fault}\n{{\"op\":\"end\",\"status\":\"completed\"}}\n"
            ))
            .unwrap_err()
            .to_string()
        };
        let e = with("{\"op\":\"fault\",\"status\":200}");
        assert!(e.contains("s.jsonl:2") && e.contains("400-599"), "{e}");
        let e = with("{\"op\":\"fault\",\"status\":529,\"drop\":true}");
        assert!(e.contains("exactly one of"), "{e}");
        let e = with("{\"op\":\"fault\",\"stall\":true}");
        assert!(e.contains("s.jsonl:2"), "{e}");
        let e = with("{\"op\":\"fault\",\"stall\":\"later\"}");
        assert!(e.contains("\"request\" (no answer at all)"), "{e}");
        let e = with("{\"op\":\"fault\",\"drop\":true,\"retry_after\":1}");
        assert!(e.contains("retry_after goes with a status"), "{e}");
        let e = with("{\"op\":\"fault\",\"status\":529,\"requests\":0}");
        assert!(e.contains("at least 1"), "{e}");
        let e = with("{\"op\":\"fault\",\"status\":529,\"attempts\":[0]}");
        assert!(e.contains("attempts from 1"), "{e}");
        let e = with("{\"op\":\"fault\",\"status\":529,\"when\":1}");
        assert!(
            e.contains("s.jsonl:2") && e.contains("unknown field"),
            "{e}"
        );
        let before = "{\"op\":\"fault\",\"status\":529}\n{\"op\":\"session\",\"n\":1}\n{\"op\":\"end\",\"status\":\"completed\"}\n";
        let e = parse(before).unwrap_err().to_string();
        assert!(
            e.contains("s.jsonl:1") && e.contains("belongs to a session"),
            "{e}"
        );
        let after_end = "{\"op\":\"session\",\"n\":1}\n{\"op\":\"end\",\"status\":\"completed\"}\n{\"op\":\"fault\",\"drop\":true}\n";
        let e = parse(after_end).unwrap_err().to_string();
        assert!(
            e.contains("s.jsonl:3") && e.contains("before its end"),
            "{e}"
        );
    }

    #[test]
    fn bad_scenarios_name_the_line() {
        let escape = "{\"op\":\"session\",\"n\":1}\n{\"op\":\"delete\",\"path\":\"../x\"}\n";
        let e = parse(escape).unwrap_err().to_string();
        assert!(e.contains("s.jsonl") && e.contains('2'), "{e}");
        let budget =
            "{\"op\":\"session\",\"n\":1}\n{\"op\":\"end\",\"status\":\"out_of_budget\"}\n";
        assert!(parse(budget).is_err());
        assert!(parse("{\"op\":\"write\"}\n").is_err());
    }
}
