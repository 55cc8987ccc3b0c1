//! Progress bars for a run: one per arm and one overall, with ETA and the live
//! premature-done rate. Hidden when stderr is not a terminal or with `--quiet`.

use std::collections::BTreeMap;
use std::io::IsTerminal;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::agent::SessionKind;
use crate::error::Result;
use crate::events::{Event, EventKind, EventSink};
use crate::notice::Notice;

/// The progress display of one run.
pub struct Progress {
    overall: ProgressBar,
    arms: BTreeMap<String, ArmBar>,
    multi: MultiProgress,
}

struct ArmBar {
    bar: ProgressBar,
    premature: u64,
    listed: u64,
}

impl Progress {
    /// Bars for `arms` (name, trials planned), of which `already` trials per arm are done
    /// (a resumed run). Draws nothing when `quiet` or stderr is not a terminal.
    pub fn new(arms: &[(String, u64, u64)], quiet: bool) -> Progress {
        let target = if quiet || !std::io::stderr().is_terminal() {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        let multi = MultiProgress::with_draw_target(target);
        let style = ProgressStyle::with_template(
            "{prefix:>16} {bar:30} {pos:>4}/{len:4} ETA {eta:>4} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        let total: u64 = arms.iter().map(|(_, n, _)| n).sum();
        let done: u64 = arms.iter().map(|(_, _, d)| d).sum();
        let overall = multi.add(
            ProgressBar::new(total)
                .with_style(style.clone())
                .with_prefix("all arms"),
        );
        overall.set_position(done);
        let arms = arms
            .iter()
            .map(|(name, n, d)| {
                let bar = multi.add(
                    ProgressBar::new(*n)
                        .with_style(style.clone())
                        .with_prefix(name.clone()),
                );
                bar.set_position(*d);
                (
                    name.clone(),
                    ArmBar {
                        bar,
                        premature: 0,
                        listed: 0,
                    },
                )
            })
            .collect();
        Progress {
            overall,
            arms,
            multi,
        }
    }
}

impl Progress {
    /// Prints a line on stderr, above the bars when they are drawn. Notices are shown
    /// even with `--quiet`: they are warnings, not progress.
    fn print(&self, line: &str) {
        // A notice can quote what an agent printed.
        let line = crate::terminal::block(line);
        if self.multi.is_hidden() || self.multi.println(&line).is_err() {
            eprintln!("{line}");
        }
    }
}

impl EventSink for Progress {
    fn handle(&mut self, event: &Event) -> Result<()> {
        match &event.kind {
            EventKind::SessionFinished(record) => {
                if record.kind == SessionKind::Coding
                    && let (Some(claims), Some(arm)) = (
                        record.metrics.premature_claims,
                        self.arms.get_mut(&record.key.arm),
                    )
                {
                    arm.listed += 1;
                    arm.premature += u64::from(claims > 0);
                    arm.bar.set_message(format!(
                        "premature done {}/{} ({:.1}%)",
                        arm.premature,
                        arm.listed,
                        100.0 * arm.premature as f64 / arm.listed as f64
                    ));
                }
            }
            EventKind::TrialFinished(record) => {
                if let Some(arm) = self.arms.get(&record.key.arm) {
                    arm.bar.inc(1);
                }
                self.overall.inc(1);
            }
            EventKind::RunFinished => {
                for arm in self.arms.values() {
                    arm.bar.finish();
                }
                self.overall.finish();
            }
            EventKind::Notice(notice) => {
                let debug_only = matches!(notice, Notice::VerifyCache { .. });
                if !debug_only || std::env::var_os("LOOPBENCH_DEBUG").is_some() {
                    self.print(&notice.to_string());
                }
            }
            _ => {}
        }
        Ok(())
    }
}
