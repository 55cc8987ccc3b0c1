//! `loopbench replay TRACE --task TASK_DIR --format F`: one trial from a recorded trace.

use std::path::Path;
use std::time::Instant;

use crate::agent::replay::ReplayAgent;
use crate::agent::trace::Trace;
use crate::cli::ReplayArgs;
use crate::error::{Error, Result};
use crate::exit_code;
use crate::observe::{Observer, VerifyCache};
use crate::record::TrialKey;
use crate::report::SessionTable;
use crate::runner::{Event, EventKind, EventSink, Fanout, TrialSpec, run_trial};
use crate::store::{Manifest, RunWriter, new_run_dir};
use crate::suite::{Task, is_simple_name};
use crate::workspace::Workspace;

/// Runs the command; returns the exit code.
pub fn run(args: &ReplayArgs) -> Result<i32> {
    // Bad input is found before anything is written.
    let trace = Trace::load(&args.trace)?;
    let task = Task::load(&args.task)?;
    if !is_simple_name(&args.arm) {
        return Err(Error::BadInput(format!(
            "arm name '{}' must be non-empty ASCII letters, digits, '_', '.' or '-'",
            args.arm
        )));
    }

    let out = match &args.out {
        Some(dir) => dir.clone(),
        None => new_run_dir(&Path::new("results").join("replay")),
    };
    let mut hasher = blake3::Hasher::new();
    hasher.update(&trace.content_hash);
    hasher.update(task.dir.to_string_lossy().as_bytes());
    hasher.update(args.format.as_str().as_bytes());
    let manifest = Manifest {
        suite: "replay".into(),
        suite_hash: hasher.finalize().to_hex().to_string(),
        arms: vec![args.arm.clone()],
        baseline: Some(args.arm.clone()),
        tasks: vec![task.name.clone()],
        driver: "replay".into(),
        ..Manifest::stamped()
    };
    let mut writer = RunWriter::create(&out, manifest)?;
    let mut table = SessionTable::new(std::io::stdout());
    let mut sink = Fanout::new().with(&mut writer).with(&mut table);

    let start = Instant::now();
    sink.handle(&Event {
        elapsed: start.elapsed(),
        kind: EventKind::RunStarted {
            run_dir: out.clone(),
            trials: 1,
        },
    })?;
    let mut ws = Workspace::create(&task, args.format)?;
    let cache = VerifyCache::default();
    let observer = Observer::new(&task, args.format, Some(&cache), 1)?;
    let prompts = crate::suite::Prompts::default();
    let spec = TrialSpec {
        key: TrialKey::new(&args.arm, &task.name, 0),
        task: &task,
        format: args.format,
        initializer: false,
        max_coding_sessions: None,
        stop_when_done: false,
        turn_budget: u32::MAX,
        crash_rate: 0.0,
        ledger: crate::suite::Ledger::Memo,
        seed: 0,
        prompts: &prompts,
        cancel: None,
    };
    let result = run_trial(
        &spec,
        &ws,
        &mut ReplayAgent::new(trace),
        &observer,
        &mut sink,
        start,
    )?;
    sink.handle(&Event {
        elapsed: start.elapsed(),
        kind: EventKind::RunFinished,
    })?;
    if args.keep_work {
        eprintln!(
            "work directory kept at {}",
            ws.keep().join("work").display()
        );
    }
    eprintln!("results written to {}", out.display());
    match result.bad_input {
        Some(reason) => {
            eprintln!("error: {}: {reason}", args.trace.display());
            Ok(exit_code::BAD_INPUT)
        }
        None => Ok(exit_code::OK),
    }
}
