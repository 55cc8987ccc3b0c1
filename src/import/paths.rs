//! Paths and commands of a foreign transcript made relative to the work directory.
//!
//! A transcript names files by the absolute paths of the machine it was recorded on
//! (`/home/dev/latefees/ledger/fees.py`). The root is the session's `cwd` (or
//! `--root`): a path under it becomes relative (`ledger/fees.py`), a relative path is
//! taken from the directory the agent's shell was in (the `cwd` of the transcript
//! line, [`within`] the root), and anything that would leave the root is refused with
//! a reason, which the importer records as a `skip` line. A command's references to
//! the root are rewritten relative to the directory it runs in. Paths are compared
//! lexically (`.` and `..` resolved as text), never against the importing machine's
//! file system: the files the transcript names need not exist here.

use std::path::{Component, Path};

/// `path` relative to `root`, with `/` separators, or why it cannot be.
pub fn relative(path: &str, root: Option<&str>) -> Result<String, String> {
    if path.is_empty() {
        return Err("empty path".into());
    }
    let parts = normalize(path).ok_or_else(|| format!("'{path}' leaves its own root"))?;
    let rel = if Path::new(path).is_absolute() {
        let Some(root) = root else {
            return Err("absolute path, and the transcript gives no cwd (pass --root)".into());
        };
        let root_parts = normalize(root).unwrap_or_default();
        if !parts.starts_with(&root_parts) {
            return Err(format!("outside the root {root}"));
        }
        parts[root_parts.len()..].to_vec()
    } else {
        parts
    };
    if rel.is_empty() {
        return Err("names the root itself".into());
    }
    Ok(rel.join("/"))
}

/// The normal components of `path` with `.` and `..` resolved; `None` when `..`
/// climbs above the start.
fn normalize(path: &str) -> Option<Vec<String>> {
    let mut parts: Vec<String> = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(c) => parts.push(c.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    Some(parts)
}

/// The absolute directory `dir` relative to `root`: `Some("")` for the root itself,
/// `Some("tests/unit")` for a directory under it, `None` when `dir` is not absolute or
/// lies outside the root. Compared lexically, like [`relative`].
pub fn within(dir: &str, root: &str) -> Option<String> {
    if !Path::new(dir).is_absolute() || !Path::new(root).is_absolute() {
        return None;
    }
    let (parts, root_parts) = (normalize(dir)?, normalize(root)?);
    parts
        .starts_with(&root_parts)
        .then(|| parts[root_parts.len()..].join("/"))
}

/// A command that starts by changing to an absolute directory (`cd /x/y && make`,
/// `cd '/x y'; ls`): the byte offset where that directory's word ends, and the
/// directory. Such a command does not depend on where the shell was.
pub fn leading_cd(cmd: &str) -> Option<(usize, String)> {
    let start = cmd.len() - cmd.trim_start().len();
    let rest = cmd[start..].strip_prefix("cd")?;
    let word = rest.trim_start_matches([' ', '\t']);
    if word.len() == rest.len() {
        return None;
    }
    let at = cmd.len() - word.len();
    let (dir, len) = match word.chars().next()? {
        quote @ ('\'' | '"') => {
            let close = word[1..].find(quote)?;
            (&word[1..=close], close + 2)
        }
        _ => {
            let len = word
                .find(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|' | ')'))
                .unwrap_or(word.len());
            (&word[..len], len)
        }
    };
    dir.starts_with('/').then(|| (at + len, dir.to_string()))
}

/// `cmd` with every occurrence of the absolute `root` as a whole path prefix replaced
/// by the path to the root from the directory the command runs in, `depth` levels
/// under the root: `.` at the root, `..` one level down. At the root, `cd
/// /home/dev/latefees && rm /home/dev/latefees/tests/x.py` becomes `cd . && rm
/// ./tests/x.py`. Replay runs commands in the work directory (or the recorded
/// shell's directory under it), so this is the same place; left alone, the command
/// would reach for the recording machine's checkout, which on this machine may be a
/// real repository. Everything else in the command is kept verbatim (other absolute
/// paths included).
pub fn rewrite_command(cmd: &str, root: Option<&str>, depth: usize) -> String {
    let Some(root) = root.map(|r| r.trim_end_matches('/')) else {
        return cmd.to_string();
    };
    if root.is_empty() || !root.starts_with('/') {
        return cmd.to_string();
    }
    let up = if depth == 0 {
        ".".to_string()
    } else {
        vec![".."; depth].join("/")
    };
    let is_path_char = |c: char| c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '/');
    let mut out = String::with_capacity(cmd.len());
    let mut rest = cmd;
    while let Some(at) = rest.find(root) {
        let before = rest[..at].chars().next_back();
        let after = rest[at + root.len()..].chars().next();
        // A whole prefix only: not `/x/home/dev/latefees`, not `/home/dev/latefees2`.
        let whole =
            !before.is_some_and(is_path_char) && after.is_none_or(|c| c == '/' || !is_path_char(c));
        out.push_str(&rest[..at]);
        out.push_str(if whole { &up } else { root });
        rest = &rest[at + root.len()..];
    }
    out.push_str(rest);
    out
}

/// `word` as one `sh` word: unchanged when it is plain, else in single quotes.
pub fn shell_quote(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: Option<&str> = Some("/home/dev/latefees");

    #[test]
    fn absolute_paths_under_the_root_become_relative() {
        assert_eq!(
            relative("/home/dev/latefees/ledger/fees.py", ROOT),
            Ok("ledger/fees.py".into())
        );
        assert_eq!(
            relative("/home/dev/latefees/./a/../b.txt", ROOT),
            Ok("b.txt".into())
        );
        assert_eq!(
            relative("/home/dev/latefees/x", Some("/home/dev/latefees/")),
            Ok("x".into())
        );
    }

    #[test]
    fn relative_paths_stay_relative() {
        assert_eq!(relative("tests/x.py", ROOT), Ok("tests/x.py".into()));
        assert_eq!(relative("./tests/x.py", None), Ok("tests/x.py".into()));
    }

    #[test]
    fn paths_leaving_the_root_are_refused_with_a_reason() {
        for bad in [
            "/home/dev/other/x",
            "/home/dev/latefees2/x",
            "/home/dev/latefees/../x",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "/home/dev/latefees",
            "",
            ".",
        ] {
            assert!(relative(bad, ROOT).is_err(), "{bad} was accepted");
        }
        assert!(relative("/x/y", None).unwrap_err().contains("--root"));
    }

    #[test]
    fn commands_lose_the_root_prefix_and_nothing_else() {
        let r = |c| rewrite_command(c, ROOT, 0);
        assert_eq!(
            r("cd /home/dev/latefees && rm /home/dev/latefees/tests/x.py"),
            "cd . && rm ./tests/x.py"
        );
        assert_eq!(r("ls '/home/dev/latefees'"), "ls '.'");
        assert_eq!(
            r("ls /home/dev/latefees2 /x/home/dev/latefees"),
            "ls /home/dev/latefees2 /x/home/dev/latefees"
        );
        assert_eq!(r("cat /etc/hosts"), "cat /etc/hosts");
        assert_eq!(rewrite_command("cd /a && ls", None, 0), "cd /a && ls");
        assert_eq!(rewrite_command("ls /", Some("/"), 0), "ls /");
    }

    #[test]
    fn from_a_directory_under_the_root_the_root_is_that_many_levels_up() {
        assert_eq!(
            rewrite_command("rm /home/dev/latefees/tests/x.py", ROOT, 1),
            "rm ../tests/x.py"
        );
        assert_eq!(
            rewrite_command("cd /home/dev/latefees && ls", ROOT, 2),
            "cd ../.. && ls"
        );
    }

    #[test]
    fn directories_under_the_root_are_found_lexically() {
        let root = "/home/dev/latefees";
        assert_eq!(within("/home/dev/latefees", root), Some(String::new()));
        assert_eq!(within("/home/dev/latefees/", root), Some(String::new()));
        assert_eq!(
            within("/home/dev/latefees/tests/./unit", root),
            Some("tests/unit".into())
        );
        assert_eq!(within("/home/dev/latefees/../other", root), None);
        assert_eq!(within("/home/dev/latefees2", root), None);
        assert_eq!(within("/tmp", root), None);
        assert_eq!(within("tests", root), None);
    }

    #[test]
    fn a_leading_cd_to_an_absolute_directory_is_found_with_where_it_ends() {
        let cd = |c: &str| leading_cd(c).map(|(end, dir)| (c[..end].to_string(), dir));
        assert_eq!(
            cd("cd /a/b && make"),
            Some(("cd /a/b".into(), "/a/b".into()))
        );
        assert_eq!(
            cd("  cd\t'/a b'; ls"),
            Some(("  cd\t'/a b'".into(), "/a b".into()))
        );
        assert_eq!(cd("cd \"/a\"&&ls"), Some(("cd \"/a\"".into(), "/a".into())));
        assert_eq!(cd("cd /a"), Some(("cd /a".into(), "/a".into())));
        for not in [
            "cd tests && ls",
            "cd",
            "cd ..",
            "cdx /a",
            "ls && cd /a",
            "cd '/a",
        ] {
            assert_eq!(cd(not), None, "{not}");
        }
    }
}
