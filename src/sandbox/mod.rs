//! The sandbox for everything an agent wrote: the agent itself (`sandbox = "bwrap"`),
//! the verify commands that run its tests, and a replayed trace's `run` actions. Deny by
//! default: no capability, an allowlist of the host instead of the host, a built
//! environment, per-session limits, no descriptor the harness inherited, and no kernel
//! keyring shared with the host or another sandbox.
//!
//! The code above this module asks for a [`SandboxKind`] and starts a confined command
//! from a [`Layout`] through [`Confined`] (`kind.rs` says where each kind lives); only
//! this module names an implementation: bubblewrap, or a container of the task's image
//! (`container/`).

mod allowlist;
mod batch;
mod batch_supervisor;
pub mod container;
mod environment;
mod host;
mod inherited;
mod keyring;
mod kind;
mod launch;
mod layout;
mod limits;
pub mod net;
mod places;
mod probe;
mod user;

pub use allowlist::{Allowlist, SYSTEM_DIRS, SYSTEM_SECRETS, Shown};
pub use batch::{
    Batch, BatchCheck, BatchEnd, BatchRan, shell_quote, supervise_batches_with, unguessable_seed,
};
pub use batch_supervisor::{SUBCOMMAND as BATCH_SUPERVISOR, supervise_batch};
pub use environment::{INHERITED, Redactor, base as base_env, passed as passed_env};
pub use host::{
    BWRAP, SimpleCommand, bwrap_works, direct_command, disables_userns, exec_form, find_program,
    shell_pwd, simple_command,
};
pub use inherited::close_inherited_descriptors;
pub use keyring::{fresh_session_keyring, keyring_filter};
pub use kind::SandboxKind;
pub use launch::{Confined, Launch, Started};
pub use layout::{DEFAULT_TMP_BYTES, Hidden, Layout};
pub use limits::{
    Cgroup, DEFAULT_MAX_HOME_BYTES, DEFAULT_MAX_MEMORY, DEFAULT_MAX_PIDS, Enforcement, Limits,
};
pub use places::{
    Answer, SEARCH_DEPTH, SEARCH_ENTRIES, SEARCHED_SYSTEM_DIRS, answers_inside, refused_place,
};
pub use probe::{check_bwrap, check_bwrap_for, check_confined};
pub use user::{DEFAULT_SANDBOX_ID, RunAs, SANDBOX_USER_VAR, SandboxUser, take_back};

/// A name for what this process makes outside itself (a cgroup, a container):
/// `loopbench-<pid>-<n>-<nanos>`, `n` counted by `next`. The pid says whose it is (a
/// leftover of a dead process is told by it), and the clock's nanoseconds keep a later
/// process given the same pid from meeting a name that a killed one left.
fn fresh_name(next: &std::sync::atomic::AtomicU64) -> String {
    format!(
        "loopbench-{}-{}-{}",
        std::process::id(),
        next.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos())
    )
}
