//! Per-session limits on processes and memory, enforced by the kernel through a cgroup
//! of the session's own: cgroup v2 where the harness's own cgroup can give its children
//! the `pids` and `memory` controllers, else the v1 `pids` and `memory` hierarchies,
//! else none (the run says so once, and records it in its manifest). Memory includes
//! the pages of files written to RAM-backed places (the scratch root, the private
//! `/tmp`), so the limit also bounds how much of the shared scratch one session can
//! fill.
//!
//! Under cgroup v2 a cgroup that gives controllers to its children may hold no process
//! itself (the "no internal processes" rule), so the harness first moves itself into a
//! leaf of its own cgroup, `loopbench-harness`, and then enables `+pids +memory` in its
//! cgroup's `cgroup.subtree_control`: possible when the parent offers both controllers
//! (`cgroup.controllers`), no other process shares the harness's cgroup, and the
//! harness may write there (root, or a cgroup delegated to its user).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::AtomicU64;

/// Processes one session may run at once, unless the suite says (`max_pids`).
pub const DEFAULT_MAX_PIDS: u64 = 1024;
/// Memory one session may use, unless the suite says (`max_memory`): 4 GiB.
pub const DEFAULT_MAX_MEMORY: u64 = 4 * 1024 * 1024 * 1024;
/// Bytes a command agent's HOME may hold after a session, unless the suite says
/// (`max_home_bytes`): 1 GiB.
pub const DEFAULT_MAX_HOME_BYTES: u64 = 1024 * 1024 * 1024;

/// What one session may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Processes and threads at once.
    pub max_pids: u64,
    /// Bytes of memory, page cache of RAM-backed files included.
    pub max_memory: u64,
    /// Bytes of a command agent's HOME and scripted model log after a session (checked
    /// then: the HOME lies in the run directory, on disk, where no cgroup counts it).
    pub max_home_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_pids: DEFAULT_MAX_PIDS,
            max_memory: DEFAULT_MAX_MEMORY,
            max_home_bytes: DEFAULT_MAX_HOME_BYTES,
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
        HERE.get_or_init(|| {
            let here = probe();
            for base in here.bases() {
                remove_left_by_dead_harnesses(base);
            }
            here
        })
    }

    /// The directories session cgroups are made under.
    fn bases(&self) -> Vec<&Path> {
        match self {
            Enforcement::V2(dir) => vec![dir],
            Enforcement::V1 { pids, memory } => vec![pids, memory],
            Enforcement::None(_) => Vec::new(),
        }
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
        // Never a name a killed harness of the same pid left (a check's batch failed
        // with "File exists" when the name was `loopbench-<pid>-<n>`).
        let name = super::fresh_name(&NEXT);
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
        // Only a kill says the limit stopped something: v1's `memory.failcnt` also
        // counts every time the kernel reclaimed page cache at the limit, which a
        // session writing files near it does without anything failing.
        if oom_kills > 0 {
            hit.push(format!(
                "reached max_memory = {} bytes: the kernel killed {oom_kills} processes",
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

    /// Kills whatever is in the cgroup, again, until nothing is (`true`) or `within`
    /// has passed (`false`: a process that does not die, stuck in the kernel).
    pub fn end_all(&self, within: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + within;
        loop {
            self.kill_all();
            if self.is_empty() {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    /// Whether no process is left in the cgroup (a dead one has left it).
    fn is_empty(&self) -> bool {
        if self.v2 {
            let events = std::fs::read_to_string(self.dirs[0].join("cgroup.events"));
            return events.is_ok_and(|e| e.lines().any(|l| l == "populated 0"));
        }
        self.procs_files()
            .iter()
            .all(|procs| std::fs::read_to_string(procs).is_ok_and(|pids| pids.trim().is_empty()))
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

/// Removes the empty session cgroups under `base` that a harness no longer running
/// left (`loopbench-<pid>-...`, its pid gone: killed, it could not remove them). One
/// still holding a process, of a pid that runs or made in the last ten minutes (a
/// harness in another PID namespace, whose pid this one cannot see, holds its cgroup
/// empty only for moments: before its sandbox joins and after it ended) is left alone.
fn remove_left_by_dead_harnesses(base: &Path) {
    let settled = |path: &Path| {
        std::fs::symlink_metadata(path)
            .and_then(|m| m.modified())
            .is_ok_and(|t| t.elapsed().is_ok_and(|age| age.as_secs() >= 600))
    };
    let Ok(entries) = std::fs::read_dir(base) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = name
            .to_str()
            .and_then(|n| n.strip_prefix("loopbench-"))
            .and_then(|rest| rest.split('-').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid
            && pid != std::process::id()
            && !Path::new(&format!("/proc/{pid}")).exists()
            && settled(&entry.path())
        {
            // Fails, as wanted, for a cgroup that holds a process or a child cgroup.
            let _ = std::fs::remove_dir(entry.path());
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
    let v2 = match v2_own_dir(&own, &mounts) {
        Some(dir) => match prepare_v2(&dir, std::process::id()) {
            Ok(()) if can_make_children(&dir) => return Enforcement::V2(dir),
            Ok(()) => Some(format!(
                "cgroup v2: no cgroup can be made under {}",
                dir.display()
            )),
            Err(why) => Some(format!("cgroup v2: {why}")),
        },
        None => None,
    };
    let pids = v1_base(&own, &mounts, "pids");
    let memory = v1_base(&own, &mounts, "memory");
    match (pids, memory) {
        (Some(pids), Some(memory)) if can_make_children(&pids) && can_make_children(&memory) => {
            Enforcement::V1 { pids, memory }
        }
        _ => Enforcement::None(v2.unwrap_or_else(|| {
            "no cgroup with the pids and memory controllers can be created here \
             (that takes root, or a cgroup delegated to this user)"
                .into()
        })),
    }
}

/// The name of the leaf the harness moves itself into under cgroup v2.
pub const HARNESS_LEAF: &str = "loopbench-harness";

/// The v2 cgroup directory of this process, from `/proc/self/cgroup` and the cgroup2
/// mount of `/proc/self/mountinfo`.
fn v2_own_dir(own: &str, mounts: &str) -> Option<PathBuf> {
    let rel = own.lines().find_map(|l| l.strip_prefix("0::"))?;
    let mount = mounts.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        right
            .starts_with("cgroup2 ")
            .then(|| left.split(' ').nth(4).map(PathBuf::from))?
    })?;
    Some(mount.join(rel.trim_start_matches('/')))
}

/// What the harness must do in its own cgroup v2 directory so that cgroups made under
/// it get the `pids` and `memory` controllers.
#[derive(Debug, Clone, PartialEq, Eq)]
enum V2Plan {
    /// Its children get both already (the harness's cgroup is a namespace's root,
    /// where processes and controllers for children may mix).
    Ready,
    /// Move the harness into the leaf [`HARNESS_LEAF`], then enable both controllers.
    MoveAndEnable,
    /// It cannot be done, and why.
    Cannot(String),
}

/// The decision, from the files of `dir`: its `cgroup.subtree_control`,
/// `cgroup.controllers` (what its parent gives it) and `cgroup.procs` (who is in it;
/// `own_pid` is the harness).
fn plan_v2(dir: &Path, own_pid: u32) -> V2Plan {
    let read = |f: &str| std::fs::read_to_string(dir.join(f));
    let has_both = |text: &str| {
        let has = |c: &str| text.split_whitespace().any(|w| w == c);
        has("pids") && has("memory")
    };
    let Ok(subtree) = read("cgroup.subtree_control") else {
        return V2Plan::Cannot(format!("{} is not a cgroup v2 directory", dir.display()));
    };
    if has_both(&subtree) {
        return V2Plan::Ready;
    }
    let offered = read("cgroup.controllers").unwrap_or_default();
    if !has_both(&offered) {
        return V2Plan::Cannot(format!(
            "the harness's cgroup {} is not given the pids and memory controllers by its \
             parent (cgroup.controllers: '{}'); run the harness in a delegated cgroup \
             (systemd-run --scope -p Delegate=yes, or a container with a cgroup of its own)",
            dir.display(),
            offered.trim()
        ));
    }
    let others = read("cgroup.procs")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.trim().parse::<u32>().ok())
        .filter(|pid| *pid != own_pid)
        .count();
    if others > 0 {
        return V2Plan::Cannot(format!(
            "{others} other processes share the harness's cgroup {}, and under cgroup v2 \
             a cgroup holding processes cannot give controllers to its children (the \
             no-internal-processes rule); start the harness in a cgroup of its own \
             (systemd-run --scope -p Delegate=yes loopbench ...)",
            dir.display()
        ));
    }
    V2Plan::MoveAndEnable
}

/// Carries out [`plan_v2`] for the process `own_pid` in its cgroup `dir`; on a failure
/// half-way the harness moves back. `Err` says why limits cannot use cgroup v2.
fn prepare_v2(dir: &Path, own_pid: u32) -> std::result::Result<(), String> {
    match plan_v2(dir, own_pid) {
        V2Plan::Ready => Ok(()),
        V2Plan::Cannot(why) => Err(why),
        V2Plan::MoveAndEnable => {
            let leaf = dir.join(HARNESS_LEAF);
            let moved = match std::fs::create_dir(&leaf) {
                Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(e),
                _ => write(&leaf.join("cgroup.procs"), &own_pid.to_string()),
            };
            let enabled =
                moved.and_then(|()| write(&dir.join("cgroup.subtree_control"), "+pids +memory"));
            enabled.map_err(|e| {
                let _ = write(&dir.join("cgroup.procs"), &own_pid.to_string());
                format!(
                    "cannot move the harness into {} and give its cgroup's children the pids \
                     and memory controllers: {e}",
                    leaf.display()
                )
            })
        }
    }
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

    /// A fake cgroup v2 directory with these files.
    fn fake_v2(subtree: &str, controllers: &str, procs: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cgroup.subtree_control"), subtree).unwrap();
        std::fs::write(dir.path().join("cgroup.controllers"), controllers).unwrap();
        std::fs::write(dir.path().join("cgroup.procs"), procs).unwrap();
        dir
    }

    #[test]
    fn under_cgroup_v2_the_harness_moves_to_a_leaf_only_when_nothing_else_shares_its_cgroup() {
        let ready = fake_v2("memory pids\n", "cpu memory pids\n", "7\n8\n");
        assert_eq!(plan_v2(ready.path(), 7), V2Plan::Ready);
        let alone = fake_v2("\n", "cpu io memory pids\n", "7\n");
        assert_eq!(plan_v2(alone.path(), 7), V2Plan::MoveAndEnable);
        let shared = fake_v2("\n", "memory pids\n", "1\n7\n9\n");
        let V2Plan::Cannot(why) = plan_v2(shared.path(), 7) else {
            panic!("a shared cgroup was planned for");
        };
        assert!(why.contains("2 other processes"), "{why}");
        assert!(why.contains("no-internal-processes"), "{why}");
        let undelegated = fake_v2("\n", "cpu io\n", "7\n");
        let V2Plan::Cannot(why) = plan_v2(undelegated.path(), 7) else {
            panic!("an undelegated cgroup was planned for");
        };
        assert!(why.contains("cgroup.controllers: 'cpu io'"), "{why}");
        assert!(matches!(
            plan_v2(Path::new("/nonexistent/cgroup"), 7),
            V2Plan::Cannot(_)
        ));
    }

    #[test]
    fn moving_to_the_leaf_comes_before_enabling_the_controllers() {
        let alone = fake_v2("", "memory pids\n", "7\n");
        assert_eq!(prepare_v2(alone.path(), 7), Ok(()));
        let leaf = alone.path().join(HARNESS_LEAF);
        assert_eq!(
            std::fs::read_to_string(leaf.join("cgroup.procs")).unwrap(),
            "7"
        );
        assert_eq!(
            std::fs::read_to_string(alone.path().join("cgroup.subtree_control")).unwrap(),
            "+pids +memory"
        );
        // Nothing is moved where the plan says it cannot be done.
        let shared = fake_v2("", "memory pids\n", "3\n7\n");
        assert!(prepare_v2(shared.path(), 7).is_err());
        assert!(!shared.path().join(HARNESS_LEAF).exists());
    }

    #[test]
    fn the_v2_cgroup_of_this_process_is_found_from_its_mounts() {
        assert_eq!(
            v2_own_dir("0::/system.slice/ci.service\n", MOUNTS),
            Some(PathBuf::from(
                "/sys/fs/cgroup/unified/system.slice/ci.service"
            ))
        );
        assert_eq!(v2_own_dir("4:memory:/x\n", MOUNTS), None);
    }

    #[test]
    fn under_v1_memory_is_reported_reached_only_when_the_kernel_killed() {
        let root = tempfile::tempdir().unwrap();
        let (pids, memory) = (root.path().join("pids"), root.path().join("memory"));
        for d in [&pids, &memory] {
            std::fs::create_dir(d).unwrap();
        }
        std::fs::write(pids.join("pids.events"), "max 0\n").unwrap();
        std::fs::write(memory.join("memory.failcnt"), "5812\n").unwrap();
        std::fs::write(
            memory.join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
        )
        .unwrap();
        let group = Cgroup {
            dirs: vec![pids.clone(), memory.clone()],
            v2: false,
            limits: Limits::default(),
        };
        assert_eq!(group.reached(), Vec::<String>::new());
        std::fs::write(
            memory.join("memory.oom_control"),
            "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
        )
        .unwrap();
        let reached = group.reached();
        assert_eq!(reached.len(), 1, "{reached:?}");
        assert!(
            reached[0].contains("the kernel killed 2 processes"),
            "{reached:?}"
        );
        // Dropping it must not remove the fake directories' files (they are no cgroup).
        std::mem::forget(group);
    }

    #[test]
    fn empty_cgroups_a_dead_harness_left_are_removed_and_no_other() {
        let Some(base) = Enforcement::here().bases().first().map(|b| b.to_path_buf()) else {
            eprintln!("skipping: {}", Enforcement::here().describe());
            return;
        };
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let left = base.join(format!("loopbench-{dead}-0-1"));
        let recent = base.join(format!("loopbench-{dead}-1-1"));
        let alive = base.join("loopbench-1-0-1");
        let other = base.join(format!("not-loopbench-{dead}"));
        for dir in [&left, &recent, &alive, &other] {
            std::fs::create_dir(dir).unwrap();
        }
        // Made an hour ago, as a harness killed then would have left it (cgroupfs
        // takes a directory's times).
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        for dir in [&left, &alive, &other] {
            std::fs::File::open(dir).unwrap().set_modified(old).unwrap();
        }
        remove_left_by_dead_harnesses(&base);
        let exists = [&left, &recent, &alive, &other].map(|d| d.is_dir());
        for dir in [&recent, &alive, &other] {
            let _ = std::fs::remove_dir(dir);
        }
        assert_eq!(
            exists,
            [false, true, true, true],
            "left, recent, alive, other"
        );
    }

    #[test]
    fn cgroups_left_by_an_earlier_process_of_this_pid_do_not_stop_a_new_one() {
        let limits = Limits::default();
        let Some(first) = Cgroup::create(limits).unwrap() else {
            eprintln!("skipping: {}", Enforcement::here().describe());
            return;
        };
        // What a killed harness with this pid would have left under the old names.
        let left: Vec<PathBuf> = first
            .dirs
            .iter()
            .flat_map(|d| {
                let base = d.parent().unwrap().to_path_buf();
                (0..4).map(move |n| base.join(format!("loopbench-{}-{n}", std::process::id())))
            })
            .filter(|d| std::fs::create_dir(d).is_ok())
            .collect();
        drop(first);
        let second = Cgroup::create(limits);
        for dir in &left {
            let _ = std::fs::remove_dir(dir);
        }
        let second = second.unwrap().unwrap();
        assert!(second.dirs.iter().all(|d| d.is_dir()));
    }

    #[test]
    fn a_cgroup_is_made_limited_and_removed_where_the_machine_allows() {
        let limits = Limits {
            max_pids: 16,
            max_memory: 64 * 1024 * 1024,
            ..Limits::default()
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
