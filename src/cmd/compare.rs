//! `loopbench compare BASE_RUN NEW_RUN --metric M`: the regression gate for CI.

use super::args::CompareArgs;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::report::Metric;
use crate::report::compare::{Rule, compare_runs, render};

use super::report::print;

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
    let comparison = compare_runs(&args.base_run, &args.new_run, &metrics, rule)?;
    if comparison.metrics.iter().all(|(_, v)| v.is_empty()) {
        return Err(Error::BadInput(format!(
            "'{}' and '{}' have no arm in common",
            args.base_run.display(),
            args.new_run.display()
        )));
    }
    print(&render(&comparison))?;
    Ok(if comparison.regressions() > 0 {
        exit_code::JUDGED_FAILURE
    } else {
        exit_code::OK
    })
}
