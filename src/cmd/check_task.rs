//! `loopbench check-task TASK_DIR... | SUITE`: whether tasks can measure anything (the
//! controls of docs/writing-tasks.md), printed as tables or one JSON object.

use std::io::{IsTerminal, Write};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::args::{CheckTaskArgs, CheckTaskFormat, CheckTaskSandbox};
use super::output::print_warnings;
use crate::error::{IoContext, Result};
use crate::exit_code;
use crate::sandbox::SandboxKind;
use crate::taskcheck::{CheckPlan, check_tasks};

/// Runs the command; returns 0 when every control held, 1 when one did not.
pub fn run(args: &CheckTaskArgs) -> Result<i32> {
    let mut plan = CheckPlan::load(&args.inputs, args.repeats, SandboxKind::None)?;
    print_warnings(
        plan.tasks
            .iter()
            .flat_map(|t| t.warnings().iter().map(String::as_str)),
    );
    plan.asked = match args.sandbox {
        CheckTaskSandbox::Kind(kind) => Some(kind),
        CheckTaskSandbox::Auto => None,
    };
    plan.sandbox = sandboxing(args.sandbox, plan.suite_sandbox)?;
    let jobs = args.jobs.unwrap_or_else(crate::runner::default_jobs);
    let bar = progress_bar(args.quiet);
    let report = check_tasks(&plan, jobs, &|n| bar.set_length(n), &|n| bar.inc(n))?;
    bar.finish_and_clear();
    let text = match args.format {
        CheckTaskFormat::Text => report.text(),
        CheckTaskFormat::Json => {
            let mut json = serde_json::to_string_pretty(&report)
                .map_err(|e| crate::error::Error::Tool(format!("cannot write JSON: {e}")))?;
            json.push('\n');
            json
        }
    };
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        // `check-task ... | head` is not an error.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        other => other.io_context(|| "cannot print".to_string())?,
    }
    Ok(if report.ok() {
        exit_code::OK
    } else {
        exit_code::JUDGED_FAILURE
    })
}

/// Where the checks run: in the sandbox asked for, or (`auto`) in the one the suite's
/// run would use, else the strongest that works here, as in a sandboxed run; a suite
/// whose run would sandbox its checks is refused without its sandbox.
fn sandboxing(asked: CheckTaskSandbox, suite_sandbox: SandboxKind) -> Result<SandboxKind> {
    let needs = |kind: SandboxKind| {
        format!(
            "check-task runs the checks under {} (--sandbox {kind})",
            kind.title()
        )
    };
    let kind = match asked {
        CheckTaskSandbox::Kind(kind) => {
            kind.check(&needs(kind))?;
            return Ok(kind);
        }
        CheckTaskSandbox::Auto if suite_sandbox.confines() => suite_sandbox,
        CheckTaskSandbox::Auto => SandboxKind::strongest_here(),
    };
    if kind.confines() {
        kind.check(&if suite_sandbox.confines() {
            "the suite's checks run sandboxed in a run".to_string()
        } else {
            needs(kind)
        })?;
    } else {
        let tried: Vec<&str> = SandboxKind::ALL
            .iter()
            .filter(|k| k.confines())
            .map(|k| k.title())
            .collect();
        eprintln!(
            "warning: {} does not work here, so the checks run on the host: a check \
             that needs the network passes here and fails in a sandboxed run",
            tried.join(" nor ")
        );
    }
    Ok(kind)
}

/// One bar over every verify command, on stderr; hidden with `--quiet` or when stderr
/// is not a terminal.
fn progress_bar(quiet: bool) -> ProgressBar {
    let target = if quiet || !std::io::stderr().is_terminal() {
        ProgressDrawTarget::hidden()
    } else {
        ProgressDrawTarget::stderr()
    };
    let style = ProgressStyle::with_template("{prefix:>16} {bar:30} {pos:>4}/{len:4} ETA {eta:>4}")
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    ProgressBar::with_draw_target(Some(0), target)
        .with_style(style)
        .with_prefix("checks")
}
