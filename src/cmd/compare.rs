//! `loopbench compare BASE_RUN NEW_RUN --metric M`: the regression gate for CI.

use super::args::{CompareArgs, CompareFormat, arm_names};
use crate::error::{Error, Result};
use crate::exit_code;
use crate::rates::Metric;
use crate::report::compare::{Rule, compare_runs};
use crate::report::compare_output::{append_github_summary, differing_text, render};
use crate::store::open_run_dir;

use super::output::print;

/// Runs the command; returns 1 when any arm regressed on any metric, else 0.
pub fn run(args: &CompareArgs) -> Result<i32> {
    let metrics = args
        .metrics
        .iter()
        .map(|name| {
            Metric::parse(name).ok_or_else(|| {
                Error::BadInput(format!(
                    "unknown --metric '{name}' (one of: {})",
                    Metric::ALL.map(Metric::name).join(", ")
                ))
            })
        })
        .collect::<Result<Vec<Metric>>>()?;
    let rule = Rule {
        max_increase: args.max_increase,
        alpha: args.alpha,
    };
    let arms: Option<Vec<String>> = match args.arms.as_deref() {
        Some(list) => Some(arm_names(list)?.into_iter().map(str::to_string).collect()),
        None => None,
    };
    let comparison = compare_runs(
        &open_run_dir(&args.base_run),
        &open_run_dir(&args.new_run),
        &metrics,
        arms.as_deref(),
        rule,
    )?;
    let mut comparison = comparison;
    comparison.show_by_task = args.by_task;
    for warning in &comparison.warnings {
        // The warnings quote arm and task names from the runs' tables.
        eprintln!("warning: {}", crate::terminal::line(warning));
    }
    if comparison.metrics.iter().all(|(_, v)| v.is_empty()) {
        return Err(Error::BadInput(format!(
            "'{}' and '{}' have no arm in common",
            args.base_run.display(),
            args.new_run.display()
        )));
    }
    // Markdown is for a person: escaped as every printout of what a run's files hold.
    let text = match args.format {
        CompareFormat::Md => crate::terminal::block(&render(&comparison)).into_owned(),
        CompareFormat::Json => comparison.to_json()?,
        CompareFormat::Junit => comparison.to_junit(),
    };
    if args.github_summary {
        append_github_summary(&render(&comparison))?;
    }
    print(&text)?;
    if !comparison.differing().is_empty() {
        // Also where a gate reads only the exit code and stderr: the runs measured
        // different sessions, so their other rates cannot pass.
        eprintln!(
            "error: not comparable: {} by more than --max-increase {}",
            differing_text(&comparison),
            args.max_increase
        );
    }
    Ok(if comparison.regressions() > 0 {
        exit_code::JUDGED_FAILURE
    } else {
        exit_code::OK
    })
}
