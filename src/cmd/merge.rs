//! `loopbench merge RUN_DIR... --out DIR`: joins the shards of one run into one results
//! directory whose tables equal those of a single-process run. Merging the shards of a
//! look of a sequential run also judges the look.

use super::args::MergeArgs;
use super::output::warn_underpowered;
use super::output::{print_warnings, say};
use crate::error::Result;
use crate::exit_code;
use crate::run_dir::RunDir;
use crate::store::{Manifest, merge_shards, open_run_dir};
use crate::study::drive::{unfinished_lines, unusable_arm_warnings};
use crate::study::sequential::judge_merged;
use crate::study::spec::RunSpec;
use crate::study::suite_run::min_detectable_effect_of_run;

/// Runs the command; returns the exit code.
pub fn run(args: &MergeArgs) -> Result<i32> {
    // The lock is held until the summary is written too.
    let looks = args
        .run_dirs
        .iter()
        .filter_map(|d| Manifest::read(&open_run_dir(d)).ok())
        .any(|m| m.sequential_step.is_some());
    let (lock, trials) = merge_shards(&args.run_dirs, &args.out)?;
    let out = lock.dir();
    let summary = crate::report::write_summary(out, None, crate::report::DEFAULT_CONFIDENCE)?;
    say(&unusable_arm_warnings(&summary));
    crate::report::html::write_run_html(out, &summary)?;
    if looks {
        say_what_runs_next(out, &summary)?;
    } else if let Some(effect) = min_detectable_effect_of_run(out) {
        warn_underpowered(&summary, effect);
    }
    eprintln!(
        "merged {} runs ({} trials) into {}",
        args.run_dirs.len(),
        trials,
        out.path().display()
    );
    // A shard whose trials could not run (retries exhausted, or stopped on a refused
    // key) leaves the merged run incomplete, as it left the shard.
    let unfinished = crate::store::unfinished_trials(out)?;
    if unfinished.is_empty() {
        return Ok(exit_code::OK);
    }
    say(&unfinished_lines(&unfinished));
    eprintln!(
        "the merged run is not complete: once the cause is fixed, `loopbench resume` each \
         shard that holds those trials, then merge again"
    );
    Ok(exit_code::INTERRUPTED)
}

/// Judges the looks the merged shards complete and says what runs next.
fn say_what_runs_next(dir: &RunDir, summary: &crate::report::Summary) -> Result<()> {
    let manifest = Manifest::read(dir)?;
    let spec = RunSpec::of_suite_manifest(dir, &manifest)?;
    if let Some(suite) = spec.suite() {
        print_warnings(suite.warnings());
    }
    let judged = judge_merged(dir, &spec.sequencer()?, summary)?;
    if judged.finished {
        eprintln!(
            "the sequential run is finished after look {} of {} (see {})",
            judged.looks_done,
            judged.looks,
            dir.sequential_md().display()
        );
    } else {
        let path = manifest.suite_path.as_deref().unwrap_or_default();
        eprintln!(
            "looks 1 to {} judged; next: look {} for {} (`loopbench run {path} --look {} --after {} --shard I/N`)",
            judged.looks_done,
            judged.looks_done + 1,
            judged.running.join(", "),
            judged.looks_done + 1,
            dir.path().display()
        );
    }
    Ok(())
}
