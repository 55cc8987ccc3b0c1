//! A run's specification: which trials one run is (a suite's arms or recorded traces,
//! the seed, the replicates, the shard and the look it runs), made once from what a
//! command asked or from a results directory's manifest and never changed after. It
//! yields the run's plan, given what is already recorded, and the manifest fields that
//! say which experiment it is; every directory a run goes on from (`resume`, `merge`,
//! the next look, a replay resumed) is held to it by one check.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Mismatch, Named, Purpose, Result, ResultsDirError};
use crate::run_dir::RunDir;
use crate::runner::{Plan, ReplaySet, Shard, Source};
use crate::store::{Manifest, ReplayInputs, SequentialStep, continuation, open_run_dir};
use crate::study::sequential::Sequencer;
use crate::suite::Suite;

/// One look of a sequential suite run, run on its own (`run --look K [--after DIR]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookStep {
    /// The look, 1-based.
    pub look: usize,
    /// The merged run of looks 1 to `look` − 1, absolute; `None` for look 1.
    pub after: Option<PathBuf>,
}

/// What `run` asked to change of a suite's run.
#[derive(Debug, Clone, Default)]
pub struct RunSettings {
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--replicates`.
    pub replicates: Option<u32>,
    /// `--look K` of a sequential run.
    pub look: Option<usize>,
    /// `--after DIR` of a look after the first.
    pub after: Option<PathBuf>,
    /// `--shard I/N`.
    pub shard: Option<Shard>,
}

/// A run's specification (see the module's documentation).
#[derive(Debug, Clone)]
pub struct RunSpec {
    source: Arc<Source>,
    /// Indices into the source's arms, in its order.
    arms: Vec<usize>,
    seed: u64,
    replicates: u32,
    shard: Option<Shard>,
    look: Option<LookStep>,
    /// The hash of the suite with its tasks, or of a replay's task and traces.
    content_hash: String,
}

impl RunSpec {
    /// A run of `suite` over the arms named (all when `None`) as `run` asked for it: a
    /// sequential run is bounded by its `max_replicates`, is sharded one look at a time
    /// and takes no `--replicates`; `--look` needs a sequential suite. The images of the
    /// arms' container tasks are made ready here, the last change the suite sees.
    pub fn of_request(suite: Suite, arms: Option<&[&str]>, asked: RunSettings) -> Result<RunSpec> {
        let mut replicates = suite.replicates();
        if let Some(r) = asked.replicates {
            if r == 0 {
                return Err(Error::BadInput("--replicates must be at least 1".into()));
            }
            crate::suite::check_plan_size(suite.arms.len(), suite.tasks.len(), r, "--replicates")
                .map_err(Error::BadInput)?;
            replicates = r;
        }
        if let Some(seq) = &suite.sequential {
            if asked.shard.is_some() && asked.look.is_none() {
                return Err(Error::BadInput(
                    "a sequential run decides after each look from every trial so far, so its \
                     shards are shards of one look: run `--look 1 --shard I/N`, merge them, \
                     then `--look 2 --after MERGED --shard I/N`, and so on (or run it in one \
                     process)"
                        .into(),
                ));
            }
            if asked.replicates.is_some() {
                return Err(Error::BadInput(
                    "--replicates does not apply to a sequential run: its [sequential] \
                     table's max_replicates bounds it"
                        .into(),
                ));
            }
            replicates = seq.max_replicates;
        } else if asked.look.is_some() {
            return Err(Error::BadInput(format!(
                "--look applies to a sequential run, and suite '{}' has no [sequential] table",
                suite.name
            )));
        }
        let after = match &asked.after {
            Some(dir) => Some(std::fs::canonicalize(dir).map_err(|e| {
                Error::BadInput(format!("--after: cannot open '{}': {e}", dir.display()))
            })?),
            None => None,
        };
        let arms = select_arms(&suite, arms)?;
        RunSpec {
            seed: asked.seed.unwrap_or(suite.seed()),
            replicates,
            shard: asked.shard,
            look: asked.look.map(|look| LookStep { look, after }),
            content_hash: suite.content_hash.clone(),
            arms,
            source: Arc::new(Source::Suite(suite)),
        }
        .with_images_ready()
    }

    /// The suite run `manifest` (of `dir`) records, from its suite as it is now, which
    /// must be unchanged since (else refused: [`Purpose::Resume`]).
    pub fn of_suite_manifest(dir: &RunDir, manifest: &Manifest) -> Result<RunSpec> {
        let Some(suite_path) = manifest.suite_path.clone() else {
            return Err(ResultsDirError::NotResumable {
                dir: dir.path().to_path_buf(),
            }
            .into());
        };
        let suite = Suite::load(Path::new(&suite_path))?;
        let names: Vec<&str> = manifest.arms.iter().map(String::as_str).collect();
        let arms = select_arms(&suite, Some(&names))?;
        let spec = RunSpec {
            seed: manifest.seed.unwrap_or(suite.seed()),
            replicates: manifest.replicates,
            shard: manifest.shard,
            look: manifest.sequential_step.as_ref().map(|step| LookStep {
                look: step.look,
                after: step.after.as_ref().map(PathBuf::from),
            }),
            content_hash: suite.content_hash.clone(),
            arms,
            source: Arc::new(Source::Suite(suite)),
        };
        spec.check(
            Purpose::Resume,
            manifest,
            dir.path(),
            Path::new(&suite_path),
        )?;
        spec.with_images_ready()
    }

    /// The same run with the images of its container tasks made ready (built, or
    /// found), which is part of making it: nothing changes its suite after.
    fn with_images_ready(mut self) -> Result<RunSpec> {
        match Arc::get_mut(&mut self.source) {
            Some(Source::Suite(suite)) => suite.prepare_containers(&self.arms)?,
            Some(Source::Replay(_)) => {}
            None => {
                return Err(Error::Tool(
                    "a run's suite was shared before it was made".into(),
                ));
            }
        }
        Ok(self)
    }

    /// A replay of every trace of `set`, whose task and traces hash to `content_hash`.
    pub fn of_replay(set: ReplaySet, content_hash: String) -> RunSpec {
        let replicates = set
            .arms
            .iter()
            .map(|a| u32::try_from(a.traces.len()).unwrap_or(u32::MAX))
            .max()
            .unwrap_or(1);
        RunSpec {
            arms: (0..set.arms.len()).collect(),
            seed: 0,
            replicates,
            shard: None,
            look: None,
            content_hash,
            source: Arc::new(Source::Replay(set)),
        }
    }

    /// What drives the trials.
    pub fn source(&self) -> &Arc<Source> {
        &self.source
    }

    /// The suite, for a suite's run.
    pub fn suite(&self) -> Option<&Suite> {
        match self.source.as_ref() {
            Source::Suite(suite) => Some(suite),
            Source::Replay(_) => None,
        }
    }

    /// The arms run (indices into the source's arms), in the source's order.
    pub fn arms(&self) -> &[usize] {
        &self.arms
    }

    /// The run's seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Replicates per (arm, task): a sequential run's most.
    pub fn replicates(&self) -> u32 {
        self.replicates
    }

    /// The shard this run is, if one.
    pub fn shard(&self) -> Option<Shard> {
        self.shard
    }

    /// The look this run is of a sequential run run look by look, if one.
    pub fn look(&self) -> Option<&LookStep> {
        self.look.as_ref()
    }

    /// A sequential suite run in one process: its looks are decided as it goes.
    pub fn is_sequential(&self) -> bool {
        self.look.is_none() && self.suite().is_some_and(|s| s.sequential.is_some())
    }

    /// The trials of `arms` up to `replicates` per (arm, task).
    pub fn trials(&self, arms: &[usize], replicates: u32) -> Plan {
        Plan::of(Arc::clone(&self.source), arms, replicates, self.seed)
    }

    /// What is left of the run once the trials in `done` are recorded: every trial of
    /// its arms or, for one look of a sequential run, the trials that look adds for the
    /// arms the looks before it leave running; of those its shard's slice; less `done`.
    pub fn plan(&self, done: &BTreeSet<String>) -> Result<Plan> {
        let plan = match &self.look {
            Some(step) => self.look_trials(step)?,
            None => self.trials(&self.arms, self.replicates),
        };
        let plan = match self.shard {
            Some(shard) => plan.sharded(shard),
            None => plan,
        };
        Ok(plan.without(done))
    }

    /// The manifest fields that say which experiment this run is, the rest as
    /// [`Manifest::stamped`] makes them.
    pub fn identity(&self) -> Manifest {
        let arms = self.arm_names();
        match self.source.as_ref() {
            Source::Suite(suite) => Manifest {
                suite: suite.name.clone(),
                suite_hash: self.content_hash.clone(),
                arms,
                tasks: suite.tasks.iter().map(|t| t.name.clone()).collect(),
                seed: Some(self.seed),
                replicates: self.replicates,
                verify_sandbox: suite.verify_sandbox_of_arms(&self.arms),
                shard: self.shard,
                sequential_step: self.look.as_ref().map(|step| SequentialStep {
                    look: step.look,
                    after: step.after.as_ref().map(|a| a.display().to_string()),
                }),
                ..Manifest::stamped()
            },
            Source::Replay(set) => {
                let first = set.arms.first();
                let arm_containers = replay_containers(set, &arms);
                Manifest {
                    suite: "replay".into(),
                    suite_hash: self.content_hash.clone(),
                    arms,
                    tasks: vec![set.task.name.clone()],
                    replicates: self.replicates,
                    verify_sandbox: set.sandbox,
                    arm_containers,
                    replay: Some(ReplayInputs {
                        task: std::path::absolute(&set.task.dir)
                            .unwrap_or_else(|_| set.task.dir.clone())
                            .display()
                            .to_string(),
                        formats: set.arms.iter().map(|a| a.format).collect(),
                        schema: first.map(|a| a.schema).unwrap_or_default(),
                        exit_check: first.map_or(crate::suite::ExitCheck::Off, |a| a.exit_check),
                        ledger: first.map_or(crate::suite::Ledger::Memo, |a| a.ledger),
                        session_tokens: first.map_or(0, |a| a.session_tokens),
                        start: first.map(|a| a.start).unwrap_or_default(),
                        keep_work: set.keep_work,
                    }),
                    ..Manifest::stamped()
                }
            }
        }
    }

    /// Holds `theirs`, the manifest of `dir`, to this run for `purpose`; `other` is the
    /// directory (or the suite or task) this run is of, for the message.
    pub fn check(
        &self,
        purpose: Purpose,
        theirs: &Manifest,
        dir: &Path,
        other: &Path,
    ) -> Result<(), Mismatch> {
        continuation::check(purpose, &self.identity(), theirs, dir, other)
    }

    /// The sequential design of a suite's run, over its arms.
    pub fn sequencer(&self) -> Result<Sequencer> {
        Sequencer::new(&self.source, &self.arms, self.seed)
    }

    /// The names of the arms run, in order.
    pub fn arm_names(&self) -> Vec<String> {
        self.arms
            .iter()
            .filter_map(|&i| match self.source.as_ref() {
                Source::Suite(suite) => suite.arms.get(i).map(|a| a.name.clone()),
                Source::Replay(set) => set.arms.get(i).map(|a| a.name.clone()),
            })
            .collect()
    }

    /// The trials look `step` adds for the arms that the merged run of the earlier
    /// looks leaves running. Checked before anything is written: `after` must be that
    /// merged run of this suite, with every earlier look complete and some arm still
    /// running.
    fn look_trials(&self, step: &LookStep) -> Result<Plan> {
        let sequencer = self.sequencer()?;
        let looks = sequencer.looks();
        let look = step.look;
        let name = self.suite().map_or("", |s| s.name.as_str());
        if look == 0 || look > looks {
            return Err(Error::BadInput(format!(
                "--look {look}: the design of suite '{name}' has looks 1 to {looks}"
            )));
        }
        let active = match (look, &step.after) {
            (1, None) => sequencer.others().to_vec(),
            (1, Some(_)) => {
                return Err(Error::BadInput(
                    "--after names the merged run of the earlier looks; look 1 has none".into(),
                ));
            }
            (_, None) => {
                return Err(Error::BadInput(format!(
                    "--look {look} needs --after DIR: the merged run of looks 1 to {}, whose \
                     decisions say which arms still run",
                    look - 1
                )));
            }
            (_, Some(after)) => {
                let dir = &open_run_dir(after);
                self.check_after(dir)?;
                let decided = sequencer.decided(dir)?;
                if decided.active.is_empty() {
                    return Err(ResultsDirError::SequentialStopped {
                        dir: dir.path().to_path_buf(),
                        looks_done: decided.looks_done,
                        look,
                    }
                    .into());
                }
                if decided.looks_done != look - 1 {
                    return Err(ResultsDirError::OtherLooks {
                        dir: dir.path().to_path_buf(),
                        looks_done: decided.looks_done,
                        look,
                    }
                    .into());
                }
                decided.active
            }
        };
        Ok(sequencer.new_trials(look, &active))
    }

    /// `dir` (`--after`) is a finished, merged run of this very suite, seed and arm
    /// selection.
    fn check_after(&self, dir: &RunDir) -> Result<()> {
        let named = |dir: &RunDir| (dir.path().to_path_buf(), Named::After);
        if !dir.manifest().is_file() {
            let (dir, named) = named(dir);
            return Err(ResultsDirError::NoManifest { dir, named }.into());
        }
        let theirs = Manifest::read(dir)?;
        self.check(Purpose::NextLook, &theirs, dir.path(), dir.path())?;
        if let Some(step) = &theirs.sequential_step {
            return Err(ResultsDirError::AfterIsAShard {
                dir: dir.path().to_path_buf(),
                look: step.look,
            }
            .into());
        }
        if theirs.finished.is_none() {
            let (dir, named) = named(dir);
            return Err(ResultsDirError::Unfinished { dir, named }.into());
        }
        Ok(())
    }
}

/// Indices of the arms named (all when `None`), in suite order.
pub fn select_arms(suite: &Suite, names: Option<&[&str]>) -> Result<Vec<usize>> {
    let Some(names) = names else {
        return Ok((0..suite.arms.len()).collect());
    };
    let mut picked = Vec::new();
    for &name in names {
        match suite.arms.iter().position(|a| a.name == name) {
            Some(i) => picked.push(i),
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

/// What ran the containers of each arm of a replay whose task runs in them: the
/// sandbox, the engine and the task's image (as a suite's run records it).
fn replay_containers(
    set: &ReplaySet,
    arms: &[String],
) -> std::collections::BTreeMap<String, crate::store::ArmContainers> {
    let Some(container) = &set.container else {
        return Default::default();
    };
    let ran = crate::store::ArmContainers {
        sandbox: set.sandbox,
        engine: container.engine.name.to_string(),
        images: [(
            set.task.name.clone(),
            crate::store::ImageRan {
                reference: container.image.reference.clone(),
                digest: container.image.id.clone(),
            },
        )]
        .into(),
    };
    arms.iter().map(|a| (a.clone(), ran.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Field;
    use crate::sandbox::SandboxKind;

    fn seed_suite() -> Suite {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("suites/seed-replication");
        Suite::load(&dir).unwrap()
    }

    #[test]
    fn a_request_changes_the_run_never_the_suite() {
        let suite = seed_suite();
        let (file_seed, file_replicates) = (suite.seed(), suite.replicates());
        let asked = RunSettings {
            seed: Some(file_seed + 1),
            replicates: Some(file_replicates + 2),
            ..RunSettings::default()
        };
        let spec = RunSpec::of_request(suite, Some(&["json", "yaml"]), asked).unwrap();
        assert_eq!(spec.seed(), file_seed + 1);
        assert_eq!(spec.replicates(), file_replicates + 2);
        let suite = spec.suite().unwrap();
        assert_eq!(
            (suite.seed(), suite.replicates()),
            (file_seed, file_replicates)
        );
        let plan = spec.plan(&BTreeSet::new()).unwrap();
        assert_eq!(plan.seed, file_seed + 1);
        assert_eq!(
            plan.trials.len(),
            2 * suite.tasks.len() * (file_replicates as usize + 2)
        );
        let identity = spec.identity();
        assert_eq!(identity.arms, ["json", "yaml"]);
        assert_eq!(identity.seed, Some(file_seed + 1));
        assert_eq!(identity.replicates, file_replicates + 2);
    }

    #[test]
    fn each_purpose_refuses_exactly_the_directories_it_must_and_names_the_field() {
        let spec = RunSpec::of_request(seed_suite(), None, RunSettings::default()).unwrap();
        let ours = spec.identity();
        let changed = |field: Field| {
            let mut m = ours.clone();
            match field {
                Field::Kind => {
                    let replay = r#"{"task":"/t","formats":[]}"#;
                    m.replay = Some(serde_json::from_str(replay).unwrap());
                }
                Field::Suite => m.suite = "other".into(),
                Field::Content => m.suite_hash = "0".repeat(64),
                Field::Seed => m.seed = m.seed.map(|s| s + 1),
                Field::Replicates => m.replicates += 1,
                Field::Arms => m.arms.reverse(),
                Field::Tasks => m.tasks.push("another".into()),
                Field::Sandbox => {
                    m.verify_sandbox = match m.verify_sandbox {
                        SandboxKind::None => SandboxKind::Bwrap,
                        _ => SandboxKind::None,
                    }
                }
                Field::Version => m.loopbench_version = "0.0.0-other".into(),
            }
            m
        };
        let purposes = [
            Purpose::Merge,
            Purpose::NextLook,
            Purpose::Resume,
            Purpose::Replay,
        ];
        for purpose in purposes {
            let (dir, other) = (Path::new("theirs"), Path::new("ours"));
            assert_eq!(
                spec.check(purpose, &ours, dir, other),
                Ok(()),
                "{purpose:?}"
            );
            for field in Field::ALL {
                let refused = spec.check(purpose, &changed(field), dir, other);
                let must = continuation::compared(purpose).contains(&field);
                match refused {
                    Err(mismatch) => {
                        assert!(must, "{purpose:?} refused {field:?}: {mismatch}");
                        assert_eq!((mismatch.purpose, mismatch.field), (purpose, field));
                        assert_ne!(mismatch.ours, mismatch.theirs);
                    }
                    Ok(()) => assert!(!must, "{purpose:?} accepted {field:?} changed"),
                }
            }
        }
        // What each continuation compares: every field of the experiment for the ones
        // that join two directories, what can have changed since for the ones that go
        // on in the same directory.
        assert_eq!(continuation::compared(Purpose::Merge), &Field::ALL);
        assert_eq!(continuation::compared(Purpose::NextLook), &Field::ALL);
        for purpose in [Purpose::Resume, Purpose::Replay] {
            assert_eq!(
                continuation::compared(purpose),
                &[Field::Content, Field::Version]
            );
        }
    }
}
