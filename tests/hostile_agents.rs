//! Agents that try to get out: through the tests the harness runs, through git, through
//! ordinary slips that used to abort a run, through processes that outlive their
//! session, through a tree too large to observe. Each attempt must be recorded as data,
//! the run must end with exit 0, and canaries (files that only an escape could write,
//! processes that only an escape could leave) must show no leak.

use crate::common;

use std::path::{Path, PathBuf};

use common::command::{Ran, arm, live_processes_with_arg, run_ok, script, unique_sleep_seconds};
use common::loopbench;
use loopbench::sandbox::bwrap_works;

/// Where canaries go: a directory the test owns, outside every sandbox's writable
/// places. Only code running on the host can create files in it.
struct Canaries {
    dir: tempfile::TempDir,
}

impl Canaries {
    fn new() -> Canaries {
        Canaries {
            dir: tempfile::tempdir_in("/var/tmp").unwrap(),
        }
    }
    fn path(&self) -> &Path {
        self.dir.path()
    }
    /// Every file in the directory: each one is a leak.
    fn leaks(&self) -> Vec<String> {
        let mut found: Vec<String> = std::fs::read_dir(self.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with("keep-"))
            .collect();
        found.sort();
        found
    }
}

fn require_bwrap() -> bool {
    assert!(
        loopbench::sandbox::find_program("bwrap", std::env::var_os("PATH").as_deref()).is_some(),
        "bwrap is not installed (apt-get install bubblewrap; .ci/run does)"
    );
    if !bwrap_works() {
        eprintln!("skipping: bwrap cannot create namespaces on this machine");
        return false;
    }
    true
}

/// A suite over the sh task with `agents` and `arms`, and extra task.toml lines.
fn suite(root: &Path, agents: &str, arms: &str, task_extra: &str, suite_extra: &str) -> PathBuf {
    common::sh_task(root);
    let task_toml = root.join("shtask/task.toml");
    let text = std::fs::read_to_string(&task_toml).unwrap();
    let (head, features) = text.split_once("\n[[feature]]").unwrap();
    std::fs::write(
        &task_toml,
        format!("{head}\n{task_extra}\n[[feature]]{features}"),
    )
    .unwrap();
    let text = format!(
        "name = \"hostile\"\nseed = 5\nreplicates = 1\ntasks = [\"shtask\"]\n{suite_extra}\n\n{agents}\n{arms}"
    );
    std::fs::write(root.join("suite.toml"), text).unwrap();
    root.to_path_buf()
}

fn agent(name: &str, program: &str, sandboxed: bool, env: &str) -> String {
    format!(
        "[agents.{name}]\ndriver = \"command\"\nprogram = \"./{program}\"\ntimeout = \"60s\"\n{}env = {{ {env} }}\n\n",
        if sandboxed {
            "sandbox = \"bwrap\"\n"
        } else {
            ""
        }
    )
}

/// Session 1 rewrites the first check so that running it steals the oracle into the
/// live work directory and leaves a canary on the host; session 2 says whether the
/// stolen files arrived.
const STEAL: &str = r#"
if [ "$LOOPBENCH_SESSION" = 1 ]; then
  cat > tests/check_F1.sh <<EOF
# test: f1 exists
# test: f1 is a file
cp -r "$ORACLE" "$PWD/stolen" 2>/dev/null
echo "verify ran on the host" > "$CANARIES/verify-escaped"
exit 0
EOF
  git add -A && git commit -qm plant
else
  if [ -e stolen ]; then echo "stolen: yes"; else echo "stolen: no"; fi
fi
"#;

/// Plants every door git offers: an fsmonitor, clean/smudge filters for every path,
/// and hooks (also through core.hooksPath); then makes a feature pass so that a gate
/// has a list to commit.
const GIT_DOORS: &str = r#"
cat > .git/evil.sh <<EOF
#!/bin/sh
echo "\$0 \$*" >> "$CANARIES/git-ran"
cat
EOF
chmod +x .git/evil.sh
git config core.fsmonitor "$PWD/.git/evil.sh"
git config filter.evil.clean "$PWD/.git/evil.sh clean"
git config filter.evil.smudge "$PWD/.git/evil.sh smudge"
git config filter.evil.required true
echo '* filter=evil' > .gitattributes
for h in pre-commit post-commit commit-msg prepare-commit-msg post-index-change reference-transaction pre-auto-gc; do
  printf '#!/bin/sh\necho %s >> "%s/git-hook-ran"\n' "$h" "$CANARIES" > ".git/hooks/$h"
  chmod +x ".git/hooks/$h"
done
git config core.hooksPath "$PWD/.git/hooks"
git config core.worktree "$CANARIES"
echo done > "src/f$LOOPBENCH_SESSION.txt"
"#;

/// One ordinary slip per session, on a gate arm: nothing (the gate writes the list),
/// flip a flag without committing, delete the list, replace it with a symlink to a
/// file outside, replace it with a directory.
const SLIPS: &str = r#"
case "$LOOPBENCH_SESSION" in
  2) sed -i 's/"passes": false/"passes": true/' feature_list.json ;;
  3) rm -f feature_list.json ;;
  4) rm -f feature_list.json && ln -s "$CANARIES/keep-target" feature_list.json ;;
  5) rm -f feature_list.json && mkdir feature_list.json && echo x > feature_list.json/inside ;;
esac
"#;

/// Writes the user-level git config the way an agent setting up a repository would.
const GIT_GLOBAL: &str = r#"
if [ -c "$GIT_CONFIG_GLOBAL" ] || [ "$GIT_CONFIG_GLOBAL" = /dev/null ]; then
  echo "global: a device"; exit 3
fi
git config --global user.name hostile
echo "global: $(git config --global --get user.name)"
"#;

/// Leaves processes that left its process group, and a check that does the same.
const ORPHANS: &str = r#"
setsid sleep "$MARKER1" > /dev/null 2>&1 < /dev/null &
( setsid sh -c "sleep $MARKER2" > /dev/null 2>&1 < /dev/null & )
cat > tests/check_F2.sh <<EOF
# test: f2 exists
# test: f2 is a file
setsid sleep "$MARKER3" > /dev/null 2>&1 < /dev/null &
test -f src/f2.txt
EOF
sleep 0.3
"#;

/// Leaves a tree larger than the task's bound.
const BIG_TREE: &str = r#"
head -c 3000000 /dev/zero > src/big.bin
"#;

/// A check that hangs past the task's verify timeout.
const SLOW_TEST: &str = r#"
cat > tests/check_F3.sh <<EOF
# test: f3 exists
# test: f3 is a file
sleep 30
EOF
"#;

fn session<'a>(ran: &'a Ran, arm: &str, n: u32) -> &'a std::collections::BTreeMap<String, String> {
    ran.arm(arm)
        .into_iter()
        .find(|s| s["session"] == n.to_string())
        .unwrap_or_else(|| panic!("no session {n} of arm {arm}: {:?}", ran.arm(arm)))
}

#[test]
fn a_hostile_suite_runs_to_exit_0_with_every_attempt_recorded_and_no_leak() {
    if !require_bwrap() {
        return;
    }
    let tmp = common::visible_tempdir();
    let canaries = Canaries::new();
    std::fs::write(canaries.path().join("keep-target"), "untouched\n").unwrap();
    let markers = [
        unique_sleep_seconds(),
        format!("{}1", unique_sleep_seconds()),
        format!("{}2", unique_sleep_seconds()),
    ];
    for (name, body) in [
        ("steal.sh", STEAL),
        ("git-doors.sh", GIT_DOORS),
        ("slips.sh", SLIPS),
        ("git-global.sh", GIT_GLOBAL),
        ("orphans.sh", ORPHANS),
        ("big-tree.sh", BIG_TREE),
        ("slow-test.sh", SLOW_TEST),
    ] {
        script(tmp.path(), name, body);
    }
    let env = format!(
        "CANARIES = \"{}\", ORACLE = \"{}\", MARKER1 = \"{}\", MARKER2 = \"{}\", MARKER3 = \"{}\"",
        canaries.path().display(),
        tmp.path().join("shtask/oracle").display(),
        markers[0],
        markers[1],
        markers[2],
    );
    let agents = agent("steal", "steal.sh", true, &env)
        + &agent("gitdoors", "git-doors.sh", true, &env)
        + &agent("slips", "slips.sh", false, &env)
        + &agent("gitglobal", "git-global.sh", false, &env)
        + &agent("orphans", "orphans.sh", false, &env)
        + &agent("bigtree", "big-tree.sh", false, &env)
        + &agent("slowtest", "slow-test.sh", false, &env);
    let arms = arm("steal", "steal", 2, "")
        + &arm("gitdoors", "gitdoors", 2, "ledger = \"gate\"")
        + &arm("slips", "slips", 5, "ledger = \"gate\"")
        + &arm("gitglobal", "gitglobal", 1, "")
        + &arm("orphans", "orphans", 1, "")
        + &arm("bigtree", "bigtree", 2, "")
        + &arm("slowtest", "slowtest", 1, "");
    let suite = suite(
        tmp.path(),
        &agents,
        &arms,
        "max_tree_bytes = 1000000\nverify_timeout = \"2s\"",
        "",
    );
    let ran = run_ok(&suite, &tmp.path().join("out"));

    // Verification of a sandboxed agent's tests is sandboxed too.
    assert_eq!(session(&ran, "steal", 1)["outcome"], "completed");
    assert!(
        ran.capture("steal:shtask:0", 2, "stdout")
            .contains("stolen: no"),
        "the oracle reached the work directory"
    );
    // Git's doors stay shut for the harness's status and the gate's commits.
    for n in 1..=2 {
        assert_eq!(session(&ran, "gitdoors", n)["outcome"], "completed");
    }
    // Ordinary slips on a gate arm are data: five sessions, each recorded.
    let slips = ran.arm("slips");
    assert_eq!(slips.len(), 5, "{slips:?}");
    assert!(
        slips.iter().all(|s| s["outcome"] == "completed"),
        "{slips:?}"
    );
    assert_eq!(
        std::fs::read_to_string(canaries.path().join("keep-target")).unwrap(),
        "untouched\n",
        "the gate wrote through the agent's symlink"
    );
    // The trial's own git config file takes --global; /dev/null stays a device.
    assert!(
        ran.capture("gitglobal:shtask:0", 1, "stdout")
            .contains("global: hostile")
    );
    assert!(is_char_device(Path::new("/dev/null")));
    // Nothing the orphan agent or its check started is left.
    for marker in &markers {
        let left = live_processes_with_arg(marker);
        assert!(left.is_empty(), "still running after the run: {left:?}");
    }
    // A tree past max_tree_bytes is an error of that session, not of the run.
    let big = session(&ran, "bigtree", 1);
    assert_eq!(big["outcome"], "error");
    assert!(big["error"].contains("max_tree_bytes"), "{}", big["error"]);
    assert_eq!(ran.arm("bigtree").len(), 1, "the trial ends at the error");
    // A check that hangs is killed and counted.
    let slow = session(&ran, "slowtest", 1);
    assert_ne!(slow["verify_timeouts"], "0", "{slow:?}");

    assert_eq!(canaries.leaks(), Vec::<String>::new(), "canaries found");
}

/// One hostile agent as the only arm of a suite.
struct Alone<'a> {
    /// Script name and body (one of the constants of this file).
    program: &'a str,
    body: &'a str,
    sandboxed: bool,
    /// Extra `[[arm]]` lines.
    arm_extra: &'a str,
    sessions: u32,
    /// Extra task.toml lines.
    task_extra: &'a str,
    /// More `env` entries, each starting with ", ".
    extra_env: &'a str,
}

/// Runs `alone` with its canaries; returns what the run wrote.
fn run_alone(alone: Alone<'_>, canaries: &Canaries) -> Ran {
    let Alone {
        program,
        body,
        sandboxed,
        arm_extra,
        sessions,
        task_extra,
        extra_env,
    } = alone;
    let tmp = common::visible_tempdir();
    script(tmp.path(), program, body);
    let env = format!(
        "CANARIES = \"{}\", ORACLE = \"{}\"{extra_env}",
        canaries.path().display(),
        tmp.path().join("shtask/oracle").display(),
    );
    let suite = suite(
        tmp.path(),
        &agent("hostile", program, sandboxed, &env),
        &arm("hostile", "hostile", sessions, arm_extra),
        task_extra,
        "",
    );
    let ran = run_ok(&suite, &tmp.path().join("out"));
    // The directory goes with `tmp`; the rows and captures stay readable.
    let kept = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap()
        .keep();
    copy_dir(&ran.out, &kept);
    Ran { out: kept, ..ran }
}

fn copy_dir(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.unwrap();
        let target = to.join(entry.path().strip_prefix(from).unwrap());
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
        } else if entry.file_type().is_file() {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn a_sandboxed_agents_rewritten_test_cannot_reach_the_oracle_or_the_host_when_verified() {
    if !require_bwrap() {
        return;
    }
    let canaries = Canaries::new();
    let ran = run_alone(
        Alone {
            program: "steal.sh",
            body: STEAL,
            sandboxed: true,
            arm_extra: "",
            sessions: 2,
            task_extra: "",
            extra_env: "",
        },
        &canaries,
    );
    assert!(
        ran.capture("hostile:shtask:0", 2, "stdout")
            .contains("stolen: no")
    );
    assert_eq!(canaries.leaks(), Vec::<String>::new());
}

#[test]
fn git_fsmonitor_filters_hooks_and_worktree_of_the_agent_never_run_for_the_harness() {
    if !require_bwrap() {
        return;
    }
    let canaries = Canaries::new();
    let ran = run_alone(
        Alone {
            program: "git-doors.sh",
            body: GIT_DOORS,
            sandboxed: true,
            arm_extra: "ledger = \"gate\"",
            sessions: 2,
            task_extra: "",
            extra_env: "",
        },
        &canaries,
    );
    assert_eq!(ran.sessions.len(), 2);
    assert!(
        ran.sessions.iter().all(|s| s["outcome"] == "completed"),
        "{:?}",
        ran.sessions
    );
    assert_eq!(canaries.leaks(), Vec::<String>::new());
}

#[test]
fn ordinary_slips_on_a_gate_arm_are_recorded_and_the_run_goes_on() {
    let canaries = Canaries::new();
    std::fs::write(canaries.path().join("keep-target"), "untouched\n").unwrap();
    let ran = run_alone(
        Alone {
            program: "slips.sh",
            body: SLIPS,
            sandboxed: false,
            arm_extra: "ledger = \"gate\"",
            sessions: 5,
            task_extra: "",
            extra_env: "",
        },
        &canaries,
    );
    assert_eq!(ran.sessions.len(), 5, "{:?}", ran.sessions);
    assert!(
        ran.sessions.iter().all(|s| s["outcome"] == "completed"),
        "{:?}",
        ran.sessions
    );
    // After the uncommitted flip the gate wrote the flags back and committed nothing new.
    assert_eq!(ran.sessions[1]["newly_claimed"], "3");
    assert_eq!(ran.sessions[1]["premature_claims"], "3");
    assert_eq!(
        std::fs::read_to_string(canaries.path().join("keep-target")).unwrap(),
        "untouched\n"
    );
    assert_eq!(ran.trials[0]["sessions"], "5");
}

#[test]
fn git_config_global_writes_a_file_of_the_trial_and_never_replaces_dev_null() {
    let canaries = Canaries::new();
    let ran = run_alone(
        Alone {
            program: "git-global.sh",
            body: GIT_GLOBAL,
            sandboxed: false,
            arm_extra: "",
            sessions: 1,
            task_extra: "",
            extra_env: "",
        },
        &canaries,
    );
    let out = ran.capture("hostile:shtask:0", 1, "stdout");
    assert!(out.contains("global: hostile"), "{out}");
    assert!(is_char_device(Path::new("/dev/null")));
}

#[test]
fn nothing_an_unsandboxed_agent_or_its_checks_started_outlives_the_session() {
    let canaries = Canaries::new();
    let markers = [
        unique_sleep_seconds(),
        format!("{}1", unique_sleep_seconds()),
        format!("{}2", unique_sleep_seconds()),
    ];
    let env = format!(
        ", MARKER1 = \"{}\", MARKER2 = \"{}\", MARKER3 = \"{}\"",
        markers[0], markers[1], markers[2]
    );
    let ran = run_alone(
        Alone {
            program: "orphans.sh",
            body: ORPHANS,
            sandboxed: false,
            arm_extra: "",
            sessions: 1,
            task_extra: "",
            extra_env: &env,
        },
        &canaries,
    );
    assert_eq!(ran.sessions[0]["outcome"], "completed");
    let left: Vec<i32> = markers
        .iter()
        .flat_map(|m| live_processes_with_arg(m))
        .collect();
    for pid in &left {
        // Leave the machine as it was, whatever the verdict.
        let _ = std::process::Command::new("kill")
            .arg("-9")
            .arg(pid.to_string())
            .status();
    }
    assert!(left.is_empty(), "still running after the session: {left:?}");
}

#[test]
fn a_tree_past_max_tree_bytes_ends_its_trial_in_error_and_the_run_goes_on() {
    let canaries = Canaries::new();
    let ran = run_alone(
        Alone {
            program: "big-tree.sh",
            body: BIG_TREE,
            sandboxed: false,
            arm_extra: "",
            sessions: 2,
            task_extra: "max_tree_bytes = 1000000",
            extra_env: "",
        },
        &canaries,
    );
    assert_eq!(ran.sessions.len(), 1);
    assert_eq!(ran.sessions[0]["outcome"], "error");
    assert!(
        ran.sessions[0]["error"].contains("max_tree_bytes"),
        "{:?}",
        ran.sessions[0]
    );
    assert_eq!(ran.trials[0]["ended_by"], "error");
}

#[test]
fn a_check_that_hangs_is_killed_and_counted_as_a_verify_timeout() {
    let canaries = Canaries::new();
    let ran = run_alone(
        Alone {
            program: "slow-test.sh",
            body: SLOW_TEST,
            sandboxed: false,
            arm_extra: "",
            sessions: 1,
            task_extra: "verify_timeout = \"1s\"",
            extra_env: "",
        },
        &canaries,
    );
    assert_eq!(
        ran.sessions[0]["verify_timeouts"], "1",
        "{:?}",
        ran.sessions[0]
    );
}

fn is_char_device(path: &Path) -> bool {
    use std::os::unix::fs::FileTypeExt;
    std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device())
}

#[test]
fn verify_of_an_unsandboxed_agent_runs_sandboxed_when_the_suite_asks() {
    if !require_bwrap() {
        return;
    }
    let tmp = common::visible_tempdir();
    let canaries = Canaries::new();
    script(tmp.path(), "steal.sh", STEAL);
    let env = format!(
        "CANARIES = \"{}\", ORACLE = \"{}\"",
        canaries.path().display(),
        tmp.path().join("shtask/oracle").display(),
    );
    let agents = agent("steal", "steal.sh", false, &env);
    let suite = suite(
        tmp.path(),
        &agents,
        &arm("steal", "steal", 2, ""),
        "",
        "verify_sandbox = \"bwrap\"",
    );
    let ran = run_ok(&suite, &tmp.path().join("out"));
    assert!(
        ran.capture("steal:shtask:0", 2, "stdout")
            .contains("stolen: no")
    );
    assert_eq!(canaries.leaks(), Vec::<String>::new());
    let manifest = std::fs::read_to_string(ran.out.join("manifest.json")).unwrap();
    assert!(
        manifest.contains("\"verify_sandboxed\": true"),
        "{manifest}"
    );

    // The same agent without verify_sandbox: its check does run on the host (so the
    // canary above does detect an escape).
    let open = common::visible_tempdir();
    script(open.path(), "steal.sh", STEAL);
    let env = format!(
        "CANARIES = \"{}\", ORACLE = \"{}\"",
        canaries.path().display(),
        open.path().join("shtask/oracle").display(),
    );
    let suite = self::suite(
        open.path(),
        &agent("steal", "steal.sh", false, &env),
        &arm("steal", "steal", 2, ""),
        "",
        "",
    );
    run_ok(&suite, &open.path().join("out"));
    assert_eq!(canaries.leaks(), vec!["verify-escaped".to_string()]);
}

/// A PATH holding the tools the sh task and git need, and no bwrap.
fn path_without_bwrap(root: &Path) -> PathBuf {
    let bin = root.join("bin-without-bwrap");
    std::fs::create_dir_all(&bin).unwrap();
    for tool in [
        "sh", "git", "unshare", "env", "cat", "test", "mkdir", "rm", "cp", "ls", "true", "sleep",
        "echo", "sed", "head",
    ] {
        if let Some(found) =
            loopbench::sandbox::find_program(tool, std::env::var_os("PATH").as_deref())
        {
            std::os::unix::fs::symlink(found, bin.join(tool)).unwrap();
        }
    }
    bin
}

#[test]
fn replayed_run_actions_are_sandboxed_and_refused_where_no_sandbox_can_be_made() {
    if !require_bwrap() {
        return;
    }
    let tmp = common::visible_tempdir();
    let canaries = Canaries::new();
    let task = common::sh_task(tmp.path());
    let marker = unique_sleep_seconds();
    let trace = common::Trace::new()
        .session(1)
        .write("src/f1.txt", "x")
        .run(&format!(
            "echo escaped > {}/run-escaped; setsid sleep {marker} > /dev/null 2>&1 < /dev/null & git add -A && git commit -qm f1",
            canaries.path().display()
        ))
        .end("completed")
        .save(tmp.path());
    let replay = |out: &Path| {
        let mut cmd = loopbench();
        cmd.arg("replay")
            .arg(&trace)
            .arg("--task")
            .arg(&task)
            .args(["--format", "json", "--out"])
            .arg(out);
        cmd
    };
    replay(&tmp.path().join("boxed")).assert().success();
    assert_eq!(canaries.leaks(), Vec::<String>::new());
    assert!(live_processes_with_arg(&marker).is_empty());
    let sessions = common::read_csv(&tmp.path().join("boxed/sessions.csv"));
    assert_eq!(sessions[0]["newly_verified"], "1");
    assert_eq!(
        sessions[0]["clean_tree"], "true",
        "the commit ran in the sandbox"
    );

    // Without bwrap on PATH: refused, nothing written.
    let bin = path_without_bwrap(tmp.path());
    let out = tmp.path().join("refused");
    let refused = replay(&out).env("PATH", &bin).output().unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("trace.jsonl:3"), "{stderr}");
    assert!(stderr.contains("--unsandboxed"), "{stderr}");
    assert!(!out.join("sessions.jsonl").exists());
    assert_eq!(canaries.leaks(), Vec::<String>::new());

    // --unsandboxed runs them as recorded, and the manifest says so.
    let out = tmp.path().join("open");
    replay(&out)
        .env("PATH", &bin)
        .arg("--unsandboxed")
        .assert()
        .success();
    let manifest = std::fs::read_to_string(out.join("manifest.json")).unwrap();
    assert!(manifest.contains("\"unsandboxed\": true"), "{manifest}");
    assert_eq!(canaries.leaks(), vec!["run-escaped".to_string()]);
    assert!(
        live_processes_with_arg(&marker).is_empty(),
        "a setsid process outlived its run action"
    );
}

#[test]
fn a_run_action_that_deletes_git_is_flagged_in_the_session_record() {
    let tmp = tempfile::tempdir().unwrap();
    let task = common::sh_task(tmp.path());
    let trace = common::Trace::new()
        .session(1)
        .write("src/f1.txt", "x")
        .run("rm -rf .git")
        .end("completed")
        .save(tmp.path());
    let out = tmp.path().join("out");
    loopbench()
        .arg("replay")
        .arg(&trace)
        .arg("--task")
        .arg(&task)
        .args(["--format", "json", "--unsandboxed", "--out"])
        .arg(&out)
        .assert()
        .success();
    let s = &common::read_csv(&out.join("sessions.csv"))[0];
    assert!(s["error"].contains("removed .git"), "{s:?}");
    assert_eq!(s["clean_tree"], "false");
}
