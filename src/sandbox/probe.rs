//! What this machine's bubblewrap can do, probed before anything runs: whether it is
//! installed and can create its namespaces, whether it can forbid nested user
//! namespaces, and whether a sandbox really holds no capability (the harness refuses
//! to run otherwise, as root above all).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use super::layout::{BWRAP, Hidden};
use crate::error::{Error, Result};

/// Checks that bwrap is installed and can create its namespaces here, for the agent
/// `agent`. The error (exit 2) names the agent and how to install bwrap.
pub fn check_bwrap(agent: &str) -> Result<()> {
    check_bwrap_for(&format!("agent '{agent}' uses sandbox = \"bwrap\""))
}

/// [`check_bwrap`] for whatever `needs` says wants the sandbox ("the suite sets
/// verify_sandbox = \"bwrap\""). Also checks, once, that a sandbox holds no capability.
pub fn check_bwrap_for(needs: &str) -> Result<()> {
    let Some(bwrap) = find_program(BWRAP, std::env::var_os("PATH").as_deref()) else {
        return Err(Error::BadInput(format!(
            "{needs}, but bwrap is not installed \
             (on Debian or Ubuntu: apt-get install bubblewrap)"
        )));
    };
    let out = Command::new(&bwrap)
        .args(["--ro-bind", "/", "/", "--unshare-all", "--die-with-parent"])
        .args(["--new-session", "--", "true"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| {
            Error::BadInput(format!(
                "{needs}, but '{}' cannot be run: {e}",
                bwrap.display()
            ))
        })?;
    if !out.status.success() {
        return Err(Error::BadInput(format!(
            "{needs}, but bwrap cannot create its namespaces \
             on this machine: {} (user namespaces may be disabled, e.g. inside a container)",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    check_confined().map_err(|why| Error::BadInput(format!("{needs}, but {why}")))
}

/// Whether bwrap is installed and works here. Probed once.
pub fn bwrap_works() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| check_bwrap_for("probe").is_ok())
}

/// Whether this bwrap takes `--unshare-user --disable-userns` (0.8 and later, where
/// user namespaces work): a sandbox then cannot make a nested user namespace, in
/// which it would hold every capability again. Probed once.
pub fn disables_userns() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(|| {
        Command::new(BWRAP)
            .args(["--ro-bind", "/", "/", "--unshare-all", "--unshare-user"])
            .args(["--disable-userns", "--cap-drop", "ALL", "--", "true"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    })
}

/// Checks, once per process, that a process in the sandbox the harness builds holds no
/// capability: `CapEff`, `CapPrm` and `CapBnd` of `/proc/self/status` all zero.
/// `Err` says what was found.
pub fn check_confined() -> std::result::Result<(), String> {
    static CONFINED: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    CONFINED
        .get_or_init(|| {
            let scratch = tempfile::tempdir().map_err(|e| format!("no scratch directory: {e}"))?;
            let layout = Hidden::default().layout(scratch.path(), &[], &[]);
            let out = Command::new(BWRAP)
                .args(layout.bwrap_args())
                .args(["cat", "/proc/self/status"])
                .stdin(Stdio::null())
                .stderr(Stdio::piped())
                .output()
                .map_err(|e| format!("bwrap cannot be run: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "the sandbox cannot start: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            capabilities_dropped(&String::from_utf8_lossy(&out.stdout))
        })
        .clone()
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

/// Resolves a program name as `execvp` would: a name with a `/` is taken as it is, a
/// bare name is looked up in `path` (`$PATH`). `None` when there is no executable file.
pub fn find_program(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let executable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if program.contains('/') {
        let p = PathBuf::from(program);
        return executable(&p).then_some(p);
    }
    if program.is_empty() {
        return None;
    }
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_are_found_on_the_path_or_taken_as_given() {
        let sh = find_program("sh", std::env::var_os("PATH").as_deref()).unwrap();
        assert!(sh.ends_with("sh"));
        assert_eq!(
            find_program("no-such-agent-xyz", Some("/usr/bin".as_ref())),
            None
        );
        assert_eq!(find_program("/nonexistent/agent", None), None);
        assert_eq!(find_program("sh", None), None);
    }

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
    fn the_harness_sandbox_holds_no_capability_even_as_root() {
        if !bwrap_works() {
            eprintln!("skipping: bwrap does not work here");
            return;
        }
        assert_eq!(check_confined(), Ok(()));
    }
}
