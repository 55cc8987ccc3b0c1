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
/// plain characters and single-quoted strings separated by spaces (no other quoting,
/// no expansion, redirection, separator or glob outside single quotes), a first word
/// with no `=` or `/` that names no shell builtin or keyword and a program on `path`
/// (so that a missing program reads as before); any other script is left as it is.
/// The exit status, output and environment of the command are the same either way.
pub fn exec_form<'a>(script: &'a str, path: Option<&std::ffi::OsStr>) -> std::borrow::Cow<'a, str> {
    match simple_command(script, path) {
        Some(command) => std::borrow::Cow::Owned(command.exec_form()),
        None => std::borrow::Cow::Borrowed(script),
    }
}

/// One simple command as [`exec_form`] takes it: the program `sh` would find on `path`
/// and the command's words, the first (the name as written) its `argv[0]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand<'a> {
    /// Where the first word leads on `path`.
    pub program: PathBuf,
    /// The words of the command as the shell passes them: split on spaces outside
    /// single quotes, the quotes taken away.
    pub words: Vec<String>,
    /// The command as written.
    script: &'a str,
}

impl SimpleCommand<'_> {
    /// The script with `exec` before it (see [`exec_form`]).
    pub fn exec_form(&self) -> String {
        format!("exec {}", self.script)
    }

    /// Whether the kernel starts the program as `sh -c` would (see [`direct_command`]):
    /// found in an absolute directory, a binary or a `#!` script.
    pub fn starts_without_shell(&self) -> bool {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        if !self.program.is_absolute() {
            return false;
        }
        let mut head = [0u8; 4];
        // Non-blocking: what stands there now may no longer be the file found.
        let Ok(mut file) = std::fs::File::options()
            .read(true)
            .custom_flags(nix::libc::O_NONBLOCK)
            .open(&self.program)
        else {
            return false;
        };
        file.metadata().is_ok_and(|m| m.is_file())
            && file.read_exact(&mut head).is_ok()
            && (head == *b"\x7fELF" || head.starts_with(b"#!"))
    }
}

/// `script` as one simple command (see [`exec_form`]), else `None`.
pub fn simple_command<'a>(
    script: &'a str,
    path: Option<&std::ffi::OsStr>,
) -> Option<SimpleCommand<'a>> {
    let words = plain_words(script)?;
    let first = words.first()?.as_str();
    if first.contains(['=', '/']) || SHELL_WORDS.contains(&first) {
        return None;
    }
    let program = find_program(first, path)?;
    Some(SimpleCommand {
        program,
        words,
        script,
    })
}

/// The words of `script` as `sh` splits it, when it holds only plain characters and
/// single-quoted strings (where every character but `'` stands for itself) separated
/// by spaces; `None` for anything else, an unclosed quote included.
fn plain_words(script: &str) -> Option<Vec<String>> {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_./,:+-@%=".contains(c);
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quoted = false;
    for c in script.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                // `''` is a word of its own, though empty.
                word.get_or_insert_default();
            }
            _ if quoted => word.get_or_insert_default().push(c),
            ' ' => words.extend(word.take()),
            c if plain(c) => word.get_or_insert_default().push(c),
            _ => return None,
        }
    }
    if quoted {
        return None;
    }
    words.extend(word);
    Some(words)
}

/// `script` as a command the kernel can start without a shell in between, with the
/// same effect as `sh -c script`: a simple command ([`simple_command`]) found in an
/// absolute directory of `path` (a relative one the shell reads from the command's
/// directory), whose program is a binary or starts with `#!` (any other file `sh`
/// runs itself as a script when the kernel refuses it, which starting it directly
/// would not).
pub fn direct_command<'a>(
    script: &'a str,
    path: Option<&std::ffi::OsStr>,
) -> Option<SimpleCommand<'a>> {
    simple_command(script, path).filter(SimpleCommand::starts_without_shell)
}

/// The `PWD` a POSIX shell started in `cwd` exports to what it runs: the one it was
/// given when that names `cwd`, else `cwd` with its links resolved (what the shell's
/// `getcwd` gives). A program started without a shell gets it from here.
pub fn shell_pwd(cwd: &Path, given: Option<&std::ffi::OsStr>) -> std::ffi::OsString {
    use std::os::unix::fs::MetadataExt;
    let same = |a: &Path, b: &Path| match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    };
    if let Some(given) = given.map(Path::new)
        && given.is_absolute()
        && same(given, cwd)
    {
        return given.as_os_str().to_owned();
    }
    std::fs::canonicalize(cwd)
        .unwrap_or_else(|_| cwd.to_path_buf())
        .into_os_string()
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
        assert_eq!(form("sh 'a b.sh' '$x;*'"), "exec sh 'a b.sh' '$x;*'");
        for kept in [
            "sh a.sh && sh b.sh",
            "sh a.sh; sh b.sh",
            "sh a.sh | cat",
            "sh a.sh > out",
            "sh 'a b.sh",
            "sh \"a.sh\"",
            "sh a.sh 'x'\\''y'",
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
    fn single_quoted_words_are_split_and_unquoted_as_sh_does() {
        let words = |script: &str| plain_words(script);
        assert_eq!(
            words("git commit -q -m 'session 7: F7'").unwrap(),
            ["git", "commit", "-q", "-m", "session 7: F7"]
        );
        assert_eq!(words("a '' b").unwrap(), ["a", "", "b"]);
        assert_eq!(words("a 'x''y' x'y z'w").unwrap(), ["a", "xy", "xy zw"]);
        assert_eq!(words("a '$HOME; *\n\\'").unwrap(), ["a", "$HOME; *\n\\"]);
        for not_plain in ["a 'b", "a \"b\"", "a \\'b'", "a b'", "a\tb", "a $b"] {
            assert_eq!(words(not_plain), None, "{not_plain:?}");
        }
        // What sh passes, word for word.
        let script = "printf '[%s]' a '' 'b c' x'y z'w '$HOME;*' ''''";
        let shell = Command::new("sh").args(["-c", script]).output().unwrap();
        let words = words(script).unwrap();
        let direct = Command::new(&words[0]).args(&words[1..]).output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&direct.stdout),
            "[a][][b c][xy zw][$HOME;*][]"
        );
        assert_eq!(direct.stdout, shell.stdout);
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
    fn only_a_simple_command_of_a_program_the_kernel_starts_is_started_directly() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let write = |name: &str, text: &str| {
            use std::os::unix::fs::PermissionsExt;
            let file = bin.join(name);
            std::fs::write(&file, text).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        write("with-shebang", "#!/bin/sh\necho hi\n");
        // The kernel refuses it (ENOEXEC); `sh` runs it as a script of its own.
        write("without-shebang", "echo hi\n");
        let path = std::env::join_paths([bin.clone(), "/usr/bin".into(), "/bin".into()]).unwrap();
        let direct = |script: &'static str| direct_command(script, Some(&path));
        let found = direct("with-shebang a b").unwrap();
        assert_eq!(found.program, bin.join("with-shebang"));
        assert_eq!(found.words, ["with-shebang", "a", "b"]);
        assert!(direct("sh tests/a.sh").unwrap().program.is_absolute());
        assert_eq!(direct("without-shebang"), None);
        assert_eq!(direct("with-shebang > out"), None);
        assert_eq!(direct("echo hi"), None);
        // A relative directory of PATH is the command's to resolve, not the harness's.
        let here = std::env::current_dir().unwrap();
        let up = "../".repeat(here.components().count() - 1);
        let relative = Path::new(&up).join(bin.strip_prefix("/").unwrap());
        assert!(simple_command("with-shebang", Some(relative.as_os_str())).is_some());
        assert_eq!(
            direct_command("with-shebang", Some(relative.as_os_str())),
            None
        );
    }

    #[test]
    fn the_pwd_given_is_kept_where_it_names_the_directory_else_it_is_the_real_path() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let canonical = std::fs::canonicalize(&real).unwrap();
        assert_eq!(shell_pwd(&link, Some(link.as_os_str())), link.as_os_str());
        assert_eq!(shell_pwd(&link, None), canonical.as_os_str());
        assert_eq!(shell_pwd(&link, Some("/".as_ref())), canonical.as_os_str());
        assert_eq!(
            shell_pwd(&link, Some("link".as_ref())),
            canonical.as_os_str()
        );
        // Each as dash exports it.
        for given in [Some(link.as_os_str()), None, Some("/".as_ref())] {
            let mut sh = Command::new("sh");
            sh.args(["-c", "exec env"]).current_dir(&link).env_clear();
            if let Some(given) = given {
                sh.env("PWD", given);
            }
            let out = String::from_utf8(sh.output().unwrap().stdout).unwrap();
            let exported = out.lines().find_map(|l| l.strip_prefix("PWD=")).unwrap();
            assert_eq!(
                std::ffi::OsStr::new(exported),
                shell_pwd(&link, given),
                "{given:?}"
            );
        }
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
