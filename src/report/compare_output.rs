//! What `loopbench compare` writes: the table model (CSV and JSON, with the per-task rows
//! as a `by_task` array under `--by-task`), the Markdown verdict tables and the JUnit
//! report, and the job summary of a GitHub Actions run it appends to.

use super::aggregate::Count;
use super::compare::{Comparison, Judgement, TaskRow, Verdict};
use super::export::{Cell, Document};
use super::format::{pct, pp, pvalue};
use super::notes::SIMULATED_NOTE;
use super::table::{Align, Table};
use crate::error::{Error, Result};
use crate::rates::{Gate, Metric};

impl Comparison {
    /// The table model of a comparison: one row per (metric, arm).
    pub fn document(&self) -> Document {
        let mut rows = Vec::new();
        for (metric, verdicts) in &self.metrics {
            for v in verdicts {
                rows.push(vec![
                    Cell::Text(metric.name().to_string()),
                    Cell::Text(v.arm.clone()),
                    Cell::Count(v.base.k),
                    Cell::Count(v.base.n),
                    Cell::number(v.base.rate()),
                    Cell::Count(v.new.k),
                    Cell::Count(v.new.n),
                    Cell::number(v.new.rate()),
                    Cell::number(v.judgement.change),
                    Cell::number(v.judgement.p),
                    Cell::Bool(v.judgement.regression),
                    Cell::Bool(v.judgement.stratified),
                ]);
            }
        }
        Document {
            name: "compare",
            columns: vec![
                "metric",
                "arm",
                "base_k",
                "base_n",
                "base_rate",
                "new_k",
                "new_n",
                "new_rate",
                "change",
                "p",
                "regression",
                "stratified",
            ],
            rows,
            markdown: render(self),
        }
    }

    /// The JSON of `compare --format json`: an array of verdicts, one per (metric, arm),
    /// keyed by [`Comparison::document`]'s columns; with `--by-task` each carries a
    /// `by_task` array of per-task rows (`task, base_k, base_n, new_k, new_n, base_rate,
    /// new_rate, change, p`).
    pub fn to_json(&self) -> Result<String> {
        let text = super::export::export_text(&self.document(), "json")?;
        if !self.show_by_task {
            return Ok(text);
        }
        let mut verdicts: Vec<serde_json::Map<String, serde_json::Value>> =
            serde_json::from_str(&text)
                .map_err(|e| Error::Tool(format!("cannot encode compare.json: {e}")))?;
        let all = self.metrics.iter().flat_map(|(_, v)| v);
        for (object, verdict) in verdicts.iter_mut().zip(all) {
            let rows: Vec<serde_json::Value> = verdict
                .by_task
                .iter()
                .map(|t| {
                    serde_json::json!({
                        "task": t.counts.task,
                        "base_k": t.counts.base.k,
                        "base_n": t.counts.base.n,
                        "new_k": t.counts.arm.k,
                        "new_n": t.counts.arm.n,
                        "base_rate": t.counts.base.rate(),
                        "new_rate": t.counts.arm.rate(),
                        "change": t.change,
                        "p": t.p,
                    })
                })
                .collect();
            object.insert("by_task".into(), serde_json::Value::Array(rows));
        }
        let mut out = serde_json::to_string_pretty(&verdicts)
            .map_err(|e| Error::Tool(format!("cannot encode compare.json: {e}")))?;
        out.push('\n');
        Ok(out)
    }

    /// A JUnit XML report: one test suite per metric, one test case per arm, failed
    /// when the arm regressed.
    pub fn to_junit(&self) -> String {
        let esc = |s: &str| {
            s.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
                .replace('"', "&quot;")
        };
        let tests: usize = self.metrics.iter().map(|(_, v)| v.len()).sum();
        let mut out = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"loopbench compare\" tests=\"{tests}\" failures=\"{}\">\n",
            self.regressions()
        );
        for (metric, verdicts) in &self.metrics {
            let failures = verdicts.iter().filter(|v| v.judgement.regression).count();
            out += &format!(
                "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\">\n",
                esc(metric.name()),
                verdicts.len()
            );
            for v in verdicts {
                let mut detail = format!(
                    "{}: base {}/{}, new {}/{}, change {}, {} {}",
                    metric.name(),
                    v.base.k,
                    v.base.n,
                    v.new.k,
                    v.new.n,
                    v.judgement.change.map(pp).unwrap_or_else(|| "none".into()),
                    if v.judgement.stratified {
                        "stratified by task (Mantel–Haenszel change), one-sided CMH p"
                    } else {
                        "one-sided Fisher p"
                    },
                    v.judgement.p.map(pvalue).unwrap_or_else(|| "none".into()),
                );
                if self.show_by_task {
                    for t in &v.by_task {
                        detail += &format!("\n  {}", task_line(t));
                    }
                }
                out += &format!(
                    "    <testcase classname=\"{}\" name=\"{}\"",
                    esc(metric.name()),
                    esc(&v.arm)
                );
                if v.judgement.regression {
                    let message = if metric.def().gate == Gate::Differs {
                        "differs"
                    } else {
                        "regression"
                    };
                    out += &format!(
                        ">\n      <failure message=\"{message}\">{}</failure>\n    </testcase>\n",
                        esc(&detail)
                    );
                } else {
                    out += &format!(
                        ">\n      <system-out>{}</system-out>\n    </testcase>\n",
                        esc(&detail)
                    );
                }
            }
            out += "  </testsuite>\n";
        }
        out += "</testsuites>\n";
        out
    }
}

/// One task's row as a line: "task a: base 3/10, new 5/10, change +20.0 pp, one-sided
/// Fisher p 0.32".
fn task_line(t: &TaskRow) -> String {
    let c = &t.counts;
    format!(
        "task {}: base {}/{}, new {}/{}, change {}, one-sided Fisher p {}",
        c.task,
        c.base.k,
        c.base.n,
        c.arm.k,
        c.arm.n,
        t.change.map(pp).unwrap_or_else(|| "none".into()),
        t.p.map(pvalue).unwrap_or_else(|| "none".into()),
    )
}

/// The verdict text of one judgement of `metric`.
pub fn verdict_text(metric: Metric, j: &Judgement) -> String {
    let text = match (j.regression, j.change) {
        (true, _) if metric.def().gate == Gate::Differs => "**DIFFERS**",
        (true, _) => "**REGRESSION**",
        (false, None) => "no data",
        (false, Some(_)) => "ok",
    };
    if j.stratified {
        format!("{text} (by task)")
    } else {
        text.to_string()
    }
}

/// The per-task rows of one metric's verdicts (`--by-task`): per arm and task, both
/// runs' counts and rates, the change and its one-sided Fisher p.
fn by_task_table(verdicts: &[Verdict]) -> String {
    let mut table = Table::new([
        ("arm", Align::Left),
        ("task", Align::Left),
        ("base k / n", Align::Right),
        ("base rate", Align::Right),
        ("new k / n", Align::Right),
        ("new rate", Align::Right),
        ("change", Align::Right),
        ("p (one-sided)", Align::Right),
    ]);
    let rate = |c: Count| c.rate().map(pct).unwrap_or_else(|| "–".into());
    for v in verdicts {
        for t in &v.by_task {
            let c = &t.counts;
            table.push(vec![
                v.arm.clone(),
                c.task.clone(),
                format!("{} / {}", c.base.k, c.base.n),
                rate(c.base),
                format!("{} / {}", c.arm.k, c.arm.n),
                rate(c.arm),
                t.change.map(pp).unwrap_or_default(),
                t.p.map(pvalue).unwrap_or_default(),
            ]);
        }
    }
    format!("\nBy task:\n\n{}", table.to_markdown())
}

/// Markdown for a CI job summary: one verdict table per metric and a closing line.
pub fn render(c: &Comparison) -> String {
    let mut out = String::from("# loopbench compare\n\n");
    if c.simulated {
        out += &format!("> **Note — {SIMULATED_NOTE}.**\n\n");
    }
    out += &format!(
        "Rule: a regression is a change in the worse direction larger than {} whose \
         one-sided Fisher exact p (H1: the new run is worse) is below {}.\n",
        pp(c.rule.max_increase).trim_start_matches('+'),
        c.rule.alpha
    );
    if c.metrics
        .iter()
        .flat_map(|(_, v)| v)
        .any(|v| v.judgement.stratified)
    {
        out += "Where both runs span two or more tasks, the change is the Mantel–Haenszel \
                difference over the tasks and p the one-sided Cochran–Mantel–Haenszel p \
                (stratified by task; `by task` in the verdict column).\n";
    }
    let differs: Vec<Metric> = Metric::ALL
        .into_iter()
        .filter(|m| m.def().gate == Gate::Differs)
        .collect();
    if c.metrics.iter().any(|(m, _)| differs.contains(m)) {
        out += &format!(
            "{} fails the comparison when it differs between the runs by more than {}, \
             either way: the runs did not measure the same sessions.\n",
            differs
                .iter()
                .map(|m| m.name())
                .collect::<Vec<_>>()
                .join(", "),
            pp(c.rule.max_increase).trim_start_matches('+'),
        );
    }
    for (metric, verdicts) in &c.metrics {
        let direction = if metric.def().gate == Gate::Differs {
            "any difference beyond the bound fails"
        } else if metric.higher_is_worse() {
            "higher is worse"
        } else {
            "lower is worse"
        };
        out += &format!("\n## {metric} ({direction})\n\n");
        let mut table = Table::new([
            ("arm", Align::Left),
            ("base k / n", Align::Right),
            ("base rate", Align::Right),
            ("new k / n", Align::Right),
            ("new rate", Align::Right),
            ("change", Align::Right),
            ("p (one-sided)", Align::Right),
            ("verdict", Align::Left),
        ]);
        for v in verdicts {
            let rate = |c: Count| c.rate().map(pct).unwrap_or_else(|| "–".into());
            table.push(vec![
                v.arm.clone(),
                format!("{} / {}", v.base.k, v.base.n),
                rate(v.base),
                format!("{} / {}", v.new.k, v.new.n),
                rate(v.new),
                v.judgement.change.map(pp).unwrap_or_default(),
                v.judgement.p.map(pvalue).unwrap_or_default(),
                verdict_text(*metric, &v.judgement),
            ]);
        }
        out += &table.to_markdown();
        if c.show_by_task {
            out += &by_task_table(verdicts);
        }
    }
    if !c.only_base.is_empty() {
        out += &format!(
            "\nOnly in the base run (not compared): {}.\n",
            c.only_base.join(", ")
        );
    }
    if !c.only_new.is_empty() {
        out += &format!(
            "\nOnly in the new run (not compared): {}.\n",
            c.only_new.join(", ")
        );
    }
    let differing = c.differing();
    out += &match c.regressions() - differing.len() {
        0 => "\n**Result: no regression.**\n".to_string(),
        1 => "\n**Result: 1 regression.**\n".to_string(),
        n => format!("\n**Result: {n} regressions.**\n"),
    };
    if !differing.is_empty() {
        out += &format!("\n**Not comparable: {}.**\n", differing_text(c));
    }
    out
}

/// "unobservable differs for arm 'json' (0/40 in the base run, 3/40 in the new one)": the rates of a
/// [`Gate::Differs`] metric that fail the comparison, by metric and arm.
pub fn differing_text(c: &Comparison) -> String {
    c.metrics
        .iter()
        .filter(|(m, _)| m.def().gate == Gate::Differs)
        .flat_map(|(m, verdicts)| {
            verdicts
                .iter()
                .filter(|v| v.judgement.regression)
                .map(move |v| {
                    format!(
                        "{m} differs for arm '{}' ({}/{} in the base run, {}/{} in the new one)",
                        v.arm, v.base.k, v.base.n, v.new.k, v.new.n
                    )
                })
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// Appends `markdown` to the file `$GITHUB_STEP_SUMMARY` names (a job summary).
pub fn append_github_summary(markdown: &str) -> Result<()> {
    use std::io::Write;
    let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY") else {
        return Err(Error::BadInput(
            "--github-summary: GITHUB_STEP_SUMMARY is not set (it is in a GitHub Actions job)"
                .into(),
        ));
    };
    let path = std::path::PathBuf::from(path);
    crate::fsutil::check_output_file(&path)?;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(format!("{markdown}\n").as_bytes()))
        .map_err(|e| Error::io(format!("cannot append to '{}'", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::compare::{Rule, judge};

    fn c(k: u64, n: u64) -> Count {
        Count { k, n }
    }

    #[test]
    fn no_data_on_either_side_gives_no_verdict() {
        let j = judge(Metric::ResumeSuccess, c(0, 0), c(3, 4), Rule::default());
        assert_eq!(j.change, None);
        assert!(!j.regression);
        assert_eq!(verdict_text(Metric::ResumeSuccess, &j), "no data");
    }
}
