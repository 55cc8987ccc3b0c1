//! Prompts handed to agents, rendered from the suite's templates.

use crate::feature_list::ListFormat;
use crate::suite::{Ledger, Task};

/// Fallback when a suite ships no `prompts/initializer.md`.
pub const DEFAULT_INITIALIZER: &str = "\
You are the first session of a long job. Goal: {{goal}}

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
        .map(|f| format!("- {} {}\n", f.id, continued(&f.description)))
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

/// A description of several lines (a Harbor step's instruction) as one item of the
/// requirements: every line after the first indented under it, so that the list stays
/// one item per requirement.
fn continued(description: &str) -> String {
    let mut lines = description.lines();
    let mut out = lines.next().unwrap_or_default().to_string();
    for line in lines {
        out.push('\n');
        if !line.trim().is_empty() {
            out.push_str("  ");
            out.push_str(line);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_description_of_several_lines_stays_one_item_of_the_requirements() {
        assert_eq!(continued("one line"), "one line");
        assert_eq!(
            continued("Write x.\nIt prints 1.\n\nThen 2."),
            "Write x.\n  It prints 1.\n\n  Then 2."
        );
    }
}
