//! Directories of a bounded size, for the places an agent writes that outlive its
//! session (a trial's work directory with its `.git`, its HOME and state directory).
//! Where the harness may mount (root, with `CAP_SYS_ADMIN`), each is a tmpfs of its own
//! with `size=` and `nr_inodes=`: the kernel refuses a write past the bound (`ENOSPC`)
//! while the session runs, and nothing written there lands on any other file system
//! (the scratch root, the results disk). Elsewhere (an ordinary user cannot mount) it
//! is a plain directory, measured after each session.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::scratch::{FULL_BELOW_BYTES, FULL_BELOW_INODES};
use crate::error::{IoContext, Result};

/// How large a bounded directory may grow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    /// Bytes of file data.
    pub bytes: u64,
    /// Entries of every kind (files, directories, links).
    pub inodes: u64,
}

/// How full a bounded directory is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fill {
    /// Within its bound.
    Within,
    /// Its tmpfs has (nearly) no room or inodes left: the kernel refused, or was about
    /// to refuse, a write.
    Full,
    /// A plain directory found, after the fact, to hold more than its bound.
    Over,
}

/// A directory bounded in size; its tmpfs, when it has one, is detached on drop (the
/// directory itself stays, for its owner to remove).
#[derive(Debug)]
pub struct BoundedDir {
    path: PathBuf,
    bound: Bound,
    mounted: bool,
}

impl BoundedDir {
    /// Makes `path` (a new directory, its parent existing) a directory bounded by
    /// `bound`: a tmpfs of that size where [`kernel_bounds`] allows it, else a plain
    /// directory.
    pub fn create(path: &Path, bound: Bound) -> Result<BoundedDir> {
        std::fs::create_dir(path).io_context(|| format!("cannot create '{}'", path.display()))?;
        let mounted = kernel_bounds().is_ok();
        if mounted {
            mount_tmpfs(path, bound).map_err(|e| {
                crate::error::Error::io(
                    format!("cannot mount a tmpfs of its own on '{}'", path.display()),
                    std::io::Error::from(e),
                )
            })?;
        }
        Ok(BoundedDir {
            path: path.to_path_buf(),
            bound,
            mounted,
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Its bound.
    pub fn bound(&self) -> Bound {
        self.bound
    }

    /// Whether the kernel holds it to its bound (a tmpfs of its own).
    pub fn enforced(&self) -> bool {
        self.mounted
    }

    /// How full it is: on its tmpfs, from the room left (full below 1 MiB, or an
    /// eighth of a smaller bound, and likewise for inodes); for a plain directory,
    /// counted (without following links) until it passes the bound.
    pub fn fill(&self) -> Fill {
        if self.mounted {
            let full = nix::sys::statvfs::statvfs(&self.path).is_ok_and(|s| {
                let free = s.blocks_available().saturating_mul(s.fragment_size());
                let inodes = s.files_available();
                free < FULL_BELOW_BYTES.min(self.bound.bytes / 8)
                    || inodes < FULL_BELOW_INODES.min(self.bound.inodes / 8)
            });
            return if full { Fill::Full } else { Fill::Within };
        }
        let (mut bytes, mut entries) = (0u64, 0u64);
        let walk = walkdir::WalkDir::new(&self.path)
            .follow_links(false)
            .follow_root_links(false)
            .min_depth(1);
        for entry in walk.into_iter().flatten() {
            entries += 1;
            if entry.file_type().is_file() {
                bytes = bytes.saturating_add(entry.metadata().map_or(0, |m| m.len()));
            }
            if bytes > self.bound.bytes || entries > self.bound.inodes {
                return Fill::Over;
            }
        }
        Fill::Within
    }
}

impl Drop for BoundedDir {
    fn drop(&mut self) {
        if self.mounted {
            // Detached even while a process still has a file open there; its pages go
            // with the last one.
            let _ = nix::mount::umount2(&self.path, nix::mount::MntFlags::MNT_DETACH);
        }
    }
}

/// Mounts a tmpfs of `bound` on `path`: no setuid programs or devices on it, and
/// only its owner may enter until the harness hands it over.
fn mount_tmpfs(path: &Path, bound: Bound) -> nix::Result<()> {
    use nix::mount::MsFlags;
    let options = format!(
        "size={},nr_inodes={},mode=0700",
        bound.bytes.max(4096),
        bound.inodes.max(16)
    );
    nix::mount::mount(
        Some("loopbench"),
        path,
        Some("tmpfs"),
        MsFlags::MS_NOSUID | MsFlags::MS_NODEV,
        Some(options.as_str()),
    )
}

/// Whether this harness can have the kernel bound its directories (it may mount a
/// tmpfs: root with `CAP_SYS_ADMIN`), probed once; `Err` says why not.
pub fn kernel_bounds() -> std::result::Result<(), &'static str> {
    static CAN: OnceLock<std::result::Result<(), &'static str>> = OnceLock::new();
    *CAN.get_or_init(|| {
        if !nix::unistd::geteuid().is_root() {
            return Err("an ordinary user cannot mount a tmpfs");
        }
        let Ok(probe) = super::scratch_dir("loopbench-mount-probe-") else {
            return Err("no scratch directory to try a mount in");
        };
        let bound = Bound {
            bytes: 4096,
            inodes: 16,
        };
        match mount_tmpfs(probe.path(), bound) {
            Ok(()) => {
                let _ = nix::mount::umount2(probe.path(), nix::mount::MntFlags::MNT_DETACH);
                Ok(())
            }
            Err(_) => Err("this root may not mount a tmpfs (no CAP_SYS_ADMIN)"),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bounded_directory_refuses_a_write_past_its_bound_where_the_kernel_can_bound_it() {
        let parent = tempfile::tempdir().unwrap();
        let bound = Bound {
            bytes: 256 * 1024,
            inodes: 100,
        };
        let dir = BoundedDir::create(&parent.path().join("b"), bound).unwrap();
        assert_eq!(dir.fill(), Fill::Within);
        let big = vec![b'x'; 300 * 1024];
        let written = std::fs::write(dir.path().join("big"), &big);
        if dir.enforced() {
            let e = written.unwrap_err();
            assert_eq!(e.raw_os_error(), Some(nix::libc::ENOSPC), "{e}");
            assert_eq!(dir.fill(), Fill::Full);
            let path = dir.path().to_path_buf();
            assert!(super::super::mounts_under(&path).contains(&path));
            drop(dir);
            assert!(!super::super::mounts_under(&path).contains(&path));
        } else {
            eprintln!("not enforced here: {:?}", kernel_bounds());
            written.unwrap();
            assert_eq!(dir.fill(), Fill::Over);
        }
    }

    #[test]
    fn a_plain_directory_is_counted_after_the_fact_without_following_links() {
        let parent = tempfile::tempdir().unwrap();
        let path = parent.path().join("plain");
        std::fs::create_dir(&path).unwrap();
        let dir = BoundedDir {
            path: path.clone(),
            bound: Bound {
                bytes: 1000,
                inodes: 3,
            },
            mounted: false,
        };
        std::fs::write(path.join("a"), vec![b'x'; 600]).unwrap();
        // A link to a large file counts as a link.
        let outside = parent.path().join("outside");
        std::fs::write(&outside, vec![b'x'; 5000]).unwrap();
        std::os::unix::fs::symlink(&outside, path.join("link")).unwrap();
        assert_eq!(dir.fill(), Fill::Within);
        std::fs::write(path.join("b"), vec![b'x'; 600]).unwrap();
        assert_eq!(dir.fill(), Fill::Over, "bytes");
        std::fs::remove_file(path.join("b")).unwrap();
        for name in ["c", "d"] {
            std::fs::create_dir(path.join(name)).unwrap();
        }
        assert_eq!(dir.fill(), Fill::Over, "entries");
    }
}
