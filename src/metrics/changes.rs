//! What a session changed of what the harness observes: the work directory's files
//! (the feature list and the notes among them), whether they are committed, and the
//! effects log. A session that changed any of it is the agent's session and is counted,
//! whatever its failure's classification says: only one that changed nothing can be a
//! failure outside the agent, left out of the tables.

use crate::observe::Observation;

/// The parts of what the harness observes that differ between `before` and `after`, in
/// words ("the work directory", "whether it is committed", "the effects log"); empty
/// when nothing differs, `None` when `after` could not be observed (then nothing shows
/// that the session changed nothing).
pub fn observed_changes(before: &Observation, after: &Observation) -> Option<Vec<&'static str>> {
    if after.unobserved {
        return None;
    }
    let mut changed = Vec::new();
    if after.tree_hash != before.tree_hash {
        changed.push("the work directory");
    }
    if after.clean != before.clean {
        changed.push("whether the work directory is committed");
    }
    if after.effects.changed_since(&before.effects) {
        changed.push("the effects log");
    }
    Some(changed)
}
