//! Codex's tools in an ATIF trajectory (a converter's from Codex's rollouts: Harbor's
//! writes each `function_call` with its parsed arguments and each custom tool's input
//! as `{"input": ...}`), mapped as `loopbench import codex` maps them: the call read by
//! [`crate::import::codex::tool`], what became of it by
//! [`crate::import::codex::outcome`], its actions by [`crate::import::codex::map`].
//! A shell command that ran is a `run`; an `apply_patch` its result says succeeded is
//! its `write`, `edit` and `delete` lines; what cannot be reconstructed is a `skip`
//! with its reason.

use serde_json::Value;

use crate::import::claude_code::mapping::{ToolCall, ToolOutcome};
use crate::import::codex::outcome::Answer;
use crate::import::codex::session::{Call, What};
use crate::import::codex::tool;

/// The call as Codex's, when it is one of Codex's tools with a file effect (a shell
/// command or a patch); `None` for any other tool. `cwd` is the directory the agent
/// worked in, which a relative `workdir` is under.
pub fn codex_call(call: &ToolCall, cwd: Option<&str>) -> Option<Call> {
    let (what, dir) = tool::function_call(&call.name, &call.input);
    if matches!(what, What::Tool(_)) {
        return None;
    }
    Some(Call {
        id: call.id.clone(),
        what,
        origin: call.origin.clone(),
        cwd: tool::resolve(dir.as_deref(), call.cwd.as_deref().or(cwd)),
    })
}

/// What became of a call, from its ATIF result: the text Codex handed back to the
/// model, and the exit code the converter kept beside it (`exit`).
pub fn answer(outcome: &ToolOutcome, exit: Option<i64>) -> Answer {
    let mut answer = Answer::default().with_output(&Value::String(outcome.text.clone()));
    answer.exit_code = exit;
    answer
}
