//! `loopbench run SUITE`: runs every (arm, task, replicate) trial of a suite and writes
//! a results directory.

use std::collections::BTreeMap;
use std::path::Path;

use super::args::RunArgs;
use super::drive::{DriveOptions, drive};
use crate::agent::command;
use crate::error::{Error, Result};
use crate::report::{Summary, underpowered};
use crate::runner::Plan;
use crate::store::{Manifest, RunWriter, SequentialStep, new_run_dir};
use crate::suite::{AgentDriver, Suite};

/// How the sandbox's limits are enforced here and who the sandboxed processes run as
/// (a root harness's sandbox user), for the manifest.
pub(crate) fn sandbox_facts() -> (Option<String>, Option<String>) {
    let limits = crate::sandbox::Enforcement::here().describe();
    let user = match crate::sandbox::RunAs::of_harness() {
        Ok(Some(run_as)) => Some(run_as.user.spelled()),
        _ => None,
    };
    (Some(limits), user)
}

/// Says once, on stderr, who the sandboxed processes run as and how their limits are
/// enforced here (or that they are not, and what still bounds them); returns both for
/// the manifest.
fn announce_sandbox() -> (Option<String>, Option<String>) {
    let (limits, user) = sandbox_facts();
    let limits = limits.unwrap_or_default();
    match &user {
        Some(user) => eprintln!(
            "sandbox: agents and checks run as {user} (the harness runs as root); {limits}"
        ),
        None => eprintln!("sandbox: {limits}"),
    }
    (Some(limits), user)
}

/// Runs the command; returns the exit code.
pub fn run(args: &RunArgs) -> Result<i32> {
    let mut suite = Suite::load(&args.suite)?;
    super::validate::print_warnings(suite.warnings());
    if let Some(seed) = args.seed {
        suite.seed = seed;
    }
    if let Some(r) = args.replicates {
        if r == 0 {
            return Err(Error::BadInput("--replicates must be at least 1".into()));
        }
        suite.replicates = r;
        crate::suite::check_plan_size(suite.arms.len(), suite.tasks.len(), r, "--replicates")
            .map_err(Error::BadInput)?;
    }
    let look = args.look.map(|l| usize::try_from(l).unwrap_or(usize::MAX));
    if let Some(seq) = &suite.sequential {
        if args.shard.is_some() && look.is_none() {
            return Err(Error::BadInput(
                "a sequential run decides after each look from every trial so far, so its \
                 shards are shards of one look: run `--look 1 --shard I/N`, merge them, then \
                 `--look 2 --after MERGED --shard I/N`, and so on (or run it in one process)"
                    .into(),
            ));
        }
        if args.replicates.is_some() {
            return Err(Error::BadInput(
                "--replicates does not apply to a sequential run: its [sequential] table's \
                 max_replicates bounds it"
                    .into(),
            ));
        }
        suite.replicates = seq.max_replicates;
    } else if look.is_some() {
        return Err(Error::BadInput(format!(
            "--look applies to a sequential run, and suite '{}' has no [sequential] table",
            suite.name
        )));
    }
    let arms = select_arms(&suite, args.arms.as_deref())?;
    command::preflight(&suite, &arms)?;
    let sandboxed = arms.iter().any(|&i| suite.verify_sandboxed(&suite.arms[i]));
    let (sandbox_limits, sandbox_user) = if sandboxed {
        announce_sandbox()
    } else {
        (None, None)
    };
    let after = match &args.after {
        Some(dir) => Some(std::fs::canonicalize(dir).map_err(|e| {
            Error::BadInput(format!("--after: cannot open '{}': {e}", dir.display()))
        })?),
        None => None,
    };
    let look_plan = match look {
        Some(look) => Some(super::sequential::look_plan(
            &suite,
            &arms,
            look,
            after.as_deref(),
        )?),
        None => None,
    };
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
        verify_sandboxed: arms.iter().all(|&i| suite.verify_sandboxed(&suite.arms[i])),
        sequential_step: look.map(|look| SequentialStep {
            look,
            after: after.as_ref().map(|a| a.display().to_string()),
        }),
        keep_repos: args.keep_repos,
        sandbox_limits,
        sandbox_user,
        ..Manifest::stamped()
    };
    let writer = RunWriter::create(&out, manifest)?;
    if let Some(mut plan) = look_plan {
        if let Some(shard) = args.shard {
            plan = plan.sharded(shard);
        }
        return finish(
            &plan,
            &BTreeMap::new(),
            writer,
            args.jobs,
            args.quiet,
            args.full,
        );
    }
    if suite.sequential.is_some() {
        return super::sequential::run(&suite, &arms, writer, args.jobs, args.quiet, args.full);
    }
    let replicates = suite.replicates;
    let mut plan = Plan::suite(suite, &arms, replicates);
    if let Some(shard) = args.shard {
        plan = plan.sharded(shard);
    }
    finish(
        &plan,
        &BTreeMap::new(),
        writer,
        args.jobs,
        args.quiet,
        args.full,
    )
}

/// Drives a suite's plan and prints what `run` and `resume` print: the verdict and
/// where the rest is (all of summary.md with `full`), and where the results are.
pub(crate) fn finish(
    plan: &Plan,
    finished_of_arm: &BTreeMap<String, u64>,
    writer: RunWriter,
    jobs: Option<usize>,
    quiet: bool,
    full: bool,
) -> Result<i32> {
    let options = DriveOptions {
        jobs,
        quiet,
        session_table: false,
    };
    let out = writer.dir().to_path_buf();
    // A shard holds a slice of the sessions, so its power says nothing about the study:
    // `merge` warns once, for the merged run.
    let sharded = writer.manifest().shard.is_some();
    let driven = drive(plan, finished_of_arm, writer, options)?;
    if let Some(effect) = plan.suite_source().and_then(|s| s.min_detectable_effect)
        && !sharded
    {
        warn_underpowered(&driven.summary, effect);
    }
    super::report::print_finished(&driven.summary, &out, full)?;
    eprintln!(
        "{} trials in {:.1}s; results in {}",
        plan.trials.len(),
        driven.elapsed.as_secs_f64(),
        out.display()
    );
    Ok(driven.report_unfinished(&out))
}

/// Warns on stderr, per arm, when its premature-done sessions are too few to detect
/// the suite's `min_detectable_effect` (two-sided, alpha 0.05, power 0.8).
pub(crate) fn warn_underpowered(summary: &Summary, effect: f64) {
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
    for name in super::args::arm_names(names)? {
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
    picked.sort_unstable();
    picked.dedup();
    Ok(picked)
}
