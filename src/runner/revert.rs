//! `exit_check = "revert"`: after a coding session whose exit check failed, the harness
//! puts the work directory back to the last commit after which the check passed, and
//! observes it again for the next session.

use crate::error::{Error, Result};
use crate::observe::{Observation, Observer};
use crate::workspace::Workspace;

/// Resets `ws` to `last_pass` (`git reset --hard` + `git clean -fdx`) and returns the
/// observation of the reset tree, which the next session starts from. The effects log
/// lies outside the work directory: irreversible actions stay done.
pub fn revert(
    ws: &Workspace,
    observer: &Observer<'_>,
    last_pass: Option<&str>,
) -> Result<Observation> {
    let commit = last_pass.ok_or_else(|| {
        Error::Tool("there is no commit after which the exit check passed".into())
    })?;
    crate::git::reset_hard(&ws.work_dir, commit)?;
    observer.observe(ws)
}
