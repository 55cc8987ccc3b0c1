//! A SEARCH/REPLACE block applied as aider applies it, to a file whose content the
//! importer knows: the SEARCH lines found as whole lines (the first place they occur),
//! else found with their leading whitespace differing by the same amount on every line
//! (the REPLACE lines then get the file's indentation), else without a blank first
//! line the model added. Anything aider would need more for (`...` elisions) is not
//! reproduced: the caller finds the session divergent.

/// `text` ending with a newline, as aider reads a block's part.
pub fn with_newline(text: &str) -> String {
    if text.is_empty() || text.ends_with('\n') {
        text.to_string()
    } else {
        format!("{text}\n")
    }
}

/// A block's SEARCH or REPLACE text without a fence or a repeated file name around
/// it (a model sometimes quotes the file inside the block).
pub fn unwrap_quoted(text: &str, path: &str) -> String {
    if text.is_empty() {
        return String::new();
    }
    let mut lines: Vec<&str> = text.lines().collect();
    let name = path.rsplit('/').next().unwrap_or(path);
    if lines
        .first()
        .is_some_and(|l| !name.is_empty() && l.trim().ends_with(name))
    {
        lines.remove(0);
    }
    if lines.len() >= 2
        && lines.first().is_some_and(|l| l.starts_with("```"))
        && lines.last().is_some_and(|l| l.starts_with("```"))
    {
        lines = lines[1..lines.len() - 1].to_vec();
    }
    with_newline(&lines.join("\n"))
}

fn split_lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// `content` with `search` replaced by `replace` as aider would, or `None` when aider's
/// simple matches do not find it.
pub fn apply(content: &str, search: &str, replace: &str) -> Option<String> {
    let content = with_newline(content);
    let whole = split_lines(&content);
    let search = with_newline(search);
    let replace = with_newline(replace);
    let part = split_lines(&search);
    let new = split_lines(&replace);
    if let Some(found) = exact_or_indented(&whole, &part, &new) {
        return Some(found);
    }
    if part.len() > 2 && part[0].trim().is_empty() {
        return exact_or_indented(&whole, &part[1..], &new);
    }
    None
}

fn exact_or_indented(whole: &[&str], part: &[&str], new: &[&str]) -> Option<String> {
    if part.is_empty() || part.len() > whole.len() {
        return None;
    }
    let splice = |at: usize, lines: &[String]| {
        let mut out: String = whole[..at].concat();
        out.extend(lines.iter().map(String::as_str));
        out.push_str(&whole[at + part.len()..].concat());
        out
    };
    let owned = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    if let Some(at) = (0..=whole.len() - part.len()).find(|&at| whole[at..at + part.len()] == *part)
    {
        return Some(splice(at, &owned(new)));
    }
    // The same lines with their indentation off by the same prefix on each line.
    let indent = |l: &str| l.len() - l.trim_start().len();
    let drop = part
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent(l))
        .min()
        .unwrap_or(0);
    let part: Vec<&str> = part
        .iter()
        .map(|l| if l.trim().is_empty() { *l } else { &l[drop..] })
        .collect();
    let new: Vec<&str> = new
        .iter()
        .map(|l| {
            if l.len() >= drop && l[..drop].trim().is_empty() && !l.trim().is_empty() {
                &l[drop..]
            } else {
                *l
            }
        })
        .collect();
    for at in 0..=whole.len() - part.len() {
        let window = &whole[at..at + part.len()];
        let mut prefix: Option<&str> = None;
        let fits = window.iter().zip(&part).all(|(w, p)| {
            if p.trim().is_empty() {
                return w.trim().is_empty();
            }
            let Some(lead) = w.strip_suffix(*p) else {
                return false;
            };
            if !lead.trim().is_empty() || prefix.is_some_and(|x| x != lead) {
                return false;
            }
            prefix = Some(lead);
            true
        });
        if fits {
            let lead = prefix.unwrap_or("");
            let lines: Vec<String> = new
                .iter()
                .map(|l| {
                    if l.trim().is_empty() {
                        l.to_string()
                    } else {
                        format!("{lead}{l}")
                    }
                })
                .collect();
            return Some(splice(at, &lines));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_lines_match_first_not_a_line_that_merely_ends_with_them() {
        let file = "max = 1\nx = 1\n";
        assert_eq!(
            apply(file, "x = 1\n", "x = 2\n").unwrap(),
            "max = 1\nx = 2\n"
        );
        assert_eq!(apply(file, "y = 1", "y = 2"), None);
    }

    #[test]
    fn indentation_that_differs_on_every_line_alike_is_forgiven() {
        let file = "def f():\n    if a:\n        return 1\n";
        let out = apply(file, "if a:\n    return 1\n", "if b:\n    return 2\n").unwrap();
        assert_eq!(out, "def f():\n    if b:\n        return 2\n");
        // A blank first line the model added is dropped.
        let out = apply(file, "\n    if a:\n        return 1\n", "    pass\n").unwrap();
        assert_eq!(out, "def f():\n    pass\n");
    }

    #[test]
    fn a_quoted_part_loses_its_fence_and_file_name() {
        assert_eq!(
            unwrap_quoted("a.py\n```\nx = 1\n```\n", "src/a.py"),
            "x = 1\n"
        );
        assert_eq!(unwrap_quoted("x = 1", "a.py"), "x = 1\n");
        assert_eq!(unwrap_quoted("", "a.py"), "");
    }
}
