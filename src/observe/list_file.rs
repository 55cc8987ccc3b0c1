//! A feature-list file that is a symlink: read through it when it resolves to a regular
//! file inside the work directory, as a reader opening the list would.

use std::path::Path;

use crate::agent_file::{self, AgentFile, Links};

/// What a list file that is not a regular file of the tree is taken for.
///
/// A symlink is read through when it resolves to a regular file inside the work
/// directory: a reader opening the list sees that file. One that resolves outside it,
/// to nothing (dangling, or a loop), or to anything but a regular file, is unparseable
/// with the reason: the harness does not read files outside the trial for the agent, and
/// an unreadable list must not pass for a missing one (whose claims are none).
pub(super) fn list_through_link(
    work_dir: &Path,
    name: &str,
    limit: u64,
) -> std::result::Result<Vec<u8>, String> {
    let link = work_dir.join(name);
    let target = std::fs::canonicalize(&link).map_err(|e| {
        format!("the list file is a symlink that resolves to nothing ({e}); it was not read")
    })?;
    let root = std::fs::canonicalize(work_dir)
        .map_err(|e| format!("the work directory cannot be resolved ({e})"))?;
    if !target.starts_with(&root) {
        return Err(format!(
            "the list file is a symlink to '{}', outside the work directory; it was not read",
            target.display()
        ));
    }
    match agent_file::read(&target, limit, Links::Refuse) {
        Ok(AgentFile::Bytes(bytes)) => Ok(bytes),
        Ok(AgentFile::Missing) => Err("the list file is a symlink to a file that is gone".into()),
        Ok(other) => Err(other
            .refusal("the list file's target", limit)
            .unwrap_or_else(|| "the list file cannot be read".into())),
        Err(e) => Err(format!("the list file cannot be read: {e}")),
    }
}
