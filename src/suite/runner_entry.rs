//! A verify command with each run of a known runner started through the harness's
//! entry point instead of the runner's own: `python3 -m unittest ARGS` becomes
//! `python3 ENTRY unittest ARGS` (the interpreter and its options kept), `uv run -m
//! pytest` becomes `uv run ENTRY pytest`, and a `pytest` program `python3 ENTRY pytest`
//! (`python` behind `uv run`, `poetry run` and their kind), inside the scripts of
//! `sh -c` too. Only the words that start the runner are replaced; the rest of the
//! command's text stays byte for byte.

use super::named_tests::spanned_commands;
use super::runner_command::{MAX_SHELL_DEPTH, Start, VerifyRunner, Word, start};
use super::verify_runner::RunnerCheck;

/// `command` with every run of a runner whose summary `check` needs started through
/// the entry point at `entry` (a path, quoted here); `None` when fewer runs of a
/// runner are seen than `check` needs (the runner is started by a script, or in a way
/// the harness does not read), so that the check cannot go through the entry point.
pub fn through_entry(command: &str, check: &RunnerCheck, entry: &str) -> Option<String> {
    let entry = quote(entry);
    let (text, unittest, pytest) = rewrite(command, check, &entry, 0);
    (unittest >= check.unittest && pytest >= check.pytest).then_some(text)
}

/// `text` as one shell word.
fn quote(text: &str) -> String {
    String::from_utf8_lossy(&crate::sandbox::shell_quote(text.as_bytes())).into_owned()
}

/// `command` rewritten, and the runs of unittest and of pytest put behind the entry.
fn rewrite(command: &str, check: &RunnerCheck, entry: &str, depth: u8) -> (String, u32, u32) {
    let mut out = String::with_capacity(command.len() + 64);
    let mut copied = 0;
    let (mut unittest, mut pytest) = (0u32, 0u32);
    for words in spanned_commands(command) {
        let plain: Vec<Word> = words.iter().map(|(w, _)| w.clone()).collect();
        let (span, text) = match start(&plain) {
            Start::Runner(runner, _, head) => {
                let name = match runner {
                    VerifyRunner::Unittest if check.unittest > 0 => {
                        unittest = unittest.saturating_add(1);
                        "unittest"
                    }
                    VerifyRunner::Pytest if check.pytest > 0 => {
                        pytest = pytest.saturating_add(1);
                        "pytest"
                    }
                    _ => continue,
                };
                let span = words[head.words.start].1.start..words[head.words.end - 1].1.end;
                let mut parts = head.before;
                parts.extend([entry.to_string(), name.to_string()]);
                (span, parts.join(" "))
            }
            Start::Shell(script, at) if depth < MAX_SHELL_DEPTH => {
                let (inner, u, p) = rewrite(&script, check, entry, depth + 1);
                if u == 0 && p == 0 {
                    continue;
                }
                unittest = unittest.saturating_add(u);
                pytest = pytest.saturating_add(p);
                (words[at].1.clone(), quote(&inner))
            }
            _ => continue,
        };
        out.push_str(&command[copied..span.start]);
        out.push_str(&text);
        copied = span.end;
    }
    out.push_str(&command[copied..]);
    (out, unittest, pytest)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entered(command: &str) -> Option<String> {
        let glob = globset::Glob::new("tests/**/*.py")
            .unwrap()
            .compile_matcher();
        let check = RunnerCheck::of(command, None, &glob);
        through_entry(command, &check, "/e/entry.py")
    }

    #[test]
    fn the_words_that_start_a_runner_give_way_to_the_entry_point_and_nothing_else_changes() {
        for (command, want) in [
            (
                "python3 -m unittest -q tests.test_a",
                "python3 '/e/entry.py' unittest -q tests.test_a",
            ),
            (
                "PYTHONPATH=src  /usr/bin/python3.11 -W error -Bm unittest  tests.a && echo \"done\"",
                "PYTHONPATH=src  /usr/bin/python3.11 -W error -B '/e/entry.py' unittest  tests.a && echo \"done\"",
            ),
            (
                "python3 -munittest discover -s tests",
                "python3 '/e/entry.py' unittest discover -s tests",
            ),
            (
                "timeout 60 pytest -q tests/",
                "timeout 60 python3 '/e/entry.py' pytest -q tests/",
            ),
            ("uv run pytest -x", "uv run python '/e/entry.py' pytest -x"),
            (
                "uv run --frozen --module=pytest -q",
                "uv run --frozen '/e/entry.py' pytest -q",
            ),
            (
                "coverage run --branch -m unittest tests.a",
                "coverage run --branch '/e/entry.py' unittest tests.a",
            ),
            (
                "bash -lc \"cd . && python3 -m pytest 'tests/test a.py'\"; echo ok",
                "bash -lc 'cd . && python3 '\\''/e/entry.py'\\'' pytest '\\''tests/test a.py'\\'''; echo ok",
            ),
            (
                "python3 -m unittest tests.a; python3 -m unittest tests.b",
                "python3 '/e/entry.py' unittest tests.a; python3 '/e/entry.py' unittest tests.b",
            ),
        ] {
            assert_eq!(entered(command).as_deref(), Some(want), "{command}");
        }
    }

    #[test]
    fn a_runner_started_where_the_entry_point_cannot_go_is_no_command() {
        let glob = globset::Glob::new("tests/**/*.py")
            .unwrap()
            .compile_matcher();
        let check = RunnerCheck::of("./run_tests.sh", Some(VerifyRunner::Unittest), &glob);
        assert_eq!(through_entry("./run_tests.sh", &check, "/e"), None);
        // A command that runs no known runner needs none.
        assert_eq!(entered("sh tests/a.sh").as_deref(), Some("sh tests/a.sh"));
    }

    #[test]
    fn a_rewritten_shell_script_reads_as_the_same_runs() {
        let rewritten = entered("sh -c 'python3 -m unittest tests.a && pytest -q'").unwrap();
        let words: Vec<Vec<String>> = super::super::runner_command::expanded_commands(&rewritten)
            .into_iter()
            .map(|c| c.into_iter().map(|(w, _)| w).collect())
            .collect();
        assert_eq!(
            words,
            [
                vec!["python3", "/e/entry.py", "unittest", "tests.a"],
                vec!["python3", "/e/entry.py", "pytest", "-q"]
            ]
        );
    }
}
