//! A scripted step as the tool call an agent CLI makes of it: Claude Code's file tools
//! and Bash, or a shell command (Codex's `exec_command`, or a plain `shell`) with
//! `apply_patch` where the request offers it.

use std::collections::HashSet;
use std::path::Path;

use serde_json::{Value, json};

use super::render::{self, Reply};
use super::script::Step;

/// What Claude Code is answered for a step.
pub(super) enum ClaudeCall {
    /// A read of the step's file, which Claude Code wants before it changes a file; the
    /// step itself is the answer to the next call.
    ReadFirst(Reply),
    /// The step itself.
    Step(Reply),
}

/// The shell tool a CLI offers.
#[derive(Debug, Clone, Copy)]
pub(super) enum ShellTool {
    /// Codex's `exec_command`.
    ExecCommand,
    /// A plain `shell` tool.
    Shell,
}

/// A tool call `name` with `input` and the call id `call_id`.
fn tool(call_id: &str, name: &str, input: Value, custom: bool) -> Reply {
    Reply::Tool {
        id: call_id.to_string(),
        name: name.to_string(),
        input,
        custom,
    }
}

/// `step` as Claude Code's tool call; `known` holds the files it has read or written
/// in this session.
pub(super) fn claude_code_call(
    step: &Step,
    known: &mut HashSet<String>,
    work_dir: &Path,
    call_id: &str,
) -> ClaudeCall {
    let abs = |p: &str| work_dir.join(p).to_string_lossy().into_owned();
    let call = |name: &str, input: Value| ClaudeCall::Step(tool(call_id, name, input, false));
    match step {
        Step::Write { path, .. } | Step::Edit { path, .. }
            if !known.contains(path)
                && (matches!(step, Step::Edit { .. }) || work_dir.join(path).exists()) =>
        {
            // Claude Code refuses to change a file it has not read: read it first, and
            // answer the step itself on the next call.
            known.insert(path.clone());
            ClaudeCall::ReadFirst(tool(
                call_id,
                "Read",
                json!({"file_path": abs(path)}),
                false,
            ))
        }
        Step::Write { path, content } => {
            known.insert(path.clone());
            call("Write", json!({"file_path": abs(path), "content": content}))
        }
        Step::Edit { path, old, new } => call(
            "Edit",
            json!({"file_path": abs(path), "old_string": old, "new_string": new,
                   "replace_all": false}),
        ),
        Step::Delete { path } => {
            known.clear();
            call(
                "Bash",
                json!({"command": format!("rm -- {}", render::shell_quote(path)),
                       "description": "delete a file"}),
            )
        }
        Step::Run { cmd } => {
            // A command may change any file: Claude Code wants it read again.
            known.clear();
            call(
                "Bash",
                json!({"command": cmd, "description": "run a command"}),
            )
        }
    }
}

/// `step` as a shell command through `shell`, or as `apply_patch` for an edit when the
/// request `body` offers that tool.
pub(super) fn shell_call(step: &Step, body: &Value, shell: ShellTool, call_id: &str) -> Reply {
    let exec = |cmd: String| match shell {
        ShellTool::ExecCommand => tool(
            call_id,
            "exec_command",
            json!({"cmd": cmd, "yield_time_ms": 30000}),
            false,
        ),
        ShellTool::Shell => tool(call_id, "shell", json!({"command": cmd}), false),
    };
    match step {
        Step::Write { path, content } => exec(render::write_command(path, content)),
        Step::Edit { path, old, new } if offers(body, "apply_patch") => tool(
            call_id,
            "apply_patch",
            Value::String(render::apply_patch(path, old, new)),
            true,
        ),
        Step::Edit { path, old, new } => exec(format!(
            "python3 -c {} {} {} {}",
            render::shell_quote(EDIT_PY),
            render::shell_quote(path),
            render::shell_quote(old),
            render::shell_quote(new)
        )),
        Step::Delete { path } => exec(format!("rm -- {}", render::shell_quote(path))),
        Step::Run { cmd } => exec(cmd.clone()),
    }
}

/// Replaces one occurrence of argv[2] by argv[3] in the file argv[1], for a CLI that
/// offers a shell but no patch tool.
const EDIT_PY: &str = "import sys\np, o, n = sys.argv[1:4]\ns = open(p).read()\n\
assert s.count(o) == 1, 'old text must occur once'\nopen(p, 'w').write(s.replace(o, n, 1))\n";

/// Whether the request offers a tool named `name`.
pub(super) fn offers(body: &Value, name: &str) -> bool {
    body.get("tools")
        .and_then(Value::as_array)
        .is_some_and(|tools| {
            tools.iter().any(|t| {
                t.get("name").and_then(Value::as_str) == Some(name)
                    || t.pointer("/function/name").and_then(Value::as_str) == Some(name)
            })
        })
}
