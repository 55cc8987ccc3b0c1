//! The container sandbox, against a real engine: the Harbor example's `check-task`
//! (oracle passes, nop fails, step by step), a run of two simulated arms over it (every
//! session observed, the image's digest in the manifest, a premature done shown with
//! its evidence), the refusals that name the task and the engine (an image that cannot
//! be built, an engine that does not answer), an image that lacks what its check needs,
//! and a check that attacks its container as root. Each test skips, saying why, where
//! no container engine answers `info` (or the base image the example's Dockerfile
//! names is missing).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{loopbench, repo_root};
use predicates::prelude::*;

/// The image the example's Dockerfile starts `FROM`.
pub(crate) const BASE_IMAGE: &str = "docker.io/library/ubuntu:24.04";

/// The engine to test with, or why there is none (printed, and the test passes
/// without running: nothing here can be measured without an engine).
pub(crate) fn engine() -> Option<&'static str> {
    for name in ["podman", "docker"] {
        let answers = Command::new(name)
            .arg("info")
            .output()
            .is_ok_and(|o| o.status.success());
        if !answers {
            continue;
        }
        let has_base = Command::new(name)
            .args(["image", "inspect", BASE_IMAGE])
            .output()
            .is_ok_and(|o| o.status.success());
        if has_base {
            return Some(name);
        }
        eprintln!(
            "SKIPPED: {name} answers but has no {BASE_IMAGE} (scripts/base-image.sh builds it)"
        );
        return None;
    }
    eprintln!("SKIPPED: no container engine answers `podman info` or `docker info`");
    None
}

fn example_suite() -> PathBuf {
    repo_root().join("suites/examples/harbor-steps")
}

pub(crate) fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A one-step Harbor task in `root/name`: its Dockerfile `dockerfile`, its check
/// `test_sh`, its gold `solve_sh`.
pub(crate) fn harbor_task(
    root: &Path,
    name: &str,
    dockerfile: &str,
    test_sh: &str,
    solve_sh: &str,
) -> PathBuf {
    let dir = root.join(name);
    write(
        &dir.join("task.toml"),
        "[environment]\nnetwork_mode = \"no-network\"\n\n[verifier]\ntimeout_sec = 60\n",
    );
    write(&dir.join("instruction.md"), "Write /app/out.txt.\n");
    write(&dir.join("environment/Dockerfile"), dockerfile);
    write(&dir.join("tests/test.sh"), test_sh);
    write(&dir.join("solution/solve.sh"), solve_sh);
    dir
}

#[test]
fn check_task_passes_the_harbor_examples_oracle_and_fails_its_nop_step_by_step() {
    if engine().is_none() {
        return;
    }
    let out = loopbench()
        .arg("check-task")
        .arg(example_suite().join("counter"))
        .args(["--format", "json"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&text).unwrap();
    let task = &report["tasks"][0];
    assert_eq!(task["ok"], true, "{task:#}");
    let features = task["features"].as_array().unwrap();
    let ids: Vec<&str> = features.iter().map(|f| f["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["count", "reset"]);
    for f in features {
        // Each control held: the nop tree fails the step's check, the gold passes it.
        for control in ["nop", "oracle", "alone"] {
            assert_eq!(f[control], "ok", "{control} of {f:#}");
        }
    }
}

#[test]
fn a_run_of_two_sim_arms_observes_every_session_records_the_image_and_shows_a_premature_done() {
    let Some(engine) = engine() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("results");
    loopbench()
        .arg("run")
        .arg(example_suite())
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let sessions = std::fs::read_to_string(out.join("sessions.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = sessions
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(records.len() >= 4, "{sessions}");
    for r in &records {
        assert_eq!(r["unobservable"], false, "{r}");
        assert!(r["error"].is_null() || r["error"] == "", "{r}");
        assert!(r["failure"].is_null() || r["failure"] == "", "{r}");
        // Harbor's tests are never in the work directory: not measured, not zero.
        assert!(r["tests_removed"].is_null(), "{r}");
        assert!(r["tests_weakened"].is_null(), "{r}");
    }
    // The careful arm verifies both steps; the eager one claims one that fails.
    let verified = |arm: &str| {
        records
            .iter()
            .filter(|r| r["arm"] == arm)
            .filter_map(|r| r["features_verified"].as_u64())
            .max()
    };
    assert_eq!(verified("json"), Some(2), "{sessions}");
    assert!(
        records
            .iter()
            .any(|r| r["arm"] == "eager" && r["premature_claims"].as_u64() > Some(0)),
        "{sessions}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["verify_sandbox"], "container");
    for arm in ["json", "eager"] {
        let ran = &manifest["arm_containers"][arm];
        assert_eq!(ran["sandbox"], "container", "{manifest:#}");
        assert_eq!(ran["engine"], engine, "{manifest:#}");
        let image = &ran["images"]["counter"];
        assert!(
            image["reference"]
                .as_str()
                .unwrap()
                .starts_with("loopbench-task:"),
            "{manifest:#}"
        );
        assert!(
            image["digest"].as_str().unwrap().starts_with("sha256:"),
            "{manifest:#}"
        );
    }
    loopbench()
        .arg("show")
        .arg(&out)
        .arg("eager:counter:0")
        .assert()
        .success()
        .stdout(predicate::str::contains("premature_claims 1"))
        .stdout(predicate::str::contains(
            "its check failed: `bash /tests/test.sh` reward.txt is 0, below the required 1",
        ));
}

#[test]
fn an_image_that_cannot_be_built_is_refused_by_check_task_naming_the_task_and_the_engine() {
    let Some(engine) = engine() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let dir = harbor_task(
        tmp.path(),
        "broken",
        &format!("FROM {BASE_IMAGE}\nRUN exit 3\n"),
        "echo 1 > /logs/verifier/reward.txt\n",
        "echo done > /app/out.txt\n",
    );
    loopbench()
        .arg("check-task")
        .arg(&dir)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("task 'broken'"))
        .stderr(predicate::str::contains(format!(
            "its image is not ready with {engine}"
        )));
}

#[test]
fn an_engine_that_does_not_answer_is_refused_before_anything_runs() {
    if engine().is_none() {
        return;
    }
    let answers = |name: &str| {
        Command::new(name)
            .arg("info")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let Some(absent) = ["docker", "podman"].into_iter().find(|n| !answers(n)) else {
        eprintln!("SKIPPED: both docker and podman answer here, so neither can be absent");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("harbor-steps");
    loopbench::fsutil::copy_tree(&example_suite(), &suite, false).unwrap();
    let file = suite.join("suite.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(
        &file,
        text.replace(
            "verify_sandbox = \"container\"\n",
            &format!("verify_sandbox = \"container\"\nengine = \"{absent}\"\n"),
        ),
    )
    .unwrap();
    let out = tmp.path().join("results");
    for command in ["validate", "run"] {
        common::validate_or_run(command, &suite, &out)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(
                "task 'counter' runs in a container",
            ))
            .stderr(predicate::str::contains(format!("{absent}: ")));
    }
    assert!(!out.exists(), "a refused run wrote {}", out.display());
}

#[test]
fn an_image_whose_base_is_not_here_is_refused_by_validate_and_run_before_anything_is_written() {
    let Some(engine) = engine() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let suite = tmp.path().join("harbor-steps");
    loopbench::fsutil::copy_tree(&example_suite(), &suite, false).unwrap();
    // No registry, and no such image here: the build cannot start.
    write(
        &suite.join("counter/environment/Dockerfile"),
        "FROM loopbench-no-such-base:1\nWORKDIR /app\n",
    );
    for command in ["validate", "run"] {
        let out = tmp.path().join("results");
        let done = common::validate_or_run(command, &suite, &out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&done.stderr);
        assert_eq!(done.status.code(), Some(2), "{command}: {stderr}");
        assert!(stderr.contains("task 'counter'"), "{command}: {stderr}");
        assert!(stderr.contains(engine), "{command}: {stderr}");
        assert!(
            stderr.contains("loopbench-no-such-base"),
            "{command}: {stderr}"
        );
        assert!(!out.exists(), "a refused run wrote {}", out.display());
    }
}

#[test]
fn a_check_calling_what_its_image_lacks_fails_with_the_engines_reason() {
    if engine().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = harbor_task(
        tmp.path(),
        "lacking",
        &format!("FROM {BASE_IMAGE}\nWORKDIR /app\n"),
        "loopbench-no-such-tool /app/out.txt && echo 1 > /logs/verifier/reward.txt\n",
        "echo done > /app/out.txt\n",
    );
    let out = loopbench().arg("check-task").arg(&dir).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("problem [oracle] task"), "{text}");
    assert!(text.contains("loopbench-no-such-tool"), "{text}");
    assert!(text.contains("the check wrote no reward"), "{text}");
}

/// What the hostile check prints, on one line at its end: `HELD name` for each attack
/// the sandbox stopped, `LEAK name` for each it did not.
const ATTACKS: &str = r#"
said=""
probe() { if eval "$2" >/dev/null 2>&1; then said="$said LEAK $1"; else said="$said HELD $1"; fi; }
probe gold 'cat "$GOLD"'
probe gold-in-container 'ls /solution'
probe task-dir 'ls "$TASK_DIR"'
probe host-secret-file 'cat "$SECRET_FILE"'
probe host-home 'ls /root/.cargo'
probe write-tests 'touch /tests/x'
probe write-system 'touch /etc/x'
probe network 'exec 3<>/dev/tcp/1.1.1.1/53'
probe capability 'grep -q "CapEff:[[:space:]]*0*[1-9a-f]" /proc/self/status'
probe environment 'env | grep -q LOOPBENCH_TEST_SECRET'
forked=$(python3 -c '
import os, time
n = 0
for _ in range(1500):
    try:
        if os.fork() == 0:
            os.close(1)
            time.sleep(60)
            os._exit(0)
        n += 1
    except OSError:
        break
print(n)
' 2>/dev/null)
if [ "${forked:-0}" -gt 0 ] && [ "$forked" -le 1100 ]; then said="$said HELD fork"; else said="$said LEAK fork($forked)"; fi
(setsid sleep 300 >/dev/null 2>&1 &)
echo "ATTACKS:$said"
"#;

#[test]
fn a_hostile_check_reaches_nothing_of_the_host_and_leaves_nothing_running() {
    let Some(engine) = engine() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let secret_file = tmp.path().join("secret.txt");
    std::fs::write(&secret_file, "host secret").unwrap();
    let dir = harbor_task(
        tmp.path(),
        "hostile",
        &format!("FROM {BASE_IMAGE}\nWORKDIR /app\n"),
        // The agent's code (what the gold wrote) runs inside the check, as an agent's
        // would; the check then fails, so that check-task prints what it said.
        "bash /app/attack.sh; echo 0 > /logs/verifier/reward.txt\n",
        &format!("cat > /app/attack.sh <<'EOF'\n{ATTACKS}\nEOF\n"),
    );
    let gold = dir.join("solution/solve.sh");
    let child = Command::new(env!("CARGO_BIN_EXE_loopbench"))
        .arg("check-task")
        .arg(&dir)
        .env("LOOPBENCH_TEST_SECRET", "s3cret-value")
        .env("GOLD", &gold)
        .env("TASK_DIR", &dir)
        .env("SECRET_FILE", &secret_file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Its containers carry its pid (other tests' may run meanwhile).
    let harness = child.id();
    let out = child.wait_with_output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!text.contains("LEAK"), "{text}");
    for attack in [
        "gold",
        "task-dir",
        "host-secret-file",
        "host-home",
        "write-tests",
        "write-system",
        "network",
        "capability",
        "environment",
        "fork",
    ] {
        assert!(text.contains(&format!("HELD {attack}")), "{attack}: {text}");
    }
    assert!(!text.contains("s3cret-value"), "{text}");
    // Nothing of the check's containers outlives it.
    let left = Command::new(engine)
        .args([
            "ps",
            "--all",
            "--quiet",
            "--filter",
            &format!("label=loopbench.harness={harness}"),
        ])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&left.stdout).trim().is_empty(),
        "containers left: {}",
        String::from_utf8_lossy(&left.stdout)
    );
}

#[test]
#[ignore = "runs the whole page and builds an image with apt-get; .ci/run runs it"]
fn the_container_commands_of_writing_tasks_run_as_written() {
    if engine().is_none() {
        return;
    }
    use common::docs::{run_blocks, sh_blocks};
    let page = std::fs::read_to_string(repo_root().join("docs/writing-tasks.md")).unwrap();
    // The page's own commands first (they make tasks/units), then its "container" ones,
    // in a directory holding the repository's example suite where the page names it.
    let blocks: Vec<_> = sh_blocks(&page)
        .into_iter()
        .filter(|b| b.tag.is_none() || b.tag.as_deref() == Some("container"))
        .collect();
    assert!(blocks.iter().any(|b| b.tag.is_some()));
    let tmp = tempfile::tempdir().unwrap();
    loopbench::fsutil::copy_tree(
        &example_suite(),
        &tmp.path().join("suites/examples/harbor-steps"),
        false,
    )
    .unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_loopbench")).parent().unwrap();
    let out = run_blocks("docs/writing-tasks.md", &blocks, tmp.path(), bin);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("task units (tasks/units-container): ok"),
        "{stdout}"
    );
    assert!(stdout.contains("task counter"), "{stdout}");
    assert!(stdout.contains("premature_claims 1"), "{stdout}");
}

#[test]
fn solve_sh_gets_the_solution_env_and_the_check_its_env_resolved_from_the_harness() {
    if engine().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = harbor_task(
        tmp.path(),
        "templated",
        &format!("FROM {BASE_IMAGE}\nWORKDIR /app\n"),
        "[ \"$JUDGE\" = from-host ] && [ \"$(cat /app/out.txt)\" = fast ] \
         && echo 1 > /logs/verifier/reward.txt\n",
        "echo \"$SOLVE_MODE\" > /app/out.txt\n",
    );
    let toml = dir.join("task.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace(
        "timeout_sec = 60\n",
        "timeout_sec = 60\nenv = { JUDGE = \"${LB_TEST_JUDGE}\" }\n\n\
         [solution]\nenv = { SOLVE_MODE = \"${LB_TEST_UNSET_41:-fast}\" }\n",
    );
    std::fs::write(&toml, text).unwrap();
    let out = loopbench()
        .arg("check-task")
        .arg(&dir)
        .env("LB_TEST_JUDGE", "from-host")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    // The oracle passes only with both values; the nop, without out.txt, fails.
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
