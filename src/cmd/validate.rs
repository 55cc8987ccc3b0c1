//! `loopbench validate SUITE`: checks a suite, its tasks and arms without running.

use std::io::Write;

use super::args::ValidateArgs;
use super::output::print_warnings;
use crate::error::{IoContext, Result};
use crate::exit_code;
use crate::study::suite_run::{sandbox_summary, uses_sandbox};
use crate::suite::{Arm, Suite};

/// Runs the command; returns the exit code (errors carry exit code 2).
pub fn run(args: &ValidateArgs) -> Result<i32> {
    let suite = Suite::load(&args.suite)?;
    print_warnings(suite.warnings());
    // A suite that cannot run on this machine (its agent program, its sandbox, its
    // container engine or a task's image missing) is not valid here.
    let all: Vec<usize> = (0..suite.arms.len()).collect();
    crate::agent::command::preflight(&suite, &all)?;
    suite.ready_images(&all)?;
    let trials = suite.arms.len() * suite.tasks.len() * suite.replicates() as usize;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "suite '{}' is valid: {} arms x {} tasks x {} replicates = {} trials (baseline '{}')",
        suite.name,
        suite.arms.len(),
        suite.tasks.len(),
        suite.replicates(),
        trials,
        suite.baseline
    )
    .and_then(|()| {
        for task in &suite.tasks {
            write!(out, "  task {}: {} features", task.name, task.features.len())?;
            if !(task.acceptance.is_empty() && task.forbidden.is_empty()) {
                write!(
                    out,
                    ", goal contract with {} acceptance and {} forbidden",
                    task.acceptance.len(),
                    task.forbidden.len()
                )?;
            }
            if let Some(env) = &task.environment {
                write!(out, ", {}", container_of(env))?;
            }
            writeln!(out)?;
            for part in task.not_run() {
                writeln!(out, "    not run: {part}")?;
            }
        }
        let hidden = std::sync::LazyLock::new(|| crate::agent::command::query_hidden(&suite));
        for arm in &suite.arms {
            writeln!(
                out,
                "  arm {}: agent = \"{}\" (driver {}), list_format = \"{}\", strategy = \"{}\", initializer = {}, ledger = \"{}\", max_sessions = {}, session_turns = {}, crash_rate = {}",
                arm.name,
                arm.agent,
                suite.agent_of(arm).name(),
                arm.list_format,
                arm.strategy.as_str(),
                arm.initializer,
                arm.ledger.as_str(),
                arm.max_sessions,
                arm.session_turns,
                arm.crash_rate
            )?;
            writeln!(out, "    {}", arm_keys(arm))?;
            if let Ok(Some(targets)) = crate::agent::command::reachable(&suite, arm, &hidden) {
                let list: Vec<String> = targets.iter().map(ToString::to_string).collect();
                writeln!(
                    out,
                    "    network: {} (through the harness's proxy; nothing else)",
                    list.join(", ")
                )?;
            }
        }
        if uses_sandbox(&suite) {
            writeln!(out, "  sandbox: {}", sandbox_summary(&suite))?;
        }
        Ok(())
    })
    .io_context(|| "cannot print".to_string())?;
    drop(out);
    if args.checks {
        return super::check_task::run(&super::args::CheckTaskArgs {
            inputs: vec![args.suite.clone()],
            repeats: 3,
            format: super::args::CheckTaskFormat::Text,
            jobs: None,
            sandbox: super::args::CheckTaskSandbox::Auto,
            quiet: false,
        });
    }
    Ok(exit_code::OK)
}

/// The container a task runs in, as `validate` names it.
fn container_of(env: &crate::suite::Environment) -> String {
    let image = match &env.image {
        crate::suite::Image::Reference(image) => format!("image '{image}'"),
        crate::suite::Image::Dockerfile(path) => format!("the image of '{}'", path.display()),
    };
    let network = if env.allow_internet {
        "its checks may reach the network"
    } else {
        "no network"
    };
    format!("in a container of {image} at '{}', {network}", env.workdir)
}

/// The newer arm keys in `suite.toml`'s own spelling: the list schema, the exit check
/// and the budgets always, the prompts and the environment when the arm sets them.
fn arm_keys(arm: &Arm) -> String {
    let quote = |s: &str| toml::Value::String(s.to_string()).to_string();
    let mut keys = vec![
        format!("list_schema = {}", quote(arm.list_schema.as_str())),
        format!("exit_check = {}", quote(arm.exit_check.as_str())),
    ];
    let prompts: Vec<String> = [
        ("initializer", &arm.prompts.initializer),
        ("coding", &arm.prompts.coding),
    ]
    .into_iter()
    .filter_map(|(key, p)| p.as_ref().map(|p| format!("{key} = {}", quote(&p.path))))
    .collect();
    if !prompts.is_empty() {
        keys.push(format!("prompts = {{ {} }}", prompts.join(", ")));
    }
    if !arm.env.is_empty() {
        let env: Vec<String> = arm
            .env
            .iter()
            .map(|(k, v)| format!("{k} = {}", quote(v)))
            .collect();
        keys.push(format!("env = {{ {} }}", env.join(", ")));
    }
    keys.push(format!("session_tokens = {}", arm.session_tokens));
    keys.push(format!("trial_tokens = {}", arm.trial_tokens));
    keys.push(format!("trial_cost_usd = {:?}", arm.trial_cost_usd));
    keys.join(", ")
}
