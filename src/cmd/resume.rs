//! `loopbench resume RUN_DIR`: continues an interrupted run. Finished trials are kept;
//! a trial without its trial record is rerun from scratch, and its partial session
//! records are dropped first, so nothing is lost or counted twice.

use super::args::ResumeArgs;
use super::output::{Finish, print_warnings};
use crate::error::Result;
use crate::store::RunWriter;
use crate::study::resume::{RunKind, prepare};

/// Runs the command; returns the exit code.
pub fn run(args: &ResumeArgs) -> Result<i32> {
    let dir = &args.run_dir;
    let resume = prepare(dir)?;
    print_warnings(resume.warnings.iter().map(String::as_str));
    eprintln!(
        "resuming {}: {} trials finished, {} to run",
        dir.display(),
        resume.finished,
        resume.plan.trials.len()
    );
    let writer = RunWriter::reopen(resume.lock, resume.manifest)?;
    let (plan, finished_of_arm) = (&resume.plan, &resume.finished_of_arm);
    let how = Finish::of(args.jobs, args.quiet, args.full);
    match resume.kind {
        RunKind::Sequential => super::run::finish_sequential(&resume.spec, writer, how),
        RunKind::Replay => super::replay::finish(plan, finished_of_arm, writer, how),
        RunKind::Suite => super::run::finish(plan, finished_of_arm, writer, how),
    }
}
