//! Reporters: turn events and records into text for people.

mod session_table;
mod table;

pub use session_table::SessionTable;
pub use table::{Align, Table};
