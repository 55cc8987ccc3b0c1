//! Descriptors the harness inherited. A process that starts `loopbench` may leave
//! descriptors open across its exec: a cron script's lock or log, make's jobserver
//! pipe, a CI runner's pipe, a directory. Every process the harness starts would get
//! them in turn, and bubblewrap passes whatever it is given on into the sandbox, where
//! `/proc/self/fd/N` reads a root-only file, appends to a root-only log or walks the
//! host's tree from a directory. So the first thing the binary does is to mark every
//! descriptor above 2 close-on-exec: the harness keeps them, nothing it starts gets
//! them. (Closing them instead could pull a descriptor from under a library that
//! opened it before `main`; marking cannot.) Descriptors the harness opens itself are
//! close-on-exec already (Rust opens everything so), and the ones it hands on (the
//! status file and the seccomp filter bwrap reads) bwrap closes before the program.

/// Marks every descriptor above 2 of this process close-on-exec. `Err` when neither
/// `close_range` nor `/proc/self/fd` is there to do it.
pub fn close_inherited_descriptors() -> std::io::Result<()> {
    if mark_from_three().is_ok() {
        return Ok(());
    }
    // Kernels before 5.11 have no CLOSE_RANGE_CLOEXEC: each open descriptor instead.
    let mut open = Vec::new();
    for entry in std::fs::read_dir("/proc/self/fd")? {
        let name = entry?.file_name();
        if let Some(fd) = name.to_str().and_then(|n| n.parse::<i32>().ok()) {
            open.push(fd);
        }
    }
    for fd in open.into_iter().filter(|fd| *fd > 2) {
        // The directory's own descriptor is closed by now: EBADF is nothing to do.
        match mark(fd) {
            Err(e) if e.raw_os_error() != Some(nix::libc::EBADF) => return Err(e),
            _ => {}
        }
    }
    Ok(())
}

/// `close_range(3, ~0, CLOSE_RANGE_CLOEXEC)`.
#[expect(unsafe_code, reason = "close_range has no wrapper in nix")]
fn mark_from_three() -> std::io::Result<()> {
    // SAFETY: with CLOSE_RANGE_CLOEXEC, close_range closes nothing (no descriptor that
    // Rust code owns is invalidated): it sets the close-on-exec flag of every open
    // descriptor in the range. It takes no pointer.
    let rc = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_close_range,
            3 as nix::libc::c_uint,
            nix::libc::c_uint::MAX,
            nix::libc::CLOSE_RANGE_CLOEXEC,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Sets `FD_CLOEXEC` on `fd`, keeping its other descriptor flags.
#[expect(unsafe_code, reason = "fcntl on a raw descriptor number")]
fn mark(fd: i32) -> std::io::Result<()> {
    // SAFETY: F_GETFD and F_SETFD read and set the descriptor flags of `fd` only; on a
    // number that is not open they fail with EBADF. No memory is passed.
    let flags = unsafe { nix::libc::fcntl(fd, nix::libc::F_GETFD) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    let rc = unsafe { nix::libc::fcntl(fd, nix::libc::F_SETFD, flags | nix::libc::FD_CLOEXEC) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_descriptor_marked_by_either_way_is_close_on_exec() {
        use nix::fcntl::{FcntlArg, FdFlag, fcntl};
        use std::os::fd::AsRawFd;
        let is_cloexec = |file: &std::fs::File| {
            fcntl(file, FcntlArg::F_GETFD).unwrap() & nix::libc::FD_CLOEXEC != 0
        };
        // Rust opens with O_CLOEXEC; cleared, as an inherited descriptor's would be.
        let file = std::fs::File::open("/").unwrap();
        fcntl(&file, FcntlArg::F_SETFD(FdFlag::empty())).unwrap();
        assert!(!is_cloexec(&file));
        mark(file.as_raw_fd()).unwrap();
        assert!(is_cloexec(&file));
        fcntl(&file, FcntlArg::F_SETFD(FdFlag::empty())).unwrap();
        close_inherited_descriptors().unwrap();
        assert!(is_cloexec(&file));
        assert_eq!(
            mark(987_654).unwrap_err().raw_os_error(),
            Some(nix::libc::EBADF)
        );
    }
}
