//! Linux enforcement: Landlock (filesystem), seccomp (network and a few dangerous syscalls) and,
//! for `.git` protection, a private mount namespace — all applied in the child before `exec`.

mod landlock_rules;
mod pidns;
mod seccomp;
mod shield;
mod signals;
#[cfg(test)]
mod tests;

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::OnceLock;

use oi_protocol::config_types::SandboxPolicy;

use crate::roots::{self, Layout};
use crate::{SandboxError, SandboxRequest};

use landlock_rules::Grant;
use shield::MountShield;
use signals::SignalFilter;

/// What this kernel offers, probed once.
#[derive(Clone, Copy, Debug)]
struct Support {
    /// Landlock ABI version (≤ 0 when Landlock is unavailable).
    abi: i32,
    /// `prctl(PR_GET_SECCOMP)` works, i.e. the kernel has seccomp.
    seccomp: bool,
}

fn support() -> Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    *SUPPORT.get_or_init(|| {
        // SAFETY: plain syscalls with no pointers (a NULL attr is how the ABI version is asked).
        let abi = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                std::ptr::null::<u8>(),
                0usize,
                LANDLOCK_CREATE_RULESET_VERSION,
            )
        } as i32;
        // SAFETY: PR_GET_SECCOMP takes no pointers; it only reports this thread's mode.
        let seccomp = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } >= 0;
        Support { abi, seccomp }
    })
}

const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;

const HOW_TO_PROCEED: &str =
    "run with `-s danger-full-access` (no sandbox) or use a kernel with Landlock";

pub(crate) fn check_support(_policy: &SandboxPolicy) -> Result<(), SandboxError> {
    check_support_with(support())
}

fn check_support_with(s: Support) -> Result<(), SandboxError> {
    if s.abi < 1 {
        return Err(SandboxError::Unsupported(format!(
            "this kernel does not support Landlock (needs Linux ≥ 5.13 with landlock in the LSM \
             list); {HOW_TO_PROCEED}"
        )));
    }
    if !s.seccomp {
        return Err(SandboxError::Unsupported(format!(
            "this kernel does not support seccomp filters, which the sandbox needs to control \
             network access; {HOW_TO_PROCEED}"
        )));
    }
    if seccomp::target_arch().is_none() {
        return Err(SandboxError::Unsupported(format!(
            "the sandbox's seccomp filter supports x86_64 and aarch64 only, not {}; \
             run with `-s danger-full-access` (no sandbox)",
            std::env::consts::ARCH
        )));
    }
    Ok(())
}

/// Knobs tests use to exercise paths this kernel would not take on its own.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Overrides {
    /// Pretend the kernel has this Landlock ABI (must be ≤ the real one).
    pub abi: Option<i32>,
    /// Force the mount-namespace `.git` layout on or off.
    pub mount_shield: Option<bool>,
    /// Force the PID namespace on or off (off: the seccomp signal filter instead).
    pub pid_namespace: Option<bool>,
}

pub(crate) fn confine(
    cmd: &mut tokio::process::Command,
    req: &SandboxRequest<'_>,
) -> Result<(), SandboxError> {
    confine_with(cmd, req, Overrides::default())
}

pub(crate) fn confine_with(
    cmd: &mut tokio::process::Command,
    req: &SandboxRequest<'_>,
    ov: Overrides,
) -> Result<(), SandboxError> {
    let mut s = support();
    check_support_with(s)?;
    if let Some(abi) = ov.abi {
        s.abi = abi.min(s.abi);
    }
    let mut setup = prepare(req, s, ov)?;
    // Own process group: the keeper leads it, so one kill stops the command and its children.
    cmd.process_group(0);
    // SAFETY: `ChildSetup::apply` only issues raw syscalls on data prepared here (no allocation,
    // no locks), so it is async-signal-safe between fork and exec.
    unsafe {
        cmd.pre_exec(move || setup.apply());
    }
    Ok(())
}

/// Everything the child needs, built in the parent.
struct ChildSetup {
    keeper: oi_process::Keeper,
    shield: Option<MountShield>,
    /// The command gets its own PID namespace (else `signal_filter` limits its signals).
    pid_namespace: bool,
    ruleset: OwnedFd,
    filters: Vec<Vec<libc::sock_filter>>,
    signal_filter: Option<SignalFilter>,
}

fn prepare(
    req: &SandboxRequest<'_>,
    s: Support,
    ov: Overrides,
) -> Result<ChildSetup, SandboxError> {
    let network = req.policy.has_network_access();
    let mut layout = roots::layout(req, std::env::var_os("TMPDIR"));
    ensure_config_dirs(&mut layout);
    let mut grants: Vec<Grant> = landlock_rules::device_grants();

    let mut shield = None;
    if !layout.protected.is_empty() {
        let candidate = MountShield::new(&layout.protected)?;
        let usable = match ov.mount_shield {
            Some(forced) => forced,
            None => !layout.symlinked_git && candidate.works(),
        };
        if usable {
            shield = Some(candidate);
        }
    }
    if shield.is_some() {
        grants.extend(layout.roots.iter().map(|r| Grant::full(r.clone())));
    } else {
        keep_config_dir_of_workspace_only(&mut layout);
        sibling_grants(&layout, &mut grants)?;
    }
    let pid_namespace = ov.pid_namespace.unwrap_or_else(pidns::works);
    if pid_namespace && shield.is_none() {
        // The PID namespace needs the user + mount namespaces the shield creates (for
        // `/proc`, and for the right to create it unprivileged); without `.git` to protect
        // that is a shield with nothing to bind.
        shield = Some(MountShield::new(&[])?);
    }

    let ruleset = landlock_rules::build_ruleset(s.abi, !network, &grants)?;
    let filters = seccomp::build_filters(!network, s.abi)?;
    Ok(ChildSetup {
        keeper: oi_process::Keeper::new(),
        shield,
        pid_namespace,
        ruleset,
        filters,
        signal_filter: (!pid_namespace).then(SignalFilter::build),
    })
}

/// A protected path must exist to be protected: a read-only bind mount needs a mount point,
/// and the sibling layout only keeps *existing* entries out of reach. So a missing
/// `.openinterpreter` is created (empty, 0700) in each writable root before the command
/// starts, then mounted read-only like `.git`; the command can neither create it nor write
/// into it. A folder we cannot create is one the command (same user, fewer rights) cannot
/// create either, so it is dropped from the mount targets rather than failing the command.
fn ensure_config_dirs(layout: &mut Layout) {
    use std::os::unix::fs::DirBuilderExt;
    layout.protected.retain(|p| {
        if std::fs::symlink_metadata(p).is_ok() {
            return true;
        }
        if p.file_name() != Some(std::ffi::OsStr::new(roots::CONFIG_DIR)) {
            return false;
        }
        match std::fs::DirBuilder::new().mode(0o700).create(p) {
            Ok(()) => true,
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => true,
            Err(_) => false,
        }
    });
}

/// Without private mounts every protected entry freezes its root's top level (and, for a
/// nested one, each folder on the way to it). For the config folder at a root's top level that
/// price is paid only in the workspace (the first root), where the next session looks for
/// project config: freezing `/tmp` or `$TMPDIR` would break `mktemp`, and a project config
/// planted there is still ignored unless the user trusted that folder. Nested config folders
/// are only listed for project roots, so they are all kept.
fn keep_config_dir_of_workspace_only(layout: &mut Layout) {
    let workspace = layout.roots.first().cloned();
    let roots = layout.roots.clone();
    layout.protected.retain(|p| {
        let top_level_of_other_root = p
            .parent()
            .is_some_and(|parent| roots.iter().any(|r| r == parent))
            && p.parent() != workspace.as_deref();
        p.file_name() != Some(std::ffi::OsStr::new(roots::CONFIG_DIR)) || !top_level_of_other_root
    });
}

/// Without a mount namespace, a protected `.git` can only be kept out of reach by granting its
/// root's entries one by one instead of the root itself (Landlock has no deny rules).
fn sibling_grants(layout: &Layout, grants: &mut Vec<Grant>) -> Result<(), SandboxError> {
    for root in &layout.roots {
        expand(root, &layout.protected, grants)?;
    }
    Ok(())
}

fn expand(
    dir: &std::path::Path,
    protected: &[std::path::PathBuf],
    grants: &mut Vec<Grant>,
) -> Result<(), SandboxError> {
    if protected.iter().any(|p| p == dir) {
        return Ok(());
    }
    if !protected.iter().any(|p| p.starts_with(dir)) {
        grants.push(Grant::full(dir.to_path_buf()));
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| {
        SandboxError::Setup(format!("cannot list writable root {}: {e}", dir.display()))
    })?;
    for entry in entries {
        let entry = entry.map_err(|e| {
            SandboxError::Setup(format!("cannot list writable root {}: {e}", dir.display()))
        })?;
        // A symlink entry would grant its target, which may lie outside every root.
        if entry.file_type().map(|t| t.is_symlink()).unwrap_or(true) {
            continue;
        }
        expand(&entry.path(), protected, grants)?;
    }
    Ok(())
}

impl ChildSetup {
    /// Runs in the forked child: raw syscalls only. The child becomes the command's keeper
    /// (see `oi-process`); the command itself is forked by the keeper, born into the
    /// namespaces, and confined here before it returns to `exec`.
    fn apply(&mut self) -> io::Result<()> {
        // SAFETY: each call passes pointers to data owned by `self` that outlives the call.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            let shield = &self.shield;
            let pid_namespace = self.pid_namespace;
            // Mounting must precede Landlock, which forbids mount changes once enforced.
            let enter = || {
                if let Some(shield) = shield {
                    shield.apply()?;
                }
                if pid_namespace {
                    pidns::enter()?;
                }
                Ok(())
            };
            // From here on: the command (the PID namespace's init when there is one, which
            // reports the command's end to the keeper).
            if pid_namespace {
                let report = self.keeper.start_reporting(enter)?;
                pidns::become_init(report)?;
            } else {
                self.keeper.start(enter)?;
            }
            if libc::syscall(
                libc::SYS_landlock_restrict_self,
                self.ruleset.as_raw_fd(),
                0u32,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            for filter in &self.filters {
                let prog = libc::sock_fprog {
                    len: filter.len() as libc::c_ushort,
                    filter: filter.as_ptr() as *mut libc::sock_filter,
                };
                if libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0u32,
                    &prog as *const libc::sock_fprog,
                ) != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
            if let Some(signal_filter) = self.signal_filter.as_mut() {
                signal_filter.patch(libc::getpgrp(), libc::getpid());
                let program = signal_filter.program();
                let prog = libc::sock_fprog {
                    len: program.len() as libc::c_ushort,
                    filter: program.as_ptr() as *mut libc::sock_filter,
                };
                if libc::syscall(
                    libc::SYS_seccomp,
                    libc::SECCOMP_SET_MODE_FILTER,
                    0u32,
                    &prog as *const libc::sock_fprog,
                ) != 0
                {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        Ok(())
    }
}
