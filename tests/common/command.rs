//! Helpers for command-agent tests: suites around the fast [`super::sh_task`] fixture
//! whose agents are small shell scripts, and a look at the process table.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::{loopbench, read_csv};

/// Writes an executable `#!/bin/sh` script `name` in `dir` with `body`.
pub fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// A suite in `root` over the [`super::sh_task`] fixture with the given `[agents.*]`
/// tables and `[[arm]]` tables (TOML text). Returns the suite directory.
pub fn sh_suite(root: &Path, agents: &str, arms: &str) -> PathBuf {
    super::sh_task(root);
    let text = format!(
        "name = \"cmd\"\nseed = 5\nreplicates = 1\ntasks = [\"shtask\"]\n\n{agents}\n{arms}"
    );
    std::fs::write(root.join("suite.toml"), text).unwrap();
    root.to_path_buf()
}

/// One `[[arm]]` table: `name` on `agent`, JSON list, no initializer, `sessions`
/// coding sessions, plus any `extra` lines.
pub fn arm(name: &str, agent: &str, sessions: u32, extra: &str) -> String {
    format!(
        "[[arm]]\nname = \"{name}\"\nagent = \"{agent}\"\nlist_format = \"json\"\ninitializer = false\nmax_sessions = {sessions}\n{extra}\n"
    )
}

/// What a run wrote.
pub struct Ran {
    /// The results directory.
    pub out: PathBuf,
    /// `sessions.csv` rows.
    pub sessions: Vec<BTreeMap<String, String>>,
    /// `trials.csv` rows.
    pub trials: Vec<BTreeMap<String, String>>,
    /// The harness's stderr.
    pub stderr: String,
}

impl Ran {
    /// The rows of `sessions.csv` of one arm.
    pub fn arm(&self, arm: &str) -> Vec<&BTreeMap<String, String>> {
        self.sessions.iter().filter(|s| s["arm"] == arm).collect()
    }

    /// A captured output file of a session: `agents/<trial_id>/session-<n>.<stream>`.
    pub fn capture(&self, trial_id: &str, session: u32, stream: &str) -> String {
        let path = self
            .out
            .join("agents")
            .join(trial_id)
            .join(format!("session-{session}.{stream}"));
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}

/// Runs `suite` into `out` (one job, quiet) and asserts exit 0.
pub fn run_ok(suite: &Path, out: &Path) -> Ran {
    let output = loopbench()
        .arg("run")
        .arg(suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "run failed: {stderr}");
    Ran {
        out: out.to_path_buf(),
        sessions: read_csv(&out.join("sessions.csv")),
        trials: read_csv(&out.join("trials.csv")),
        stderr,
    }
}

/// Runs `suite` into `out` like [`run_ok`], watching the harness's peak resident memory
/// (`VmHWM`) while it runs; returns what it wrote and that peak in KiB. The last moments
/// before exit can be missed, so the peak may be an underestimate, never an overestimate.
pub fn run_ok_measured(suite: &Path, out: &Path) -> (Ran, u64) {
    run_ok_measured_with(suite, out, &[])
}

/// [`run_ok_measured`] with these variables added to the harness's environment.
pub fn run_ok_measured_with(suite: &Path, out: &Path, env: &[(&str, &str)]) -> (Ran, u64) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_loopbench"))
        .arg("run")
        .arg(suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(out)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak_kib = 0;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        let status = std::fs::read_to_string(&status_file).unwrap_or_default();
        let hwm = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        peak_kib = peak_kib.max(hwm.unwrap_or(0));
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(status.success(), "run failed: {stderr}");
    let ran = Ran {
        out: out.to_path_buf(),
        sessions: read_csv(&out.join("sessions.csv")),
        trials: read_csv(&out.join("trials.csv")),
        stderr,
    };
    (ran, peak_kib)
}

/// Pids of live (not zombie) processes whose command line contains `marker` as one
/// whole argument.
pub fn live_processes_with_arg(marker: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if pid == me {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if !cmdline
            .split(|b| *b == 0)
            .any(|arg| arg == marker.as_bytes())
        {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z'));
        if !zombie {
            pids.push(pid);
        }
    }
    pids
}

/// A number no other test or process uses as a `sleep` duration.
pub fn unique_sleep_seconds() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .subsec_nanos();
    format!("3600.{}{nanos:09}", std::process::id())
}
