//! Process exit codes of the `loopbench` binary, documented once.
//!
//! A CI pipeline reads these, so each has exactly one meaning.

/// The command did what was asked and found nothing to judge against it.
pub const OK: i32 = 0;
/// The command worked and found what it was asked to judge: a regression (`compare`)
/// or a failed trial it was asked to fail on.
pub const JUDGED_FAILURE: i32 = 1;
/// Bad input: a suite, task, trace or argument that does not fit the contract.
/// The message names the file, line and what was expected.
pub const BAD_INPUT: i32 = 2;
/// The run was interrupted; `loopbench resume RUN_DIR` continues it.
pub const INTERRUPTED: i32 = 3;
/// The harness itself failed (I/O error, `git` missing). Not part of DESIGN's four codes:
/// an internal failure must never read as "ok" or as "regression found".
pub const INTERNAL: i32 = 4;
