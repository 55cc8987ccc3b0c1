//! How many heaps glibc's allocator keeps: two, whatever the number of threads, so that a
//! run's resident size does not grow with the memory its threads took and freed.
//!
//! glibc gives each new thread that meets a locked heap a heap of its own (up to eight
//! a core), and a heap keeps what was freed in it for later. The report's threads
//! (polars' workers, the thread that cuts `sessions.csv` into batches, the bootstrap's)
//! each free megabytes a batch into their own heap, so the resident size of `report`
//! grew with the rows read: 18 MB of anonymous memory at 1,000 trials, 39 MB at 10,000,
//! of which the live heap was 13 and 24. With two heaps the same runs took 18 and 30 MB
//! (heaptrack and /proc, release builds). The threads that allocate at once are few,
//! so two heaps are rarely contended.

/// Keeps glibc's allocator to two heaps. Call it before any thread is started; on a
/// C library other than glibc it does nothing.
pub fn limit_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    set_arena_max(2);
}

/// Gives the pages the allocator holds free back to the system, between the phases of
/// a run's end (the trials, the summary, the report page): each phase's freed buffers
/// would otherwise stay resident under the next one's. On a C library other than glibc
/// it does nothing.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    trim();
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[expect(unsafe_code, reason = "malloc_trim has no safe wrapper")]
fn trim() {
    // SAFETY: malloc_trim only returns free pages of the allocator's heaps to the
    // system (madvise); it takes no pointer and touches no live allocation.
    unsafe {
        nix::libc::malloc_trim(0);
    }
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[expect(unsafe_code, reason = "mallopt has no safe wrapper")]
fn set_arena_max(heaps: i32) {
    // SAFETY: mallopt sets one of the allocator's parameters; M_ARENA_MAX only bounds
    // how many heaps later threads are given. It takes no pointer, and a failure (0)
    // leaves the default, which is only more memory.
    unsafe {
        nix::libc::mallopt(nix::libc::M_ARENA_MAX, heaps);
    }
}
