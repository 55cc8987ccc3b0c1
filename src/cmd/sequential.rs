//! A sequential run (a suite's `[sequential]` table): the plan runs in looks of
//! `look_every` replicates per (arm, task); after each look every arm still running is
//! compared with the baseline on one metric against a Lan–DeMets O'Brien–Fleming
//! boundary, and an arm that crossed gets no more trials. The run stops when every arm
//! has crossed, or at `max_replicates`.
//!
//! Every decision is made from the records alone, each look counting only the
//! replicates below its own bound, so the same seed gives the same stopping look at any
//! `--jobs`, and `resume` (which replays the looks over what is recorded) reaches the
//! decisions the interrupted run would have.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Serialize;

use super::drive::{DriveOptions, drive};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::rates::{Metric, Unit};
use crate::record::TrialRecord;
use crate::report::format::{fixed, pp, pvalue};
use crate::report::{Align, Table};
use crate::runner::Plan;
use crate::stats::{LookCounts, SequentialDesign, look_fractions};
use crate::store::{
    Manifest, RunLock, RunWriter, SESSIONS_JSONL, TRIALS_JSONL, read_jsonl, write_atomic,
};
use crate::suite::{Sequential, Suite};

/// `sequential.json`: every look's comparisons.
pub const SEQUENTIAL_JSON: &str = "sequential.json";
/// `sequential.md`: the "Sequential run" section, which `summary.md` ends with.
pub const SEQUENTIAL_MD: &str = "sequential.md";

/// `summary.md` of a run: the summary's Markdown, and the sequential section when the
/// run was sequential (so that `report` keeps it). `None` for any other run, whose
/// `summary.md` is the summary's Markdown as written.
pub(crate) fn sequential_summary(
    dir: &Path,
    summary: &crate::report::Summary,
) -> Result<Option<String>> {
    let path = dir.join(SEQUENTIAL_MD);
    match std::fs::read_to_string(&path) {
        Ok(section) => Ok(Some(format!("{}\n{section}", summary.to_markdown()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("cannot read '{}'", path.display()), e)),
    }
}

/// One comparison at one look.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LookRow {
    /// The look, 1-based.
    pub look: usize,
    /// Replicates per (arm, task) the look counts.
    pub replicates: u32,
    /// The arm compared with the baseline.
    pub arm: String,
    /// Baseline events.
    pub base_k: u64,
    /// Baseline units.
    pub base_n: u64,
    /// The arm's events.
    pub k: u64,
    /// The arm's units.
    pub n: u64,
    /// Pooled two-proportion z (positive: the arm's rate is higher).
    pub z: f64,
    /// The look's boundary |z| must reach.
    pub boundary: f64,
    /// The arm crossed and stops here.
    pub crossed: bool,
    /// The repeated (look-adjusted) p-value.
    pub p_repeated: Option<f64>,
    /// The repeated confidence interval of rate(arm) − rate(baseline).
    pub ci_low: Option<f64>,
    /// Its upper bound.
    pub ci_high: Option<f64>,
}

/// Runs (or, with finished trials already recorded, resumes) the sequential plan of
/// `suite` over `arms` into `writer`'s directory, prints the summary and the looks.
pub(crate) fn run(
    suite: &Suite,
    arms: &[usize],
    writer: RunWriter,
    jobs: Option<usize>,
    quiet: bool,
) -> Result<i32> {
    let Some(seq) = suite.sequential.clone() else {
        return Err(Error::Tool(
            "a sequential run needs a [sequential] table".into(),
        ));
    };
    let out = writer.dir().to_path_buf();
    let Some(&baseline) = arms.iter().find(|&&i| suite.arms[i].name == suite.baseline) else {
        return Err(Error::BadInput(format!(
            "a sequential run compares every arm with the baseline '{}': select it too",
            suite.baseline
        )));
    };
    let fractions = look_fractions(u64::from(seq.look_every), u64::from(seq.max_replicates))
        .map_err(crate::report::summary::stats_error("sequential design"))?;
    let design = SequentialDesign::new(seq.alpha, &fractions)
        .map_err(crate::report::summary::stats_error("sequential design"))?;
    let looks = fractions.len();
    let mut active: Vec<usize> = arms.iter().copied().filter(|&i| i != baseline).collect();
    let mut rows: Vec<LookRow> = Vec::new();
    let mut writer = Some(writer);
    let mut stopped_at = looks;
    let mut summary = None;
    for look in 1..=looks {
        let upto = (seq.look_every * look as u32).min(seq.max_replicates);
        let mut running = vec![baseline];
        running.extend(&active);
        running.sort_unstable();
        let finished: Vec<TrialRecord> = read_jsonl(&out.join(TRIALS_JSONL))?;
        let done: BTreeSet<String> = finished.iter().map(|t| t.key.trial_id.clone()).collect();
        let mut finished_of_arm = BTreeMap::new();
        for t in &finished {
            *finished_of_arm.entry(t.key.arm.clone()).or_insert(0u64) += 1;
        }
        let plan = Plan::suite(suite.clone(), &running, upto).without(&done);
        let writer = match writer.take() {
            Some(w) => w,
            None => RunWriter::reopen(RunLock::acquire(&out)?, Manifest::read(&out)?)?,
        };
        let options = DriveOptions {
            jobs,
            quiet,
            session_table: false,
        };
        summary = Some(drive(&plan, &finished_of_arm, writer, options)?.summary);
        let records = metric_records(&out, seq.metric)?;
        let counts = |arm: usize| counts(&records, seq.metric, &suite.arms[arm].name, upto);
        let base = counts(baseline);
        let mut crossed = Vec::new();
        for &a in &active {
            let c = counts(a);
            let lc = LookCounts {
                k1: base.0,
                n1: base.1,
                k2: c.0,
                n2: c.1,
            };
            let stats = crate::report::summary::stats_error("sequential look");
            let d = design.look(look, lc).map_err(&stats)?;
            let ci = design.repeated_ci(look, lc).ok();
            rows.push(LookRow {
                look,
                replicates: upto,
                arm: suite.arms[a].name.clone(),
                base_k: base.0,
                base_n: base.1,
                k: c.0,
                n: c.1,
                z: d.z,
                boundary: d.boundary,
                crossed: d.crossed,
                p_repeated: design.repeated_p_value(look, lc).ok(),
                ci_low: ci.map(|i| i.low),
                ci_high: ci.map(|i| i.high),
            });
            if d.crossed {
                crossed.push(a);
            }
        }
        active.retain(|a| !crossed.contains(a));
        write_json(&out, &rows)?;
        if active.is_empty() {
            stopped_at = look;
            break;
        }
    }
    let Some(summary) = summary else {
        return Err(Error::Tool("a sequential run ran no look".into()));
    };
    let section = render(&seq, &design, &rows, stopped_at, looks, suite, &active);
    write_atomic(&out.join(SEQUENTIAL_MD), section.as_bytes())?;
    let md = sequential_summary(&out, &summary)?.unwrap_or_else(|| summary.to_markdown());
    write_atomic(&out.join(crate::report::summary::SUMMARY_MD), md.as_bytes())?;
    super::report::print(&md)?;
    eprintln!("results in {}", out.display());
    Ok(exit_code::OK)
}

type Record = serde_json::Map<String, serde_json::Value>;

/// The records `metric` is counted over: sessions or trials, as JSON objects.
fn metric_records(dir: &Path, metric: Metric) -> Result<Vec<Record>> {
    let file = match metric.def().unit {
        Unit::Session => SESSIONS_JSONL,
        Unit::Trial => TRIALS_JSONL,
    };
    read_jsonl(&dir.join(file))
}

/// (k, n) of `metric` for `arm` over the replicates below `upto`.
fn counts(rows: &[Record], metric: Metric, arm: &str, upto: u32) -> (u64, u64) {
    let def = metric.def();
    let mut total = (0, 0);
    for row in rows {
        let of_arm = row.get("arm").and_then(|v| v.as_str()) == Some(arm);
        let replicate = row.get("replicate").and_then(|v| v.as_u64());
        let coding = row.get("kind").and_then(|v| v.as_str()) != Some("initializer");
        if of_arm && replicate.is_some_and(|r| r < u64::from(upto)) && coding {
            let (k, n) = def.tally.tally_row(row);
            total.0 += k;
            total.1 += n;
        }
    }
    total
}

fn write_json(dir: &Path, rows: &[LookRow]) -> Result<()> {
    let mut text = serde_json::to_vec_pretty(rows)
        .map_err(|e| Error::Tool(format!("cannot encode {SEQUENTIAL_JSON}: {e}")))?;
    text.push(b'\n');
    write_atomic(&dir.join(SEQUENTIAL_JSON), &text)
}

/// The "Sequential run" section of `summary.md`.
fn render(
    seq: &Sequential,
    design: &SequentialDesign,
    rows: &[LookRow],
    stopped_at: usize,
    looks: usize,
    suite: &Suite,
    open: &[usize],
) -> String {
    let mut out = String::from("## Sequential run\n\n");
    out += &format!(
        "Metric `{}`, a look every {} replicates per (arm, task) up to {}, two-sided α = {} \
         split equally between the sides, Lan–DeMets O'Brien–Fleming boundaries ({}). ",
        seq.metric,
        seq.look_every,
        seq.max_replicates,
        seq.alpha,
        design
            .boundaries()
            .iter()
            .map(|b| fixed(*b, 3))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if open.is_empty() {
        out += &format!(
            "**Stopped at look {stopped_at} of {looks}**: every arm crossed its boundary.\n\n"
        );
    } else {
        let names: Vec<&str> = open.iter().map(|&a| suite.arms[a].name.as_str()).collect();
        out += &format!(
            "Ran all {looks} looks; no boundary crossed for: {}.\n\n",
            names.join(", ")
        );
    }
    let mut table = Table::new([
        ("look", Align::Right),
        ("replicates", Align::Right),
        ("arm", Align::Left),
        ("baseline k / n", Align::Right),
        ("arm k / n", Align::Right),
        ("z", Align::Right),
        ("boundary", Align::Right),
        ("crossed", Align::Left),
        ("repeated p", Align::Right),
        ("repeated CI of the difference", Align::Right),
    ]);
    for r in rows {
        table.push(vec![
            r.look.to_string(),
            r.replicates.to_string(),
            r.arm.clone(),
            format!("{} / {}", r.base_k, r.base_n),
            format!("{} / {}", r.k, r.n),
            fixed(r.z, 3),
            fixed(r.boundary, 3),
            if r.crossed { "yes" } else { "no" }.into(),
            r.p_repeated.map(pvalue).unwrap_or_default(),
            match (r.ci_low, r.ci_high) {
                (Some(l), Some(h)) => format!("{} to {}", pp(l), pp(h)),
                _ => String::new(),
            },
        ]);
    }
    out += &table.to_markdown();
    out += "\nThe p-values and intervals of this table are the repeated-confidence ones \
            (adjusted for every look); the fixed-sample p-values and intervals in the tables \
            above are not, and overstate the evidence of a run that stopped early.\n";
    out
}
