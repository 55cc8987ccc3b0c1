//! What can go wrong with a sandbox or a container engine: a command the engine did
//! not run to its end (the container never started, or the engine lost it while it
//! ran).

/// An error of a sandbox or of the container engine behind it.
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
}

impl SandboxError {
    /// The exit code of a command this error stops: a lost container is the
    /// harness's failure (as an I/O error is).
    pub fn exit_code(&self) -> i32 {
        match self {
            SandboxError::ContainerLost { .. } => crate::exit_code::INTERNAL,
        }
    }

    /// `error` as a sandbox error when it is one (a [`std::io::Error`] carrying one,
    /// from a command's run), else an I/O error with `context`.
    pub fn or_io(error: std::io::Error, context: impl FnOnce() -> String) -> crate::Error {
        match error.downcast::<SandboxError>() {
            Ok(sandbox) => crate::Error::Sandbox(sandbox),
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
        assert!(matches!(&err, crate::Error::Sandbox(e) if *e == lost));
        assert!(err.is_engine_failure());
        assert_eq!(err.exit_code(), crate::exit_code::INTERNAL);
        let other = SandboxError::or_io(std::io::Error::other("disk"), || "ctx".into());
        assert!(matches!(&other, crate::Error::Io { context, .. } if context == "ctx"));
        assert!(!other.is_engine_failure());
    }
}
