//! Per-session limits on processes and memory, enforced by the kernel through a cgroup
//! of the session's own: cgroup v2 where this process's cgroup delegates the `pids` and
//! `memory` controllers, else the v1 `pids` and `memory` hierarchies, else none (the
//! run says so once). Memory includes the pages of files written to RAM-backed places
//! (the scratch root, the private `/tmp`), so the limit also bounds how much of the
//! shared scratch one session can fill.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// Processes one session may run at once, unless the suite says (`max_pids`).
pub const DEFAULT_MAX_PIDS: u64 = 1024;
/// Memory one session may use, unless the suite says (`max_memory`): 4 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 4 * 1024 * 1024 * 1024;

/// What one session may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Processes and threads at once.
    pub max_pids: u64,
    /// Bytes of memory, page cache of RAM-backed files included.
    pub max_memory: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pids: DEFAULT_MAX_PIDS,
            max_memory: DEFAULT_MAX_MEMORY,
        }
    }
}

/// How this machine lets the harness enforce [`Limits`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enforcement {
    /// A cgroup v2 directory whose children get `pids.max` and `memory.max`.
    V2(PathBuf),
    /// The v1 `pids` and `memory` directories under which session cgroups are made.
    V1 {
        /// Under the `pids` hierarchy.
        pids: PathBuf,
        /// Under the `memory` hierarchy.
        memory: PathBuf,
    },
    /// No cgroup can be made here (not root, no delegation): limits are not enforced.
    None(String),
}

impl Enforcement {
    /// What this machine allows, probed once.
    pub fn here() -> &'static Enforcement {
        static HERE: OnceLock<Enforcement> = OnceLock::new();
        HERE.get_or_init(probe)
    }

    /// One line for `validate` and the run's start: how limits are enforced.
    pub fn describe(&self) -> String {
        match self {
            Enforcement::V2(dir) => format!(
                "max_pids and max_memory enforced by cgroup v2 under {}",
                dir.display()
            ),
            Enforcement::V1 { pids, memory } => format!(
                "max_pids and max_memory enforced by cgroup v1 ({} and {})",
                pids.display(),
                memory.display()
            ),
            Enforcement::None(why) => format!(
                "max_pids and max_memory are NOT enforced ({why}); the private /tmp, /run \
                 and /dev/shm are still bounded by their size"
            ),
        }
    }
}

/// The cgroup of one sandboxed process tree; removed (its processes killed) on drop.
#[derive(Debug)]
pub struct Cgroup {
    dirs: Vec<PathBuf>,
    v2: bool,
    limits: Limits,
}

impl Cgroup {
    /// A fresh cgroup with `limits`, or `None` where none can be made here.
    pub fn create(limits: Limits) -> std::io::Result<Option<Cgroup>> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "loopbench-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let (dirs, v2) = match Enforcement::here() {
            Enforcement::None(_) => return Ok(None),
            Enforcement::V2(base) => (vec![base.join(&name)], true),
            Enforcement::V1 { pids, memory } => (vec![pids.join(&name), memory.join(&name)], false),
        };
        let group = Cgroup { dirs, v2, limits };
        for dir in &group.dirs {
            std::fs::create_dir(dir)?;
        }
        let pids = limits.max_pids.to_string();
        let memory = limits.max_memory.to_string();
        if v2 {
            write(&group.dirs[0].join("pids.max"), &pids)?;
            write(&group.dirs[0].join("memory.max"), &memory)?;
            // No swap to run into: over the limit is over the limit.
            let _ = write(&group.dirs[0].join("memory.swap.max"), "0");
        } else {
            write(&group.dirs[0].join("pids.max"), &pids)?;
            write(&group.dirs[1].join("memory.limit_in_bytes"), &memory)?;
            let _ = write(&group.dirs[1].join("memory.memsw.limit_in_bytes"), &memory);
        }
        Ok(Some(group))
    }

    /// The `cgroup.procs` files a process writes its pid to, to join.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// The limits the session reached, each as a sentence for its record.
    pub fn reached(&self) -> Vec<String> {
        let mut hit = Vec::new();
        let read = |file: &Path| std::fs::read_to_string(file).unwrap_or_default();
        let counter = |text: &str, key: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(key)?.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        let pids_refused = counter(&read(&self.dirs[0].join("pids.events")), "max ");
        if pids_refused > 0 {
            hit.push(format!(
                "reached max_pids = {}: the kernel refused {pids_refused} new processes",
                self.limits.max_pids
            ));
        }
        let memory_dir = &self.dirs[if self.v2 { 0 } else { 1 }];
        let oom_kills = if self.v2 {
            counter(&read(&memory_dir.join("memory.events")), "oom_kill ")
        } else {
            counter(&read(&memory_dir.join("memory.oom_control")), "oom_kill ")
        };
        let at_limit = !self.v2 && counter(&read(&memory_dir.join("memory.failcnt")), "") > 0;
        if oom_kills > 0 {
            hit.push(format!(
                "reached max_memory = {} bytes: the kernel killed {oom_kills} processes",
                self.limits.max_memory
            ));
        } else if at_limit {
            hit.push(format!(
                "reached max_memory = {} bytes",
                self.limits.max_memory
            ));
        }
        hit
    }

    /// Whether a process ever ran in every controller of this cgroup (its peak count
    /// of processes, or of memory, above zero).
    pub fn held_a_process(&self) -> bool {
        let above_zero = |file: PathBuf| {
            std::fs::read_to_string(file)
                .ok()
                .and_then(|t| t.trim().parse::<u64>().ok())
                .map(|n| n > 0)
        };
        self.dirs.iter().enumerate().all(|(i, dir)| {
            let candidates: &[&str] = if self.v2 {
                &["pids.peak", "memory.peak"]
            } else if i == 0 {
                &["pids.peak"]
            } else {
                &["memory.max_usage_in_bytes"]
            };
            candidates
                .iter()
                .find_map(|f| above_zero(dir.join(f)))
                .unwrap_or(true)
        })
    }

    /// Kills whatever is still in the cgroup (nothing, when its sandbox ended).
    fn kill_all(&self) {
        if self.v2 && write(&self.dirs[0].join("cgroup.kill"), "1").is_ok() {
            return;
        }
        for procs in self.procs_files() {
            for pid in std::fs::read_to_string(&procs).unwrap_or_default().lines() {
                if let Ok(pid) = pid.trim().parse::<i32>() {
                    let _ = nix::sys::signal::kill(
                        nix::unistd::Pid::from_raw(pid),
                        nix::sys::signal::Signal::SIGKILL,
                    );
                }
            }
        }
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        self.kill_all();
        for dir in &self.dirs {
            // A killed process leaves its cgroup a moment after the signal.
            for _ in 0..50 {
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
}

fn write(file: &Path, value: &str) -> std::io::Result<()> {
    std::fs::write(file, value)
}

/// Finds where session cgroups can be made: under this process's own cgroup, so that
/// they stay inside whatever limits the machine already puts on the harness.
fn probe() -> Enforcement {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    if let Some(dir) = v2_base(&own, &mounts).filter(|d| can_make_children(d)) {
        return Enforcement::V2(dir);
    }
    let pids = v1_base(&own, &mounts, "pids");
    let memory = v1_base(&own, &mounts, "memory");
    match (pids, memory) {
        (Some(pids), Some(memory)) if can_make_children(&pids) && can_make_children(&memory) => {
            Enforcement::V1 { pids, memory }
        }
        _ => Enforcement::None(
            "no cgroup with the pids and memory controllers can be created here \
             (that takes root, or a cgroup delegated to this user)"
                .into(),
        ),
    }
}

/// The v2 cgroup of this process, when its `cgroup.subtree_control` already gives
/// children both controllers.
fn v2_base(own: &str, mounts: &str) -> Option<PathBuf> {
    let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let mount = mounts.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        right
            .starts_with("cgroup2 ")
            .then(|| left.split(' ').nth(4).map(PathBuf::from))?
    })?;
    let dir = mount.join(rel.trim_start_matches('/'));
    let delegated = std::fs::read_to_string(dir.join("cgroup.subtree_control")).ok()?;
    let has = |c: &str| delegated.split_whitespace().any(|w| w == c);
    (has("pids") && has("memory")).then_some(dir)
}

/// This process's cgroup in the v1 hierarchy of `controller`.
fn v1_base(own: &str, mounts: &str, controller: &str) -> Option<PathBuf> {
    let rel = own.lines().find_map(|l| {
        let mut parts = l.splitn(3, ':');
        let (_, names, path) = (parts.next()?, parts.next()?, parts.next()?);
        names.split(',').any(|n| n == controller).then_some(path)
    })?;
    let mount = mounts.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let mut fields = right.split(' ');
        let (fstype, _, options) = (fields.next()?, fields.next()?, fields.next()?);
        (fstype == "cgroup" && options.split(',').any(|o| o == controller))
            .then(|| left.split(' ').nth(4).map(PathBuf::from))?
    })?;
    Some(mount.join(rel.trim_start_matches('/')))
}

/// Whether a child cgroup can be made (and removed) under `dir`.
fn can_make_children(dir: &Path) -> bool {
    let probe = dir.join(format!("loopbench-probe-{}", std::process::id()));
    let made = std::fs::create_dir(&probe).is_ok();
    made && std::fs::remove_dir(&probe).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    const OWN: &str = "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/abc\n0::/\n";
    const MOUNTS: &str = "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n\
        39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n\
        35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
        41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

    #[test]
    fn the_v1_cgroups_of_this_process_are_found_from_its_mounts() {
        assert_eq!(
            v1_base(OWN, MOUNTS, "pids"),
            Some(PathBuf::from("/sys/fs/cgroup/pids"))
        );
        assert_eq!(
            v1_base(OWN, MOUNTS, "memory"),
            Some(PathBuf::from("/sys/fs/cgroup/memory/process_api/abc"))
        );
        assert_eq!(v1_base(OWN, MOUNTS, "cpuset"), None);
    }

    #[test]
    fn a_cgroup_is_made_limited_and_removed_where_the_machine_allows() {
        let limits = Limits {
            max_pids: 16,
            max_memory: 64 * 1024 * 1024,
        };
        let Some(group) = Cgroup::create(limits).unwrap() else {
            eprintln!("skipping: {}", Enforcement::here().describe());
            return;
        };
        let dirs = group.dirs.clone();
        assert!(dirs.iter().all(|d| d.is_dir()));
        assert_eq!(
            std::fs::read_to_string(dirs[0].join("pids.max"))
                .unwrap()
                .trim(),
            "16"
        );
        // A shell in the cgroup that forks past the limit: the kernel refuses.
        let procs = group.procs_files();
        let script = format!(
            "for f in {}; do echo $$ > $f; done; for i in $(seq 40); do sleep 2 & done; wait",
            procs
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(" ")
        );
        let _ = std::process::Command::new("sh")
            .args(["-c", &script])
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        let reached = group.reached();
        assert!(
            reached.iter().any(|r| r.contains("max_pids = 16")),
            "{reached:?}"
        );
        drop(group);
        assert!(dirs.iter().all(|d| !d.exists()));
    }
}
