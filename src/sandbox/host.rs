//! What this machine offers a sandbox, looked up once and asked by every part of it:
//! where a program lies on `PATH` (and whether a shell command can become the program
//! it names: [`exec_form`]), whether bubblewrap is installed and can create its
//! namespaces, and whether it can forbid nested user namespaces. Nothing here starts a
//! sandbox the harness builds; `probe.rs` does that to check one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The program bubblewrap is run as, looked up on `PATH`.
pub const BWRAP: &str = "bwrap";

/// Whether bwrap is installed and can create its namespaces here (nothing about
/// capabilities: see [`check_confined`]). Probed once.
pub fn bwrap_works() -> bool {
    namespaces().is_ok()
}

/// `Err` says why bwrap cannot make a sandbox here at all. Probed once.
pub(super) fn namespaces() -> std::result::Result<(), String> {
    static FOUND: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let Some(bwrap) = find_program(BWRAP, std::env::var_os("PATH").as_deref()) else {
                return Err("bwrap is not installed \
                            (on Debian or Ubuntu: apt-get install bubblewrap)"
                    .into());
            };
            let out = probe(|| {
                Command::new(&bwrap)
                    .args(["--ro-bind", "/", "/", "--unshare-all", "--die-with-parent"])
                    .args(["--new-session", "--", "true"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .output()
            })
            .map_err(|e| format!("'{}' cannot be run: {e}", bwrap.display()))?;
            if !out.status.success() {
                return Err(format!(
                    "bwrap cannot create its namespaces on this machine: {} \
                     (user namespaces may be disabled, e.g. inside a container)",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            Ok(())
        })
        .clone()
}

/// Whether this bwrap takes `--unshare-user --disable-userns` (0.8 and later, where
/// user namespaces work): a sandbox then cannot make a nested user namespace, in
/// which it would hold every capability again. Probed once.
pub fn disables_userns() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        probe(|| {
            Command::new(BWRAP)
                .args(["--ro-bind", "/", "/", "--unshare-all", "--unshare-user"])
                .args(["--disable-userns", "--cap-drop", "ALL", "--", "true"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .output()
        })
        .is_ok_and(|out| out.status.success())
    })
}

/// How many times a probe of bwrap is run before its failure is believed.
const PROBE_TRIES: u32 = 3;

/// Runs a probe of bwrap until it succeeds, at most [`PROBE_TRIES`] times: each binds
/// the host's whole root, and a directory another run removes meanwhile (a trial's
/// scratch under /dev/shm) fails the bind of that moment, not the machine's sandbox.
/// What the last try gave otherwise.
fn probe(
    run: impl Fn() -> std::io::Result<std::process::Output>,
) -> std::io::Result<std::process::Output> {
    let mut out = run();
    for _ in 1..PROBE_TRIES {
        if !matches!(&out, Ok(o) if !o.status.success()) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        out = run();
    }
    out
}

/// Resolves a program name as `execvp` would: a name with a `/` is taken as it is, a
/// bare name is looked up in `path` (`$PATH`). `None` when there is no executable file.
pub fn find_program(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    if program.is_empty() {
        return None;
    }
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

/// Words a POSIX shell treats as builtins or keywords, which `exec` would not find,
/// or would run as a program of the same name instead.
const SHELL_WORDS: &[&str] = &[
    ".", ":", "[", "alias", "bg", "break", "cd", "chdir", "command", "continue", "echo", "eval",
    "exec", "exit", "export", "false", "fc", "fg", "getopts", "hash", "jobs", "kill", "local",
    "printf", "pwd", "read", "readonly", "return", "set", "shift", "test", "times", "trap", "true",
    "type", "ulimit", "umask", "unalias", "unset", "wait", "case", "do", "done", "elif", "else",
    "esac", "fi", "for", "if", "in", "then", "until", "while",
];

/// `script` with `exec` before it when it is one simple command, so that `sh -c`
/// becomes the command instead of starting it: dash forks even the last command of
/// `sh -c`, so a check such as `sh tests/test_x.sh` cost two shells. Only words of
/// plain characters separated by spaces (no quoting, expansion, redirection,
/// separator or glob), a first word with no `=` or `/` that names no shell builtin or
/// keyword and a program on `path` (so that a missing program reads as before); any
/// other script is left as it is. The exit status, output and environment of the
/// command are the same either way.
pub fn exec_form<'a>(script: &'a str, path: Option<&std::ffi::OsStr>) -> std::borrow::Cow<'a, str> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./,:+-@%=".contains(c);
    let mut words = script.split(' ').filter(|w| !w.is_empty());
    let Some(first) = words.next() else {
        return std::borrow::Cow::Borrowed(script);
    };
    let simple = script.chars().all(|c| c == ' ' || plain(c))
        && !first.contains(['=', '/'])
        && !SHELL_WORDS.contains(&first)
        && find_program(first, path).is_some();
    if simple {
        std::borrow::Cow::Owned(format!("exec {script}"))
    } else {
        std::borrow::Cow::Borrowed(script)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_one_simple_command_of_a_program_on_path_is_execed() {
        let path = std::env::var_os("PATH");
        let form = |script: &str| exec_form(script, path.as_deref()).into_owned();
        assert_eq!(form("sh tests/test_add.sh"), "exec sh tests/test_add.sh");
        assert_eq!(form("sh  tests/a.sh x=1 -q"), "exec sh  tests/a.sh x=1 -q");
        for kept in [
            "sh a.sh && sh b.sh",
            "sh a.sh; sh b.sh",
            "sh a.sh | cat",
            "sh a.sh > out",
            "sh 'a b.sh'",
            "sh \"a.sh\"",
            "sh $HOME/a.sh",
            "sh ~/a.sh",
            "sh *.sh",
            "sh a.sh\nsh b.sh",
            "\tsh a.sh",
            "X=1 sh a.sh",
            "./run.sh",
            "cd tests",
            "test -f a",
            "true",
            "exec sh a.sh",
            "loopbench-no-such-program a",
            "",
            "   ",
        ] {
            assert_eq!(form(kept), kept, "{kept:?}");
        }
    }

    #[test]
    fn an_execed_command_exits_and_prints_as_under_a_shell_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("t.sh"), "echo out; echo err >&2; exit 3\n").unwrap();
        let path = std::env::var_os("PATH");
        let run = |script: &str| {
            Command::new("sh")
                .args(["-c", script])
                .current_dir(dir.path())
                .output()
                .unwrap()
        };
        let plain = run("sh t.sh");
        let execed = run(&exec_form("sh t.sh", path.as_deref()));
        assert_eq!(plain.status.code(), Some(3));
        assert_eq!(execed.status.code(), plain.status.code());
        assert_eq!(execed.stdout, plain.stdout);
        assert_eq!(execed.stderr, plain.stderr);
    }

    #[test]
    fn programs_are_found_on_the_path_or_taken_as_given() {
        let sh = find_program("sh", std::env::var_os("PATH").as_deref()).unwrap();
        assert!(sh.ends_with("sh"));
        assert_eq!(
            find_program("no-such-agent-xyz", Some("/usr/bin".as_ref())),
            None
        );
        assert_eq!(find_program("/nonexistent/agent", None), None);
        assert_eq!(find_program("sh", None), None);
    }
}
