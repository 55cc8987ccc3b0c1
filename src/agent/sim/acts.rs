//! The edits the sim agent makes to a work directory: each one a real file change.

use std::path::{Path, PathBuf};

use rand::RngExt;
use rand_chacha::ChaCha8Rng;

use crate::error::{IoContext, Result};
use crate::feature_list::Entry;

/// The files that implement one feature, as they lie under `oracle/gold/<ID>/`.
#[derive(Debug, Clone)]
pub struct GoldFiles {
    /// `(path relative to the work directory, content)`, in path order.
    pub files: Vec<(String, Vec<u8>)>,
}

impl GoldFiles {
    /// Reads `dir` (missing: no files).
    pub fn read(dir: &Path) -> Result<GoldFiles> {
        if !dir.is_dir() {
            return Ok(GoldFiles { files: Vec::new() });
        }
        let snapshot = crate::fsutil::TreeSnapshot::read(dir)?;
        Ok(GoldFiles {
            files: snapshot
                .files
                .into_iter()
                .map(|f| (f.path, f.content))
                .collect(),
        })
    }

    /// Whether every gold file is in place, byte for byte: the sim's own knowledge of
    /// what is really done (a real agent would have to run the check).
    pub fn in_place(&self, work_dir: &Path) -> bool {
        !self.files.is_empty()
            && self
                .files
                .iter()
                .all(|(p, c)| std::fs::read(work_dir.join(p)).is_ok_and(|have| &have == c))
    }
}

/// Writes `content` to `rel` under `work_dir`, creating directories.
pub fn write_file(work_dir: &Path, rel: &str, content: &[u8]) -> Result<()> {
    let path = work_dir.join(rel);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)
            .io_context(|| format!("cannot create '{}'", parent.display()))?;
    }
    std::fs::write(&path, content).io_context(|| format!("cannot write '{}'", path.display()))
}

/// The first half of a file's lines: a deliberately broken copy of a gold file.
pub fn first_half(content: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(content);
    let lines: Vec<&str> = text.lines().collect();
    let keep = lines.len() / 2;
    let mut out = lines[..keep].join("\n");
    if keep > 0 {
        out.push('\n');
    }
    out.into_bytes()
}

/// A weakened copy of a test file: the lines matching the count pattern stay (so no
/// test is "removed"), every check is gone, and it exits 0.
pub fn weakened_test(content: &[u8], count_pattern: &regex::Regex) -> Vec<u8> {
    let text = String::from_utf8_lossy(content);
    let mut out: String = text
        .lines()
        .filter(|l| count_pattern.is_match(l))
        .map(|l| format!("{l}\n"))
        .collect();
    out.push_str("exit 0\n");
    out.into_bytes()
}

/// The test files a verify command names (`sh tests/test_x.sh`, `tests.test_x`).
pub fn test_files_of(verify: &str, candidates: &[String]) -> Vec<PathBuf> {
    candidates
        .iter()
        .filter(|c| {
            let dotted = c.trim_end_matches(".py").replace('/', ".");
            verify.contains(c.as_str()) || verify.contains(&dotted)
        })
        .map(PathBuf::from)
        .collect()
}

const REWORDINGS: &[(&str, &str)] = &[
    ("", " (done differently)"),
    ("Implement: ", ""),
    ("", " where possible"),
    ("Should: ", ""),
    ("", ", simplified"),
];

/// A reworded description, always different from the original (trailing whitespace
/// aside).
pub fn reword(description: &str, rng: &mut ChaCha8Rng) -> String {
    let (prefix, suffix) = REWORDINGS[rng.random_range(0..REWORDINGS.len())];
    let reworded = format!("{prefix}{}{suffix}", description.trim_end());
    if reworded.trim_end() == description.trim_end() {
        format!("{} (reworded)", description.trim_end())
    } else {
        reworded
    }
}

/// Steps changed in one of three ways an agent changes them.
pub fn edit_steps(entry: &Entry, rng: &mut ChaCha8Rng) -> Vec<String> {
    let mut steps = entry.steps.clone();
    match rng.random_range(0..3) {
        0 if steps.len() > 1 => {
            steps.pop();
        }
        1 if !steps.is_empty() => {
            steps[0] = format!("{} quickly", steps[0].trim_end());
        }
        _ => steps.push("check it by hand".into()),
    }
    steps
}
