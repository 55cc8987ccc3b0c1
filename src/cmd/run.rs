//! `loopbench run SUITE`: runs every (arm, task, replicate) trial of a suite and writes
//! a results directory.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use crate::agent::command;
use crate::cli::RunArgs;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::report::{DEFAULT_CONFIDENCE, Progress, Summary, underpowered, write_summary};
use crate::runner::{
    Event, EventKind, EventSink, Fanout, PlannedTrial, RunOptions, default_jobs, execute, plan,
};
use crate::store::{Manifest, RunWriter, new_run_dir};
use crate::suite::{AgentDriver, Suite};

/// Runs the command; returns the exit code.
pub fn run(args: &RunArgs) -> Result<i32> {
    let mut suite = Suite::load(&args.suite)?;
    if let Some(seed) = args.seed {
        suite.seed = seed;
    }
    if let Some(r) = args.replicates {
        if r == 0 {
            return Err(Error::BadInput("--replicates must be at least 1".into()));
        }
        suite.replicates = r;
    }
    let arms = select_arms(&suite, args.arms.as_deref())?;
    command::preflight(&suite, &arms)?;
    let out = match &args.out {
        Some(dir) => dir.clone(),
        None => new_run_dir(&Path::new("results").join(&suite.name)),
    };
    let selected: Vec<String> = arms.iter().map(|&i| suite.arms[i].name.clone()).collect();
    let simulated = arms.iter().all(|&i| {
        let driver = suite.agent_of(&suite.arms[i]);
        matches!(driver, AgentDriver::Sim { .. }) || command::runs_sim_agent(driver)
    });
    let mut drivers: Vec<&str> = arms
        .iter()
        .map(|&i| suite.agent_of(&suite.arms[i]).name())
        .collect();
    drivers.sort_unstable();
    drivers.dedup();
    let suite_path = std::fs::canonicalize(&args.suite)
        .unwrap_or_else(|_| args.suite.clone())
        .display()
        .to_string();
    let manifest = Manifest {
        suite: suite.name.clone(),
        suite_path: Some(suite_path),
        suite_hash: suite.content_hash.clone(),
        baseline: Some(if selected.contains(&suite.baseline) {
            suite.baseline.clone()
        } else {
            selected[0].clone()
        }),
        arms: selected,
        tasks: suite.tasks.iter().map(|t| t.name.clone()).collect(),
        seed: Some(suite.seed),
        replicates: suite.replicates,
        driver: match drivers.as_slice() {
            [one] => (*one).into(),
            _ => "mixed".into(),
        },
        simulated,
        shard: args.shard.map(|s| s.to_string()),
        ..Manifest::stamped()
    };
    let writer = RunWriter::create(&out, manifest)?;
    let mut trials = plan(&suite, &arms, suite.replicates);
    if let Some(shard) = args.shard {
        trials = shard.slice(trials);
    }
    drive(
        suite,
        trials,
        &BTreeMap::new(),
        writer,
        args.jobs,
        args.quiet,
    )
}

/// Runs `trials` into `writer`'s directory, then writes the tables and prints the
/// summary. `already` trials were finished by an earlier process (resume).
pub(crate) fn drive(
    suite: Suite,
    trials: Vec<PlannedTrial>,
    finished_of_arm: &BTreeMap<String, u64>,
    mut writer: RunWriter,
    jobs: Option<usize>,
    quiet: bool,
) -> Result<i32> {
    let out = writer.dir().to_path_buf();
    let already: u64 = finished_of_arm.values().sum();
    let planned = already as usize + trials.len();
    let arm_bars: Vec<(String, u64, u64)> = writer
        .manifest()
        .arms
        .iter()
        .map(|name| {
            let index = suite.arms.iter().position(|a| &a.name == name);
            let left = trials.iter().filter(|t| Some(t.arm) == index).count() as u64;
            let done = finished_of_arm.get(name).copied().unwrap_or(0);
            (name.clone(), left + done, done)
        })
        .collect();
    let mut progress = Progress::new(&arm_bars, quiet);
    let start = Instant::now();
    let options = RunOptions {
        jobs: jobs.unwrap_or_else(default_jobs),
        seed: suite.seed,
        run_dir: out.clone(),
    };
    let suite = Arc::new(suite);
    let outcome = {
        let mut sink = Fanout::new().with(&mut writer).with(&mut progress);
        sink.handle(&Event {
            elapsed: start.elapsed(),
            kind: EventKind::RunStarted {
                run_dir: out.clone(),
                trials: planned,
            },
        })?;
        let outcome = execute(suite.clone(), &trials, &options, &mut sink, start);
        if outcome.is_ok() {
            sink.handle(&Event {
                elapsed: start.elapsed(),
                kind: EventKind::RunFinished,
            })?;
        }
        outcome
    };
    match outcome {
        Ok(_) => {}
        Err(Error::Cancelled) => {
            let finished = crate::store::read_jsonl::<crate::record::TrialRecord>(
                &out.join(crate::store::TRIALS_JSONL),
            )?
            .len();
            return Err(Error::Interrupted {
                run_dir: out,
                finished,
                planned,
            });
        }
        Err(e) => return Err(e),
    }
    let summary = write_summary(&out, None, DEFAULT_CONFIDENCE)?;
    if let Some(effect) = suite.min_detectable_effect {
        warn_underpowered(&summary, effect);
    }
    super::report::print(&summary.to_markdown())?;
    super::report::warn_unusable_arms(&summary);
    eprintln!(
        "{} trials in {:.1}s; results in {}",
        trials.len(),
        start.elapsed().as_secs_f64(),
        out.display()
    );
    Ok(exit_code::OK)
}

/// Warns on stderr, per arm, when its premature-done sessions are too few to detect
/// the suite's `min_detectable_effect` (two-sided, alpha 0.05, power 0.8).
fn warn_underpowered(summary: &Summary, effect: f64) {
    let rows: Vec<_> = summary
        .rows
        .iter()
        .filter(|r| r.metric == "premature_done")
        .collect();
    let baseline_rate = rows
        .iter()
        .find(|r| Some(&r.arm) == summary.baseline.as_ref())
        .and_then(|r| r.rate);
    let Some(baseline_rate) = baseline_rate else {
        return;
    };
    for row in rows {
        if let Ok(Some(warning)) =
            underpowered("premature_done", row.n, baseline_rate, effect, 0.05, 0.8)
        {
            eprintln!("warning: arm '{}': {}", row.arm, warning.message);
        }
    }
}

/// Indices of the arms named by `--arms a,b` (all when absent), in suite order.
pub(crate) fn select_arms(suite: &Suite, names: Option<&str>) -> Result<Vec<usize>> {
    let Some(names) = names else {
        return Ok((0..suite.arms.len()).collect());
    };
    let index: BTreeMap<&str, usize> = suite
        .arms
        .iter()
        .enumerate()
        .map(|(i, a)| (a.name.as_str(), i))
        .collect();
    let mut picked = Vec::new();
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match index.get(name) {
            Some(&i) => picked.push(i),
            None => {
                return Err(Error::BadInput(format!(
                    "--arms: '{name}' is not an arm of suite '{}' (arms: {})",
                    suite.name,
                    suite
                        .arms
                        .iter()
                        .map(|a| a.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
    }
    if picked.is_empty() {
        return Err(Error::BadInput("--arms: name at least one arm".into()));
    }
    picked.sort_unstable();
    picked.dedup();
    Ok(picked)
}
