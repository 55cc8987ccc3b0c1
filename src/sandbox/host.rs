//! What this machine offers a sandbox, looked up once and asked by every part of it:
//! where a program lies on `PATH`, whether bubblewrap is installed and can create its
//! namespaces, and whether it can forbid nested user namespaces. Nothing here starts a
//! sandbox the harness builds; `probe.rs` does that to check one.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

/// The program bubblewrap is run as, looked up on `PATH`.
pub const BWRAP: &str = "bwrap";

/// Whether bwrap is installed and can create its namespaces here (nothing about
/// capabilities: see [`check_confined`]). Probed once.
pub fn bwrap_works() -> bool {
    namespaces().is_ok()
}

/// `Err` says why bwrap cannot make a sandbox here at all. Probed once.
pub(super) fn namespaces() -> std::result::Result<(), String> {
    static FOUND: OnceLock<std::result::Result<(), String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let Some(bwrap) = find_program(BWRAP, std::env::var_os("PATH").as_deref()) else {
                return Err("bwrap is not installed \
                            (on Debian or Ubuntu: apt-get install bubblewrap)"
                    .into());
            };
            let out = Command::new(&bwrap)
                .args(["--ro-bind", "/", "/", "--unshare-all", "--die-with-parent"])
                .args(["--new-session", "--", "true"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .output()
                .map_err(|e| format!("'{}' cannot be run: {e}", bwrap.display()))?;
            if !out.status.success() {
                return Err(format!(
                    "bwrap cannot create its namespaces on this machine: {} \
                     (user namespaces may be disabled, e.g. inside a container)",
                    String::from_utf8_lossy(&out.stderr).trim()
                ));
            }
            Ok(())
        })
        .clone()
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
}
