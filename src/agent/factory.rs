//! The agents of a run's trials, made from what drives the trial: the suite's agent
//! table for an arm (the built-in sim or a command agent) or a recorded trace. The
//! engine asks here for a trial's agent and drives it through [`Agent`] alone; a new
//! kind of agent is a new arm of [`suite_agent`], never a change to the engine.

use super::command::CommandAgent;
use super::driver::Agent;
use super::replay::{ReplayAgent, RunActions};
use super::sim::SimAgent;
use super::trace::Trace;
use crate::error::{Error, Result, SandboxError};
use crate::run_dir::RunDir;
use crate::sandbox::Hidden;
use crate::suite::sim_profile::Profile;
use crate::suite::{AgentDriver, Arm, Suite, Task, TrialKey};

/// What the engine knows of a suite's trial when it asks for its agent.
pub struct SuiteTrial<'a> {
    /// The suite.
    pub suite: &'a Suite,
    /// The trial's arm.
    pub arm: &'a Arm,
    /// The trial's task.
    pub task: &'a Task,
    /// The trial.
    pub key: TrialKey,
    /// Its seed.
    pub trial_seed: u64,
    /// Which attempt at the trial (from 1).
    pub attempt: u32,
    /// The run's results directory (a command agent's captures go there).
    pub run_dir: &'a RunDir,
    /// What every sandbox of the run hides.
    pub hidden: &'a Hidden,
}

/// The agent of a suite's trial, as its arm's agent table says.
pub fn suite_agent<'a>(trial: SuiteTrial<'a>) -> Result<Box<dyn Agent + 'a>> {
    let SuiteTrial {
        suite,
        arm,
        task,
        key,
        trial_seed,
        attempt,
        run_dir,
        hidden,
    } = trial;
    Ok(match suite.agent_of(arm) {
        AgentDriver::Sim { profile } => {
            let profile = Profile::named(profile)
                .ok_or_else(|| Error::BadInput(format!("unknown sim profile '{profile}'")))?;
            let agent = SimAgent::new(profile, task, arm, trial_seed)?;
            match suite.containers.get(&task.name) {
                Some(container) if crate::suite::has_container_gold(task) => Box::new(
                    agent.with_container_gold(&*crate::suite::container_gold(task, container)?),
                ),
                _ => Box::new(agent),
            }
        }
        AgentDriver::Command { sandbox, .. } => {
            // Sessions in a container of the task's image: never elsewhere instead.
            let hidden = match sandbox.as_ref().map(|s| s.kind) {
                Some(kind) if kind.needs_image() => {
                    let image = suite.containers.get(&task.name).ok_or_else(|| {
                        Error::from(SandboxError::NoImageReady {
                            arm: arm.name.clone(),
                            task: task.name.clone(),
                            agent: arm.agent.clone(),
                            sandbox: kind.to_string(),
                        })
                    })?;
                    hidden.clone().in_image(image.clone())
                }
                _ => hidden.clone(),
            };
            Box::new(CommandAgent::for_trial(
                suite, arm, key, trial_seed, attempt, run_dir, &hidden,
            )?)
        }
    })
}

/// The agent that replays `trace`, running its `run` actions as `run_actions` says.
pub fn replay_agent(trace: Trace, run_actions: RunActions) -> Box<dyn Agent> {
    Box::new(ReplayAgent::new(trace, run_actions))
}
