//! The interface between the trial loop and an agent driver.

use std::ffi::OsString;

use serde::{Deserialize, Serialize};

use crate::agent::trajectory::Trajectory;
use crate::agent::{Failure, FailureKind, Outcome};
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
    /// How many times this session ran before in this attempt and failed outside the
    /// agent, changing nothing (it runs again in place): 0 for its first run.
    pub rerun: u32,
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

/// The largest count (turns, tokens) accepted from an agent, and the most any sum of
/// them reaches: 2^63-1, the largest integer every reader of the records (the CSV
/// tables' 64-bit signed columns among them) can hold.
pub const MAX_COUNT: u64 = i64::MAX as u64;

/// The largest cost accepted from an agent, in US dollars: 2^53, past which a dollar
/// amount in a double no longer holds whole cents, let alone a sum of them.
pub const MAX_COST_USD: f64 = 9_007_199_254_740_992.0;

/// `a + b`, held at [`MAX_COUNT`].
pub fn add_counts(a: u64, b: u64) -> u64 {
    a.saturating_add(b).min(MAX_COUNT)
}

impl Usage {
    /// Input plus output tokens (held at [`MAX_COUNT`]); `None` when neither is known.
    pub fn tokens(&self) -> Option<u64> {
        match (self.input_tokens, self.output_tokens) {
            (None, None) => None,
            (i, o) => Some(add_counts(i.unwrap_or(0), o.unwrap_or(0))),
        }
    }

    /// Why this usage cannot be a report: a count above [`MAX_COUNT`], or a cost that is
    /// not a finite amount from 0 to [`MAX_COST_USD`]. `None` when every field is in range.
    pub fn out_of_range(&self) -> Option<String> {
        for (name, value) in [
            ("turns", self.turns),
            ("input_tokens", self.input_tokens),
            ("output_tokens", self.output_tokens),
        ] {
            if let Some(v) = value.filter(|&v| v > MAX_COUNT) {
                return Some(format!("{name} = {v} is above 2^63-1"));
            }
        }
        match self.cost_usd {
            Some(c) if !(c.is_finite() && (0.0..=MAX_COST_USD).contains(&c)) => {
                Some(format!("cost_usd = {c} is not an amount from 0 to 2^53"))
            }
            _ => None,
        }
    }
}

impl std::ops::Add for Usage {
    type Output = Usage;

    /// Field-wise sum, counts held at [`MAX_COUNT`]; a field stays `None` only when it is
    /// `None` on both sides.
    fn add(self, other: Usage) -> Usage {
        fn sum<T>(a: Option<T>, b: Option<T>, add: impl Fn(T, T) -> T) -> Option<T> {
            match (a, b) {
                (Some(a), Some(b)) => Some(add(a, b)),
                (a, b) => a.or(b),
            }
        }
        // Counts are held at MAX_COUNT rather than wrapping (or panicking); each part was
        // checked on the way in, so only an absurd number of sessions gets there.
        Usage {
            turns: sum(self.turns, other.turns, add_counts),
            input_tokens: sum(self.input_tokens, other.input_tokens, add_counts),
            output_tokens: sum(self.output_tokens, other.output_tokens, add_counts),
            cost_usd: sum(self.cost_usd, other.cost_usd, |a, b| a + b),
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
    /// The agent's wrapper or CLI said the session was interrupted (a usage file's
    /// `"status": "interrupted"`, a CLI's record of a turn it abandoned) while the
    /// harness neither cut it off nor saw it cut off: the agent's word, kept as it is,
    /// which never makes the session `interrupted` nor the next one `resumed`.
    pub declared_interrupted: bool,
    /// What the agent did, entry by entry, as far as the driver saw it (for people:
    /// no metric reads it); the trial loop adds the session's end.
    pub trajectory: Trajectory,
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
            declared_interrupted: false,
            trajectory: Trajectory::new(),
        }
    }

    /// A session the harness itself could not run or observe (its scratch full, a
    /// cgroup it could not make): `error`, and the harness's failure, `infra`, so that
    /// it is never counted and the trial is tried again.
    /// `reason` is kept whole in the notes; the failure's reason is its first line.
    pub fn harness_failed(reason: String) -> SessionRun {
        SessionRun {
            failure: Some(Failure::new(
                FailureKind::Infra,
                crate::agent::short_reason(&reason),
            )),
            ..SessionRun::failed(reason)
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

    /// The attempt `attempt` failed outside the agent: puts what it left in the run
    /// directory (captured output, the CLI's HOME) aside, so that the next attempt
    /// starts from nothing of it, and returns where, relative to the run directory
    /// (`failures.jsonl` names it). `None` for drivers that leave nothing there.
    fn archive_attempt(&mut self, attempt: u32) -> Result<Option<String>> {
        let _ = attempt;
        Ok(None)
    }

    /// Session `session` of attempt `attempt` failed outside the agent and is run
    /// again (its `again`-th rerun follows) or not at all: puts its captured output aside
    /// so that a rerun does not overwrite it, and returns where, relative to the run
    /// directory. The rest (the CLI's HOME) stays for the rerun, as the sessions before
    /// left it. `None` for drivers that leave nothing there.
    fn archive_session(
        &mut self,
        session: u32,
        attempt: u32,
        again: u32,
    ) -> Result<Option<String>> {
        let _ = (session, attempt, again);
        Ok(None)
    }
}
