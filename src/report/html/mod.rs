//! The self-contained HTML pages: `report.html` of a run (the verdict, the tables with
//! sortable columns, the plots, every trial's timeline with its evidence, filterable;
//! a large run's timelines in files beside it) and `weekly.html` of the trends. An
//! exporter-like renderer beside [`super::export`]: a data model ([`model`]), a run's
//! rows and its sessions' steps streamed into it ([`rows`], [`run_data`], [`steps`])
//! and one template ([`page`]).

mod by_task;
pub mod model;
pub mod page;
pub mod page_table;
pub mod rows;
pub mod run_data;
mod script_file;
mod script_json;
mod steps;

pub use model::{Page, run_page, weekly_page};
pub use page::{WEEKLY_HTML, render, write_run_html, write_weekly_html};
