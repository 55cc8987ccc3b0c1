//! The harness's scratch: where work directories and scratch copies go. Each harness
//! process keeps its scratch in a directory of its own under the scratch root, named
//! for the process (boot, PID namespace, pid and start time), so that what a harness
//! killed with `kill -9` left behind (directories, and the size-bounded mounts of its
//! trials) is recognised and cleared by the next harness that makes scratch on the
//! machine (`resume`, another `run`), and never a live harness's.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::error::{Error, IoContext, Result};

/// The prefix of every harness process's scratch directory.
pub const PROCESS_DIR_PREFIX: &str = "loopbench-run-";

/// Where work directories and scratch copies go: `$LOOPBENCH_TMPDIR` when set, else
/// `/dev/shm` when it is a writable directory (memory-backed: copying and deleting small
/// trees there is several times cheaper than on disk), else the system temp dir.
pub fn scratch_root() -> PathBuf {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        if let Some(dir) = std::env::var_os("LOOPBENCH_TMPDIR") {
            return PathBuf::from(dir);
        }
        let shm = Path::new("/dev/shm");
        let writable = tempfile::Builder::new()
            .prefix("loopbench-probe-")
            .tempdir_in(shm)
            .is_ok();
        if writable {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        }
    })
    .clone()
}

/// Free space below which the harness's scratch filesystem counts as full: a write
/// that failed there failed for want of room.
pub const FULL_BELOW_BYTES: u64 = 1024 * 1024;
/// Free inodes below which the scratch filesystem counts as full.
pub const FULL_BELOW_INODES: u64 = 64;

/// Whether `error` means the harness ran out of room on its own machine: an errno
/// that says so ([`Error::is_resource_exhaustion`]), or a failed write of the harness
/// (its I/O, or git run on its scratch) while the filesystem of [`scratch_root`] is
/// found full. The second is measured by the harness itself, never read from a message,
/// which may quote a file name the agent chose.
pub fn out_of_room(error: &Error) -> bool {
    error.is_resource_exhaustion()
        || (matches!(error, Error::Io { .. } | Error::Tool(_)) && scratch_full(&scratch_root()))
}

/// Whether the filesystem holding `dir` has (nearly) no space or inodes left.
pub fn scratch_full(dir: &Path) -> bool {
    nix::sys::statvfs::statvfs(dir).is_ok_and(|s| {
        let free = s.blocks_available().saturating_mul(s.fragment_size());
        let inodes = s.files_available();
        free < FULL_BELOW_BYTES || (s.files() > 0 && inodes < FULL_BELOW_INODES)
    })
}

/// A fresh temporary directory in this process's scratch directory (made at the first
/// call, which also clears what killed harnesses left; see [`clear_leftovers`]).
pub fn scratch_dir(prefix: &str) -> Result<tempfile::TempDir> {
    let dir = process_dir()?;
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in(dir)
        .io_context(|| format!("cannot create a temporary directory in '{}'", dir.display()))
}

/// This process's scratch directory, once made.
static MADE: OnceLock<PathBuf> = OnceLock::new();

/// The scratch directory of this process, made (and the leftovers of dead harnesses
/// cleared) at the first call; a call after a failed one tries again.
fn process_dir() -> Result<&'static Path> {
    if let Some(dir) = MADE.get() {
        return Ok(dir);
    }
    let root = scratch_root();
    clear_dead_leftovers();
    let dir = root.join(Owner::of_this_process().dir_name());
    // The harness's alone, as each temporary directory in it is.
    let made = {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().mode(0o700).create(&dir)
    };
    match made {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(Error::io(
            format!("cannot create the scratch directory '{}'", dir.display()),
            e,
        )),
        _ => Ok(MADE.get_or_init(|| dir)),
    }
}

/// Clears, once per process, what killed harnesses left in the scratch root
/// ([`clear_leftovers`]): done before this process makes its own scratch, and by
/// `resume` when it starts, whether or not it has a trial left to run.
pub fn clear_dead_leftovers() {
    static CLEARED: std::sync::Once = std::sync::Once::new();
    CLEARED.call_once(|| {
        clear_leftovers(&scratch_root());
    });
}

/// This process's scratch directory, when it made one (to keep a directory beyond the
/// process, move it out: [`keep_out_of_process_dir`]).
pub fn process_scratch() -> Option<&'static Path> {
    MADE.get().map(PathBuf::as_path)
}

/// Moves `dir`, made by [`scratch_dir`], out of this process's scratch directory into
/// the scratch root (same file system, so a rename), so that it outlives the process;
/// returns where it is now.
pub fn keep_out_of_process_dir(dir: &Path) -> Result<PathBuf> {
    let Some(name) = dir.file_name() else {
        return Ok(dir.to_path_buf());
    };
    if dir.parent() != process_scratch() {
        return Ok(dir.to_path_buf());
    }
    let kept = scratch_root().join(name);
    std::fs::rename(dir, &kept)
        .io_context(|| format!("cannot keep '{}' as '{}'", dir.display(), kept.display()))?;
    Ok(kept)
}

/// Removes this process's scratch directory and whatever is still in it (mounts
/// included): called when the command is done. Best effort.
pub fn clear_process_scratch() {
    if let Some(dir) = process_scratch() {
        remove_scratch(dir);
    }
}

/// Clears the scratch directories under `root` that harnesses of this machine left
/// when they were killed: the directory's process (same boot, same PID namespace) is
/// gone, or its pid now names a process that started later. Each one's mounts are
/// detached first. Directories of another user, of a live process, of another boot or
/// PID namespace (another machine or container sharing the scratch) are left alone.
/// Returns the directories cleared.
pub fn clear_leftovers(root: &Path) -> Vec<PathBuf> {
    let mut cleared = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else {
        return cleared;
    };
    let me = Owner::of_this_process();
    let uid = nix::unistd::geteuid().as_raw();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(owner) = name.to_str().and_then(Owner::parse) else {
            continue;
        };
        let ours = std::os::unix::fs::MetadataExt::uid(&match entry.metadata() {
            Ok(m) if m.is_dir() => m,
            _ => continue,
        }) == uid;
        if ours && owner.boot == me.boot && owner.pid_ns == me.pid_ns && !owner.alive() {
            remove_scratch(&entry.path());
            cleared.push(entry.path());
        }
    }
    cleared
}

/// Detaches every mount at or below `dir` (deepest first), then removes it.
fn remove_scratch(dir: &Path) {
    for mount in mounts_under(dir).iter().rev() {
        let _ = nix::mount::umount2(mount, nix::mount::MntFlags::MNT_DETACH);
    }
    remove_tree(dir);
}

/// The mount points at or below `dir`, as `/proc/self/mountinfo` lists them (parents
/// before children).
pub fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    // The kernel lists mount points by their canonical paths.
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    mount_points(&info)
        .into_iter()
        .filter(|p| p.starts_with(&dir))
        .collect()
}

/// The mount points of a `mountinfo` text, in its order, octal escapes (`\040`)
/// undone.
fn mount_points(info: &str) -> Vec<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    info.lines()
        .filter_map(|l| l.split(' ').nth(4))
        .map(|field| {
            let bytes = field.as_bytes();
            let mut out = Vec::with_capacity(bytes.len());
            let mut i = 0;
            while i < bytes.len() {
                let octal = bytes.get(i + 1..i + 4).and_then(|d| {
                    std::str::from_utf8(d)
                        .ok()
                        .and_then(|d| u8::from_str_radix(d, 8).ok())
                });
                match (bytes[i], octal) {
                    (b'\\', Some(b)) => {
                        out.push(b);
                        i += 4;
                    }
                    (b, _) => {
                        out.push(b);
                        i += 1;
                    }
                }
            }
            PathBuf::from(std::ffi::OsString::from_vec(out))
        })
        .collect()
}

/// Removes the tree at `dir`, also where the agent took the write bit off a directory
/// in it (the harness owns everything it removes, or is root).
pub fn remove_tree(dir: &Path) {
    if std::fs::remove_dir_all(dir).is_ok() || std::fs::symlink_metadata(dir).is_err() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    for entry in walkdir::WalkDir::new(dir)
        .follow_links(false)
        .follow_root_links(false)
        .into_iter()
        .flatten()
    {
        if entry.file_type().is_dir() {
            let _ = std::fs::set_permissions(entry.path(), std::fs::Permissions::from_mode(0o700));
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// Which process a scratch directory belongs to: its name says it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    /// The first 8 hex digits of the kernel's boot id.
    boot: String,
    /// The inode of the PID namespace.
    pid_ns: u64,
    pid: i32,
    /// The process's start time, in clock ticks after boot (`/proc/PID/stat`, field 22).
    start: u64,
}

impl Owner {
    /// This process.
    fn of_this_process() -> Owner {
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id")
            .unwrap_or_default()
            .chars()
            .filter(char::is_ascii_hexdigit)
            .take(8)
            .collect::<String>();
        let pid_ns = std::fs::read_link("/proc/self/ns/pid")
            .ok()
            .and_then(|l| {
                let l = l.to_string_lossy().into_owned();
                l.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
            })
            .unwrap_or(0);
        let pid = std::process::id() as i32;
        Owner {
            boot: if boot.is_empty() { "0".into() } else { boot },
            pid_ns,
            pid,
            start: start_time(pid).unwrap_or(0),
        }
    }

    /// `loopbench-run-BOOT-PIDNS-PID-START`, the numbers in hexadecimal of a fixed
    /// width: every process's paths are as long (a CLI sends its HOME's path to the
    /// model, whose answers then do not depend on the pid).
    fn dir_name(&self) -> String {
        format!(
            "{PROCESS_DIR_PREFIX}{}-{:08x}-{:08x}-{:016x}",
            self.boot, self.pid_ns, self.pid, self.start
        )
    }

    /// The owner a directory name gives, `None` for any other name.
    fn parse(name: &str) -> Option<Owner> {
        let mut parts = name.strip_prefix(PROCESS_DIR_PREFIX)?.split('-');
        let owner = Owner {
            boot: parts.next()?.to_string(),
            pid_ns: u64::from_str_radix(parts.next()?, 16).ok()?,
            pid: i32::from_str_radix(parts.next()?, 16).ok()?,
            start: u64::from_str_radix(parts.next()?, 16).ok()?,
        };
        parts.next().is_none().then_some(owner)
    }

    /// Whether the process still runs (the same pid with the same start time).
    fn alive(&self) -> bool {
        start_time(self.pid) == Some(self.start)
    }
}

/// The start time of process `pid` (`/proc/PID/stat`, field 22), `None` when there is
/// no such process.
fn start_time(pid: i32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count after the last.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scratch_directory_name_says_whose_it_is_and_whether_that_process_lives() {
        let me = Owner::of_this_process();
        assert!(me.alive());
        assert_eq!(Owner::parse(&me.dir_name()), Some(me.clone()));
        let reused = Owner {
            start: me.start + 1,
            ..me.clone()
        };
        assert!(!reused.alive(), "a later process under the same pid");
        for other in [
            "loopbench-trial-x",
            "loopbench-run-ab-1-2",
            "loopbench-run-ab-1-2-3-4",
        ] {
            assert_eq!(Owner::parse(other), None, "{other}");
        }
    }

    #[test]
    fn only_the_leftovers_of_dead_processes_of_this_boot_and_namespace_are_cleared() {
        let root = tempfile::tempdir().unwrap();
        let me = Owner::of_this_process();
        let dead = Owner {
            pid: i32::MAX - 7,
            ..me.clone()
        };
        let other_boot = Owner {
            boot: "ffffffff".into(),
            ..dead.clone()
        };
        let other_ns = Owner {
            pid_ns: me.pid_ns + 1,
            ..dead.clone()
        };
        for owner in [&me, &dead, &other_boot, &other_ns] {
            let dir = root.path().join(owner.dir_name());
            std::fs::create_dir_all(dir.join("loopbench-trial-1/work")).unwrap();
        }
        // A directory the agent made unwritable does not keep the leftover.
        use std::os::unix::fs::PermissionsExt;
        let locked = root
            .path()
            .join(dead.dir_name())
            .join("loopbench-trial-1/work");
        std::fs::write(locked.join("f"), "x").unwrap();
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).unwrap();
        std::fs::create_dir(root.path().join("loopbench-trial-unrelated")).unwrap();
        let cleared = clear_leftovers(root.path());
        assert_eq!(cleared, vec![root.path().join(dead.dir_name())]);
        let mut left: Vec<String> = std::fs::read_dir(root.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        let mut expected = vec![
            me.dir_name(),
            other_boot.dir_name(),
            other_ns.dir_name(),
            "loopbench-trial-unrelated".to_string(),
        ];
        expected.sort();
        assert_eq!(left, expected);
    }

    #[test]
    fn mount_points_are_read_with_their_escapes_undone() {
        let info = "22 27 0:21 / /proc rw,relatime - proc proc rw\n\
                    90 25 0:50 / /dev/shm/a\\040b/work rw - tmpfs loopbench rw,size=1024k\n";
        assert_eq!(
            mount_points(info),
            [PathBuf::from("/proc"), PathBuf::from("/dev/shm/a b/work")]
        );
    }
}
