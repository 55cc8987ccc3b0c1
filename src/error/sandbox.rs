//! What can go wrong with a sandbox or a container engine: a sandbox that does not work
//! on this machine, a task that would run outside the container it needs (or in one
//! without an image), an engine that does not answer or an image that is not ready, a
//! `solve.sh` that does not run, a command agent's program or places its sandbox
//! cannot show, the network proxy's socket, and a command the engine did not run to its
//! end (the container never started, or the engine lost it while it ran).

use std::path::{Path, PathBuf};

/// An error of a sandbox or of the container engine behind it: exit 2 (the machine or
/// the suite must be fixed before anything runs), but for a container lost mid-run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SandboxError {
    /// The engine did not run a command in its container to its end: the container was
    /// never made or started, or it was removed or killed by the engine while it ran.
    /// The harness's failure, never the command's (nor the agent's whose work it
    /// checked): a run records the session `infra`.
    #[error(
        "cannot run '{command}' in a container: the container could not start, or the engine \
         lost it: {why}"
    )]
    ContainerLost {
        /// The command that was to run.
        command: String,
        /// The engine's report.
        why: String,
    },
    /// A sandbox something asks for does not work here (bwrap cannot make its
    /// namespaces or holds a capability, no container engine answers).
    #[error("{needs}, but {why}")]
    Unavailable {
        /// What asked for it ("agent 'x' uses sandbox = \"bwrap\"").
        needs: String,
        /// What was found, and how to fix the machine.
        why: String,
    },
    /// A task made for a container whose checks would run elsewhere.
    #[error(
        "task '{task}' ('{}') {why}: it runs in a container of its image, and its checks \
         would run under {checks_under}; set verify_sandbox = \"container\" in the suite (or \
         sandbox = \"container\" in the agent's table)",
        dir.display()
    )]
    OutsideItsContainer {
        /// The task's name.
        task: String,
        /// The task's directory.
        dir: PathBuf,
        /// Why it needs its container ("names an image in [environment]").
        why: String,
        /// The sandbox its checks would run in, as a message names it.
        checks_under: String,
    },
    /// A task without an image, asked to run in the container sandbox.
    #[error(
        "task '{task}' ('{}') names no image: the container sandbox runs a task in its image \
         (`[environment] image = \"REFERENCE\"` or `dockerfile = \"PATH\"` in its \
         task.toml)",
        dir.display()
    )]
    NoImage {
        /// The task's name.
        task: String,
        /// The task's directory.
        dir: PathBuf,
    },
    /// A task made for a container, replayed outside it (`replay --unsandboxed`).
    #[error(
        "task '{task}' ('{}') {why}: it runs in a container of its image, and this replay \
         would run its trace's `run` actions and checks under {sandbox}; replay it without \
         --unsandboxed (they then run in containers of its image)",
        dir.display()
    )]
    ReplayOutsideContainer {
        /// The task's name.
        task: String,
        /// The task's directory.
        dir: PathBuf,
        /// Why it needs its container.
        why: String,
        /// The sandbox the replay would use, as a message names it.
        sandbox: String,
    },
    /// A refusal of a task ([`SandboxError::OutsideItsContainer`],
    /// [`SandboxError::NoImage`]) under one arm of a suite.
    #[error("arm '{arm}' (agent '{agent}'): {refusal}")]
    InArm {
        /// The arm.
        arm: String,
        /// Its agent.
        agent: String,
        /// The task's refusal.
        refusal: Box<SandboxError>,
    },
    /// No container engine answers for a task that runs in a container.
    #[error("task '{task}' runs in a container, and {why}")]
    NoEngine {
        /// The task's name.
        task: String,
        /// Which engines were asked and what each said.
        why: String,
    },
    /// A task's image is not there, or does not build.
    #[error("task '{task}': its image is not ready with {engine}: {why}")]
    ImageNotReady {
        /// The task's name.
        task: String,
        /// The engine ("podman").
        engine: String,
        /// What the engine said.
        why: String,
    },
    /// A feature's `solve.sh` could not be run in its container.
    #[error(
        "task '{task}': the solve.sh of feature '{feature}' could not run with {engine}: {why}"
    )]
    SolveNotRun {
        /// The task's name.
        task: String,
        /// The feature's id.
        feature: String,
        /// The engine.
        engine: String,
        /// Why.
        why: String,
    },
    /// A feature's `solve.sh` ran in its container and failed.
    #[error(
        "task '{task}': the solve.sh of feature '{feature}' ('{}') failed in its container \
         ({ended}): {output}",
        solve.display()
    )]
    SolveFailed {
        /// The task's name.
        task: String,
        /// The feature's id.
        feature: String,
        /// The `solve.sh`.
        solve: PathBuf,
        /// How it ended ("exit 3", "timed out", "killed by a signal").
        ended: String,
        /// The end of its output, on one line.
        output: String,
    },
    /// A command agent's program is not there (or not executable).
    #[error(
        "agent '{agent}': program '{program}' not found {} (or not executable)",
        looked_in(relative_to.as_deref())
    )]
    ProgramNotFound {
        /// The agent.
        agent: String,
        /// The program as the suite names it.
        program: String,
        /// The suite directory it was looked for relative to; `None`: on `PATH`.
        relative_to: Option<PathBuf>,
    },
    /// A sandboxed agent's program that the sandbox's user cannot run.
    #[error(
        "agent '{agent}': program '{}' cannot be read and executed by the sandbox's user \
         {user} (the harness runs as root, and the sandbox as that user): chmod a+rx '{}'",
        program.display(),
        program.display()
    )]
    ProgramNotRunnable {
        /// The agent.
        agent: String,
        /// The program (its sandboxed wrapper).
        program: PathBuf,
        /// The sandbox's user, `UID:GID`.
        user: String,
    },
    /// What a sandboxed agent's program says of its sandbox cannot be used (its query
    /// failed, or declares a place that may not be shown).
    #[error("agent '{agent}': program '{}': {why}", program.display())]
    ProgramRefused {
        /// The agent.
        agent: String,
        /// The program.
        program: PathBuf,
        /// Why.
        why: String,
    },
    /// A writable place the suite declares for an agent's sandbox is not a directory.
    #[error("agent '{agent}': {key}: '{}' is not a directory (create it first)", place.display())]
    PlaceNotADirectory {
        /// The agent.
        agent: String,
        /// The key that declares it (`sandbox_rw`, or its older name).
        key: String,
        /// The place.
        place: PathBuf,
    },
    /// A read-only place the suite declares for an agent's sandbox does not exist.
    #[error("agent '{agent}': sandbox_ro: '{}' does not exist", place.display())]
    PlaceMissing {
        /// The agent.
        agent: String,
        /// The place.
        place: PathBuf,
    },
    /// A place the suite declares for an agent's sandbox may not be shown to it.
    #[error("{}: agent '{agent}': {key}: '{}' {why}", suite_file.display(), place.display())]
    PlaceRefused {
        /// The suite file.
        suite_file: PathBuf,
        /// The agent.
        agent: String,
        /// The key that declares it.
        key: String,
        /// The place.
        place: PathBuf,
        /// Why it may not be shown.
        why: String,
    },
    /// A trace to replay runs shell commands, and no confining sandbox works here.
    #[error(
        "{}:{line}: the trace runs shell commands, and no {wanted} sandbox can be made here \
         to run them in ({hint}), so nothing was replayed; pass --unsandboxed to run them on \
         this machine as the recorded agent did",
        trace.display()
    )]
    TraceNeedsSandbox {
        /// The trace file.
        trace: PathBuf,
        /// The line of its first `run` action.
        line: usize,
        /// The sandbox that would confine them.
        wanted: String,
        /// How to make it work here.
        hint: String,
    },
    /// A command agent's arm asks for its sessions in its task's image, and none was
    /// made ready for it (the run's specification makes every image ready first).
    #[error(
        "arm '{arm}': task '{task}' has no image made ready for agent '{agent}' (sandbox = \
         \"{sandbox}\")"
    )]
    NoImageReady {
        /// The arm.
        arm: String,
        /// The task.
        task: String,
        /// The agent.
        agent: String,
        /// The sandbox the agent asks for.
        sandbox: String,
    },
    /// The network proxy's socket path is too long to bind.
    #[error(
        "cannot bind the network proxy's socket at '{}': longer than {max} bytes (set \
         LOOPBENCH_TMPDIR to a shorter directory)",
        socket.display()
    )]
    SocketPathTooLong {
        /// The socket's path.
        socket: PathBuf,
        /// The longest path a Unix socket can be bound at.
        max: usize,
    },
    /// `net-relay` was given no command.
    #[error("net-relay: no command to run")]
    RelayWithoutCommand,
    /// `net-relay` could not start its command.
    #[error("net-relay: cannot start '{program}': {why}")]
    RelayCannotStart {
        /// The program.
        program: String,
        /// Why.
        why: String,
    },
}

/// Where a program was looked for, as [`SandboxError::ProgramNotFound`] says it.
fn looked_in(relative_to: Option<&Path>) -> String {
    match relative_to {
        Some(dir) => format!("relative to '{}'", dir.display()),
        None => "on PATH".to_string(),
    }
}

impl SandboxError {
    /// The exit code of a command this error stops: bad input (the machine, the suite
    /// or the task must be fixed before anything runs), but for a container lost
    /// mid-run, the harness's failure (as an I/O error is).
    pub fn exit_code(&self) -> i32 {
        match self {
            SandboxError::ContainerLost { .. } => crate::exit_code::INTERNAL,
            _ => crate::exit_code::BAD_INPUT,
        }
    }

    /// `error` as a sandbox error when it is one (a [`std::io::Error`] carrying one,
    /// from a command's run), else an I/O error with `context`.
    pub fn or_io(error: std::io::Error, context: impl FnOnce() -> String) -> crate::Error {
        match error.downcast::<SandboxError>() {
            Ok(sandbox) => sandbox.into(),
            Err(error) => crate::Error::io(context(), error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_container_carried_by_an_io_error_comes_back_as_the_engines_failure() {
        let lost = SandboxError::ContainerLost {
            command: "bash /tests/test.sh".into(),
            why: "no such container".into(),
        };
        let err = SandboxError::or_io(std::io::Error::other(lost.clone()), || "ctx".into());
        assert!(matches!(&err, crate::Error::Sandbox(e) if **e == lost));
        assert!(err.is_engine_failure());
        assert_eq!(err.exit_code(), crate::exit_code::INTERNAL);
        let other = SandboxError::or_io(std::io::Error::other("disk"), || "ctx".into());
        assert!(matches!(&other, crate::Error::Io { context, .. } if context == "ctx"));
        assert!(!other.is_engine_failure());
    }

    #[test]
    fn a_trace_that_needs_a_sandbox_is_named_at_its_first_run_action() {
        let err = SandboxError::TraceNeedsSandbox {
            trace: PathBuf::from("traces/a.jsonl"),
            line: 7,
            wanted: "bubblewrap".into(),
            hint: "apt-get install bubblewrap".into(),
        };
        assert_eq!(
            err.to_string(),
            "traces/a.jsonl:7: the trace runs shell commands, and no bubblewrap sandbox can be \
             made here to run them in (apt-get install bubblewrap), so nothing was replayed; \
             pass --unsandboxed to run them on this machine as the recorded agent did"
        );
        assert_eq!(
            crate::Error::from(err).exit_code(),
            crate::exit_code::BAD_INPUT
        );
    }
}
