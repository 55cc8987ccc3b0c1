//! Kernel keyrings, which bubblewrap does not namespace, attacked as root (CI runs as
//! root): the harness runs in a session keyring holding a key; an agent and its code
//! inside a check (the check against the pristine tests too, batched as root) store the
//! pristine test and a note in their session, user and persistent keyrings and look for
//! them, and for the harness's key, in the next session and the next trial. Every
//! keyring call must be refused, and nothing may cross.
//!
//! Where bwrap cannot make its namespaces, or keyctl is missing, the test skips, except
//! under `CI=true`.

use crate::common;

use common::boundary::{
    agent_script, binary, boundary_suite, boundary_task, captures, files_holding, nonce,
    require_bwrap, require_keyctl,
};
use common::command::script;

#[test]
fn no_key_reaches_a_sandbox_from_the_harness_or_from_an_earlier_session_or_check() {
    if !require_bwrap() || !require_keyctl() {
        return;
    }
    let canaries = tempfile::tempdir_in("/var/tmp").unwrap();
    let tmp = common::visible_tempdir();
    let hidden = nonce("PRISTINE-HIDDEN");
    boundary_task(tmp.path(), &hidden, "notes");
    script(tmp.path(), "agent.sh", &agent_script(canaries.path()));
    // Two trials of two sessions, one after the other: what a session or its checks
    // stored is looked for by the next session, and by the next trial.
    let suite = boundary_suite(tmp.path(), 2, 2);
    let out = tmp.path().join("out");
    // The harness runs in a session keyring of its own that holds a key.
    let harness_key = nonce("HARNESS-KEY");
    let ran = std::process::Command::new("keyctl")
        .args(["session", "-", "sh", "-c"])
        .arg("keyctl add user lb-harness-key \"$1\" @s >/dev/null && shift && exec \"$@\"")
        .arg("sh")
        .arg(&harness_key)
        .arg(binary())
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert!(ran.status.success(), "run failed: {stderr}");

    let agent = captures(&out);
    let records = std::fs::read_to_string(out.join("sessions.jsonl")).unwrap();
    // Every keyring call was refused, by the agent's sandbox and by the checks'.
    for (who, seen) in [("agent", &agent), ("check", &records)] {
        for ring in ["@s", "@u"] {
            let line = format!("{who} add {ring}: ");
            let add = seen
                .lines()
                .find(|l| l.contains(&line))
                .unwrap_or_else(|| panic!("{who} never tried {ring}:\n{seen}"));
            assert!(add.contains("Operation not permitted"), "{add}");
        }
        assert!(
            seen.contains(&format!("{who} read lb-pristine: ")),
            "{who}:\n{seen}"
        );
        // Not even listed in /proc/keys: the harness's session keyring is not theirs.
        assert!(
            !seen.contains(&format!("{who} key seen: lb-harness-key")),
            "{who}:\n{seen}"
        );
    }
    // Nothing crossed: the pristine test a check read, the agent's note, the harness's
    // key.
    for needle in [hidden.as_str(), harness_key.as_str(), "AGENT-NOTE-"] {
        assert!(
            !agent.contains(needle),
            "{needle} reached an agent:\n{agent}"
        );
        let found = files_holding(&out.join("agents"), needle);
        assert!(found.is_empty(), "{needle} in {found:?}");
    }
    assert!(!records.contains(&harness_key), "{records}");
}

#[test]
fn a_replayed_run_action_in_a_sandbox_of_its_own_is_refused_the_keyrings_too() {
    if !require_bwrap() || !require_keyctl() {
        return;
    }
    // A `run` action gets a sandbox of its own (as an ordinary user's checks, a batch's
    // fallback and check-task's do): it tries to store a key, lists what keys it can
    // see, and leaves both in the tree, which --keep-repos bundles.
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("trace.jsonl");
    let run = "keyctl add user lb-replayed v @u > add.txt 2>&1; cat /proc/keys > keys.txt; \
               grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status > status.txt";
    let lines = [
        serde_json::json!({"op": "session", "n": 1}),
        serde_json::json!({"op": "run", "cmd": run}),
        serde_json::json!({"op": "end", "status": "completed"}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&trace, text).unwrap();
    let out = tmp.path().join("out");
    let harness_key = nonce("HARNESS-KEY");
    let ran = std::process::Command::new("keyctl")
        .args(["session", "-", "sh", "-c"])
        .arg("keyctl add user lb-harness-key \"$1\" @s >/dev/null && shift && exec \"$@\"")
        .arg("sh")
        .arg(&harness_key)
        .arg(binary())
        .arg("replay")
        .arg(&trace)
        .arg("--task")
        .arg(common::repo_root().join("suites/examples/tasks/latefees"))
        .args(["--format", "json", "--keep-repos", "--quiet", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let clone = tmp.path().join("clone");
    let cloned = std::process::Command::new("git")
        .args(["clone", "-q"])
        .arg(out.join("repos/replay:latefees:0.bundle"))
        .arg(&clone)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(cloned.status.success(), "{cloned:?}");
    let read = |name: &str| std::fs::read_to_string(clone.join(name)).unwrap();
    assert!(
        read("add.txt").contains("Operation not permitted"),
        "{}",
        read("add.txt")
    );
    let status = read("status.txt");
    assert!(
        status.contains("Seccomp:\t2") && status.contains("NoNewPrivs:\t1"),
        "{status}"
    );
    // The harness's session keyring is not the sandbox's: its key is not even listed.
    assert!(
        !read("keys.txt").contains("lb-harness-key"),
        "{}",
        read("keys.txt")
    );
    assert!(files_holding(&out, &harness_key).is_empty());
}
