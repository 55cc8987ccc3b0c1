//! The arguments of every subcommand, as clap parses them: the commands read them, the
//! command line (`cli`) only lists the subcommands.

use std::path::PathBuf;

use clap::Args;

use crate::error::{Error, Result};
use crate::feature_list::ListFormat;
use crate::import::format::Format;
use crate::runner::Shard;
use crate::sandbox::SandboxKind;

/// Arguments of the internal `loopbench supervise`.
#[derive(Debug, clap::Args)]
pub struct SuperviseArgs {
    /// Where the agent's wait status is written.
    #[arg(long)]
    pub status: PathBuf,
    /// The agent program and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// Arguments of the internal `loopbench batch-supervise`, the supervisor of a batch of
/// checks inside its sandbox.
#[derive(Debug, clap::Args)]
pub struct BatchSuperviseArgs {
    /// The batch's directory: its plan in `results/plan`.
    pub dir: PathBuf,
    /// The switch to the sandbox's user: a program and its arguments, followed by each
    /// check's.
    #[arg(required = true, last = true)]
    pub switch: Vec<std::ffi::OsString>,
}

/// Arguments of the internal `loopbench net-relay`, the agent's way out of a sandbox
/// whose arm declares network targets.
#[derive(Debug, clap::Args)]
pub struct NetRelayArgs {
    /// The harness's proxy: a Unix socket bound into the sandbox.
    #[arg(long)]
    pub socket: PathBuf,
    /// Let the agent reach the sandbox's own loopback directly (`NO_PROXY`), where the
    /// scripted model server listens.
    #[arg(long)]
    pub direct_loopback: bool,
    /// The agent program and its arguments.
    #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
    pub command: Vec<std::ffi::OsString>,
}

/// Arguments of `loopbench completions`.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell the script is for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `loopbench man`.
#[derive(Debug, clap::Args)]
pub struct ManArgs {
    /// Write loopbench.1 and one page per subcommand (loopbench-run.1, ...) into this
    /// directory instead of printing loopbench.1.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// What `loopbench report` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// summary.md
    Md,
    /// summary.csv
    Csv,
    /// summary.json
    Json,
}

/// Arguments of `loopbench report`.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// The results directory (needs sessions.csv and trials.csv; manifest.json optional).
    pub run_dir: PathBuf,
    /// Arm the others are compared with [default: the manifest's baseline, else the
    /// first arm].
    #[arg(long)]
    pub baseline: Option<String>,
    /// Which summary file to print.
    #[arg(long, value_enum, default_value = "md")]
    pub format: ReportFormat,
    /// Confidence level of every interval.
    #[arg(long, default_value_t = crate::report::DEFAULT_CONFIDENCE)]
    pub confidence: f64,
    /// Print all of summary.md (every table) instead of the verdict and where the
    /// rest is; only with `--format md`.
    #[arg(long)]
    pub full: bool,
    /// Also write report.html: one self-contained page with the verdict, the tables,
    /// the plots and every trial's sessions.
    #[arg(long)]
    pub html: bool,
}

/// Arguments of `loopbench compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// The reference run's results directory.
    pub base_run: PathBuf,
    /// The run under judgement.
    pub new_run: PathBuf,
    /// Metric to judge (repeatable), e.g. premature_done.
    #[arg(long = "metric", required = true)]
    pub metrics: Vec<String>,
    /// Largest change in the worse direction that is tolerated, as a rate (0.02 = two
    /// points).
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub max_increase: f64,
    /// Significance level of the one-sided Fisher exact test.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Judge only these arms, comma-separated (each must be in both runs). Without it,
    /// every arm both runs have is judged, and one of the base run that the new run
    /// lacks is named in a warning.
    #[arg(long)]
    pub arms: Option<String>,
    /// What to print: the Markdown verdict tables, a JSON array of verdicts, or a JUnit
    /// XML report (one test case per arm and metric, failed on a regression) for CI
    /// systems that show test reports.
    #[arg(long, value_enum, default_value_t = CompareFormat::Md)]
    pub format: CompareFormat,
    /// Also show one row per (arm, task, metric): both runs' k, n and rate, the change
    /// and its one-sided Fisher p (a `by_task` array on each JSON verdict, lines in each
    /// JUnit test case). With two or more tasks in both runs the regression rule is
    /// stratified by task whether or not this is given.
    #[arg(long)]
    pub by_task: bool,
    /// Also append the Markdown verdict to the file `$GITHUB_STEP_SUMMARY` names (a
    /// GitHub Actions job summary); an error when the variable is not set.
    #[arg(long)]
    pub github_summary: bool,
}

/// What `loopbench compare` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CompareFormat {
    /// Markdown verdict tables.
    Md,
    /// A JSON array of verdicts.
    Json,
    /// JUnit XML: one test case per arm and metric.
    Junit,
}

/// Arguments of `loopbench weekly`.
#[derive(Debug, clap::Args)]
pub struct WeeklyArgs {
    /// Directory searched recursively for runs (directories holding manifest.json).
    pub results_root: PathBuf,
    /// Only runs started within this span before now, e.g. 7d, 12weeks.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub since: Option<std::time::Duration>,
    /// Where weekly.csv, weekly.md and plots/ go [default: RESULTS_ROOT/weekly].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Week-over-week change in the worse direction that is tolerated.
    #[arg(long, default_value_t = 0.0, allow_negative_numbers = true)]
    pub max_increase: f64,
    /// Significance level of the week-over-week one-sided Fisher test.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Confidence level of the weekly intervals.
    #[arg(long, default_value_t = crate::report::DEFAULT_CONFIDENCE)]
    pub confidence: f64,
    /// Also write weekly.html: one self-contained page with the trend tables and plots.
    #[arg(long)]
    pub html: bool,
    /// Which weekly file to print: weekly.md, weekly.csv or weekly.json (one object per
    /// week, metric and arm).
    #[arg(long, value_enum, default_value = "md")]
    pub format: WeeklyFormat,
}

/// What `loopbench weekly` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum WeeklyFormat {
    /// weekly.md
    Md,
    /// weekly.csv
    Csv,
    /// weekly.json
    Json,
}

/// Arguments of `loopbench power`.
#[derive(Debug, clap::Args)]
pub struct PowerArgs {
    /// One rate, e.g. the baseline's.
    #[arg(long)]
    pub p1: f64,
    /// The other rate.
    #[arg(long)]
    pub p2: f64,
    /// Two-sided significance level.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Power wanted.
    #[arg(long, default_value_t = 0.8)]
    pub power: f64,
    /// Also size a group-sequential design, which may stop at an early look.
    ///
    /// The arms are compared at --looks equally spaced looks against Lan-DeMets
    /// O'Brien-Fleming-type boundaries (same alpha and power), and the comparison stops at
    /// the first look whose |z| reaches its boundary. Printed after the fixed design's
    /// sessions per arm: the sequential design's maximum sessions per arm (reached only if
    /// no look stops it), the sessions per arm and boundary of each look, and the expected
    /// sessions per arm at stopping when the rates are p1 vs p2 and when the arms do not
    /// differ, computed by numerical integration over the boundaries (normal theory, not
    /// simulation).
    #[arg(long)]
    pub sequential: bool,
    /// Number of looks of the sequential design, the last at the maximum (1 to 50)
    /// [default: 5].
    #[arg(long, requires = "sequential")]
    pub looks: Option<usize>,
    /// What to print: the sentences, or one JSON object with the same numbers.
    #[arg(long, value_enum, default_value_t = PowerFormat::Text)]
    pub format: PowerFormat,
}

/// What `loopbench power` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PowerFormat {
    /// Sentences for people.
    Text,
    /// One JSON object (field names are stable; see docs/formats.md).
    Json,
}

/// Arguments of `loopbench run`.
#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The suite directory (holding suite.toml).
    pub suite: PathBuf,
    /// Only these arms, comma-separated.
    #[arg(long)]
    pub arms: Option<String>,
    /// Trials per (arm, task), overriding the suite.
    #[arg(long)]
    pub replicates: Option<u32>,
    /// Suite seed, overriding the suite.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Trials at once [default: min(4, cores)].
    #[arg(long, value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Results directory [default: results/<suite>/<run-id>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// No progress display.
    #[arg(long)]
    pub quiet: bool,
    /// Run only slice I of N of the trial plan (1-based), for batch engines.
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<Shard>,
    /// Sequential suites: run only this look's new trials (with `--shard`, a slice of
    /// them); `merge` then judges it.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub look: Option<u64>,
    /// With `--look K` (K > 1): the merged run of looks 1 to K − 1.
    #[arg(long, requires = "look")]
    pub after: Option<PathBuf>,
    /// Write a git bundle of every trial to repos/<trial_id>.bundle: one commit per
    /// session, made by the harness from the trees it observed.
    #[arg(long)]
    pub keep_repos: bool,
    /// Print all of summary.md (every table) at the end instead of the verdict and
    /// where the rest is.
    #[arg(long)]
    pub full: bool,
}

fn parse_shard(s: &str) -> std::result::Result<Shard, String> {
    s.parse()
}

/// Arguments of `loopbench show`.
#[derive(Debug, clap::Args)]
pub struct ShowArgs {
    /// The results directory of a run (holding trials.jsonl and sessions.jsonl).
    pub run_dir: PathBuf,
    /// The trial to show as a timeline (`arm:task:replicate`); without it, one line
    /// per trial.
    pub trial_id: Option<String>,
    /// With TRIAL_ID: what the agent did in each session, one entry a line, those a
    /// metric counted marked (from trajectories.jsonl).
    #[arg(long, requires = "trial_id")]
    pub trajectory: bool,
    /// With --trajectory: only this session.
    #[arg(long, requires = "trajectory")]
    pub session: Option<u32>,
    /// With --trajectory: the entries and their marks as JSON.
    #[arg(long, requires = "trajectory")]
    pub json: bool,
}

/// Arguments of `loopbench export`.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// The results directory of a run (holding manifest.json, trials.jsonl,
    /// sessions.jsonl and trajectories.jsonl).
    pub run_dir: PathBuf,
    /// The format to write.
    #[arg(long, value_enum)]
    pub to: crate::export::Format,
    /// A new or empty directory to write into [default: RUN_DIR/exports/FORMAT].
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `loopbench resume`.
#[derive(Debug, clap::Args)]
pub struct ResumeArgs {
    /// The results directory of the interrupted run.
    pub run_dir: PathBuf,
    /// Trials at once [default: min(4, cores)].
    #[arg(long, value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// No progress display.
    #[arg(long)]
    pub quiet: bool,
    /// Print all of summary.md (every table) at the end instead of the verdict and
    /// where the rest is.
    #[arg(long)]
    pub full: bool,
}

/// Arguments of `loopbench merge`.
#[derive(Debug, clap::Args)]
pub struct MergeArgs {
    /// Results directories of the shards.
    #[arg(required = true)]
    pub run_dirs: Vec<PathBuf>,
    /// Where the merged run goes (must not hold results).
    #[arg(long)]
    pub out: PathBuf,
}

/// Arguments of `loopbench validate`.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The suite directory (holding suite.toml).
    pub suite: PathBuf,
    /// Also run `check-task` over the suite's tasks (default settings); exit 1 when a
    /// task cannot measure.
    #[arg(long)]
    pub checks: bool,
}

/// Arguments of `loopbench check-task`.
#[derive(Debug, clap::Args)]
pub struct CheckTaskArgs {
    /// Task directories (holding task.toml), or one suite directory: all its tasks.
    #[arg(required = true, value_name = "TASK_DIR|SUITE")]
    pub inputs: Vec<PathBuf>,
    /// Runs of every check on the same tree; they must agree (1 skips `repeat`).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeats: u32,
    /// What to print: tables for people, or one JSON object (docs/formats.md).
    #[arg(long, value_enum, default_value_t = CheckTaskFormat::Text)]
    pub format: CheckTaskFormat,
    /// Trees checked at once [default: min(4, cores)].
    #[arg(long, value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// Where the checks run: `auto` (in the strongest sandbox that works here, else on
    /// the host with a warning), a sandbox by name (refuse to run without it) or `none`
    /// (on the host).
    #[arg(long, value_enum, default_value_t = CheckTaskSandbox::Auto)]
    pub sandbox: CheckTaskSandbox,
    /// No progress display.
    #[arg(long)]
    pub quiet: bool,
}

/// What `loopbench check-task` prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckTaskFormat {
    /// One table per task and each problem with what to fix.
    Text,
    /// One JSON object (field names are stable; see docs/formats.md).
    Json,
}

/// Where `loopbench check-task` runs the checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckTaskSandbox {
    /// In the strongest sandbox that works on this machine, else on the host.
    Auto,
    /// In this sandbox, or exit 2 (`none`: on the host).
    Kind(SandboxKind),
}

impl clap::ValueEnum for CheckTaskSandbox {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: std::sync::LazyLock<Vec<CheckTaskSandbox>> = std::sync::LazyLock::new(|| {
            std::iter::once(CheckTaskSandbox::Auto)
                .chain(SandboxKind::ALL.iter().map(|k| CheckTaskSandbox::Kind(*k)))
                .collect()
        });
        &ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(match self {
            CheckTaskSandbox::Auto => clap::builder::PossibleValue::new("auto")
                .help("In the strongest sandbox that works on this machine, else on the host"),
            CheckTaskSandbox::Kind(kind) if kind.confines() => {
                clap::builder::PossibleValue::new(kind.name())
                    .help(format!("Under {}, or exit 2", kind.title()))
            }
            CheckTaskSandbox::Kind(kind) => {
                clap::builder::PossibleValue::new(kind.name()).help("On the host")
            }
        })
    }
}

/// Arguments of `loopbench replay`.
///
/// Each directory is one arm (its `*.jsonl` traces, one trial each, in file-name order);
/// trace files given directly form one more arm together.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// Traces (JSONL, one action per line) or directories of traces.
    #[arg(required = true, value_name = "TRACE|DIR")]
    pub inputs: Vec<PathBuf>,
    /// The task directory the traces ran against (holding task.toml).
    #[arg(long)]
    pub task: PathBuf,
    /// Feature-list format the trials start with: once for every arm, or once per arm.
    #[arg(long, value_parser = parse_format, required = true)]
    pub format: Vec<ListFormat>,
    /// List schema of every arm: `passes` (a flag per entry) or `status` (a state per
    /// entry under the task's goal contract).
    #[arg(long, default_value = "passes")]
    pub schema: crate::feature_list::ListSchema,
    /// What the harness does after a session whose exit check fails: `off` (record it)
    /// or `revert` (reset the work directory to the last commit that passed), as the
    /// arm key `exit_check`.
    #[arg(long, default_value = "off", value_parser = parse_exit_check)]
    pub exit_check: crate::suite::ExitCheck,
    /// Who owns the list's flags, as the arm key `ledger`: `memo` (the recorded agent's
    /// writes alone) or `gate` (after each session the harness rewrites every entry's
    /// `passes`, or `status`, from what it verified, as a gated arm's trial did).
    #[arg(long, default_value = "memo", value_parser = parse_ledger)]
    pub ledger: crate::suite::Ledger,
    /// Most tokens one recorded session may use (its `usage` line): a session using more
    /// is recorded `out_of_budget` and `over_budget`, as the arm key `session_tokens`
    /// [default: 0, no limit].
    #[arg(long, default_value_t = 0)]
    pub session_tokens: u64,
    /// What each trial starts from: `list` (the task's repository with the canonical
    /// list written and committed), `repo` (the repository alone, as a suite's trial
    /// starts: the agent writes the list), or `initializer` (the same, and each trace's
    /// first session is the initializer session)
    #[arg(long, value_enum, default_value_t = crate::runner::ReplayStart::List)]
    pub start: crate::runner::ReplayStart,
    /// Arm names: once (every input is one arm) or once per input, in order
    /// [default: a directory's name; `replay` for trace files].
    #[arg(long)]
    pub arm: Vec<String>,
    /// Results directory [default: results/replay/<run-id>].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Keep the work directory of a single-trace replay and print where it is.
    #[arg(long)]
    pub keep_work: bool,
    /// Write a git bundle of every trial to repos/<trial_id>.bundle: one commit per
    /// session, made by the harness from the trees it observed.
    #[arg(long)]
    pub keep_repos: bool,
    /// Run the traces' `run` actions and the verify commands on the host (without
    /// network where the machine allows) when no sandbox can be made here; recorded in
    /// the manifest. Without it, traces with `run` actions are refused where no sandbox
    /// works.
    #[arg(long)]
    pub unsandboxed: bool,
    /// Trials at once [default: min(4, cores)].
    #[arg(long, value_parser = parse_jobs)]
    pub jobs: Option<usize>,
    /// No progress bars.
    #[arg(long, short)]
    pub quiet: bool,
    /// With several traces: print all of summary.md (every table) at the end instead of
    /// the verdict and where the rest is.
    #[arg(long)]
    pub full: bool,
}

/// Arguments of `loopbench import`: a subcommand that names the format, or the files
/// alone with `--format` (default `auto`: the format is detected and named).
#[derive(Debug, clap::Args)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct ImportArgs {
    /// The transcript form.
    #[command(subcommand)]
    pub command: Option<ImportCommand>,
    /// The transcripts' format; `auto` tells it from the files' first lines and says
    /// which it found.
    #[arg(long, value_enum, default_value_t = ImportFormat::Auto)]
    pub format: ImportFormat,
    /// Inputs and output, when no subcommand names the format.
    #[command(flatten)]
    pub files: ImportFiles,
}

/// `--format` of `loopbench import`: `auto`, or one of the importers' names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportFormat {
    /// Detect it from the files (every input must be of one format).
    Auto,
    /// The format named.
    Named(Format),
}

impl clap::ValueEnum for ImportFormat {
    fn value_variants<'a>() -> &'a [Self] {
        static VARIANTS: std::sync::LazyLock<Vec<ImportFormat>> = std::sync::LazyLock::new(|| {
            std::iter::once(ImportFormat::Auto)
                .chain(Format::all().map(ImportFormat::Named))
                .collect()
        });
        &VARIANTS
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(match self {
            ImportFormat::Auto => clap::builder::PossibleValue::new("auto")
                .help("Detect it from the files (every input must be of one format)"),
            ImportFormat::Named(format) => {
                clap::builder::PossibleValue::new(format.name()).help(format.importer().summary)
            }
        })
    }
}

/// The subcommand of `loopbench import` that names the format: one per importer, its
/// help and examples the importer's.
#[derive(Debug)]
pub struct ImportCommand {
    /// The format the subcommand names.
    pub format: Format,
    /// Its inputs and output.
    pub files: ImportFiles,
}

impl clap::FromArgMatches for ImportCommand {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let Some((name, sub)) = matches.subcommand() else {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::MissingSubcommand,
                "a format to import is required",
            ));
        };
        let Some(format) = Format::named(name) else {
            return Err(clap::Error::raw(
                clap::error::ErrorKind::InvalidSubcommand,
                format!("'{name}' is not a format loopbench imports"),
            ));
        };
        Ok(ImportCommand {
            format,
            files: ImportFiles::from_arg_matches(sub)?,
        })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = ImportCommand::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Subcommand for ImportCommand {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        Format::all().fold(cmd, |cmd, format| {
            let importer = format.importer();
            cmd.subcommand(
                ImportFiles::augment_args(clap::Command::new(importer.name))
                    .about(importer.about)
                    .after_help(importer.examples),
            )
        })
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        ImportCommand::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        Format::named(name).is_some()
    }
}

/// Inputs and output of an import.
#[derive(Debug, clap::Args)]
pub struct ImportFiles {
    /// Transcript files or directories.
    #[arg(required = true, value_name = "PATH")]
    pub inputs: Vec<PathBuf>,
    /// The recording machine's project directory that absolute paths are made relative
    /// to [default: the transcript's cwd].
    #[arg(long)]
    pub root: Option<PathBuf>,
    /// Write the trace here instead of stdout.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Arguments of `loopbench usage`.
#[derive(Debug, clap::Args)]
pub struct UsageArgs {
    /// The CLI whose output it is.
    #[arg(value_enum)]
    pub format: crate::agent::command::cli_usage::CliFormat,
    /// The captured stdout (aider: stdout and stderr).
    pub capture: PathBuf,
    /// aider-analytics: aider's printed output too, for the provider exception that
    /// ended the session (the analytics log does not record it).
    #[arg(long, value_name = "CAPTURE")]
    pub printed: Option<PathBuf>,
}

/// Arguments of `loopbench sim-agent`.
#[derive(Debug, clap::Args)]
pub struct SimAgentArgs {
    /// The suite whose arm and task the session belongs to (settings and gold files).
    #[arg(long)]
    pub suite: PathBuf,
    /// The arm whose settings to follow [default: $LOOPBENCH_ARM].
    #[arg(long)]
    pub arm: Option<String>,
    /// The sim behaviour profile.
    #[arg(long, default_value = "calibrated")]
    pub profile: String,
}

fn parse_format(s: &str) -> std::result::Result<ListFormat, String> {
    s.parse()
}

fn parse_ledger(s: &str) -> std::result::Result<crate::suite::Ledger, String> {
    crate::suite::Ledger::from_word(s).ok_or_else(|| format!("expected memo or gate, got '{s}'"))
}

fn parse_exit_check(s: &str) -> std::result::Result<crate::suite::ExitCheck, String> {
    crate::suite::ExitCheck::from_word(s)
        .ok_or_else(|| format!("expected off or revert, got '{s}'"))
}

/// `--jobs N`: a whole number of at least 1 (0 jobs would run nothing).
fn parse_jobs(text: &str) -> std::result::Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(n) => Ok(n),
        Err(_) => Err(format!(
            "expected a whole number of at least 1, got '{text}'"
        )),
    }
}

/// Arguments of `loopbench mock-model`.
#[derive(Debug, clap::Args)]
pub struct MockModelArgs {
    /// The scenario: a trace-format JSONL file saying what the model does per session.
    #[arg(long)]
    pub scenario: PathBuf,
    /// The session of the scenario to serve.
    #[arg(long)]
    pub session: u32,
    /// The attempt of the trial being served (from 1): a scripted fault may apply in
    /// some attempts only.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub attempt: u32,
    /// Append one JSON line per answer served (and the session's totals) to this file.
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Keep every request's head and body in this directory (to read what a CLI sends).
    #[arg(long)]
    pub requests: Option<PathBuf>,
    /// HOME of the agent command (its config and transcripts go there).
    #[arg(long)]
    pub home: Option<PathBuf>,
    /// Port on 127.0.0.1; 0 picks a free one.
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// The agent command, run against the server; without one, serve until Ctrl-C.
    #[arg(last = true, allow_hyphen_values = true)]
    pub command: Vec<String>,
}

/// The names of `--arms a,b`, trimmed, empty names dropped; naming none is bad input.
pub(crate) fn arm_names(list: &str) -> Result<Vec<&str>> {
    let names: Vec<&str> = list
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .collect();
    if names.is_empty() {
        return Err(Error::BadInput("--arms: name at least one arm".into()));
    }
    Ok(names)
}
