//! Paths and commands of a foreign transcript made relative to the work directory.
//!
//! A transcript names files by the absolute paths of the machine it was recorded on
//! (`/home/dev/latefees/ledger/fees.py`). The root is the session's `cwd` (or
//! `--root`): a path under it becomes relative (`ledger/fees.py`), a relative path stays
//! relative, and anything that would leave the root is refused with a reason, which
//! the importer records as a `skip` line. Paths are compared lexically (`.` and `..`
//! resolved as text), never against the importing machine's file system: the files
//! the transcript names need not exist here.

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

/// `cmd` with every occurrence of the absolute `root` as a whole path prefix replaced
/// by `.`: `cd /home/dev/latefees && rm /home/dev/latefees/tests/x.py` becomes
/// `cd . && rm ./tests/x.py`. Replay runs commands in the work directory, so this is
/// the same place; left alone, the command would reach for the recording machine's
/// checkout, which on this machine may be a real repository. Everything else in the
/// command is kept verbatim (other absolute paths included).
pub fn rewrite_command(cmd: &str, root: Option<&str>) -> String {
    let Some(root) = root.map(|r| r.trim_end_matches('/')) else {
        return cmd.to_string();
    };
    if root.is_empty() || !root.starts_with('/') {
        return cmd.to_string();
    }
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
        out.push_str(if whole { "." } else { root });
        rest = &rest[at + root.len()..];
    }
    out.push_str(rest);
    out
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
        let r = |c| rewrite_command(c, ROOT);
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
        assert_eq!(rewrite_command("cd /a && ls", None), "cd /a && ls");
        assert_eq!(rewrite_command("ls /", Some("/")), "ls /");
    }
}
