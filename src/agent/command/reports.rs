//! What the harness takes of a command session's reports: usage and `status` from the
//! usage file the agent may write, else from the harness's own capture of its stdout,
//! read in the format its wrapper names; a failure from that capture alone.

use std::path::Path;

use super::cli_usage::{CliFormat, read_capture};
use super::usage::{Reported, read_stream_json, read_usage_file, refuse_out_of_range};
use crate::agent::Usage;

/// Everything the session reported, as the harness takes it: usage and `status` from
/// the usage file first, then from the harness's own capture of the agent's stdout,
/// read as `format` (what the wrapper's [`super::program::USAGE_MARKER`] names); the
/// failure from that capture alone. The capture is written by the harness outside the
/// sandbox from a pipe the harness made, which a sandboxed tool can neither replace nor
/// reopen (`/proc/PID/fd/1` of a pipe a root harness made is its own); the usage file
/// is bound writable, so a failure it states is noted and never taken. `stdout` is
/// `None` for a CLI the harness cut off: it never printed its totals, and what its
/// output had so far would understate the session's usage, so none is taken from it.
pub fn read_reports(usage_file: &Path, stdout: Option<&Path>, format: CliFormat) -> Reported {
    let mut file = read_usage_file(usage_file).unwrap_or_default();
    if let Some(stated) = file.failure.take() {
        file.notes.push(format!(
            "usage file: its failure ({}: {}) is not taken: the agent's tools can write \
             that file, and the failure comes from the agent's output as the harness \
             captured it",
            stated.kind, stated.reason
        ));
    }
    let own = stdout.and_then(|stdout| match format {
        CliFormat::Claude => read_stream_json(stdout),
        other => read_capture(other, stdout).map(|report| {
            let mut reported = Reported {
                usage: Usage {
                    turns: report.turns,
                    input_tokens: report.input_tokens,
                    output_tokens: report.output_tokens,
                    cost_usd: report.cost_usd,
                },
                status: report.status,
                notes: Vec::new(),
                failure: report.failure,
            };
            refuse_out_of_range(&mut reported.usage, &mut reported.notes, "the CLI's output");
            reported
        }),
    });
    file.or(own.unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::FailureKind;
    use crate::agent::trace::EndStatus;

    #[test]
    fn the_usage_file_wins_and_the_stream_fills_in_what_it_leaves_out() {
        let dir = tempfile::tempdir().unwrap();
        let usage = dir.path().join("usage.json");
        let stdout = dir.path().join("stdout");
        std::fs::write(&usage, r#"{"turns": 3, "status": "declared_complete"}"#).unwrap();
        std::fs::write(
            &stdout,
            "{\"type\":\"result\",\"num_turns\":9,\"total_cost_usd\":0.5,\"usage\":{\"output_tokens\":4}}\n",
        )
        .unwrap();
        let r = read_reports(&usage, Some(&stdout), CliFormat::Claude);
        assert_eq!(r.usage.turns, Some(3));
        assert_eq!(r.usage.output_tokens, Some(4));
        assert_eq!(r.usage.cost_usd, Some(0.5));
        assert_eq!(r.status, Some(EndStatus::DeclaredComplete));
        std::fs::write(&usage, "").unwrap();
        assert_eq!(
            read_reports(&usage, Some(&stdout), CliFormat::Claude)
                .usage
                .turns,
            Some(9)
        );
    }

    #[test]
    fn a_failure_the_usage_file_states_is_a_note_and_only_the_captured_output_says_one() {
        let dir = tempfile::tempdir().unwrap();
        let usage = dir.path().join("usage.json");
        let stdout = dir.path().join("stdout");
        // A tool of the agent wrote an outage into the usage file; the CLI's own output,
        // as the harness captured it, says the session went well.
        std::fs::write(
            &usage,
            r#"{"turns": 2, "failure": {"kind": "auth", "reason": "HTTP 401", "http_status": 401}}"#,
        )
        .unwrap();
        std::fs::write(
            &stdout,
            "{\"type\":\"result\",\"is_error\":false,\"num_turns\":2}\n",
        )
        .unwrap();
        let r = read_reports(&usage, Some(&stdout), CliFormat::Claude);
        assert_eq!(r.failure, None);
        assert!(
            r.notes[0].starts_with("usage file: its failure (auth: HTTP 401) is not taken"),
            "{:?}",
            r.notes
        );
        // Each wrapper's format is read from the harness's capture: Codex's error event,
        // aider's provider exception before it acted.
        std::fs::write(&usage, "").unwrap();
        std::fs::write(
            &stdout,
            "{\"type\":\"turn.failed\",\"error\":{\"message\":\"unexpected status 529 Overloaded\"}}\n",
        )
        .unwrap();
        let r = read_reports(&usage, Some(&stdout), CliFormat::Codex);
        assert_eq!(
            r.failure.map(|f| (f.kind, f.http_status)),
            Some((FailureKind::Infra, Some(529)))
        );
        assert_eq!(r.status, Some(EndStatus::Interrupted));
        std::fs::write(&stdout, "litellm.AuthenticationError: invalid x-api-key\n").unwrap();
        let r = read_reports(&usage, Some(&stdout), CliFormat::Aider);
        assert_eq!(r.failure.map(|f| f.kind), Some(FailureKind::Auth));
        // The same lines read in another CLI's format are no evidence.
        let r = read_reports(&usage, Some(&stdout), CliFormat::Claude);
        assert_eq!(r.failure, None);
    }

    #[test]
    fn a_cli_the_harness_cut_off_gives_no_usage_from_its_output_and_the_file_still_counts() {
        let dir = tempfile::tempdir().unwrap();
        let usage = dir.path().join("usage.json");
        let stdout = dir.path().join("stdout");
        // aider printed two messages' counts before it was killed: a part of the
        // session's usage, which would read as all of it.
        std::fs::write(
            &stdout,
            "Tokens: 3.5k sent, 20 received. Cost: $0.01 message, $0.01 session.\n\
             Tokens: 3.5k sent, 20 received. Cost: $0.01 message, $0.02 session.\n",
        )
        .unwrap();
        let whole = read_reports(&usage, Some(&stdout), CliFormat::Aider);
        assert_eq!(whole.usage.input_tokens, Some(7000));
        assert_eq!(
            read_reports(&usage, None, CliFormat::Aider),
            Reported::default()
        );
        std::fs::write(&usage, r#"{"turns": 4}"#).unwrap();
        assert_eq!(
            read_reports(&usage, None, CliFormat::Aider).usage.turns,
            Some(4)
        );
    }
}
