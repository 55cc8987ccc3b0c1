//! The command lines of Codex's shell calls: an argv (`["bash", "-lc", "make test"]`,
//! as `shell`, `local_shell_call` and the item events record it), a script string
//! (`exec_command`'s `cmd`), or one quoted string (`/bin/bash -lc 'make test'`, as
//! `codex exec --json` prints it), each turned into the script a `run` line replays;
//! and an `apply_patch` the model ran through the shell, which Codex intercepts and
//! applies as a patch.

use crate::import::paths::shell_quote;

/// The script of an argv: the script of a shell's `-c`/`-lc`, else the words quoted
/// for `sh`.
pub fn script_of_argv(argv: &[String]) -> String {
    if let [shell, flag, script] = argv {
        let name = shell.rsplit('/').next().unwrap_or(shell);
        if matches!(name, "bash" | "sh" | "zsh" | "dash")
            && matches!(flag.as_str(), "-c" | "-lc" | "-cl")
        {
            return script.clone();
        }
    }
    argv.iter()
        .map(|w| shell_quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The words of a command line quoted as POSIX `sh` quotes them (single quotes, double
/// quotes with `\` escapes, `\` outside quotes); `None` when a quote is not closed.
pub fn split_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => word.push(c),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => match chars.next()? {
                            c @ ('\\' | '"' | '$' | '`') => word.push(c),
                            '\n' => {}
                            c => {
                                word.push('\\');
                                word.push(c);
                            }
                        },
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') | None => {}
                    Some(c) => word.push(c),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// The patch of an `apply_patch` run through the shell, and the directory a leading
/// `cd DIR &&` names: `["apply_patch", PATCH]`, or a script `apply_patch <<'EOF'` with
/// the patch as its heredoc. Codex applies these itself, as patches.
pub fn patch_invocation(argv: &[String]) -> Option<(String, Option<String>)> {
    if let [program, patch] = argv
        && matches!(program.as_str(), "apply_patch" | "applypatch")
    {
        return Some((patch.clone(), None));
    }
    let script = match argv {
        [shell, flag, script]
            if matches!(flag.as_str(), "-c" | "-lc" | "-cl")
                && matches!(
                    shell.rsplit('/').next().unwrap_or(shell),
                    "bash" | "sh" | "zsh"
                ) =>
        {
            script.as_str()
        }
        _ => return None,
    };
    heredoc_patch(script)
}

/// `[cd DIR &&] apply_patch <<'EOF'\n...\nEOF`: the heredoc's text and DIR.
pub fn heredoc_patch(script: &str) -> Option<(String, Option<String>)> {
    let mut rest = script.trim_start();
    let mut dir = None;
    if let Some(after) = rest.strip_prefix("cd ") {
        let (target, tail) = after.split_once("&&")?;
        let words = split_words(target.trim())?;
        let [target] = words.as_slice() else {
            return None;
        };
        dir = Some(target.clone());
        rest = tail.trim_start();
    }
    let rest = rest
        .strip_prefix("apply_patch")
        .or_else(|| rest.strip_prefix("applypatch"))?;
    let (first, body) = rest.split_once('\n')?;
    let marker = first.trim().strip_prefix("<<")?.trim();
    let tag = marker.trim_matches(|c| c == '\'' || c == '"');
    if tag.is_empty() || tag.contains(char::is_whitespace) {
        return None;
    }
    let end = body
        .lines()
        .position(|l| l.trim_end() == tag)
        .unwrap_or(body.lines().count());
    let patch: Vec<&str> = body.lines().take(end).collect();
    Some((patch.join("\n") + "\n", dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn a_shell_argv_gives_its_script_and_any_other_argv_its_quoted_words() {
        assert_eq!(
            script_of_argv(&argv(&["bash", "-lc", "make && ls"])),
            "make && ls"
        );
        assert_eq!(script_of_argv(&argv(&["/bin/bash", "-c", "x"])), "x");
        assert_eq!(
            script_of_argv(&argv(&["rm", "-f", "a b", "it's"])),
            r"rm -f 'a b' 'it'\''s'"
        );
        assert_eq!(script_of_argv(&argv(&["bash", "x.sh"])), "bash x.sh");
    }

    #[test]
    fn quoted_command_lines_split_into_the_words_sh_would_see() {
        let line = r#"/bin/bash -lc "mkdir -p 'a' && printf '%s' '\"x\"' > \$F""#;
        assert_eq!(
            split_words(line).unwrap(),
            argv(&[
                "/bin/bash",
                "-lc",
                r#"mkdir -p 'a' && printf '%s' '"x"' > $F"#
            ])
        );
        assert_eq!(
            split_words(r"a\ b 'c d' e''").unwrap(),
            argv(&["a b", "c d", "e"])
        );
        assert_eq!(split_words("'open"), None);
        assert_eq!(split_words("").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn apply_patch_through_the_shell_is_found_with_its_directory() {
        let patch = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch";
        assert_eq!(
            patch_invocation(&argv(&["apply_patch", patch])),
            Some((patch.to_string(), None))
        );
        let script = format!("cd sub && apply_patch <<'EOF'\n{patch}\nEOF\n");
        assert_eq!(
            patch_invocation(&argv(&["bash", "-lc", &script])),
            Some((format!("{patch}\n"), Some("sub".into())))
        );
        assert_eq!(
            patch_invocation(&argv(&["bash", "-lc", "apply_patcher x"])),
            None
        );
        assert_eq!(patch_invocation(&argv(&["bash", "-lc", "ls"])), None);
    }
}
