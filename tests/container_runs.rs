//! Runs of suites whose checks run in containers, against a real engine, where what
//! the engine does decides what is recorded: a check's container removed under it is
//! the infrastructure's failure (the trial is retried, `resume` finishes it, nothing
//! recorded is lost). Each test skips, saying why, where no container engine answers
//! `info` (tests/container_sandbox.rs, `engine`).

use crate::common;

use std::path::Path;
use std::process::{Child, Command, Stdio};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

use common::read_csv;

use crate::container_sandbox::{BASE_IMAGE, harbor_task, write};

/// What a check prints before it waits to be removed ([`remove_containers_saying`]).
const VANISH: &str = "VANISH-ME";

/// How the engine loses a container in these tests.
#[derive(Clone, Copy)]
enum Loss {
    /// Gone before the harness can ask: the harness is held still while the engine
    /// kills and removes it.
    AtOnce,
    /// Killed, then removed a moment later, as podman's `rm --force` does: a harness
    /// that asks in between finds the program killed (exit 137), and must wait for the
    /// engine before it takes that for the program's end.
    KilledThenRemoved,
}

/// Removes every container of `child`'s harness whose output says [`VANISH`], as an
/// engine that loses a container does (`loss`), until `child` exits; its exit status.
fn remove_containers_saying(
    engine: &str,
    child: &mut Child,
    loss: Loss,
) -> std::process::ExitStatus {
    let label = format!("label=loopbench.harness={}", child.id());
    let harness = Pid::from_raw(child.id() as i32);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        let listed = Command::new(engine)
            .args(["ps", "--filter", &label, "--format", "{{.Names}}"])
            .output()
            .unwrap();
        for name in String::from_utf8_lossy(&listed.stdout).lines() {
            let logs = Command::new(engine).args(["logs", name]).output().unwrap();
            if String::from_utf8_lossy(&logs.stdout).contains(VANISH) {
                if matches!(loss, Loss::AtOnce) {
                    kill(harness, Signal::SIGSTOP).unwrap();
                }
                let mut rm = Command::new(engine);
                rm.args(["rm", "--force"]);
                if engine == "podman" {
                    rm.arg("--time=0");
                }
                let _ = rm.arg(name).output();
                if matches!(loss, Loss::AtOnce) {
                    kill(harness, Signal::SIGCONT).unwrap();
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
}

/// Runs `suite` into `out` with `LB_TEST_VANISH=yes`, the engine losing every container
/// whose check says [`VANISH`] as `loss` says: the run's exit status, its stderr and its
/// process id.
fn run_losing_containers(
    engine: &str,
    suite: &Path,
    out: &Path,
    loss: Loss,
) -> (std::process::ExitStatus, String, u32) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_loopbench"))
        .arg("run")
        .arg(suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(out)
        .env("LB_TEST_VANISH", "yes")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let status = remove_containers_saying(engine, &mut child, loss);
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    (status, stderr, child.id())
}

/// A one-step Harbor task `name` in `suite` passing when `/app/out.txt` exists, whose
/// check first runs `before` (with `$VANISH` from the harness's `LB_TEST_VANISH`).
fn vanishing_task(suite: &Path, name: &str, before: &str) {
    let check =
        "if [ -e /app/out.txt ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt\n";
    let dir = harbor_task(
        suite,
        name,
        &format!("FROM {BASE_IMAGE}\nWORKDIR /app\n"),
        &format!("{before}\n{check}"),
        "echo done > /app/out.txt\n",
    );
    let toml = dir.join("task.toml");
    let text = std::fs::read_to_string(&toml).unwrap().replace(
        "timeout_sec = 60\n",
        "timeout_sec = 60\nenv = { VANISH = \"${LB_TEST_VANISH:-no}\" }\n",
    );
    std::fs::write(&toml, text).unwrap();
}

fn jsonl(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_check_whose_container_the_engine_loses_fails_infra_and_resume_finishes_the_trial() {
    let Some(engine) = crate::container_sandbox::engine() else {
        return;
    };
    let tmp = common::visible_tempdir();
    let suite = tmp.path().join("suite");
    // `steady` always checks; `early`'s every check vanishes, the one of the trial's
    // start included; `late`'s once the session wrote out.txt, under a session's check.
    vanishing_task(&suite, "steady", "");
    vanishing_task(
        &suite,
        "early",
        &format!("if [ \"$VANISH\" = yes ]; then echo {VANISH}; exec sleep 3600; fi"),
    );
    vanishing_task(
        &suite,
        "late",
        &format!(
            "if [ \"$VANISH\" = yes ] && [ -e /app/out.txt ]; then echo {VANISH}; exec sleep 3600; fi"
        ),
    );
    write(
        &suite.join("suite.toml"),
        "name = \"vanishing\"\nseed = 7\nreplicates = 1\ntasks = [\"steady\", \"early\", \"late\"]\n\
         verify_sandbox = \"container\"\ninfra_retries = 0\n\n\
         [agents.sim]\ndriver = \"sim\"\nprofile = \"careful\"\n\n\
         [[arm]]\nname = \"json\"\nagent = \"sim\"\nlist_format = \"json\"\nmax_sessions = 3\n",
    );
    let out = tmp.path().join("out");
    let (status, stderr, harness) =
        run_losing_containers(engine, &suite, &out, Loss::KilledThenRemoved);
    // Not complete: two trials could not run, and `resume` retries them.
    assert_eq!(status.code(), Some(3), "{stderr}");
    assert!(
        stderr.contains("arm 'json': 2 trials could not run (1 × infra: "),
        "{stderr}"
    );
    let failures = jsonl(&out.join("failures.jsonl"));
    let failed_tasks: Vec<&str> = failures
        .iter()
        .filter(|r| r["failure"] == "infra")
        .map(|r| r["task"].as_str().unwrap())
        .collect();
    for task in ["early", "late"] {
        assert!(failed_tasks.contains(&task), "{failures:#?}");
    }
    for r in failures.iter().filter(|r| r["failure"] == "infra") {
        let error = r["error"].as_str().unwrap();
        assert!(error.contains("container"), "{r}");
        assert!(error.contains(engine), "{r}");
    }
    // `late`'s session wrote out.txt before its check vanished: that session failed.
    assert!(
        failures
            .iter()
            .any(|r| r["task"] == "late" && r["kind"] == "coding" && r["failure"] == "infra"),
        "{failures:#?}"
    );
    let trials = std::fs::read_to_string(out.join("trials.jsonl")).unwrap();
    let finished: Vec<serde_json::Value> = jsonl(&out.join("trials.jsonl"));
    assert_eq!(finished.len(), 1, "{trials}");
    assert_eq!(finished[0]["task"], "steady");
    assert!(
        jsonl(&out.join("sessions.jsonl"))
            .iter()
            .all(|r| r["task"] == "steady")
    );
    // No container of the harness is left.
    let left = Command::new(engine)
        .args(["ps", "--all", "--quiet", "--filter"])
        .arg(format!("label=loopbench.harness={harness}"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&left.stdout).trim().is_empty());
    // The engine is well again: resume runs the two trials as their attempt 2, and the
    // trial recorded before keeps its line.
    let resumed = common::loopbench()
        .args(["resume", "--quiet", "--jobs", "1"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{resumed:?}");
    let after = std::fs::read_to_string(out.join("trials.jsonl")).unwrap();
    assert!(after.starts_with(&trials), "{after}");
    let rows = read_csv(&out.join("trials.csv"));
    assert_eq!(rows.len(), 3, "{rows:?}");
    for row in &rows {
        let attempts = if row["task"] == "steady" { "1" } else { "2" };
        assert_eq!(row["attempts"], attempts, "{row:?}");
    }
    let sessions = read_csv(&out.join("sessions.csv"));
    for task in ["early", "late"] {
        assert!(
            sessions
                .iter()
                .any(|s| s["task"] == task && s["features_verified"] == "1"),
            "{sessions:?}"
        );
    }
}

/// A two-step Harbor task `name` in `suite`: step `one` passes when `/app/one.txt`
/// exists, step `two` when `/app/two.txt` does, and `two` lays `NOTES.md` in `/app`
/// once `one` passes. Both checks first run `before` (with `$VANISH` from the
/// harness's `LB_TEST_VANISH`).
fn two_step_task(suite: &Path, name: &str, before: &str) {
    let dir = suite.join(name);
    write(
        &dir.join("task.toml"),
        "[environment]\nnetwork_mode = \"no-network\"\nworkdir = \"/app\"\n\n\
         [verifier]\ntimeout_sec = 60\n\n\
         [[steps]]\nname = \"one\"\n\n[steps.verifier]\n\
         env = { VANISH = \"${LB_TEST_VANISH:-no}\" }\n\n\
         [[steps]]\nname = \"two\"\n\n[steps.verifier]\n\
         env = { VANISH = \"${LB_TEST_VANISH:-no}\" }\n",
    );
    write(&dir.join("instruction.md"), "Two files, one step each.\n");
    write(
        &dir.join("environment/Dockerfile"),
        &format!("FROM {BASE_IMAGE}\nWORKDIR /app\n"),
    );
    for step in ["one", "two"] {
        let steps = dir.join("steps").join(step);
        write(
            &steps.join("instruction.md"),
            &format!("Write /app/{step}.txt.\n"),
        );
        write(
            &steps.join("tests/test.sh"),
            &format!(
                "{before}\nif [ -e /app/{step}.txt ]; then echo 1; else echo 0; fi \
                 > /logs/verifier/reward.txt\n"
            ),
        );
        write(
            &steps.join("solution/solve.sh"),
            &format!("echo done > /app/{step}.txt\n"),
        );
    }
    write(
        &dir.join("steps/two/workdir/NOTES.md"),
        "Step two's notes, laid once step one passes.\n",
    );
}

/// The engine loses the checks that run once the harness has laid a step's starting
/// files: the observation the next session would start from is the harness's failure,
/// not the agent's, and `resume` finishes the trial.
#[test]
fn a_check_lost_after_a_steps_files_are_laid_fails_infra_and_resume_finishes_the_trial() {
    let Some(engine) = crate::container_sandbox::engine() else {
        return;
    };
    let tmp = common::visible_tempdir();
    let suite = tmp.path().join("suite");
    two_step_task(
        &suite,
        "laid",
        &format!(
            "if [ \"$VANISH\" = yes ] && [ -e /app/NOTES.md ]; then echo {VANISH}; exec sleep 3600; fi"
        ),
    );
    write(
        &suite.join("suite.toml"),
        "name = \"laid\"\nseed = 7\nreplicates = 1\ntasks = [\"laid\"]\n\
         verify_sandbox = \"container\"\ninfra_retries = 0\n\n\
         [agents.sim]\ndriver = \"sim\"\nprofile = \"careful\"\n\n\
         [[arm]]\nname = \"json\"\nagent = \"sim\"\nlist_format = \"json\"\nmax_sessions = 6\n",
    );
    let out = tmp.path().join("out");
    let (status, stderr, _) = run_losing_containers(engine, &suite, &out, Loss::AtOnce);
    let failures = jsonl(&out.join("failures.jsonl"));
    assert_eq!(status.code(), Some(3), "{stderr}\n{failures:#?}");
    // The session that made step one pass is recorded as the agent left it, with the
    // harness's failure after it in its notes; the session the harness could not
    // prepare is the attempt's infra failure.
    let infra: Vec<&serde_json::Value> = failures
        .iter()
        .filter(|r| r["failure"] == "infra")
        .collect();
    assert_eq!(infra.len(), 1, "{failures:#?}");
    let error = infra[0]["error"].as_str().unwrap();
    assert!(
        error.contains("container") && error.contains(engine),
        "{error}"
    );
    let laid_by = failures
        .iter()
        .find(|r| r["session"].as_u64() == infra[0]["session"].as_u64().map(|n| n - 1))
        .unwrap_or_else(|| panic!("{failures:#?}"));
    assert_eq!(laid_by["outcome"], "completed", "{laid_by:#}");
    assert!(laid_by["failure"].is_null(), "{laid_by:#}");
    assert_eq!(laid_by["features_verified"], 1, "{laid_by:#}");
    assert!(
        laid_by
            .to_string()
            .contains("laying the starting files of two"),
        "{laid_by:#}"
    );
    assert!(!out.join("trials.jsonl").exists() || jsonl(&out.join("trials.jsonl")).is_empty());
    // The engine is well again: `resume` runs the trial as its attempt 2, to the end.
    let resumed = common::loopbench()
        .args(["resume", "--quiet", "--jobs", "1"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{resumed:?}");
    let rows = read_csv(&out.join("trials.csv"));
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["attempts"], "2", "{rows:?}");
    let sessions = read_csv(&out.join("sessions.csv"));
    assert!(
        sessions.iter().any(|s| s["features_verified"] == "2"),
        "{sessions:?}"
    );
}

/// A command agent that prints the value the task gives it and commits it; its
/// initializer writes the list, its coding session claims the step.
const PRINTS_ITS_SECRET: &str = r#"cat >/dev/null
echo "agent sees $AGENT_TOKEN"
echo "agent says $AGENT_TOKEN" >&2
echo "$AGENT_TOKEN" > leaked.txt
p=false; [ "$LOOPBENCH_SESSION" = 1 ] && p=true
echo "[{\"id\": \"task\", \"category\": \"step\", \"description\": \"d\", \"steps\": [], \"passes\": $p}]" > feature_list.json
git add -A && git commit -qm leak
"#;

#[test]
fn values_a_harbor_task_takes_from_the_host_are_in_no_file_of_the_results() {
    if crate::container_sandbox::engine().is_none() {
        return;
    }
    const AGENT_SECRET: &str = "sk-live-agent-5f3c9a1e77d2";
    const CHECK_SECRET: &str = "sk-live-check-0b8d2e44aa91";
    let tmp = common::visible_tempdir();
    let suite = tmp.path().join("suite");
    // The agent's container gets `[environment] env`, the check's both tables; each
    // prints what it got, and the agent commits it too (its initializer writes the
    // list, its coding session claims the step: the failing check's output is the
    // evidence of that premature claim).
    let dir = harbor_task(
        &suite,
        "secrets",
        &format!("FROM {BASE_IMAGE}\nWORKDIR /app\n"),
        "echo \"check sees $CHECK_TOKEN and $AGENT_TOKEN\"\necho 0 > /logs/verifier/reward.txt\n",
        "echo done > /app/out.txt\n",
    );
    write(
        &dir.join("task.toml"),
        "[environment]\nnetwork_mode = \"no-network\"\n\
         env = { AGENT_TOKEN = \"${LB_TEST_AGENT_SECRET}\" }\n\n\
         [verifier]\ntimeout_sec = 60\n\
         env = { CHECK_TOKEN = \"Bearer ${LB_TEST_CHECK_SECRET}\", UNSET = \"${LB_TEST_UNSET_43:-plain}\" }\n",
    );
    common::command::script(&suite, "agent.sh", PRINTS_ITS_SECRET);
    write(
        &suite.join("suite.toml"),
        "name = \"secrets\"\nseed = 3\nreplicates = 1\ntasks = [\"secrets\"]\n\
         verify_sandbox = \"container\"\n\n\
         [agents.boxed]\ndriver = \"command\"\nprogram = \"./agent.sh\"\n\
         sandbox = \"container\"\ntimeout = \"60s\"\n\n\
         [[arm]]\nname = \"a\"\nagent = \"boxed\"\nlist_format = \"json\"\n\
         max_sessions = 1\n",
    );
    let out = tmp.path().join("out");
    let output = common::loopbench()
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--keep-repos", "--out"])
        .arg(&out)
        .env("LB_TEST_AGENT_SECRET", AGENT_SECRET)
        .env("LB_TEST_CHECK_SECRET", CHECK_SECRET)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    for secret in [AGENT_SECRET, CHECK_SECRET] {
        assert!(!stderr.contains(secret), "{stderr}");
        assert_eq!(
            crate::keep_repos::files_holding(&out, secret.as_bytes()),
            Vec::<std::path::PathBuf>::new(),
            "{secret}"
        );
    }
    // What they printed was stored, each value replaced; a default is no secret.
    let sessions = std::fs::read_to_string(out.join("sessions.jsonl")).unwrap();
    assert!(
        sessions.contains(
            "check sees Bearer [redacted LB_TEST_CHECK_SECRET] and [redacted LB_TEST_AGENT_SECRET]"
        ),
        "{sessions}"
    );
    let captured =
        crate::keep_repos::files_holding(&out, b"agent sees [redacted LB_TEST_AGENT_SECRET]");
    assert!(!captured.is_empty(), "no capture of the agent's output");
    // The bundle's tree holds the committed file, its value replaced.
    let repo = crate::keep_repos::clone(
        &out.join("repos/a:secrets:0.bundle"),
        &tmp.path().join("clone"),
    );
    assert_eq!(
        std::fs::read_to_string(repo.join("leaked.txt")).unwrap(),
        "[redacted LB_TEST_AGENT_SECRET]\n"
    );
    let objects = crate::keep_repos::git_bytes(
        &repo,
        &["cat-file", "--batch-all-objects", "--batch", "--unordered"],
    );
    for secret in [AGENT_SECRET, CHECK_SECRET] {
        assert!(
            !objects
                .windows(secret.len())
                .any(|w| w == secret.as_bytes())
        );
    }
}

/// A command agent that says what it finds (the files, the commits, its prompt) and,
/// as an initializer, writes the list.
const SAYS_WHAT_IT_FINDS: &str = r#"prompt=$(cat)
echo "files: $(ls -A | sort | tr '\n' ' ')" >&2
echo "commits: $(git log --format=%s | wc -l)" >&2
printf '%s\n' "$prompt" >&2
if [ "$LOOPBENCH_SESSION" = 0 ]; then
  echo '[]' > feature_list.json
  git add -A && git commit -qm plan
fi
"#;

#[test]
fn a_harbor_task_under_an_arm_without_initializer_starts_as_a_loopbench_task_does() {
    if crate::container_sandbox::engine().is_none() {
        return;
    }
    let tmp = common::visible_tempdir();
    let suite = tmp.path().join("suite");
    loopbench::fsutil::copy_tree(
        &common::repo_root().join("suites/examples/harbor-steps/counter"),
        &suite.join("counter"),
        false,
    )
    .unwrap();
    let shtask = common::sh_task(&suite);
    let toml = std::fs::read_to_string(shtask.join("task.toml")).unwrap();
    write(
        &shtask.join("task.toml"),
        &format!("{toml}\n[environment]\nimage = \"{BASE_IMAGE}\"\n"),
    );
    common::command::script(&suite, "agent.sh", SAYS_WHAT_IT_FINDS);
    write(
        &suite.join("suite.toml"),
        "name = \"starts\"\nseed = 9\nreplicates = 1\ntasks = [\"counter\", \"shtask\"]\n\
         verify_sandbox = \"container\"\n\n\
         [agents.boxed]\ndriver = \"command\"\nprogram = \"./agent.sh\"\n\
         sandbox = \"container\"\ntimeout = \"60s\"\n\n\
         [[arm]]\nname = \"bare\"\nagent = \"boxed\"\nlist_format = \"json\"\n\
         initializer = false\nmax_sessions = 1\n\n\
         [[arm]]\nname = \"planned\"\nagent = \"boxed\"\nlist_format = \"json\"\n\
         max_sessions = 1\n",
    );
    let ran = common::command::run_ok(&suite, &tmp.path().join("out"));
    // Without an initializer each task starts from its own files and one commit, no
    // list (the agent writes it), and every requirement in the prompt, one item each.
    let harbor = ran.capture("bare:counter:0", 1, "stderr");
    let plain = ran.capture("bare:shtask:0", 1, "stderr");
    assert!(harbor.contains("files: .git \n"), "{harbor}");
    assert!(plain.contains("files: .git src tests \n"), "{plain}");
    for (said, items) in [
        (
            &harbor,
            [
                "Requirements:\n- count Write `/app/counter.sh`: each call prints the number of times it has been called so\n  far (1, then 2, ...)",
                "\n- reset Add `counter.sh reset`: it sets the count back to zero",
            ],
        ),
        (
            &plain,
            [
                "Requirements:\n- F1 file 1 exists\n",
                "\n- F3 file 3 exists\n",
            ],
        ),
    ] {
        assert!(said.contains("commits: 1\n"), "{said}");
        for item in items {
            assert!(said.contains(item), "{item:?} in {said}");
        }
    }
    // With one, both get the requirements in the initializer's prompt, and the list it
    // wrote after.
    for (task, files) in [
        ("counter", "files: .git feature_list.json \n"),
        ("shtask", "files: .git feature_list.json src tests \n"),
    ] {
        let trial = format!("planned:{task}:0");
        let first = ran.capture(&trial, 0, "stderr");
        assert!(first.contains("Requirements:\n- "), "{first}");
        assert!(!first.contains("Requirements:\nRequirements:"), "{first}");
        let next = ran.capture(&trial, 1, "stderr");
        assert!(next.contains(files), "{next}");
        assert!(
            next.contains("The feature list is feature_list.json."),
            "{next}"
        );
    }
}

/// The count step's `counter.sh`, and the reset step's.
const COUNT: &str = "#!/bin/sh\nn=$(cat /app/.count 2>/dev/null || echo 0)\nn=$((n + 1))\necho \"$n\" > /app/.count\necho \"$n\"\n";
const RESET: &str = "#!/bin/sh\nif [ \"$1\" = reset ]; then echo 0 > /app/.count; exit 0; fi\nn=$(cat /app/.count 2>/dev/null || echo 0)\nn=$((n + 1))\necho \"$n\" > /app/.count\necho \"$n\"\n";

#[test]
fn a_trace_over_the_harbor_example_replays_its_commands_and_checks_in_containers() {
    if crate::container_sandbox::engine().is_none() {
        return;
    }
    let tmp = common::visible_tempdir();
    let claim = serde_json::json!({
        "op": "edit", "path": "feature_list.json",
        "old": "\"passes\": false", "new": "\"passes\": true"
    });
    // A step a session: the recorded agent's commands say where they ran.
    let trace = common::Trace::new()
        .session(1)
        .run("echo \"ran at $(hostname):$(pwd) as $(id -u)\"")
        .write("counter.sh", COUNT)
        .op(claim.clone())
        .commit()
        .end("completed")
        .session(2)
        .write("counter.sh", RESET)
        .op(claim)
        .commit()
        .end("completed")
        .save(tmp.path());
    let task = common::repo_root().join("suites/examples/harbor-steps/counter");
    let out = tmp.path().join("out");
    let replay = |extra: &[&str], out: &Path| {
        common::loopbench()
            .arg("replay")
            .arg(&trace)
            .arg("--task")
            .arg(&task)
            .args(["--format", "json", "--quiet", "--out"])
            .arg(out)
            .args(extra)
            .output()
            .unwrap()
    };
    let done = replay(&[], &out);
    assert!(done.status.success(), "{done:?}");
    let sessions = jsonl(&out.join("sessions.jsonl"));
    assert_eq!(sessions.len(), 2, "{sessions:#?}");
    for (s, verified) in sessions.iter().zip([1, 2]) {
        assert_eq!(s["features_verified"], verified, "{s}");
        assert_eq!(s["newly_claimed"], 1, "{s}");
        assert_eq!(s["premature_claims"], 0, "{s}");
        assert!(s["error"].is_null(), "{s}");
    }
    // Never on the host: in a container of the task's image, its work directory at
    // /app, as the sandbox's user under a root harness.
    let trajectories = std::fs::read_to_string(out.join("trajectories.jsonl")).unwrap();
    let user = if nix::unistd::Uid::effective().is_root() {
        "65534"
    } else {
        "0"
    };
    assert!(
        trajectories.contains(&format!("ran at loopbench:/app as {user}")),
        "{trajectories}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["verify_sandbox"], "container", "{manifest:#}");
    let image = &manifest["arm_containers"]["replay"]["images"]["counter"];
    assert!(
        image["digest"].as_str().unwrap().starts_with("sha256:"),
        "{manifest:#}"
    );
    // Its manifest resumes in containers again: nothing left to do.
    let resumed = common::loopbench()
        .args(["resume", "--quiet"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(resumed.status.success(), "{resumed:?}");
    // Anywhere else it is refused before anything is written.
    let elsewhere = tmp.path().join("elsewhere");
    let refused = replay(&["--unsandboxed"], &elsewhere);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("task 'counter'") && stderr.contains("without --unsandboxed"),
        "{stderr}"
    );
    assert!(!elsewhere.exists());
}
