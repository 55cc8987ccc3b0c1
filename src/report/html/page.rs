//! Renders a [`Page`] as one self-contained HTML file: inline CSS and script, the data
//! as one JSON blob, plots as `data:` images, no network (a Content-Security-Policy
//! forbids any fetch; a large run's page may load its timelines from the files beside
//! it, [`super::run_data`]). The blob is escaped so that nothing in it, `</script>`
//! included, can end its `<script>` element.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::model::{Page, run_page, weekly_page};
use super::run_data::{
    remove_timeline_files, timelines_beside, write_run_data, write_timeline_files,
};
use super::script_json::ScriptJsonWriter;
use crate::error::{Error, Result};
use crate::fsutil::{write_atomic, write_atomic_with};
use crate::report::summary_data::Summary;
use crate::report::weekly::Weekly;
use crate::run_dir::RunDir;

/// `weekly.html` beside the weekly tables.
pub const WEEKLY_HTML: &str = "weekly.html";

const TEMPLATE: &str = include_str!("page.html");
const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// The HTML of a page.
pub fn render(page: &Page) -> Result<String> {
    let mut out = Vec::new();
    render_into(&mut out, page, |data| {
        serde_json::to_writer(data, page)
            .map_err(|e| Error::Tool(format!("cannot encode the page's data: {e}")))
    })?;
    String::from_utf8(out).map_err(|e| Error::Tool(format!("the page is not UTF-8: {e}")))
}

/// Writes the HTML of `page` into `out`, its data the JSON that `data` writes (through
/// a writer that escapes it).
fn render_into(
    out: &mut dyn Write,
    page: &Page,
    data: impl FnOnce(&mut dyn Write) -> Result<()>,
) -> Result<()> {
    let title = escape_text(&page.title);
    // The page's own scripts, and those of its timelines beside it when it has them.
    let script_src = match page.timelines {
        Some(_) => "'unsafe-inline' 'self'",
        None => "'unsafe-inline'",
    };
    let cannot_write = |e| Error::io("cannot write the page", e);
    let mut data = Some(data);
    // One pass over the template, so that a placeholder inside the data stays text.
    let mut rest = TEMPLATE;
    while let Some(start) = rest.find("{{") {
        out.write_all(&rest.as_bytes()[..start])
            .map_err(cannot_write)?;
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| Error::Tool("page template: unclosed placeholder".into()))?;
        let text = match &after[..end] {
            "title" => title.as_str(),
            "css" => CSS,
            "js" => JS,
            "script_src" => script_src,
            "data" => {
                let write = data
                    .take()
                    .ok_or_else(|| Error::Tool("page template: data twice".into()))?;
                let mut escaped = ScriptJsonWriter::new(&mut *out);
                write(&mut escaped)?;
                escaped.finish().map_err(cannot_write)?;
                ""
            }
            other => return Err(Error::Tool(format!("page template: unknown '{other}'"))),
        };
        out.write_all(text.as_bytes()).map_err(cannot_write)?;
        rest = &after[end + 2..];
    }
    out.write_all(rest.as_bytes()).map_err(cannot_write)
}

/// Writes `report.html` into `run_dir` from its summary and CSVs, a row at a time; for
/// a run of more than [`super::run_data::MAX_TRIALS_IN_PAGE`] trials, its timelines
/// into `report-timelines/` beside it ([`RunDir::report_timelines`]). Returns its path.
pub fn write_run_html(run_dir: &RunDir, summary: &Summary) -> Result<PathBuf> {
    let path = run_dir.report_html();
    crate::malloc_arenas::release_free_memory();
    let mut page = run_page(run_dir, summary)?;
    let beside = timelines_beside(run_dir)?;
    if beside {
        // The files first: the page that loads them comes after.
        write_timeline_files(run_dir)?;
        crate::malloc_arenas::release_free_memory();
        // The page loads them relative to itself: by the name of the folder beside it.
        page.timelines = run_dir
            .report_timelines()
            .file_name()
            .map(|name| name.to_string_lossy().into_owned());
    }
    write_atomic_with(&path, |out| {
        render_into(out, &page, |data| write_run_data(data, &page, run_dir))
    })?;
    if !beside {
        remove_timeline_files(run_dir)?;
    }
    Ok(path)
}

/// Writes `weekly.html` into `out`; returns its path.
pub fn write_weekly_html(out: &Path, weekly: &Weekly) -> Result<PathBuf> {
    let path = out.join(WEEKLY_HTML);
    write_atomic(&path, render(&weekly_page(weekly)?)?.as_bytes())?;
    Ok(path)
}

/// JSON made safe inside `<script type="application/json">`: `<`, `>` and `&` as
/// `\u003c`-style escapes (so no `</script>` or `<!--` can appear), and the line
/// separators JavaScript once treated as line ends. JSON outside strings holds none of
/// these, so the escapes are always inside strings and parse back to the same text.
pub fn escape_script_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

/// Text made safe as HTML element content or a quoted attribute.
pub fn escape_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOSTILE: &str = "</script><script>alert(1)</script><!-- {{js}} & \u{2028}";

    #[test]
    fn json_in_a_script_element_cannot_close_it_and_parses_back_unchanged() {
        let json = serde_json::to_string(&serde_json::json!({ "d": HOSTILE })).unwrap();
        let safe = escape_script_json(&json);
        // The writer that escapes a page's data as it is streamed does the same.
        let mut streamed = ScriptJsonWriter::new(Vec::new());
        streamed.write_all(json.as_bytes()).unwrap();
        assert_eq!(streamed.finish().unwrap(), safe.as_bytes());
        for bad in ["<", ">", "&", "\u{2028}"] {
            assert!(!safe.contains(bad), "{bad} in {safe}");
        }
        let back: serde_json::Value = serde_json::from_str(&safe).unwrap();
        assert_eq!(back["d"], HOSTILE);
    }

    #[test]
    fn a_hostile_title_is_text_and_a_placeholder_in_the_data_is_not_expanded() {
        let page = Page {
            kind: "weekly",
            title: HOSTILE.into(),
            notes: vec![HOSTILE.into()],
            verdict: None,
            tables: Vec::new(),
            plots: Vec::new(),
            metrics: Vec::new(),
            sessions: Default::default(),
            trials: Default::default(),
            shown: Vec::new(),
            timelines: None,
        };
        let html = render(&page).unwrap();
        // The template's own two scripts close; nothing else does.
        assert_eq!(html.matches("</script>").count(), 2, "{html}");
        assert_eq!(html.matches("<script").count(), 2);
        assert!(html.contains("<title>&lt;/script&gt;&lt;script&gt;alert(1)"));
        // The script appears once: `{{js}}` in the data stayed text.
        assert_eq!(html.matches("Renders a loopbench page").count(), 1);
        assert!(!html.contains("http://") && !html.contains("https://"));
    }
}
