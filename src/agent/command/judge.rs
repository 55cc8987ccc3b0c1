//! What the harness makes of a command session once the agent is gone: its outcome,
//! usage and notes, and whose failure it was. Decided from facts only: the exit status,
//! what the harness itself planned (a timeout, an injected crash, the scenario's crash
//! under the scripted model server), then what the CLI's own structured output states
//! in the harness's capture of it (never the usage file, which the agent's tools can
//! write). An interruption the agent declares (`"status": "interrupted"`) is recorded
//! as its declaration: only one the harness made or saw makes a session `interrupted`.

use std::os::unix::process::ExitStatusExt;

use super::super::reports;
use super::super::usage::Reported;
use super::{CommandAgent, Ran, SessionFiles};
use crate::agent::command::capture::Captured;
use crate::agent::command::child::Ended;
use crate::agent::command::cli_usage::CliFormat;
use crate::agent::mock_model::CRASH_EXIT;
use crate::agent::trace::EndStatus;
use crate::agent::trajectory;
use crate::agent::{Failure, FailureKind, Outcome, SessionRun};

/// What the harness planned for a session: an end it caused is nobody's failure.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Planned {
    /// The moment of a crash the harness injects by SIGKILL (`crash = "kill"`).
    pub crash_after: Option<std::time::Duration>,
    /// The agent was told to stop itself (`crash = "agent"`, `LOOPBENCH_INTERRUPT_AT`).
    pub agent_crash: bool,
    /// The scenario of the scripted model server ends this session in a crash, which
    /// the server carries out by killing the CLI and exiting with [`CRASH_EXIT`].
    pub scripted_crash: bool,
}

/// The signal a shell, the sandbox or the model server reports as exit code 128 + N for a
/// child killed by signal N.
fn signal_of_exit_code(code: i32) -> Option<i32> {
    (129..=128 + 64).contains(&code).then_some(code - 128)
}

fn signal_name(signal: i32) -> String {
    nix::sys::signal::Signal::try_from(signal)
        .map_or_else(|_| format!("signal {signal}"), |s| s.as_str().to_string())
}

impl CommandAgent {
    /// The session as the harness records it (see the module's documentation).
    pub(super) fn judge(&self, ran: &Ran, planned: Planned, files: &SessionFiles) -> SessionRun {
        // A CLI the harness cut off (its timeout, an injected crash, the scenario's
        // crash) never printed its totals: its output gives no usage.
        let cut_off = match ran.ended {
            Ended::TimedOut | Ended::Crashed => true,
            Ended::Exited(exit) => planned.scripted_crash && exit.code() == Some(CRASH_EXIT),
        };
        let stdout = (!cut_off).then_some(files.stdout.as_path());
        let Reported {
            usage,
            status: declared,
            mut notes,
            failure: reported,
        } = reports::read_reports(&files.usage_file, stdout, ran.output);
        notes.extend(ran.captured.iter().filter_map(Captured::note));
        // What the agent did, from the harness's own capture of the CLI's output, read
        // in the format its program declares: for people, never a metric. Read even
        // when the CLI was cut off: what it printed before is what it did. The trial
        // loop ends it with the session's end.
        let trajectory = match ran.output {
            CliFormat::Claude => trajectory::read_stream_json(&files.stdout),
            CliFormat::Codex => trajectory::codex_json::read_codex_json(&files.stdout),
            CliFormat::Aider => trajectory::aider_output::read_aider_output(&files.stdout),
            // An analytics log, never what a program prints.
            CliFormat::AiderAnalytics => Default::default(),
        };
        notes.extend(ran.limits_reached.iter().cloned());
        let declared_interrupted = declared == Some(EndStatus::Interrupted);
        let said = Said {
            ended_by_budget: declared == Some(EndStatus::OutOfBudget),
            declared: match declared {
                // The agent was told to stop (`crash = "agent"`): the harness made it.
                Some(EndStatus::Interrupted) if planned.agent_crash => Outcome::Interrupted,
                // Its own word: recorded, never the outcome.
                Some(EndStatus::Interrupted) | None => Outcome::Completed,
                Some(status) => Outcome::from(status),
            },
            reported,
        };
        let (outcome, failure) = match ran.ended {
            Ended::TimedOut => {
                notes.push(format!(
                    "timed out after {}; the process group got SIGTERM, then SIGKILL {} later",
                    humantime::format_duration(self.timeout),
                    humantime::format_duration(self.grace)
                ));
                (Outcome::Timeout, None)
            }
            Ended::Crashed => {
                notes.push(format!(
                    "crash injected: SIGKILL to the process group at {:.1}s",
                    planned.crash_after.unwrap_or_default().as_secs_f64()
                ));
                (Outcome::Interrupted, None)
            }
            Ended::Exited(exit) => {
                if let Some(at) = planned.crash_after {
                    notes.push(format!(
                        "crash planned at {:.1}s; the agent ended first",
                        at.as_secs_f64()
                    ));
                }
                exited(exit, planned, said, &mut notes)
            }
        };
        // A failure outside the agent is judged by the trial loop, from what the session
        // changed: a session that changed nothing is left out (and ends `error`), any
        // other is the agent's, counted with the outcome it had.
        SessionRun {
            outcome,
            usage,
            actions_failed: 0,
            error: (!notes.is_empty()).then(|| notes.join("; ")),
            bad_input: false,
            truth: None,
            divergent: false,
            failure,
            declared_interrupted: declared_interrupted && outcome != Outcome::Interrupted,
            trajectory,
        }
    }
}

/// What the agent's wrapper or CLI said of the session (its usage file, its output).
struct Said {
    /// The outcome it declared (completed when it declared none, or an interruption the
    /// harness did not make).
    declared: Outcome,
    /// The failure it reported.
    reported: Option<Failure>,
    /// It declared the end of its turn budget.
    ended_by_budget: bool,
}

/// The outcome and failure of a session whose agent exited (or was killed) on its own,
/// from its exit status, what the harness planned and what the agent said; with a note
/// of how it ended.
fn exited(
    exit: std::process::ExitStatus,
    planned: Planned,
    said: Said,
    notes: &mut Vec<String>,
) -> (Outcome, Option<Failure>) {
    let agents = |why: String| Some(Failure::new(FailureKind::Agent, why));
    match (exit.code(), exit.signal()) {
        (Some(0), _) => (said.declared, said.reported),
        (Some(code @ (126 | 127)), _) => {
            // The shell's codes for a command it could not execute: the
            // agent never ran, whatever its wrapper wrote before.
            notes.push(format!("agent exited with code {code}"));
            let what = if code == 126 {
                "could not be executed"
            } else {
                "was not found"
            };
            let reason =
                format!("exit {code}: the agent program or a program its wrapper runs {what}");
            (
                said.declared,
                Some(Failure::new(FailureKind::Infra, reason)),
            )
        }
        (Some(CRASH_EXIT), _) if planned.scripted_crash => {
            notes.push("the scenario's crash: the scripted model server killed the CLI".into());
            (Outcome::Interrupted, None)
        }
        (Some(code), _) if planned.agent_crash => {
            notes.push(format!(
                "agent exited with code {code} at the crash it was told of"
            ));
            (Outcome::Interrupted, None)
        }
        (Some(code), _) if let Some(signal) = signal_of_exit_code(code) => {
            // A wrapper (or the sandbox, or the model server) whose child was
            // killed. The usage file may have been written by anything in the
            // session before the kill: a failure it states is not believed.
            let name = signal_name(signal);
            notes.push(format!("agent exited with code {code} (killed by {name})"));
            (
                said.declared,
                agents(format!("exit {code}: killed by {name}")),
            )
        }
        (Some(code), _) if said.ended_by_budget => {
            // The CLI's own max-turns ending (Claude Code exits 1 on it): a
            // budget, not a failure.
            notes.push(format!(
                "agent exited with code {code} at the end of its turn budget"
            ));
            (Outcome::OutOfBudget, None)
        }
        (Some(code), _) => {
            notes.push(format!("agent exited with code {code}"));
            let failure = said.reported.or_else(|| agents(format!("exit {code}")));
            (said.declared, failure)
        }
        (None, _) if planned.agent_crash => {
            notes.push("agent was killed at the crash it was told of".into());
            (Outcome::Interrupted, None)
        }
        (None, signal) => {
            // A crash nobody here caused (out of memory, a segfault, or a
            // tool that killed its own wrapper) is still a session cut off:
            // the next one has to resume. What the usage file says then was
            // not written by a wrapper that saw its CLI end.
            let name = signal.map_or_else(|| "a signal".into(), signal_name);
            notes.push(format!("agent was killed by {name}"));
            (Outcome::Interrupted, agents(format!("killed by {name}")))
        }
    }
}
