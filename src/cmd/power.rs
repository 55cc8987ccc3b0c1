//! `loopbench power --p1 P --p2 P [--sequential [--looks K]]`: sessions per arm for a
//! two-proportion comparison, fixed or group-sequential.

use std::fmt::Write as _;

use super::args::PowerArgs;
use crate::error::Result;
use crate::exit_code;
use crate::report::summary::stats_error;
use crate::stats::{self, SequentialSampleSize};

use super::report::print;

/// Looks of `--sequential` when `--looks` is not given.
pub const DEFAULT_LOOKS: usize = 5;

/// Runs the command: prints the sessions per arm on the first line, then how it was
/// computed, then (with `--sequential`) the sequential design.
pub fn run(args: &PowerArgs) -> Result<i32> {
    let n = stats::sessions_per_arm(args.p1, args.p2, args.alpha, args.power)
        .map_err(stats_error("cannot compute the sample size"))?;
    let h = stats::proportion_effectsize(args.p1, args.p2)
        .map_err(stats_error("cannot compute the effect size"))?;
    let mut text = format!(
        "{n} sessions per arm\n\
         to detect {} vs {} (Cohen's h = {:.4}) with power {} at two-sided alpha {}\n",
        args.p1,
        args.p2,
        h.abs(),
        args.power,
        args.alpha
    );
    if args.sequential {
        let looks = args.looks.unwrap_or(DEFAULT_LOOKS);
        let size =
            stats::sequential_sessions_per_arm(args.p1, args.p2, args.alpha, args.power, looks)
                .map_err(stats_error("cannot size the sequential design"))?;
        text.push_str(&sequential_text(args, &size));
    }
    print(&text)?;
    Ok(exit_code::OK)
}

/// The sequential design's lines: maximum, looks and boundaries, expected sessions.
fn sequential_text(args: &PowerArgs, size: &SequentialSampleSize) -> String {
    let design = &size.design;
    let looks = design.looks();
    let fixed = size.fixed as f64;
    let mut text = format!(
        "\nsequential design: {looks} equally spaced look{}, Lan-DeMets O'Brien-Fleming-type \
         boundaries\n\
         {} sessions per arm at most, if no look stops the comparison\n  \
         (the fixed {:.2} times the inflation factor {:.4}, rounded up)\n\
         stop at the first look whose |z| reaches its boundary:\n",
        if looks == 1 { "" } else { "s" },
        size.max,
        size.fixed_real,
        size.inflation,
    );
    let mut row_look = format!("  {:<18}", "look");
    let mut row_sessions = format!("  {:<18}", "sessions per arm");
    let mut row_bound = format!("  {:<18}", "|z| at least");
    for (k, (&t, &c)) in design
        .fractions()
        .iter()
        .zip(design.boundaries())
        .enumerate()
    {
        // Writing to a String cannot fail.
        let _ = write!(row_look, " {:>7}", k + 1);
        let _ = write!(row_sessions, " {:>7}", one_decimal(t * size.max as f64));
        let _ = write!(row_bound, " {c:>7.3}");
    }
    let _ = writeln!(
        text,
        "{row_look}\n{row_sessions}\n{row_bound}\n\
         {:.1} sessions per arm expected if the rates are {} vs {} ({:.0}% of the fixed {};\n  \
         power {:.3} at the maximum)\n\
         {:.1} sessions per arm expected if the arms do not differ ({:.0}% of the fixed {})\n\
         expected sessions come from numerical integration over the boundaries (normal theory,\n\
         not simulation); with only a few sessions per arm per look, real counts can stop later",
        size.expected_alternative,
        args.p1,
        args.p2,
        100.0 * size.expected_alternative / fixed,
        size.fixed,
        size.power_at_max,
        size.expected_null,
        100.0 * size.expected_null / fixed,
        size.fixed,
    );
    text
}

/// A sessions count with one decimal, or none when it is whole.
fn one_decimal(x: f64) -> String {
    let rounded = format!("{x:.1}");
    rounded
        .strip_suffix(".0")
        .map_or(rounded.clone(), str::to_string)
}
