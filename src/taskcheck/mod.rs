//! `check-task`: whether a task can measure anything. Its features' checks are run on
//! the task's own trees (`repo/` as it is, the gold applied in dependency order, each
//! feature's gold alone with what it declares it needs), through the same observer a
//! run's verify uses, and judged by the controls of docs/writing-tasks.md.

mod judge;
mod order;
mod plan;
mod report;
mod run;
mod tests_control;

pub use plan::CheckPlan;
pub use report::{CellState, FeatureRow, Problem, Report, TaskReport};
pub use run::check_tasks;
