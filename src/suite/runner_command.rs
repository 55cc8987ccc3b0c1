//! How a verify command starts a test runner, read from its words the way the shell
//! and the programs on the way would: variable assignments, wrappers that run the
//! command after their own options (`env`, `timeout -s KILL 60`, `nice -n 5`, `uv run`,
//! `poetry run`, `coverage run -m`), a Python interpreter's own options (`-W error`,
//! `-X dev`, `-munittest`), and the script of `sh -c '…'` / `bash -lc '…'`, read as
//! commands of its own. Also the places a command puts on Python's import path
//! (`PYTHONPATH=src`, `cd app &&`), where a module of the tree can stand in for the
//! runner or the standard library. The runners it knows are the words of the
//! `verify_runner` setting ([`VerifyRunner`]).

use super::named_tests::simple_commands;
use super::setting::setting;

setting! {
    /// `verify_runner` of a task or a feature: whose summary a pass of the verify
    /// command needs besides exit status 0.
    pub enum VerifyRunner ("verify_runner") {
        /// `python3 -m unittest`: the "Ran N tests" line and then "OK" on stderr.
        Unittest = "unittest",
        /// pytest: its summary line ("N passed in 0.1s") on stdout.
        Pytest = "pytest",
        /// The exit status alone.
        Exit = "exit",
    }
}

/// One word of a command: its text with quotes removed, and whether any part of it was
/// quoted.
pub(super) type Word = (String, bool);

/// How deep `sh -c` scripts are read inside one another.
pub(super) const MAX_SHELL_DEPTH: u8 = 4;

/// The simple commands of `command`, with the script of every `sh -c` / `bash -c`
/// (under wrappers too) replaced by its own simple commands.
pub(super) fn expanded_commands(command: &str) -> Vec<Vec<Word>> {
    expand(command, 0)
}

fn expand(command: &str, depth: u8) -> Vec<Vec<Word>> {
    let mut out = Vec::new();
    for words in simple_commands(command) {
        match start(&words) {
            Start::Shell(script, _) if depth < MAX_SHELL_DEPTH => {
                out.extend(expand(&script, depth + 1));
            }
            _ => out.push(words),
        }
    }
    out
}

/// The runner one simple command runs and the words after it (its arguments), if it
/// runs a known one.
pub(super) fn runner_of(words: &[Word]) -> Option<(VerifyRunner, &[Word])> {
    match start(words) {
        Start::Runner(runner, at, _) => Some((runner, &words[at..])),
        Start::Shell(..) | Start::Other => None,
    }
}

/// What one simple command starts, once assignments and wrappers are passed.
pub(super) enum Start {
    /// A known runner; its arguments start at this index; the words that start it.
    Runner(VerifyRunner, usize, Head),
    /// A shell given a script with `-c`, and the index of the script's word.
    Shell(String, usize),
    /// Anything else, or a command the harness cannot read.
    Other,
}

/// The words of a simple command that start its runner (`-m unittest`, `-munittest`,
/// `--module=pytest`, a `pytest` program), and what stands before an entry point put
/// in their place (`python3 -Bm unittest` → `python3 -B ENTRY unittest`; a `pytest`
/// program → `python3 ENTRY pytest`, `python` behind `uv run` and its kind).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Head {
    /// The words, by index.
    pub(super) words: std::ops::Range<usize>,
    /// The words that go before the entry point.
    pub(super) before: Vec<String>,
}

/// The base name of a program word (`/usr/bin/python3.12` → `python3.12`).
fn base(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Whether `word` is a variable assignment (`NAME=value`).
fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && !name.starts_with('-')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Whether a program name is a Python interpreter (`python`, `python3`, `python3.12`).
fn is_python(name: &str) -> bool {
    name.strip_prefix("python")
        .is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// Index of the first word at or after `i` that is not an option of a wrapper whose
/// options taking a value (as a separate word) are `valued`; `--` ends the options.
fn skip_options(words: &[Word], mut i: usize, valued: &[&str]) -> usize {
    while let Some((word, _)) = words.get(i) {
        if word == "--" {
            return i + 1;
        }
        if !word.starts_with('-') || word == "-" {
            break;
        }
        i += if valued.contains(&word.as_str()) {
            2
        } else {
            1
        };
    }
    i
}

/// Options of `uv run` whose value is the next word.
const UV_RUN_VALUED: &[&str] = &[
    "--with",
    "--with-editable",
    "--with-requirements",
    "--python",
    "-p",
    "--project",
    "--directory",
    "--extra",
    "--group",
    "--only-group",
    "--no-group",
    "--env-file",
    "--index",
    "--default-index",
    "--index-url",
    "-i",
    "--extra-index-url",
    "--find-links",
    "-f",
    "--package",
    "--cache-dir",
    "--config-file",
    "--color",
    "--index-strategy",
    "--keyring-provider",
    "--resolution",
    "--prerelease",
    "--exclude-newer",
    "--link-mode",
    "--refresh-package",
    "--reinstall-package",
    "--upgrade-package",
    "-P",
    "--no-build-package",
    "--no-binary-package",
    "--config-setting",
    "-C",
    "--python-platform",
    "--allow-insecure-host",
];

/// Options of `coverage run` whose value is the next word.
const COVERAGE_RUN_VALUED: &[&str] = &[
    "--rcfile",
    "--source",
    "--include",
    "--omit",
    "--data-file",
    "--concurrency",
    "--context",
    "--debug",
];

pub(super) fn start(words: &[Word]) -> Start {
    let mut i = 0;
    // Behind `uv run` and its kind, `python` is the environment's interpreter.
    let mut behind_run = false;
    loop {
        let Some((word, quoted)) = words.get(i) else {
            return Start::Other;
        };
        if is_assignment(word) {
            i += 1;
            continue;
        }
        // A quoted program name may come from anywhere: not read.
        if *quoted {
            return Start::Other;
        }
        let next = words.get(i + 1).map(|(w, _)| w.as_str());
        let name = base(word);
        i = match name {
            // `env -S` splits a string of its own, `env -C` changes directory: not
            // read.
            "env" => {
                let at = skip_options(words, i + 1, &["-u", "--unset"]);
                if words[i + 1..at.min(words.len())].iter().any(|(w, _)| {
                    w.starts_with("-S")
                        || w.starts_with("--split-string")
                        || w.starts_with("-C")
                        || w.starts_with("--chdir")
                }) {
                    return Start::Other;
                }
                at
            }
            // Its duration comes after its options.
            "timeout" => skip_options(words, i + 1, &["-s", "--signal", "-k", "--kill-after"]) + 1,
            "nice" => skip_options(words, i + 1, &["-n", "--adjustment"]),
            "ionice" => skip_options(words, i + 1, &["-c", "-n", "--class", "--classdata"]),
            "stdbuf" => skip_options(
                words,
                i + 1,
                &["-i", "-o", "-e", "--input", "--output", "--error"],
            ),
            "exec" => skip_options(words, i + 1, &["-a"]),
            "nohup" | "command" | "time" => skip_options(words, i + 1, &[]),
            "uv" if next == Some("run") => {
                behind_run = true;
                let at = skip_uv_run(words, i + 2);
                match at {
                    Ok(at) => at,
                    Err(found) => return found,
                }
            }
            "poetry" | "pipenv" | "pdm" | "hatch" | "rye" if next == Some("run") => {
                behind_run = true;
                skip_options(words, i + 2, &[])
            }
            "coverage" if next == Some("run") => return coverage_run(words, i + 2),
            "pytest" | "py.test" => {
                let head = Head {
                    words: i..i + 1,
                    before: vec![if behind_run { "python" } else { "python3" }.into()],
                };
                return Start::Runner(VerifyRunner::Pytest, i + 1, head);
            }
            "sh" | "bash" | "dash" | "zsh" | "ksh" => return shell(words, i + 1),
            _ if is_python(name) => return python(words, i + 1),
            _ => return Start::Other,
        };
    }
}

/// The options of `uv run` from `i`: `Ok` with the index of the command it runs, or
/// `Err` with what `-m MODULE` runs.
fn skip_uv_run(words: &[Word], mut i: usize) -> Result<usize, Start> {
    while let Some((word, _)) = words.get(i) {
        match word.as_str() {
            "--" => return Ok(i + 1),
            "-m" | "--module" => return Err(module(words, i + 1, Vec::new())),
            w if w.starts_with("--module=") => {
                let head = Head {
                    words: i..i + 1,
                    before: Vec::new(),
                };
                return Err(module_named(&w["--module=".len()..], words, head));
            }
            w if !w.starts_with('-') => return Ok(i),
            w => i += if UV_RUN_VALUED.contains(&w) { 2 } else { 1 },
        }
    }
    Ok(i)
}

/// `coverage run [options] -m MODULE …` (a program file instead of `-m` is no runner).
fn coverage_run(words: &[Word], i: usize) -> Start {
    let at = skip_options(words, i, COVERAGE_RUN_VALUED);
    // `-m` is an option, so it ends the loop above only when it is a value; look at
    // the words skipped for it.
    let mut j = i;
    while j < at.min(words.len()) {
        let word = words[j].0.as_str();
        if word == "-m" || word == "--module" {
            return module(words, j + 1, Vec::new());
        }
        j += if COVERAGE_RUN_VALUED.contains(&word) {
            2
        } else {
            1
        };
    }
    Start::Other
}

/// A Python interpreter's options from `i` (`-W error`, `-X dev`, `-Bu`, `-munittest`),
/// up to `-m MODULE` (the runner, when it is one), `-c` (no runner) or a script.
fn python(words: &[Word], mut i: usize) -> Start {
    while let Some((word, _)) = words.get(i) {
        if !word.starts_with('-') || word == "-" || word == "--" {
            return Start::Other;
        }
        if let Some(long) = word.strip_prefix("--") {
            i += if long == "check-hash-based-pycs" {
                2
            } else {
                1
            };
            continue;
        }
        // A cluster of one-letter options; the first that takes a value takes the
        // rest of the word, or the next word.
        let letters = &word[1..];
        let mut takes_next = false;
        for (at, letter) in letters.char_indices() {
            let rest = &letters[at + letter.len_utf8()..];
            match letter {
                'm' if rest.is_empty() => return module(words, i + 1, cluster(&letters[..at])),
                'm' => {
                    let head = Head {
                        words: i..i + 1,
                        before: cluster(&letters[..at]),
                    };
                    return module_named(rest, words, head);
                }
                'c' => return Start::Other,
                'W' | 'X' => {
                    takes_next = rest.is_empty();
                    break;
                }
                _ => {}
            }
        }
        i += if takes_next { 2 } else { 1 };
    }
    Start::Other
}

/// The options of a cluster before its `m` (`B` of `-Bm`), as a word of their own.
fn cluster(letters: &str) -> Vec<String> {
    if letters.is_empty() {
        Vec::new()
    } else {
        vec![format!("-{letters}")]
    }
}

/// What `-m MODULE` runs, MODULE being the word at `i` (after the word of `-m`, which
/// the entry point takes the place of with `before` before it).
fn module(words: &[Word], i: usize, before: Vec<String>) -> Start {
    match words.get(i) {
        Some((name, false)) => {
            let head = Head {
                words: i - 1..i + 1,
                before,
            };
            module_named(name, words, head)
        }
        _ => Start::Other,
    }
}

/// What `-m name` (the words of `head`) runs, its arguments following them.
fn module_named(name: &str, words: &[Word], head: Head) -> Start {
    let args = head.words.end;
    match name {
        "unittest" => Start::Runner(VerifyRunner::Unittest, args, head),
        "pytest" => Start::Runner(VerifyRunner::Pytest, args, head),
        "coverage" if words.get(args).is_some_and(|(w, _)| w == "run") => {
            coverage_run(words, args + 1)
        }
        _ => Start::Other,
    }
}

/// A shell's options from `i`: with `-c` (alone or in a cluster such as `-ec`, `-lc`),
/// the script is the first word after the options.
fn shell(words: &[Word], mut i: usize) -> Start {
    let mut script = false;
    while let Some((word, _)) = words.get(i) {
        match word.as_str() {
            "--" => {
                i += 1;
                break;
            }
            "-o" | "+o" | "--rcfile" | "--init-file" => i += 2,
            w if w.starts_with("--") => i += 1,
            w if (w.starts_with('-') || w.starts_with('+')) && w.len() > 1 => {
                script |= w.starts_with('-') && w.contains('c');
                i += 1;
            }
            _ => break,
        }
    }
    match (script, words.get(i)) {
        (true, Some((text, _))) => Start::Shell(text.clone(), i),
        _ => Start::Other,
    }
}

/// When `command` runs no known runner the harness can see but mentions `unittest` or
/// `pytest`, the simple commands that mention them, as their words joined: a pass of it
/// is judged by the exit status alone unless the task names the runner
/// (`verify_runner`). Empty when a run is seen (`pip install pytest && pytest` runs it).
pub(super) fn unrecognized_runs(command: &str) -> Vec<String> {
    let commands = expanded_commands(command);
    if commands.iter().any(|words| runner_of(words).is_some()) {
        return Vec::new();
    }
    commands
        .into_iter()
        .filter(|words| {
            words
                .iter()
                .any(|(w, _)| w.contains("unittest") || w.contains("pytest"))
        })
        .map(|words| {
            words
                .iter()
                .map(|(w, _)| w.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// The directories, relative to the work directory (`""` for itself), that `command`
/// puts on Python's import path besides its own directory: every relative entry of a
/// `PYTHONPATH` it sets (`PYTHONPATH=src`, `export PYTHONPATH=src:lib`, `env
/// PYTHONPATH=…`, `$PWD/src`), and every directory it moves to with `cd`, from which
/// `python3 -m` imports first. Entries that are absolute, go up (`..`) or hold other
/// expansions are left out (they are no part of the tree).
pub fn import_roots(command: &str) -> Vec<String> {
    let mut roots = Vec::new();
    for words in expanded_commands(command) {
        let first = words.first().map(|(w, _)| base(w));
        if matches!(first, Some("cd" | "pushd")) {
            if let Some((dir, _)) = words.get(1) {
                roots.extend(relative_dir(dir));
            }
            continue;
        }
        for (word, _) in &words {
            let Some(value) = word.strip_prefix("PYTHONPATH=") else {
                continue;
            };
            roots.extend(value.split(':').filter_map(relative_dir));
        }
    }
    roots.sort();
    roots.dedup();
    roots
}

/// `dir` as a `/`-separated directory relative to the work directory (`""` for the
/// work directory itself), or `None` when it is not certainly one.
pub(super) fn relative_dir(dir: &str) -> Option<String> {
    let mut path = dir;
    for prefix in ["$PWD", "${PWD}", "$(pwd)"] {
        if let Some(rest) = path.strip_prefix(prefix) {
            path = rest.strip_prefix('/').unwrap_or(rest);
        }
    }
    if path.starts_with('/')
        || path
            .chars()
            .any(|c| c.is_whitespace() || "$*?[]{}~`\\".contains(c))
    {
        return None;
    }
    let mut parts = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => return None,
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runner(command: &str) -> Option<(VerifyRunner, Vec<String>)> {
        let commands = expanded_commands(command);
        commands.iter().find_map(|words| {
            runner_of(words).map(|(r, args)| (r, args.iter().map(|(w, _)| w.clone()).collect()))
        })
    }

    #[test]
    fn interpreter_options_and_wrappers_are_read_past() {
        use VerifyRunner::{Pytest, Unittest};
        for (command, want, args) in [
            ("python3 -W error -m unittest tests.a", Unittest, "tests.a"),
            ("python3 -X dev -m unittest tests.a", Unittest, "tests.a"),
            (
                "python3 -Werror -Xdev -B -munittest tests.a",
                Unittest,
                "tests.a",
            ),
            ("python3 -bW ignore -m pytest -q", Pytest, "-q"),
            (
                "python3 --check-hash-based-pycs never -m pytest",
                Pytest,
                "",
            ),
            (
                "timeout -s KILL 60 python3 -m unittest tests.a",
                Unittest,
                "tests.a",
            ),
            (
                "timeout --signal=KILL -k 5 60 pytest tests/",
                Pytest,
                "tests/",
            ),
            (
                "env -i -u HOME PATH=/usr/bin python3 -m unittest",
                Unittest,
                "",
            ),
            ("nice -n 5 nohup pytest x", Pytest, "x"),
            ("uv run pytest tests/", Pytest, "tests/"),
            (
                "uv run --with pytest-xdist --frozen -m pytest -n 4",
                Pytest,
                "-n 4",
            ),
            ("uv run python -m unittest tests.a", Unittest, "tests.a"),
            ("poetry run pytest", Pytest, ""),
            ("coverage run -m unittest tests.a", Unittest, "tests.a"),
            (
                "coverage run --source ledger --branch -m pytest -q",
                Pytest,
                "-q",
            ),
            (
                "python3 -m coverage run -m unittest discover",
                Unittest,
                "discover",
            ),
            ("bash -c 'python3 -m unittest tests.a'", Unittest, "tests.a"),
            ("sh -ec \"cd . && pytest -q\"", Pytest, "-q"),
            (
                "bash -o pipefail -lc 'timeout 9 python3 -m pytest'",
                Pytest,
                "",
            ),
        ] {
            let found = runner(command);
            let want_args: Vec<String> = args.split_whitespace().map(str::to_string).collect();
            assert_eq!(found, Some((want, want_args)), "{command}");
        }
    }

    #[test]
    fn commands_that_run_no_known_runner_are_told_apart() {
        for command in [
            "python3 -c 'import unittest; unittest.main()'",
            "python3 tests/run.py",
            "env -S 'python3 -m unittest' x",
            "bash tests/run.sh",
            "coverage run tests/run.py",
            "echo pytest",
        ] {
            assert_eq!(runner(command), None, "{command}");
        }
        assert_eq!(
            unrecognized_runs("python3 -c 'import unittest; unittest.main()'"),
            ["python3 -c import unittest; unittest.main()"]
        );
        assert!(unrecognized_runs("python3 -m unittest tests.a && make").is_empty());
        assert!(unrecognized_runs("pip install pytest && pytest tests/").is_empty());
        assert_eq!(unrecognized_runs("./check.sh && echo pytest").len(), 1);
    }

    #[test]
    fn pythonpath_entries_and_cd_directories_are_import_roots() {
        assert_eq!(
            import_roots("PYTHONPATH=src:./lib/:/abs:../up:$HOME/x python3 -m unittest"),
            ["lib", "src"]
        );
        assert_eq!(
            import_roots("export PYTHONPATH=$PWD/pkg; cd app && env PYTHONPATH=. pytest"),
            ["", "app", "pkg"]
        );
        assert_eq!(
            import_roots("bash -c 'PYTHONPATH=src python3 -m unittest'"),
            ["src"]
        );
        assert!(import_roots("python3 -m unittest tests.a").is_empty());
    }
}
