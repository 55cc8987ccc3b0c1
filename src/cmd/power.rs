//! `loopbench power --p1 P --p2 P`: sessions per arm for a two-proportion comparison.

use crate::cli::PowerArgs;
use crate::error::Result;
use crate::exit_code;
use crate::report::summary::stats_error;
use crate::stats;

use super::report::print;

/// Runs the command: prints the sessions per arm on the first line, then how it was
/// computed.
pub fn run(args: &PowerArgs) -> Result<i32> {
    let n = stats::sessions_per_arm(args.p1, args.p2, args.alpha, args.power)
        .map_err(stats_error("cannot compute the sample size"))?;
    let h = stats::proportion_effectsize(args.p1, args.p2)
        .map_err(stats_error("cannot compute the effect size"))?;
    print(&format!(
        "{n} sessions per arm\n\
         to detect {} vs {} (Cohen's h = {:.4}) with power {} at two-sided alpha {}\n",
        args.p1,
        args.p2,
        h.abs(),
        args.power,
        args.alpha
    ))?;
    Ok(exit_code::OK)
}
