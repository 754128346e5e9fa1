//! Compiles the seccomp filters in the parent (seccompiler); the child only loads them.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::SandboxError;

pub(crate) fn target_arch() -> Option<TargetArch> {
    if cfg!(target_arch = "x86_64") {
        Some(TargetArch::x86_64)
    } else if cfg!(target_arch = "aarch64") {
        Some(TargetArch::aarch64)
    } else {
        None
    }
}

/// Terminal ioctls, same value on x86_64 and aarch64 (libc's type for them varies by target).
const TIOCSTI: u64 = 0x5412;
const TIOCLINUX: u64 = 0x541C;
/// `setxattrat(2)` / `removexattrat(2)` (Linux 6.13; same number on every architecture, not
/// yet in the libc crate).
const SYS_SETXATTRAT: i64 = 463;
const SYS_REMOVEXATTRAT: i64 = 466;

fn setup_err(e: impl std::fmt::Display) -> SandboxError {
    SandboxError::Setup(format!("seccomp: {e}"))
}

fn cond(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, SandboxError> {
    // Dword: the kernel reads these arguments as 32-bit ints, so compare only the low half
    // (a Qword compare could be dodged by setting high bits the kernel ignores).
    SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(setup_err)
}

fn rule(conds: Vec<SeccompCondition>) -> Result<SeccompRule, SandboxError> {
    SeccompRule::new(conds).map_err(setup_err)
}

/// Syscall number → the rules under which it is refused (no rules: always).
type Rules = BTreeMap<i64, Vec<SeccompRule>>;

/// Filters to load, in order. Every syscall not named here is allowed; named ones fail with
/// `EPERM` (or `ENOSYS` for `openat2`, so callers fall back to `openat`).
///
/// * always: `ioctl(TIOCSTI)` / `ioctl(TIOCLINUX)` (pushing input into the user's terminal),
///   `open_by_handle_at`, module loading, kexec, reboot and swap (privileged escapes);
/// * `deny_network`: `socket` for any family but `AF_UNIX`/`AF_NETLINK`, and `io_uring_*`;
/// * always: the `setxattr`/`removexattr` family fails with `ENOTSUP` (a separate filter);
/// * Landlock ABI < 3 (truncation not governed): `truncate`, read-only opens with `O_TRUNC`,
///   `openat2` (its flags live in a struct a filter cannot inspect).
///
/// Syscalls from another ABI (i386 `int 0x80`) kill the process; on x86_64, x32 syscall numbers
/// fail with `EPERM` (they would otherwise slip past rules keyed on x86_64 numbers).
pub(crate) fn build_filters(
    deny_network: bool,
    landlock_abi: i32,
) -> Result<Vec<Vec<libc::sock_filter>>, SandboxError> {
    let Some(arch) = target_arch() else {
        return Err(SandboxError::Unsupported(format!(
            "the sandbox's seccomp filter supports x86_64 and aarch64 only, not {}",
            std::env::consts::ARCH
        )));
    };
    let mut eperm = terminal_and_privileged_rules()?;
    if deny_network {
        eperm.extend(network_rules()?);
    }
    let mut enosys = Rules::new();
    if landlock_abi < 3 {
        let (refused, unsupported) = truncation_rules()?;
        eperm.extend(refused);
        enosys.extend(unsupported);
    }

    let mut main = compile(eperm, libc::EPERM, arch)?;
    if arch == TargetArch::x86_64 {
        main.splice(0..0, x32_guard());
    }
    let mut out = vec![main];
    if !enosys.is_empty() {
        out.push(compile(enosys, libc::ENOSYS, arch)?);
    }
    out.push(compile(xattr_rules(), libc::ENOTSUP, arch)?);
    Ok(out)
}

/// Pushing input into the user's terminal, and the ways for a privileged (root) command to act
/// outside what Landlock governs: opening files by handle sidesteps path-based checks; modules,
/// kexec and swap write where no rule looks. Unprivileged users cannot make these calls anyway.
fn terminal_and_privileged_rules() -> Result<Rules, SandboxError> {
    let mut rules = Rules::new();
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, SeccompCmpOp::Eq, TIOCSTI)?])?,
            rule(vec![cond(1, SeccompCmpOp::Eq, TIOCLINUX)?])?,
        ],
    );
    for nr in [
        libc::SYS_open_by_handle_at,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
    ] {
        rules.insert(nr, vec![]);
    }
    Ok(rules)
}

/// No network: sockets of any family but `AF_UNIX`/`AF_NETLINK`, and io_uring (which could
/// open them out of the filter's sight).
fn network_rules() -> Result<Rules, SandboxError> {
    let mut rules = Rules::new();
    rules.insert(
        libc::SYS_socket,
        vec![rule(vec![
            cond(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?,
            cond(0, SeccompCmpOp::Ne, libc::AF_NETLINK as u64)?,
        ])?],
    );
    for nr in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
    ] {
        rules.insert(nr, vec![]);
    }
    Ok(rules)
}

/// Where Landlock does not govern truncation (ABI < 3): the calls refused with `EPERM`
/// (`truncate`, read-only opens with `O_TRUNC`), and `openat2`, refused with `ENOSYS` so that
/// callers fall back to `openat` (its flags live in a struct a filter cannot inspect).
fn truncation_rules() -> Result<(Rules, Rules), SandboxError> {
    let ro_trunc = |arg: u8| -> Result<Vec<SeccompRule>, SandboxError> {
        let mask = (libc::O_ACCMODE | libc::O_TRUNC) as u64;
        Ok(vec![rule(vec![cond(
            arg,
            SeccompCmpOp::MaskedEq(mask),
            (libc::O_RDONLY | libc::O_TRUNC) as u64,
        )?])?])
    };
    let mut refused = Rules::new();
    refused.insert(libc::SYS_truncate, vec![]);
    refused.insert(libc::SYS_openat, ro_trunc(2)?);
    #[cfg(target_arch = "x86_64")]
    refused.insert(libc::SYS_open, ro_trunc(1)?);
    let mut unsupported = Rules::new();
    unsupported.insert(libc::SYS_openat2, vec![]);
    Ok((refused, unsupported))
}

/// Extended attributes carry security labels and capabilities (`security.*`), and seccomp
/// cannot see which file a call is about, so they are refused everywhere rather than only
/// outside the writable roots. `ENOTSUP` ("this filesystem has no xattrs") lets tools that
/// preserve attributes when they can (`cp -a`, `tar`, `rsync -X`) carry on.
fn xattr_rules() -> Rules {
    [
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        SYS_SETXATTRAT,
        SYS_REMOVEXATTRAT,
    ]
    .into_iter()
    .map(|nr| (nr, vec![]))
    .collect()
}

/// One filter: the listed syscalls fail with `errno`, everything else is allowed.
fn compile(
    rules: Rules,
    errno: libc::c_int,
    arch: TargetArch,
) -> Result<Vec<libc::sock_filter>, SandboxError> {
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno as u32),
        arch,
    )
    .map_err(setup_err)?;
    let program: BpfProgram = filter.try_into().map_err(setup_err)?;
    Ok(convert(program))
}

fn convert(prog: BpfProgram) -> Vec<libc::sock_filter> {
    prog.into_iter()
        .map(|i| libc::sock_filter {
            code: i.code,
            jt: i.jt,
            jf: i.jf,
            k: i.k,
        })
        .collect()
}

/// `if (nr & __X32_SYSCALL_BIT) return ERRNO(EPERM);` — prepended to the compiled filter.
/// Jumps in classic BPF are relative, so prepending keeps the rest of the program valid.
fn x32_guard() -> Vec<libc::sock_filter> {
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    vec![
        // A = seccomp_data.nr (offset 0)
        libc::sock_filter {
            code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
            jt: 0,
            jf: 0,
            k: 0,
        },
        libc::sock_filter {
            code: (libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        libc::sock_filter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        },
    ]
}
