//! Shared helpers of the integration tests: a fast POSIX-sh task fixture, a trace
//! builder, and one way to run the binary and read what it wrote.
#![allow(dead_code)]

pub mod boundary;
pub mod clis;
pub mod command;
pub mod csvgen;
pub mod docs;
pub mod evidence;
pub mod pytask;
pub mod python;
pub mod shared_run;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use loopbench::feature_list::{Entry, ListFormat, ListSchema, render};
use serde_json::{Value, json};

/// The `loopbench` binary under test.
pub fn loopbench() -> Command {
    assert_cmd::cargo::cargo_bin_cmd!("loopbench")
}

/// `loopbench validate SUITE`, or `loopbench run SUITE --out OUT`: the two commands
/// that refuse a suite before anything runs, for a test to hold both to one refusal.
pub fn validate_or_run(command: &str, suite: &Path, out: &Path) -> Command {
    let mut cmd = loopbench();
    cmd.arg(command).arg(suite);
    if command == "run" {
        cmd.arg("--out").arg(out);
    }
    cmd
}

/// The `loopbench` binary under test run by `sh` with its umask set to `umask` (octal),
/// so that the modes of what it writes do not depend on the machine's umask.
pub fn loopbench_with_umask(umask: &str) -> Command {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "umask \"$1\" && shift && exec \"$@\"", "sh", umask])
        .arg(env!("CARGO_BIN_EXE_loopbench"));
    cmd
}

/// The repository root (for shipped suites).
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A task of three features checked by POSIX sh, so that tests run fast:
/// feature `Fi` passes when `src/fi.txt` exists, checked by `tests/check_Fi.sh`, which
/// holds two `# test` lines (the count pattern). `oracle/tests` holds pristine copies.
pub fn sh_task(root: &Path) -> PathBuf {
    let dir = root.join("shtask");
    for sub in ["repo/src", "repo/tests", "oracle/tests"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    std::fs::write(dir.join("repo/src/README"), "source goes here\n").unwrap();
    let mut toml = String::from(
        "name = \"shtask\"\ngoal = \"three files\"\ntests = { glob = \"tests/**/*.sh\", count_pattern = '^# test' }\n",
    );
    for (i, id) in ["F1", "F2", "F3"].iter().enumerate() {
        let n = i + 1;
        let check = format!("# test: f{n} exists\n# test: f{n} is a file\ntest -f src/f{n}.txt\n");
        std::fs::write(dir.join(format!("repo/tests/check_{id}.sh")), &check).unwrap();
        std::fs::write(dir.join(format!("oracle/tests/check_{id}.sh")), &check).unwrap();
        toml += &format!(
            "\n[[feature]]\nid = \"{id}\"\ncategory = \"functional\"\ndescription = \"file {n} exists\"\nsteps = [\"create src/f{n}.txt\", \"look at it\"]\nverify = \"sh tests/check_{id}.sh\"\n"
        );
    }
    std::fs::write(dir.join("task.toml"), toml).unwrap();
    dir
}

/// The canonical entries of [`sh_task`], none passing.
pub fn sh_entries() -> Vec<Entry> {
    (1..=3)
        .map(|n| Entry {
            id: format!("F{n}"),
            category: "functional".into(),
            description: format!("file {n} exists"),
            steps: vec![format!("create src/f{n}.txt"), "look at it".into()],
            passes: false,
            status: None,
            notes: String::new(),
        })
        .collect()
}

/// The list file of `format` with `entries`, as an action writing it whole.
pub fn write_list(format: ListFormat, entries: &[Entry]) -> Value {
    json!({"op": "write", "path": format.file_name(), "content": render(format, entries)})
}

/// `entries` with `id` claiming passes.
pub fn claim(mut entries: Vec<Entry>, id: &str) -> Vec<Entry> {
    for e in &mut entries {
        if e.id == id {
            e.passes = true;
        }
    }
    entries
}

/// Builds a trace line by line.
#[derive(Default)]
pub struct Trace {
    lines: Vec<Value>,
}

impl Trace {
    pub fn new() -> Trace {
        Trace::default()
    }
    pub fn session(mut self, n: u32) -> Trace {
        self.lines.push(json!({"op": "session", "n": n}));
        self
    }
    pub fn op(mut self, line: Value) -> Trace {
        self.lines.push(line);
        self
    }
    pub fn write(self, path: &str, content: &str) -> Trace {
        self.op(json!({"op": "write", "path": path, "content": content}))
    }
    pub fn delete(self, path: &str) -> Trace {
        self.op(json!({"op": "delete", "path": path}))
    }
    pub fn run(self, cmd: &str) -> Trace {
        self.op(json!({"op": "run", "cmd": cmd}))
    }
    pub fn commit(self) -> Trace {
        self.run("git add -A && git commit -qm work")
    }
    pub fn end(self, status: &str) -> Trace {
        self.op(json!({"op": "end", "status": status}))
    }
    pub fn text(&self) -> String {
        self.lines.iter().map(|l| format!("{l}\n")).collect()
    }
    pub fn save(&self, dir: &Path) -> PathBuf {
        let path = dir.join("trace.jsonl");
        std::fs::write(&path, self.text()).unwrap();
        path
    }
}

/// What one replay wrote.
pub struct Replayed {
    pub out: PathBuf,
    pub sessions: Vec<Value>,
    pub trials: Vec<Value>,
}

impl Replayed {
    /// Field `field` of session `n` (1-based position in the trace).
    pub fn s(&self, n: usize, field: &str) -> Value {
        self.sessions[n - 1]
            .get(field)
            .cloned()
            .unwrap_or_else(|| panic!("session record has no field {field}"))
    }
}

/// Replays `trace` against the [`sh_task`] fixture in `format`; asserts exit 0.
pub fn replay_sh(trace: &Trace, format: ListFormat) -> Replayed {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    replay_ok(&trace.save(tmp.path()), &task, format, &tmp.keep())
}

/// The sessions a replay of `trace` over the sh task wrote, under `format` and `schema`
/// (run actions unsandboxed, so that they behave alike on every machine), and the
/// directory that holds the results.
pub fn replay_sh_with_schema(
    trace: &Trace,
    format: ListFormat,
    schema: ListSchema,
) -> (Vec<Value>, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let task = sh_task(tmp.path());
    let out = tmp.path().join("results");
    loopbench()
        .arg("replay")
        .arg(trace.save(tmp.path()))
        .arg("--task")
        .arg(&task)
        .args(["--format", format.as_str(), "--schema", schema.as_str()])
        .args(["--quiet", "--unsandboxed", "--out"])
        .arg(&out)
        .assert()
        .success();
    (read_jsonl(&out.join("sessions.jsonl")), tmp)
}

/// Replays a saved trace and reads its records; asserts exit 0.
pub fn replay_ok(trace: &Path, task: &Path, format: ListFormat, scratch: &Path) -> Replayed {
    let out = scratch.join("results");
    loopbench()
        .args(["replay"])
        .arg(trace)
        .arg("--task")
        .arg(task)
        .args(["--format", format.as_str(), "--out"])
        .arg(&out)
        .assert()
        .success();
    Replayed {
        sessions: read_jsonl(&out.join("sessions.jsonl")),
        trials: read_jsonl(&out.join("trials.jsonl")),
        out,
    }
}

/// Replays, into `out`, one coding session over the [`sh_task`] fixture (written in
/// `tmp`) that claims F1 with nothing implemented: one premature claim, arm `replay`.
pub fn replay_premature_claim(tmp: &Path, out: &Path) {
    let task = sh_task(tmp);
    let list = "[{\"id\": \"F1\", \"passes\": true}, {\"id\": \"F2\"}, {\"id\": \"F3\"}]";
    let trace = Trace::new()
        .session(1)
        .write("feature_list.json", list)
        .commit()
        .end("completed");
    loopbench()
        .arg("replay")
        .arg(trace.save(tmp))
        .arg("--task")
        .arg(&task)
        .args(["--format", "json", "--quiet", "--out"])
        .arg(out)
        .assert()
        .success();
}

/// Every line of a JSONL file.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The lines of a trace that act or frame a session: without the `say`, `call` and
/// `output` lines an importer keeps for the session's trajectory, which replay never
/// applies (the tests of what an import applies compare these).
pub fn trace_actions(trace: &str) -> String {
    trace
        .lines()
        .filter(|line| {
            !["say", "call", "output"]
                .iter()
                .any(|op| line.starts_with(&format!(r#"{{"op":"{op}""#)))
        })
        .map(|line| format!("{line}\n"))
        .collect()
}

/// A CSV file as header-keyed rows.
pub fn read_csv(path: &Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// A temporary directory that a bwrap sandbox sees as it is: under the target
/// directory, unless that lies where the sandbox hides things (`/tmp`, `/dev/shm`, as
/// when the checkout itself is under /tmp), then under `/var/tmp`.
pub fn visible_tempdir() -> tempfile::TempDir {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let real = std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf());
    if real.starts_with("/tmp") || real.starts_with("/dev/shm") {
        tempfile::tempdir_in("/var/tmp").unwrap()
    } else {
        tempfile::tempdir_in(target).unwrap()
    }
}

/// Whether the sandbox tests can run: bwrap must be installed; where it cannot create
/// namespaces they skip (false), except under `CI=true`, where they fail; a sandbox
/// that is not confined fails them everywhere (it would make them pass without trying).
pub fn require_bwrap() -> bool {
    assert!(
        loopbench::sandbox::find_program("bwrap", std::env::var_os("PATH").as_deref()).is_some(),
        "bwrap is not installed (apt-get install bubblewrap; .ci/run does)"
    );
    if !loopbench::sandbox::bwrap_works() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: bwrap cannot create namespaces on this machine"
        );
        eprintln!("skipping: bwrap cannot create namespaces on this machine");
        return false;
    }
    // Namespaces work: a sandbox that is not confined is a failure, never a skip.
    assert_eq!(loopbench::sandbox::check_confined(), Ok(()));
    true
}

/// Asserts that loading the task in `dir` fails at line `line` of its task.toml with a
/// message containing `expected`, and that `check-task` says the same and exits 2.
/// `case` names the case in a failure.
/// The 1-based line of `file` that starts with `key`.
pub fn line_of(file: &Path, key: &str) -> usize {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .position(|l| l.starts_with(key))
        .unwrap()
        + 1
}

/// `loopbench validate SUITE` exits 2 naming the line of its `suite.toml` that starts
/// with `key`, and saying `expected`.
pub fn assert_validate_refuses_at(suite: &Path, key: &str, expected: &str) {
    let line = line_of(&suite.join("suite.toml"), key);
    loopbench()
        .arg("validate")
        .arg(suite)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(format!("suite.toml:{line}:")))
        .stderr(predicates::str::contains(expected));
}

pub fn assert_task_refused_at(dir: &Path, line: usize, expected: &str, case: usize) {
    let prefix = format!("{}:{line}:", dir.join("task.toml").display());
    let err = loopbench::suite::Task::load(dir).unwrap_err().to_string();
    assert!(
        err.starts_with(&prefix),
        "case {case}: {err} (expected {prefix})"
    );
    assert!(err.contains(expected), "case {case}: {err}");
    loopbench()
        .arg("check-task")
        .arg(dir)
        .assert()
        .code(2)
        .stderr(predicates::str::contains(prefix));
}
