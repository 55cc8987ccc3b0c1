//! A command agent's session in a bubblewrap sandbox with a cgroup of its own (a root
//! harness, where the machine makes cgroups) runs without `loopbench supervise` around
//! it: the sandbox's PID namespace and its cgroup hold everything it starts, and the
//! harness ends the cgroup, and waits for it to be empty, before the session is over.
//! However the session ends (the agent exits, its time runs out, the run is stopped
//! twice), nothing the agent started outlives it, even a process that left its process
//! group.

use crate::common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::command::{arm, live_processes_with_arg, run_ok, script, sh_suite};
use common::{require_bwrap, visible_tempdir};
use loopbench::sandbox::Enforcement;

/// Whether sessions here run contained: bwrap, a root harness and cgroups.
fn contained_here() -> bool {
    if !require_bwrap() {
        return false;
    }
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipping: only a root harness is sure to make cgroups");
        return false;
    }
    let enforcement = Enforcement::here();
    if matches!(enforcement, Enforcement::None(_)) {
        eprintln!("skipping: {}", enforcement.describe());
        return false;
    }
    true
}

fn agents(program: &str, extra: &str) -> String {
    format!(
        "[agents.boxed]\ndriver = \"command\"\nprogram = \"./{program}\"\nsandbox = \"bwrap\"\n{extra}\n"
    )
}

/// Session 1 leaves a process that left its group writing into the work directory, and
/// a sleeping one; session 2 looks whether the writer still writes.
#[test]
fn what_an_agent_leaves_is_gone_before_its_next_session() {
    if !contained_here() {
        return;
    }
    let tmp = visible_tempdir();
    let marker = common::command::unique_sleep_seconds();
    script(
        tmp.path(),
        "leave.sh",
        r#"
if [ "$LOOPBENCH_SESSION" = 1 ]; then
  (setsid sh -c 'while :; do echo x >> grow.txt; sleep 0.01; done' > /dev/null 2>&1 < /dev/null &)
  setsid sleep "$MARKER" > /dev/null 2>&1 < /dev/null &
  while [ ! -s grow.txt ]; do sleep 0.01; done
  exit 0
fi
a=$(wc -l < grow.txt); sleep 0.5; b=$(wc -l < grow.txt)
if [ "$a" = "$b" ]; then echo "writer: gone"; else echo "writer: alive ($a, $b)"; fi
"#,
    );
    let extra = format!("env = {{ MARKER = \"{marker}\" }}");
    let suite = sh_suite(
        tmp.path(),
        &agents("leave.sh", &extra),
        &arm("boxed", "boxed", 2, ""),
    );
    let ran = run_ok(&suite, &tmp.path().join("out"));
    assert_eq!(ran.sessions.len(), 2, "{}", ran.stderr);
    assert_eq!(
        ran.sessions[0]["outcome"], "completed",
        "{:?}",
        ran.sessions[0]
    );
    let said = ran.capture("boxed:shtask:0", 2, "stdout");
    assert_eq!(said, "writer: gone\n");
    assert!(live_processes_with_arg(&marker).is_empty());
}

/// An agent that ignores SIGTERM past its time limit, with a process that left its
/// group: the session times out, and neither is left.
#[test]
fn an_agent_past_its_time_is_ended_with_everything_it_started() {
    if !contained_here() {
        return;
    }
    let tmp = visible_tempdir();
    let marker = common::command::unique_sleep_seconds();
    script(
        tmp.path(),
        "hang.sh",
        "trap '' TERM\nsetsid sleep \"$MARKER\" > /dev/null 2>&1 < /dev/null &\nwhile :; do sleep 0.1; done\n",
    );
    let extra = format!("timeout = \"1s\"\nenv = {{ MARKER = \"{marker}\" }}");
    let suite = sh_suite(
        tmp.path(),
        &agents("hang.sh", &extra),
        &arm("boxed", "boxed", 1, ""),
    );
    let ran = run_ok(&suite, &tmp.path().join("out"));
    assert_eq!(
        ran.sessions[0]["outcome"], "timeout",
        "{:?}",
        ran.sessions[0]
    );
    assert!(live_processes_with_arg(&marker).is_empty());
}

/// A run stopped while its contained agent sleeps, and stopped again at once: it exits
/// 3 and leaves no process of the agent.
#[test]
fn a_run_stopped_twice_leaves_no_contained_agent_behind() {
    if !contained_here() {
        return;
    }
    let tmp = visible_tempdir();
    let shared = tmp.path().join("shared");
    std::fs::create_dir(&shared).unwrap();
    loopbench::sandbox::SandboxUser::default()
        .hand_over(&[&shared])
        .unwrap();
    let marker = common::command::unique_sleep_seconds();
    script(
        tmp.path(),
        "sleepy.sh",
        "setsid sleep \"$MARKER\" > /dev/null 2>&1 < /dev/null &\ntouch \"$SHARED/started\"\nsleep \"$MARKER\"\n",
    );
    let extra = format!(
        "sandbox_rw = [\"{}\"]\nenv = {{ MARKER = \"{marker}\", SHARED = \"{}\" }}",
        shared.display(),
        shared.display()
    );
    let suite = sh_suite(
        tmp.path(),
        &agents("sleepy.sh", &extra),
        &arm("boxed", "boxed", 1, ""),
    );
    let stderr = tmp.path().join("stderr.txt");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_loopbench"))
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(tmp.path().join("out"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let said = || std::fs::read_to_string(&stderr).unwrap_or_default();
    let wait_for = |what: &str, done: &dyn Fn() -> bool, child: &mut std::process::Child| {
        let deadline = Instant::now() + Duration::from_secs(120);
        while !done() {
            if let Some(status) = child.try_wait().unwrap() {
                panic!("loopbench ended ({status}) before {what}: {}", said());
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("waited for {what}: {}", said());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    wait_for("the agent", &|| shared.join("started").exists(), &mut child);
    // The script's own sleep starts after it says it started, and the one it set off
    // may still be the shell it forked: both, before the run is stopped.
    wait_for(
        "both of the agent's sleeps",
        &|| live_processes_with_arg(&marker).len() == 2,
        &mut child,
    );
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    wait_for(
        "the stopping notice",
        &|| said().contains("SIGTERM: stopping"),
        &mut child,
    );
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGHUP).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(3), "{}", said());
    let deadline = Instant::now() + Duration::from_secs(5);
    while !live_processes_with_arg(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the agent outlived the run: {:?}",
            live_processes_with_arg(&marker)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
