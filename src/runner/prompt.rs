//! Prompts handed to agents, rendered from the suite's templates.

use crate::feature_list::ListFormat;
use crate::suite::{Ledger, Task};

/// Fallback when a suite ships no `prompts/initializer.md`.
pub const DEFAULT_INITIALIZER: &str = "\
You are the first session of a long job. Goal: {{goal}}

Requirements:
{{features}}

Do not implement any feature. Write {{list_file}} listing every requirement with
`passes` false, a PROGRESS.md with notes for the next session, and an idempotent
init.sh. Commit everything. You have {{turns}} turns.
";

/// Fallback when a suite ships no `prompts/coding.md`.
pub const DEFAULT_CODING: &str = "\
You are session {{session}} of a long job. Goal: {{goal}}

{{features}}

Read PROGRESS.md and git log. Check that earlier work still holds, then implement
exactly one feature, verify it, {{ledger}}, commit, update PROGRESS.md and leave
the tree clean. You have {{turns}} turns.
";

/// What a template can mention.
pub struct PromptVars<'a> {
    /// The task.
    pub task: &'a Task,
    /// The arm's list format.
    pub format: ListFormat,
    /// Who owns the status flags.
    pub ledger: Ledger,
    /// Whether the arm has an initializer (otherwise the requirements are inlined).
    pub initializer: bool,
    /// Session number.
    pub session: u32,
    /// Turn budget.
    pub turns: u32,
}

/// Replaces `{{goal}}`, `{{features}}`, `{{list_file}}`, `{{session}}`, `{{turns}}`
/// and `{{ledger}}` in `template`.
pub fn render(template: &str, vars: &PromptVars<'_>) -> String {
    let requirements: String = vars
        .task
        .features
        .iter()
        .map(|f| format!("- {} {}\n", f.id, f.description))
        .collect();
    let features = if vars.initializer && vars.session > 0 {
        format!("The feature list is {}.", vars.format.file_name())
    } else {
        format!("Requirements:\n{requirements}")
    };
    let ledger = match vars.ledger {
        Ledger::Memo => format!("set its `passes` flag in {}", vars.format.file_name()),
        Ledger::Gate => {
            "leave the `passes` flags alone (the harness sets them from the checks)".into()
        }
    };
    template
        .replace("{{goal}}", &vars.task.goal)
        .replace("{{features}}", features.trim_end())
        .replace("{{list_file}}", vars.format.file_name())
        .replace("{{session}}", &vars.session.to_string())
        .replace("{{turns}}", &vars.turns.to_string())
        .replace("{{ledger}}", &ledger)
}
