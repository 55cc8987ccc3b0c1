//! Codex's `apply_patch` format, read and applied to what the importer knows of a file.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: PATH          then the content, every line prefixed with `+`
//! *** Delete File: PATH
//! *** Update File: PATH
//! *** Move to: NEW_PATH       optional, right after Update
//! @@ CONTEXT                  or a bare `@@`: a chunk; its lines start with ` ` (kept),
//!                             `-` (removed) or `+` (added); `*** End of File` pins the
//!                             chunk to the end of the file
//! *** End Patch
//! ```
//!
//! Markers may carry surrounding whitespace, the whole patch may sit in a heredoc
//! (`<<'EOF'` ... `EOF`, as models write it for a shell call), and the first chunk of an
//! update may omit its `@@` line: Codex accepts all three, so the importer does too.
//!
//! **Applying a chunk** to known content follows Codex: an optional context line is
//! found first (from where the previous chunk ended), then the chunk's old lines after
//! it, compared exactly, then ignoring trailing whitespace, then ignoring surrounding
//! whitespace, then with typographic dashes, quotes and spaces read as their ASCII
//! forms. A chunk without old lines inserts its new lines at the end of the file. The
//! result always ends with a newline.

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hunk {
    /// A new file with this content.
    Add {
        /// As written in the patch (relative to the call's directory, or absolute).
        path: String,
        /// The whole content.
        content: String,
    },
    /// Remove a file.
    Delete {
        /// As written in the patch.
        path: String,
    },
    /// Change a file, and maybe move it.
    Update {
        /// As written in the patch.
        path: String,
        /// Where the file goes, when it moves.
        move_to: Option<String>,
        /// The changes, in file order.
        chunks: Vec<Chunk>,
    },
}

/// One `@@` chunk of an update.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chunk {
    /// The `@@ CONTEXT` line's text: a line the old lines come after.
    pub context: Option<String>,
    /// The lines replaced (kept and removed ones).
    pub old: Vec<String>,
    /// Their replacement (kept and added ones).
    pub new: Vec<String>,
    /// `*** End of File`: the old lines end the file.
    pub at_end: bool,
}

/// Parses a patch; the error says which line is not what the grammar expects.
pub fn parse(patch: &str) -> Result<Vec<Hunk>, String> {
    let lines: Vec<&str> = patch.trim().lines().collect();
    let body = body_lines(&lines)?;
    let mut hunks = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let header = body[i].trim();
        i += 1;
        if header.is_empty() {
            continue;
        }
        if let Some(path) = header.strip_prefix("*** Add File: ") {
            let mut content = String::new();
            while let Some(line) = body.get(i).and_then(|l| l.strip_prefix('+')) {
                content.push_str(line);
                content.push('\n');
                i += 1;
            }
            hunks.push(Hunk::Add {
                path: path.trim().to_string(),
                content,
            });
        } else if let Some(path) = header.strip_prefix("*** Delete File: ") {
            hunks.push(Hunk::Delete {
                path: path.trim().to_string(),
            });
        } else if let Some(path) = header.strip_prefix("*** Update File: ") {
            let move_to = body
                .get(i)
                .and_then(|l| l.trim().strip_prefix("*** Move to: "))
                .map(|p| p.trim().to_string());
            i += usize::from(move_to.is_some());
            let (chunks, used) = update_chunks(&body[i..])?;
            if chunks.is_empty() {
                return Err(format!("'*** Update File: {path}' has no change"));
            }
            i += used;
            hunks.push(Hunk::Update {
                path: path.trim().to_string(),
                move_to,
                chunks,
            });
        } else {
            return Err(format!(
                "'{header}' is not a hunk header (*** Add File:, *** Delete File: or *** Update File:)"
            ));
        }
    }
    Ok(hunks)
}

/// The lines between `*** Begin Patch` and `*** End Patch`, the patch perhaps inside
/// a heredoc.
fn body_lines<'a>(lines: &'a [&'a str]) -> Result<&'a [&'a str], String> {
    let framed = |l: &'a [&'a str]| {
        (l.len() >= 2
            && l[0].trim() == "*** Begin Patch"
            && l[l.len() - 1].trim() == "*** End Patch")
            .then(|| &l[1..l.len() - 1])
    };
    if let Some(body) = framed(lines) {
        return Ok(body);
    }
    let heredoc = lines.len() >= 4
        && matches!(lines[0].trim(), "<<EOF" | "<<'EOF'" | "<<\"EOF\"")
        && lines[lines.len() - 1].trim_end().ends_with("EOF");
    if heredoc && let Some(body) = framed(&lines[1..lines.len() - 1]) {
        return Ok(body);
    }
    Err("a patch starts with '*** Begin Patch' and ends with '*** End Patch'".into())
}

/// The chunks of one update, and how many lines they took.
fn update_chunks(lines: &[&str]) -> Result<(Vec<Chunk>, usize), String> {
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        // Blank lines between chunks separate them; inside a chunk they are content.
        if line.trim().is_empty() {
            i += 1;
            continue;
        }
        if line.starts_with('*') {
            break;
        }
        let mut chunk = Chunk::default();
        if line.trim_end() == "@@" {
            i += 1;
        } else if let Some(context) = line.strip_prefix("@@ ") {
            chunk.context = Some(context.to_string());
            i += 1;
        } else if !chunks.is_empty() {
            return Err(format!(
                "expected an '@@' line to start a chunk, found '{line}'"
            ));
        }
        let start = i;
        while i < lines.len() {
            let line = lines[i];
            if line.trim() == "*** End of File" {
                chunk.at_end = true;
                i += 1;
                break;
            }
            match line.chars().next() {
                None => {
                    chunk.old.push(String::new());
                    chunk.new.push(String::new());
                }
                Some(' ') => {
                    chunk.old.push(line[1..].to_string());
                    chunk.new.push(line[1..].to_string());
                }
                Some('-') => chunk.old.push(line[1..].to_string()),
                Some('+') => chunk.new.push(line[1..].to_string()),
                _ if i == start => {
                    return Err(format!(
                        "'{line}' in an update: every line starts with ' ', '+' or '-'"
                    ));
                }
                _ => break,
            }
            i += 1;
        }
        if i == start {
            return Err("an '@@' chunk without lines".into());
        }
        chunks.push(chunk);
    }
    Ok((chunks, i))
}

/// The chunks of a unified diff (`@@ -a,b +c,d @@` hunks, as Codex records a file
/// change in its item events): each hunk's context and removed lines, and its context
/// and added lines.
pub fn unified_diff_chunks(diff: &str) -> Result<Vec<Chunk>, String> {
    let mut chunks: Vec<Chunk> = Vec::new();
    for line in diff.lines() {
        if line.starts_with("@@") {
            chunks.push(Chunk::default());
            continue;
        }
        if line.starts_with("---") || line.starts_with("+++") || line.starts_with("\\ ") {
            continue;
        }
        let Some(chunk) = chunks.last_mut() else {
            if line.starts_with("diff ") || line.starts_with("index ") {
                continue;
            }
            return Err(format!("'{line}' before the first '@@' of a unified diff"));
        };
        match line.chars().next() {
            Some('+') => chunk.new.push(line[1..].to_string()),
            Some('-') => chunk.old.push(line[1..].to_string()),
            Some(' ') => {
                chunk.old.push(line[1..].to_string());
                chunk.new.push(line[1..].to_string());
            }
            None => {
                chunk.old.push(String::new());
                chunk.new.push(String::new());
            }
            _ => return Err(format!("'{line}' in a unified diff hunk")),
        }
    }
    if chunks.is_empty() {
        return Err("a unified diff without an '@@' hunk".into());
    }
    Ok(chunks)
}

/// `content` with the chunks applied as Codex applies them, or which chunk could not
/// be matched.
pub fn apply(content: &str, chunks: &[Chunk]) -> Result<String, String> {
    let mut lines: Vec<String> = content.split('\n').map(str::to_string).collect();
    if lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    let mut replacements: Vec<(usize, usize, &[String])> = Vec::new();
    let mut from = 0;
    for (n, chunk) in chunks.iter().enumerate() {
        if let Some(context) = &chunk.context {
            let found = seek(&lines, std::slice::from_ref(context), from, false)
                .ok_or_else(|| format!("chunk {}: context line '{context}' not found", n + 1))?;
            from = found + 1;
        }
        if chunk.old.is_empty() {
            replacements.push((lines.len(), 0, &chunk.new));
            continue;
        }
        let mut old: &[String] = &chunk.old;
        let mut new: &[String] = &chunk.new;
        let mut found = seek(&lines, old, from, chunk.at_end);
        if found.is_none() && old.last().is_some_and(String::is_empty) {
            // A trailing blank line the model added to the chunk.
            old = &old[..old.len() - 1];
            if new.last().is_some_and(String::is_empty) {
                new = &new[..new.len() - 1];
            }
            found = seek(&lines, old, from, chunk.at_end);
        }
        let at = found.ok_or_else(|| {
            format!(
                "chunk {}: its {} line(s) from {:?} on are not in the file",
                n + 1,
                chunk.old.len(),
                chunk.old[0]
            )
        })?;
        replacements.push((at, old.len(), new));
        from = at + old.len();
    }
    replacements.sort_by_key(|r| r.0);
    for (at, len, new) in replacements.into_iter().rev() {
        lines.splice(at..at + len, new.iter().cloned());
    }
    let mut out = lines.join("\n");
    out.push('\n');
    Ok(out)
}

/// Where `pattern` occurs in `lines` at or after `from` (at the end first when
/// `at_end`), compared ever more leniently, as Codex does.
fn seek(lines: &[String], pattern: &[String], from: usize, at_end: bool) -> Option<usize> {
    if pattern.is_empty() {
        return Some(from);
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last = lines.len() - pattern.len();
    let ways: [fn(&str) -> String; 4] = [
        |s| s.to_string(),
        |s| s.trim_end().to_string(),
        |s| s.trim().to_string(),
        |s| ascii_punctuation(s.trim()),
    ];
    for norm in ways {
        let matches = |at: usize| {
            pattern
                .iter()
                .zip(&lines[at..])
                .all(|(p, l)| norm(p) == norm(l))
        };
        if at_end && last >= from && matches(last) {
            return Some(last);
        }
        if let Some(at) = (from..=last).find(|&at| matches(at)) {
            return Some(at);
        }
    }
    None
}

/// Typographic dashes, quotes and spaces as the ASCII characters a model types.
fn ascii_punctuation(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
            | '\u{2212}' => '-',
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
            | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
            | '\u{3000}' => ' ',
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn update(path: &str, chunks: Vec<Chunk>) -> Hunk {
        Hunk::Update {
            path: path.into(),
            move_to: None,
            chunks,
        }
    }

    fn chunk(context: Option<&str>, old: &[&str], new: &[&str]) -> Chunk {
        Chunk {
            context: context.map(str::to_string),
            old: old.iter().map(|s| s.to_string()).collect(),
            new: new.iter().map(|s| s.to_string()).collect(),
            at_end: false,
        }
    }

    #[test]
    fn every_hunk_kind_is_read() {
        let patch = "*** Begin Patch\n\
                     *** Add File: ledger/new.py\n\
                     +x = 1\n\
                     +\n\
                     *** Delete File: old.txt\n\
                     *** Update File: ledger/fees.py\n\
                     *** Move to: ledger/late_fees.py\n\
                     @@ def late_fee_cents(inv, today):\n\
                     -    return 0\n\
                     +    return 1\n\
                     @@\n \
                     keep\n\
                     -gone\n\
                     *** End of File\n\
                     *** End Patch\n";
        assert_eq!(
            parse(patch).unwrap(),
            vec![
                Hunk::Add {
                    path: "ledger/new.py".into(),
                    content: "x = 1\n\n".into()
                },
                Hunk::Delete {
                    path: "old.txt".into()
                },
                Hunk::Update {
                    path: "ledger/fees.py".into(),
                    move_to: Some("ledger/late_fees.py".into()),
                    chunks: vec![
                        chunk(
                            Some("def late_fee_cents(inv, today):"),
                            &["    return 0"],
                            &["    return 1"]
                        ),
                        Chunk {
                            at_end: true,
                            ..chunk(None, &["keep", "gone"], &["keep"])
                        },
                    ],
                },
            ]
        );
    }

    #[test]
    fn a_heredoc_a_missing_first_at_sign_line_and_padded_markers_are_accepted() {
        let patch = "<<'EOF'\n  *** Begin Patch \n*** Update File: a.txt\n one\n-two\n+2\n*** End Patch\nEOF\n";
        assert_eq!(
            parse(patch).unwrap(),
            vec![update(
                "a.txt",
                vec![chunk(None, &["one", "two"], &["one", "2"])]
            )]
        );
    }

    #[test]
    fn what_is_not_a_patch_says_what_was_expected() {
        for (bad, says) in [
            ("hello", "starts with '*** Begin Patch'"),
            (
                "*** Begin Patch\n*** Frob File: x\n*** End Patch",
                "not a hunk header",
            ),
            (
                "*** Begin Patch\n*** Update File: x\n*** End Patch",
                "has no change",
            ),
            (
                "*** Begin Patch\n*** Update File: x\n@@\nnope\n*** End Patch",
                "every line starts",
            ),
        ] {
            let err = parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn chunks_apply_after_their_context_and_in_order() {
        let file = "def a():\n    return 0\n\ndef b():\n    return 0\n";
        let out = apply(
            file,
            &[chunk(
                Some("def b():"),
                &["    return 0"],
                &["    return 2"],
            )],
        )
        .unwrap();
        assert_eq!(out, "def a():\n    return 0\n\ndef b():\n    return 2\n");
        // Without context, the first occurrence; two chunks, each after the last.
        let out = apply(
            file,
            &[
                chunk(None, &["    return 0"], &["    return 1"]),
                chunk(None, &["    return 0"], &["    return 3"]),
            ],
        )
        .unwrap();
        assert_eq!(out, "def a():\n    return 1\n\ndef b():\n    return 3\n");
    }

    #[test]
    fn matching_forgives_whitespace_and_typographic_punctuation_but_not_other_text() {
        let file = "a = 1   \n  b = \u{201C}x\u{201D} \u{2014} y\n";
        let out = apply(file, &[chunk(None, &["a = 1"], &["a = 2"])]).unwrap();
        assert_eq!(out, "a = 2\n  b = \u{201C}x\u{201D} \u{2014} y\n");
        let out = apply(file, &[chunk(None, &["b = \"x\" - y"], &["b = 3"])]).unwrap();
        assert_eq!(out, "a = 1   \nb = 3\n");
        let err = apply(file, &[chunk(None, &["c = 1"], &["c = 2"])]).unwrap_err();
        assert!(err.contains("\"c = 1\""), "{err}");
        let err = apply(file, &[chunk(Some("nowhere"), &["a = 1"], &[])]).unwrap_err();
        assert!(err.contains("nowhere"), "{err}");
    }

    #[test]
    fn a_chunk_without_old_lines_appends_and_the_result_ends_with_a_newline() {
        assert_eq!(apply("x", &[chunk(None, &[], &["y"])]).unwrap(), "x\ny\n");
        // An end-of-file chunk matches the last occurrence.
        let at_end = Chunk {
            at_end: true,
            ..chunk(None, &["k"], &["K"])
        };
        assert_eq!(apply("k\nk\n", &[at_end]).unwrap(), "k\nK\n");
    }

    #[test]
    fn a_unified_diff_becomes_chunks_of_context_and_changes() {
        let diff = "@@ -4,3 +4,3 @@\n \n-- [ ] **F1** x\n+- [x] **F1** x\n   - step\n";
        assert_eq!(
            unified_diff_chunks(diff).unwrap(),
            vec![chunk(
                None,
                &["", "- [ ] **F1** x", "  - step"],
                &["", "- [x] **F1** x", "  - step"]
            )]
        );
        assert!(unified_diff_chunks("no hunk").is_err());
    }
}
