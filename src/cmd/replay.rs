//! `loopbench replay`: rescores recorded traces. One trace is one trial; a directory of
//! traces is one arm, so two directories give an A/B run that `report` and `compare`
//! read like any other.

use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::agent::replay::ReplayAgent;
use crate::agent::trace::Trace;
use crate::cli::ReplayArgs;
use crate::error::{Error, IoContext, Result};
use crate::exit_code;
use crate::feature_list::ListFormat;
use crate::observe::{Observer, VerifyCache};
use crate::record::TrialKey;
use crate::report::{DEFAULT_CONFIDENCE, Progress, SessionTable, write_summary};
use crate::runner::{Event, EventKind, EventSink, Fanout, TrialSpec, run_trial};
use crate::store::{Manifest, RunWriter, new_run_dir};
use crate::suite::{Ledger, Prompts, Task, is_simple_name};
use crate::workspace::Workspace;

/// The file that says which trace each trial replayed.
pub const TRACES_CSV: &str = "traces.csv";

/// Arm name of trace files given without `--arm`.
const DEFAULT_ARM: &str = "replay";

/// One arm of a replay: traces in replicate order.
struct ReplayArm {
    name: String,
    format: ListFormat,
    traces: Vec<(PathBuf, Trace)>,
}

/// Runs the command; returns the exit code.
pub fn run(args: &ReplayArgs) -> Result<i32> {
    // Every trace is parsed before anything is written: bad input leaves no results.
    let task = Task::load(&args.task)?;
    let arms = load_arms(args)?;
    let trials: usize = arms.iter().map(|a| a.traces.len()).sum();
    let single = trials == 1;

    let out = match &args.out {
        Some(dir) => dir.clone(),
        None => new_run_dir(&Path::new("results").join("replay")),
    };
    let mut hasher = blake3::Hasher::new();
    hasher.update(task.dir.to_string_lossy().as_bytes());
    for arm in &arms {
        hasher.update(arm.name.as_bytes());
        hasher.update(arm.format.as_str().as_bytes());
        for (_, trace) in &arm.traces {
            hasher.update(&trace.content_hash);
        }
    }
    let manifest = Manifest {
        suite: "replay".into(),
        suite_hash: hasher.finalize().to_hex().to_string(),
        arms: arms.iter().map(|a| a.name.clone()).collect(),
        baseline: Some(arms[0].name.clone()),
        tasks: vec![task.name.clone()],
        replicates: arms
            .iter()
            .map(|a| a.traces.len() as u32)
            .max()
            .unwrap_or(1),
        driver: "replay".into(),
        ..Manifest::stamped()
    };
    let mut writer = RunWriter::create(&out, manifest)?;
    write_traces_csv(&out, &task.name, &arms)?;

    let bars: Vec<(String, u64, u64)> = arms
        .iter()
        .map(|a| (a.name.clone(), a.traces.len() as u64, 0))
        .collect();
    let mut progress = Progress::new(&bars, args.quiet || single);
    let mut table = SessionTable::new(std::io::stdout());
    let mut sink = Fanout::new().with(&mut writer).with(&mut progress);
    if single {
        sink = sink.with(&mut table);
    }

    let start = Instant::now();
    sink.handle(&Event {
        elapsed: start.elapsed(),
        kind: EventKind::RunStarted {
            run_dir: out.clone(),
            trials,
        },
    })?;
    let cache = VerifyCache::default();
    let prompts = Prompts::default();
    let mut bad_traces: Vec<(PathBuf, String)> = Vec::new();
    for arm in arms {
        let observer = Observer::new(&task, arm.format, Some(&cache), 1)?;
        for (replicate, (path, trace)) in arm.traces.into_iter().enumerate() {
            let mut ws = Workspace::create(&task, arm.format)?;
            let spec = TrialSpec {
                key: TrialKey::new(&arm.name, &task.name, replicate as u32),
                task: &task,
                format: arm.format,
                initializer: false,
                max_coding_sessions: None,
                stop_when_done: false,
                turn_budget: u32::MAX,
                crash_rate: 0.0,
                ledger: Ledger::Memo,
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
            if let Some(reason) = result.bad_input {
                bad_traces.push((path, reason));
            }
            if single && args.keep_work {
                eprintln!(
                    "work directory kept at {}",
                    ws.keep().join("work").display()
                );
            }
        }
    }
    sink.handle(&Event {
        elapsed: start.elapsed(),
        kind: EventKind::RunFinished,
    })?;
    drop(sink);

    let summary = write_summary(&out, None, DEFAULT_CONFIDENCE)?;
    if !single {
        super::report::print(&summary.to_markdown())?;
    }
    super::report::warn_unusable_arms(&summary);
    eprintln!("results written to {}", out.display());
    for (path, reason) in &bad_traces {
        eprintln!("error: {}: {reason}", path.display());
    }
    Ok(if bad_traces.is_empty() {
        exit_code::OK
    } else {
        exit_code::BAD_INPUT
    })
}

/// Groups the inputs into arms, names them and parses every trace.
fn load_arms(args: &ReplayArgs) -> Result<Vec<ReplayArm>> {
    // (arm name, inputs) in the order the arms will appear.
    let groups: Vec<(String, Vec<&PathBuf>)> = match args.arm.len() {
        0 => {
            let mut groups = Vec::new();
            let files: Vec<&PathBuf> = args.inputs.iter().filter(|p| !p.is_dir()).collect();
            for dir in args.inputs.iter().filter(|p| p.is_dir()) {
                groups.push((dir_arm_name(dir)?, vec![dir]));
            }
            if !files.is_empty() {
                groups.insert(0, (DEFAULT_ARM.to_string(), files));
            }
            groups
        }
        1 => vec![(args.arm[0].clone(), args.inputs.iter().collect())],
        n if n == args.inputs.len() => args
            .arm
            .iter()
            .cloned()
            .zip(args.inputs.iter().map(|p| vec![p]))
            .collect(),
        n => {
            return Err(Error::BadInput(format!(
                "--arm given {n} times for {} inputs: give it once (one arm) or once per input",
                args.inputs.len()
            )));
        }
    };
    let formats: Vec<ListFormat> = match args.format.len() {
        1 => vec![args.format[0]; groups.len()],
        n if n == groups.len() => args.format.clone(),
        n => {
            return Err(Error::BadInput(format!(
                "--format given {n} times for {} arms ({}): give it once or once per arm",
                groups.len(),
                groups
                    .iter()
                    .map(|(name, _)| name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    };

    let mut arms: Vec<ReplayArm> = Vec::new();
    for ((name, inputs), format) in groups.into_iter().zip(formats) {
        if !is_simple_name(&name) {
            return Err(Error::BadInput(format!(
                "arm name '{name}' must be non-empty ASCII letters, digits, '_', '.' or '-' (name it with --arm)"
            )));
        }
        if arms.iter().any(|a| a.name == name) {
            return Err(Error::BadInput(format!(
                "arm '{name}' is named twice: give each input its own --arm"
            )));
        }
        let mut traces = Vec::new();
        for input in inputs {
            for path in trace_files(input)? {
                let trace = Trace::load(&path)?;
                traces.push((path, trace));
            }
        }
        arms.push(ReplayArm {
            name,
            format,
            traces,
        });
    }
    Ok(arms)
}

/// The arm a directory of traces becomes when no `--arm` names it: its own name.
fn dir_arm_name(dir: &Path) -> Result<String> {
    let absolute = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    absolute
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .ok_or_else(|| {
            Error::BadInput(format!(
                "cannot name an arm after '{}': give --arm",
                dir.display()
            ))
        })
}

/// A trace file as itself; a directory as its `*.jsonl` files in file-name order.
fn trace_files(input: &Path) -> Result<Vec<PathBuf>> {
    if !input.is_dir() {
        // A missing file is reported by `Trace::load`, naming the path.
        return Ok(vec![input.to_path_buf()]);
    }
    let entries = std::fs::read_dir(input)
        .io_context(|| format!("cannot list traces in '{}'", input.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .io_context(|| format!("cannot list traces in '{}'", input.display()))?
            .path();
        if path.is_file() && path.extension().is_some_and(|e| e == "jsonl") {
            files.push(path);
        }
    }
    if files.is_empty() {
        return Err(Error::BadInput(format!(
            "'{}' holds no traces (expected *.jsonl files)",
            input.display()
        )));
    }
    files.sort();
    Ok(files)
}

/// Writes `traces.csv`: which trace file (and which exact content) each trial replayed.
fn write_traces_csv(out: &Path, task: &str, arms: &[ReplayArm]) -> Result<()> {
    let path = out.join(TRACES_CSV);
    let context = || format!("cannot write '{}'", path.display());
    let mut csv = csv::Writer::from_path(&path).map_err(|e| Error::io(context(), e.into()))?;
    let mut write = |row: [&str; 5]| {
        csv.write_record(row)
            .map_err(|e| Error::io(context(), e.into()))
    };
    write(["trial_id", "arm", "replicate", "trace", "blake3"])?;
    for arm in arms {
        for (replicate, (path, trace)) in arm.traces.iter().enumerate() {
            let key = TrialKey::new(&arm.name, task, replicate as u32);
            let hash = blake3::Hash::from(trace.content_hash).to_hex();
            write([
                &key.trial_id,
                &arm.name,
                &replicate.to_string(),
                &path.display().to_string(),
                hash.as_str(),
            ])?;
        }
    }
    csv.flush().io_context(context)
}
