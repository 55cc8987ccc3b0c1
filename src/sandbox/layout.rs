//! The layout of one bubblewrap sandbox (agent, verify command, replayed `run` action):
//! bwrap's arguments from what the run hides and shows. Deny by default: the sandbox
//! starts from an empty root and shows only the [`Allowlist`] (system directories read
//! only, `PATH` toolchains), the places the caller names, and one writable tree.
//!
//! The mounts, made shallowest path first (so that a wider bind never covers a mask or
//! a narrower bind made after it):
//!
//! | mount | why |
//! | --- | --- |
//! | `--ro-bind` each shown system dir and `PATH` toolchain, `--symlink` for `/bin -> usr/bin` | what a toolchain needs, read only |
//! | `--dev /dev`, `--proc /proc` | a private /dev and /proc |
//! | `--size N --tmpfs` on `/tmp`, `/run`, `/dev/shm` | private, empty, bounded places for temporary files (no host socket of `/run`) |
//! | `--ro-bind` each readable place | the program, the harness's binary, the prompt, `sandbox_ro` |
//! | `--bind` the work directory and each writable place | the one persistent writable tree, the effects log, the usage file, the trial's HOME, `sandbox_rw` |
//! | `--ro-bind /dev/null` or an empty `--tmpfs` over each masked secret and each hidden place inside a shown one | `/etc/shadow`, host keys; a run directory under /usr |
//! | `--remount-ro` each masking tmpfs, then `/` | the sandbox's own root stays empty and read-only |
//!
//! plus its own IPC, UTS, PID and network namespaces (never the host's network: an agent
//! whose arm declares targets reaches them through the proxy socket bound in as one of
//! its writable files, [`super::net`]), `--cap-drop ALL` (no capability, so no mount can be undone from
//! inside), `--die-with-parent` and `--new-session` (no keystrokes pushed into the
//! harness's terminal). Under `--new-session` the agent leaves the harness's process
//! group; a timeout's SIGTERM reaches bwrap, whose death takes the whole PID namespace
//! with it. No cgroup namespace: the first program joins the session's cgroups by their
//! host paths, which a cgroup namespace rooted at the harness's own cgroup would hide
//! under cgroup v2.
//!
//! Who runs inside depends on who runs the harness ([`RunAs`]):
//! - an ordinary user: a user namespace of that user (`--unshare-user`, and
//!   `--disable-userns` where bwrap supports it, so no nested user namespace), the
//!   private `/tmp` and `/dev/shm` its own;
//! - root: no user namespace, so that the host uid can change; bwrap keeps only the
//!   capabilities to switch user for the first program, `setpriv`, which becomes the
//!   unprivileged [`super::SandboxUser`] with none left. A root-owned `0600` file in a
//!   shown directory is then as unreadable as to any other user; the private `/tmp` and
//!   `/dev/shm` are sticky and world-writable (`1777`) as on a host. Mounts the
//!   sandbox inherits into a user namespace it makes itself are locked, so that cannot
//!   undo them either.

use std::ffi::OsString;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::allowlist::{Allowlist, Shown};
use super::container::TaskContainer;
use super::host;
use super::limits::Limits;
use super::user::RunAs;

/// How large each private `/tmp`, `/run` and `/dev/shm` may grow, unless the run says.
pub const DEFAULT_TMP_BYTES: u64 = 256 * 1024 * 1024;

/// What every sandbox of a run hides and shows: everything outside the host's
/// [`Allowlist`] is absent; these places (the scratch root holding every trial's work
/// directory, the run directory, every task's `oracle/`) are covered even where they lie
/// inside a shown place. Canonical paths, so that a symlink cannot lead around them.
#[derive(Debug, Clone)]
pub struct Hidden {
    dirs: Vec<PathBuf>,
    allowlist: Arc<Allowlist>,
    tmp_bytes: u64,
    limits: Option<Limits>,
    run_as: Option<RunAs>,
    image: Option<Arc<TaskContainer>>,
}

impl Default for Hidden {
    fn default() -> Self {
        Hidden::new(Vec::new())
    }
}

impl Hidden {
    /// The hidden places of a run writing to `run_dir` over tasks in `task_dirs`.
    pub fn for_run<'a>(run_dir: &Path, task_dirs: impl IntoIterator<Item = &'a Path>) -> Hidden {
        let mut dirs = vec![crate::fsutil::scratch_root(), run_dir.to_path_buf()];
        dirs.extend(task_dirs.into_iter().map(|t| t.join("oracle")));
        Hidden::new(dirs)
    }

    fn new(dirs: Vec<PathBuf>) -> Hidden {
        let canon = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let mut dirs: Vec<PathBuf> = dirs
            .iter()
            .filter(|p| p.is_dir())
            .map(|p| canon(p))
            .collect();
        dirs.sort();
        dirs.dedup();
        let allowlist = Arc::new(Allowlist::of_host(
            std::env::var_os("PATH").as_deref(),
            &dirs,
        ));
        Hidden {
            dirs,
            allowlist,
            tmp_bytes: DEFAULT_TMP_BYTES,
            limits: None,
            run_as: RunAs::for_layouts(),
            image: None,
        }
    }

    /// The same, with every sandbox a fresh container of `image` (a task's) instead
    /// of bubblewrap over the host's system.
    pub fn in_image(mut self, image: Arc<TaskContainer>) -> Hidden {
        self.image = Some(image);
        self
    }

    /// The same, with every sandbox of the run in a cgroup of its own with `limits`
    /// (where the machine allows cgroups).
    pub fn with_limits(mut self, limits: Limits) -> Hidden {
        self.limits = Some(limits);
        self
    }

    /// The same, with each private `/tmp`, `/run` and `/dev/shm` bounded to `bytes`.
    pub fn with_tmp_bytes(mut self, bytes: u64) -> Hidden {
        self.tmp_bytes = bytes.max(1);
        self
    }

    /// The unprivileged user a root harness's sandboxes run as; `None`: the harness's
    /// own user.
    pub fn run_as(&self) -> Option<&RunAs> {
        self.run_as.as_ref()
    }

    /// The limits of each sandbox's cgroup, when the run sets them.
    pub fn limits(&self) -> Option<Limits> {
        self.limits
    }

    /// The directories, canonical.
    pub fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// What the sandbox shows of the host.
    pub fn allowlist(&self) -> &Allowlist {
        &self.allowlist
    }

    /// A layout with `tree` as its one writable tree and working directory, plus
    /// `writable_files` and `writable_dirs` outside it (they must exist); everything
    /// else of the host absent or read-only, no network. A verify command's scratch
    /// copy or a replayed `run` action.
    pub fn layout(&self, tree: &Path, writable_files: &[&Path], writable_dirs: &[&Path]) -> Layout {
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        Layout {
            work_dir: abs(tree),
            start_dir: None,
            writable_files: writable_files.iter().map(|f| abs(f)).collect(),
            writable_dirs: writable_dirs.iter().map(|d| abs(d)).collect(),
            declared_rw: Vec::new(),
            readable: Vec::new(),
            read_by_user: Vec::new(),
            hidden: self.dirs.clone(),
            allowlist: self.allowlist.clone(),
            tmp_bytes: self.tmp_bytes,
            limits: self.limits,
            run_as: self.run_as.clone(),
            supervises: false,
            image: self.image.clone(),
        }
    }
}

/// Paths of one sandboxed process.
#[derive(Debug, Clone)]
pub struct Layout {
    /// The work directory: writable, the agent's cwd.
    pub work_dir: PathBuf,
    /// Where the process starts instead, inside `work_dir` (a replayed `run` action
    /// whose shell had `cd`'d into a subdirectory); `None`: `work_dir`.
    pub start_dir: Option<PathBuf>,
    /// Files outside the work directory the agent may write (they must exist).
    pub writable_files: Vec<PathBuf>,
    /// Directories outside the work directory the agent may write (they must exist):
    /// the harness's own, handed over to the sandbox's user before it starts.
    pub writable_dirs: Vec<PathBuf>,
    /// Writable directories the suite or a wrapper declares (`sandbox_rw`): the user's
    /// own places, never handed over (a root harness checks the sandbox's user may
    /// write them).
    pub declared_rw: Vec<PathBuf>,
    /// Files and directories shown read-only at their own path: the program, the
    /// harness's binary, the prompt, an agent's `sandbox_ro`.
    pub readable: Vec<PathBuf>,
    /// Files among `readable` that the harness writes for the sandbox (the prompt): a
    /// root harness hands them over to the sandbox's user, who must read them.
    pub read_by_user: Vec<PathBuf>,
    /// Places covered wherever they lie inside a shown one.
    pub hidden: Vec<PathBuf>,
    /// What the sandbox shows of the host.
    pub allowlist: Arc<Allowlist>,
    /// The size of each private `/tmp`, `/run` and `/dev/shm`.
    pub tmp_bytes: u64,
    /// The limits of the cgroup the sandbox runs in; `None`: no cgroup.
    pub limits: Option<Limits>,
    /// The unprivileged user the sandboxed program becomes (a root harness); `None`:
    /// the harness's own user, in a user namespace.
    pub run_as: Option<RunAs>,
    /// The first program is the supervisor of a batch of checks (`batch.rs`), which
    /// stays uid 0 and also keeps `CAP_KILL`, to stop and clear away each check, and is
    /// the PID namespace's pid 1 (no init of bubblewrap's before it); only with
    /// `run_as`.
    pub supervises: bool,
    /// The task's image, when the sandbox is a fresh container of it instead of
    /// bubblewrap over the host's system (`container/confined.rs`: the allowlist, the
    /// hidden places and the cgroup are then the image's and the engine's business).
    pub image: Option<Arc<TaskContainer>>,
}

impl Layout {
    /// bwrap's arguments up to and including `--`, to be followed by the program and
    /// its arguments.
    ///
    /// Mounts are made shallowest path first (binds before masks at the same depth), so
    /// that a mask always covers what a wider bind showed and a place bound on purpose
    /// inside a masked one (the trial's HOME inside the hidden run directory) shows
    /// through it.
    pub fn bwrap_args(&self) -> Vec<OsString> {
        let mut args = Args::default();
        self.push_isolation(&mut args);
        let (mounts, masked) = self.mounts();
        push_mounts(&mut args, &mounts, &masked);
        args.push(
            "--chdir",
            &[self.start_dir.as_ref().unwrap_or(&self.work_dir)],
        );
        args.push("--", &[]);
        args.0
    }

    /// The namespaces (the network's always), the capabilities (none, but those the
    /// switch of user needs under a root harness), and the session's ties to the
    /// harness.
    fn push_isolation(&self, args: &mut Args) {
        for ns in [
            "--unshare-ipc",
            "--unshare-uts",
            "--unshare-pid",
            "--unshare-net",
        ] {
            args.push(ns, &[]);
        }
        match &self.run_as {
            None => {
                args.push("--unshare-user", &[]);
                if host::disables_userns() {
                    args.push("--disable-userns", &[]);
                }
                args.push("--cap-drop", &[Path::new("ALL")]);
            }
            Some(_) => {
                args.push("--cap-drop", &[Path::new("ALL")]);
                for cap in RunAs::SWITCH_CAPS {
                    args.push("--cap-add", &[Path::new(cap)]);
                }
                if self.supervises {
                    args.push("--cap-add", &[Path::new("CAP_KILL")]);
                    // The supervisor is the namespace's init, and reaps as one.
                    args.push("--as-pid-1", &[]);
                }
            }
        }
        for flag in ["--die-with-parent", "--new-session"] {
            args.push(flag, &[]);
        }
    }

    /// Every mount of the sandbox, shallowest path first (binds before masks at one
    /// depth), and the masked places among them.
    fn mounts(&self) -> (Vec<Mount>, Vec<PathBuf>) {
        let size = self.tmp_bytes.to_string();
        let mut mounts: Vec<Mount> = Vec::new();
        for shown in &self.allowlist.shown {
            mounts.push(match shown {
                Shown::Bind(dir) => Mount::ReadOnly(dir.clone()),
                Shown::Symlink { link, target } => Mount::Symlink(link.clone(), target.clone()),
            });
        }
        mounts.push(Mount::Special("--dev", "/dev".into()));
        mounts.push(Mount::Special("--proc", "/proc".into()));
        for (tmp, perms) in [("/tmp", "1777"), ("/run", "0755"), ("/dev/shm", "1777")] {
            mounts.push(Mount::Tmpfs(tmp.into(), size.clone(), perms));
        }
        mounts.extend(self.readable.iter().cloned().map(Mount::ReadOnly));
        if let Some(run_as) = &self.run_as
            && !self.allowlist.shows(&run_as.setpriv)
        {
            mounts.push(Mount::ReadOnly(run_as.setpriv.clone()));
        }
        mounts.push(Mount::ReadWrite(self.work_dir.clone()));
        mounts.extend(
            self.writable_files
                .iter()
                .chain(&self.writable_dirs)
                .chain(&self.declared_rw)
                .cloned()
                .map(Mount::ReadWrite),
        );
        let visible = |p: &Path| {
            self.allowlist.shows(p)
                || self
                    .readable
                    .iter()
                    .chain(&self.writable_dirs)
                    .chain(&self.declared_rw)
                    .any(|r| p.starts_with(r))
        };
        let masked: Vec<PathBuf> = self
            .allowlist
            .masked
            .iter()
            .chain(self.hidden.iter().filter(|h| visible(h)))
            .cloned()
            .collect();
        mounts.extend(masked.iter().cloned().map(Mount::Mask));
        // Stable: the order above breaks ties, binds before masks at one depth.
        mounts.sort_by_key(|m| (m.path().components().count(), matches!(m, Mount::Mask(_))));
        (mounts, masked)
    }

    /// Hands the places the harness lets the sandbox write (the work directory, the
    /// writable files and the harness's writable directories, everything under them)
    /// over to the sandbox's user, when a root harness runs it as another user. Called
    /// before every start: the harness itself writes into them between sessions.
    pub fn hand_over(&self) -> std::io::Result<()> {
        let Some(run_as) = &self.run_as else {
            return Ok(());
        };
        let paths: Vec<&Path> = std::iter::once(&self.work_dir)
            .chain(&self.writable_files)
            .chain(&self.writable_dirs)
            .map(PathBuf::as_path)
            .collect();
        run_as.user.hand_over(&paths)?;
        // bwrap changes into the start directory after it dropped its capabilities and
        // before the switch of user: as a uid 0 that owns nothing there, which reads
        // only the bits for others. Under a umask such as 027 the harness made these
        // directories without them, so each, from the work directory down, gets `o+x`
        // (passing through, not listing).
        let start = self.start_dir.as_deref().unwrap_or(&self.work_dir);
        for dir in start
            .ancestors()
            .take_while(|d| d.starts_with(&self.work_dir))
        {
            let Ok(meta) = std::fs::symlink_metadata(dir) else {
                continue;
            };
            if meta.is_dir() && meta.mode() & 0o001 == 0 {
                let mode = (meta.mode() & 0o7777) | 0o001;
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))?;
            }
        }
        Ok(())
    }

    /// What goes between bwrap's arguments (after any cgroup join) and the sandboxed
    /// program: the switch to [`RunAs`]'s user, or nothing.
    pub fn entry_args(&self) -> Vec<OsString> {
        self.run_as
            .as_ref()
            .map(RunAs::entry_args)
            .unwrap_or_default()
    }
}

/// bwrap's arguments of one sandbox, as they are built.
#[derive(Default)]
struct Args(Vec<OsString>);

impl Args {
    fn push(&mut self, flag: &str, paths: &[&Path]) {
        self.0.push(flag.into());
        self.0
            .extend(paths.iter().map(|p| p.as_os_str().to_owned()));
    }
}

/// The arguments that make `mounts` in their order, each mount point's missing parents
/// first, then the read-only remounts of the `masked` directories and of `/`.
fn push_mounts(args: &mut Args, mounts: &[Mount], masked: &[PathBuf]) {
    // bwrap makes the missing parents of a mount point itself, but bwrap 0.8 makes
    // them `0700`: fine for a user namespace of the harness's own user, a wall for
    // the sandbox's user of a root harness. So every parent is made `0755` first
    // (a no-op where it exists).
    let mut made: std::collections::BTreeSet<&Path> = std::collections::BTreeSet::new();
    for mount in mounts {
        let mut parents: Vec<&Path> = mount.path().ancestors().skip(1).collect();
        parents.pop(); // `/`
        for parent in parents.into_iter().rev() {
            if made.insert(parent) {
                args.push("--perms", &[Path::new("0755")]);
                args.push("--dir", &[parent]);
            }
        }
        made.insert(mount.path());
        match mount {
            Mount::ReadOnly(p) => args.push("--ro-bind", &[p, p]),
            Mount::ReadWrite(p) => args.push("--bind", &[p, p]),
            Mount::Symlink(link, target) => args.push("--symlink", &[target, link]),
            Mount::Special(flag, p) => args.push(flag, &[p]),
            Mount::Tmpfs(p, size, perms) => {
                args.push("--perms", &[Path::new(perms)]);
                args.push("--size", &[Path::new(size)]);
                args.push("--tmpfs", &[p]);
            }
            Mount::Mask(p) if p.is_dir() => {
                args.push("--size", &[Path::new("4096")]);
                args.push("--tmpfs", &[p]);
            }
            Mount::Mask(p) => args.push("--ro-bind", &[Path::new("/dev/null"), p]),
        }
    }
    // Read-only last, so that binds inside a masked directory could still be made.
    for dir in masked.iter().filter(|m| m.is_dir()) {
        args.push("--remount-ro", &[dir]);
    }
    args.push("--remount-ro", &[Path::new("/")]);
}

/// One mount of a sandbox.
enum Mount {
    ReadOnly(PathBuf),
    ReadWrite(PathBuf),
    Symlink(PathBuf, PathBuf),
    Special(&'static str, PathBuf),
    /// Path, size, permission bits.
    Tmpfs(PathBuf, String, &'static str),
    /// A secret or a hidden place inside a shown one: an empty directory or file.
    Mask(PathBuf),
}

impl Mount {
    fn path(&self) -> &Path {
        match self {
            Mount::ReadOnly(p)
            | Mount::ReadWrite(p)
            | Mount::Symlink(p, _)
            | Mount::Special(_, p)
            | Mount::Tmpfs(p, _, _)
            | Mount::Mask(p) => p,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        Layout {
            work_dir: "/dev/shm/t1/work".into(),
            start_dir: None,
            writable_files: vec!["/dev/shm/t1/effects.log".into()],
            writable_dirs: vec!["/dev/shm/t1/state".into()],
            declared_rw: Vec::new(),
            readable: vec!["/dev/shm/t1/prompt.md".into()],
            read_by_user: Vec::new(),
            hidden: vec!["/usr/srv/run".into(), "/srv/suite/tasks/a/oracle".into()],
            allowlist: Arc::new(Allowlist {
                shown: vec![
                    Shown::Bind("/usr".into()),
                    Shown::Symlink {
                        link: "/bin".into(),
                        target: "usr/bin".into(),
                    },
                ],
                masked: vec!["/usr/secret".into()],
                skipped: Vec::new(),
            }),
            tmp_bytes: 1024,
            limits: None,
            run_as: None,
            supervises: false,
            image: None,
        }
    }

    fn strings(args: Vec<OsString>) -> Vec<String> {
        args.into_iter().map(|a| a.into_string().unwrap()).collect()
    }

    #[test]
    fn every_sandbox_has_a_network_namespace_of_its_own() {
        let args = strings(layout().bwrap_args());
        assert!(args.iter().any(|a| a == "--unshare-net"), "{args:?}");
        assert!(!args.iter().any(|a| a == "--share-net"), "{args:?}");
    }

    #[test]
    fn an_ordinary_user_gets_a_user_namespace_and_no_capability_to_keep() {
        let joined = strings(layout().bwrap_args()).join(" ");
        assert!(joined.contains("--unshare-user"), "{joined}");
        assert!(!joined.contains("--cap-add"), "{joined}");
        assert!(layout().entry_args().is_empty());
    }

    #[test]
    fn a_root_harness_switches_to_the_sandbox_user_without_a_user_namespace() {
        let rooted = Layout {
            run_as: Some(RunAs {
                user: super::super::SandboxUser {
                    uid: 4242,
                    gid: 4343,
                },
                setpriv: "/opt/util/setpriv".into(),
            }),
            ..layout()
        };
        let supervisor = Layout {
            supervises: true,
            ..rooted.clone()
        };
        let kept = strings(supervisor.bwrap_args()).join(" ");
        assert!(
            kept.contains("--cap-add CAP_SETPCAP --cap-add CAP_KILL"),
            "{kept}"
        );
        let joined = strings(rooted.bwrap_args()).join(" ");
        assert!(!joined.contains("CAP_KILL"), "{joined}");
        // A user namespace of root's would map the sandbox to host uid 0 again.
        assert!(!joined.contains("--unshare-user"), "{joined}");
        assert!(
            joined.contains(
                "--cap-drop ALL --cap-add CAP_SETUID --cap-add CAP_SETGID --cap-add CAP_SETPCAP"
            ),
            "{joined}"
        );
        // setpriv outside the shown places is bound so that it can run.
        assert!(
            joined.contains("--ro-bind /opt/util/setpriv /opt/util/setpriv"),
            "{joined}"
        );
        assert!(
            joined.contains("--perms 1777 --size 1024 --tmpfs /tmp"),
            "{joined}"
        );
        assert_eq!(
            strings(rooted.entry_args()),
            [
                "/opt/util/setpriv",
                "--reuid=4242",
                "--regid=4343",
                "--clear-groups",
                "--bounding-set=-all",
                "--inh-caps=-all",
                "--"
            ]
        );
    }

    #[test]
    fn only_the_allowlist_is_shown_and_every_capability_is_dropped() {
        let args = strings(layout().bwrap_args());
        let joined = args.join(" ");
        assert!(!joined.contains("--ro-bind / /"), "{joined}");
        assert!(joined.contains("--cap-drop ALL"), "{joined}");
        assert!(joined.contains("--ro-bind /usr /usr"), "{joined}");
        assert!(joined.contains("--symlink usr/bin /bin"), "{joined}");
        for tmp in ["/tmp", "/run", "/dev/shm"] {
            assert!(
                joined.contains(&format!("--size 1024 --tmpfs {tmp}")),
                "{tmp}: {joined}"
            );
        }
        assert!(
            joined.contains("--ro-bind /dev/null /usr/secret"),
            "{joined}"
        );
        assert!(joined.contains("--ro-bind /dev/shm/t1/prompt.md /dev/shm/t1/prompt.md"));
        assert!(
            joined.ends_with("--remount-ro / --chdir /dev/shm/t1/work --"),
            "{joined}"
        );
        // The private /dev/shm before the work directory inside it.
        let at = |s: &str| args.iter().position(|a| a == s).unwrap();
        assert!(at("/dev/shm") < at("/dev/shm/t1/work"));
    }

    #[test]
    fn hidden_places_inside_a_shown_one_are_covered_before_the_work_directory_is_bound() {
        let args = strings(layout().bwrap_args());
        let at = |s: &str| args.iter().position(|a| a == s).unwrap();
        // /usr/srv/run lies in the shown /usr; the oracle under /srv is not shown at all.
        assert!(at("/usr/srv/run") < at("/dev/shm/t1/work"));
        assert!(!args.contains(&"/srv/suite/tasks/a/oracle".to_string()));
        for flag in ["--unshare-pid", "--die-with-parent", "--new-session"] {
            assert!(args.contains(&flag.to_string()), "{flag}");
        }
        let inside = Layout {
            start_dir: Some("/dev/shm/t1/work/tests".into()),
            ..layout()
        };
        let args = inside.bwrap_args();
        let chdir = args.iter().position(|a| a == "--chdir").unwrap();
        assert_eq!(args[chdir + 1], "/dev/shm/t1/work/tests");
    }
}
