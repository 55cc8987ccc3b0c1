//! A suite's run: the manifest that records the experiment, what the sandbox is here,
//! and the power of the suite an existing run was made from.

use std::path::Path;

use crate::agent::command;
use crate::error::{Error, Result};
use crate::run_dir::RunDir;
use crate::store::Manifest;
use crate::study::spec::RunSpec;
use crate::suite::{AgentDriver, Suite};

/// How the sandbox's limits are enforced here and who the sandboxed processes run as
/// (a root harness's sandbox user), for the manifest.
pub fn sandbox_facts() -> (Option<String>, Option<String>) {
    let limits = format!(
        "{}; {}",
        crate::sandbox::Enforcement::here().describe(),
        crate::workspace::describe_space_bounds()
    );
    let user = match crate::sandbox::RunAs::of_harness() {
        Ok(Some(run_as)) => Some(run_as.user.spelled()),
        _ => None,
    };
    (Some(limits), user)
}

/// What a run says once of [`sandbox_facts`] (when it has them): who the sandboxed
/// processes run as and how their limits are enforced here (or that they are not, and
/// what still bounds them).
pub fn sandbox_line((limits, user): &(Option<String>, Option<String>)) -> Option<String> {
    let limits = limits.as_deref()?;
    Some(match user {
        Some(user) => {
            format!("sandbox: agents and checks run as {user} (the harness runs as root); {limits}")
        }
        None => format!("sandbox: {limits}"),
    })
}

/// How a suite run was asked for, beyond what its specification says.
pub struct SuiteRunSetup<'a> {
    /// The suite file as given.
    pub suite_file: &'a Path,
    /// `--keep-repos`.
    pub keep_repos: bool,
    /// What [`sandbox_facts`] said, when any arm is sandboxed.
    pub sandbox: (Option<String>, Option<String>),
}

/// The manifest of the suite's run `spec`.
pub fn suite_manifest(spec: &RunSpec, setup: SuiteRunSetup) -> Result<Manifest> {
    let Some(suite) = spec.suite() else {
        return Err(Error::Tool("a suite's manifest of recorded traces".into()));
    };
    let arms = spec.arms();
    let identity = spec.identity();
    let selected = &identity.arms;
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
    let suite_path = std::fs::canonicalize(setup.suite_file)
        .unwrap_or_else(|_| setup.suite_file.to_path_buf())
        .display()
        .to_string();
    let (sandbox_limits, sandbox_user) = setup.sandbox;
    // `preflight` has asked every arm already (and the query's answers are kept), so
    // an arm that fails here does not run either.
    let hidden = std::sync::LazyLock::new(|| command::query_hidden(suite));
    let network = arms
        .iter()
        .filter_map(|&i| {
            let arm = &suite.arms[i];
            let targets = command::reachable(suite, arm, &hidden).ok().flatten()?;
            Some((
                arm.name.clone(),
                targets.iter().map(ToString::to_string).collect(),
            ))
        })
        .collect();
    Ok(Manifest {
        suite_path: Some(suite_path),
        baseline: Some(if selected.contains(&suite.baseline) {
            suite.baseline.clone()
        } else {
            selected[0].clone()
        }),
        driver: match drivers.as_slice() {
            [one] => (*one).into(),
            _ => "mixed".into(),
        },
        simulated,
        keep_repos: setup.keep_repos,
        sandbox_limits,
        sandbox_user,
        network,
        arm_containers: arm_containers(suite, arms),
        arm_settings: arms
            .iter()
            .filter_map(|&i| suite.arms.get(i))
            .map(|arm| (arm.name.clone(), arm_settings(suite, arm)))
            .collect(),
        ..identity
    })
}

/// The settings of `arm` the manifest records: what the suite says of it, by the names
/// its file gives them.
fn arm_settings(
    suite: &Suite,
    arm: &crate::suite::Arm,
) -> serde_json::Map<String, serde_json::Value> {
    let serde_json::Value::Object(settings) = serde_json::json!({
        "agent": arm.agent,
        "driver": suite.agent_of(arm).name(),
        "list_format": arm.list_format.as_str(),
        "list_schema": arm.list_schema.as_str(),
        "strategy": arm.strategy.as_str(),
        "initializer": arm.initializer,
        "ledger": arm.ledger.as_str(),
        "exit_check": arm.exit_check.as_str(),
        "max_sessions": arm.max_sessions,
        "session_turns": arm.session_turns,
        "crash_rate": arm.crash_rate,
        "session_tokens": arm.session_tokens,
        "trial_tokens": arm.trial_tokens,
        "trial_cost_usd": arm.trial_cost_usd,
    }) else {
        return serde_json::Map::new();
    };
    settings
}

/// Per arm of `arms` (indices) whose checks run in containers: the engine and each
/// task's image (made ready before the run: [`Suite::prepare_containers`]).
fn arm_containers(
    suite: &Suite,
    arms: &[usize],
) -> std::collections::BTreeMap<String, crate::store::ArmContainers> {
    let mut out = std::collections::BTreeMap::new();
    for arm in arms.iter().filter_map(|&i| suite.arms.get(i)) {
        let kind = suite.verify_sandbox_of(arm);
        let images: std::collections::BTreeMap<String, crate::store::ImageRan> = suite
            .containers
            .iter()
            .map(|(task, c)| {
                (
                    task.clone(),
                    crate::store::ImageRan {
                        reference: c.image.reference.clone(),
                        digest: c.image.id.clone(),
                    },
                )
            })
            .collect();
        let engine = suite.containers.values().next().map(|c| c.engine.name);
        if let (true, Some(engine)) = (kind.needs_image(), engine) {
            out.insert(
                arm.name.clone(),
                crate::store::ArmContainers {
                    sandbox: kind,
                    engine: engine.to_string(),
                    images,
                },
            );
        }
    }
    out
}

/// The `min_detectable_effect` of the suite the run in `dir` was made from, when that
/// suite is still there unchanged; None otherwise. `merge` warns with it once for the
/// merged run, since a shard's power says nothing about the study.
pub fn min_detectable_effect_of_run(dir: &RunDir) -> Option<f64> {
    let manifest = Manifest::read(dir).ok()?;
    let suite = Suite::load(Path::new(manifest.suite_path.as_deref()?)).ok()?;
    (suite.content_hash == manifest.suite_hash)
        .then_some(suite.min_detectable_effect)
        .flatten()
}

/// Whether any session or check of the suite runs in a sandbox.
pub fn uses_sandbox(suite: &Suite) -> bool {
    suite.verify_sandbox.confines()
        || suite.agents.values().any(|a| {
            matches!(
                a,
                AgentDriver::Command {
                    sandbox: Some(_),
                    ..
                }
            )
        })
}

/// What the sandbox limits on this machine, and what it cannot enforce here, for
/// `validate`.
pub fn sandbox_summary(suite: &Suite) -> String {
    let limits = suite.limits;
    let mut text = format!(
        "max_pids = {}, max_memory = {} bytes; {}; {}; private /tmp, /run and /dev/shm of {} bytes each",
        limits.max_pids,
        limits.max_memory,
        crate::sandbox::Enforcement::here().describe(),
        crate::workspace::describe_space_bounds(),
        crate::sandbox::DEFAULT_TMP_BYTES
    );
    if let Ok(Some(run_as)) = crate::sandbox::RunAs::of_harness() {
        text += &format!(
            "; agents and checks run as {} (the harness runs as root)",
            run_as.user.spelled()
        );
    }
    let hidden = crate::sandbox::Hidden::for_run(
        &suite.dir.join("results"),
        suite.tasks.iter().map(|t| t.dir.as_path()),
    );
    for (entry, why) in &hidden.allowlist().skipped {
        text += &format!("; PATH entry '{}' not shown ({why})", entry.display());
    }
    text
}
