//! Kernel keyrings, which bubblewrap does not namespace: a key one sandbox stores in its
//! user's keyring (or that user's persistent keyring) would be there for the next
//! session of any trial, and a key in the harness's own session keyring would be
//! readable inside. So every sandbox starts in a fresh, empty session keyring of its
//! own ([`fresh_session_keyring`]), and a seccomp filter the harness builds
//! ([`keyring_filter`], handed to bwrap with `--seccomp`) denies the keyring system
//! calls (`add_key`, `request_key`, `keyctl`) inside with `EPERM`: no process in the
//! sandbox can store, find or read a key, whatever keyring it names.
//!
//! The filter is a classic BPF program over `struct seccomp_data`. It checks the
//! architecture first, since a syscall number means another call under another ABI: the
//! build's own architecture, and the compatible one its kernel also runs (i386 on
//! x86_64, with the x32 numbers of x86_64 itself; 32-bit Arm on aarch64), each with
//! its own numbers. Any other architecture is killed, never let through unfiltered.

use std::process::Command;

/// `BPF_LD | BPF_W | BPF_ABS`: load the 32-bit word at offset `k` of `seccomp_data`.
const LD_W_ABS: u16 = 0x20;
/// `BPF_JMP | BPF_JEQ | BPF_K`: jump `jt` ahead when the accumulator equals `k`, else `jf`.
const JEQ_K: u16 = 0x15;
/// `BPF_RET | BPF_K`: return `k`.
const RET_K: u16 = 0x06;
/// Offsets in `struct seccomp_data`.
const NR_AT: u32 = 0;
const ARCH_AT: u32 = 4;
/// Filter results.
const RET_ALLOW: u32 = 0x7fff_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_KILL_PROCESS: u32 = 0x8000_0000;
/// `EPERM`: what a denied call returns.
const EPERM: u32 = 1;

/// `AUDIT_ARCH_*` values.
const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
const AUDIT_ARCH_I386: u32 = 0x4000_0003;
const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;
const AUDIT_ARCH_ARM: u32 = 0x4000_0028;
const AUDIT_ARCH_RISCV64: u32 = 0xc000_00f3;
/// x32 calls come as x86_64 with this bit set in the number.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// `add_key`, `request_key` and `keyctl` under each ABI a kernel of this build's
/// architecture runs: the architecture and the three numbers (`unistd_64.h`,
/// `unistd_x32.h`, `unistd_32.h`, the generic table for aarch64 and riscv64, and
/// 32-bit Arm's EABI table). `None`: a build for an architecture the filter does not
/// know, where no sandbox is started.
fn keyring_calls() -> Option<Vec<(u32, Vec<u32>)>> {
    if cfg!(target_arch = "x86_64") {
        let native = [248, 249, 250];
        let x32 = native.map(|n| X32_SYSCALL_BIT | n);
        Some(vec![
            (AUDIT_ARCH_X86_64, native.into_iter().chain(x32).collect()),
            (AUDIT_ARCH_I386, vec![286, 287, 288]),
        ])
    } else if cfg!(target_arch = "aarch64") {
        Some(vec![
            (AUDIT_ARCH_AARCH64, vec![217, 218, 219]),
            (AUDIT_ARCH_ARM, vec![309, 310, 311]),
        ])
    } else if cfg!(target_arch = "riscv64") {
        Some(vec![(AUDIT_ARCH_RISCV64, vec![217, 218, 219])])
    } else {
        None
    }
}

/// The seccomp filter of every sandbox, as the bytes bwrap's `--seccomp FD` reads: an
/// array of `struct sock_filter` in the machine's byte order. `Err` names the
/// architecture it has no numbers for.
pub fn keyring_filter() -> std::result::Result<Vec<u8>, String> {
    let calls = keyring_calls().ok_or_else(|| {
        format!(
            "the sandbox's seccomp filter does not know the system calls of {}",
            std::env::consts::ARCH
        )
    })?;
    let mut bytes = Vec::new();
    for insn in program(&calls) {
        bytes.extend_from_slice(&insn.code.to_ne_bytes());
        bytes.push(insn.jt);
        bytes.push(insn.jf);
        bytes.extend_from_slice(&insn.k.to_ne_bytes());
    }
    Ok(bytes)
}

/// One `struct sock_filter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Insn {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

impl Insn {
    fn load(at: u32) -> Insn {
        Insn {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: at,
        }
    }

    fn ret(value: u32) -> Insn {
        Insn {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: value,
        }
    }

    fn jeq(value: u32, jt: u8, jf: u8) -> Insn {
        Insn {
            code: JEQ_K,
            jt,
            jf,
            k: value,
        }
    }
}

/// The program: for each architecture, a block that loads the number and jumps to the
/// denial for each keyring call, else allows; an architecture no block matches is
/// killed.
fn program(calls: &[(u32, Vec<u32>)]) -> Vec<Insn> {
    let mut prog = Vec::new();
    let mut to_deny = Vec::new();
    for (arch, numbers) in calls {
        prog.push(Insn::load(ARCH_AT));
        // Past this block (its load, its jumps, its allow) when the arch differs.
        let block = u8::try_from(numbers.len() + 2).expect("a few numbers per arch");
        prog.push(Insn::jeq(*arch, 0, block));
        prog.push(Insn::load(NR_AT));
        for nr in numbers {
            to_deny.push(prog.len());
            prog.push(Insn::jeq(*nr, 0, 0));
        }
        prog.push(Insn::ret(RET_ALLOW));
    }
    prog.push(Insn::ret(RET_KILL_PROCESS));
    let deny = prog.len();
    prog.push(Insn::ret(RET_ERRNO | EPERM));
    for at in to_deny {
        prog[at].jt = u8::try_from(deny - at - 1).expect("a short program");
    }
    prog
}

/// Makes the process `cmd` starts (and so every process of the sandbox it launches)
/// join a new, empty session keyring before it execs, so that no key of the harness's
/// own session keyring is possessed inside and no two sandboxes share one. Where the
/// kernel has no keyrings, or they are denied to the harness itself (a container's
/// seccomp profile), there is nothing to share and the start goes on.
pub fn fresh_session_keyring(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec, where only
    // async-signal-safe calls are allowed: `join_session_keyring` makes one system
    // call and reads errno, and allocates nothing.
    #[expect(unsafe_code, reason = "pre_exec: the keyring is joined in the child")]
    unsafe {
        cmd.pre_exec(join_session_keyring);
    }
}

/// `keyctl(KEYCTL_JOIN_SESSION_KEYRING, NULL)`: a new anonymous session keyring. No
/// keyrings here (`ENOSYS`), or none for the harness either (`EPERM`, `EACCES`), is
/// not an error.
#[expect(unsafe_code, reason = "keyctl has no wrapper in nix")]
fn join_session_keyring() -> std::io::Result<()> {
    const KEYCTL_JOIN_SESSION_KEYRING: nix::libc::c_long = 1;
    let anonymous: *const nix::libc::c_char = std::ptr::null();
    // SAFETY: this operation of keyctl reads one pointer argument, the keyring's name,
    // for which NULL means an anonymous keyring; it writes no memory of the process.
    let serial = unsafe {
        nix::libc::syscall(
            nix::libc::SYS_keyctl,
            KEYCTL_JOIN_SESSION_KEYRING,
            anonymous,
        )
    };
    if serial >= 0 {
        return Ok(());
    }
    let err = std::io::Error::last_os_error();
    match err.raw_os_error() {
        Some(nix::libc::ENOSYS | nix::libc::EPERM | nix::libc::EACCES) => Ok(()),
        _ => Err(err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `prog` over a `seccomp_data` of `arch` and `nr`, as the kernel would.
    fn run(prog: &[Insn], arch: u32, nr: u32) -> u32 {
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let insn = prog[pc];
            match insn.code {
                LD_W_ABS => {
                    acc = match insn.k {
                        NR_AT => nr,
                        ARCH_AT => arch,
                        other => panic!("load of offset {other}"),
                    };
                    pc += 1;
                }
                JEQ_K => {
                    let jump = if acc == insn.k { insn.jt } else { insn.jf };
                    pc += 1 + usize::from(jump);
                }
                RET_K => return insn.k,
                other => panic!("unknown instruction {other:#x}"),
            }
        }
    }

    #[test]
    fn keyring_calls_are_denied_with_eperm_under_every_abi_and_others_allowed() {
        let calls = keyring_calls().expect("a known architecture");
        let prog = program(&calls);
        for (arch, numbers) in &calls {
            for nr in numbers {
                assert_eq!(run(&prog, *arch, *nr), RET_ERRNO | EPERM, "{arch:#x} {nr}");
            }
            for nr in [0, 1, 2, 59, 60, 231, 247, 251, 285, 289, 308, 312, 435] {
                if !numbers.contains(&nr) {
                    assert_eq!(run(&prog, *arch, nr), RET_ALLOW, "{arch:#x} {nr}");
                }
            }
        }
        // An architecture the filter does not know is killed, whatever the call.
        for nr in [0, 60, 250] {
            assert_eq!(run(&prog, 0xc000_0028, nr), RET_KILL_PROCESS);
        }
    }

    #[test]
    fn the_build_architecture_and_its_compatible_one_are_covered() {
        let calls = keyring_calls().expect("a known architecture");
        let prog = program(&calls);
        // The libc crate's numbers for this build are the first block's.
        let (native, _) = &calls[0];
        for nr in [
            nix::libc::SYS_add_key,
            nix::libc::SYS_request_key,
            nix::libc::SYS_keyctl,
        ] {
            let nr = u32::try_from(nr).unwrap();
            assert_eq!(run(&prog, *native, nr), RET_ERRNO | EPERM, "{nr}");
        }
        if cfg!(target_arch = "x86_64") {
            let arches: Vec<u32> = calls.iter().map(|(a, _)| *a).collect();
            assert_eq!(arches, [AUDIT_ARCH_X86_64, AUDIT_ARCH_I386]);
            // The x32 ABI's keyctl is denied; an ordinary x32 call is not.
            let x32_keyctl = X32_SYSCALL_BIT | 250;
            assert_eq!(run(&prog, AUDIT_ARCH_X86_64, x32_keyctl), RET_ERRNO | EPERM);
            assert_eq!(run(&prog, AUDIT_ARCH_X86_64, X32_SYSCALL_BIT), RET_ALLOW);
        }
        let bytes = keyring_filter().unwrap();
        assert_eq!(bytes.len(), prog.len() * 8);
        assert_eq!(bytes[..2], LD_W_ABS.to_ne_bytes());
    }
}
