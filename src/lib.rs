//! loopbench: a batch A/B harness for long-running coding-agent loops. It runs or
//! replays multi-session trials, observes what every session did to the repository and
//! writes reproducible tables. See docs/architecture.md for how the parts fit.

pub mod agent;
pub mod agent_file;
pub mod cli;
pub mod cmd;
pub mod csv_text;
pub mod effects;
pub mod error;
pub mod events;
pub mod exit_code;
pub mod export;
pub mod feature_list;
pub mod fresh_namespaces;
pub mod fsutil;
pub mod git;
pub mod import;
pub mod lines;
pub mod malloc_arenas;
pub mod metrics;
pub mod notice;
pub mod observe;
pub mod process;
pub mod process_group;
pub mod rates;
pub mod record;
pub mod report;
pub mod run_dir;
pub mod runner;
pub mod sandbox;
pub mod seed;
pub mod stats;
pub mod store;
pub mod study;
pub mod suite;
pub mod taskcheck;
pub mod terminal;
pub mod timestamp;
pub mod workspace;

pub use error::{Error, Result};
