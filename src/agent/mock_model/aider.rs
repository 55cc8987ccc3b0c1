//! A scripted session as aider 0.86 takes it: one answer in aider's `diff` edit format
//! (SEARCH/REPLACE blocks, then one shell block), and how to tell aider's follow-up
//! calls apart.
//!
//! aider acts on a whole answer at once and in a fixed order: it first adds the
//! existing repository files the answer names to the chat and, if there were any, asks
//! again without applying anything ("I added these files to the chat"); then it applies
//! every edit block; then it runs the shell block. So a session's writes and edits all
//! happen before its commands, and a write of an existing file must quote the file's
//! whole current content as its SEARCH (an empty SEARCH appends to a file).

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::render::shell_quote;
use super::script::Step;

/// The fence around edit blocks: four backquotes, so that file content may hold three.
const FENCE: &str = "````";

/// What aider sends after it added the files an answer named: the answer was not
/// applied, and the model is asked again (aider's `prompts.added_files`).
const ADDED_FILES: &str = "I added these files to the chat:";

/// Whether the request is aider asking again because it added the files the last
/// answer named (that answer's edits were not applied).
pub fn added_files_reflection(body: &Value) -> bool {
    last_user_text(body).is_some_and(|text| text.trim_start().starts_with(ADDED_FILES))
}

fn last_user_text(body: &Value) -> Option<&str> {
    let messages = body.get("messages")?.as_array()?;
    let last = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))?;
    match last.get("content")? {
        Value::String(text) => Some(text),
        // Content parts: the first text part.
        Value::Array(parts) => parts
            .iter()
            .find_map(|p| p.get("text").and_then(Value::as_str)),
        _ => None,
    }
}

fn with_newline(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}

fn block(text: &mut String, path: &str, search: &str, replace: &str) {
    text.push_str(&format!(
        "{path}\n{FENCE}\n<<<<<<< SEARCH\n{}=======\n{}>>>>>>> REPLACE\n{FENCE}\n\n",
        with_newline(search),
        with_newline(replace)
    ));
}

/// aider's answer for a whole session in `work_dir`: every write and edit as an edit
/// block, in order, then the commands (and deletions, which aider has no edit for) as
/// one shell block, then the summary.
pub fn answer(steps: &[Step], summary: &str, work_dir: &Path) -> String {
    // Each file as the blocks before leave it: a later write quotes that as its SEARCH.
    let mut files: HashMap<&str, Option<String>> = HashMap::new();
    let current = |files: &mut HashMap<&str, Option<String>>, path: &str| {
        files
            .get(path)
            .cloned()
            .unwrap_or_else(|| std::fs::read_to_string(work_dir.join(path)).ok())
    };
    let mut text = String::new();
    let mut shell = Vec::new();
    for step in steps {
        match step {
            Step::Write { path, content } => {
                let before = current(&mut files, path).unwrap_or_default();
                block(&mut text, path, &before, content);
                files.insert(path, Some(content.clone()));
            }
            Step::Edit { path, old, new } => {
                block(&mut text, path, old, new);
                if let Some(before) = current(&mut files, path) {
                    files.insert(path, Some(before.replacen(old.as_str(), new, 1)));
                }
            }
            Step::Delete { path } => {
                shell.push(format!("rm -f -- {}", shell_quote(path)));
                files.insert(path, None);
            }
            Step::Run { cmd } => shell.push(cmd.clone()),
        }
    }
    if !shell.is_empty() {
        text.push_str("```bash\n");
        for cmd in shell {
            text.push_str(&cmd);
            text.push('\n');
        }
        text.push_str("```\n\n");
    }
    text.push_str(summary);
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_write_of_an_existing_file_quotes_its_content_as_it_stands_then() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("P.md"), "old\n").unwrap();
        let steps = [
            Step::Write {
                path: "P.md".into(),
                content: "one\n".into(),
            },
            Step::Edit {
                path: "P.md".into(),
                old: "one".into(),
                new: "two".into(),
            },
            Step::Write {
                path: "P.md".into(),
                content: "three".into(),
            },
            Step::Write {
                path: "new.py".into(),
                content: "x = 1\n".into(),
            },
            Step::Delete {
                path: "t.py".into(),
            },
            Step::Run {
                cmd: "git commit -qam x".into(),
            },
        ];
        let text = answer(&steps, "done", dir.path());
        let blocks: Vec<&str> = text.split("<<<<<<< SEARCH\n").skip(1).collect();
        assert!(blocks[0].starts_with("old\n=======\none\n>>>>>>> REPLACE"));
        assert!(blocks[1].starts_with("one\n=======\ntwo\n>>>>>>> REPLACE"));
        assert!(blocks[2].starts_with("two\n=======\nthree\n>>>>>>> REPLACE"));
        assert!(blocks[3].starts_with("=======\nx = 1\n>>>>>>> REPLACE"));
        assert!(text.ends_with("```bash\nrm -f -- 't.py'\ngit commit -qam x\n```\n\ndone"));
    }

    #[test]
    fn only_the_added_files_message_asks_for_the_answer_again() {
        let body = |content: Value| {
            json!({"messages": [{"role": "system", "content": "s"},
                                {"role": "user", "content": content},
                                {"role": "assistant", "content": "a"}]})
        };
        assert!(added_files_reflection(&body(json!(
            "I added these files to the chat: FEATURES.md\nLet me know if there are others we should add."
        ))));
        assert!(added_files_reflection(&body(
            json!([{"type": "text", "text": "I added these files to the chat: a"}])
        )));
        assert!(!added_files_reflection(&body(json!("FAILED (errors=1)"))));
        assert!(!added_files_reflection(&json!({})));
    }
}
