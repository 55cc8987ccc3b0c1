//! The trace format: JSONL, one action per line, grouped into sessions.
//!
//! Two lines beyond the basic trace format serve importers of foreign transcripts (`loopbench
//! import`): `{"op":"session","n":2,"divergent":true}` marks a session whose importer
//! had to reset a file to what the agent really saw (the transcript did not show how
//! the file got there, e.g. a shell command changed it), and
//! `{"op":"skip","tool":"NotebookEdit","path":"/abs/x","reason":"..."}` records a
//! tool call the importer could not turn into an action. Replay applies neither:
//! `divergent` goes into the session's record, a `skip` has no file effect. A `run`
//! line may name the directory its shell starts in, `{"op":"run","cmd":"rm x.py",
//! "cwd":"tests"}`, relative to the work directory and confined to it like a path:
//! an agent's shell keeps a `cd` from one command to the next.
//!
//! Three more lines keep what the transcript showed of the agent besides its file
//! actions, for the session's trajectory (report.html, `show --trajectory`): `say` (text
//! the agent wrote, or with `"from":"user"` what the user typed), `call` (a tool call:
//! `tool`, `id`, `input`) and `output` (a call's result: `id`, `output`, `exit`,
//! `error`). Replay applies none of them; `skip` with `"rejected":true` is a call the
//! agent's own program refused (an aider block that failed to match).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::driver::Usage;
use crate::agent::Outcome;
use crate::error::{Error, Result, TranscriptError};

/// One line of a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "lowercase", deny_unknown_fields)]
pub enum Line {
    /// Starts session `n`; numbers strictly increase.
    Session {
        /// Session number, as it appears in the results.
        n: u32,
        /// An importer reset a file to what the agent saw; written only when true.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        divergent: bool,
    },
    /// Creates or replaces a file.
    Write {
        /// Relative to the work directory.
        path: String,
        /// The whole new content.
        content: String,
    },
    /// Replaces the first occurrence of `old` (every occurrence with `all`).
    Edit {
        /// Relative to the work directory.
        path: String,
        /// Text to find; when absent the action fails and the trial goes on.
        old: String,
        /// Replacement.
        new: String,
        /// Replace every occurrence.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        all: bool,
        /// What the agent's file held just before this edit (Claude Code's
        /// `originalFile`), when the importer could not tell what replay will find. If
        /// `old` is missing at replay (a shell command changed the file on the agent's
        /// machine in a way replay does not reproduce), the file is reset to this, the
        /// edit applied, and the session counted `divergent`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        original: Option<String>,
    },
    /// Deletes a file or directory.
    Delete {
        /// Relative to the work directory.
        path: String,
    },
    /// Runs a shell command in the work directory, or in `cwd` under it.
    Run {
        /// Passed to `sh -c`.
        cmd: String,
        /// Where the shell starts, relative to the work directory and confined to it like
        /// a path (a recorded agent's shell had `cd`'d there); absent: the work directory.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    /// Adds to the session's usage.
    Usage {
        /// Agent turns.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        turns: Option<u64>,
        /// Input tokens.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        input_tokens: Option<u64>,
        /// Output tokens.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        output_tokens: Option<u64>,
        /// Cost in US dollars.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_usd: Option<f64>,
    },
    /// Text the agent wrote (or the user typed), as the transcript holds it; replay
    /// keeps it in the trajectory and applies nothing.
    Say {
        /// The text.
        text: String,
        /// Who wrote it when not the agent (`user`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from: Option<String>,
    },
    /// A tool call as the transcript holds it, for the trajectory.
    Call {
        /// The tool's name.
        tool: String,
        /// The call's id, matched by its output.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// Its arguments.
        #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
        input: serde_json::Value,
    },
    /// A tool call's result as the transcript holds it, for the trajectory.
    Output {
        /// The call's id.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// What it gave back.
        output: String,
        /// A command's exit status, where the transcript says.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit: Option<i64>,
        /// The transcript marks it an error.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        error: bool,
    },
    /// A tool call an importer could not turn into an action; replay ignores it.
    Skip {
        /// The foreign tool's name, e.g. `NotebookEdit`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool: Option<String>,
        /// The path the call named, as the transcript gave it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        path: Option<String>,
        /// Why it was not applied.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// The agent's own program refused the call (aider reported the block as not
        /// matching), rather than the importer not reproducing it.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        rejected: bool,
    },
    /// Ends the session.
    End {
        /// How it ended.
        status: EndStatus,
        /// The agent's own summary: kept for people, never used by a metric.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        summary: Option<String>,
    },
}

/// The statuses a trace may end a session with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EndStatus {
    /// Finished normally.
    Completed,
    /// The agent said the whole project is done.
    DeclaredComplete,
    /// Used its budget.
    OutOfBudget,
    /// Cut off by a crash.
    Interrupted,
}

impl From<EndStatus> for Outcome {
    fn from(s: EndStatus) -> Outcome {
        match s {
            EndStatus::Completed => Outcome::Completed,
            EndStatus::DeclaredComplete => Outcome::DeclaredComplete,
            EndStatus::OutOfBudget => Outcome::OutOfBudget,
            EndStatus::Interrupted => Outcome::Interrupted,
        }
    }
}

/// A file-changing or command action, with the trace line it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// 1-based line in the trace file.
    pub line: usize,
    /// The action (never `Session`, `Usage` or `End`; a `Skip` has no effect).
    pub op: Line,
}

/// One session of a trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSession {
    /// Session number.
    pub n: u32,
    /// Actions in order.
    pub actions: Vec<Action>,
    /// Sum of the session's `usage` lines.
    pub usage: Usage,
    /// How it ended; a session without `end` was cut off and counts as interrupted.
    pub outcome: Outcome,
    /// The session line said `divergent` (an importer reset a file).
    pub divergent: bool,
    /// The `end` line's summary.
    pub summary: Option<String>,
}

/// A parsed trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Sessions in order.
    pub sessions: Vec<TraceSession>,
    /// blake3 of the trace text (for run manifests).
    pub content_hash: [u8; 32],
}

impl Trace {
    /// The line of the first `run` action, if the trace has one (it executes a shell
    /// command, which needs a sandbox).
    pub fn first_run_action(&self) -> Option<usize> {
        self.sessions
            .iter()
            .flat_map(|s| &s.actions)
            .find(|a| matches!(a.op, Line::Run { .. }))
            .map(|a| a.line)
    }

    /// Reads and parses a trace file; errors name the file and line.
    pub fn load(path: &Path) -> Result<Trace> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            // Missing or not text: the trace is bad input, not the harness's failure.
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::NotFound | std::io::ErrorKind::InvalidData
                ) =>
            {
                return Err(TranscriptError::TraceUnreadable {
                    file: path.to_path_buf(),
                    reason: e.to_string(),
                }
                .into());
            }
            Err(e) => {
                return Err(Error::io(
                    format!("cannot read trace '{}'", path.display()),
                    e,
                ));
            }
        };
        Trace::parse(path, &text)
    }

    /// Parses trace text; `path` is only used in messages.
    pub fn parse(path: &Path, text: &str) -> Result<Trace> {
        let err = |line: usize, message: String| -> Error {
            TranscriptError::TraceLine {
                file: path.to_path_buf(),
                line,
                message,
            }
            .into()
        };
        let mut sessions: Vec<TraceSession> = Vec::new();
        let mut ended = false;
        for (index, raw) in text.lines().enumerate() {
            let line_no = index + 1;
            if raw.trim().is_empty() {
                continue;
            }
            let line: Line = serde_json::from_str(raw).map_err(|e| {
                err(
                    line_no,
                    format!(
                        "expected one JSON object with an \"op\" of session, write, edit, delete, run, say, call, output, skip, usage or end: {e}"
                    ),
                )
            })?;
            if let Line::Session { n, divergent } = line {
                start_session(&mut sessions, n, divergent).map_err(|m| err(line_no, m))?;
                ended = false;
                continue;
            }
            let Some(current) = sessions.last_mut() else {
                return Err(err(
                    line_no,
                    "expected {\"op\":\"session\",\"n\":N} before the first action".into(),
                ));
            };
            if ended {
                return Err(err(
                    line_no,
                    format!(
                        "action after the end of session {}: start a new session first",
                        current.n
                    ),
                ));
            }
            ended = current.add(line, line_no).map_err(|m| err(line_no, m))?;
        }
        if sessions.is_empty() {
            return Err(err(1, "the trace holds no session".into()));
        }
        Ok(Trace {
            sessions,
            content_hash: *blake3::hash(text.as_bytes()).as_bytes(),
        })
    }
}

/// Starts session `n` after `sessions`, whose numbers it must exceed.
fn start_session(
    sessions: &mut Vec<TraceSession>,
    n: u32,
    divergent: bool,
) -> std::result::Result<(), String> {
    if let Some(prev) = sessions.last()
        && n <= prev.n
    {
        return Err(format!(
            "session {n} after session {}: numbers must increase",
            prev.n
        ));
    }
    sessions.push(TraceSession {
        n,
        actions: Vec::new(),
        usage: Usage::default(),
        outcome: Outcome::Interrupted,
        divergent,
        summary: None,
    });
    Ok(())
}

impl TraceSession {
    /// Adds line `line_no` of the session: its usage, its end, or an action. Returns
    /// whether the line ended the session.
    fn add(&mut self, line: Line, line_no: usize) -> std::result::Result<bool, String> {
        match line {
            Line::Session { .. } => unreachable!("a session line starts a session"),
            Line::Usage {
                turns,
                input_tokens,
                output_tokens,
                cost_usd,
            } => {
                let usage = Usage {
                    turns,
                    input_tokens,
                    output_tokens,
                    cost_usd,
                };
                if let Some(reason) = usage.out_of_range() {
                    return Err(format!(
                        "usage: {reason}; expected counts up to 2^63-1 and a cost from 0 to 2^53"
                    ));
                }
                self.usage = self.usage + usage;
            }
            Line::End { status, summary } => {
                self.outcome = status.into();
                self.summary = summary;
                return Ok(true);
            }
            action => self.actions.push(Action {
                line: line_no,
                op: action,
            }),
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Trace> {
        Trace::parse(Path::new("t.jsonl"), text)
    }

    /// The line the refusal of `text` names, with its file.
    fn refused_at(text: &str) -> usize {
        match parse(text).unwrap_err() {
            Error::Transcript(TranscriptError::TraceLine { file, line, .. }) => {
                assert_eq!(file, Path::new("t.jsonl"));
                line
            }
            other => panic!("not a trace line's refusal: {other:?}"),
        }
    }

    #[test]
    fn sessions_group_actions_and_sum_usage() {
        let t = parse(concat!(
            "{\"op\":\"session\",\"n\":1}\n",
            "{\"op\":\"write\",\"path\":\"a\",\"content\":\"x\"}\n",
            "{\"op\":\"usage\",\"turns\":2,\"input_tokens\":10}\n",
            "{\"op\":\"usage\",\"turns\":3}\n",
            "{\"op\":\"end\",\"status\":\"completed\",\"summary\":\"s\"}\n",
            "\n",
            "{\"op\":\"session\",\"n\":2}\n",
            "{\"op\":\"delete\",\"path\":\"a\"}\n",
        ))
        .unwrap();
        assert_eq!(t.sessions.len(), 2);
        assert_eq!(t.sessions[0].usage.turns, Some(5));
        assert_eq!(t.sessions[0].usage.input_tokens, Some(10));
        assert_eq!(t.sessions[0].outcome, Outcome::Completed);
        assert_eq!(t.sessions[1].outcome, Outcome::Interrupted);
        assert_eq!(t.sessions[1].actions[0].line, 8);
    }

    #[test]
    fn malformed_line_is_named() {
        let line = refused_at(
            "{\"op\":\"session\",\"n\":1}\n{\"op\":\"write\",\"path\":\"a\",\"content\":\"x\"}\n{\"op\":\"write\",\"path\":\n",
        );
        assert_eq!(line, 3);
    }

    #[test]
    fn unknown_op_and_unknown_field_are_errors() {
        assert_eq!(
            refused_at("{\"op\":\"session\",\"n\":1}\n{\"op\":\"teleport\"}\n"),
            2
        );
        assert_eq!(
            refused_at(
                "{\"op\":\"session\",\"n\":1}\n{\"op\":\"delete\",\"path\":\"a\",\"force\":true}\n",
            ),
            2
        );
    }

    #[test]
    fn a_run_line_may_name_its_directory_and_nothing_else() {
        let t = parse(concat!(
            "{\"op\":\"session\",\"n\":1}\n",
            "{\"op\":\"run\",\"cmd\":\"rm x.py\",\"cwd\":\"tests\"}\n",
            "{\"op\":\"run\",\"cmd\":\"ls\"}\n",
        ))
        .unwrap();
        let cwd = |i: usize| match &t.sessions[0].actions[i].op {
            Line::Run { cwd, .. } => cwd.clone(),
            other => panic!("{other:?}"),
        };
        assert_eq!(cwd(0).as_deref(), Some("tests"));
        assert_eq!(cwd(1), None);
        // Written only when there is one.
        let plain = Line::Run {
            cmd: "ls".into(),
            cwd: None,
        };
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            "{\"op\":\"run\",\"cmd\":\"ls\"}"
        );
        assert_eq!(
            refused_at(
                "{\"op\":\"session\",\"n\":1}\n{\"op\":\"run\",\"cmd\":\"ls\",\"dir\":\"x\"}\n"
            ),
            2
        );
    }

    #[test]
    fn actions_need_a_session_and_numbers_increase() {
        assert_eq!(refused_at("{\"op\":\"run\",\"cmd\":\"true\"}\n"), 1);
        assert_eq!(
            refused_at("{\"op\":\"session\",\"n\":2}\n{\"op\":\"session\",\"n\":2}\n"),
            2
        );
        assert_eq!(refused_at(""), 1, "a trace without a session");
    }

    #[test]
    fn divergent_sessions_and_skips_parse_and_skips_do_nothing() {
        let t = parse(concat!(
            "{\"op\":\"session\",\"n\":1}\n",
            "{\"op\":\"session\",\"n\":2,\"divergent\":true}\n",
            "{\"op\":\"skip\",\"tool\":\"NotebookEdit\",\"path\":\"/x\",\"reason\":\"r\"}\n",
            "{\"op\":\"skip\"}\n",
        ))
        .unwrap();
        assert!(!t.sessions[0].divergent);
        assert!(t.sessions[1].divergent);
        assert_eq!(t.sessions[1].actions.len(), 2);
        let plain = Line::Session {
            n: 1,
            divergent: false,
        };
        assert_eq!(
            serde_json::to_string(&plain).unwrap(),
            "{\"op\":\"session\",\"n\":1}"
        );
        assert_eq!(
            refused_at("{\"op\":\"session\",\"n\":1}\n{\"op\":\"skip\",\"why\":1}\n"),
            2
        );
    }

    #[test]
    fn a_missing_trace_or_one_that_is_not_text_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.jsonl");
        let binary = dir.path().join("binary.jsonl");
        std::fs::write(&binary, [0xff, 0xfe, b'\n']).unwrap();
        for file in [missing, binary] {
            match Trace::load(&file).unwrap_err() {
                Error::Transcript(TranscriptError::TraceUnreadable { file: named, .. }) => {
                    assert_eq!(named, file);
                }
                other => panic!("{}: {other:?}", file.display()),
            }
        }
    }

    #[test]
    fn action_after_end_is_an_error() {
        let line = refused_at(
            "{\"op\":\"session\",\"n\":1}\n{\"op\":\"end\",\"status\":\"completed\"}\n{\"op\":\"run\",\"cmd\":\"true\"}\n",
        );
        assert_eq!(line, 3);
    }
}
