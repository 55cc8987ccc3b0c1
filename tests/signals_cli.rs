//! SIGTERM and SIGHUP (what `kill`, `timeout`, Slurm, Kubernetes and a closed terminal
//! send) stop a run like Ctrl-C: no new trials, agents in flight stopped, exit 3, and
//! `resume` finishes the run.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use common::command::{arm, script, sh_suite};
use common::{loopbench, read_csv};
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

/// A `loopbench run` whose first agent session is sleeping.
struct SlowRun {
    child: Child,
    root: PathBuf,
    out: PathBuf,
    stderr: PathBuf,
}

impl SlowRun {
    /// Two trials of two sessions each, one at a time. The first session ever started
    /// records its pid and its `sleep`'s pid and sleeps 30 s; every later one ends at
    /// once. Returns when the sleep has started.
    fn start(root: &Path) -> SlowRun {
        script(
            root,
            "agent.sh",
            &format!(
                "if [ ! -e '{r}/slept' ]; then\n  touch '{r}/slept'\n  sleep 30 &\n  echo $! > '{r}/sleep.pid.tmp' && mv '{r}/sleep.pid.tmp' '{r}/sleep.pid'\n  echo $$ > '{r}/agent.pid.tmp' && mv '{r}/agent.pid.tmp' '{r}/agent.pid'\n  wait\nfi\nexit 0\n",
                r = root.display()
            ),
        );
        let agents = "[agents.slow]\ndriver = \"command\"\nprogram = \"./agent.sh\"\n";
        let suite = sh_suite(root, agents, &arm("slow", "slow", 2, ""));
        let out = root.join("out");
        let stderr = root.join("stderr.txt");
        let child = std::process::Command::new(assert_cmd::cargo::cargo_bin!("loopbench"))
            .arg("run")
            .arg(&suite)
            .args(["--quiet", "--jobs", "1", "--replicates", "2", "--out"])
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&stderr).unwrap())
            .spawn()
            .unwrap();
        let mut run = SlowRun {
            child,
            root: root.to_path_buf(),
            out,
            stderr,
        };
        run.wait_until("the agent to start", Duration::from_secs(120), |r| {
            r.root.join("agent.pid").exists()
        });
        run
    }

    fn signal(&self, signal: Signal) {
        kill(Pid::from_raw(self.child.id() as i32), signal).unwrap();
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap()
    }

    /// The pids of the sleeping agent and of its `sleep`.
    fn agent_pids(&self) -> [i32; 2] {
        ["agent.pid", "sleep.pid"].map(|f| {
            std::fs::read_to_string(self.root.join(f))
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
    }

    fn wait_until(&mut self, what: &str, within: Duration, done: impl Fn(&SlowRun) -> bool) {
        let deadline = Instant::now() + within;
        while !done(self) {
            if let Some(status) = self.child.try_wait().unwrap() {
                panic!(
                    "loopbench ended ({status}) before {what}: {}",
                    self.stderr()
                );
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("waited {within:?} for {what}: {}", self.stderr());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn exit_within(&mut self, within: Duration) -> ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!(
                    "loopbench did not exit within {within:?}: {}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// Whether `pid` is a live process (a zombie is dead: it only waits to be reaped).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            stat.rsplit_once(") ")
                .map(|(_, rest)| !rest.starts_with('Z'))
        })
        .unwrap_or(false)
}

fn wait_gone(pids: [i32; 2]) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while pids.iter().any(|&p| alive(p)) {
        assert!(
            Instant::now() < deadline,
            "agent processes outlived the run: {:?}",
            pids.iter().filter(|&&p| alive(p)).collect::<Vec<_>>()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Stops a run with `signal` and checks what the user relies on afterwards.
fn stops_like_ctrl_c(signal: Signal, name: &str) {
    let tmp = tempfile::tempdir().unwrap();
    let mut run = SlowRun::start(tmp.path());
    let pids = run.agent_pids();
    assert!(pids.iter().all(|&p| alive(p)));
    run.signal(signal);
    // The agent gets the grace period (10 s), then SIGTERM.
    let status = run.exit_within(Duration::from_secs(60));
    let stderr = run.stderr();
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(stderr.contains(&format!("{name}: stopping")), "{stderr}");
    assert!(
        stderr.contains(&format!("loopbench resume {}", run.out.display())),
        "{stderr}"
    );
    wait_gone(pids);
    // No new trial was started and the interrupted one is not recorded as finished.
    assert_eq!(
        std::fs::read_to_string(run.out.join("trials.jsonl")).unwrap(),
        ""
    );

    loopbench()
        .args(["resume", "--quiet"])
        .arg(&run.out)
        .timeout(Duration::from_secs(120))
        .assert()
        .success();
    assert_eq!(read_csv(&run.out.join("trials.csv")).len(), 2);
    assert_eq!(read_csv(&run.out.join("sessions.csv")).len(), 4);
    assert_eq!(
        std::fs::read_to_string(run.out.join("sessions.jsonl"))
            .unwrap()
            .lines()
            .count(),
        4,
        "no session is lost or counted twice"
    );
}

#[test]
fn sigterm_stops_the_agents_exits_3_and_resume_finishes_the_run() {
    stops_like_ctrl_c(Signal::SIGTERM, "SIGTERM");
}

#[test]
fn sighup_stops_the_agents_exits_3_and_resume_finishes_the_run() {
    stops_like_ctrl_c(Signal::SIGHUP, "SIGHUP");
}

#[test]
fn a_second_signal_exits_at_once_with_3_and_leaves_no_agent_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let mut run = SlowRun::start(tmp.path());
    let pids = run.agent_pids();
    run.signal(Signal::SIGTERM);
    run.wait_until("the stopping notice", Duration::from_secs(30), |r| {
        r.stderr().contains("SIGTERM: stopping")
    });
    let sent = Instant::now();
    run.signal(Signal::SIGHUP);
    let status = run.exit_within(Duration::from_secs(30));
    assert_eq!(status.code(), Some(3), "{}", run.stderr());
    // Well within the 10 s the agents would have been given after one signal.
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    wait_gone(pids);
}
