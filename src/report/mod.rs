//! Reporters: turn events and records into text for people.

mod rates;
mod session_table;
mod table;

pub use rates::session_counts;
pub use session_table::SessionTable;
pub use table::{Align, Table};
