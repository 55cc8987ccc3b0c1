//! The status-schema fields (`in_progress`, `contract_edits`) and the exit check of a
//! session, each computed from observations only. Every function returns the ids
//! behind its count, so that a record can carry them as evidence.

use std::collections::HashSet;

use crate::feature_list::{Contract, FeatureList, ListSchema};
use crate::observe::{Check, ListState, Observation};

/// Ids whose state is `in_progress` after a session, first entry per id; `None` under
/// the passes schema or when the list is missing or does not parse.
pub fn in_progress_ids(after: &Observation) -> Option<Vec<String>> {
    if after.schema != ListSchema::Status {
        return None;
    }
    let list = after.list.parsed()?;
    Some(
        first_entries(list)
            .filter(|e| e.state() == crate::feature_list::Status::InProgress)
            .map(|e| e.id.clone())
            .collect(),
    )
}

/// Whether the goal contract changed in a session: the goal, or either list (each
/// string with trailing whitespace stripped; order counts). `None` under the passes
/// schema or when the list is missing or unparseable on either side.
pub fn contract_changed(before: &Observation, after: &Observation) -> Option<bool> {
    if after.schema != ListSchema::Status {
        return None;
    }
    let (b, a) = before.list.parsed().zip(after.list.parsed())?;
    Some(!same_contract(&b.contract, &a.contract))
}

fn same_contract(b: &Contract, a: &Contract) -> bool {
    let same_list = |x: &[String], y: &[String]| {
        x.len() == y.len() && x.iter().zip(y).all(|(p, q)| p.trim_end() == q.trim_end())
    };
    b.goal.trim_end() == a.goal.trim_end()
        && same_list(&b.acceptance, &a.acceptance)
        && same_list(&b.forbidden, &a.forbidden)
}

/// The exit check after a session, with what failed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExitCheck {
    /// The tree was not clean (`clean_tree` false: something is not committed, or git
    /// could not tell).
    pub dirty: bool,
    /// PROGRESS.md is missing or holds only whitespace.
    pub no_notes: bool,
    /// The list file exists and does not parse.
    pub list_unparseable: bool,
    /// Canonical entries claimed done whose check fails with the agent's own tests.
    pub unverified_claims: Vec<String>,
}

impl ExitCheck {
    /// Whether the check passed.
    pub fn passed(&self) -> bool {
        !self.dirty && !self.no_notes && !self.list_unparseable && self.unverified_claims.is_empty()
    }
}

/// The exit check of the tree a session left: committed, notes present, the list (when
/// there is one) parses, and every canonical entry claimed done (passes = true, or
/// completed) is self-verified.
pub fn exit_check(after: &Observation) -> ExitCheck {
    let unverified_claims = match after.list.parsed() {
        Some(list) => first_entries(list)
            .filter(|e| e.passes)
            .filter(|e| {
                after
                    .self_verified
                    .get(&e.id)
                    .is_some_and(|c| *c != Check::Pass)
            })
            .map(|e| e.id.clone())
            .collect(),
        None => Vec::new(),
    };
    ExitCheck {
        dirty: !after.clean_tree(),
        no_notes: !after.progress_nonblank,
        list_unparseable: matches!(after.list, ListState::Unparseable(_)),
        unverified_claims,
    }
}

/// The entries of a list, the first one of each id (as [`FeatureList::get`] judges).
fn first_entries(list: &FeatureList) -> impl Iterator<Item = &crate::feature_list::Entry> {
    let mut seen = HashSet::new();
    list.entries
        .iter()
        .filter(move |e| seen.insert(e.id.as_str()))
}
