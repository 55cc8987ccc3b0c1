//! What every container of one task shares: the engine, the image made ready, where
//! the work directory appears, the task's own environment, its limits and whether its
//! checks may reach the network. Made once per task and run (the suite reads what the
//! task says into it); each session or check then asks it for one [`ContainerRun`].

use std::ffi::OsString;

use super::engine::Engine;
use super::image::ReadyImage;
use super::run::{ContainerLimits, ContainerRun, Mount};
use crate::sandbox::RunAs;

/// The containers of one task.
#[derive(Debug, Clone)]
pub struct TaskContainer {
    /// The engine.
    pub engine: Engine,
    /// The image.
    pub image: ReadyImage,
    /// Where the work directory appears inside.
    pub workdir: String,
    /// The task's `[environment] env`, added to every container's environment.
    pub env: Vec<(String, OsString)>,
    /// Each container's limits.
    pub limits: ContainerLimits,
    /// Whether a check's container may reach the network (an agent's never does).
    pub allow_internet: bool,
}

/// Who a container of this harness runs as: under a root harness, the sandbox's
/// unprivileged user (who must be handed what the container may write); otherwise the
/// image's user, which a rootless engine maps to the harness's own.
pub fn container_user() -> Option<crate::sandbox::SandboxUser> {
    RunAs::for_layouts().map(|r| r.user)
}

impl TaskContainer {
    /// A container of this task showing `mounts`, with `env` over the task's own
    /// environment; `network` only where the task allows it.
    pub fn run(
        &self,
        mounts: Vec<Mount>,
        env: Vec<(String, OsString)>,
        network: bool,
    ) -> ContainerRun {
        let mut all = self.env.clone();
        for (k, v) in env {
            all.retain(|(e, _)| *e != k);
            all.push((k, v));
        }
        ContainerRun {
            engine: self.engine.clone(),
            image: self.image.id.clone(),
            mounts,
            env: all,
            workdir: self.workdir.clone(),
            network: network && self.allow_internet,
            limits: self.limits,
            user: container_user(),
            stdin: false,
            tmp_bytes: None,
        }
    }
}
