//! What can be wrong with the environment `loopbench sim-agent` runs in: the harness
//! sets it (the command driver's contract), so a variable unset or not of its form, or
//! an arm, a task or a profile the suite does not have, means the process was not
//! started by a harness that ran this suite, or its state directory was tampered with.

use std::path::PathBuf;

/// The simulated agent's process cannot run the session it was started for (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimAgentError {
    /// A variable of the contract is not set.
    #[error(
        "sim-agent: ${var} is not set; sim-agent runs as a command agent of `loopbench run`, \
         which sets it"
    )]
    Unset {
        /// The variable's name.
        var: String,
    },
    /// A variable of the contract does not parse as what it holds.
    #[error("sim-agent: ${var}='{text}' is not valid: {reason}")]
    Invalid {
        /// The variable's name.
        var: String,
        /// Its value.
        text: String,
        /// What the parser said.
        reason: String,
    },
    /// `$LOOPBENCH_INTERRUPT_AT` is not a number.
    #[error("sim-agent: LOOPBENCH_INTERRUPT_AT='{text}' is not a number: {reason}")]
    InterruptAt {
        /// Its value.
        text: String,
        /// What the parser said.
        reason: String,
    },
    /// `--profile` names no profile of the simulated agent.
    #[error("sim-agent: unknown sim profile '{profile}' (known: {})", known.join(", "))]
    UnknownProfile {
        /// The name given.
        profile: String,
        /// The profiles there are.
        known: Vec<String>,
    },
    /// The suite has no arm of that name.
    #[error("sim-agent: suite '{suite}' has no arm '{arm}'")]
    NoArm {
        /// The suite's name.
        suite: String,
        /// The arm asked for.
        arm: String,
    },
    /// The suite has no task of that name.
    #[error("sim-agent: suite '{suite}' has no task '{task}'")]
    NoTask {
        /// The suite's name.
        suite: String,
        /// The task asked for.
        task: String,
    },
    /// The memory file in the state directory is not one the sim wrote.
    #[error("sim-agent: '{}' is not a sim-agent memory file: {reason}", file.display())]
    BadMemory {
        /// The file.
        file: PathBuf,
        /// What the parser said.
        reason: String,
    },
}
