//! The engine says when a run starts and when it finishes, itself: whoever drives a
//! plan gets the run's start first (counting what an earlier process finished) and
//! its finish last, with every trial's events between.

use std::collections::BTreeSet;
use std::time::Instant;

use loopbench::events::{Event, EventKind, EventSink};
use loopbench::runner::{RunOptions, execute};
use loopbench::study::spec::{RunSettings, RunSpec};
use loopbench::suite::Suite;

use crate::common;

/// Keeps each event's kind, in order.
#[derive(Default)]
struct Kinds(Vec<EventKind>);

impl EventSink for Kinds {
    fn handle(&mut self, event: &Event) -> loopbench::error::Result<()> {
        self.0.push(event.kind.clone());
        Ok(())
    }
}

#[test]
fn the_engine_emits_the_runs_start_first_and_its_finish_last() {
    let suite = Suite::load(&common::repo_root().join("suites/seed-replication")).unwrap();
    let asked = RunSettings {
        replicates: Some(2),
        ..RunSettings::default()
    };
    let spec = RunSpec::of_request(suite, Some(&["json"]), asked).unwrap();
    let plan = spec.plan(&BTreeSet::new()).unwrap();
    let tasks = spec.suite().unwrap().tasks.len();
    assert_eq!(plan.trials.len(), 2 * tasks);
    let tmp = tempfile::tempdir().unwrap();
    let options = RunOptions {
        jobs: 2,
        finished_before: 3,
        run_dir: loopbench::store::open_run_dir(tmp.path()),
        keep_repos: false,
        infra: Default::default(),
        prior_attempts: Default::default(),
    };
    let mut kinds = Kinds::default();
    execute(&plan, &options, &mut kinds, Instant::now()).unwrap();
    let kinds = kinds.0;
    match kinds.first() {
        Some(EventKind::RunStarted { run_dir, trials }) => {
            assert_eq!(*trials, 3 + plan.trials.len());
            assert_eq!(run_dir.path(), tmp.path());
        }
        other => panic!("the first event is not the run's start: {other:?}"),
    }
    assert!(
        matches!(kinds.last(), Some(EventKind::RunFinished)),
        "the last event is not the run's finish: {:?}",
        kinds.last()
    );
    let finished = kinds
        .iter()
        .filter(|k| matches!(k, EventKind::TrialFinished(_)))
        .count();
    assert_eq!(finished, plan.trials.len());
    let starts = kinds
        .iter()
        .filter(|k| matches!(k, EventKind::RunStarted { .. } | EventKind::RunFinished))
        .count();
    assert_eq!(starts, 2, "one start and one finish");
}
