//! What `check-task` found, as one model: the JSON object of docs/formats.md (field
//! names stable) and the text tables printed from it.

use std::fmt::Write as _;

use serde::Serialize;

/// Every task checked.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// One entry per task, in the order given.
    pub tasks: Vec<TaskReport>,
}

impl Report {
    /// Whether every control of every task held.
    pub fn ok(&self) -> bool {
        self.tasks.iter().all(|t| t.ok)
    }
}

/// One task's controls.
#[derive(Debug, Clone, Serialize)]
pub struct TaskReport {
    /// The task's name.
    pub task: String,
    /// No problem was found (controls that could not run are not problems).
    pub ok: bool,
    /// Controls that could not run, e.g. `oracle` and `alone` without `oracle/gold`.
    pub skipped: Vec<&'static str>,
    /// Every control that did not hold, with its reason.
    pub problems: Vec<Problem>,
    /// Feature by feature, in `task.toml` order.
    pub features: Vec<FeatureRow>,
    /// Why controls were skipped, and checks past half their time limit: shown in the
    /// text output only.
    #[serde(skip)]
    pub notes: Vec<String>,
    /// The task directory, for the text output.
    #[serde(skip)]
    pub dir: String,
}

/// A control that did not hold.
#[derive(Debug, Clone, Serialize)]
pub struct Problem {
    /// `nop`, `oracle`, `alone`, `repeat`, `tests` or `time`.
    pub control: &'static str,
    /// The feature it is about, if any.
    pub feature: Option<String>,
    /// The test file it is about (`tests` control), if any.
    pub file: Option<String>,
    /// What went wrong, with the exit status where a check ran.
    pub reason: String,
    /// What to change in the task (text output only).
    #[serde(skip)]
    pub fix: String,
    /// The end of the failing check's output (text output only).
    #[serde(skip)]
    pub output: Option<String>,
}

/// How one per-feature control came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CellState {
    /// The control held.
    Ok,
    /// It did not (the reason is among the task's problems).
    Fail,
    /// It could not run.
    Skipped,
}

impl CellState {
    fn word(self) -> &'static str {
        match self {
            CellState::Ok => "ok",
            CellState::Fail => "FAIL",
            CellState::Skipped => "-",
        }
    }
}

/// One feature's row.
#[derive(Debug, Clone, Serialize)]
pub struct FeatureRow {
    /// The feature id.
    pub id: String,
    /// Its verify fails on `repo/` as it is.
    pub nop: CellState,
    /// After its gold (in dependency order) it passes, and breaks nothing before it.
    pub oracle: CellState,
    /// It passes with only its gold and its `depends_on` closure.
    pub alone: CellState,
    /// Every check of it gave the same answer each time.
    pub repeat: CellState,
    /// The slowest run of its verify, in milliseconds (scratch copy included).
    pub max_ms: u64,
}

/// Lines of a failing check's output shown in the text report.
const OUTPUT_LINES: usize = 8;

impl Report {
    /// The text report: one table per task, then its problems with what to fix.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for task in &self.tasks {
            task.write_text(&mut out);
        }
        let bad = self.tasks.iter().filter(|t| !t.ok).count();
        let _ = writeln!(
            out,
            "{} of {} tasks can measure: {}",
            self.tasks.len() - bad,
            self.tasks.len(),
            if bad == 0 {
                "every control held"
            } else {
                "fix the problems above before a paid run"
            }
        );
        out
    }
}

impl TaskReport {
    fn write_text(&self, out: &mut String) {
        let esc = |s: &str| crate::terminal::line(s).into_owned();
        let _ = writeln!(
            out,
            "task {} ({}): {}",
            esc(&self.task),
            esc(&self.dir),
            if self.ok {
                "ok".to_string()
            } else {
                format!("{} problems", self.problems.len())
            }
        );
        let width = self
            .features
            .iter()
            .map(|f| f.id.len())
            .max()
            .unwrap_or(0)
            .max("feature".len());
        let _ = writeln!(
            out,
            "  {:<width$}  {:<4}  {:<6}  {:<5}  {:<6}  {:>6}",
            "feature", "nop", "oracle", "alone", "repeat", "max ms"
        );
        for f in &self.features {
            let _ = writeln!(
                out,
                "  {:<width$}  {:<4}  {:<6}  {:<5}  {:<6}  {:>6}",
                esc(&f.id),
                f.nop.word(),
                f.oracle.word(),
                f.alone.word(),
                f.repeat.word(),
                f.max_ms
            );
        }
        for note in &self.notes {
            let _ = writeln!(out, "  note: {}", esc(note));
        }
        for p in &self.problems {
            let about = match (&p.feature, &p.file) {
                (Some(f), _) => format!(" {}", esc(f)),
                (None, Some(file)) => format!(" {}", esc(file)),
                (None, None) => String::new(),
            };
            let _ = writeln!(out, "  problem [{}]{about}: {}", p.control, esc(&p.reason));
            if let Some(output) = p.output.as_deref().filter(|o| !o.trim().is_empty()) {
                let _ = writeln!(out, "    output ends:");
                let lines: Vec<&str> = output.trim_end().lines().collect();
                for line in &lines[lines.len().saturating_sub(OUTPUT_LINES)..] {
                    let _ = writeln!(out, "    | {}", esc(line));
                }
            }
            let _ = writeln!(out, "    fix: {}", esc(&p.fix));
        }
        let _ = writeln!(out);
    }
}
