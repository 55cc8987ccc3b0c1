//! A replay study: recorded traces grouped into arms and parsed, whether they run
//! sandboxed, the hash that names the experiment, `traces.csv` (which trace each trial
//! replayed), the plan started into a new results directory, and the plan rebuilt from
//! a replay run's manifest to resume it.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::agent::trace::Trace;
use crate::csv_text;
use crate::error::Purpose;
use crate::error::{Error, IoContext, Result, ResultsDirError, SandboxError, TranscriptError};
use crate::feature_list::{ListFormat, ListSchema};
use crate::run_dir::RunDir;
use crate::runner::{Plan, ReplayArm, ReplaySet, ReplayStart, Source, TraceFile};
use crate::sandbox::SandboxKind;
use crate::sandbox::container::TaskContainer;
use crate::store::{Manifest, RunWriter, new_run_dir};
use crate::study::spec::RunSpec;
use crate::suite::{ExitCheck, Ledger, Task, TrialKey, is_simple_name};

/// Arm name of trace files given without `--arm`.
const DEFAULT_ARM: &str = "replay";

/// What `replay` was given: the traces and how to group, name and score them.
pub struct TraceInputs<'a> {
    /// Trace files or directories of traces.
    pub inputs: &'a [PathBuf],
    /// Arm names: none, once, or once per input.
    pub arm: &'a [String],
    /// Feature-list formats: once, or once per arm.
    pub format: &'a [ListFormat],
    /// List schema of every arm.
    pub schema: ListSchema,
    /// What the harness does after a failed exit check.
    pub exit_check: ExitCheck,
    /// Who owns the list's flags: the recorded agent, or the harness's gate.
    pub ledger: Ledger,
    /// Most tokens one recorded session may use (0: no limit).
    pub session_tokens: u64,
    /// What every arm's trials start from.
    pub start: ReplayStart,
}

/// Groups the inputs into arms, names them and parses every trace.
fn load_arms(args: &TraceInputs) -> Result<Vec<ReplayArm>> {
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
        n if n == groups.len() => args.format.to_vec(),
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
                "arm name '{name}' must be non-empty ASCII letters, digits, '_', '.' or '-', and not '.' or '..' (name it with --arm)"
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
                traces.push(TraceFile { path, trace });
            }
        }
        arms.push(ReplayArm {
            name,
            format,
            schema: args.schema,
            exit_check: args.exit_check,
            ledger: args.ledger,
            session_tokens: args.session_tokens,
            start: args.start,
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
        return Err(TranscriptError::NoTraces {
            dir: input.to_path_buf(),
        }
        .into());
    }
    files.sort();
    Ok(files)
}

/// The sandbox the replay runs in: the strongest that works here, unless the user said
/// `--unsandboxed`. Where none works, traces that run shell commands are refused
/// without `--unsandboxed`, naming the first such line. Where one works but its sandbox
/// would not be confined (a capability left, a root harness's sandbox running as
/// root), the replay is refused: never run on the host instead.
fn sandbox_for(arms: &[ReplayArm], unsandboxed: bool) -> Result<SandboxKind> {
    let sandbox = if unsandboxed {
        SandboxKind::None
    } else {
        SandboxKind::strongest_here()
    };
    if sandbox.confines() {
        sandbox.check(&format!(
            "replay runs checks and `run` actions under {}",
            sandbox.title()
        ))?;
    }
    if !sandbox.confines() && !unsandboxed {
        let wanted = SandboxKind::ALL
            .iter()
            .find(|k| k.confines())
            .copied()
            .unwrap_or_default();
        let with_run = arms
            .iter()
            .flat_map(|a| &a.traces)
            .find_map(|t| t.trace.first_run_action().map(|line| (&t.path, line)));
        if let Some((path, line)) = with_run {
            return Err(SandboxError::TraceNeedsSandbox {
                trace: path.clone(),
                line,
                wanted: wanted.title().to_string(),
                hint: wanted.install_hint().to_string(),
            }
            .into());
        }
    }
    Ok(sandbox)
}

/// blake3 over the task's files, the arms, their formats and every trace.
pub fn inputs_hash(task: &Task, arms: &[ReplayArm]) -> Result<String> {
    let mut hasher = blake3::Hasher::new();
    hasher.update(
        crate::fsutil::TreeSnapshot::read(&task.dir)?
            .hash
            .as_bytes(),
    );
    for arm in arms {
        hasher.update(arm.name.as_bytes());
        hasher.update(arm.format.as_str().as_bytes());
        // Only a non-default schema is hashed, so passes-schema runs keep their hash.
        if arm.schema != ListSchema::Passes {
            hasher.update(arm.schema.as_str().as_bytes());
        }
        // Likewise the harness settings: they change what the same trace scores.
        if arm.exit_check != ExitCheck::Off {
            hasher.update(arm.exit_check.as_str().as_bytes());
        }
        // The ledger too: a gate's writes change what the next session finds. A
        // replay's content hash is its identity, so a resume or a merge of replays
        // made with another ledger is refused as one of other content.
        if arm.ledger != Ledger::Memo {
            hasher.update(b"ledger=");
            hasher.update(arm.ledger.as_str().as_bytes());
        }
        if arm.session_tokens > 0 {
            hasher.update(&arm.session_tokens.to_le_bytes());
        }
        if arm.start != ReplayStart::List {
            hasher.update(arm.start.as_str().as_bytes());
        }
        for t in &arm.traces {
            hasher.update(&t.trace.content_hash);
        }
    }
    Ok(hasher.finalize().to_hex().to_string())
}

/// A replay run, rebuilt from its manifest and `traces.csv` (for `resume`): every
/// trace must still hold what it held when the run started.
pub fn spec_of_manifest(dir: &RunDir, manifest: &Manifest) -> Result<RunSpec> {
    let Some(inputs) = &manifest.replay else {
        return Err(ResultsDirError::NotAReplay {
            dir: dir.path().to_path_buf(),
        }
        .into());
    };
    let task = Task::load(Path::new(&inputs.task))?;
    let path = dir.traces_csv();
    let mut reader = csv::Reader::from_path(&path).map_err(|e| ResultsDirError::Unreadable {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let mut rows: Vec<(String, u32, PathBuf, String)> = Vec::new();
    for (i, row) in reader.records().enumerate() {
        let row = row.map_err(|e| ResultsDirError::BadRecord {
            path: path.clone(),
            line: None,
            reason: e.to_string(),
        })?;
        let bad = || Error::BadLine {
            file: path.clone(),
            line: i + 2,
            message: "expected trial_id,arm,replicate,trace,blake3".into(),
        };
        let replicate: u32 = row.get(2).and_then(|r| r.parse().ok()).ok_or_else(bad)?;
        // Text cells as written: escaped where they would start a formula.
        let text = |at: usize| row.get(at).map(csv_text::unescape).ok_or_else(bad);
        rows.push((
            text(1)?.to_string(),
            replicate,
            PathBuf::from(text(3)?),
            text(4)?.to_string(),
        ));
    }
    let mut arms = Vec::new();
    for (name, format) in manifest.arms.iter().zip(&inputs.formats) {
        let mut mine: Vec<&(String, u32, PathBuf, String)> =
            rows.iter().filter(|r| &r.0 == name).collect();
        mine.sort_by_key(|r| r.1);
        let mut traces = Vec::new();
        for (_, _, trace_path, hash) in mine {
            let trace = Trace::load(trace_path)?;
            if blake3::Hash::from(trace.content_hash).to_hex().as_str() != hash {
                return Err(ResultsDirError::TraceChanged {
                    trace: trace_path.clone(),
                }
                .into());
            }
            traces.push(TraceFile {
                path: trace_path.clone(),
                trace,
            });
        }
        arms.push(ReplayArm {
            name: name.clone(),
            format: *format,
            schema: inputs.schema,
            exit_check: inputs.exit_check,
            ledger: inputs.ledger,
            session_tokens: inputs.session_tokens,
            start: inputs.start,
            traces,
        });
    }
    let hash = inputs_hash(&task, &arms)?;
    let sandbox = manifest.verify_sandbox;
    if !sandbox.works_here() {
        return Err(ResultsDirError::SandboxUnavailable {
            dir: dir.path().to_path_buf(),
            sandbox: sandbox.title().to_string(),
        }
        .into());
    }
    sandbox.check(&format!(
        "'{}' was replayed under {}",
        dir.path().display(),
        sandbox.title()
    ))?;
    let container = task_containers(&task, sandbox)?;
    let spec = RunSpec::of_replay(
        ReplaySet {
            task,
            arms,
            sandbox,
            keep_work: inputs.keep_work,
            container,
        },
        hash,
    );
    spec.check(
        Purpose::Replay,
        manifest,
        dir.path(),
        Path::new(&inputs.task),
    )?;
    Ok(spec)
}

/// Writes `traces.csv`: which trace file (and which exact content) each trial replayed.
fn write_traces_csv(out: &RunDir, task: &str, arms: &[ReplayArm]) -> Result<()> {
    let path = out.traces_csv();
    let context = || format!("cannot write '{}'", path.display());
    let file = std::fs::File::create(&path).io_context(context)?;
    let mut csv = csv_text::Writer::new(file);
    csv.header(["trial_id", "arm", "replicate", "trace", "blake3"])
        .map_err(|e| Error::io(context(), e.into()))?;
    for arm in arms {
        for (replicate, TraceFile { path, trace }) in arm.traces.iter().enumerate() {
            let key = TrialKey::new(&arm.name, task, replicate as u32);
            let hash = blake3::Hash::from(trace.content_hash).to_hex();
            csv.row([
                csv_text::Cell::Text(key.trial_id),
                csv_text::Cell::Text(arm.name.clone()),
                csv_text::Cell::Value(replicate.to_string()),
                // Absolute, so that `resume` finds it from any directory.
                csv_text::Cell::Text(
                    std::path::absolute(path)
                        .unwrap_or_else(|_| path.clone())
                        .display()
                        .to_string(),
                ),
                csv_text::Cell::Text(hash.to_string()),
            ])
            .map_err(|e| Error::io(context(), e.into()))?;
        }
    }
    csv.flush().io_context(context)
}

/// How a replay runs, beyond its traces.
struct ReplaySetup {
    /// The sandbox of the checks and `run` actions.
    pub sandbox: SandboxKind,
    /// `--unsandboxed`: the user allowed running on the host.
    pub unsandboxed: bool,
    /// `--keep-repos`.
    pub keep_repos: bool,
}

/// The manifest of the replay `spec`.
fn replay_manifest(spec: &RunSpec, setup: &ReplaySetup) -> Manifest {
    let (sandbox_limits, sandbox_user) = if setup.sandbox.confines() {
        super::suite_run::sandbox_facts()
    } else {
        (None, None)
    };
    let identity = spec.identity();
    Manifest {
        baseline: identity.arms.first().cloned(),
        driver: "replay".into(),
        unsandboxed: setup.unsandboxed,
        keep_repos: setup.keep_repos,
        sandbox_limits,
        sandbox_user,
        ..identity
    }
}

/// What `replay` was asked for: the task, the traces, how they run and where the
/// results go.
pub struct ReplayRequest<'a> {
    /// The task (`--task DIR`), loaded.
    pub task: Task,
    /// The traces and how to group, name and score them.
    pub inputs: TraceInputs<'a>,
    /// `--unsandboxed`.
    pub unsandboxed: bool,
    /// `--keep-work`.
    pub keep_work: bool,
    /// `--keep-repos`.
    pub keep_repos: bool,
    /// `--out DIR` (else `results/replay/<timestamp>`).
    pub out: Option<&'a Path>,
}

/// Parses every trace before anything is written (bad input leaves no results), then
/// creates the results directory with the manifest and `traces.csv`. Returns the plan
/// and the directory's writer.
pub fn start_replay(asked: ReplayRequest) -> Result<(Plan, RunWriter)> {
    let task = asked.task;
    let arms = load_arms(&asked.inputs)?;
    let out = match asked.out {
        Some(dir) => dir.to_path_buf(),
        None => new_run_dir(&Path::new("results").join("replay")),
    };
    let setup = ReplaySetup {
        sandbox: match task.needs_container() {
            Some(_) if !asked.unsandboxed => SandboxKind::Container,
            _ => sandbox_for(&arms, asked.unsandboxed)?,
        },
        unsandboxed: asked.unsandboxed,
        keep_repos: asked.keep_repos,
    };
    let container = task_containers(&task, setup.sandbox)?;
    let hash = inputs_hash(&task, &arms)?;
    let spec = RunSpec::of_replay(
        ReplaySet {
            task,
            arms,
            sandbox: setup.sandbox,
            keep_work: asked.keep_work,
            container,
        },
        hash,
    );
    let writer = RunWriter::create(&out, replay_manifest(&spec, &setup))?;
    let Source::Replay(set) = spec.source().as_ref() else {
        return Err(Error::Tool(
            "a replay's specification without its traces".into(),
        ));
    };
    write_traces_csv(writer.dir(), &set.task.name, &set.arms)?;
    Ok((spec.plan(&Default::default())?, writer))
}

/// The containers of a task that runs in them, made ready (the engine found, the image
/// inspected or built), when `sandbox` is the container sandbox; a task made for a
/// container replayed under any other sandbox is refused (its trace's `run` actions
/// and its checks never run on the host or under bubblewrap), as is one without an
/// image in the container sandbox.
fn task_containers(task: &Task, sandbox: SandboxKind) -> Result<Option<Arc<TaskContainer>>> {
    match (task.needs_container(), &task.environment) {
        (Some(why), _) if sandbox != SandboxKind::Container => {
            Err(SandboxError::ReplayOutsideContainer {
                task: task.name.clone(),
                dir: task.dir.clone(),
                why: why.to_string(),
                sandbox: sandbox.title().to_string(),
            }
            .into())
        }
        (_, Some(env)) if sandbox == SandboxKind::Container => Ok(Some(Arc::new(env.container(
            &task.name,
            None,
            &crate::sandbox::Limits::default(),
        )?))),
        _ => {
            crate::suite::refuse_outside_container(task, sandbox)?;
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Field;

    /// Every setting of a replay's arms is part of its content hash, which is all that
    /// `resume` compares of a replay ([`Purpose::Replay`]): a replay whose manifest says
    /// other settings than the run it holds, the ledger among them, is refused as one of
    /// other content.
    /// A setting of an arm changed.
    type Change = fn(&mut ReplayArm);

    #[test]
    fn every_setting_of_a_replay_is_part_of_its_content_hash() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("suites/seed-replication/tasks/todo");
        let task = Task::load(&dir).unwrap();
        let arm = ReplayArm {
            name: "a".into(),
            format: ListFormat::Json,
            schema: ListSchema::Passes,
            exit_check: ExitCheck::Off,
            ledger: Ledger::Memo,
            session_tokens: 0,
            start: ReplayStart::List,
            traces: Vec::new(),
        };
        let spec_of = |arm: ReplayArm| {
            let hash = inputs_hash(&task, std::slice::from_ref(&arm)).unwrap();
            let set = ReplaySet {
                task: task.clone(),
                arms: vec![arm],
                sandbox: SandboxKind::None,
                container: None,
                keep_work: false,
            };
            RunSpec::of_replay(set, hash)
        };
        let ours = spec_of(arm.clone());
        let (dir, other) = (Path::new("replayed"), Path::new("task"));
        assert_eq!(
            ours.check(Purpose::Replay, &ours.identity(), dir, other),
            Ok(())
        );
        let changes: [(&str, Change); 6] = [
            ("format", |a| a.format = ListFormat::Yaml),
            ("schema", |a| a.schema = ListSchema::Status),
            ("exit_check", |a| a.exit_check = ExitCheck::Revert),
            ("ledger", |a| a.ledger = Ledger::Gate),
            ("session_tokens", |a| a.session_tokens = 1),
            ("start", |a| a.start = ReplayStart::Initializer),
        ];
        for (setting, change) in changes {
            let mut changed = arm.clone();
            change(&mut changed);
            let theirs = spec_of(changed).identity();
            let refused = ours.check(Purpose::Replay, &theirs, dir, other);
            assert_eq!(
                refused.map_err(|m| m.field),
                Err(Field::Content),
                "{setting}"
            );
        }
    }
}
