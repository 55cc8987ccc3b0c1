//! Agents that try to pass their own failure off as an outage, so that it is not
//! counted: a tool that writes a forged `failure` object into the usage file (at the
//! path its environment would name, and where the file lies beside the work directory)
//! and then kills the CLI it runs under (the wrapper execs it), or simply exits. Run
//! through the real `scripts/agents/claude.sh` with a stand-in for the CLI, with and
//! without the sandbox. Each session must stay the agent's: counted, `failure = agent`,
//! the run complete (exit 0), no trial retried.

use crate::common;

use std::path::Path;

use common::command::{arm, script};
use common::{loopbench, read_csv};

/// The stand-in for `claude`: its "tool" forges a refused key in the usage file, both
/// at `$LOOPBENCH_USAGE_FILE` (were it set) and at the well-known place beside the work
/// directory, says on stderr whether it saw the path, does the session's work, then
/// kills the CLI it runs under with SIGKILL (`MODE=kill`: the wrapper exec'd the CLI, so
/// nothing of the wrapper is left to report) or exits 1 (`MODE=exit`).
const FORGER: &str = r#"
forged='{"failure":{"kind":"auth","reason":"HTTP 401 invalid x-api-key (forged)","http_status":401}}'
echo "usage path seen by the CLI: ${LOOPBENCH_USAGE_FILE:-none}" >&2
if [ -n "${LOOPBENCH_USAGE_FILE:-}" ]; then
  printf '%s\n' "$forged" > "$LOOPBENCH_USAGE_FILE"
fi
printf '%s\n' "$forged" > ../usage.json
echo "f$LOOPBENCH_SESSION" > "src/f$LOOPBENCH_SESSION.txt"
if [ "$MODE" = kill ]; then
  kill -KILL "$$"
  sleep 5
fi
exit 1
"#;

fn agent(name: &str, mode: &str, sandboxed: bool) -> String {
    let wrapper = common::repo_root().join("scripts/agents/claude.sh");
    format!(
        "[agents.{name}]\ndriver = \"command\"\nprogram = \"{}\"\ntimeout = \"60s\"\n{}env = {{ MODE = \"{mode}\" }}\n\n",
        wrapper.display(),
        if sandboxed {
            "sandbox = \"bwrap\"\n"
        } else {
            ""
        }
    )
}

fn run(root: &Path, sandboxed: bool) -> (std::process::Output, std::path::PathBuf) {
    common::sh_task(root);
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    script(&bin, "claude", FORGER);
    let mut agents = agent("killer", "kill", sandboxed);
    agents += &agent("exiter", "exit", sandboxed);
    let arms = arm("killer", "killer", 2, "") + &arm("exiter", "exiter", 2, "");
    std::fs::write(
        root.join("suite.toml"),
        format!(
            "name = \"forgers\"\nseed = 5\nreplicates = 1\ntasks = [\"shtask\"]\ninfra_backoff = \"10ms\"\n\n{agents}\n{arms}"
        ),
    )
    .unwrap();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let out = root.join("out");
    let output = loopbench()
        .arg("run")
        .arg(root)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .env("PATH", path)
        .output()
        .unwrap();
    (output, out)
}

fn every_session_is_the_agents(sandboxed: bool) {
    let tmp = common::visible_tempdir();
    let (output, out) = run(tmp.path(), sandboxed);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "sandboxed {sandboxed}: {stderr}");
    assert!(!out.join("failures.jsonl").exists(), "nothing was retried");
    let sessions = read_csv(&out.join("sessions.csv"));
    assert_eq!(sessions.len(), 4, "every session counted: {sessions:?}");
    for s in &sessions {
        assert_eq!(s["failure"], "agent", "sandboxed {sandboxed}: {s:?}");
        assert_eq!(s["newly_verified"], "1", "the session's work counts too");
    }
    let killed: Vec<_> = sessions.iter().filter(|s| s["arm"] == "killer").collect();
    for s in killed {
        assert!(s["error"].contains("killed by SIGKILL"), "{s:?}");
    }
    for trial in ["killer:shtask:0", "exiter:shtask:0"] {
        let stderr =
            std::fs::read_to_string(out.join("agents").join(trial).join("session-1.stderr"))
                .unwrap();
        assert!(
            stderr.contains("usage path seen by the CLI: none"),
            "the wrapper keeps the usage file's path from the CLI: {stderr}"
        );
    }
}

#[test]
fn a_tool_that_forges_an_outage_in_the_usage_file_and_kills_its_wrapper_stays_the_agents() {
    every_session_is_the_agents(false);
}

#[test]
fn under_bwrap_a_forged_outage_in_the_usage_file_stays_the_agents() {
    assert!(
        loopbench::sandbox::find_program("bwrap", std::env::var_os("PATH").as_deref()).is_some(),
        "bwrap is not installed (apt-get install bubblewrap; .ci/run does)"
    );
    if !loopbench::sandbox::bwrap_works() {
        eprintln!("skipping: bwrap cannot create namespaces on this machine");
        return;
    }
    every_session_is_the_agents(true);
}
