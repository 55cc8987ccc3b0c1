//! `loopbench power --p1 P --p2 P [--sequential [--looks K]]`: sessions per arm for a
//! two-proportion comparison, fixed or group-sequential.

use std::fmt::Write as _;

use serde_json::json;

use super::args::{PowerArgs, PowerFormat};
use crate::error::Result;
use crate::exit_code;
use crate::report::summary::stats_error;
use crate::stats::{self, SequentialSampleSize};

use super::output::print;

/// Looks of `--sequential` when `--looks` is not given.
pub const DEFAULT_LOOKS: usize = 5;

/// Runs the command: prints the sessions per arm on the first line, then how it was
/// computed, then (with `--sequential`) the sequential design; or all of it as one
/// JSON object with `--format json`.
pub fn run(args: &PowerArgs) -> Result<i32> {
    let n = stats::sessions_per_arm(args.p1, args.p2, args.alpha, args.power)
        .map_err(stats_error("cannot compute the sample size"))?;
    let h = stats::proportion_effectsize(args.p1, args.p2)
        .map_err(stats_error("cannot compute the effect size"))?;
    let sequential = if args.sequential {
        let looks = args.looks.unwrap_or(DEFAULT_LOOKS);
        Some(
            stats::sequential_sessions_per_arm(args.p1, args.p2, args.alpha, args.power, looks)
                .map_err(stats_error("cannot size the sequential design"))?,
        )
    } else {
        None
    };
    let text = match args.format {
        PowerFormat::Text => {
            let mut text = format!(
                "{n} sessions per arm\n\
                 to detect {} vs {} (Cohen's h = {:.4}) with power {} at two-sided alpha {}\n",
                args.p1,
                args.p2,
                h.abs(),
                args.power,
                args.alpha
            );
            if let Some(size) = &sequential {
                text.push_str(&sequential_text(args, size));
            }
            text
        }
        PowerFormat::Json => {
            let mut json =
                serde_json::to_string_pretty(&power_json(args, n, h, sequential.as_ref()))
                    .unwrap_or_default();
            json.push('\n');
            json
        }
    };
    print(&text)?;
    Ok(exit_code::OK)
}

/// The object of `power --format json`. Its field names are part of the interface
/// (docs/formats.md lists them); add fields, never rename one.
fn power_json(
    args: &PowerArgs,
    n: u64,
    h: f64,
    sequential: Option<&SequentialSampleSize>,
) -> serde_json::Value {
    let sequential = sequential.map(|size| {
        let design = &size.design;
        let looks: Vec<serde_json::Value> = design
            .fractions()
            .iter()
            .zip(design.boundaries())
            .enumerate()
            .map(|(k, (&t, &c))| {
                json!({
                    "look": k + 1,
                    "information_fraction": t,
                    "sessions_per_arm": t * size.max as f64,
                    "z_boundary": c,
                })
            })
            .collect();
        json!({
            "looks": design.looks(),
            "boundaries": "lan_demets_obrien_fleming",
            "max_sessions_per_arm": size.max,
            "max_sessions_per_arm_real": size.max_real,
            "fixed_sessions_per_arm_real": size.fixed_real,
            "inflation_factor": size.inflation,
            "power_at_max": size.power_at_max,
            "expected_sessions_per_arm_alternative": size.expected_alternative,
            "expected_sessions_per_arm_null": size.expected_null,
            "look_table": looks,
        })
    });
    json!({
        "p1": args.p1,
        "p2": args.p2,
        "alpha": args.alpha,
        "power": args.power,
        "sided": "two",
        "cohens_h": h.abs(),
        "sessions_per_arm": n,
        "sequential": sequential,
    })
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
