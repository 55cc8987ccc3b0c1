//! The test files a verify command names, so that a task whose verify names a test
//! that exists nowhere (neither in `repo/` nor in `oracle/tests`) is refused at load
//! time instead of counting every claim as premature.
//!
//! Only names that are certainly tests are looked at: a word of the command that, as a
//! path relative to the work directory, lies under `tests/` (where the pristine tests
//! are laid) and matches the task's test glob (`tests/test_fee.sh`,
//! `./tests/test_a.py::TestA::test_b`, `--file=tests/test_a.py`), or an unquoted dotted
//! module under `tests` whose `.py` file would match the glob (`tests.test_late_fee`,
//! `tests.test_late_fee.LateFee.test_rate`). Words with shell expansions or globs are
//! skipped, and so is a whole command that changes directory (`cd`, `pushd`), since its
//! paths are then relative to somewhere else.

use std::ops::Range;

use globset::GlobMatcher;

/// Where the pristine tests of `oracle/tests` are laid in a scratch copy.
pub const ORACLE_TESTS_AT: &str = "tests";

/// A test a verify command names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedTest {
    /// The word as the command has it.
    pub word: String,
    /// Paths relative to the work directory, any of which would be it (a module may be
    /// a file or a package directory, a dotted name may go on into a class).
    pub paths: Vec<String>,
}

/// The tests `command` names (see the module documentation).
pub fn named_tests(command: &str, glob: &GlobMatcher) -> Vec<NamedTest> {
    let words = words(command);
    if words
        .iter()
        .any(|(w, quoted)| !quoted && (w == "cd" || w == "pushd"))
    {
        return Vec::new();
    }
    words
        .into_iter()
        .filter_map(|(word, quoted)| named_test(word, quoted, glob))
        .collect()
}

/// The test one word of a command names, if it certainly names one (see the module
/// documentation); `quoted` says whether any part of the word was quoted.
pub(super) fn named_test(word: String, quoted: bool, glob: &GlobMatcher) -> Option<NamedTest> {
    let under = format!("{ORACLE_TESTS_AT}/");
    if word
        .chars()
        .any(|c| c.is_whitespace() || "$*?[]{}~".contains(c))
    {
        return None;
    }
    let value = word.rsplit('=').next().unwrap_or(&word);
    let mut path = value;
    while let Some(rest) = path.strip_prefix("./") {
        path = rest;
    }
    let path = path.split("::").next().unwrap_or(path);
    if path.starts_with(&under) && glob.is_match(path) {
        let paths = vec![path.to_string()];
        return Some(NamedTest { word, paths });
    }
    if quoted || value.contains('/') {
        return None;
    }
    let parts: Vec<&str> = value.split('.').collect();
    if parts.len() < 2 || parts[0] != ORACLE_TESTS_AT || !parts.iter().all(|p| is_identifier(p)) {
        return None;
    }
    let mut paths = Vec::new();
    for k in 2..=parts.len() {
        let base = parts[..k].join("/");
        let file = format!("{base}.py");
        if glob.is_match(&file) {
            paths.push(file);
            paths.push(base);
        }
    }
    (!paths.is_empty()).then_some(NamedTest { word, paths })
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The words of a shell command with their quotes removed, each with whether any part
/// of it was quoted. Operators (`;&|()<>` and backquotes) separate words.
fn words(command: &str) -> Vec<(String, bool)> {
    simple_commands(command).into_iter().flatten().collect()
}

/// The words of a shell command as [`words`] gives them, grouped into the simple
/// commands that the operators (`;&|()<>` and backquotes) separate.
pub(super) fn simple_commands(command: &str) -> Vec<Vec<(String, bool)>> {
    spanned_commands(command)
        .into_iter()
        .map(|words| words.into_iter().map(|(word, _)| word).collect())
        .collect()
}

/// A word of a shell command (its text without quotes, whether any part was quoted)
/// and the bytes of the command it was read from, its quotes included.
pub(super) type SpannedWord = ((String, bool), Range<usize>);

/// [`simple_commands`], each word with its bytes in `command`, so that a word can be
/// replaced in the command's text.
pub(super) fn spanned_commands(command: &str) -> Vec<Vec<SpannedWord>> {
    let mut commands = Vec::new();
    let mut words = Vec::new();
    let mut word = String::new();
    let mut start = None;
    let mut quoted = false;
    let mut quote: Option<char> = None;
    let mut chars = command.char_indices();
    while let Some((at, c)) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some('"') if c == '\\' => word.extend(chars.next().map(|(_, c)| c)),
            Some(_) => word.push(c),
            None => match c {
                '\'' | '"' => {
                    quote = Some(c);
                    quoted = true;
                    start.get_or_insert(at);
                }
                '\\' => {
                    word.extend(chars.next().map(|(_, c)| c));
                    start.get_or_insert(at);
                }
                c if c.is_whitespace() || ";&|()<>`".contains(c) => {
                    if let Some(from) = start.take() {
                        words.push(((std::mem::take(&mut word), quoted), from..at));
                    }
                    quoted = false;
                    if !c.is_whitespace() && !words.is_empty() {
                        commands.push(std::mem::take(&mut words));
                    }
                }
                c => {
                    word.push(c);
                    start.get_or_insert(at);
                }
            },
        }
    }
    if let Some(from) = start {
        words.push(((word, quoted), from..command.len()));
    }
    commands.push(words);
    commands.retain(|c| !c.is_empty());
    commands
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(text: &str) -> GlobMatcher {
        globset::GlobBuilder::new(text)
            .literal_separator(true)
            .build()
            .unwrap()
            .compile_matcher()
    }

    fn names(command: &str, g: &str) -> Vec<String> {
        named_tests(command, &glob(g))
            .into_iter()
            .map(|n| n.paths.join("|"))
            .collect()
    }

    #[test]
    fn test_files_and_pytest_node_ids_under_tests_are_named() {
        assert_eq!(
            names("sh tests/test_fee.sh", "tests/**/*.sh"),
            ["tests/test_fee.sh"]
        );
        assert_eq!(
            names(
                "PYTHONPATH=src python3 -m pytest -q ./tests/unit/test_a.py::TestA::test_b 'tests/test_b.py' --file=tests/test_c.py",
                "tests/**/*.py"
            ),
            ["tests/unit/test_a.py", "tests/test_b.py", "tests/test_c.py"]
        );
    }

    #[test]
    fn dotted_modules_under_tests_name_each_prefix_that_could_be_the_module() {
        assert_eq!(
            names(
                "python3 -m unittest -q tests.test_late_fee",
                "tests/**/*.py"
            ),
            ["tests/test_late_fee.py|tests/test_late_fee"]
        );
        assert_eq!(
            names(
                "python3 -m unittest tests.test_fee.Fee.test_rate",
                "tests/**/*.py"
            ),
            [
                "tests/test_fee.py|tests/test_fee|tests/test_fee/Fee.py|tests/test_fee/Fee|tests/test_fee/Fee/test_rate.py|tests/test_fee/Fee/test_rate"
            ]
        );
    }

    #[test]
    fn anything_that_might_not_be_a_test_is_left_alone() {
        for (command, g) in [
            ("test -f src/f1.txt", "**/*.txt"),
            ("python3 src/app.py", "**/*.py"),
            ("python3 -m unittest discover -s tests", "tests/**/*.py"),
            ("sh tests/*.sh", "tests/**/*.sh"),
            ("sh $TESTS/test_a.sh", "tests/**/*.sh"),
            ("python3 -c 'import tests.test_a'", "tests/**/*.py"),
            ("cd app && sh tests/test_a.sh", "tests/**/*.sh"),
            ("sh tests/test_a.sh", "tests/**/*.py"),
            ("python3 -m unittest tests.1x", "tests/**/*.py"),
        ] {
            assert_eq!(names(command, g), Vec::<String>::new(), "{command}");
        }
    }

    #[test]
    fn shell_words_lose_their_quotes_and_split_at_operators() {
        assert_eq!(
            words(r#"a "b c"&&d\ e;'f'"#),
            vec![
                ("a".to_string(), false),
                ("b c".to_string(), true),
                ("d e".to_string(), false),
                ("f".to_string(), true)
            ]
        );
    }
}
