//! Observation: what the harness measures in a work directory before and after each
//! session. Observing never changes the work directory.

mod batched;
mod entry;
mod hooks;
mod in_container;
mod list_file;
mod oracle;
mod reward;
mod runner_summary;
mod shadowed_names;
mod snapshot;
mod verify;
mod verify_cache;

pub use hooks::tampered as tampered_hooks;
pub use in_container::InContainer;
pub use reward::{REWARD_DIR, RewardVerdict, judge_reward};
pub use snapshot::{ListState, Observation, Observer, TREE_STORE};
pub use verify::{Check, Failure, OUTPUT_TAIL_BYTES, Verdict, VerifyCache};
