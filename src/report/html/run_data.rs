//! The data of a run's page written as the tables are read, a row at a time, so that
//! writing report.html holds no more than one row whatever the size of the run. Up to
//! [`MAX_TRIALS_IN_PAGE`] trials the page holds every session; above it the page holds
//! the tables, the verdict, every trial's row and each session's filter mask, and the
//! sessions themselves (the timelines, with their evidence) go into files beside it,
//! `report-timelines/NNNN.js` ([`RunDir::report_timelines`]), which the page loads with
//! a `<script>` element when a trial is shown, and each trial's steps (what the agent
//! did, [`super::steps`]) into a file of its own there, loaded when the trial is
//! opened: from `file://` too, with no network.

use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use super::model::{Page, PageMetric, PagePlot, PageVerdict};
use super::page_table::PageTable;
use super::rows::{TableRows, csv_row_count};
use super::script_file::{ScriptFile, encode, write};
use super::steps::{StepFile, StepsBeside, steps_summary, write_steps_in_page};
use crate::error::{Error, IoContext, Result, ResultsDirError};
use crate::fsutil::remove_if_present;
use crate::rates::Unit;
use crate::run_dir::RunDir;

/// The most trials whose timelines report.html holds itself (about 12 MB of page for
/// runs like the default suite's): a browser opens such a page in a second or two;
/// larger runs get their timelines in files beside it.
pub const MAX_TRIALS_IN_PAGE: usize = 2_000;
/// Trials per file of `report-timelines/`: a page of 20 trials loads one or two.
pub const TRIALS_PER_TIMELINE_FILE: usize = 100;
/// The columns of the page's session rows when the timelines are beside it: enough to
/// list and filter the trials.
const SESSION_SUMMARY_COLUMNS: [&str; 6] =
    ["trial_id", "arm", "task", "session", "against", "timeline"];

/// The page's fields before its rows, in the order of [`Page`].
#[derive(Serialize)]
struct PageHead<'a> {
    kind: &'a str,
    title: &'a str,
    notes: &'a [String],
    verdict: &'a Option<PageVerdict>,
    tables: &'a [PageTable],
    plots: &'a [PagePlot],
    metrics: &'a [PageMetric],
}

/// Whether the timelines of the run in `run_dir` go beside its page: more trials in
/// `trials.csv` than [`MAX_TRIALS_IN_PAGE`].
pub fn timelines_beside(run_dir: &RunDir) -> Result<bool> {
    Ok(csv_row_count(&run_dir.trials_csv())? > MAX_TRIALS_IN_PAGE)
}

/// Writes the JSON of `page` (a run's page, its rows left empty) into `out`, which
/// escapes it, with the rows of the run's tables streamed from `run_dir`: every
/// session's, or, when `page.timelines` is set, a summary of each (the rest in the
/// files [`write_timeline_files`] writes). The bytes are those of serializing the page
/// with every row held.
pub fn write_run_data(out: &mut dyn Write, page: &Page, run_dir: &RunDir) -> Result<()> {
    let head = PageHead {
        kind: page.kind,
        title: &page.title,
        notes: &page.notes,
        verdict: &page.verdict,
        tables: &page.tables,
        plots: &page.plots,
        metrics: &page.metrics,
    };
    let mut json = encode(&head)?;
    // Open the object again for the rows.
    json.pop();
    json.push_str(",\"sessions\":");
    write(out, json.as_bytes())?;
    let sessions = run_dir.sessions_csv();
    match page.timelines {
        None => {
            let jsonl = run_dir.sessions_jsonl();
            let rows = TableRows::open(&sessions, Unit::Session, Some(&jsonl))?;
            write_table(out, &rows.columns.clone(), rows, Ok)?;
        }
        Some(_) => {
            let rows = TableRows::open(&sessions, Unit::Session, None)?;
            let pick: Vec<usize> = SESSION_SUMMARY_COLUMNS[..5]
                .iter()
                .map(|c| rows.columns.iter().position(|x| x == c))
                .collect::<Option<_>>()
                .ok_or_else(|| bad_sessions(&sessions))?;
            let mut files = TimelineFiles::new(pick[0]);
            write_table(
                out,
                &SESSION_SUMMARY_COLUMNS.map(String::from),
                rows,
                |row| {
                    let file = files.of(&row);
                    let mut summary: Vec<Value> = pick.iter().map(|&i| row[i].clone()).collect();
                    summary.push(Value::from(file));
                    Ok(summary)
                },
            )?;
        }
    }
    write(out, b",\"trials\":")?;
    let trials = TableRows::open(&run_dir.trials_csv(), Unit::Trial, None)?;
    write_table(out, &trials.columns.clone(), trials, Ok)?;
    write(out, b",\"shown\":")?;
    write(out, encode(&page.shown)?.as_bytes())?;
    if page.timelines.is_none() {
        write_steps_in_page(out, run_dir)?;
    }
    if let Some(dir) = &page.timelines {
        write(out, b",\"timelines\":")?;
        write(out, encode(dir)?.as_bytes())?;
    }
    write(out, b"}")
}

/// Writes the timelines of the run in `run_dir` into `report-timelines/` beside its page,
/// replacing what was there: every session's row (with `against`, `evidence` and
/// `steps`), the trials in the order of `sessions.csv`, [`TRIALS_PER_TIMELINE_FILE`] to
/// a file; each file `NNNN.js` calls `loopbenchTimelines(N, {"columns": [...], "rows":
/// [...]})`. A session with a trajectory has its steps in its trial's own file,
/// `steps-NNNNN.js` ([`StepFile`]), and their summary ([`steps_summary`]) in its row's
/// `steps`, so that the page loads a trial's steps only when the trial is opened.
pub fn write_timeline_files(run_dir: &RunDir) -> Result<()> {
    let sessions = run_dir.sessions_csv();
    let mut rows = TableRows::open(&sessions, Unit::Session, Some(&run_dir.sessions_jsonl()))?;
    let column = |name: &str| rows.columns.iter().position(|c| c == name);
    let (Some(trial), Some(session)) = (column("trial_id"), column("session")) else {
        return Err(bad_sessions(&sessions));
    };
    let mut steps = StepsBeside::open(run_dir)?;
    // Written aside and moved in whole, so that a page never sees half of them.
    let staging = run_dir.report_timelines_staging();
    remove_if_present(&staging)?;
    std::fs::create_dir(&staging)
        .io_context(|| format!("cannot create '{}'", staging.display()))?;
    let mut columns = rows.columns.clone();
    columns.push("steps".into());
    let head = |n: usize| -> Result<String> {
        Ok(format!(
            "loopbenchTimelines({n},{{\"columns\":{},\"rows\":[",
            encode(&columns)?
        ))
    };
    let mut files = TimelineFiles::new(trial);
    let mut current: Option<(usize, ScriptFile)> = None;
    let mut step_file: Option<(usize, StepFile)> = None;
    while let Some(mut row) = rows.next_row()? {
        let n = files.of(&row);
        if current.as_ref().is_none_or(|(open, _)| *open != n) {
            if let Some((_, file)) = current.take() {
                file.finish(b"]});\n")?;
            }
            let path = staging.join(format!("{n:04}.js"));
            current = Some((n, ScriptFile::create(path, &head(n)?)?));
        }
        let of_session = match (steps.as_mut(), row[trial].as_str(), row[session].as_u64()) {
            (Some(steps), Some(id), Some(s)) => match u32::try_from(s) {
                Ok(s) => steps.of(id, s)?.map(|found| (id.to_string(), s, found)),
                Err(_) => None,
            },
            _ => None,
        };
        let summary = match of_session {
            Some((id, s, found)) => {
                let t = files.trial();
                if step_file.as_ref().is_none_or(|(open, _)| *open != t) {
                    if let Some((_, file)) = step_file.take() {
                        file.finish()?;
                    }
                    step_file = Some((t, StepFile::create(&staging, t)?));
                }
                if let Some((_, file)) = step_file.as_mut() {
                    file.session(&id, s, &found)?;
                }
                steps_summary(t, &found)
            }
            None => Value::Null,
        };
        row.push(summary);
        if let Some((_, file)) = current.as_mut() {
            file.item(&encode(&row)?)?;
        }
    }
    if let Some((_, file)) = current.take() {
        file.finish(b"]});\n")?;
    }
    if let Some((_, file)) = step_file.take() {
        file.finish()?;
    }
    let dir = run_dir.report_timelines();
    remove_if_present(&dir)?;
    std::fs::rename(&staging, &dir)
        .io_context(|| format!("cannot move '{}' to '{}'", staging.display(), dir.display()))
}

/// Removes `report-timelines/` from `run_dir` (a page that holds its timelines needs none).
pub fn remove_timeline_files(run_dir: &RunDir) -> Result<()> {
    remove_if_present(&run_dir.report_timelines())
}

/// Numbers the timeline files: the trials in the order their rows come,
/// [`TRIALS_PER_TIMELINE_FILE`] to a file.
struct TimelineFiles {
    trial_column: usize,
    last: Option<Value>,
    trials: usize,
}

impl TimelineFiles {
    fn new(trial_column: usize) -> TimelineFiles {
        TimelineFiles {
            trial_column,
            last: None,
            trials: 0,
        }
    }

    /// The file of the session on `row`.
    fn of(&mut self, row: &[Value]) -> usize {
        let trial = &row[self.trial_column];
        if self.last.as_ref() != Some(trial) {
            self.trials += 1;
            self.last = Some(trial.clone());
        }
        self.trial() / TRIALS_PER_TIMELINE_FILE
    }

    /// The number of the trial of the last row, from 0.
    fn trial(&self) -> usize {
        self.trials.saturating_sub(1)
    }
}

/// Writes `{"columns":[...],"rows":[...]}`: `columns`, and each of `rows` as `each`
/// makes it.
fn write_table(
    out: &mut dyn Write,
    columns: &[String],
    mut rows: TableRows,
    mut each: impl FnMut(Vec<Value>) -> Result<Vec<Value>>,
) -> Result<()> {
    write(out, b"{\"columns\":")?;
    write(out, encode(columns)?.as_bytes())?;
    write(out, b",\"rows\":[")?;
    let mut first = true;
    while let Some(row) = rows.next_row()? {
        if !first {
            write(out, b",")?;
        }
        first = false;
        write(out, encode(&each(row)?)?.as_bytes())?;
    }
    write(out, b"]}")
}

fn bad_sessions(path: &Path) -> Error {
    ResultsDirError::NoKeyColumns {
        path: path.to_path_buf(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::super::rows::Rows;
    use super::super::script_json::ScriptJsonWriter;
    use super::*;
    use crate::store::open_run_dir;

    /// A run's tables and session records in a temporary directory (kept while the
    /// first is held).
    fn run_dir() -> (tempfile::TempDir, RunDir) {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_run_dir(tmp.path());
        std::fs::write(
            dir.sessions_csv(),
            "trial_id,arm,task,session,kind,premature_claims,error\n\
             a:t:0,a,t,0,initializer,0,\n\
             a:t:0,a,t,1,coding,1,\"</script> \u{2028}\"\n\
             b:t:0,b,t,0,initializer,0,\n",
        )
        .unwrap();
        std::fs::write(
            dir.trials_csv(),
            "trial_id,arm,task,features_verified,premature_victory\na:t:0,a,t,3,true\nb:t:0,b,t,0,false\n",
        )
        .unwrap();
        std::fs::write(
            dir.sessions_jsonl(),
            "{\"trial_id\":\"a:t:0\",\"session\":1,\"evidence\":{\"premature\":[\"<b>\"]}}\n",
        )
        .unwrap();
        (tmp, dir)
    }

    fn page() -> Page {
        Page {
            kind: "run",
            title: "t & <u>".into(),
            notes: vec!["n".into()],
            verdict: None,
            tables: Vec::new(),
            plots: Vec::new(),
            metrics: Vec::new(),
            sessions: Rows::default(),
            trials: Rows::default(),
            shown: vec!["premature_claims".into()],
            timelines: None,
        }
    }

    #[test]
    fn the_streamed_data_is_the_page_serialized_with_every_row_held() {
        let (_tmp, dir) = run_dir();
        let mut held = page();
        held.sessions = TableRows::open(
            &dir.sessions_csv(),
            Unit::Session,
            Some(&dir.sessions_jsonl()),
        )
        .unwrap()
        .collect()
        .unwrap();
        held.trials = TableRows::open(&dir.trials_csv(), Unit::Trial, None)
            .unwrap()
            .collect()
            .unwrap();
        let mut want = ScriptJsonWriter::new(Vec::new());
        want.write_all(serde_json::to_string(&held).unwrap().as_bytes())
            .unwrap();
        let want = String::from_utf8(want.finish().unwrap()).unwrap();
        let mut out = ScriptJsonWriter::new(Vec::new());
        write_run_data(&mut out, &page(), &dir).unwrap();
        let got = String::from_utf8(out.finish().unwrap()).unwrap();
        assert_eq!(got, want);
    }

    #[test]
    fn beside_the_page_each_session_is_summarized_and_its_row_is_in_its_file() {
        let (_tmp, dir) = run_dir();
        let mut page = page();
        page.timelines = Some("report-timelines".into());
        let mut out = Vec::new();
        write_run_data(&mut out, &page, &dir).unwrap();
        let data: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            data["sessions"]["columns"],
            serde_json::json!(SESSION_SUMMARY_COLUMNS)
        );
        assert_eq!(data["sessions"]["rows"][1][0], "a:t:0");
        assert_eq!(data["sessions"]["rows"][1][5], 0, "the first file");
        assert_eq!(data["timelines"], "report-timelines");
        assert_eq!(data["trials"]["rows"].as_array().unwrap().len(), 2);

        write_timeline_files(&dir).unwrap();
        let file = std::fs::read_to_string(dir.report_timelines().join("0000.js")).unwrap();
        let json = file
            .strip_prefix("loopbenchTimelines(0,")
            .and_then(|f| f.strip_suffix(");\n"))
            .unwrap();
        assert!(
            !json.contains("</script>") && !json.contains('\u{2028}'),
            "{json}"
        );
        let table: Value = serde_json::from_str(json).unwrap();
        assert_eq!(table["rows"].as_array().unwrap().len(), 3);
        assert_eq!(table["rows"][1][6], "</script> \u{2028}");
        assert_eq!(table["rows"][1][8]["premature"][0], "<b>");
        remove_timeline_files(&dir).unwrap();
        assert!(!dir.report_timelines().exists());
    }
}
