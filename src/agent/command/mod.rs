//! The `command` agent driver: any agent CLI as a session, in its own process group,
//! with a time limit, crash injection, retries of failed starts, usage reports, output
//! captured up to a cap per stream, and an optional sandbox (`crate::sandbox`).
//!
//! The environment of a session is the session environment contract plus:
//!
//! | variable | meaning |
//! | --- | --- |
//! | `LOOPBENCH_TURNS` | the session's turn budget |
//! | `LOOPBENCH_SESSION_KIND` | `initializer` or `coding` |
//! | `LOOPBENCH_USAGE_FILE` | where the agent may write its usage and `status` as JSON (outside the work directory, writable in its sandbox: a `failure` there is never taken, an `interrupted` status is only its declaration) |
//! | `LOOPBENCH_STATE_DIR` | a directory kept across the sessions of a trial, outside the work directory |
//! | `LOOPBENCH_TRIAL_SEED` | the trial's seed, for agents that draw random numbers |
//! | `LOOPBENCH_INTERRUPT_AT` | with `crash = "agent"` only: the fraction of its work after which the agent must stop and report `interrupted` |
//! | `LOOPBENCH_BIN` | the loopbench binary running the harness (readable in the sandbox even where it lies in a hidden place), for wrappers that call `loopbench usage` |

mod agent;
mod capture;
mod child;
pub mod cli_usage;
mod program;
mod reports;
pub mod supervise;
mod usage;

pub use agent::{CommandAgent, RetryPolicy, STATE_DIR, USAGE_FILE};
pub use child::{KILL_GRACE, signal_running_agents};
pub use program::{preflight, query_hidden, reachable, runs_sim_agent};
pub use reports::read_reports;
pub use usage::{Reported, read_stream_json, read_usage_file, report_result_line};
