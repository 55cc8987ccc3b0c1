//! A mock-model scenario: what the scripted "model" does in each session, written in
//! the trace format (`write`, `edit`, `delete`, `run`, `end`), vendor-neutral. The
//! server renders each action as the calling CLI's own tool call; the `end` line says
//! how the session ends: `completed` (the model answers with the `summary` text),
//! `declared_complete` (the same, and it declares the whole project done) or
//! `interrupted` (the CLI is killed when it asks for the next step: a crash mid-session).
//! `usage` and `skip` lines are ignored: the server reports its own usage.

use std::path::Path;

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
        // The trace parser checks the structure (sessions, order, one end per session).
        Trace::parse(path, text)?;
        let err = |line: usize, message: String| Error::BadLine {
            file: path.to_path_buf(),
            line,
            message,
        };
        let mut sessions: Vec<ScriptedSession> = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            if raw.trim().is_empty() {
                continue;
            }
            let line_no = index + 1;
            let line: Line = serde_json::from_str(raw).map_err(|e| err(line_no, e.to_string()))?;
            if let Line::Session { n, .. } = line {
                sessions.push(ScriptedSession {
                    n,
                    steps: Vec::new(),
                    ending: Ending::Completed,
                    summary: String::new(),
                });
                continue;
            }
            let Some(session) = sessions.last_mut() else {
                continue;
            };
            let relative = |p: &str| {
                if p.is_empty() || Path::new(p).is_absolute() || p.split('/').any(|c| c == "..") {
                    Err(err(
                        line_no,
                        format!("path '{p}': expected a path inside the work directory"),
                    ))
                } else {
                    Ok(p.to_string())
                }
            };
            match line {
                Line::Write { path, content } => session.steps.push(Step::Write {
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
                        return Err(err(
                            line_no,
                            "a scenario edit replaces one occurrence: 'all' and 'original' are for imported traces".into(),
                        ));
                    }
                    if old.is_empty() {
                        return Err(err(line_no, "edit: 'old' must not be empty".into()));
                    }
                    session.steps.push(Step::Edit {
                        path: relative(&path)?,
                        old,
                        new,
                    });
                }
                Line::Delete { path } => session.steps.push(Step::Delete {
                    path: relative(&path)?,
                }),
                Line::Run { cmd, cwd } => {
                    if cwd.is_some() {
                        return Err(err(
                            line_no,
                            "run: 'cwd' is not supported in a scenario (use cd in cmd)".into(),
                        ));
                    }
                    session.steps.push(Step::Run { cmd });
                }
                Line::End { status, summary } => {
                    session.ending = match status {
                        EndStatus::Completed => Ending::Completed,
                        EndStatus::DeclaredComplete => Ending::DeclaredComplete,
                        EndStatus::Interrupted => Ending::Crash,
                        EndStatus::OutOfBudget => {
                            return Err(err(
                                line_no,
                                "end: a scenario ends completed, declared_complete or interrupted (a crash)".into(),
                            ));
                        }
                    };
                    session.summary = summary.unwrap_or_default();
                }
                Line::Session { .. } | Line::Usage { .. } | Line::Skip { .. } => {}
            }
        }
        Ok(Scenario { sessions })
    }

    /// The session numbered `n`.
    pub fn session(&self, n: u32) -> Option<&ScriptedSession> {
        self.sessions.iter().find(|s| s.n == n)
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
