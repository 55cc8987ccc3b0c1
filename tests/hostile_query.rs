//! The sandbox query of a suite's own program (`# loopbench: sandbox-query`), attacked
//! as root (CI runs as root): asked, the program writes a marker on the host. Neither
//! `validate` nor `run` may ever run it there, sandboxed agent or not; asked in the
//! sandbox, its answer is still used.
//!
//! Where bwrap cannot make its namespaces the test skips, except under `CI=true`.

use crate::common;

use std::os::unix::fs::PermissionsExt;

use common::boundary::require_bwrap;
use common::command::{arm, script};

#[test]
fn a_suite_program_never_answers_the_sandbox_query_on_the_host() {
    if !require_bwrap() {
        return;
    }
    let canaries = tempfile::tempdir_in("/var/tmp").unwrap();
    // A place the query asks to show, which the session then lists.
    let shown = canaries.path().join("shown");
    std::fs::create_dir(&shown).unwrap();
    std::fs::write(shown.join("declared-file"), "").unwrap();
    std::fs::set_permissions(canaries.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let on_host = canaries.path().join("ran-on-host");
    // Asked, it writes a marker on the host (as whoever runs the harness), then declares
    // the place; run, it lists what the sandbox shows of it.
    let query = |name: &str| {
        format!(
            "# loopbench: sandbox-query\n\
             if [ -n \"$LOOPBENCH_SANDBOX_QUERY\" ]; then\n\
               echo \"{name} as $(id -u)\" >> '{marker}' 2>/dev/null\n\
               echo 'ro {shown}'\n  exit 0\nfi\n\
             ls '{shown}'\nexit 0\n",
            marker = on_host.display(),
            shown = shown.display(),
        )
    };
    let tmp = common::visible_tempdir();
    common::sh_task(tmp.path());
    script(tmp.path(), "sandboxed.sh", &query("sandboxed"));
    script(tmp.path(), "unsandboxed.sh", &query("unsandboxed"));
    let text = format!(
        "name = \"query\"\nseed = 1\nreplicates = 1\ntasks = [\"shtask\"]\n\n\
         [agents.sandboxed]\ndriver = \"command\"\nprogram = \"./sandboxed.sh\"\n\
         timeout = \"60s\"\nsandbox = \"bwrap\"\n\n\
         [agents.unsandboxed]\ndriver = \"command\"\nprogram = \"./unsandboxed.sh\"\n\
         timeout = \"60s\"\n\n{}{}",
        arm("sandboxed", "sandboxed", 1, ""),
        arm("unsandboxed", "unsandboxed", 1, "")
    );
    std::fs::write(tmp.path().join("suite.toml"), text).unwrap();

    let validated = common::loopbench()
        .arg("validate")
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(
        validated.status.success(),
        "{}",
        String::from_utf8_lossy(&validated.stderr)
    );
    assert!(!on_host.exists(), "validate ran the query on the host");
    let out = tmp.path().join("out");
    let ran = common::command::run_ok(tmp.path(), &out);
    assert!(
        !on_host.exists(),
        "run ran the query on the host: {}",
        std::fs::read_to_string(&on_host).unwrap_or_default()
    );
    // The query ran, in the sandbox, and what it declared was shown.
    let listed = ran.capture("sandboxed:shtask:0", 1, "stdout");
    assert!(listed.contains("declared-file"), "{listed}");
}
