//! The engine: runs trials and emits events; it never prints. Reporters and the
//! results store consume the events.

mod gate;
mod plan;
mod prompt;
mod repo_bundle;
mod retry;
mod revert;
mod run;
mod steps;
mod trial;
mod trial_events;

pub use plan::{Plan, PlannedTrial, ReplayArm, ReplaySet, ReplayStart, Shard, Source, TraceFile};
pub use run::{RunOptions, default_jobs, execute};
pub use steps::run_trial;
pub use trial::{Attempt, KeepRepo, TrialResult, TrialSpec, session_env};
