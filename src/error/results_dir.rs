//! What can be wrong with a results directory a command is given: a directory that is
//! not one, one another process writes, one that holds something else, a table or a
//! record file that cannot be read as loopbench writes it, a shard that does not belong
//! with the others, a look of a sequential run that cannot follow.

use std::path::PathBuf;

/// Which argument named the directory, for the message's lead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// A command's `RUN_DIR`, a shard to merge.
    Given,
    /// `run --after DIR`.
    After,
}

impl Named {
    fn lead(self) -> &'static str {
        match self {
            Named::Given => "",
            Named::After => "--after: ",
        }
    }
}

/// A results directory a command cannot use as asked (exit 2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResultsDirError {
    /// `--out` names something that is not a directory.
    #[error("'{}' is not a directory (it is {kind}); give --out a new or empty directory", dir.display())]
    OutIsNotADirectory {
        /// The path given.
        dir: PathBuf,
        /// What it is ("a regular file").
        kind: String,
    },
    /// A new run's directory already holds a run.
    #[error(
        "'{}' already holds results; choose another --out (or use `loopbench resume` to \
         continue an interrupted run)",
        dir.display()
    )]
    HoldsResults {
        /// The directory.
        dir: PathBuf,
    },
    /// A new run's directory holds something that is not a run.
    #[error(
        "'{}' is not empty (it holds {holds}) and is not a loopbench run; refusing to write \
         results into it: choose a new or empty directory for --out",
        dir.display()
    )]
    NotEmpty {
        /// The directory.
        dir: PathBuf,
        /// Its first entries, quoted, and how many more.
        holds: String,
    },
    /// The path is not a directory.
    #[error("'{}' is not a directory", dir.display())]
    NotADirectory {
        /// The path given.
        dir: PathBuf,
    },
    /// The directory does not exist.
    #[error("results directory '{}' does not exist", dir.display())]
    Missing {
        /// The path given.
        dir: PathBuf,
    },
    /// Another loopbench process holds the directory's lock.
    #[error(
        "'{}' is locked: another loopbench process{} is writing it; wait for it to finish \
         or stop it, or choose another directory",
        dir.display(),
        holder.map(|pid| format!(" (pid {pid})")).unwrap_or_default()
    )]
    Locked {
        /// The directory.
        dir: PathBuf,
        /// The holder's pid, as its lock file says.
        holder: Option<u32>,
    },
    /// The lock file is a link, a FIFO or anything but a regular file.
    #[error(
        "'{}' is not a regular file; remove it so that loopbench can lock the directory",
        path.display()
    )]
    LockIsNotAFile {
        /// The lock file.
        path: PathBuf,
    },
    /// The directory has no manifest.
    #[error("{}'{}' is not a results directory (no manifest.json)", named.lead(), dir.display())]
    NoManifest {
        /// The directory.
        dir: PathBuf,
        /// Which argument named it.
        named: Named,
    },
    /// The manifest cannot be read as one.
    #[error("'{}' is not a manifest: {reason}", path.display())]
    BadManifest {
        /// The manifest file.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
    /// The run did not finish, and what is asked needs it finished.
    #[error(
        "{}'{}' did not finish; run `loopbench resume {}` first",
        named.lead(),
        dir.display(),
        dir.display()
    )]
    Unfinished {
        /// The directory.
        dir: PathBuf,
        /// Which argument named it.
        named: Named,
    },
    /// The manifest names neither a suite nor traces.
    #[error(
        "'{}' was written neither by `loopbench run` nor by `loopbench replay` (no suite or \
         traces in its manifest); it cannot be resumed",
        dir.display()
    )]
    NotResumable {
        /// The directory.
        dir: PathBuf,
    },
    /// Two shards hold the same trial.
    #[error("trial '{trial}' is in more than one of the runs; shards must not overlap")]
    ShardsOverlap {
        /// The trial's id.
        trial: String,
    },
    /// A shard is given twice.
    #[error("shard {shard} is given twice ('{}')", dir.display())]
    ShardTwice {
        /// `I/N`.
        shard: String,
        /// The second directory holding it.
        dir: PathBuf,
    },
    /// A shard of another split of the plan.
    #[error("'{}' is not one of {count} shards; merge shards of one split only", dir.display())]
    ShardOfAnotherSplit {
        /// The directory.
        dir: PathBuf,
        /// The split's shard count.
        count: u32,
    },
    /// Shards of the split are not given.
    #[error("shards {} are missing", missing.join(", "))]
    ShardsMissing {
        /// Each missing shard, `I/N`.
        missing: Vec<String>,
    },
    /// `--after` names one shard of a look, not the merged look.
    #[error(
        "--after: '{}' is one shard of look {look}; merge every shard of it first \
         (`loopbench merge ... --out DIR`) and name the merged run",
        dir.display()
    )]
    AfterIsAShard {
        /// The directory.
        dir: PathBuf,
        /// Its look.
        look: usize,
    },
    /// A look of a sequential run holds only some of its trials.
    #[error(
        "'{}' holds {held} of the {total} trials of look {look}; merge every shard of look \
         {look} (with the merged run of the looks before it) first",
        dir.display()
    )]
    LookIncomplete {
        /// The directory.
        dir: PathBuf,
        /// The look.
        look: usize,
        /// Its trials recorded.
        held: usize,
        /// Its trials planned.
        total: usize,
    },
    /// Every arm of the sequential run crossed its boundary: no look follows.
    #[error(
        "the sequential run in '{}' stopped at look {looks_done}: every arm crossed its \
         boundary, so there is no look {look} to run",
        dir.display()
    )]
    SequentialStopped {
        /// The merged run.
        dir: PathBuf,
        /// The looks it judged.
        looks_done: usize,
        /// The look asked for.
        look: usize,
    },
    /// The merged run holds other looks than the one asked for follows.
    #[error(
        "'{}' holds looks 1 to {looks_done} of the sequential run; --look {look} needs \
         exactly looks 1 to {}",
        dir.display(),
        look.saturating_sub(1)
    )]
    OtherLooks {
        /// The merged run.
        dir: PathBuf,
        /// The looks it judged.
        looks_done: usize,
        /// The look asked for.
        look: usize,
    },
    /// `resume` of a replay found a directory that is not one.
    #[error("'{}' is not a replay run", dir.display())]
    NotAReplay {
        /// The directory.
        dir: PathBuf,
    },
    /// A trace a replay read changed since.
    #[error(
        "trace '{}' changed since this run started; resuming would mix two experiments. \
         Start a new replay instead.",
        trace.display()
    )]
    TraceChanged {
        /// The trace file.
        trace: PathBuf,
    },
    /// The sandbox a replay ran under does not work on this machine.
    #[error(
        "'{}' was replayed under {sandbox}, which does not work here; resume it where it does",
        dir.display()
    )]
    SandboxUnavailable {
        /// The directory.
        dir: PathBuf,
        /// The sandbox, as its title says it.
        sandbox: String,
    },
    /// The run directory a report reads does not exist.
    #[error("run directory '{}' does not exist", dir.display())]
    RunMissing {
        /// The directory.
        dir: PathBuf,
    },
    /// The root of the runs a weekly report pools does not exist.
    #[error("results root '{}' does not exist", root.display())]
    RootMissing {
        /// The root.
        root: PathBuf,
    },
    /// A table a report needs is not there.
    #[error("'{}' does not exist (report needs sessions.csv and trials.csv)", path.display())]
    TableMissing {
        /// The table.
        path: PathBuf,
    },
    /// A file of the run cannot be read.
    #[error("cannot read '{}': {reason}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
    /// A table was read but its rows could not be checked.
    #[error("cannot check '{}': {reason}", path.display())]
    Uncheckable {
        /// The table.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
    /// A table lacks a column a report needs.
    #[error("'{}' has no column '{column}' (required: {})", path.display(), required.join(", "))]
    MissingColumn {
        /// The table.
        path: PathBuf,
        /// The first column missing.
        column: String,
        /// Every column required.
        required: Vec<String>,
    },
    /// A table holds a row that does not fit the record format, and no single cell of
    /// it could be named.
    #[error("'{}' holds a row that does not fit the record format", path.display())]
    RowDoesNotFit {
        /// The table.
        path: PathBuf,
    },
    /// The sessions table has none of the columns that key a session.
    #[error("'{}' has no trial_id, arm, task or session column", path.display())]
    NoKeyColumns {
        /// The table.
        path: PathBuf,
    },
    /// A record file holds a record that cannot be read.
    #[error(
        "'{}'{}: {reason}",
        path.display(),
        line.map(|l| format!(" line {l}")).unwrap_or_default()
    )]
    BadRecord {
        /// The file.
        path: PathBuf,
        /// Its line, when known.
        line: Option<u64>,
        /// What is wrong.
        reason: String,
    },
    /// The manifest is not JSON.
    #[error("'{}' is not JSON: {reason}", path.display())]
    NotJson {
        /// The manifest.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
    /// The manifest is JSON but not an object.
    #[error("'{}' is not a manifest (expected a JSON object)", path.display())]
    ManifestNotAnObject {
        /// The manifest.
        path: PathBuf,
    },
    /// The directory holds no finished trial's record.
    #[error(
        "'{}' is not a results directory with finished trials (no trials.jsonl); give the \
         directory `run` or `replay` wrote, e.g. results/<suite>/<run-id>",
        dir.display()
    )]
    NoFinishedTrials {
        /// The directory.
        dir: PathBuf,
    },
    /// The run holds no trajectories: it was made before they were recorded.
    #[error(
        "'{}' does not exist: the run was made before loopbench recorded what agents did",
        file.display()
    )]
    NoTrajectories {
        /// The trajectories file that is not there.
        file: PathBuf,
    },
    /// No finished trial has the id `show` was given.
    #[error(
        "no trial '{trial}' in '{}' (trial ids are arm:task:replicate, e.g. {}{}); \
         `loopbench show {}` lists them all",
        dir.display(),
        if known.is_empty() { "none finished yet".to_string() } else { known.join(", ") },
        if *more { ", …" } else { "" },
        dir.display()
    )]
    NoTrial {
        /// The results directory.
        dir: PathBuf,
        /// The id asked for.
        trial: String,
        /// The first few ids it holds.
        known: Vec<String>,
        /// Whether it holds more than those.
        more: bool,
    },
    /// The trial has no session of the number asked for.
    #[error(
        "trial '{trial}' has no session {session}; `loopbench show {} {trial}` lists its sessions",
        dir.display()
    )]
    NoSession {
        /// The results directory.
        dir: PathBuf,
        /// The trial.
        trial: String,
        /// The session asked for.
        session: u32,
    },
    /// The trajectories file holds nothing of the trial (or of its session).
    #[error(
        "no trajectory of trial '{trial}'{} in '{}'",
        session.map(|n| format!(" session {n}")).unwrap_or_default(),
        file.display()
    )]
    NoTrajectoryOf {
        /// The trajectories file.
        file: PathBuf,
        /// The trial.
        trial: String,
        /// The session asked for, if one was.
        session: Option<u32>,
    },
    /// What an export was given is not a directory.
    #[error(
        "'{}' is not a directory; give the results directory `run` or `replay` wrote, e.g. \
         results/<suite>/<run-id>",
        dir.display()
    )]
    NotARunDirectory {
        /// The path given.
        dir: PathBuf,
    },
    /// A file every results directory holds is not there.
    #[error("'{}' does not exist: a results directory holds it ({what})", path.display())]
    FileMissing {
        /// The file.
        path: PathBuf,
        /// What it holds.
        what: String,
    },
    /// A JSON file of the run does not hold what loopbench writes there.
    #[error("{}:{line}:{column}: not what loopbench writes there: {reason}", path.display())]
    NotWhatLoopbenchWrote {
        /// The file.
        path: PathBuf,
        /// 1-based line of the error.
        line: usize,
        /// 1-based column of the error.
        column: usize,
        /// What the parser said.
        reason: String,
    },
    /// A table's values cannot be counted as the summary counts them (a column of
    /// another type than loopbench writes).
    #[error("cannot summarize '{}': {reason}", path.display())]
    CannotSummarize {
        /// The table.
        path: PathBuf,
        /// What the data frame library said.
        reason: String,
    },
    /// A results root holds no run `weekly` can pool.
    #[error("{}{}", why.lead(root), skipped_list(skipped))]
    NoUsableRun {
        /// The results root.
        root: PathBuf,
        /// Why none could be used.
        why: NoUsableRun,
        /// Each run skipped, with why.
        skipped: Vec<String>,
    },
    /// The runs found cannot be pooled week by week.
    #[error("cannot pool the runs under '{}': {reason}", root.display())]
    CannotPool {
        /// The results root.
        root: PathBuf,
        /// What failed.
        reason: String,
    },
}

/// Why a results root holds no run to pool ([`ResultsDirError::NoUsableRun`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoUsableRun {
    /// No directory below it holds a manifest.
    NoRun,
    /// Every run found started before the `--since` window.
    AllOlder {
        /// Runs found.
        found: usize,
        /// The window, as `--since` says it ("7days").
        since: String,
    },
    /// Runs were found, but none could be read.
    NoneUsable,
}

impl NoUsableRun {
    fn lead(&self, root: &std::path::Path) -> String {
        let root = root.display();
        match self {
            NoUsableRun::NoRun => format!(
                "no run under '{root}': no directory below it holds a manifest.json (expected a \
                 results root, such as the --out of run or its parent)"
            ),
            NoUsableRun::AllOlder { found, since } => format!(
                "no run under '{root}' started within --since {since}: all {found} runs are older"
            ),
            NoUsableRun::NoneUsable => format!("no usable run under '{root}'"),
        }
    }
}

fn skipped_list(skipped: &[String]) -> String {
    if skipped.is_empty() {
        return String::new();
    }
    let mut text = format!("; {} skipped:", skipped.len());
    for reason in skipped {
        text += &format!("\n  {reason}");
    }
    text
}
