//! Command agents that put a FIFO, a symlink to a device, or an absurd number where the
//! harness expects its own files and counts: the usage file, the effects log, the prompt
//! file. Each must be recorded as data, never hang the harness (the runs here are under
//! `timeout`) and never cost the run its summary.

use crate::common;

use std::path::Path;
use std::process::Command;

use common::command::{arm, script, sh_suite};
use common::read_csv;

/// Runs `suite` into `out` under `timeout 120`, one job; returns (exit code, stderr).
fn run_bounded(suite: &Path, out: &Path) -> (Option<i32>, String) {
    let output = Command::new("timeout")
        .args(["-k", "10", "120"])
        .arg(env!("CARGO_BIN_EXE_loopbench"))
        .arg("run")
        .arg(suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(out)
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn agent(program: &str) -> String {
    format!("[agents.a]\ndriver = \"command\"\nprogram = \"./{program}\"\ntimeout = \"60s\"\n\n")
}

#[test]
fn fifos_in_place_of_the_usage_file_and_the_prompt_file_are_recorded_not_waited_on() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    script(
        root,
        "fifos.sh",
        r#"cat > /dev/null
if [ "$LOOPBENCH_SESSION" = 1 ]; then
  for f in "$LOOPBENCH_USAGE_FILE" "$LOOPBENCH_PROMPT_FILE"; do
    rm -f "$f" && mkfifo "$f"
  done
fi
echo done > src/f$LOOPBENCH_SESSION.txt
git add -A && git commit -qm work
"#,
    );
    let suite = sh_suite(root, &agent("fifos.sh"), &arm("fifo", "a", 2, ""));
    let out = root.join("out");
    let (code, stderr) = run_bounded(&suite, &out);
    assert_eq!(code, Some(0), "{stderr}");
    let sessions = read_csv(&out.join("sessions.csv"));
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    assert!(
        sessions[0]["error"]
            .contains("usage file: it is a FIFO, not a regular file; it was not read"),
        "{:?}",
        sessions[0]
    );
    // The prompt file was written anew for session 2, which ran and did its work.
    assert_eq!(sessions[1]["outcome"], "completed", "{:?}", sessions[1]);
    assert_eq!(sessions[1]["newly_verified"], "1", "{:?}", sessions[1]);
    assert!(out.join("summary.md").is_file());
}

#[test]
fn a_fifo_in_place_of_the_effects_log_makes_the_session_error_not_a_hang() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    script(
        root,
        "fifo-log.sh",
        r#"cat > /dev/null
rm -f "$LOOPBENCH_EFFECTS" && mkfifo "$LOOPBENCH_EFFECTS"
"#,
    );
    let suite = sh_suite(root, &agent("fifo-log.sh"), &arm("fifo", "a", 2, ""));
    let out = root.join("out");
    let (code, stderr) = run_bounded(&suite, &out);
    assert_eq!(code, Some(0), "{stderr}");
    let sessions = read_csv(&out.join("sessions.csv"));
    assert_eq!(sessions[0]["outcome"], "error", "{:?}", sessions[0]);
    assert!(
        sessions[0]["error"]
            .contains("replaced the effects log's channel ($LOOPBENCH_EFFECTS) by a FIFO"),
        "{:?}",
        sessions[0]
    );
    assert!(out.join("summary.md").is_file());
}

#[test]
fn an_effects_log_that_is_a_symlink_to_a_device_is_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    script(
        root,
        "zero.sh",
        r#"cat > /dev/null
rm -f "$LOOPBENCH_EFFECTS" && ln -s /dev/zero "$LOOPBENCH_EFFECTS"
"#,
    );
    let suite = sh_suite(root, &agent("zero.sh"), &arm("zero", "a", 1, ""));
    let out = root.join("out");
    let (code, stderr) = run_bounded(&suite, &out);
    assert_eq!(code, Some(0), "{stderr}");
    let sessions = read_csv(&out.join("sessions.csv"));
    assert!(
        sessions[0]["error"]
            .contains("replaced the effects log's channel ($LOOPBENCH_EFFECTS) by a symlink"),
        "{:?}",
        sessions[0]
    );
}

#[test]
fn a_usage_report_above_2_63_is_refused_with_a_note_and_the_run_goes_on() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    script(
        root,
        "huge.sh",
        r#"cat > /dev/null
echo '{"turns": 3, "input_tokens": 18446744073709551615, "output_tokens": 5, "cost_usd": 4.5}' > "$LOOPBENCH_USAGE_FILE"
"#,
    );
    let suite = sh_suite(root, &agent("huge.sh"), &arm("huge", "a", 2, ""));
    let out = root.join("out");
    let (code, stderr) = run_bounded(&suite, &out);
    assert_eq!(code, Some(0), "{stderr}");
    let sessions = read_csv(&out.join("sessions.csv"));
    for s in &sessions {
        assert!(
            s["error"].contains(
                "input_tokens = 18446744073709551615 is above 2^63-1; the usage report is refused"
            ),
            "{s:?}"
        );
        // No number of a report that lied once is believed.
        assert_eq!(
            (
                s["turns"].as_str(),
                s["input_tokens"].as_str(),
                s["cost_usd"].as_str()
            ),
            ("", "", "")
        );
    }
    assert!(out.join("summary.md").is_file());
    // The run's records are usable by every reader.
    for args in [vec!["report"], vec!["show"]] {
        let status = Command::new(env!("CARGO_BIN_EXE_loopbench"))
            .args(&args)
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            status.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&status.stderr)
        );
    }
    let status = Command::new(env!("CARGO_BIN_EXE_loopbench"))
        .arg("weekly")
        .arg(root)
        .arg("--out")
        .arg(root.join("weekly"))
        .output()
        .unwrap();
    assert!(
        status.status.success(),
        "{}",
        String::from_utf8_lossy(&status.stderr)
    );
}

#[test]
fn a_plan_of_more_than_ten_million_trials_is_refused_by_validate_and_run() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    script(root, "noop.sh", "cat > /dev/null\n");
    let suite = sh_suite(root, &agent("noop.sh"), &arm("one", "a", 1, ""));
    let toml = suite.join("suite.toml");
    let text = std::fs::read_to_string(&toml).unwrap();
    std::fs::write(
        &toml,
        text.replace("replicates = 1", "replicates = 4000000000"),
    )
    .unwrap();
    for command in ["validate", "run"] {
        let output = Command::new("timeout")
            .arg("60")
            .arg(env!("CARGO_BIN_EXE_loopbench"))
            .arg(command)
            .arg(&suite)
            .args(if command == "run" {
                vec!["--out", "out"]
            } else {
                vec![]
            })
            .current_dir(root)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{command}: {stderr}");
        assert!(
            stderr.contains("suite.toml:3:")
                && stderr.contains("replicates = 4000000000 gives a plan of 4000000000 trials"),
            "{command}: {stderr}"
        );
    }
    // The --replicates override is held to the same limit.
    std::fs::write(&toml, text).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_loopbench"))
        .arg("run")
        .arg(&suite)
        .args(["--replicates", "4000000000", "--out", "out"])
        .current_dir(root)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--replicates = 4000000000 gives a plan"),
        "{stderr}"
    );
}

mod observed {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, mpsc};
    use std::time::Duration;

    use loopbench::feature_list::ListFormat;
    use loopbench::fsutil::{TreeSnapshot, copy_tree};
    use loopbench::observe::Observer;
    use loopbench::suite::Task;
    use loopbench::workspace::Workspace;

    const TASK: &str = "name = \"t\"\ngoal = \"g\"\ntests = { glob = \"tests/**/*.sh\", count_pattern = '^# test' }\n\n[[feature]]\nid = \"F1\"\ndescription = \"one\"\nverify = \"test -f f1.txt\"\n";

    #[test]
    fn the_observed_effects_are_the_harness_record_never_what_stands_at_the_channel_path() {
        let tmp = tempfile::tempdir().unwrap();
        let task_dir = tmp.path().join("task");
        std::fs::create_dir_all(task_dir.join("repo")).unwrap();
        std::fs::write(task_dir.join("task.toml"), TASK).unwrap();
        let task = Task::load(&task_dir).unwrap();
        let work = tmp.path().join("trial/work");
        std::fs::create_dir_all(&work).unwrap();
        let observer = Observer::new(&task, ListFormat::Json, None, 1).unwrap();
        // Whatever stands at $LOOPBENCH_EFFECTS between sessions (a file an agent wrote,
        // one nobody can read, a name no file system allows) is neither read nor a
        // reason not to observe.
        let written = tmp.path().join("effects");
        std::fs::write(&written, "remind:A\nremind:A\n").unwrap();
        let locked = tmp.path().join("locked");
        std::fs::write(&locked, "remind:A\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
        for path in [written, locked, tmp.path().join("e".repeat(300))] {
            let ws = Workspace::existing(work.clone(), path, tmp.path().join("prompt.md"));
            let seen = observer.observe(&ws).unwrap();
            assert_eq!((seen.effects.lines, seen.effects.repeated), (0, 0));
            // What the record holds is what is observed.
            ws.effects.append_lines(b"remind:A\nremind:A\n");
            let seen = observer.observe(&ws).unwrap();
            assert_eq!((seen.effects.lines, seen.effects.repeated), (2, 1));
        }
    }

    /// Runs `rounds` calls of `f` on another thread; false when one of them has not
    /// returned within 20 seconds (a blocking open of a FIFO never returns). Judged per
    /// call, not over all of them, so that a loaded machine that is merely slow passes.
    fn each_returns_in_time(rounds: usize, f: impl Fn(usize) + Send + 'static) -> bool {
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for i in 0..rounds {
                f(i);
                if tx.send(()).is_err() {
                    return;
                }
            }
        });
        (0..rounds).all(|_| rx.recv_timeout(Duration::from_secs(20)).is_ok())
    }

    #[test]
    fn a_fifo_swapped_in_for_a_file_while_the_tree_is_read_or_copied_never_blocks_the_harness() {
        let tmp = tempfile::tempdir().unwrap();
        let tree = tmp.path().join("tree");
        std::fs::create_dir_all(&tree).unwrap();
        for n in 0..40 {
            std::fs::write(tree.join(format!("f{n:02}.txt")), "data").unwrap();
        }
        // A process left running swaps a FIFO in and out where a file is, as fast as it
        // can, while the harness reads and copies the tree.
        let stop = Arc::new(AtomicBool::new(false));
        let swapper = {
            let stop = stop.clone();
            let tree = tree.clone();
            std::thread::spawn(move || {
                let mut n = 0u32;
                while !stop.load(Ordering::Relaxed) {
                    let path = tree.join(format!("f{:02}.txt", n % 40));
                    let _ = std::fs::remove_file(&path);
                    let _ = std::process::Command::new("mkfifo").arg(&path).status();
                    let _ = std::fs::remove_file(&path);
                    let _ = std::fs::write(&path, "data");
                    n += 1;
                }
            })
        };
        let work = tree.clone();
        let copies = tmp.path().to_path_buf();
        let done = each_returns_in_time(300, move |i| {
            let _ = TreeSnapshot::read(&work);
            let _ = copy_tree(&work, &copies.join(format!("copy{}", i % 3)), true);
        });
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        assert!(done, "reading or copying the tree blocked on a FIFO");
    }
}
