//! `[[arm]]` tables of `suite.toml`: one configuration under comparison each — list
//! format and schema, strategy, initializer, ledger, exit check, prompts, environment
//! and budgets — read and checked.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use super::agent_table::AgentDriver;
use super::setting::setting;
use super::task::is_simple_name;
use crate::error::{Error, Result};
use crate::feature_list::{ListFormat, ListSchema};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ArmFile {
    name: Spanned<String>,
    agent: Spanned<String>,
    list_format: ListFormat,
    #[serde(default = "default_strategy")]
    strategy: Strategy,
    #[serde(default = "default_true")]
    initializer: bool,
    #[serde(default = "default_ledger")]
    ledger: Ledger,
    #[serde(default = "default_max_sessions")]
    max_sessions: Spanned<u32>,
    #[serde(default = "default_session_turns")]
    session_turns: Spanned<u32>,
    #[serde(default = "default_crash_rate")]
    crash_rate: Spanned<f64>,
    #[serde(default)]
    list_schema: ListSchema,
    #[serde(default = "default_exit_check")]
    exit_check: ExitCheck,
    prompts: Option<Spanned<PromptsFile>>,
    #[serde(default)]
    env: BTreeMap<String, Spanned<String>>,
    session_tokens: Option<Spanned<toml::Value>>,
    trial_tokens: Option<Spanned<toml::Value>>,
    trial_cost_usd: Option<Spanned<toml::Value>>,
}

/// An arm's `prompts = { initializer = "...", coding = "..." }`: template files, relative
/// to the suite directory, that replace the suite's for this arm.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PromptsFile {
    initializer: Option<Spanned<String>>,
    coding: Option<Spanned<String>>,
}

fn default_true() -> bool {
    true
}

fn default_strategy() -> Strategy {
    Strategy::Incremental
}

fn default_ledger() -> Ledger {
    Ledger::Memo
}

fn default_exit_check() -> ExitCheck {
    ExitCheck::Off
}

fn default_crash_rate() -> Spanned<f64> {
    Spanned::new(0..0, 0.0)
}

fn default_max_sessions() -> Spanned<u32> {
    Spanned::new(0..0, 12)
}

fn default_session_turns() -> Spanned<u32> {
    Spanned::new(0..0, 60)
}

setting! {
    /// How the work is split into sessions.
    pub enum Strategy ("strategy") {
        /// One feature per session until done, declared, or out of sessions.
        Incremental = "incremental",
        /// One coding session with the whole budget.
        Single = "single",
    }
}

setting! {
    /// Who owns the `passes` flags.
    pub enum Ledger ("ledger") {
        /// The agent writes them.
        Memo = "memo",
        /// The harness rewrites them from `verified` after every session.
        Gate = "gate",
    }
}

/// One configuration under comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Arm {
    /// Unique name; appears in trial ids.
    pub name: String,
    /// Name of the agent (a key of `[agents]`).
    pub agent: String,
    /// Feature-list format.
    pub list_format: ListFormat,
    /// Session strategy.
    pub strategy: Strategy,
    /// Session 0 scaffolds the project.
    pub initializer: bool,
    /// Who owns the status flags.
    pub ledger: Ledger,
    /// Most coding sessions per trial (the initializer session is not counted).
    pub max_sessions: u32,
    /// Turn budget of one session (a single-strategy session gets all of them).
    pub session_turns: u32,
    /// Probability that a session is interrupted at a random point.
    pub crash_rate: f64,
    /// What the list holds per entry: a `passes` flag or a `status` state.
    pub list_schema: ListSchema,
    /// What the harness does after a coding session whose exit check fails.
    pub exit_check: ExitCheck,
    /// Prompt templates of this arm that replace the suite's.
    pub prompts: ArmPrompts,
    /// Environment of this arm's sessions, over its agent's own `env` table.
    pub env: BTreeMap<String, String>,
    /// Most tokens (input + output) one session may use; 0 = no limit.
    pub session_tokens: u64,
    /// No new session starts once the trial used this many tokens; 0 = no limit.
    pub trial_tokens: u64,
    /// No new session starts once the trial cost this many dollars; 0 = no limit.
    pub trial_cost_usd: f64,
}

setting! {
    /// `exit_check` of an arm: after every coding session the harness checks that the
    /// tree is committed, the notes exist, the list parses and every claim self-verifies;
    /// this says what it does when the check fails.
    pub enum ExitCheck ("exit_check") {
        /// Record the result only.
        Off = "off",
        /// Reset the work directory to the last commit after which the check passed.
        Revert = "revert",
    }
}

/// One prompt template an arm names: the path as written and the text read from it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptOverride {
    /// The path as written in `suite.toml`, relative to the suite directory.
    pub path: String,
    /// The template.
    pub text: String,
}

/// The prompt templates an arm names; each one replaces the suite's template of that
/// kind for the arm's sessions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ArmPrompts {
    /// Template of session 0.
    pub initializer: Option<PromptOverride>,
    /// Template of every coding session.
    pub coding: Option<PromptOverride>,
}

impl ArmPrompts {
    /// Whether the arm names no template.
    pub fn is_empty(&self) -> bool {
        self.initializer.is_none() && self.coding.is_none()
    }
}

impl Arm {
    /// Coding sessions the trial may run.
    pub fn coding_sessions(&self) -> u32 {
        match self.strategy {
            Strategy::Incremental => self.max_sessions,
            Strategy::Single => 1,
        }
    }

    /// Turn budget of one coding session.
    pub fn turn_budget(&self) -> u32 {
        match self.strategy {
            Strategy::Incremental => self.session_turns,
            Strategy::Single => self.session_turns.saturating_mul(self.max_sessions),
        }
    }
}

/// The `[[arm]]` tables, checked: simple unique names, defined agents, sane budgets,
/// prompt files that exist (relative to `dir`, the suite directory).
pub(super) fn build_arms(
    raw: &[ArmFile],
    agents: &BTreeMap<String, AgentDriver>,
    dir: &Path,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<Vec<Arm>> {
    let mut arms = Vec::new();
    let mut seen = BTreeSet::new();
    for a in raw {
        let arm_name = a.name.get_ref().clone();
        if !is_simple_name(&arm_name) {
            return Err(err(
                a.name.span(),
                format!(
                    "arm name '{arm_name}' must be ASCII letters, digits, '_', '.' or '-', and not '.' or '..'"
                ),
            ));
        }
        if !seen.insert(arm_name.clone()) {
            return Err(err(
                a.name.span(),
                format!("arm '{arm_name}' is defined twice"),
            ));
        }
        if !agents.contains_key(a.agent.get_ref()) {
            return Err(err(
                a.agent.span(),
                format!(
                    "arm '{arm_name}' uses agent '{}', which is not defined under [agents] (defined: {})",
                    a.agent.get_ref(),
                    agents.keys().cloned().collect::<Vec<_>>().join(", ")
                ),
            ));
        }
        if *a.max_sessions.get_ref() == 0 {
            return Err(err(
                a.max_sessions.span(),
                "max_sessions must be at least 1".into(),
            ));
        }
        if *a.session_turns.get_ref() == 0 {
            return Err(err(
                a.session_turns.span(),
                "session_turns must be at least 1".into(),
            ));
        }
        let crash = *a.crash_rate.get_ref();
        if !(0.0..1.0).contains(&crash) {
            return Err(err(
                a.crash_rate.span(),
                format!("crash_rate must be in [0, 1), got {crash}"),
            ));
        }
        let prompts = arm_prompts(&arm_name, a.prompts.as_ref(), dir, err)?;
        let env = arm_env(&arm_name, &a.env, err)?;
        let session_tokens = tokens(&arm_name, "session_tokens", a.session_tokens.as_ref(), err)?;
        let trial_tokens = tokens(&arm_name, "trial_tokens", a.trial_tokens.as_ref(), err)?;
        let trial_cost_usd = trial_cost(&arm_name, a.trial_cost_usd.as_ref(), err)?;
        arms.push(Arm {
            name: arm_name,
            agent: a.agent.get_ref().clone(),
            list_format: a.list_format,
            strategy: a.strategy,
            initializer: a.initializer,
            ledger: a.ledger,
            max_sessions: *a.max_sessions.get_ref(),
            session_turns: *a.session_turns.get_ref(),
            crash_rate: crash,
            list_schema: a.list_schema,
            exit_check: a.exit_check,
            prompts,
            env,
            session_tokens,
            trial_tokens,
            trial_cost_usd,
        });
    }
    Ok(arms)
}

/// The arm's prompt templates, read now so that a missing file is a load error.
fn arm_prompts(
    arm: &str,
    raw: Option<&Spanned<PromptsFile>>,
    dir: &Path,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<ArmPrompts> {
    let Some(raw) = raw else {
        return Ok(ArmPrompts::default());
    };
    let read = |key: &str, path: &Option<Spanned<String>>| -> Result<Option<PromptOverride>> {
        let Some(path) = path else {
            return Ok(None);
        };
        let rel = path.get_ref();
        if rel.trim().is_empty() || Path::new(rel).is_absolute() {
            return Err(err(
                path.span(),
                format!(
                    "arm '{arm}': prompts.{key} must be a file path relative to the suite directory, got '{rel}'"
                ),
            ));
        }
        // The template is handed to the agent: never a file outside the suite.
        let full = super::confined::inside(dir, rel).map_err(|why| {
            err(
                path.span(),
                format!(
                    "arm '{arm}': prompts.{key}: '{rel}' leads outside the suite directory \
                     ({why}); a prompt template must lie inside it"
                ),
            )
        })?;
        match std::fs::read_to_string(&full) {
            Ok(text) => Ok(Some(PromptOverride {
                path: rel.clone(),
                text,
            })),
            Err(e) => Err(err(
                path.span(),
                format!(
                    "arm '{arm}': prompts.{key}: cannot read '{}': {e}",
                    full.display()
                ),
            )),
        }
    };
    let r = raw.get_ref();
    let prompts = ArmPrompts {
        initializer: read("initializer", &r.initializer)?,
        coding: read("coding", &r.coding)?,
    };
    if prompts.is_empty() {
        return Err(err(
            raw.span(),
            format!("arm '{arm}': prompts names no template (keys: initializer, coding)"),
        ));
    }
    Ok(prompts)
}

/// The arm's environment table: names a shell could export, none of the harness's own.
fn arm_env(
    arm: &str,
    raw: &BTreeMap<String, Spanned<String>>,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<BTreeMap<String, String>> {
    let mut env = BTreeMap::new();
    for (name, value) in raw {
        let valid = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(err(
                value.span(),
                format!(
                    "arm '{arm}': env name '{name}' must be ASCII letters, digits and '_', not starting with a digit"
                ),
            ));
        }
        // The session contract (LOOPBENCH_SESSION, LOOPBENCH_EFFECTS, ...) is the
        // harness's: an arm that could change it would measure something else.
        if name.starts_with("LOOPBENCH_") {
            return Err(err(
                value.span(),
                format!(
                    "arm '{arm}': env cannot set '{name}': LOOPBENCH_* variables belong to the harness"
                ),
            ));
        }
        if value.get_ref().contains('\0') {
            return Err(err(
                value.span(),
                format!("arm '{arm}': env value of '{name}' holds a NUL byte"),
            ));
        }
        env.insert(name.clone(), value.get_ref().clone());
    }
    Ok(env)
}

/// A token budget: a whole number >= 0, 0 for no limit.
fn tokens(
    arm: &str,
    key: &str,
    raw: Option<&Spanned<toml::Value>>,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<u64> {
    match raw {
        None => Ok(0),
        Some(v) => match v.get_ref() {
            toml::Value::Integer(n) if *n >= 0 => Ok(u64::try_from(*n).unwrap_or(0)),
            other => Err(err(
                v.span(),
                format!(
                    "arm '{arm}': {key} must be a whole number of tokens >= 0 (0 = no limit), got {other}"
                ),
            )),
        },
    }
}

/// `trial_cost_usd`: a finite number of dollars >= 0 (an integer is fine), 0 for no limit.
fn trial_cost(
    arm: &str,
    raw: Option<&Spanned<toml::Value>>,
    err: &dyn Fn(std::ops::Range<usize>, String) -> Error,
) -> Result<f64> {
    let Some(v) = raw else {
        return Ok(0.0);
    };
    let dollars = match v.get_ref() {
        toml::Value::Float(f) => Some(*f),
        // Budgets are small whole numbers of dollars; the conversion is exact there.
        #[expect(clippy::cast_precision_loss)]
        toml::Value::Integer(n) => Some(*n as f64),
        _ => None,
    };
    match dollars {
        Some(d) if d.is_finite() && d >= 0.0 => Ok(d),
        _ => Err(err(
            v.span(),
            format!(
                "arm '{arm}': trial_cost_usd must be a number of dollars >= 0 (0 = no limit), got {}",
                v.get_ref()
            ),
        )),
    }
}
