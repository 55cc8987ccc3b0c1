//! Agents that fill the places they keep across sessions (HOME, the state directory,
//! the work directory's `.git`) past their bounds while they run, as root, sandboxed.
//! Where the harness may mount (root) each place is a tmpfs of its own, so the kernel
//! refuses the writes while the session runs; elsewhere the place is measured after
//! the session. Either way the session is the agent's `error` with the bound as its
//! reason, its trial ends, the next trial runs, every finished record stays, and the
//! results directory and the shared scratch hold none of what the fillers wrote.

use crate::common;

use std::path::Path;

use common::command::{arm, script};
use common::{read_csv, read_jsonl, require_bwrap};

/// Writes 64 MiB into the place `$FILL` names, and says how far it got.
const FILLER: &str = r#"
case "$FILL" in
  home) target="$HOME/fill.bin" ;;
  state) target="$LOOPBENCH_STATE_DIR/fill.bin" ;;
  git) target=".git/objects/pack/pack-fill.pack" ;;
esac
dd if=/dev/zero of="$target" bs=1M count=64
echo "dd exited $?"
exit 0
"#;

/// Does the work honestly: one feature per session.
const HONEST: &str = r#"
mkdir -p src && echo done > "src/f$LOOPBENCH_SESSION.txt"
git add -A && git commit -qm "f$LOOPBENCH_SESSION"
"#;

/// The bytes of the regular files under `dir`.
fn bytes_under(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.metadata().map_or(0, |m| m.len()))
        .sum()
}

/// Writes the suite of the attack in `root`: three fillers, each allowed two sessions,
/// and an honest arm after them.
fn write_fillers_suite(root: &Path) {
    script(root, "filler.sh", FILLER);
    script(root, "honest.sh", HONEST);
    let mut agents = String::new();
    for place in ["home", "state", "git"] {
        agents += &format!(
            "[agents.{place}]\ndriver = \"command\"\nprogram = \"./filler.sh\"\n\
             timeout = \"60s\"\nsandbox = \"bwrap\"\nenv = {{ FILL = \"{place}\" }}\n\n"
        );
    }
    agents += "[agents.honest]\ndriver = \"command\"\nprogram = \"./honest.sh\"\n\
               timeout = \"60s\"\nsandbox = \"bwrap\"\n\n";
    // The fillers first, each allowed two sessions; the honest trial after them.
    let arms = arm("home", "home", 2, "")
        + &arm("state", "state", 2, "")
        + &arm("git", "git", 2, "")
        + &arm("honest", "honest", 3, "");
    common::sh_task(root);
    std::fs::write(
        root.join("suite.toml"),
        format!(
            "name = \"bounds\"\nseed = 5\nreplicates = 1\ntasks = [\"shtask\"]\n\
             max_home_bytes = \"8MiB\"\n\n{agents}\n{arms}"
        ),
    )
    .unwrap();
    // The work directory, .git included, may hold twice max_tree_bytes: 8,000,000.
    let task = root.join("shtask/task.toml");
    let text = std::fs::read_to_string(&task).unwrap();
    std::fs::write(&task, format!("max_tree_bytes = 4000000\n{text}")).unwrap();
}

/// What must hold after the run of [`write_fillers_suite`] into `out`, whose harness
/// printed `stderr`, with `scratch` as its scratch root: `kernel` says whether the
/// harness could mount a tmpfs per place.
fn check_fillers_run(out: &Path, stderr: &str, scratch: &Path, kernel: bool) {
    assert!(
        stderr.contains(if kernel {
            "are bounded by a tmpfs of their own while its sessions run"
        } else {
            "are NOT bounded while its sessions run"
        }),
        "{stderr}"
    );

    let sessions = read_csv(&out.join("sessions.csv"));
    let of = |arm: &str| -> Vec<_> { sessions.iter().filter(|s| s["arm"] == arm).collect() };
    for (arm, reason) in [
        ("home", "reached max_home_bytes = 8388608"),
        ("state", "reached max_home_bytes = 8388608"),
        ("git", "reached the work directory's bound of 8000000 bytes"),
    ] {
        let mine = of(arm);
        assert_eq!(mine.len(), 1, "{arm}: the trial goes on: {mine:?}");
        let s = mine[0];
        assert_eq!(
            (s["outcome"].as_str(), s["failure"].as_str()),
            ("error", "agent"),
            "{s:?}"
        );
        assert!(s["error"].contains(reason), "{arm}: {}", s["error"]);
        let trial = format!("{arm}:shtask:0");
        let dd =
            std::fs::read_to_string(out.join(format!("agents/{trial}/session-1.stderr"))).unwrap();
        if kernel {
            // Refused while it ran, not found afterwards.
            assert!(
                s["error"].contains("the kernel refused further writes"),
                "{arm}: {}",
                s["error"]
            );
            assert!(dd.contains("No space left on device"), "{arm}: {dd}");
        } else {
            assert!(s["error"].contains("held more after the session"), "{s:?}");
        }
    }
    // What the HOME filler wrote is not kept: its HOME was emptied before the copy.
    let home = out.join("agents/home:shtask:0/home");
    assert_eq!(std::fs::read_dir(&home).unwrap().count(), 0);

    // The next trial ran as if nothing had happened, and every record is whole.
    let honest = of("honest");
    assert_eq!(honest.len(), 3, "{honest:?}");
    let trials = read_csv(&out.join("trials.csv"));
    assert_eq!(trials.len(), 4, "{trials:?}");
    let t = trials.iter().find(|t| t["arm"] == "honest").unwrap();
    assert_eq!(
        (t["features_verified"].as_str(), t["error"].as_str()),
        ("3", "")
    );
    assert_eq!(read_jsonl(&out.join("sessions.jsonl")).len(), 6);
    assert_eq!(read_jsonl(&out.join("trials.jsonl")).len(), 4);

    // 3 × 64 MiB were attempted; the results directory holds captures and tables.
    let stored = bytes_under(out);
    assert!(stored < 2 * 1024 * 1024, "the results hold {stored} bytes");
    // Nothing is left in the scratch root, mounted or not.
    assert_eq!(
        loopbench::fsutil::mounts_under(scratch),
        Vec::<std::path::PathBuf>::new()
    );
    let left: Vec<_> = std::fs::read_dir(scratch).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn fillers_of_home_state_and_git_meet_their_bounds_while_they_run_and_the_run_goes_on() {
    if !require_bwrap() {
        return;
    }
    let tmp = common::visible_tempdir();
    let root = tmp.path();
    write_fillers_suite(root);
    // A scratch root of the test's own, to see what is left in it.
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let out = root.join("out");
    let output = common::loopbench()
        .arg("run")
        .arg(root)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .env("LOOPBENCH_TMPDIR", scratch.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let kernel = loopbench::fsutil::kernel_bounds().is_ok();
    check_fillers_run(&out, &stderr, scratch.path(), kernel);
}

/// The same fillers under a harness run by an ordinary user (`nobody`, from a root
/// test), who cannot mount: each place is measured after the session, and the session
/// that filled it is the agent's error all the same.
#[test]
fn an_ordinary_users_fillers_are_measured_after_the_session_and_the_run_goes_on() {
    if !require_bwrap() || !nix::unistd::geteuid().is_root() {
        return;
    }
    let user = loopbench::sandbox::SandboxUser::default();
    let tmp = tempfile::tempdir_in("/var/tmp").unwrap();
    let root = tmp.path().join("suite");
    std::fs::create_dir(&root).unwrap();
    write_fillers_suite(&root);
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir(&scratch).unwrap();
    user.hand_over(&[tmp.path()]).unwrap();
    let out = root.join("out");
    let ran = std::process::Command::new("setpriv")
        .arg(format!("--reuid={}", user.uid))
        .arg(format!("--regid={}", user.gid))
        .args(["--clear-groups", "--"])
        .arg(env!("CARGO_BIN_EXE_loopbench"))
        .arg("run")
        .arg(&root)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .env("HOME", tmp.path())
        .env("LOOPBENCH_TMPDIR", &scratch)
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&ran.stderr);
    if !ran.status.success() && stderr.contains("bwrap") && stderr.contains("namespace") {
        // This machine lets no ordinary user make namespaces.
        assert!(std::env::var("CI").as_deref() != Ok("true"), "{stderr}");
        eprintln!("skipping: {stderr}");
        return;
    }
    assert!(ran.status.success(), "run as {}: {stderr}", user.spelled());
    check_fillers_run(&out, &stderr, &scratch, false);
}
