//! Codex's tools by name: what a call of each does to the files, from its arguments.
//! One reading for every transcript that holds Codex's calls: its rollout files
//! ([`super::rollout`]) and an ATIF trajectory a converter wrote from them
//! ([`crate::import::atif`]).
//!
//! | tool | what |
//! | --- | --- |
//! | `shell`, `container.exec`, `local_shell` (an argv `command`, or a script) | a shell command |
//! | `shell_command`, `exec_command` (a `command` or `cmd` script) | a shell command |
//! | `apply_patch` (its `input` or `patch`, or the arguments as a string; a custom tool's input) | a patch |
//! | an `apply_patch` run through the shell (`["apply_patch", PATCH]`, `apply_patch <<'EOF'`) | a patch, as Codex applies it, in the directory of a leading `cd DIR &&` |
//! | anything else (`update_plan`, `write_stdin`, `web_search`, MCP tools...) | a tool without a file effect |
//!
//! The directory a call names (`workdir`) is absolute, or relative to the turn's cwd,
//! which only the transcript's reader knows.

use serde_json::Value;

use super::command::{heredoc_patch, patch_invocation, script_of_argv};
use super::session::What;

/// A call of the function tool `name` with its arguments `args` (the JSON its
/// `arguments` string holds): what it does, and the directory it names, absolute or
/// relative to the turn's cwd (`None`: the turn's cwd).
pub fn function_call(name: &str, args: &Value) -> (What, Option<String>) {
    let workdir = text(args, "workdir");
    match name {
        "shell" | "container.exec" | "local_shell" => match argv(args.get("command")) {
            Some(argv) => argv_call(&argv, workdir),
            None => match text(args, "command") {
                Some(script) => script_call(script, workdir),
                None => (What::Tool(name.to_string()), own(workdir)),
            },
        },
        "shell_command" | "exec_command" => {
            match text(args, "command").or_else(|| text(args, "cmd")) {
                Some(script) => script_call(script, workdir),
                None => (What::Tool(name.to_string()), own(workdir)),
            }
        }
        "apply_patch" => {
            let patch = text(args, "input")
                .or_else(|| text(args, "patch"))
                .or_else(|| args.as_str())
                .unwrap_or("");
            (What::Patch(patch.to_string()), own(workdir))
        }
        other => (What::Tool(other.to_string()), own(workdir)),
    }
}

/// A call of the custom (freeform) tool `name` with its `input`.
pub fn custom_tool_call(name: &str, input: Option<&str>) -> What {
    match (name, input) {
        ("apply_patch", Some(patch)) => What::Patch(patch.to_string()),
        _ => What::Tool(name.to_string()),
    }
}

/// A command given as an argv (`local_shell_call`'s action too) in `workdir`.
pub fn argv_call(argv: &[String], workdir: Option<&str>) -> (What, Option<String>) {
    match patch_invocation(argv) {
        Some((patch, sub)) => (What::Patch(patch), within(workdir, sub)),
        None => (What::Shell(script_of_argv(argv)), own(workdir)),
    }
}

/// The words of an argv value, when it is one.
pub fn argv(value: Option<&Value>) -> Option<Vec<String>> {
    value?
        .as_array()?
        .iter()
        .map(|w| w.as_str().map(str::to_string))
        .collect()
}

fn script_call(script: &str, workdir: Option<&str>) -> (What, Option<String>) {
    match heredoc_patch(script) {
        Some((patch, sub)) => (What::Patch(patch), within(workdir, sub)),
        None => (What::Shell(script.to_string()), own(workdir)),
    }
}

fn text<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

fn own(workdir: Option<&str>) -> Option<String> {
    workdir.filter(|w| !w.is_empty()).map(str::to_string)
}

/// `workdir` with the directory `sub` a `cd` names inside it (an absolute `sub`
/// replaces it).
fn within(workdir: Option<&str>, sub: Option<String>) -> Option<String> {
    match (own(workdir), sub) {
        (_, Some(sub)) if sub.starts_with('/') => Some(sub),
        (Some(dir), Some(sub)) => Some(format!("{dir}/{sub}")),
        (None, Some(sub)) => Some(sub),
        (dir, None) => dir,
    }
}

/// The absolute directory a call ran in: `dir` as [`function_call`] names it, resolved
/// against the turn's cwd `turn_cwd`; `None` when neither is known.
pub fn resolve(dir: Option<&str>, turn_cwd: Option<&str>) -> Option<String> {
    match dir {
        Some(d) if d.starts_with('/') => Some(d.to_string()),
        Some(d) => turn_cwd.map(|cwd| format!("{cwd}/{d}")),
        None => turn_cwd.map(str::to_string),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn each_tool_s_arguments_give_what_it_does_and_where() {
        assert_eq!(
            function_call("exec_command", &json!({"cmd": "ls", "workdir": "tests"})),
            (What::Shell("ls".into()), Some("tests".into()))
        );
        assert_eq!(
            function_call(
                "shell",
                &json!({"command": ["bash", "-lc", "make"], "workdir": ""})
            ),
            (What::Shell("make".into()), None)
        );
        let heredoc = "cd sub && apply_patch <<'EOF'\n*** Begin Patch\n*** End Patch\nEOF";
        assert_eq!(
            function_call(
                "shell_command",
                &json!({"command": heredoc, "workdir": "/w"})
            ),
            (
                What::Patch("*** Begin Patch\n*** End Patch\n".into()),
                Some("/w/sub".into())
            )
        );
        assert_eq!(
            function_call("apply_patch", &json!({"input": "P"})),
            (What::Patch("P".into()), None)
        );
        assert_eq!(
            function_call("update_plan", &json!({"plan": []})),
            (What::Tool("update_plan".into()), None)
        );
        assert_eq!(resolve(Some("tests"), Some("/w")), Some("/w/tests".into()));
        assert_eq!(resolve(Some("/abs"), Some("/w")), Some("/abs".into()));
        assert_eq!(resolve(Some("tests"), None), None);
        assert_eq!(resolve(None, Some("/w")), Some("/w".into()));
    }
}
