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
//!
//! On many machines a sequential run is a run per look: `run --look K --shard I/N`
//! runs a slice of the trials look K adds for the arms that the merged run of the
//! earlier looks (`--after`) leaves running, and `merge` of those shards judges the look.

use std::sync::Arc;

use super::drive::{DriveOptions, drive};
use crate::error::{Error, Result, ResultsDirError};
use crate::fsutil::write_atomic;
use crate::rates::{Metric, Unit};
use crate::report::format::{fixed, pp, pvalue};
use crate::report::{Align, Table};
use crate::runner::{Plan, Source};
use crate::stats::{LookCounts, SequentialDesign, look_fractions};
use crate::store::{FinishedTrials, Manifest, RunLock, RunWriter, read_jsonl};
use crate::suite::Sequential;

use crate::report::sequential_outcome::{LookRow, SequentialOutcome, SequentialState};
use crate::run_dir::{RunDir, SEQUENTIAL_JSON, SEQUENTIAL_STATE_JSON};

/// `summary.md` of a run: the summary's Markdown, and the sequential section when the
/// run was sequential (so that `report` keeps it). `None` for any other run, whose
/// `summary.md` is the summary's Markdown as written.
pub fn sequential_summary(
    dir: &RunDir,
    summary: &crate::report::Summary,
) -> Result<Option<String>> {
    let path = dir.sequential_md();
    match std::fs::read_to_string(&path) {
        Ok(section) => Ok(Some(format!("{}\n{section}", summary.to_markdown()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::io(format!("cannot read '{}'", path.display()), e)),
    }
}

/// The sequential design of a suite over its selected arms.
pub struct Sequencer {
    source: Arc<Source>,
    seed: u64,
    /// The names of the suite's arms, by index.
    names: Vec<String>,
    seq: Sequential,
    design: SequentialDesign,
    baseline: usize,
    /// The selected arms besides the baseline, in suite order.
    others: Vec<usize>,
}

/// What the recorded trials of a run decide, look by look.
pub struct Decided {
    rows: Vec<LookRow>,
    /// Arms that have not crossed.
    pub active: Vec<usize>,
    /// Looks whose trials are all recorded and judged.
    pub looks_done: usize,
}

impl Decided {
    /// Records look `look`'s comparisons: the arms that crossed stop.
    fn take(&mut self, look: usize, rows: Vec<LookRow>, names: &[String]) {
        self.active.retain(|&a| {
            !rows
                .iter()
                .any(|r| r.crossed && names.get(a) == Some(&r.arm))
        });
        self.rows.extend(rows);
        self.looks_done = look;
    }
}

impl Sequencer {
    /// The design of the suite `source` runs over `arms`, whose trials take `seed`;
    /// the baseline must be among the arms.
    pub fn new(source: &Arc<Source>, arms: &[usize], seed: u64) -> Result<Sequencer> {
        let Source::Suite(suite) = source.as_ref() else {
            return Err(Error::Tool("a sequential run of recorded traces".into()));
        };
        let Some(seq) = suite.sequential.clone() else {
            return Err(Error::BadInput(format!(
                "suite '{}' has no [sequential] table, so it has no looks",
                suite.name
            )));
        };
        let Some(&baseline) = arms.iter().find(|&&i| suite.arms[i].name == suite.baseline) else {
            return Err(Error::BadInput(format!(
                "a sequential run compares every arm with the baseline '{}': select it too",
                suite.baseline
            )));
        };
        let stats = crate::report::summary::stats_error("sequential design");
        let fractions = look_fractions(u64::from(seq.look_every), u64::from(seq.max_replicates))
            .map_err(&stats)?;
        let design = SequentialDesign::new(seq.alpha, &fractions).map_err(&stats)?;
        Ok(Sequencer {
            source: Arc::clone(source),
            seed,
            names: suite.arms.iter().map(|a| a.name.clone()).collect(),
            seq,
            design,
            baseline,
            others: arms.iter().copied().filter(|&i| i != baseline).collect(),
        })
    }

    /// The name of arm `arm` of the suite.
    fn name(&self, arm: usize) -> &str {
        self.names.get(arm).map_or("", String::as_str)
    }

    /// The looks of the design.
    pub fn looks(&self) -> usize {
        self.design.boundaries().len()
    }

    /// The selected arms besides the baseline: those look 1 runs.
    pub fn others(&self) -> &[usize] {
        &self.others
    }

    /// Replicates per (arm, task) that look `look` counts (0 for look 0).
    fn upto(&self, look: usize) -> u32 {
        let look = u32::try_from(look).unwrap_or(u32::MAX);
        self.seq
            .look_every
            .saturating_mul(look)
            .min(self.seq.max_replicates)
    }

    /// The baseline and the `active` arms, in suite order.
    fn running(&self, active: &[usize]) -> Vec<usize> {
        let mut running = vec![self.baseline];
        running.extend(active);
        running.sort_unstable();
        running
    }

    /// Every trial of the looks up to `look` for the `active` arms.
    fn trials_upto(&self, look: usize, active: &[usize]) -> Plan {
        Plan::of(
            Arc::clone(&self.source),
            &self.running(active),
            self.upto(look),
            self.seed,
        )
    }

    /// The trials look `look` adds for the `active` arms.
    pub fn new_trials(&self, look: usize, active: &[usize]) -> Plan {
        self.trials_upto(look, active)
            .from_replicate(self.upto(look - 1))
    }

    /// Compares every `active` arm with the baseline over the records of `dir` below
    /// the look's bound.
    fn judge(&self, dir: &RunDir, look: usize, active: &[usize]) -> Result<Vec<LookRow>> {
        let records = metric_records(dir, self.seq.metric)?;
        let upto = self.upto(look);
        let counts = |arm: usize| counts(&records, self.seq.metric, self.name(arm), upto);
        let base = counts(self.baseline);
        let stats = crate::report::summary::stats_error("sequential look");
        let mut rows = Vec::new();
        for &a in active {
            let c = counts(a);
            let lc = LookCounts {
                k1: base.0,
                n1: base.1,
                k2: c.0,
                n2: c.1,
            };
            let d = self.design.look(look, lc).map_err(&stats)?;
            let ci = self.design.repeated_ci(look, lc).ok();
            rows.push(LookRow {
                look,
                replicates: upto,
                arm: self.name(a).to_string(),
                base_k: base.0,
                base_n: base.1,
                k: c.0,
                n: c.1,
                z: d.z,
                boundary: d.boundary,
                crossed: d.crossed,
                p_repeated: self.design.repeated_p_value(look, lc).ok(),
                ci_low: ci.map(|i| i.low),
                ci_high: ci.map(|i| i.high),
            });
        }
        Ok(rows)
    }

    /// Replays the decisions of every look whose trials are all recorded in `dir`, up
    /// to the first look none of whose trials are. A look with only some of its trials
    /// is an error: a shard of it was not merged.
    pub fn decided(&self, dir: &RunDir) -> Result<Decided> {
        let done = FinishedTrials::read(dir)?.ids;
        let mut decided = Decided {
            rows: Vec::new(),
            active: self.others.clone(),
            looks_done: 0,
        };
        for look in 1..=self.looks() {
            let planned = self.new_trials(look, &decided.active);
            let total = planned.trials.len();
            let missing = planned.without(&done).trials.len();
            if missing == total {
                break;
            }
            if missing > 0 {
                return Err(ResultsDirError::LookIncomplete {
                    dir: dir.path().to_path_buf(),
                    look,
                    held: total - missing,
                    total,
                }
                .into());
            }
            let rows = self.judge(dir, look, &decided.active)?;
            decided.take(look, rows, &self.names);
            if decided.active.is_empty() {
                break;
            }
        }
        Ok(decided)
    }

    /// Writes `sequential.json`, `sequential-state.json`, `sequential.md`, and
    /// `summary.md` and `report.html` whose verdicts say where the looks stopped;
    /// returns the summary with that outcome.
    fn write(
        &self,
        dir: &RunDir,
        decided: &Decided,
        summary: &crate::report::Summary,
    ) -> Result<crate::report::Summary> {
        write_json(dir, &decided.rows)?;
        let finished = decided.active.is_empty() || decided.looks_done == self.looks();
        let running = if finished {
            Vec::new()
        } else {
            self.running(&decided.active)
        };
        let state = SequentialState {
            looks: self.looks(),
            looks_done: decided.looks_done,
            finished,
            next_look: (!finished).then_some(decided.looks_done + 1),
            running: running.iter().map(|&a| self.name(a).to_string()).collect(),
            metric: Some(self.seq.metric.name().to_string()),
        };
        let mut text = serde_json::to_vec_pretty(&state)
            .map_err(|e| Error::Tool(format!("cannot encode {SEQUENTIAL_STATE_JSON}: {e}")))?;
        text.push(b'\n');
        write_atomic(&dir.sequential_state_json(), &text)?;
        let section = render(self, decided);
        write_atomic(&dir.sequential_md(), section.as_bytes())?;
        let mut summary = summary.clone();
        summary.sequential = SequentialOutcome::read(dir)?;
        let md = sequential_summary(dir, &summary)?.unwrap_or_else(|| summary.to_markdown());
        write_atomic(&dir.summary_md(), md.as_bytes())?;
        crate::report::html::write_run_html(dir, &summary)?;
        Ok(summary)
    }
}

/// How the looks of a sequential run ended.
pub enum Looks {
    /// A look's trial could not run: the look stays open until `resume` runs it.
    Open {
        /// What the last look's summary warns of.
        warnings: Vec<String>,
        /// Per arm, the trials that could not run and why, and how to go on.
        unfinished: Vec<String>,
    },
    /// The run stopped (every arm crossed, or the last look ran).
    Finished {
        /// The summary with where the looks stopped, already written.
        summary: Box<crate::report::Summary>,
        /// What it warns of.
        warnings: Vec<String>,
    },
}

/// Runs (or, with finished trials already recorded, resumes) the sequential plan of
/// `sequencer` into `writer`'s directory, look after look.
pub fn run(sequencer: &Sequencer, writer: RunWriter, options: DriveOptions) -> Result<Looks> {
    let out = writer.dir().clone();
    let mut decided = Decided {
        rows: Vec::new(),
        active: sequencer.others.clone(),
        looks_done: 0,
    };
    let mut writer = Some(writer);
    let mut summary = None;
    for look in 1..=sequencer.looks() {
        let FinishedTrials {
            ids: done,
            of_arm: finished_of_arm,
        } = FinishedTrials::read(&out)?;
        let plan = sequencer.trials_upto(look, &decided.active).without(&done);
        let writer = match writer.take() {
            Some(w) => w,
            None => RunWriter::reopen(RunLock::acquire(out.path())?, Manifest::read(&out)?)?,
        };
        let driven = drive(&plan, &finished_of_arm, writer, options)?;
        if !driven.unfinished.is_empty() {
            // A look is judged on every trial it planned; one that could not run
            // leaves the look open until `resume` runs it.
            return Ok(Looks::Open {
                unfinished: driven.unfinished_report(&out),
                warnings: driven.warnings,
            });
        }
        // Each look's summary is of every trial so far: the last one's warnings hold
        // the earlier ones'.
        summary = Some((driven.summary, driven.warnings));
        let rows = sequencer.judge(&out, look, &decided.active)?;
        decided.take(look, rows, &sequencer.names);
        write_json(&out, &decided.rows)?;
        if decided.active.is_empty() {
            break;
        }
    }
    let Some((summary, warnings)) = summary else {
        return Err(Error::Tool("a sequential run ran no look".into()));
    };
    Ok(Looks::Finished {
        summary: Box::new(sequencer.write(&out, &decided, &summary)?),
        warnings,
    })
}

/// Where a merged sequential run stands after its looks are judged.
pub struct Judged {
    /// Every arm crossed, or the last look ran.
    pub finished: bool,
    /// Looks judged.
    pub looks_done: usize,
    /// Looks of the design.
    pub looks: usize,
    /// The arms the next look runs (the baseline and those that have not crossed).
    pub running: Vec<String>,
}

/// After `merge` of the shards of a look (and the merged run of the looks before it):
/// judges by `sequencer` every look the merged records complete and writes the
/// sequential files and `summary.md` into `dir`.
pub fn judge_merged(
    dir: &RunDir,
    sequencer: &Sequencer,
    summary: &crate::report::Summary,
) -> Result<Judged> {
    let decided = sequencer.decided(dir)?;
    sequencer.write(dir, &decided, summary)?;
    Ok(Judged {
        finished: decided.active.is_empty() || decided.looks_done == sequencer.looks(),
        looks_done: decided.looks_done,
        looks: sequencer.looks(),
        running: sequencer
            .running(&decided.active)
            .iter()
            .map(|&a| sequencer.name(a).to_string())
            .collect(),
    })
}

type Record = serde_json::Map<String, serde_json::Value>;

/// The records `metric` is counted over: sessions or trials, as JSON objects.
fn metric_records(dir: &RunDir, metric: Metric) -> Result<Vec<Record>> {
    let file = match metric.def().unit {
        Unit::Session => dir.sessions_jsonl(),
        Unit::Trial => dir.trials_jsonl(),
    };
    read_jsonl(&file)
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

fn write_json(dir: &RunDir, rows: &[LookRow]) -> Result<()> {
    let mut text = serde_json::to_vec_pretty(rows)
        .map_err(|e| Error::Tool(format!("cannot encode {SEQUENTIAL_JSON}: {e}")))?;
    text.push(b'\n');
    write_atomic(&dir.sequential_json(), &text)
}

/// The "Sequential run" section of `summary.md`.
fn render(sequencer: &Sequencer, decided: &Decided) -> String {
    let (seq, design) = (&sequencer.seq, &sequencer.design);
    let (rows, open, looks) = (&decided.rows, &decided.active, sequencer.looks());
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
    let names: Vec<&str> = open.iter().map(|&a| sequencer.name(a)).collect();
    if open.is_empty() {
        out += &format!(
            "**Stopped at look {} of {looks}**: every arm crossed its boundary.\n\n",
            decided.looks_done
        );
    } else if decided.looks_done == looks {
        out += &format!(
            "Ran all {looks} looks; no boundary crossed for: {}.\n\n",
            names.join(", ")
        );
    } else {
        out += &format!(
            "**Looks 1 to {} of {looks} so far**; still running: {} (look {} is next).\n\n",
            decided.looks_done,
            names.join(", "),
            decided.looks_done + 1
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
