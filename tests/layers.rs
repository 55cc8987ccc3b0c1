//! Layers import downward only: every module of the crate sits in one layer, and no
//! `crate::` path in a module names a layer above its own. The order is the data flow
//! of docs/architecture.md (suite → plan → trial → session → observation → record →
//! report), under the plumbing every layer may use. Inside the layers, no files import
//! each other in a circle, and a module re-exports only its own items, so that a type
//! is imported from the module that defines it. And a results directory's paths come
//! from `RunDir`: only the store makes one, and no other file joins its file names.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Top-level modules from the bottom up.
const LAYERS: &[&str] = &[
    // plumbing
    "exit_code",
    "error",
    "lines",
    "terminal",
    "csv_text",
    "timestamp",
    "malloc_arenas",
    "seed",
    "fsutil",
    "run_dir",
    "agent_file",
    "fresh_namespaces",
    "process_group",
    "sandbox",
    "process",
    "git",
    "stats",
    // what an experiment is
    "rates",
    "feature_list",
    "suite",
    "effects",
    "workspace",
    "notice",
    // sessions and what is observed of them
    "agent",
    "observe",
    "metrics",
    "record",
    "events",
    // the engine and the results
    "runner",
    "store",
    "import",
    "report",
    "export",
    "taskcheck",
    // a study: the plan of a command, driven, its looks judged
    "study",
    // the commands
    "cmd",
    "cli",
];

fn top_module(rel: &str) -> &str {
    let first = rel.split('/').next().unwrap_or(rel);
    first.strip_suffix(".rs").unwrap_or(first)
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let rank: BTreeMap<&str, usize> = LAYERS.iter().enumerate().map(|(i, m)| (*m, i)).collect();
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let module = top_module(&rel);
        if module == "lib" || module == "main" {
            continue;
        }
        let own = *rank
            .get(module)
            .unwrap_or_else(|| panic!("module '{module}' has no layer: add it to LAYERS"));
        let text = std::fs::read_to_string(entry.path()).unwrap();
        for (n, line) in text.lines().enumerate() {
            for part in line.split("crate::").skip(1) {
                let used: String = part
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if let Some(&theirs) = rank.get(used.as_str())
                    && theirs > own
                {
                    found.push(format!("src/{rel}:{}: {module} uses {used}", n + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "upward imports:\n{}", found.join("\n"));
}

/// Every `.rs` file under `src/` as (its module path, its text). `a/b.rs` is `a::b`,
/// `a/mod.rs` and `a.rs` are `a`: a folder's `mod.rs` is the folder.
fn source_files() -> Vec<(String, String, String)> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for entry in walkdir::WalkDir::new(&src).sort_by_file_name() {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = entry
            .path()
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let module = rel.strip_suffix(".rs").unwrap();
        let module = module.strip_suffix("/mod").unwrap_or(module);
        let module = match module {
            "lib" | "main" => String::new(),
            m => m.replace('/', "::"),
        };
        let text = std::fs::read_to_string(entry.path()).unwrap();
        files.push((format!("src/{rel}"), module, text));
    }
    files
}

/// The code of a file without its comments (doc links are not imports) and without the
/// text of its string literals.
fn code_of(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut in_string = false;
        let mut prev = ' ';
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if !in_string && c == '/' && chars.peek() == Some(&'/') {
                break;
            }
            if c == '"' && prev != '\\' && prev != '\'' {
                in_string = !in_string;
            } else if !in_string {
                out.push(c);
            }
            prev = c;
        }
        out.push('\n');
    }
    out
}

/// Every path a `use` tree starting at `at` names, expanded (`a::{b, c::d}` gives
/// `a::b` and `a::c::d`), with where the tree ends.
fn use_tree(code: &[char], mut at: usize, prefix: &str, out: &mut Vec<String>) -> usize {
    let mut path = prefix.to_string();
    loop {
        while at < code.len() && code[at].is_whitespace() {
            at += 1;
        }
        if at < code.len() && code[at] == '{' {
            at += 1;
            loop {
                at = use_tree(code, at, &path, out);
                while at < code.len() && code[at].is_whitespace() {
                    at += 1;
                }
                match code.get(at) {
                    Some(',') => at += 1,
                    Some('}') => return at + 1,
                    _ => return at,
                }
                while at < code.len() && code[at].is_whitespace() {
                    at += 1;
                }
                if code.get(at) == Some(&'}') {
                    return at + 1;
                }
            }
        }
        let start = at;
        while at < code.len()
            && (code[at].is_ascii_alphanumeric() || code[at] == '_' || code[at] == '*')
        {
            at += 1;
        }
        let word: String = code[start..at].iter().collect();
        if word.is_empty() {
            out.push(path);
            return at;
        }
        path = if path.is_empty() {
            word
        } else {
            format!("{path}::{word}")
        };
        if code.get(at) == Some(&':') && code.get(at + 1) == Some(&':') {
            at += 2;
        } else {
            out.push(path);
            return at;
        }
    }
}

/// Every `crate::`, `super::` and `self::` path of a file's code, expanded. Inside an
/// inline `mod NAME { ... }` (a file's tests), `super::` names the file itself, so one
/// `super` per enclosing inline module is dropped.
fn crate_paths(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut paths = Vec::new();
    let mut depth = 0usize;
    // Brace depths at which inline modules opened.
    let mut inline: Vec<usize> = Vec::new();
    let mut at = 0;
    while at < chars.len() {
        match chars[at] {
            '{' => {
                let before: String = chars[..at].iter().collect();
                let words: Vec<&str> = before.split_whitespace().rev().take(2).collect();
                if words.len() == 2 && words[1] == "mod" {
                    inline.push(depth);
                }
                depth += 1;
            }
            '}' => {
                depth = depth.saturating_sub(1);
                if inline.last() == Some(&depth) {
                    inline.pop();
                }
            }
            _ => {}
        }
        let starts_word = at == 0
            || !(chars[at - 1].is_ascii_alphanumeric()
                || chars[at - 1] == '_'
                || chars[at - 1] == ':');
        if starts_word {
            for head in ["crate::", "super::", "self::"] {
                let n = head.chars().count();
                if chars.len() >= at + n && chars[at..at + n].iter().copied().eq(head.chars()) {
                    let mut found = Vec::new();
                    use_tree(&chars, at, "", &mut found);
                    for path in found {
                        let mut path = path.as_str();
                        for _ in 0..inline.len() {
                            path = match path.strip_prefix("super::") {
                                Some(rest) => rest,
                                None => break,
                            };
                        }
                        if path.starts_with("super::")
                            || path.starts_with("crate::")
                            || path.starts_with("self::")
                        {
                            paths.push(path.to_string());
                        } else {
                            paths.push(format!("self::{path}"));
                        }
                    }
                    break;
                }
            }
        }
        at += 1;
    }
    paths
}

/// The module `path` (as written in `module`) names: its longest prefix that is a file.
fn resolve(path: &str, module: &str, modules: &BTreeSet<String>) -> Option<String> {
    let mut segments: Vec<&str> = path.split("::").collect();
    let mut base: Vec<&str> = if module.is_empty() {
        Vec::new()
    } else {
        module.split("::").collect()
    };
    match segments.first() {
        Some(&"crate") => {
            base.clear();
            segments.remove(0);
        }
        Some(&"self") => {
            segments.remove(0);
        }
        Some(&"super") => {
            while segments.first() == Some(&"super") {
                segments.remove(0);
                base.pop();
            }
        }
        _ => {}
    }
    let full: Vec<&str> = base.into_iter().chain(segments).collect();
    (0..=full.len())
        .rev()
        .map(|n| full[..n].join("::"))
        .find(|m| modules.contains(m))
}

/// Which file imports which: an edge for every path naming another file's module.
fn import_graph() -> BTreeMap<String, BTreeSet<String>> {
    let files = source_files();
    let modules: BTreeSet<String> = files.iter().map(|(_, m, _)| m.clone()).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (_, module, text) in &files {
        let edges = graph.entry(module.clone()).or_default();
        for path in crate_paths(&code_of(text)) {
            if let Some(target) = resolve(&path, module, &modules)
                && &target != module
                && !target.is_empty()
            {
                edges.insert(target);
            }
        }
    }
    graph
}

/// The strongly connected components of more than one file (Tarjan).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        found: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let i = s.index.len();
        s.index.insert(v, i);
        s.low.insert(v, i);
        s.stack.push(v);
        s.on_stack.insert(v);
        let graph = s.graph;
        for w in graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                component.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.found
}

/// Circles found when this test was written, in folders whose files were not yet taken
/// apart: each line is the files of one circle. The list only shrinks: a circle that is
/// gone must leave it, and any other circle fails the test.
const KNOWN_CIRCLES: &[&str] = &[];

#[test]
fn no_files_import_each_other_in_a_circle() {
    let graph = import_graph();
    let found: Vec<String> = circles(&graph).into_iter().map(|c| c.join(", ")).collect();
    let new: Vec<&String> = found
        .iter()
        .filter(|c| !KNOWN_CIRCLES.contains(&c.as_str()))
        .collect();
    let gone: Vec<&&str> = KNOWN_CIRCLES
        .iter()
        .filter(|k| !found.iter().any(|c| c == *k))
        .collect();
    assert!(
        new.is_empty(),
        "{} import circles among files (each line: files that reach each other):\n{}",
        new.len(),
        new.iter()
            .map(|c| c.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        gone.is_empty(),
        "these circles are gone: take them off KNOWN_CIRCLES:\n{}",
        gone.iter().map(|c| **c).collect::<Vec<_>>().join("\n")
    );
}

/// A type is imported from the module that defines it: a module re-exports (`pub use`)
/// only what its own files define (a folder's `mod.rs` may gather its files' items),
/// never another module's. The crate root is the one exception: `lib.rs` is the
/// library's API.
#[test]
fn modules_re_export_only_their_own_items() {
    let files = source_files();
    let modules: BTreeSet<String> = files.iter().map(|(_, m, _)| m.clone()).collect();
    let mut found = Vec::new();
    for (file, module, text) in &files {
        if module.is_empty() {
            continue;
        }
        let code: Vec<char> = code_of(text).chars().collect();
        let text: String = code.iter().collect();
        for (at, _) in text.match_indices("use ") {
            let before: String = text[..at]
                .chars()
                .rev()
                .take_while(|c| *c != '\n' && *c != ';' && *c != '}')
                .collect::<String>()
                .chars()
                .rev()
                .collect();
            if !before.trim_start().starts_with("pub") {
                continue;
            }
            let mut paths = Vec::new();
            use_tree(&code, text[..at + 4].chars().count(), "", &mut paths);
            for path in paths {
                let first = path.split("::").next().unwrap_or_default();
                let child = format!("{module}::{first}");
                let path = if modules.contains(&child) {
                    format!("self::{path}")
                } else {
                    path
                };
                let Some(target) = resolve(&path, module, &modules) else {
                    continue;
                };
                let own = target.starts_with(&format!("{module}::"));
                let external = !["crate", "self", "super"]
                    .contains(&path.split("::").next().unwrap_or_default());
                if !own && !external {
                    let line = text[..at].matches('\n').count() + 1;
                    found.push(format!(
                        "{file}:{line}: {module} re-exports {path} (defined in {target})"
                    ));
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "re-exports of other modules' items:\n{}",
        found.join("\n")
    );
}

/// A results directory's `RunDir` is made only by the store (when it claims, locks or
/// opens one); the rest of the crate takes it from there.
#[test]
fn only_the_store_makes_a_run_dir() {
    let found: Vec<String> = source_files()
        .into_iter()
        .filter(|(file, _, _)| {
            file != "src/run_dir.rs" && file != "src/store.rs" && !file.starts_with("src/store/")
        })
        .filter(|(_, _, text)| code_of(text).contains("RunDir::new"))
        .map(|(file, _, _)| file)
        .collect();
    assert!(
        found.is_empty(),
        "RunDir made outside the store:\n{}",
        found.join("\n")
    );
}

/// Files outside `src/run_dir.rs` and the store that may name a results directory's
/// file names, and which: bare, in a message or the paths `run` prints (inside a
/// format string, never as a value a path is made of).
const BARE_FILE_NAMES: &[(&str, &[&str])] = &[
    (
        "src/cmd/output.rs",
        &["SUMMARY_JSON", "PLOTS_DIR", "TRIALS_CSV"],
    ),
    (
        "src/study/sequential.rs",
        &["SEQUENTIAL_JSON", "SEQUENTIAL_STATE_JSON"],
    ),
];

/// The `const` names of `src/run_dir.rs`: the file and folder names of a results
/// directory.
fn run_dir_file_names() -> Vec<String> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/run_dir.rs"))
            .unwrap();
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start();
            let rest = rest
                .strip_prefix("pub(crate) ")
                .or_else(|| rest.strip_prefix("pub "))
                .unwrap_or(rest);
            let name = rest.strip_prefix("const ")?.split(':').next()?.trim();
            Some(name.to_string())
        })
        .collect()
}

/// `code` without its `use` declarations.
fn without_uses(code: &str) -> String {
    let chars: Vec<char> = code.chars().collect();
    let mut out = String::new();
    let mut at = 0;
    while at < chars.len() {
        let starts_word =
            at == 0 || !(chars[at - 1].is_ascii_alphanumeric() || chars[at - 1] == '_');
        if starts_word && chars[at..].starts_with(&['u', 's', 'e', ' ']) {
            while at < chars.len() && chars[at] != ';' {
                at += 1;
            }
        } else {
            out.push(chars[at]);
        }
        at += 1;
    }
    out
}

/// Whether `word` occurs in `code` as a whole identifier.
fn names_word(code: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices(word)
        .any(|(at, _)| !code[..at].ends_with(ident) && !code[at + word.len()..].starts_with(ident))
}

/// Every path of a results directory is made by `RunDir` (`src/run_dir.rs`): no other
/// file joins one of its file names onto a bare path. Outside `run_dir.rs` and the
/// store (which makes `RunDir`s, and lists a directory's names to recognize a run) a
/// file names one only as listed in [`BARE_FILE_NAMES`], and there only inside a
/// format string, never in code.
#[test]
fn only_run_dir_joins_the_file_names_of_a_results_directory() {
    let names = run_dir_file_names();
    assert!(
        names.iter().any(|n| n == "MANIFEST") && names.iter().any(|n| n == "LOCK_FILE"),
        "the file names of src/run_dir.rs were not found: {names:?}"
    );
    let mut found = Vec::new();
    let mut listed_but_unused: BTreeSet<(&str, &str)> = BARE_FILE_NAMES
        .iter()
        .flat_map(|(file, allowed)| allowed.iter().map(move |name| (*file, *name)))
        .collect();
    for (file, _, text) in source_files() {
        if file == "src/run_dir.rs" || file == "src/store.rs" || file.starts_with("src/store/") {
            continue;
        }
        let code = code_of(&text);
        let mut named: BTreeSet<String> = BTreeSet::new();
        for path in crate_paths(&code) {
            let segments: Vec<&str> = path.split("::").collect();
            for pair in segments.windows(2) {
                if pair[0] == "run_dir" && (pair[1] == "*" || names.iter().any(|n| n == pair[1])) {
                    named.insert(pair[1].to_string());
                }
            }
        }
        // `use crate::run_dir;` then `run_dir::NAME`.
        for name in &names {
            if code.contains(&format!("run_dir::{name}")) {
                named.insert(name.clone());
            }
        }
        let allowed: &[&str] = BARE_FILE_NAMES
            .iter()
            .find(|(f, _)| *f == file)
            .map_or(&[], |(_, allowed)| allowed);
        let bare_code = without_uses(&code);
        for name in named {
            if !allowed.contains(&name.as_str()) {
                found.push(format!(
                    "{file} names run_dir::{name}; ask a RunDir for the path"
                ));
            } else if names_word(&bare_code, &name) {
                found.push(format!(
                    "{file} uses {name} in code, not in a message; ask a RunDir for the path"
                ));
            }
            listed_but_unused.retain(|&(f, n)| (f, n) != (file.as_str(), name.as_str()));
        }
    }
    assert!(
        found.is_empty(),
        "results-directory file names used outside src/run_dir.rs:\n{}",
        found.join("\n")
    );
    assert!(
        listed_but_unused.is_empty(),
        "BARE_FILE_NAMES lists names a file no longer uses (remove them): {listed_but_unused:?}"
    );
}

/// A suite reads as its file says once it is loaded: outside `src/suite/` nothing takes
/// a suite mutably, binds one to a mutable name or assigns to its fields, and the one
/// change a run makes (its containers' images made ready) happens only while the run's
/// specification is made (`src/study/spec.rs`), before the suite is shared.
#[test]
fn no_suite_changes_after_it_is_loaded() {
    let assigned = regex::Regex::new(r"\bsuite\.[a-z_]+(\.[a-z_]+)*\s*(=[^=>]|\+=|-=)").unwrap();
    let bound = regex::Regex::new(r"\bmut suite\b").unwrap();
    let mut found = Vec::new();
    for (file, _, text) in source_files() {
        if file.starts_with("src/suite/") {
            continue;
        }
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or(line);
            let mutable =
                code.contains("&mut Suite") || bound.is_match(code) || assigned.is_match(code);
            let prepared = code.contains(".prepare_containers(") && file != "src/study/spec.rs";
            if mutable || prepared {
                found.push(format!("{file}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "a suite changed after loading:\n{}",
        found.join("\n")
    );
}
