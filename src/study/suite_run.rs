//! A suite's run: which arms it selects, the manifest that records the experiment, and
//! the suite of an existing run read back from its manifest (to resume it, or to judge
//! its looks, or for its power warning), which must be unchanged since.

use std::collections::BTreeMap;
use std::path::Path;

use crate::agent::command;
use crate::error::Purpose;
use crate::error::{Error, Result};
use crate::run_dir::RunDir;
use crate::runner::{Plan, Shard};
use crate::store::continuation;
use crate::store::{Manifest, SequentialStep};
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

/// Says once, on stderr, who the sandboxed processes run as and how their limits are
/// enforced here (or that they are not, and what still bounds them); returns both for
/// the manifest.
pub fn announce_sandbox() -> (Option<String>, Option<String>) {
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

/// Indices of the arms named (all when `None`), in suite order.
pub fn select_arms(suite: &Suite, names: Option<&[&str]>) -> Result<Vec<usize>> {
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
    for &name in names {
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

/// What `run` was asked to change of a suite.
pub struct RunSettings {
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--replicates`.
    pub replicates: Option<u32>,
    /// `--look K` of a sequential run.
    pub look: Option<usize>,
    /// `--shard I/N` was given.
    pub sharded: bool,
}

/// Applies `asked` to `suite`: a sequential run is bounded by its `max_replicates`, is
/// sharded one look at a time, and takes no `--replicates`; `--look` needs a sequential
/// suite.
pub fn apply_settings(suite: &mut Suite, asked: &RunSettings) -> Result<()> {
    if let Some(seed) = asked.seed {
        suite.seed = seed;
    }
    if let Some(r) = asked.replicates {
        if r == 0 {
            return Err(Error::BadInput("--replicates must be at least 1".into()));
        }
        suite.replicates = r;
        crate::suite::check_plan_size(suite.arms.len(), suite.tasks.len(), r, "--replicates")
            .map_err(Error::BadInput)?;
    }
    if let Some(seq) = &suite.sequential {
        if asked.sharded && asked.look.is_none() {
            return Err(Error::BadInput(
                "a sequential run decides after each look from every trial so far, so its \
                 shards are shards of one look: run `--look 1 --shard I/N`, merge them, then \
                 `--look 2 --after MERGED --shard I/N`, and so on (or run it in one process)"
                    .into(),
            ));
        }
        if asked.replicates.is_some() {
            return Err(Error::BadInput(
                "--replicates does not apply to a sequential run: its [sequential] table's \
                 max_replicates bounds it"
                    .into(),
            ));
        }
        suite.replicates = seq.max_replicates;
    } else if asked.look.is_some() {
        return Err(Error::BadInput(format!(
            "--look applies to a sequential run, and suite '{}' has no [sequential] table",
            suite.name
        )));
    }
    Ok(())
}

/// How a suite run was asked for, beyond the suite and its arms.
pub struct SuiteRunSetup<'a> {
    /// The suite file as given.
    pub suite_file: &'a Path,
    /// `--shard I/N`.
    pub shard: Option<Shard>,
    /// `--look K` and `--after DIR` of one look of a sharded sequential run.
    pub sequential_step: Option<SequentialStep>,
    /// `--keep-repos`.
    pub keep_repos: bool,
    /// What [`sandbox_facts`] said, when any arm is sandboxed.
    pub sandbox: (Option<String>, Option<String>),
}

/// The fields of the manifest of a run of `suite` over `arms` that say which experiment
/// it is, the rest as [`Manifest::stamped`] makes them: what a continuation holds
/// another run to (`store::continuation`).
pub fn suite_identity(suite: &Suite, arms: &[usize]) -> Manifest {
    Manifest {
        suite: suite.name.clone(),
        suite_hash: suite.content_hash.clone(),
        arms: arms.iter().map(|&i| suite.arms[i].name.clone()).collect(),
        tasks: suite.tasks.iter().map(|t| t.name.clone()).collect(),
        seed: Some(suite.seed),
        replicates: suite.replicates,
        verify_sandbox: suite.verify_sandbox_of_arms(arms),
        ..Manifest::stamped()
    }
}

/// The manifest of a run of `suite` over `arms`.
pub fn suite_manifest(suite: &Suite, arms: &[usize], setup: SuiteRunSetup) -> Manifest {
    let identity = suite_identity(suite, arms);
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
    Manifest {
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
        shard: setup.shard.map(|s| s.to_string()),
        sequential_step: setup.sequential_step,
        keep_repos: setup.keep_repos,
        sandbox_limits,
        sandbox_user,
        network,
        arm_containers: arm_containers(suite, arms),
        ..identity
    }
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

/// The whole plan of a suite run, from its manifest: the suite must be unchanged.
pub fn suite_plan(dir: &RunDir, manifest: &Manifest) -> Result<Plan> {
    let (suite, arms) = suite_of_run(dir, manifest)?;
    let replicates = suite.replicates;
    Ok(Plan::suite(suite, &arms, replicates))
}

/// The suite a run was made from, with the run's seed and replicates, and the indices
/// of its arms: the suite must be unchanged since. Says the suite's warnings on stderr.
pub fn suite_of_run(dir: &RunDir, manifest: &Manifest) -> Result<(Suite, Vec<usize>)> {
    let Some(suite_path) = manifest.suite_path.clone() else {
        return Err(Error::BadInput(format!(
            "'{}' was written neither by `loopbench run` nor by `loopbench replay` (no suite or traces in its manifest); it cannot be resumed",
            dir.path().display()
        )));
    };
    let mut suite = Suite::load(Path::new(&suite_path))?;
    print_warnings(suite.warnings());
    let now = continuation::as_now(manifest, &suite.content_hash);
    continuation::check(Purpose::Resume, &now, manifest, dir.path(), &suite_path)?;
    if let Some(seed) = manifest.seed {
        suite.seed = seed;
    }
    suite.replicates = manifest.replicates;
    let arms = select_arms(&suite, Some(&manifest_arms(manifest)))?;
    suite.prepare_containers(&arms)?;
    Ok((suite, arms))
}

/// The arm names of a run's manifest.
pub fn manifest_arms(manifest: &Manifest) -> Vec<&str> {
    manifest.arms.iter().map(String::as_str).collect()
}

/// Says each warning of a suite or task on stderr.
pub fn print_warnings<'a>(warnings: impl IntoIterator<Item = &'a str>) {
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
}
