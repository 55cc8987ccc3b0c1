//! What a sandbox shows of the host: the system directories a toolchain needs (read
//! only, with the secrets among them masked) and the toolchains the harness's `PATH`
//! names. Everything else of the host is absent, so that no home directory or host
//! socket can be read; a task's `oracle/`, a results directory or a trial's scratch
//! directory that the search of [`super::places`] finds inside a shown toolchain or a
//! searched system directory is masked.

use std::path::{Path, PathBuf};

use super::places::answers_inside;

/// Top-level system directories shown read-only when they exist. A top-level symlink
/// among them (`/bin -> usr/bin` on a merged-/usr system) is recreated as the same
/// symlink instead.
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];

/// Secrets inside the shown system directories, masked by an empty file or directory:
/// password hashes, sudo rules, host keys and private TLS keys, stored credentials.
pub const SYSTEM_SECRETS: &[&str] = &[
    "/etc/shadow",
    "/etc/shadow-",
    "/etc/gshadow",
    "/etc/gshadow-",
    "/etc/sudoers",
    "/etc/sudoers.d",
    "/etc/security/opasswd",
    "/etc/ssl/private",
    "/etc/pki/tls/private",
    "/etc/krb5.keytab",
    "/etc/docker",
    "/etc/containers/auth.json",
    "/etc/letsencrypt",
    "/etc/wireguard",
    "/etc/NetworkManager/system-connections",
    "/etc/credstore",
    "/etc/credstore.encrypted",
];

/// Credential files a toolchain directory may hold, masked where it is shown.
const TOOLCHAIN_SECRETS: &[&str] = &["credentials", "credentials.toml", ".credentials.json"];

/// One place of the host the sandbox shows, read-only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shown {
    /// A directory or file bound at its own path.
    Bind(PathBuf),
    /// A top-level symlink recreated: `link` points at `target`.
    Symlink {
        /// The link's path (`/bin`).
        link: PathBuf,
        /// What it points at, as written (`usr/bin`).
        target: PathBuf,
    },
}

/// The host places every sandbox shows, computed once from the machine and `PATH`, and
/// the secrets masked inside them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Allowlist {
    /// Shown read-only, in mount order.
    pub shown: Vec<Shown>,
    /// Files and directories inside shown places that are masked.
    pub masked: Vec<PathBuf>,
    /// `PATH` entries left out, with the reason (printed by `validate`).
    pub skipped: Vec<(PathBuf, &'static str)>,
}

impl Allowlist {
    /// The allowlist of this machine for the harness's `PATH`, never showing anything
    /// that contains one of `hidden` (a run directory, an `oracle/`, the scratch root).
    pub fn of_host(path: Option<&std::ffi::OsStr>, hidden: &[PathBuf]) -> Allowlist {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        Allowlist::build(Path::new("/"), path, home.as_deref(), hidden)
    }

    /// [`Allowlist::of_host`] over a machine whose root is `root` (tests build one in
    /// a temporary directory); the paths returned are host paths under `root`.
    pub fn build(
        root: &Path,
        path: Option<&std::ffi::OsStr>,
        home: Option<&Path>,
        hidden: &[PathBuf],
    ) -> Allowlist {
        let at = |p: &str| root.join(p.trim_start_matches('/'));
        let mut list = Allowlist::default();
        for dir in SYSTEM_DIRS {
            let host = at(dir);
            let Ok(meta) = std::fs::symlink_metadata(&host) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                if let Ok(target) = std::fs::read_link(&host) {
                    list.shown.push(Shown::Symlink { link: host, target });
                }
            } else if meta.is_dir() {
                list.shown.push(Shown::Bind(host));
            }
        }
        let system: Vec<PathBuf> = SYSTEM_DIRS
            .iter()
            .filter_map(|d| std::fs::canonicalize(at(d)).ok())
            .collect();
        list.masked.extend(
            SYSTEM_SECRETS
                .iter()
                .map(|s| at(s))
                .filter(|p| std::fs::symlink_metadata(p).is_ok()),
        );
        list.masked.extend(host_keys(&at("/etc/ssh")));
        for dir in super::places::SEARCHED_SYSTEM_DIRS {
            let host = at(dir);
            if host.is_dir() && list.shows(&host) {
                list.masked
                    .extend(answers_inside(&host).into_iter().map(|a| a.path));
            }
        }
        for entry in path.map(std::env::split_paths).into_iter().flatten() {
            match toolchain_dir(&entry, root, home, &system, hidden) {
                Ok(Some(dir)) => {
                    let inside_shown = list.shown.iter().any(|s| match s {
                        Shown::Bind(d) => dir.starts_with(d),
                        Shown::Symlink { .. } => false,
                    });
                    if inside_shown {
                        continue;
                    }
                    // A later, wider directory (~/.pyenv after ~/.pyenv/plugins/x)
                    // replaces the narrower ones it holds.
                    list.shown
                        .retain(|s| !matches!(s, Shown::Bind(d) if d.starts_with(&dir)));
                    list.masked.retain(|m| !m.starts_with(&dir));
                    list.masked.extend(
                        TOOLCHAIN_SECRETS
                            .iter()
                            .map(|s| dir.join(s))
                            .filter(|p| std::fs::symlink_metadata(p).is_ok()),
                    );
                    list.masked
                        .extend(answers_inside(&dir).into_iter().map(|a| a.path));
                    list.shown.push(Shown::Bind(dir));
                }
                Ok(None) => {}
                Err(why) => list.skipped.push((entry, why)),
            }
        }
        list.masked.sort();
        list.masked.dedup();
        list
    }

    /// Whether `path` lies in a place this list shows (bound, not masked).
    pub fn shows(&self, path: &Path) -> bool {
        let shown = self.shown.iter().any(|s| match s {
            Shown::Bind(d) => path.starts_with(d),
            Shown::Symlink { link, .. } => path.starts_with(link),
        });
        shown && !self.masked.iter().any(|m| path.starts_with(m))
    }
}

/// The private keys of `/etc/ssh` (`ssh_host_*_key`; the `.pub` halves stay).
fn host_keys(ssh: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(ssh) else {
        return Vec::new();
    };
    let mut keys: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("ssh_host_") && n.ends_with("_key"))
        })
        .collect();
    keys.sort();
    keys
}

/// The directory a `PATH` entry brings into the sandbox: the entry itself, or for a
/// `bin`, `sbin` or `shims` directory the toolchain root holding it (`~/.pyenv` for
/// `~/.pyenv/shims`, whose shims run `~/.pyenv/libexec`), never `/`, a home directory
/// or `~/.local` themselves. `Ok(None)`: nothing to add (missing, or a system
/// directory); `Err`: left out for the reason given.
fn toolchain_dir(
    entry: &Path,
    root: &Path,
    home: Option<&Path>,
    system: &[PathBuf],
    hidden: &[PathBuf],
) -> std::result::Result<Option<PathBuf>, &'static str> {
    if !entry.is_absolute() {
        return Err("not an absolute path");
    }
    let Ok(dir) = std::fs::canonicalize(entry) else {
        return Ok(None);
    };
    if !dir.is_dir() || system.iter().any(|s| dir.starts_with(s)) {
        return Ok(None);
    }
    let canon_home = home.and_then(|h| std::fs::canonicalize(h).ok());
    let is_home = |d: &Path| {
        d == root
            || d == root.join("root")
            || d.parent() == Some(&root.join("home"))
            || canon_home.as_deref() == Some(d)
            || d.file_name().is_some_and(|n| n == ".local")
    };
    if is_home(&dir) {
        return Err("a home directory");
    }
    let wider = dir
        .file_name()
        .is_some_and(|n| n == "bin" || n == "sbin" || n == "shims")
        .then(|| dir.parent())
        .flatten()
        .filter(|p| !is_home(p) && !system.iter().any(|s| p.starts_with(s)));
    let chosen = wider.map_or_else(|| dir.clone(), Path::to_path_buf);
    let holds_hidden = |d: &Path| hidden.iter().any(|h| h.starts_with(d));
    if holds_hidden(&chosen) {
        if holds_hidden(&dir) {
            return Err("it holds a place the sandbox hides");
        }
        return Ok(Some(dir));
    }
    Ok(Some(chosen))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn machine() -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        for d in [
            "usr/bin",
            "etc/ssh",
            "root/.pyenv/shims",
            "root/.pyenv/libexec",
            "root/.pyenv/plugins/venv/shims",
            "root/.cargo/bin",
            "root/.ssh",
            "root/.local/bin",
            "home/ann/bin",
            "srv/study/tasks/t/oracle",
            "srv/study/bin",
        ] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        std::os::unix::fs::symlink("usr/bin", r.join("bin")).unwrap();
        for f in [
            "etc/shadow",
            "etc/ssh/ssh_host_ed25519_key",
            "etc/ssh/ssh_host_ed25519_key.pub",
            "root/.cargo/credentials.toml",
        ] {
            std::fs::write(r.join(f), "secret").unwrap();
        }
        root
    }

    fn path_of(root: &Path, entries: &[&str]) -> std::ffi::OsString {
        std::env::join_paths(entries.iter().map(|e| root.join(e.trim_start_matches('/')))).unwrap()
    }

    #[test]
    fn the_system_is_shown_with_its_secrets_masked() {
        let m = machine();
        let r = std::fs::canonicalize(m.path()).unwrap();
        let list = Allowlist::build(&r, None, None, &[]);
        assert!(list.shown.contains(&Shown::Bind(r.join("usr"))));
        assert!(list.shown.contains(&Shown::Bind(r.join("etc"))));
        assert!(list.shown.contains(&Shown::Symlink {
            link: r.join("bin"),
            target: "usr/bin".into()
        }));
        assert!(list.masked.contains(&r.join("etc/shadow")));
        assert!(
            list.masked
                .contains(&r.join("etc/ssh/ssh_host_ed25519_key"))
        );
        assert!(!list.shows(&r.join("etc/ssh/ssh_host_ed25519_key")));
        assert!(list.shows(&r.join("etc/ssh/ssh_host_ed25519_key.pub")));
        assert!(!list.shows(&r.join("root/.ssh")));
        assert!(!list.shows(&r.join("srv/study")));
    }

    #[test]
    fn a_path_toolchain_is_shown_from_its_root_and_never_a_home() {
        let m = machine();
        let r = std::fs::canonicalize(m.path()).unwrap();
        let path = path_of(
            &r,
            &[
                "/root/.pyenv/plugins/venv/shims",
                "/root/.pyenv/shims",
                "/root/.cargo/bin",
                "/root/.local/bin",
                "/home/ann/bin",
                "/usr/bin",
                "/nonexistent/bin",
            ],
        );
        let list = Allowlist::build(&r, Some(&path), Some(&r.join("root")), &[]);
        assert!(list.shows(&r.join("root/.pyenv/libexec")));
        assert!(list.shows(&r.join("root/.pyenv/plugins/venv/shims")));
        assert_eq!(
            list.shown
                .iter()
                .filter(|s| matches!(s, Shown::Bind(d) if d.starts_with(r.join("root/.pyenv"))))
                .count(),
            1,
            "{list:?}"
        );
        assert!(list.shows(&r.join("root/.cargo/bin")));
        assert!(!list.shows(&r.join("root/.cargo/credentials.toml")));
        // ~/.local/bin and ~/bin are shown alone, never their home.
        assert!(list.shows(&r.join("root/.local/bin")));
        assert!(!list.shows(&r.join("root/.local")));
        assert!(list.shows(&r.join("home/ann/bin")));
        assert!(!list.shows(&r.join("home/ann")));
        assert!(!list.shows(&r.join("root/.ssh")));
        assert!(!list.shows(&r.join("root")));
    }

    #[test]
    fn a_path_entry_that_would_show_a_hidden_place_is_narrowed_or_left_out() {
        let m = machine();
        let r = std::fs::canonicalize(m.path()).unwrap();
        let oracle = r.join("srv/study/tasks/t/oracle");
        let path = path_of(&r, &["/srv/study/bin", "/srv/study", "relative/bin"]);
        let path = {
            let mut p = path;
            p.push(":relative/bin");
            p
        };
        let list = Allowlist::build(&r, Some(&path), None, std::slice::from_ref(&oracle));
        // /srv/study/bin would widen to /srv/study, which holds the oracle: only bin.
        assert!(list.shows(&r.join("srv/study/bin")));
        assert!(!list.shows(&oracle));
        let reasons: Vec<&str> = list.skipped.iter().map(|(_, why)| *why).collect();
        assert!(
            reasons.contains(&"it holds a place the sandbox hides"),
            "{reasons:?}"
        );
        assert!(reasons.contains(&"not an absolute path"), "{reasons:?}");
    }

    #[test]
    fn answers_inside_a_toolchain_or_a_searched_system_directory_are_masked() {
        let m = machine();
        let r = std::fs::canonicalize(m.path()).unwrap();
        for d in [
            "opt/tool/bin",
            "opt/tool/share/copy/oracle/gold",
            "srv/s2/bin",
            "srv/s2/out/r",
        ] {
            std::fs::create_dir_all(r.join(d)).unwrap();
        }
        for f in [
            "opt/tool/share/copy/task.toml",
            "srv/s2/out/r/manifest.json",
            "srv/s2/out/r/sessions.jsonl",
            "etc/study/t/task.toml",
        ] {
            std::fs::create_dir_all(r.join(f).parent().unwrap()).unwrap();
            std::fs::write(r.join(f), "x").unwrap();
        }
        std::fs::create_dir_all(r.join("etc/study/t/oracle")).unwrap();
        let _socket =
            std::os::unix::net::UnixListener::bind(r.join("opt/tool/share/daemon.sock")).unwrap();
        let path = path_of(&r, &["/opt/tool/bin", "/srv/s2/bin"]);
        let list = Allowlist::build(&r, Some(&path), None, &[]);
        // A socket in a shown toolchain: masked by an empty file.
        assert!(
            list.masked.contains(&r.join("opt/tool/share/daemon.sock")),
            "{list:?}"
        );
        assert!(list.shows(&r.join("opt/tool/share")));
        assert!(!list.shows(&r.join("opt/tool/share/copy/oracle/gold")));
        assert!(list.shows(&r.join("srv/s2/bin")));
        assert!(!list.shows(&r.join("srv/s2/out/r")), "{list:?}");
        // A task copy in a searched system directory is masked too.
        assert!(list.shows(&r.join("etc/study/t/task.toml")));
        assert!(!list.shows(&r.join("etc/study/t/oracle")));
    }
}
