//! An observation's checks in one sandbox (`sandbox::Batch`), attacked by a check that
//! may cheat, as root (CI runs as root): it reaches for the next check's tree, the
//! supervisor's statuses and outputs, signals everything it can, leaves processes,
//! files and System V objects behind and forges a timeout's exit status. Nothing of it
//! may change another check's verdict; what cannot be cleared away, or a limit reached,
//! gives no verdict at all (the checks then run one sandbox each).
//!
//! A batch needs a root harness with bwrap and cgroups; elsewhere the tests skip (bwrap
//! missing fails them under `CI=true`, as in the other sandbox tests).

use crate::common;

use std::time::Duration;

use common::command::{live_processes_with_arg, unique_sleep_seconds};
use loopbench::sandbox::{
    Batch, BatchEnd, BatchRan, Enforcement, Hidden, Limits, bwrap_works, supervise_batches_with,
};

/// The sandbox of a run with the default limits, when a batch can run here: as root,
/// with bwrap (which `CI=true` requires) and cgroups the kernel enforces (which the
/// other sandbox tests also skip without).
fn batch_hidden() -> Option<Hidden> {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipping: a batch of checks needs a root harness");
        return None;
    }
    if !bwrap_works() {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true: bwrap cannot create namespaces on this machine"
        );
        eprintln!("skipping: bwrap cannot create namespaces on this machine");
        return None;
    }
    let enforcement = Enforcement::here();
    if matches!(enforcement, Enforcement::None(_)) {
        eprintln!("skipping: {}", enforcement.describe());
        return None;
    }
    // The binary supervises its batches; so does this test process, with it.
    supervise_batches_with(env!("CARGO_BIN_EXE_loopbench").into());
    let hidden = Hidden::default().with_limits(Limits::default());
    assert!(
        Batch::possible(&hidden),
        "as root with bwrap and cgroups, the checks of an observation must run batched"
    );
    Some(hidden)
}

/// Runs `checks` (command, time limit), each in a tree holding `seed.txt`.
fn run(hidden: &Hidden, checks: &[(&str, u64)]) -> BatchEnd {
    run_within(hidden, checks, Duration::from_secs(120))
}

fn run_within(hidden: &Hidden, checks: &[(&str, u64)], deadline: Duration) -> BatchEnd {
    run_supervised(Batch::new().unwrap(), hidden, checks, deadline)
}

fn run_supervised(
    mut batch: Batch,
    hidden: &Hidden,
    checks: &[(&str, u64)],
    deadline: Duration,
) -> BatchEnd {
    for (command, secs) in checks {
        let check = batch.add(command, Duration::from_secs(*secs)).unwrap();
        std::fs::create_dir(check.tree()).unwrap();
        std::fs::write(check.tree().join("seed.txt"), "seed\n").unwrap();
    }
    batch.run(hidden, deadline, 4096).unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Why a batch gave no verdict; `wrong` says what its verdicts would mean.
fn why_unused(end: BatchEnd, wrong: &str) -> String {
    match end {
        BatchEnd::Unused(why) => why,
        other => panic!("{wrong}: {other:?}"),
    }
}

fn ran(end: BatchEnd) -> Vec<BatchRan> {
    match end {
        BatchEnd::Ran(ran) => ran,
        other => panic!("the batch gave no verdicts: {other:?}"),
    }
}

/// Check 0: every reach for another check, the statuses, the supervisor and the
/// places the next check uses.
const ATTACKER: &str = r#"
echo mine > mine.txt
own=$(dirname "$PWD"); top=$(dirname "$own")
ls ../.. >/dev/null 2>&1 && echo "batch: listed"
names=$(for f in /proc/[0-9]*/cmdline /proc/[0-9]*/environ /proc/[0-9]*/cwd; do
  { cat "$f" 2>/dev/null; readlink "$f" 2>/dev/null; } | tr '\0' '\n'
done | grep -o -E "$top/[0-9a-f]{32}" | sort -u)
echo "$names" | grep -q -x "$own" && echo "own: seen"
echo "$names" | grep -v -x "$own" | grep -q . && echo "other: named"
echo '1 0 0.00 0.00 100' 2>/dev/null >> ../../results/status && echo "status: written"
echo forged 2>/dev/null > ../../results/1.out && echo "output: written"
cat ../../results/plan >/dev/null 2>&1 && echo "plan: read"
cat ../../supervisor.err >/dev/null 2>&1 && echo "supervisor: read"
kill -9 -1 2>/dev/null
(sleep 1; echo late > /tmp/late-sub) >/dev/null 2>&1 &
setsid sh -c 'sleep 1; echo late > /tmp/late' >/dev/null 2>&1 &
echo left > /tmp/leftover; echo left > /dev/shm/leftover; mkdir /tmp/.hidden
ipcmk -M 4096 >/dev/null 2>&1 && echo "shm: made"
echo "attacker: done"
exit 3
"#;

/// Check 1: what the attacker left for it. The directory its own tree is bound under
/// (the harness process's scratch directory, holding the batch's, holding the check's
/// tree, under the scratch root `/dev/shm`) is no leftover.
const OBSERVER: &str = r#"
sleep 2
mine=$(dirname "$(dirname "$(dirname "$PWD")")")
for f in /tmp/* /tmp/.[!.]* /dev/shm/*; do
  [ "$f" = "$mine" ] || { [ -e "$f" ] && echo "left: $f"; }
done
[ "$(cat seed.txt)" = seed ] && echo "seed: intact"
ipcs -m | grep -q '^0x' && echo "shm: left"
ps -e -o user=,args= | grep -q -E '^nobody +sleep 1$' && echo "process: left"
echo "observer: done"
exit 0
"#;

#[test]
fn a_check_in_a_batch_cannot_reach_another_check_its_verdict_or_the_supervisor() {
    let Some(hidden) = batch_hidden() else { return };
    let ran = ran(run(
        &hidden,
        &[
            (ATTACKER, 30),
            (OBSERVER, 30),
            ("echo ran; exit 124", 30),
            ("sleep 30", 1),
            ("echo out; echo err >&2; id -u; exit 0", 30),
        ],
    ));
    assert_eq!(ran.len(), 5, "{ran:?}");

    let attacker = text(&ran[0].stdout);
    assert!(attacker.contains("attacker: done"), "{attacker}");
    assert_eq!(
        ran[0].code,
        Some(3),
        "signalling everything it could ended no one else"
    );
    for leak in [
        "other: ",
        "status: written",
        "output: written",
        "supervisor: read",
    ] {
        assert!(!attacker.contains(leak), "{leak} in {attacker}");
    }
    assert!(
        attacker.contains("shm: made"),
        "the attack must have tried: {attacker}"
    );

    let observer = text(&ran[1].stdout);
    assert!(observer.contains("observer: done"), "{observer}");
    assert!(observer.contains("seed: intact"), "{observer}");
    for leak in [
        "left: ",
        "planted: ",
        "late: ",
        "shm: left",
        "process: left",
    ] {
        assert!(!observer.contains(leak), "{leak} in {observer}");
    }
    assert_eq!((ran[1].code, ran[1].timed_out), (Some(0), false));

    // An exit status of 124 is the check's own unless it ran its whole time.
    assert_eq!(
        (ran[2].code, ran[2].timed_out),
        (Some(124), false),
        "{:?}",
        ran[2]
    );
    assert_eq!(text(&ran[2].stdout), "ran\n");
    assert!(ran[3].timed_out, "{:?}", ran[3]);
    assert_eq!(ran[3].code, None);
    assert!(ran[3].elapsed >= Duration::from_millis(990), "{:?}", ran[3]);

    let last = text(&ran[4].stdout);
    assert!(last.starts_with("out\n"), "{last}");
    assert_ne!(
        last.lines().nth(1),
        Some("0"),
        "checks run as the sandbox user"
    );
    assert_eq!(text(&ran[4].stderr), "err\n");
}

#[test]
fn what_a_check_leaves_that_cannot_be_cleared_gives_no_verdict() {
    let Some(hidden) = batch_hidden() else { return };
    // A directory its own user cannot list cannot be emptied by that user.
    let end = run(
        &hidden,
        &[
            (
                "mkdir -p /tmp/locked/x && chmod 000 /tmp/locked; exit 0",
                30,
            ),
            ("exit 0", 30),
        ],
    );
    let why = why_unused(end, "a check saw what the one before left");
    assert!(why.contains("/tmp not empty"), "{why}");
}

#[test]
fn a_limit_reached_in_a_batch_gives_no_verdict() {
    let Some(hidden) = batch_hidden() else { return };
    let hidden = hidden.with_limits(Limits {
        max_pids: 32,
        ..Limits::default()
    });
    let end = run(
        &hidden,
        &[
            ("for i in $(seq 64); do sleep 5 & done; wait; exit 0", 30),
            ("exit 0", 30),
        ],
    );
    let why = why_unused(end, "a batch that reached a limit gave verdicts");
    assert!(why.contains("max_pids"), "{why}");
}

#[test]
fn a_batch_past_its_deadline_is_out_of_time_and_leaves_no_process() {
    let Some(hidden) = batch_hidden() else { return };
    let sleep = unique_sleep_seconds();
    let command = format!("setsid sleep {sleep} & sleep {sleep}");
    let started = std::time::Instant::now();
    let end = run_within(
        &hidden,
        &[("exit 0", 30), (&command, 600)],
        Duration::from_secs(2),
    );
    assert!(matches!(end, BatchEnd::OutOfTime), "{end:?}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(live_processes_with_arg(&sleep), Vec::<i32>::new());
}

/// Each way a check can end gives the exit status, and the timeout, that the shell saw
/// of `timeout -k 2 SECS` around the same check: the supervisor keeps the time limit
/// itself.
#[test]
fn each_check_ends_with_the_status_timeout_gave_it() {
    let Some(hidden) = batch_hidden() else { return };
    let checks: [&str; 8] = [
        "exit 5",
        "echo ran; exit 124",
        "kill -TERM $$",
        "kill -KILL $$",
        "sleep 30",
        "trap 'exit 9' TERM; sleep 30 & wait",
        "trap '' TERM; sleep 4",
        "trap 'kill -KILL $$' TERM; sleep 30 & wait",
    ];
    let ran = ran(run(
        &hidden,
        &checks.iter().map(|c| (*c, 1)).collect::<Vec<_>>(),
    ));
    for (check, ran) in checks.iter().zip(&ran) {
        let out = std::process::Command::new("sh")
            .args([
                "-c",
                "( exec timeout -k 2 1.00 sh -c \"$1\" ) </dev/null >/dev/null 2>&1; echo $?",
                "sh",
                check,
            ])
            .output()
            .unwrap();
        let code: i32 = text(&out.stdout).trim().parse().unwrap();
        // As the harness reads a status: 124 or 137 after the whole time is a timeout,
        // as a check run alone is once the harness's timer has run out.
        let timed_out = matches!(code, 124 | 137) && ran.elapsed >= Duration::from_millis(990);
        assert_eq!(
            (ran.code, ran.timed_out),
            ((!timed_out).then_some(code), timed_out),
            "{check}: {ran:?}"
        );
    }
    // Past the limit, however the check then ended; before it, its own end.
    assert!(ran[4..].iter().all(|r| r.timed_out), "{ran:?}");
    assert_eq!(ran[3].code, Some(137), "{:?}", ran[3]);
}

/// The supervisor is the sandbox's pid 1, root's: a check that signals it, reads its
/// environment or descriptors, or orphans one process after another (each a zombie until
/// pid 1 reaps it, counted against `max_pids`) changes nothing for the checks after it.
#[test]
fn a_check_cannot_signal_read_or_starve_the_supervisor() {
    let Some(hidden) = batch_hidden() else { return };
    let hidden = hidden.with_limits(Limits {
        max_pids: 32,
        ..Limits::default()
    });
    const AT_PID_1: &str = r#"
for s in KILL TERM STOP INT HUP USR1; do kill -s $s 1 2>/dev/null && echo "signalled: $s"; done
cat /proc/1/environ >/dev/null 2>&1 && echo "environ: read"
ls /proc/1/fd >/dev/null 2>&1 && echo "fds: listed"
echo mine > /proc/1/fd/1 2>/dev/null && echo "stdout: written"
for i in $(seq 100); do (sleep 0 &); done
echo "done"
"#;
    let ran = ran(run(
        &hidden,
        &[(AT_PID_1, 30), ("echo after; exit 0", 30), ("exit 2", 30)],
    ));
    assert_eq!(ran.len(), 3, "{ran:?}");
    let said = text(&ran[0].stdout);
    assert_eq!(said, "done\n", "{said}");
    assert_eq!(ran[0].code, Some(0), "{:?}", ran[0]);
    assert_eq!(
        (ran[1].code, text(&ran[1].stdout)),
        (Some(0), "after\n".into())
    );
    assert_eq!(ran[2].code, Some(2));
}

/// The supervisor's binary shown inside the private `/tmp` (a harness run from a
/// temporary directory): the way to it is no check's leftover, and what a check leaves
/// beside it is still cleared away before the next check.
#[test]
fn a_supervisor_shown_inside_the_private_tmp_is_no_leftover() {
    let Some(hidden) = batch_hidden() else { return };
    let dir = tempfile::tempdir_in("/tmp").unwrap();
    let binary = dir.path().join("loopbench");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_loopbench"), &binary).unwrap();
    let batch = Batch::new().unwrap().supervised_by(binary.clone());
    let look = format!(
        "ls -A /tmp; [ -x {} ] && echo shown; echo x > /tmp/left",
        binary.display()
    );
    let ran = ran(run_supervised(
        batch,
        &hidden,
        &[(&look, 30), ("ls -A /tmp", 30)],
        Duration::from_secs(120),
    ));
    let top = dir
        .path()
        .strip_prefix("/tmp")
        .unwrap()
        .display()
        .to_string();
    let first = text(&ran[0].stdout);
    assert!(first.contains("shown"), "{first}");
    assert!(first.lines().any(|l| l == top), "{first}");
    let second = text(&ran[1].stdout);
    assert!(!second.contains("left"), "{second}");
    assert!(second.lines().any(|l| l == top), "{second}");
}

/// A check starts as it started under `timeout`: in its tree, with the signal
/// dispositions the supervisor was given (none blocked, none ignored but what was
/// ignored before the sandbox: SIGPIPE, which the supervisor ignores itself, back at
/// its default), the leader of its own process group, `PWD` its tree and
/// `LOOPBENCH_EFFECTS` its effects log, no `OLDPWD`.
#[test]
fn a_check_starts_as_timeout_started_it() {
    let Some(hidden) = batch_hidden() else { return };
    const LOOK: &str = r#"
sed -n 's/^SigBlk:\t//p' /proc/self/status
sed -n 's/^SigIgn:\t//p' /proc/self/status /proc/1/status
[ "$(ps -o pgid= -p $$)" -eq "$$" ] && echo "group: own"
[ "$PWD" = "$(pwd -P)" ] && echo "pwd: tree"
[ "$LOOPBENCH_EFFECTS" = "$(dirname "$PWD")/effects.log" ] && echo "effects: own"
[ -z "${OLDPWD+set}" ] && echo "oldpwd: unset"
exit 0
"#;
    let ran = ran(run(&hidden, &[(LOOK, 30), ("exit 0", 30)]));
    let said = text(&ran[0].stdout);
    let lines: Vec<&str> = said.lines().collect();
    let [blocked, ignored, supervisor_ignored, rest @ ..] = lines.as_slice() else {
        panic!("{said}");
    };
    let mask = |hex: &str| u64::from_str_radix(hex, 16).unwrap();
    assert_eq!(mask(blocked), 0, "{said}");
    let sigpipe = 1 << (13 - 1);
    assert_ne!(mask(supervisor_ignored) & sigpipe, 0, "{said}");
    assert_eq!(mask(ignored), mask(supervisor_ignored) & !sigpipe, "{said}");
    assert_eq!(
        rest,
        ["group: own", "pwd: tree", "effects: own", "oldpwd: unset"],
        "{said}"
    );
}

/// The supervisor kills every process it can and empties `/tmp` and `/dev/shm`: started
/// anywhere but as the first process of a fresh sandbox (here: not pid 1, or a `/tmp`
/// that holds something), it refuses before it runs or removes anything.
#[test]
fn a_supervisor_outside_a_fresh_sandbox_touches_nothing() {
    if batch_hidden().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().join("batch");
    std::fs::create_dir_all(top.join("results")).unwrap();
    std::fs::create_dir_all(top.join("c/tree")).unwrap();
    let plan = [
        "1",
        top.join("c").to_str().unwrap(),
        "5.00",
        "500",
        "echo ran > ran.txt",
    ]
    .join("\0")
        + "\0";
    std::fs::write(top.join("results/plan"), plan).unwrap();
    let top_arg = top.to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_loopbench");
    for (as_pid_1, before) in [(false, ":"), (true, "echo x > /tmp/planted")] {
        let mut bwrap = std::process::Command::new("bwrap");
        bwrap.args(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]);
        bwrap.args([
            "--tmpfs", "/tmp", "--tmpfs", "/dev/shm", "--bind", top_arg, top_arg,
        ]);
        bwrap.args(["--unshare-pid", "--die-with-parent"]);
        if as_pid_1 {
            bwrap.arg("--as-pid-1");
        }
        let script = format!("{before}; exec \"$0\" batch-supervise \"$1\" -- env; exit 9");
        let out = bwrap
            .args(["sh", "-c", &script, bin, top_arg])
            .output()
            .unwrap();
        let said = text(&out.stderr);
        assert_eq!(out.status.code(), Some(95), "{said}");
        let why = if as_pid_1 {
            "/tmp of the sandbox is not empty"
        } else {
            "not the first process of a sandbox"
        };
        assert!(said.contains(why), "{said}");
        assert!(!top.join("c/tree/ran.txt").exists());
        assert!(!top.join("results/status").exists());
    }
}
