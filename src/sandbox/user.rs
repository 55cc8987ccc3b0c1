//! Who the sandboxed processes run as. Dropping every capability is not enough as
//! root: a process of host uid 0 is still the owner of every root-owned file, so a
//! `0600` secret in a shown system directory (a CI runner's token, a cluster's admin
//! key) stays readable by its owner bits. So when the harness runs as root, everything
//! sandboxed runs as an unprivileged user of the host instead, 65534:65534 (`nobody`)
//! unless `LOOPBENCH_SANDBOX_USER=UID:GID` names another, and the harness hands the
//! places the sandbox may write (the work directory or scratch copy, the trial's HOME,
//! the state directory, the session's files) over to it first. An ordinary user's
//! sandbox runs as that user: it owns nothing the harness could not read anyway.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The variable that names the sandbox's user when the harness runs as root.
pub const SANDBOX_USER_VAR: &str = "LOOPBENCH_SANDBOX_USER";

/// The default sandbox user and group of a root harness (`nobody`, `nogroup`).
pub const DEFAULT_SANDBOX_ID: u32 = 65534;

/// An unprivileged host uid and gid the sandboxed processes of a root harness run as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SandboxUser {
    /// The host uid (never 0).
    pub uid: u32,
    /// The host gid (never 0).
    pub gid: u32,
}

impl Default for SandboxUser {
    fn default() -> Self {
        SandboxUser {
            uid: DEFAULT_SANDBOX_ID,
            gid: DEFAULT_SANDBOX_ID,
        }
    }
}

/// How a root harness drops to its [`SandboxUser`] inside the sandbox: bwrap (without
/// a user namespace, so that the host uid can change) keeps only `CAP_SETUID`,
/// `CAP_SETGID` and `CAP_SETPCAP` for the first program, which is `setpriv`: it clears
/// the supplementary groups, the bounding and inheritable sets, and switches uid and
/// gid, after which the kernel leaves no capability, and `no_new_privs` (set by bwrap)
/// keeps a set-uid program from giving one back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunAs {
    /// Who to become.
    pub user: SandboxUser,
    /// The `setpriv` program (util-linux) on the host, canonical.
    pub setpriv: PathBuf,
}

impl RunAs {
    /// The capabilities bwrap leaves the first program so that it can switch user.
    pub const SWITCH_CAPS: [&'static str; 3] = ["CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP"];

    /// The program and arguments, before the sandboxed program, that switch to the user.
    pub fn entry_args(&self) -> Vec<std::ffi::OsString> {
        vec![
            self.setpriv.clone().into_os_string(),
            format!("--reuid={}", self.user.uid).into(),
            format!("--regid={}", self.user.gid).into(),
            "--clear-groups".into(),
            "--bounding-set=-all".into(),
            "--inh-caps=-all".into(),
            "--".into(),
        ]
    }

    /// The run-as of this harness: `Ok(None)` for an ordinary user; as root, the
    /// configured user and the `setpriv` found on `PATH`. `Err` says why a root
    /// harness cannot run a sandbox as another user (a bad `LOOPBENCH_SANDBOX_USER`, no
    /// `setpriv`), for an exit-2 message. Probed once.
    pub fn of_harness() -> &'static std::result::Result<Option<RunAs>, String> {
        static FOUND: OnceLock<std::result::Result<Option<RunAs>, String>> = OnceLock::new();
        FOUND.get_or_init(|| {
            if !nix::unistd::geteuid().is_root() {
                return Ok(None);
            }
            let user = match std::env::var_os(SANDBOX_USER_VAR) {
                None => SandboxUser::default(),
                Some(text) => SandboxUser::parse(&text.to_string_lossy())
                    .map_err(|why| format!("{SANDBOX_USER_VAR}: {why}"))?,
            };
            let setpriv = super::host::find_program("setpriv", std::env::var_os("PATH").as_deref())
                .ok_or_else(|| {
                    "the harness runs as root, and the sandbox runs agents as an unprivileged \
                     user through setpriv (util-linux), which is not installed \
                     (on Debian or Ubuntu: apt-get install util-linux)"
                        .to_string()
                })?;
            let setpriv = std::fs::canonicalize(&setpriv).unwrap_or(setpriv);
            Ok(Some(RunAs { user, setpriv }))
        })
    }

    /// [`RunAs::of_harness`] for a layout: a root harness whose setting is bad still
    /// never runs a sandbox as root (the run refuses it before anything starts, and a
    /// sandbox built anyway runs as the default user and fails to start without
    /// `setpriv`).
    pub fn for_layouts() -> Option<RunAs> {
        match RunAs::of_harness() {
            Ok(found) => found.clone(),
            Err(_) => Some(RunAs {
                user: SandboxUser::default(),
                setpriv: PathBuf::from("/nonexistent/setpriv"),
            }),
        }
    }
}

impl SandboxUser {
    /// `UID:GID`, as `LOOPBENCH_SANDBOX_USER` and the manifest spell it.
    pub fn spelled(&self) -> String {
        format!("{}:{}", self.uid, self.gid)
    }

    /// Parses `UID:GID` (numbers, neither 0).
    pub fn parse(text: &str) -> std::result::Result<SandboxUser, String> {
        let expected = || format!("expected UID:GID, two numbers other than 0, got '{text}'");
        let (uid, gid) = text.trim().split_once(':').ok_or_else(expected)?;
        let number = |s: &str| s.parse::<u32>().ok().filter(|n| *n != 0 && *n != u32::MAX);
        match (number(uid), number(gid)) {
            (Some(uid), Some(gid)) => Ok(SandboxUser { uid, gid }),
            _ => Err(expected()),
        }
    }

    /// Makes `paths` (each with everything under it, symlinks not followed) owned by
    /// this user, so that the sandbox can write them. A regular file with more than one
    /// link is left as it is: it may be a host file linked into the tree, and handing
    /// it over would hand over the host's file.
    pub fn hand_over(&self, paths: &[&Path]) -> std::io::Result<()> {
        give_to(paths, self.uid, self.gid, false)
    }

    /// Whether this user may read and execute the file `file` by its mode (the agent's
    /// program, which the sandbox binds alone: its directories do not matter).
    pub fn can_run(&self, file: &Path) -> bool {
        std::fs::metadata(file).is_ok_and(|m| {
            let mode = m.mode();
            if m.uid() == self.uid {
                mode & 0o500 == 0o500
            } else if m.gid() == self.gid {
                mode & 0o050 == 0o050
            } else {
                mode & 0o005 == 0o005
            }
        })
    }

    /// Whether this user may write the directory `dir` by its mode (owner, group or
    /// other bits), for a declared `sandbox_rw` place the harness does not hand over.
    pub fn can_write(&self, dir: &Path) -> bool {
        std::fs::metadata(dir).is_ok_and(|m| {
            let mode = m.mode();
            if m.uid() == self.uid {
                mode & 0o300 == 0o300
            } else if m.gid() == self.gid {
                mode & 0o030 == 0o030
            } else {
                mode & 0o003 == 0o003
            }
        })
    }
}

/// Gives `paths` (each with everything under it, symlinks not followed) back to the
/// harness's own user, so that a work directory kept for a person to inspect opens
/// as theirs (root's git refuses a repository another user owns). Set-uid and
/// set-gid bits are cleared on the way: what the sandbox user left must never become
/// a program that runs as the harness's user. A file with more than one link is
/// left as it is, as in [`SandboxUser::hand_over`]. Nothing to do for an ordinary
/// user, whose sandbox wrote as that user.
pub fn take_back(paths: &[&Path]) -> std::io::Result<()> {
    let (uid, gid) = (nix::unistd::geteuid(), nix::unistd::getegid());
    if !uid.is_root() {
        return Ok(());
    }
    give_to(paths, uid.as_raw(), gid.as_raw(), true)
}

/// Makes `paths`, each with everything under it, owned by `uid:gid`: symlinks are not
/// followed, and a regular file with more than one link is left as it is (it may be a
/// host file linked into the tree). `clear_set_id` also clears set-uid and set-gid bits.
fn give_to(paths: &[&Path], uid: u32, gid: u32, clear_set_id: bool) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for path in paths {
        if std::fs::symlink_metadata(path).is_err() {
            continue;
        }
        for entry in walkdir::WalkDir::new(path).follow_links(false) {
            let entry = entry.map_err(std::io::Error::other)?;
            let ft = entry.file_type();
            if ft.is_symlink() {
                continue;
            }
            let meta = entry.metadata().map_err(std::io::Error::other)?;
            if ft.is_file() && meta.nlink() > 1 {
                continue;
            }
            if meta.uid() != uid || meta.gid() != gid {
                std::os::unix::fs::lchown(entry.path(), Some(uid), Some(gid))?;
            }
            if clear_set_id && meta.mode() & 0o6000 != 0 {
                let mode = meta.mode() & 0o7777 & !0o6000;
                std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(mode))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sandbox_user_is_two_numbers_other_than_root() {
        assert_eq!(
            SandboxUser::parse("1234:5678"),
            Ok(SandboxUser {
                uid: 1234,
                gid: 5678
            })
        );
        for bad in [
            "0:0", "0:65534", "65534:0", "nobody", "65534", "a:b", ":", "",
        ] {
            let err = SandboxUser::parse(bad).unwrap_err();
            assert!(err.contains("expected UID:GID"), "{bad}: {err}");
        }
    }

    #[test]
    fn taking_back_a_kept_tree_gives_it_to_root_and_clears_set_id_bits() {
        use std::os::unix::fs::PermissionsExt;
        if !nix::unistd::geteuid().is_root() {
            eprintln!("skipping: only root can change owners");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("tree");
        std::fs::create_dir_all(tree.join("sub")).unwrap();
        let program = tree.join("sub/program");
        std::fs::write(&program, "#!/bin/sh\n").unwrap();
        let host = dir.path().join("host-file");
        std::fs::write(&host, "host").unwrap();
        std::fs::hard_link(&host, tree.join("linked")).unwrap();
        let user = SandboxUser {
            uid: 4242,
            gid: 4343,
        };
        user.hand_over(&[&tree]).unwrap();
        // What the sandbox user could do to its own file.
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o6755)).unwrap();
        std::os::unix::fs::lchown(&host, Some(4242), Some(4343)).unwrap();
        take_back(&[&tree]).unwrap();
        for p in [tree.clone(), tree.join("sub"), program.clone()] {
            let m = std::fs::symlink_metadata(&p).unwrap();
            assert_eq!((m.uid(), m.gid()), (0, 0), "{}", p.display());
        }
        let mode = std::fs::metadata(&program).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o755, "set-id bits survived: {mode:o}");
        let m = std::fs::metadata(&host).unwrap();
        assert_eq!(
            (m.uid(), m.gid()),
            (4242, 4343),
            "a hard-linked file was taken"
        );
    }

    #[test]
    fn handing_over_changes_owners_but_never_a_linked_file_or_a_symlink_target() {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("skipping: only root can change owners");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("tree");
        std::fs::create_dir_all(tree.join("sub")).unwrap();
        std::fs::write(tree.join("sub/file"), "x").unwrap();
        let host = dir.path().join("host-file");
        std::fs::write(&host, "host").unwrap();
        std::fs::hard_link(&host, tree.join("linked")).unwrap();
        std::os::unix::fs::symlink(&host, tree.join("link")).unwrap();
        let user = SandboxUser {
            uid: 4242,
            gid: 4343,
        };
        user.hand_over(&[&tree]).unwrap();
        for p in [tree.clone(), tree.join("sub"), tree.join("sub/file")] {
            let m = std::fs::symlink_metadata(&p).unwrap();
            assert_eq!((m.uid(), m.gid()), (4242, 4343), "{}", p.display());
        }
        let m = std::fs::metadata(&host).unwrap();
        assert_eq!(
            (m.uid(), m.gid()),
            (0, 0),
            "a hard-linked host file was handed over"
        );
        assert!(user.can_write(&tree));
        assert!(!user.can_write(dir.path()));
    }
}
