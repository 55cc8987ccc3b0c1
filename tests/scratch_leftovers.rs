//! A run killed with `kill -9` in the middle of a trial leaves its scratch behind (the
//! trial's directories and, as root, the tmpfs mounted on its work directory and its
//! own directory); `resume` clears it, so that when it ends nothing of either process
//! is left in the scratch root, mounted or not.

use crate::common;

use std::time::{Duration, Instant};

use common::command::{arm, script, sh_suite};
use common::{loopbench, read_csv};

#[test]
fn resume_after_kill_9_mid_trial_leaves_no_scratch_and_no_mount_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    // The first session ever started says so and sleeps; every later one does its
    // feature at once.
    script(
        root,
        "agent.sh",
        &format!(
            "if [ ! -e '{r}/slept' ]; then\n  touch '{r}/slept'\n  touch '{r}/started'\n  sleep 60\nfi\n\
             mkdir -p src && echo done > \"src/f$LOOPBENCH_SESSION.txt\"\n\
             git add -A >/dev/null 2>&1; git commit -qm s >/dev/null 2>&1\nexit 0\n",
            r = root.display()
        ),
    );
    let agents = "[agents.slow]\ndriver = \"command\"\nprogram = \"./agent.sh\"\n";
    let suite = sh_suite(root, agents, &arm("slow", "slow", 2, ""));
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = root.join("out");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_loopbench"))
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--jobs", "1", "--replicates", "2", "--out"])
        .arg(&out)
        .env("LOOPBENCH_TMPDIR", scratch.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !root.join("started").exists() {
        assert!(Instant::now() < deadline, "the agent never started");
        assert!(child.try_wait().unwrap().is_none(), "the run ended early");
        std::thread::sleep(Duration::from_millis(20));
    }
    // The trial's scratch is there, and as root its places are mounted.
    let dirs: Vec<_> = std::fs::read_dir(scratch.path())
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    let mounts = loopbench::fsutil::mounts_under(scratch.path());
    if loopbench::fsutil::kernel_bounds().is_ok() {
        assert_eq!(
            mounts.len(),
            2,
            "the work directory and the own directory: {mounts:?}"
        );
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(
        std::fs::read_dir(scratch.path()).unwrap().count(),
        1,
        "a killed harness clears nothing"
    );

    let resumed = loopbench()
        .args(["resume", "--quiet", "--jobs", "1"])
        .arg(&out)
        .env("LOOPBENCH_TMPDIR", scratch.path())
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{resumed:?}");
    assert_eq!(read_csv(&out.join("trials.csv")).len(), 2);
    assert_eq!(
        loopbench::fsutil::mounts_under(scratch.path()),
        Vec::<std::path::PathBuf>::new()
    );
    let left: Vec<_> = std::fs::read_dir(scratch.path())
        .unwrap()
        .flatten()
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
