//! The examples at the end of every subcommand's `--help`: real command lines that work
//! from the repository root, in an order in which each one's inputs exist (the paths
//! under `results/` are made by the examples before them). `tests/cli_examples.rs` runs
//! them in that order.

/// `loopbench run`.
pub const RUN: &str = "\
Examples:
  loopbench run suites/seed-replication    # the shipped suite, every arm, 20 replicates
  loopbench run suites/seed-replication --arms json,markdown --replicates 1 --out results/demo
  loopbench run suites/seed-replication --arms json,markdown --replicates 1 --shard 1/2 --out results/shard-1
  loopbench run suites/seed-replication --arms json,markdown --replicates 1 --shard 2/2 --out results/shard-2";

/// `loopbench resume`.
pub const RESUME: &str = "\
Examples:
  loopbench resume results/demo --jobs 2    # after Ctrl-C or a crash: runs what is missing";

/// `loopbench merge`.
pub const MERGE: &str = "\
Examples:
  loopbench merge results/shard-1 results/shard-2 --out results/merged";

/// `loopbench validate`.
pub const VALIDATE: &str = "\
Examples:
  loopbench validate suites/seed-replication";

/// `loopbench check-task`.
pub const CHECK_TASK: &str = "\
Examples:
  loopbench check-task suites/examples/tasks/latefees
  loopbench check-task suites/seed-replication --jobs 2 --format json
  loopbench validate suites/seed-replication --checks";

/// `loopbench replay`.
pub const REPLAY: &str = "\
Examples:
  loopbench replay suites/examples/traces/latefees-every-metric.jsonl --task suites/examples/tasks/latefees --format json --out results/example
  loopbench replay suites/examples/traces/latefees-every-metric.jsonl --task suites/examples/tasks/latefees --format markdown --schema status --keep-repos --out results/example-md";

/// `loopbench import`.
pub const IMPORT: &str = "\
Examples:
  loopbench import tests/data/codex/latefees --out latefees-codex.jsonl   # says which format it found
  loopbench import claude-code tests/data/claude-code/latefees --root /home/dev/latefees --out latefees.jsonl
  loopbench import stream-json tests/data/stream-json/latefees > latefees-stream.jsonl
  loopbench import aider tests/data/aider/latefees/.aider.chat.history.md > latefees-aider.jsonl";

/// `loopbench report`.
pub const REPORT: &str = "\
Examples:
  loopbench report results/demo               # the verdict, and where the rest is
  loopbench report results/demo --full --html # every table; also writes report.html
  loopbench report results/demo --baseline markdown --format csv";

/// `loopbench show`.
pub const SHOW: &str = "\
Examples:
  loopbench show results/example                     # one line per trial
  loopbench show results/example replay:latefees:0   # its sessions and their evidence";

/// `loopbench export`.
pub const EXPORT: &str = "\
Examples:
  loopbench export results/demo --to inspect                # into results/demo/exports/inspect
  loopbench export results/demo --to atif --out demo-atif   # one ATIF file per session";

/// `loopbench compare`.
pub const COMPARE: &str = "\
Examples:
  loopbench compare results/demo results/merged --metric premature_done --max-increase 0.02
  loopbench compare results/demo results/merged --metric premature_done --metric test_removal --format junit > compare.xml
  loopbench compare results/demo results/merged --metric premature_done --arms json";

/// `loopbench weekly`.
pub const WEEKLY: &str = "\
Examples:
  loopbench weekly results --since 12weeks --out weekly
  loopbench weekly results --html
  loopbench weekly results --format json > weekly.json";

/// `loopbench power`.
pub const POWER: &str = "\
Examples:
  loopbench power --p1 0.183 --p2 0.092
  loopbench power --p1 0.183 --p2 0.092 --alpha 0.01 --power 0.9 --sequential --looks 4
  loopbench power --p1 0.183 --p2 0.092 --sequential --format json";

/// `loopbench usage`.
pub const USAGE: &str = "\
Examples:
  loopbench usage claude tests/data/stream-json/latefees/session-1.stdout";

/// `loopbench sim-agent`.
pub const SIM_AGENT: &str = "\
Examples (an agent of a suite.toml that runs the simulated agent as a process):
  [agents.sim-process]
  driver = \"command\"
  program = \"loopbench\"
  args = [\"sim-agent\", \"--suite\", \"/path/to/this/suite\"]";

/// `loopbench mock-model`.
pub const MOCK_MODEL: &str = "\
Examples:
  loopbench mock-model --scenario suites/real-cli-dryrun/scenario.jsonl --session 1 -- sh -c 'echo \"$ANTHROPIC_BASE_URL\"'
  loopbench mock-model --scenario suites/real-cli-dryrun/scenario.jsonl --session 1 --log served.jsonl -- scripts/agents/claude.sh --model claude-sonnet-4-5";

/// `loopbench completions`.
pub const COMPLETIONS: &str = "\
Examples:
  loopbench completions bash > loopbench.bash   # then: source loopbench.bash
  loopbench completions zsh > _loopbench        # into a directory of $fpath
  loopbench completions fish > loopbench.fish   # into ~/.config/fish/completions/";

/// `loopbench man`.
pub const MAN: &str = "\
Examples:
  loopbench man > loopbench.1 && man -l loopbench.1
  loopbench man --out man/man1                  # then: MANPATH=man: man loopbench-run";
