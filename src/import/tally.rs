//! Counts of what an import made of the tool calls, per session and in all, and the
//! line per session that tells a user whether a transcript was understood.

use std::collections::BTreeMap;

/// Why a file or shell tool call was not applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SkipReason {
    /// The user rejected it, a permission rule denied it or a hook blocked it.
    Refused,
    /// Its result was an error: the tool failed, or the CLI rejected its input.
    Failed,
    /// It never got a result (the transcript was cut off).
    NoResult,
    /// It named a path, or its shell was, outside the root.
    OutsideRoot,
    /// A notebook cell edit, whose whole-file effect the transcript does not show.
    Notebook,
    /// Its input lacked what the tool needs (no path, no content).
    Malformed,
    /// The transcript does not say what it did to the file (a change recorded without
    /// its content, an edit format the importer does not read): the session is
    /// divergent.
    Unreconstructed,
}

impl SkipReason {
    /// Every reason, in the order the summary names them.
    pub const ALL: [SkipReason; 7] = [
        SkipReason::Refused,
        SkipReason::Failed,
        SkipReason::NoResult,
        SkipReason::OutsideRoot,
        SkipReason::Notebook,
        SkipReason::Malformed,
        SkipReason::Unreconstructed,
    ];

    /// How the summary names it.
    pub fn as_str(self) -> &'static str {
        match self {
            SkipReason::Refused => "refused",
            SkipReason::Failed => "failed",
            SkipReason::NoResult => "without a result",
            SkipReason::OutsideRoot => "outside the root",
            SkipReason::Notebook => "notebook edit",
            SkipReason::Malformed => "malformed",
            SkipReason::Unreconstructed => "not reconstructable",
        }
    }
}

/// Counts over the tool calls of a session, or of a whole import.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Tally {
    /// File and shell calls turned into actions.
    pub applied: u64,
    /// Actions emitted (write, edit, run), resets included.
    pub actions: u64,
    /// Calls whose result was an error: not applied.
    pub failed: u64,
    /// Of those, calls refused by the user, a permission rule or a hook.
    pub refused: u64,
    /// Calls without a result: not applied.
    pub unanswered: u64,
    /// Calls recorded as `skip`.
    pub skipped: u64,
    /// The `skip` lines by reason ([`SkipReason::OutsideRoot`], `Notebook`, `Malformed`,
    /// `Unreconstructed`).
    pub skips: BTreeMap<SkipReason, u64>,
    /// Writes of `originalFile` emitted by the divergence rule: each is one call found
    /// divergent at import.
    pub resets: u64,
    /// Calls found divergent at import without a reset: edits whose context does not
    /// match what the importer knows of the file, changes recorded without their
    /// content.
    pub diverged: u64,
    /// Edits that carry what the agent saw (`original`) for replay to fall back to:
    /// replay may find them divergent.
    pub fallbacks: u64,
    /// Calls of tools without a file effect, by name.
    pub ignored: BTreeMap<String, u64>,
}

impl Tally {
    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Tally) {
        self.applied += other.applied;
        self.actions += other.actions;
        self.failed += other.failed;
        self.refused += other.refused;
        self.unanswered += other.unanswered;
        self.skipped += other.skipped;
        self.resets += other.resets;
        self.diverged += other.diverged;
        self.fallbacks += other.fallbacks;
        for (reason, n) in &other.skips {
            *self.skips.entry(*reason).or_default() += n;
        }
        for (tool, n) in &other.ignored {
            *self.ignored.entry(tool.clone()).or_default() += n;
        }
    }

    /// How many calls were not applied for `reason`.
    pub fn not_applied(&self, reason: SkipReason) -> u64 {
        match reason {
            SkipReason::Refused => self.refused,
            SkipReason::Failed => self.failed - self.refused,
            SkipReason::NoResult => self.unanswered,
            other => self.skips.get(&other).copied().unwrap_or(0),
        }
    }

    /// One line: `7 file and shell calls: 4 applied, 3 skipped (1 failed, 1 outside the
    /// root, 1 notebook edit), 1 divergent; 2 calls without a file effect (Read 1,
    /// Task 1)`.
    pub fn describe(&self) -> String {
        let skipped: u64 = SkipReason::ALL.iter().map(|r| self.not_applied(*r)).sum();
        let why: Vec<String> = SkipReason::ALL
            .iter()
            .map(|r| (self.not_applied(*r), r.as_str()))
            .filter(|(n, _)| *n > 0)
            .map(|(n, what)| format!("{n} {what}"))
            .collect();
        let mut text = format!(
            "{} file and shell call(s): {} applied, {skipped} skipped",
            self.applied + skipped,
            self.applied,
        );
        if !why.is_empty() {
            text += &format!(" ({})", why.join(", "));
        }
        text += &format!(", {} divergent", self.resets + self.diverged);
        if self.fallbacks > 0 {
            text += &format!(" (+{} edit(s) replay may find divergent)", self.fallbacks);
        }
        if !self.ignored.is_empty() {
            let n: u64 = self.ignored.values().sum();
            let tools: Vec<String> = self
                .ignored
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect();
            text += &format!("; {n} call(s) without a file effect ({})", tools.join(", "));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_line_names_every_count_and_only_the_reasons_that_occurred() {
        let mut t = Tally {
            applied: 4,
            failed: 3,
            refused: 2,
            resets: 1,
            ..Tally::default()
        };
        t.skips.insert(SkipReason::OutsideRoot, 1);
        t.ignored.insert("Read".into(), 2);
        assert_eq!(
            t.describe(),
            "8 file and shell call(s): 4 applied, 4 skipped (2 refused, 1 failed, 1 outside the root), 1 divergent; 2 call(s) without a file effect (Read 2)"
        );
        let mut all = t.clone();
        all.add(&Tally {
            applied: 1,
            unanswered: 1,
            fallbacks: 2,
            ..Tally::default()
        });
        assert_eq!(
            all.describe(),
            "10 file and shell call(s): 5 applied, 5 skipped (2 refused, 1 failed, 1 without a result, 1 outside the root), 1 divergent (+2 edit(s) replay may find divergent); 2 call(s) without a file effect (Read 2)"
        );
        assert_eq!(
            Tally::default().describe(),
            "0 file and shell call(s): 0 applied, 0 skipped, 0 divergent"
        );
    }
}
