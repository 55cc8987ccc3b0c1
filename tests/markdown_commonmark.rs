//! The Markdown list reader against a CommonMark renderer (markdown-it-py, installed from
//! PyPI into a cached virtual environment, `common::python`): over generated lists made
//! of entries (their checkboxes written plain, escaped or as character references),
//! comments, code spans, fences, quotes, headings and raw HTML at many indentations, every claim a person sees in the rendered page (a checked task item in
//! the HTML, once the browser has hidden its comments) is a claim the harness reads.
//! The harness may read more (where containers make the readings differ, it shows
//! more), never less: a claim it missed would let an agent hide a premature done.

use crate::common;

use common::python::venv;
use loopbench::feature_list::{ListFormat, parse};

/// The CommonMark renderer the reader is held to.
const MARKDOWN_IT: &str = "markdown-it-py==4.3.0";

/// Renders each document of the JSON array in `argv[1]` as CommonMark, removes what a
/// browser hides (its comments, and all after one left open), and prints, per document,
/// the ids of the checked task items left.
const CHECKED_ITEMS: &str = r#"
import json, re, sys
from markdown_it import MarkdownIt
md = MarkdownIt("commonmark")
item = re.compile(r"<li>(?:\s*<p>)?\[[xX]\] <strong>(F\d+)</strong>")
comment = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
docs = json.load(open(sys.argv[1]))
print(json.dumps([item.findall(comment.sub("", md.render(d))) for d in docs]))
"#;

/// `count` lists, the same every run: up to eight lines each, an entry (any marker, at
/// any indentation, checked or not, with a tail that may hold a comment or a code span)
/// or another line that may open or close something.
fn generated(count: usize) -> Vec<String> {
    const INDENTS: &[&str] = &[
        "", "", "", " ", "  ", "   ", "    ", "> ", ">  ", "  > ", "\t",
    ];
    const MARKERS: &[&str] = &["-", "*", "+", "1.", "2)"];
    const TAILS: &[&str] = &[
        "",
        " text",
        " <!--",
        " a <!-- b",
        " -->",
        " `<!--`",
        " x --> y",
        " `a",
    ];
    const OTHERS: &[&str] = &[
        "<!--",
        "-->",
        "<!-- x -->",
        "`<!--`",
        "`",
        "``",
        "\\<!--",
        "prose",
        "prose <!--",
        "text -->",
        "## H",
        "```",
        "~~~",
        "***",
        "---",
        "===",
        "",
        "",
        "<!-- a",
        "b -->",
        "<div>",
        "</div>",
        "  - step",
        "[x] **F9** text",
    ];
    // xorshift64*: a fixed sequence, no dependency.
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = |below: usize| {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        (state.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % below
    };
    (0..count)
        .map(|_| {
            let mut doc = String::new();
            let mut entries = 0;
            for _ in 0..1 + next(8) {
                doc += INDENTS[next(INDENTS.len())];
                if next(100) < 45 {
                    entries += 1;
                    let marker = MARKERS[next(MARKERS.len())];
                    // Half of them plain; the others written as a person still reads
                    // them: escaped, or as character references.
                    const BOXES: &[&str] = &[
                        "[x]",
                        "[ ]",
                        "[x]",
                        "[ ]",
                        "\\[x\\]",
                        "[&#120;]",
                        "&#91;X&#93;",
                        "\\[ \\]",
                        "[&nbsp;]",
                        "[&#121;]",
                    ];
                    let box_ = BOXES[next(BOXES.len())];
                    let tail = TAILS[next(TAILS.len())];
                    // An id as a person reads it, now and then written with a
                    // character reference.
                    let id = if next(10) == 0 {
                        format!("&#70;{entries}")
                    } else {
                        format!("F{entries}")
                    };
                    doc += &format!("{marker} {box_} **{id}**{tail}");
                } else {
                    doc += OTHERS[next(OTHERS.len())];
                }
                doc.push('\n');
            }
            doc
        })
        .collect()
}

#[test]
fn every_claim_a_commonmark_page_shows_is_read() {
    let test = "markdown_commonmark::every_claim_a_commonmark_page_shows_is_read";
    let Some(venv) = venv(test, "markdown-it", &[MARKDOWN_IT]) else {
        return;
    };
    let docs = generated(20_000);
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("docs.json");
    std::fs::write(&file, serde_json::to_string(&docs).unwrap()).unwrap();
    let shown: Vec<Vec<String>> =
        serde_json::from_str(&venv.run_script(CHECKED_ITEMS, &[file.as_os_str()])).unwrap();
    assert_eq!(shown.len(), docs.len());
    let mut compared = 0;
    let mut missed = Vec::new();
    for (doc, shown) in docs.iter().zip(&shown) {
        // A list with an id given twice is unparseable: no claim is read from it.
        let Ok(list) = parse(ListFormat::Markdown, doc) else {
            continue;
        };
        compared += 1;
        let read: Vec<&str> = list
            .entries
            .iter()
            .filter(|e| e.passes)
            .map(|e| e.id.as_str())
            .collect();
        if shown.iter().any(|id| !read.contains(&id.as_str())) {
            missed.push(format!("{doc:?}: shown {shown:?}, read {read:?}"));
        }
    }
    // Most generated lists parse; a generator that stopped making them would test nothing.
    assert!(compared > docs.len() / 2, "{compared} of {}", docs.len());
    assert!(
        missed.is_empty(),
        "{} lists with a claim the page shows and the harness misses:\n{}",
        missed.len(),
        missed[..missed.len().min(10)].join("\n")
    );
}
