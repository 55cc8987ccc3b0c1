//! The edit blocks of a model's reply to aider, read as aider reads them.
//!
//! **SEARCH/REPLACE** (edit formats `diff`, `diff-fenced`, `editor-diff`):
//!
//! ````text
//! ledger/fees.py
//! ```python
//! <<<<<<< SEARCH
//! RATE_PERCENT = 20
//! =======
//! RATE_PERCENT = 2
//! >>>>>>> REPLACE
//! ```
//! ````
//!
//! The file is named on one of the three lines before `<<<<<<< SEARCH` (the first that
//! is not a fence, with `#`, `*`, backquotes and a trailing `:` stripped, or a fence's
//! own `` ```name.py ``); a block without a name edits the file of the block before.
//! An empty SEARCH creates the file, or appends to it. The markers may have five to
//! nine `<`, `=` or `>`.
//!
//! **Whole files** (`whole`, `editor-whole`): the file's name on the line before a
//! fenced block, the block's lines its new content.

/// One SEARCH/REPLACE block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replace {
    /// The file as the reply names it.
    pub path: String,
    /// The lines to find (empty: create or append).
    pub search: String,
    /// Their replacement.
    pub replace: String,
}

/// One whole-file block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WholeFile {
    /// The file as the reply names it.
    pub path: String,
    /// Its new content.
    pub content: String,
}

fn run_of(line: &str, c: char) -> usize {
    line.chars().take_while(|x| *x == c).count()
}

fn is_head(line: &str) -> bool {
    let t = line.trim();
    let n = run_of(t, '<');
    (5..=9).contains(&n) && matches!(t[n..].trim_end(), " SEARCH" | " SEARCH>")
}

fn is_divider(line: &str) -> bool {
    let t = line.trim();
    let n = run_of(t, '=');
    (5..=9).contains(&n) && n == t.len()
}

fn is_update(line: &str) -> bool {
    let t = line.trim();
    let n = run_of(t, '>');
    (5..=9).contains(&n) && t[n..].trim_end() == " REPLACE"
}

fn is_fence(line: &str) -> bool {
    line.starts_with("```")
}

/// A file name on a line before a block, as aider reads one.
fn file_name(line: &str) -> Option<String> {
    let line = line.trim();
    if line == "..." {
        return None;
    }
    if is_fence(line) {
        let name = line.trim_start_matches('`');
        return (name.contains('.') || name.contains('/')).then(|| name.to_string());
    }
    let name = line
        .trim_end_matches(':')
        .trim_start_matches('#')
        .trim()
        .trim_matches('`')
        .trim_matches('*');
    (!name.is_empty()).then(|| name.to_string())
}

/// The file named on the (at most three) lines before line `at`: the nearest line that
/// names one, looking further back only past fences.
fn name_before(lines: &[&str], at: usize) -> Option<String> {
    let mut names = Vec::new();
    for line in lines[at.saturating_sub(3)..at].iter().rev() {
        if let Some(name) = file_name(line) {
            names.push(name);
        }
        if !is_fence(line) {
            break;
        }
    }
    // A name with an extension or a directory first, as aider prefers one.
    names
        .iter()
        .find(|n| n.contains('.') || n.contains('/'))
        .or(names.first())
        .cloned()
}

/// The SEARCH/REPLACE blocks of `reply`, or why one of them is malformed (aider
/// rejects such a reply whole).
pub fn search_replace(reply: &str) -> Result<Vec<Replace>, String> {
    blocks_of(reply, None)
}

/// The blocks of `text`; a block that names no file edits `current`'s.
fn blocks_of(text: &str, mut current: Option<String>) -> Result<Vec<Replace>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if !is_head(lines[i]) {
            i += 1;
            continue;
        }
        let path = match name_before(&lines, i).or_else(|| current.clone()) {
            Some(path) => path,
            None => return Err(format!("the block at line {} names no file", i + 1)),
        };
        current = Some(path.clone());
        let mut search = String::new();
        i += 1;
        while i < lines.len() && !is_divider(lines[i]) {
            search += lines[i];
            search.push('\n');
            i += 1;
        }
        if i == lines.len() {
            return Err("a SEARCH without its =======".into());
        }
        let mut replace = String::new();
        i += 1;
        while i < lines.len() && !is_update(lines[i]) && !is_divider(lines[i]) {
            replace += lines[i];
            replace.push('\n');
            i += 1;
        }
        if i == lines.len() {
            return Err("a SEARCH/REPLACE block without its >>>>>>> REPLACE".into());
        }
        blocks.push(Replace {
            path,
            search,
            replace,
        });
        i += 1;
    }
    Ok(blocks)
}

/// The whole-file blocks of `reply`: a fence after a line naming the file, up to the
/// fence that closes it.
pub fn whole_files(reply: &str) -> Vec<WholeFile> {
    let lines: Vec<&str> = reply.lines().collect();
    let mut files = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let ticks = run_of(lines[i], '`');
        if ticks < 3 {
            i += 1;
            continue;
        }
        let name = (i > 0).then(|| file_name(lines[i - 1])).flatten();
        let fence = "`".repeat(ticks);
        let mut content = String::new();
        let mut end = i + 1;
        while end < lines.len() && !lines[end].starts_with(&fence) {
            content += lines[end];
            content.push('\n');
            end += 1;
        }
        if let Some(path) = name {
            files.push(WholeFile { path, content });
        }
        i = end + 1;
    }
    files
}

/// The file names and blocks of the "SearchReplaceNoExactMatch" listing aider writes
/// when blocks of a reply failed to match: (path, SEARCH, REPLACE) of each.
pub fn failed_blocks(message: &str) -> Vec<Replace> {
    const MARK: &str =
        "SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in ";
    let lines: Vec<&str> = message.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(at) = line.find(MARK) else {
            continue;
        };
        let path = line[at + MARK.len()..].trim().to_string();
        if let Ok(blocks) = blocks_of(&lines[i + 1..].join("\n"), Some(path.clone()))
            && let Some(first) = blocks.into_iter().next()
        {
            out.push(Replace { path, ..first });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_found_with_the_file_named_before_them() {
        let reply = "Here:\n\nledger/fees.py\n````python\n<<<<<<< SEARCH\nRATE = 20\n=======\nRATE = 2\n>>>>>>> REPLACE\n````\n\n\
                     <<<<<<< SEARCH\n=======\nextra\n>>>>>>> REPLACE\n\n\
                     **notes.md**:\n```\n<<<<<<<< SEARCH>\n  a\n========\n  b\n>>>>>>>> REPLACE\n```\n";
        assert_eq!(
            search_replace(reply).unwrap(),
            vec![
                Replace {
                    path: "ledger/fees.py".into(),
                    search: "RATE = 20\n".into(),
                    replace: "RATE = 2\n".into()
                },
                Replace {
                    path: "ledger/fees.py".into(),
                    search: String::new(),
                    replace: "extra\n".into()
                },
                Replace {
                    path: "notes.md".into(),
                    search: "  a\n".into(),
                    replace: "  b\n".into()
                },
            ]
        );
        // A fence that names the file itself.
        let fenced = "```src/x.py\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n```";
        assert_eq!(search_replace(fenced).unwrap()[0].path, "src/x.py");
    }

    #[test]
    fn malformed_blocks_are_refused_whole() {
        assert!(search_replace("<<<<<<< SEARCH\na\n=======\nb\n").is_err());
        assert!(search_replace("x.py\n<<<<<<< SEARCH\na\n").is_err());
        assert!(search_replace("\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n").is_err());
        assert_eq!(search_replace("no blocks here\n======\n").unwrap(), vec![]);
    }

    #[test]
    fn whole_file_blocks_take_the_name_on_the_line_before_the_fence() {
        let reply =
            "Changes:\n\nsrc/a.py\n```python\nx = 1\n```\n\nb.txt\n````\n```inner```\n````\n";
        assert_eq!(
            whole_files(reply),
            vec![
                WholeFile {
                    path: "src/a.py".into(),
                    content: "x = 1\n".into()
                },
                WholeFile {
                    path: "b.txt".into(),
                    content: "```inner```\n".into()
                },
            ]
        );
    }

    #[test]
    fn the_failed_listing_names_each_block_that_did_not_match() {
        let message = "# 1 SEARCH/REPLACE block failed to match!\n\n\
                       ## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in notes/a.txt\n\
                       <<<<<<< SEARCH\nTWO\n=======\n2\n>>>>>>> REPLACE\n\nAre you sure you need this SEARCH/REPLACE block?\n";
        assert_eq!(
            failed_blocks(message),
            vec![Replace {
                path: "notes/a.txt".into(),
                search: "TWO\n".into(),
                replace: "2\n".into()
            }]
        );
    }
}
