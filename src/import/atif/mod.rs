//! `loopbench import atif`: ATIF trajectories (Harbor's Agent Trajectory Interchange
//! Format: Harbor's own, converters' from other agents' logs, and loopbench's export)
//! → a trace. Which files, chained how, become which sessions ([`import`]); what one
//! document holds besides its steps: root, usage, how it ended ([`document`]); its
//! steps turned into actions ([`map`]).

mod codex_tools;
mod document;
mod import;
mod map;

pub use import::{IMPORTER, import};
