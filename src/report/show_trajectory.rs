//! `show RUN_DIR TRIAL_ID --trajectory`: a session's trajectory one entry a line, the
//! entries a metric counted marked with why (see [`super::trajectory_marks`]), or the
//! same as JSON. The agent's text is escaped as everything `show` prints.

use std::fmt::Write as _;

use serde_json::json;

use super::trajectory_marks::{Mark, marks};
use crate::agent::trajectory::{Act, EditOp, Entry};
use crate::record::SessionRecord;
use crate::terminal;

/// The most characters of an entry's one line.
const LINE_CHARS: usize = 160;

/// One line: the first line of `text`, escaped, held to [`LINE_CHARS`], with `…` when
/// more followed.
fn one_line(text: &str) -> String {
    let first = text.lines().next().unwrap_or("");
    let mut line: String = terminal::line(first).chars().take(LINE_CHARS).collect();
    if line.chars().count() < terminal::line(first).chars().count() || text.lines().count() > 1 {
        line.push('…');
    }
    line
}

/// What an entry's line says after its kind.
pub fn summary(entry: &Entry) -> String {
    let text = match &entry.act {
        Act::Message { text, from } => match from.as_deref() {
            Some(who) => format!("[{who}] {}", one_line(text)),
            None => one_line(text),
        },
        Act::ToolCall { tool, .. } => {
            format!("{} {}", one_line(tool), one_line(&entry.headline()))
        }
        Act::ToolResult {
            output,
            exit,
            error,
            ..
        } => {
            let status = match (exit, error) {
                (Some(code), _) => format!("exit {code}"),
                (None, true) => "error".into(),
                (None, false) => "ok".into(),
            };
            format!("{status}: {}", one_line(output))
        }
        Act::Edit {
            path, op, failed, ..
        } => {
            let op = match op {
                EditOp::Write => "write",
                EditOp::Edit => "edit",
                EditOp::Delete => "delete",
            };
            match failed {
                Some(why) => format!("{op} {} (not applied: {})", one_line(path), one_line(why)),
                None => format!("{op} {}", one_line(path)),
            }
        }
        Act::Command { cmd, exit, .. } => match exit {
            Some(code) => format!("$ {} [exit {code}]", one_line(cmd)),
            None => format!("$ {} [killed]", one_line(cmd)),
        },
        Act::Rejected {
            tool,
            path,
            reason,
            by_agent,
        } => format!(
            "{}{}: {}{}",
            tool.as_deref().map(one_line).unwrap_or_default(),
            path.as_deref()
                .map(|p| format!(" {}", one_line(p)))
                .unwrap_or_default(),
            one_line(reason),
            if *by_agent {
                " (rejected by the agent's program)"
            } else {
                " (not applied)"
            }
        ),
        Act::End { reason, usage, .. } => {
            let mut text = reason.clone();
            if let Some(turns) = usage.turns {
                let _ = write!(text, "; {turns} turns");
            }
            if let Some(tokens) = usage.tokens() {
                let _ = write!(text, ", {tokens} tokens");
            }
            text
        }
    };
    if entry.cut.is_empty() {
        text
    } else {
        let cuts: Vec<String> = entry
            .cut
            .iter()
            .map(|(field, full)| match full {
                0 => format!("{field} kept from its end"),
                n => format!("{field} of {n} bytes"),
            })
            .collect();
        format!("{text} [cut: {}]", cuts.join(", "))
    }
}

/// The name of an entry's kind, as the file writes it.
pub fn kind(entry: &Entry) -> &'static str {
    match entry.act {
        Act::Message { .. } => "message",
        Act::ToolCall { .. } => "tool_call",
        Act::ToolResult { .. } => "tool_result",
        Act::Edit { .. } => "edit",
        Act::Command { .. } => "command",
        Act::Rejected { .. } => "rejected",
        Act::End { .. } => "end",
    }
}

/// The trajectory of `session` as text: a header, then one line per entry (`*` before
/// one a metric counted, each mark on a line of its own under it).
pub fn trajectory_text(session: &SessionRecord, trajectory: &[Entry]) -> String {
    let marked = marks(session, trajectory);
    let mut out = format!(
        "session {} ({}, {}): {} entries; * a metric counted it\n",
        session.session,
        session.kind.as_str(),
        session.outcome.as_str(),
        trajectory.len()
    );
    for (i, (entry, marks)) in trajectory.iter().zip(&marked).enumerate() {
        let star = if marks.is_empty() { ' ' } else { '*' };
        let _ = writeln!(
            out,
            "{star}{:>4} {:<11} {}",
            i + 1,
            kind(entry),
            summary(entry)
        );
        for mark in marks {
            let _ = writeln!(
                out,
                "       ^ {}: {}",
                mark.metric,
                terminal::line(&mark.text)
            );
        }
    }
    out
}

/// The trajectory of `session` as data: each entry as written, with its number and
/// marks.
pub fn trajectory_json(session: &SessionRecord, trajectory: &[Entry]) -> serde_json::Value {
    let marked = marks(session, trajectory);
    let entries: Vec<serde_json::Value> = trajectory
        .iter()
        .zip(marked)
        .enumerate()
        .map(|(i, (entry, marks)): (usize, (&Entry, Vec<Mark>))| {
            json!({"n": i + 1, "entry": entry, "marks": marks})
        })
        .collect();
    json!({
        "trial_id": session.key.trial_id,
        "session": session.session,
        "outcome": session.outcome.as_str(),
        "trajectory": entries,
    })
}
