//! A study: what one command runs, between the engine and the commands. It builds the
//! plan of a suite or of recorded traces (or rebuilds it from a results directory's
//! manifest, to resume), drives it into the results directory with the progress bars
//! and the warnings of a run, and for a sequential suite runs the plan look by look and
//! decides after each look which arms go on. The commands parse arguments, call a
//! study and print its outcome.

pub mod drive;
pub mod new_run;
pub mod replay;
pub mod resume;
pub mod sequential;
pub mod spec;
pub mod suite_run;
