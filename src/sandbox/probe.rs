//! Whether the sandbox can be used here, checked before anything runs, as two separate
//! questions: whether bwrap is installed and can create its namespaces
//! ([`super::host::bwrap_works`]; where it cannot, a run may fall back to what the README
//! says), and whether a sandbox the harness builds really holds no capability and, as
//! root, runs as the unprivileged sandbox user ([`check_confined`]; where it does not,
//! the harness refuses to run, never falls back).

use std::process::Stdio;
use std::sync::OnceLock;

use super::host::namespaces;
use super::launch::Confined;
use super::layout::Hidden;
use super::user::RunAs;
use crate::error::{Result, SandboxError};

/// Checks that bwrap is installed and can create its namespaces here, for the agent
/// `agent`. The error (exit 2) names the agent and how to install bwrap.
pub fn check_bwrap(agent: &str) -> Result<()> {
    check_bwrap_for(&format!("agent '{agent}' uses sandbox = \"bwrap\""))
}

/// [`check_bwrap`] for whatever `needs` says wants the sandbox ("the suite sets
/// verify_sandbox = \"bwrap\""): bwrap's namespaces, then, once, that a sandbox holds
/// no capability and runs as the sandbox's user.
pub fn check_bwrap_for(needs: &str) -> Result<()> {
    let unavailable = |why| SandboxError::Unavailable {
        needs: needs.to_string(),
        why,
    };
    namespaces().map_err(unavailable)?;
    check_confined().map_err(unavailable)?;
    Ok(())
}

/// Checks, once per process, that a process in the sandbox the harness builds (started
/// the way every sandbox is, through [`Launch`]) holds no capability: `CapEff`,
/// `CapPrm` and `CapBnd` of `/proc/self/status` all zero; and, when the harness runs as
/// root, that it runs as the sandbox's user, never as uid or gid 0. `Err` says what
/// was found.
pub fn check_confined() -> std::result::Result<(), String> {
    static CONFINED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    CONFINED
        .get_or_init(|| {
            let run_as = RunAs::of_harness().clone()?;
            let scratch = crate::fsutil::scratch_dir("loopbench-probe-")
                .map_err(|e| format!("no scratch directory: {e}"))?;
            let layout = Hidden::default().layout(scratch.path(), &[], &[]);
            let confined = Confined::start(&layout, None)
                .map_err(|e| format!("cannot prepare the probe's sandbox: {e}"))?;
            let out = confined
                .command()
                .args(["cat", "/proc/self/status"])
                .stdin(Stdio::null())
                .stderr(Stdio::piped())
                .output()
                .map_err(|e| format!("bwrap cannot be run: {e}"))?;
            let bwrap_said = || String::from_utf8_lossy(&out.stderr).trim().to_string();
            if let Err(why) = confined.ended(None, true).map_err(|e| e.to_string())? {
                return Err(format!("the sandbox cannot start: {why} {}", bwrap_said()));
            }
            if !out.status.success() {
                // bwrap exits with the status of the program it ran.
                let code = out
                    .status
                    .code()
                    .map_or_else(|| out.status.to_string(), |c| c.to_string());
                return Err(format!(
                    "a program in the sandbox cannot run (exit {code}): {}",
                    bwrap_said()
                ));
            }
            let status = String::from_utf8_lossy(&out.stdout);
            capabilities_dropped(&status)?;
            filtered(&status)?;
            match &run_as {
                Some(run_as) => runs_as(&status, run_as.user.uid, run_as.user.gid),
                None => Ok(()),
            }
        })
        .clone()
}

/// `Ok` when every uid and gid of a `/proc/PID/status` text (real, effective, saved,
/// filesystem) is the sandbox user's.
fn runs_as(status: &str, uid: u32, gid: u32) -> std::result::Result<(), String> {
    for (key, want) in [("Uid", uid), ("Gid", gid)] {
        let ids: Vec<&str> = status
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .map(|v| v.split_whitespace().collect())
            .unwrap_or_default();
        if ids.len() != 4 || ids.iter().any(|id| id.parse::<u32>().ok() != Some(want)) {
            return Err(format!(
                "a process in the sandbox does not run as the sandbox's user \
                 ({key}: {}, expected {want}); refusing to run an agent as the owner of \
                 root's files",
                ids.join(" ")
            ));
        }
    }
    Ok(())
}

/// `Ok` when a `/proc/PID/status` text shows a seccomp filter in place (mode 2), the
/// one that denies the keyring system calls, and `no_new_privs`.
fn filtered(status: &str) -> std::result::Result<(), String> {
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .map(str::trim)
    };
    match (field("Seccomp"), field("NoNewPrivs")) {
        (Some("2"), Some("1")) => Ok(()),
        (seccomp, no_new_privs) => Err(format!(
            "a process in the sandbox runs without the harness's seccomp filter \
             (Seccomp: {}, NoNewPrivs: {}); refusing to run an agent that could reach \
             the kernel's keyrings",
            seccomp.unwrap_or("absent"),
            no_new_privs.unwrap_or("absent")
        )),
    }
}

/// `Ok` when the capability sets of a `/proc/PID/status` text are all empty.
fn capabilities_dropped(status: &str) -> std::result::Result<(), String> {
    for set in ["CapEff", "CapPrm", "CapBnd"] {
        let value = status
            .lines()
            .find_map(|l| l.strip_prefix(set)?.strip_prefix(':'))
            .map(str::trim);
        match value.map(|v| u64::from_str_radix(v, 16)) {
            Some(Ok(0)) => {}
            Some(Ok(_)) => {
                return Err(format!(
                    "a process in the sandbox still holds capabilities ({set}: {}); \
                     refusing to run an agent that could undo the sandbox's mounts",
                    value.unwrap_or_default()
                ));
            }
            _ => return Err(format!("the sandbox's /proc/self/status has no {set} line")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::host::bwrap_works;

    #[test]
    fn any_capability_left_in_the_sandbox_is_refused() {
        let root = "CapInh:\t0000000000000000\nCapPrm:\t000001ffffffffff\n\
                    CapEff:\t000001ffffffffff\nCapBnd:\t000001ffffffffff\n";
        let err = capabilities_dropped(root).unwrap_err();
        assert!(err.contains("CapEff: 000001ffffffffff"), "{err}");
        let dropped = "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n\
                       CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n";
        assert_eq!(capabilities_dropped(dropped), Ok(()));
        assert!(capabilities_dropped("Name: cat\n").is_err());
    }

    #[test]
    fn a_sandbox_without_the_seccomp_filter_is_refused() {
        assert_eq!(filtered("Seccomp:\t2\nNoNewPrivs:\t1\n"), Ok(()));
        let err = filtered("NoNewPrivs:\t1\nSeccomp:\t0\n").unwrap_err();
        assert!(err.contains("Seccomp: 0, NoNewPrivs: 1"), "{err}");
        assert!(filtered("Seccomp:\t2\n").is_err());
        assert!(filtered("Name: cat\n").is_err());
    }

    #[test]
    fn a_sandbox_of_another_uid_or_gid_is_refused() {
        let status = "Uid:\t65534\t65534\t65534\t65534\nGid:\t65534\t65534\t65534\t65534\n";
        assert_eq!(runs_as(status, 65534, 65534), Ok(()));
        let root = "Uid:\t0\t0\t0\t0\nGid:\t0\t0\t0\t0\n";
        let err = runs_as(root, 65534, 65534).unwrap_err();
        assert!(err.contains("Uid: 0 0 0 0, expected 65534"), "{err}");
        let saved_root = "Uid:\t65534\t65534\t0\t65534\nGid:\t65534\t65534\t65534\t65534\n";
        assert!(runs_as(saved_root, 65534, 65534).is_err());
        assert!(runs_as("Name: cat\n", 65534, 65534).is_err());
    }

    #[test]
    fn the_harness_sandbox_holds_no_capability_even_as_root() {
        if !bwrap_works() {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "CI=true: bwrap does not work here"
            );
            eprintln!("skipping: bwrap does not work here");
            return;
        }
        assert_eq!(check_confined(), Ok(()));
    }
}
