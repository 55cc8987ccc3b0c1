//! Whether a Codex call ran, from the output Codex handed back to the model and the
//! status its item events record.
//!
//! | output (by CLI version) | means |
//! | --- | --- |
//! | a JSON string `{"output": ..., "metadata": {"exit_code": N}}` (0.4x `shell`) | ran, exit N |
//! | `Exit code: N` first (`shell` freeform output, `apply_patch` as a custom tool) | ran, exit N |
//! | `Process exited with code N` / `Process running with session ID N` (`exec_command`) | ran |
//! | `exec command rejected by user`, `patch rejected by user`, an item `declined` | refused: never ran |
//! | `failed in sandbox`, `sandbox denied` | the sandbox stopped it: not applied |
//! | `apply_patch verification failed`, `failed to parse function arguments` | never ran |
//!
//! A command that ran applies whatever its exit code: its effects happened (the
//! commit of `git commit && git push` whose push failed). A patch applies only when
//! its output or item says it succeeded.

use serde_json::Value;

/// What Codex says became of one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Answer {
    /// The output text handed back to the model.
    pub text: Option<String>,
    /// The output's own `success` flag, when it has one.
    pub success: Option<bool>,
    /// The exit code an item or end event records.
    pub exit_code: Option<i64>,
    /// An item's status (`completed`, `failed`, `declined`).
    pub status: Option<String>,
}

/// How a call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran {
    /// It ran (a patch: it succeeded).
    Yes,
    /// Someone said no: it never ran.
    Refused,
    /// It failed before or while applying, for this reason: not applied.
    Failed(String),
}

impl Answer {
    /// Folds in a `function_call_output`'s `output`: a string, an array of content
    /// items, or an object with `content` and `success`.
    pub fn with_output(mut self, output: &Value) -> Answer {
        match output {
            Value::String(s) => self.text = Some(s.clone()),
            Value::Array(items) => {
                let text: Vec<&str> = items
                    .iter()
                    .filter_map(|i| i.get("text").and_then(Value::as_str))
                    .collect();
                self.text = Some(text.join("\n"));
            }
            Value::Object(map) => {
                self.text = map
                    .get("content")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .or_else(|| Some(output.to_string()));
                self.success = map.get("success").and_then(Value::as_bool);
            }
            _ => {}
        }
        self
    }

    fn text(&self) -> &str {
        self.text.as_deref().unwrap_or("")
    }

    /// The exit code the output text states, in any of its forms.
    fn stated_exit(&self) -> Option<i64> {
        let text = self.text();
        if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(text)
            && let Some(code) = map
                .get("metadata")
                .and_then(|m| m.get("exit_code"))
                .and_then(Value::as_i64)
        {
            return Some(code);
        }
        text.lines().take(8).find_map(|line| {
            let line = line.trim();
            line.strip_prefix("Exit code: ")
                .or_else(|| line.strip_prefix("Process exited with code "))
                .and_then(|n| n.trim().parse().ok())
        })
    }

    /// The text of the output itself: a JSON output's `output`, else the text.
    fn said(&self) -> String {
        let text = self.text();
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map
                .get("output")
                .and_then(Value::as_str)
                .unwrap_or(text)
                .to_string(),
            _ => text.to_string(),
        }
    }

    fn refused(&self) -> bool {
        let said = self.said();
        let text = said.trim_start();
        self.status.as_deref() == Some("declined")
            || [
                "exec command rejected by user",
                "unified exec command rejected by user",
                "patch rejected by user",
                "exec command aborted by user",
                "aborted by user",
            ]
            .iter()
            .any(|p| text.starts_with(p))
    }

    /// What became of a shell command.
    pub fn shell(&self) -> Ran {
        if self.refused() {
            return Ran::Refused;
        }
        let text = self.text().trim_start();
        let stopped = ["failed in sandbox", "sandbox denied", "Sandbox(Denied"]
            .iter()
            .any(|p| text.starts_with(p));
        if stopped {
            return Ran::Failed("the sandbox stopped it".into());
        }
        if self.exit_code.is_some() || self.stated_exit().is_some() {
            return Ran::Yes;
        }
        let never_ran = [
            "failed to parse function arguments",
            "unsupported call",
            "unknown tool",
            "unsupported custom tool call",
        ]
        .iter()
        .any(|p| text.starts_with(p));
        if never_ran {
            return Ran::Failed(first_line(text));
        }
        // "Process running with session ID", a timeout, an output of an unknown form:
        // the command was started, and its effects happened.
        Ran::Yes
    }

    /// What became of a patch: applied only when Codex says it succeeded.
    pub fn patch(&self) -> Ran {
        if self.refused() {
            return Ran::Refused;
        }
        let text = self.text().trim_start();
        match (
            self.status.as_deref(),
            self.exit_code.or(self.stated_exit()),
        ) {
            (Some("completed"), _) | (None, Some(0)) => return Ran::Yes,
            (Some("failed"), _) => return Ran::Failed(first_line(text)),
            (None, Some(code)) => {
                return Ran::Failed(format!("exit code {code}: {}", first_line(body(text))));
            }
            _ => {}
        }
        if text.starts_with("Success.") || (self.success == Some(true) && !text.is_empty()) {
            Ran::Yes
        } else {
            Ran::Failed(first_line(text))
        }
    }
}

/// The output after an `Output:` header, or the whole text.
fn body(text: &str) -> &str {
    text.split_once("Output:\n").map_or(text, |(_, b)| b)
}

fn first_line(text: &str) -> String {
    let line = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("no output");
    line.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn text(t: &str) -> Answer {
        Answer::default().with_output(&json!(t))
    }

    #[test]
    fn every_output_form_of_a_command_that_ran_is_read_as_ran() {
        for output in [
            r#"{"output":"x\n","metadata":{"exit_code":1,"duration_seconds":0.1}}"#,
            "Exit code: 0\nWall time: 0.1 seconds\nOutput:\nok\n",
            "Chunk ID: c8dfd6\nWall time: 0.0000 seconds\nProcess exited with code 2\nOutput:\n",
            "Chunk ID: c8dfd6\nWall time: 10.0 seconds\nProcess running with session ID 7\nOutput:\n",
        ] {
            assert_eq!(text(output).shell(), Ran::Yes, "{output}");
        }
    }

    #[test]
    fn refused_sandboxed_and_invalid_calls_did_not_run() {
        assert_eq!(text("exec command rejected by user").shell(), Ran::Refused);
        let wrapped = r#"{"output":"exec command rejected by user","metadata":{"exit_code":-1}}"#;
        assert_eq!(text(wrapped).shell(), Ran::Refused);
        let declined = Answer {
            status: Some("declined".into()),
            ..Answer::default()
        };
        assert_eq!(declined.shell(), Ran::Refused);
        assert!(matches!(
            text("failed in sandbox LinuxSeccomp with execution error: denied").shell(),
            Ran::Failed(_)
        ));
        assert!(matches!(
            text("failed to parse function arguments: missing field `command`").shell(),
            Ran::Failed(_)
        ));
    }

    #[test]
    fn a_patch_applies_only_when_codex_says_it_succeeded() {
        let ok = "Exit code: 0\nWall time: 0 seconds\nOutput:\nSuccess. Updated the following files:\nM a.txt\n";
        assert_eq!(text(ok).patch(), Ran::Yes);
        let legacy = r#"{"output":"Success. Updated the following files:\nM a.txt\n","metadata":{"exit_code":0}}"#;
        assert_eq!(text(legacy).patch(), Ran::Yes);
        assert_eq!(
            text("Success. Updated the following files:\nA b\n").patch(),
            Ran::Yes
        );
        let failed =
            "apply_patch verification failed: Failed to find expected lines in /w/a.txt:\nTWO";
        assert_eq!(
            text(failed).patch(),
            Ran::Failed(
                "apply_patch verification failed: Failed to find expected lines in /w/a.txt:"
                    .into()
            )
        );
        let exit1 = r#"{"output":"error: bad hunk\n","metadata":{"exit_code":1}}"#;
        assert!(matches!(text(exit1).patch(), Ran::Failed(_)));
        assert_eq!(text("patch rejected by user").patch(), Ran::Refused);
        let item = Answer {
            status: Some("completed".into()),
            ..Answer::default()
        };
        assert_eq!(item.patch(), Ran::Yes);
        let object = Answer::default().with_output(&json!({"content": "boom", "success": false}));
        assert!(matches!(object.patch(), Ran::Failed(_)));
    }
}
