//! Reporters: turn events and records into text for people, and run results into
//! summaries, comparisons, weekly trends and plots.

pub mod aggregate;
pub mod attempts;
pub mod by_task;
pub mod compare;
pub mod compare_output;
mod csv_batches;
mod csv_input;
pub mod export;
pub mod format;
pub mod html;
pub mod notes;
pub mod plot;
pub mod power;
mod progress;
pub mod run_info;
mod run_tables;
pub mod sequential_outcome;
mod session_table;
pub mod show;
mod show_causes;
pub mod show_trajectory;
pub mod summary;
mod summary_bootstrap;
pub mod summary_data;
mod summary_md;
mod table;
pub mod trajectory_marks;
mod trial_sums;
pub mod verdict;
pub mod weekly;

pub use aggregate::{Aggregate, Count, Counts, aggregate};
pub use notes::{SIMULATED_NOTE, shard_note};
pub use power::underpowered;
pub use progress::Progress;
pub use run_info::RunInfo;
pub use session_table::SessionTable;
pub use summary::{DEFAULT_CONFIDENCE, summarize, write_summary};
pub use summary_data::{Summary, SummaryRow};
pub use table::{Align, Table};
pub use verdict::Verdict;
