//! The interface between the trial loop and an agent driver.

use std::ffi::OsString;

use serde::{Deserialize, Serialize};

use crate::agent::{Failure, Outcome};
use crate::error::Result;
use crate::notice::Notice;
use crate::workspace::Workspace;

/// Whether a session scaffolds the project or builds features.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionKind {
    /// Session 0 of an arm with an initializer: writes the list, notes and init script.
    Initializer,
    /// Every other session.
    Coding,
}

impl SessionKind {
    /// Both kinds.
    pub const ALL: [SessionKind; 2] = [SessionKind::Initializer, SessionKind::Coding];

    /// The name used in records.
    pub fn as_str(self) -> &'static str {
        match self {
            SessionKind::Initializer => "initializer",
            SessionKind::Coding => "coding",
        }
    }
}

/// What a driver needs to run one session.
pub struct SessionContext<'a> {
    /// The trial's directories.
    pub workspace: &'a Workspace,
    /// Session number within the trial.
    pub session: u32,
    /// Initializer or coding.
    pub kind: SessionKind,
    /// The session environment contract, git identity included.
    pub env: &'a [(String, OsString)],
    /// The rendered prompt (also in `LOOPBENCH_PROMPT_FILE`).
    pub prompt: &'a str,
    /// Turns the session may use.
    pub turn_budget: u32,
    /// When the harness decided to crash this session: the fraction of its work after
    /// which it is cut off. `None`: it runs to its end.
    pub interrupt_at: Option<f64>,
    /// Tells the person watching about something now (a retry), through the run's
    /// reporters: drivers never print.
    pub notify: &'a dyn Fn(Notice),
}

/// Tokens, turns and money a session used, as far as the driver knows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Agent turns (tool-use round trips).
    pub turns: Option<u64>,
    /// Input tokens.
    pub input_tokens: Option<u64>,
    /// Output tokens.
    pub output_tokens: Option<u64>,
    /// Cost in US dollars.
    pub cost_usd: Option<f64>,
}

impl Usage {
    /// Input plus output tokens; `None` when neither is known.
    pub fn tokens(&self) -> Option<u64> {
        match (self.input_tokens, self.output_tokens) {
            (None, None) => None,
            (i, o) => Some(i.unwrap_or(0).saturating_add(o.unwrap_or(0))),
        }
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;

    /// Field-wise sum; a field stays `None` only when it is `None` on both sides.
    fn add(self, other: Usage) -> Usage {
        fn sum<T: std::ops::Add<Output = T>>(a: Option<T>, b: Option<T>) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a + b),
                (a, b) => a.or(b),
            }
        }
        Usage {
            turns: sum(self.turns, other.turns),
            input_tokens: sum(self.input_tokens, other.input_tokens),
            output_tokens: sum(self.output_tokens, other.output_tokens),
            cost_usd: sum(self.cost_usd, other.cost_usd),
        }
    }
}

/// How a session went, from the driver's side.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionRun {
    /// How it ended.
    pub outcome: Outcome,
    /// What it used.
    pub usage: Usage,
    /// Actions the driver could not carry out (a replayed edit whose old text was absent).
    pub actions_failed: u32,
    /// Why the session ended in `error`, or a note on a failed action.
    pub error: Option<String>,
    /// The session broke a rule that makes the whole input bad (a trace path escaping
    /// the work directory): the command exits 2 after recording it.
    pub bad_input: bool,
    /// What a simulated agent did on purpose (ground truth, never a metric).
    pub truth: Option<serde_json::Value>,
    /// A replayed session whose importer reset a file to what the agent saw.
    pub divergent: bool,
    /// Why the session did not run the way the agent meant, when the driver knows
    /// from facts (an exit status, the CLI's structured output, the wrapper's report).
    /// `None` from the sim and replay drivers, which cannot fail that way.
    pub failure: Option<Failure>,
}

impl SessionRun {
    /// A session that could not run at all, for `reason`.
    pub fn failed(reason: String) -> SessionRun {
        SessionRun {
            outcome: Outcome::Error,
            usage: Usage::default(),
            actions_failed: 0,
            error: Some(reason),
            bad_input: false,
            truth: None,
            divergent: false,
            failure: None,
        }
    }

    /// Appends `note` to the session's notes.
    pub fn add_note(&mut self, note: String) {
        self.error = Some(match self.error.take() {
            Some(e) => format!("{e}; {note}"),
            None => note,
        });
    }
}

/// Executes sessions of one trial.
pub trait Agent {
    /// The number of the next session, or `None` when the agent has no more to give
    /// (a trace that ran out).
    fn next_session(&mut self) -> Option<u32>;

    /// Runs one session in `ctx.workspace.work_dir`.
    fn run_session(&mut self, ctx: &SessionContext<'_>) -> Result<SessionRun>;
}
