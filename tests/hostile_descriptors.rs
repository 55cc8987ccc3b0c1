//! Descriptors the harness inherited, attacked as root (CI runs as root): the binary
//! is started with descriptors open on a root-only file, a root-only log (for append),
//! `/`, a task's `oracle/` and a pipe holding tokens, as a cron script, make's jobserver
//! or a CI runner leaves them. The agent and its code inside a check (the check against
//! the pristine tests too, batched as root) look for them through `/proc/self/fd`, read,
//! list and append to what they find; none may be there, and nothing of them may be
//! stored anywhere.
//!
//! Where bwrap cannot make its namespaces the test skips, except under `CI=true`.

use crate::common;

use std::io::Write;

use common::boundary::{
    agent_script, binary, boundary_suite, boundary_task, captures, files_holding, nonce,
    private_file, require_bwrap,
};
use common::command::script;

#[test]
fn no_descriptor_the_harness_inherited_reaches_an_agent_or_a_check() {
    if !require_bwrap() {
        return;
    }
    // Outside everything the sandbox shows: a root-only secret, a root-only log, and a
    // file only a listing through an inherited directory could name.
    let canaries = tempfile::tempdir_in("/var/tmp").unwrap();
    let secret_text = nonce("FD-SECRET");
    let secret = canaries.path().join("secret");
    private_file(&secret, &format!("{secret_text}\n"));
    let log = canaries.path().join("root.log");
    private_file(&log, "a root-only log\n");
    let listed = nonce("LISTED-THROUGH-ROOT");
    std::fs::write(canaries.path().join(&listed), "").unwrap();

    let tmp = common::visible_tempdir();
    let oracle_name = nonce("ORACLE-LISTED");
    let task = boundary_task(tmp.path(), &nonce("PRISTINE-HIDDEN"), &oracle_name);
    script(tmp.path(), "agent.sh", &agent_script(canaries.path()));
    // Two sessions: the second's record keeps the output of the claimed F1's check.
    let suite = boundary_suite(tmp.path(), 1, 2);
    let out = tmp.path().join("out");

    // A pipe like make's jobserver, with tokens waiting in it.
    let (reader, mut writer) = std::io::pipe().unwrap();
    let pipe_text = nonce("PIPE-TOKENS");
    writer.write_all(pipe_text.as_bytes()).unwrap();
    let pipe_inode = nix::sys::stat::fstat(&reader).unwrap().st_ino;
    // Descriptors 5 to 9 are left open across the harness's exec, as a cron script,
    // make or a CI runner leaves them.
    let ran = std::process::Command::new("sh")
        .args([
            "-c",
            "exec 5<\"$1\" 6>>\"$2\" 7</ 8<\"$3\" 9<&0 0</dev/null; shift 3; exec \"$@\"",
            "sh",
        ])
        .arg(&secret)
        .arg(&log)
        .arg(task.join("oracle"))
        .arg(binary())
        .arg("run")
        .arg(&suite)
        .args(["--quiet", "--jobs", "1", "--out"])
        .arg(&out)
        .stdin(reader)
        .output()
        .unwrap();
    drop(writer);
    let stderr = String::from_utf8_lossy(&ran.stderr);
    assert!(ran.status.success(), "run failed: {stderr}");

    let agent = captures(&out);
    let records = std::fs::read_to_string(out.join("sessions.jsonl")).unwrap();
    // Both looked: the agent, and its code inside the check against the pristine tests.
    assert!(agent.contains("agent fd 0 -> "), "{agent}");
    assert!(records.contains("check fd 0 -> "), "{records}");
    for (who, seen) in [("agent", &agent), ("check", &records)] {
        for line in seen.lines().filter(|l| l.contains(" fd ")) {
            for target in [
                secret.display().to_string(),
                log.display().to_string(),
                task.join("oracle").display().to_string(),
                format!("pipe:[{pipe_inode}]"),
            ] {
                assert!(!line.contains(&target), "{who}: {line}");
            }
            assert!(
                !line.ends_with("-> /"),
                "{who} holds the host's root: {line}"
            );
        }
    }
    for needle in [&secret_text, &pipe_text, &listed, &oracle_name] {
        let found = files_holding(&out, needle);
        assert!(found.is_empty(), "{needle} stored in {found:?}");
    }
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "a root-only log\n");
}
