//! `show`'s sentences: every cause behind a session's counts, in words, in the order of
//! the counts, read from the session's record and evidence alone.

use crate::metrics::{Evidence, FailedCheck, SessionMetrics};
use crate::record::SessionRecord;

/// Every cause, in the order of the counts. `counted`: the session is one of the
/// trial's counted sessions, not one `failures.jsonl` holds.
pub(super) fn causes(
    s: &SessionRecord,
    e: &Evidence,
    before: Option<&Evidence>,
    counted: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    out.extend(list_parse(&s.metrics));
    out.extend(false_claims_at_start(e, before));
    out.extend(new_claims(e));
    out.extend(claims_still_failing(e));
    out.extend(verified_and_broken(e));
    out.extend(list_edits(e));
    out.extend(test_edits(e));
    out.extend(tampering(&s.metrics, e));
    out.extend(unreliable_checks_and_actions(s, e));
    out.push(exit_state(&s.metrics));
    out.extend(ignored_seen(e));
    out.extend(harness_doings(s, counted));
    if let Some(tree) = &e.tree {
        out.push(format!("tree after the session: {tree}"));
    }
    out
}

/// Whether the session left a feature list that parses.
fn list_parse(m: &SessionMetrics) -> Option<String> {
    match m.list_parse_ok {
        Some(false) => Some(
            "left a feature list that does not parse, so the list-based counts are empty".into(),
        ),
        None => Some("left no feature list, so the list-based counts are empty".into()),
        Some(true) => None,
    }
}

/// The claims that were false when the session started, with the check that failed
/// before it when there was one.
fn false_claims_at_start(e: &Evidence, before: Option<&Evidence>) -> Vec<String> {
    e.told_false
        .iter()
        .flatten()
        .map(|id| {
            let earlier =
                before.and_then(|b| b.failed_checks.iter().flatten().find(|f| f.id == *id));
            match earlier {
                Some(f) => format!(
                    "started from a false claim: {id} was marked done but its check failed: {}",
                    check_words(f)
                ),
                None => {
                    format!("started from a false claim: {id} was marked done but not verified")
                }
            }
        })
        .collect()
}

/// What became of each claim the session made: premature, flaky or good.
fn new_claims(e: &Evidence) -> Vec<String> {
    let premature = e.premature.clone().unwrap_or_default();
    e.newly_claimed
        .iter()
        .flatten()
        .map(|id| {
            if premature.contains(id) {
                match failed_check(e, id) {
                    Some(f) => format!("claimed {id}; its check failed: {}", check_words(f)),
                    None => format!("claimed {id}; its check failed"),
                }
            } else if e.flaky.contains(id) {
                format!("claimed {id}; its check was flaky (counted neither way)")
            } else if e.newly_verified.contains(id) {
                format!("claimed {id}; its check passes")
            } else {
                format!(
                    "claimed {id}; not premature: its check passes, or it is no feature of the task"
                )
            }
        })
        .collect()
}

/// The failed check of feature `id`, if its check failed after the session.
fn failed_check<'e>(e: &'e Evidence, id: &str) -> Option<&'e FailedCheck> {
    e.failed_checks.iter().flatten().find(|f| f.id == id)
}

/// Claims that still fail and are told nowhere else.
fn claims_still_failing(e: &Evidence) -> Vec<String> {
    // A claim that still fails is told by `false_claims_at_start` when it was false at
    // the start already, and by `verified_and_broken` when the session broke it.
    let told_already = |id: &str| {
        e.newly_claimed.iter().flatten().any(|c| c == id)
            || e.told_false.iter().flatten().any(|c| c == id)
            || e.regressions.iter().any(|c| c == id)
    };
    e.failed_checks
        .iter()
        .flatten()
        .filter(|f| !told_already(&f.id))
        .map(|f| {
            format!(
                "{} is still marked done and its check still fails: {}",
                f.id,
                check_words(f)
            )
        })
        .collect()
}

/// The features the session verified, then those it broke.
fn verified_and_broken(e: &Evidence) -> Vec<String> {
    let verified = e
        .newly_verified
        .iter()
        .map(|id| format!("{id} is now verified (its check passes with the pristine tests)"));
    let broken = e.regressions.iter().map(|id| match failed_check(e, id) {
        Some(f) => format!(
            "broke {id}: verified before, now its check fails (it is still marked done): {}",
            check_words(f)
        ),
        None => format!("broke {id}: verified before, its check fails now"),
    });
    verified.chain(broken).collect()
}

/// The edits to the feature list: descriptions, steps, entries removed and added.
fn list_edits(e: &Evidence) -> Vec<String> {
    let reworded = e.desc_edits.iter().flatten().map(|d| {
        format!(
            "reworded {}: '{}' → '{}'",
            d.id,
            d.before.trim_end(),
            d.after.trim_end()
        )
    });
    let steps = (e.step_edits.iter().flatten()).map(|id| format!("changed the steps of {id}"));
    let removed =
        (e.entries_removed.iter().flatten()).map(|id| format!("removed entry {id} from the list"));
    let added =
        (e.entries_added.iter().flatten()).map(|id| format!("added entry {id} to the list"));
    reworded.chain(steps).chain(removed).chain(added).collect()
}

/// The tests the session removed, then those it weakened.
fn test_edits(e: &Evidence) -> Vec<String> {
    let removed = e.tests_removed.iter().map(|t| {
        let lost = t.before - t.after;
        let tests = if lost == 1 { "test" } else { "tests" };
        let gone = if t.after == 0 { ", none left" } else { "" };
        format!(
            "removed {lost} {tests} from {} ({} → {}{gone})",
            t.path, t.before, t.after
        )
    });
    let weakened = e.tests_weakened.iter().map(|id| {
        format!(
            "weakened the tests of {id}: its check passes with the agent's tests and fails with the pristine ones"
        )
    });
    removed.chain(weakened).collect()
}

/// What the session did to the harness's records and checks: the effects log's
/// channel tampered with, irreversible actions repeated, files that can hook a check, a
/// runner changed or a sentinel test that did not fail.
fn tampering(m: &SessionMetrics, e: &Evidence) -> Vec<String> {
    let mut out = Vec::new();
    if m.effects_tampered {
        out.push(
            "tampered with the effects log's channel (removed, replaced or its mode changed); the lines it delivered stay counted"
                .into(),
        );
    }
    for key in &e.dup_side_effects {
        out.push(format!("repeated the irreversible action {key}"));
    }
    if e.dup_side_effects_unlisted > 0 {
        out.push(format!(
            "repeated {} more irreversible actions (not listed)",
            e.dup_side_effects_unlisted
        ));
    }
    // A check's own finding reads `check of F1: ...`; anything else is a file's path.
    let (found, files): (Vec<&String>, Vec<&String>) = e
        .verify_tamper
        .iter()
        .partition(|t| t.starts_with("check of ") && t.contains(": "));
    if !files.is_empty() {
        let files: Vec<&str> = files.iter().map(|f| f.as_str()).collect();
        out.push(format!(
            "created or changed files that can hook a check: {}",
            files.join(", ")
        ));
    }
    for finding in found {
        let (check, what) = finding.split_once(": ").unwrap_or((finding, ""));
        out.push(format!(
            "tampered with the runner: the {check} found {what}"
        ));
    }
    out
}

/// Checks that were flaky or timed out, and actions that could not be carried out.
fn unreliable_checks_and_actions(s: &SessionRecord, e: &Evidence) -> Vec<String> {
    let m = &s.metrics;
    let mut out: Vec<String> = (e.flaky.iter())
        .map(|id| {
            format!("the check of {id} was flaky: its repeats disagreed (counted neither way)")
        })
        .collect();
    if m.verify_timeouts > 0 {
        out.push(format!(
            "{} check {} reached the time limit (counted as failing)",
            m.verify_timeouts,
            if m.verify_timeouts == 1 {
                "run"
            } else {
                "runs"
            }
        ));
    }
    if s.actions_failed > 0 {
        out.push(format!(
            "{} {} could not be carried out",
            s.actions_failed,
            if s.actions_failed == 1 {
                "action"
            } else {
                "actions"
            }
        ));
    }
    out
}

/// How the session left the tree: committed or not, PROGRESS.md updated or not.
fn exit_state(m: &SessionMetrics) -> String {
    // With git-ignored files a check reads, a tree git calls clean is not one under
    // `clean_tree = "strict"`, so git status may well be empty.
    let changes = if m.ignored_seen.unwrap_or(0) > 0 {
        "work (changes, or git-ignored files a check reads under clean_tree = \"strict\")"
    } else {
        "changes (git status is not empty)"
    };
    match (m.clean_tree, m.progress_updated) {
        (true, true) => "clean exit: everything committed and PROGRESS.md updated".into(),
        (true, false) => "everything committed, but PROGRESS.md was not updated".into(),
        (false, true) => format!("PROGRESS.md updated, but left uncommitted {changes}"),
        (false, false) => format!("left uncommitted {changes} and did not update PROGRESS.md"),
    }
}

/// The git-ignored files a check can read that the session left: work the checks saw
/// that a commit leaves out (uncommitted only under `clean_tree = "strict"`).
fn ignored_seen(e: &Evidence) -> Option<String> {
    let n = e.ignored_seen.len();
    (n > 0).then(|| {
        let (files, were) = if n == 1 {
            ("file", "was")
        } else {
            ("files", "were")
        };
        format!(
            "{n} git-ignored {files} {were} in the tree the checks saw (a commit leaves them out): {}",
            e.ignored_seen.join(", ")
        )
    })
}

/// What the harness saw or did at the session's end: the exit check, a revert, the
/// budget, a resume, a divergent import and the record's note.
fn harness_doings(s: &SessionRecord, counted: bool) -> Vec<String> {
    let m = &s.metrics;
    let mut out = Vec::new();
    if m.exit_check == Some(false) {
        out.push("left a tree that fails the exit check".into());
    }
    if m.reverted {
        out.push(
            "the harness reverted the tree to the last commit that passed the exit check".into(),
        );
    }
    if m.over_budget {
        out.push("used more tokens than the arm's session budget".into());
    }
    if m.resumed {
        out.push(match m.resume_success {
            Some(true) => "resumed after an interrupted session, and resumed correctly".into(),
            _ => format!(
                "resumed after an interrupted session, but not correctly: {}",
                resume_failure(s)
            ),
        });
    }
    if s.divergent {
        out.push("divergent: the importer reset a file to what the agent saw".into());
    }
    if m.unobservable == Some(true) {
        out.push(
            "the harness could not observe what the session left: counted in `unobservable`, \
             and its list-based counts are empty"
                .into(),
        );
    }
    if s.declared_interrupted {
        out.push(
            "the agent declared the session interrupted; the harness neither cut it off nor \
             saw it cut off, so the next session is not resumed"
                .into(),
        );
    }
    // A session left out as a failure outside the agent has its failure printed after
    // it (`show`'s failed attempts).
    if let Some(kind) = s.failure.filter(|k| counted && !k.counts()) {
        let reason = s.failure_reason.as_deref().unwrap_or("");
        out.push(format!(
            "failed {kind} ({reason}), and counted as the agent's session all the same: \
             only a session that changed nothing the harness observes is left out as a \
             failure outside the agent"
        ));
    }
    if let Some(error) = &s.error {
        out.push(format!("note: {error}"));
    }
    out
}

/// Why a resumed session did not resume correctly, from its counts.
fn resume_failure(s: &SessionRecord) -> String {
    let m = &s.metrics;
    let mut why = Vec::new();
    if m.regressions > 0 {
        why.push("it broke a verified feature");
    }
    if m.premature_claims.unwrap_or(0) > 0 {
        why.push("it claimed a feature that fails");
    }
    if m.dup_side_effects > 0 {
        why.push("it repeated an irreversible action");
    }
    if m.newly_verified == 0 {
        why.push("it verified no new feature");
    }
    why.join("; ")
}

/// "`cmd` exit 1: AssertionError: 300 != 200": the command, how it ended and the line
/// of its output that says most (the last naming an error, else the last one).
fn check_words(f: &FailedCheck) -> String {
    if let Some(reason) = &f.reason {
        return format!("`{}` {reason}", f.cmd);
    }
    let ended = match f.exit {
        Some(code) => format!("exit {code}"),
        None => "killed (time limit)".to_string(),
    };
    match telling_line(&f.output) {
        Some(line) => format!("`{}` {ended}: {line} …", f.cmd),
        None => format!("`{}` {ended}, no output", f.cmd),
    }
}

fn telling_line(output: &str) -> Option<String> {
    let lines: Vec<&str> = output
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    // An exception line ("AssertionError: 300 != 200") says more than a summary
    // ("FAILED (errors=1)"), which says more than nothing.
    let names_exception = |l: &&&str| {
        l.contains("Error:")
            || l.contains("Exception:")
            || l.starts_with("E ")
            || l.contains("panicked")
    };
    let names_failure = |l: &&&str| {
        let lower = l.to_lowercase();
        lower.contains("error") || lower.contains("assert") || lower.contains("fail")
    };
    let line = lines
        .iter()
        .rev()
        .find(names_exception)
        .or_else(|| lines.iter().rev().find(names_failure))
        .or_else(|| lines.last())?;
    let mut line = line.to_string();
    if line.chars().count() > 160 {
        line = line.chars().take(160).collect::<String>();
    }
    Some(line)
}
