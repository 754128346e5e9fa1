//! `oi-sandbox`: confines the commands the model runs to what the user allowed.
//!
//! The policy is [`SandboxPolicy`] from `oi-protocol`; this crate turns it into kernel
//! enforcement for one child process (and everything that child starts):
//!
//! * **Filesystem** — Landlock. Every write-ish access right the running kernel's Landlock ABI
//!   knows (write, truncate, create, remove, rename/link across directories, device ioctl) is
//!   *handled*; reading and executing stay unrestricted. Writes are granted beneath the writable
//!   roots (see [`writable_roots`]) and on a short list of harmless character devices
//!   (`/dev/null`, `/dev/zero`, `/dev/full`, `/dev/tty`, `/dev/ptmx`, `/dev/pts/*`,
//!   `/dev/random`, `/dev/urandom`).
//! * **`.git`** — a `.git` entry directly inside a writable root stays read-only unless
//!   [`SandboxRequest::allow_git_writes`] (or the root is itself that `.git`). Landlock is
//!   allow-list only: any right granted on a root reaches everything beneath it, `.git` included.
//!   Two layouts, both keeping `.git` (and a symlinked `.git`'s target) unwritable:
//!   - *mount layout* (used when a probe shows namespaces work): the child unshares a mount
//!     namespace (plus a user namespace mapping its own uid/gid when not root, so files of other
//!     users show as the overflow id), bind-mounts each `.git` read-only over itself and
//!     re-resolves its cwd; Landlock then grants the whole root. The root stays fully writable.
//!   - *sibling layout* (fallback: namespaces unavailable, or `.git` is a symlink): no right on
//!     the root itself; full rights on each *existing* entry of the root except `.git`,
//!     recursively for any entry that leads to a protected `.git` (e.g. a repo inside `/tmp`).
//!     Consequence: entries directly in the root cannot be created, removed or renamed; contents
//!     of existing entries are fully writable; symlinked entries are not granted.
//!
//!   [`is_path_writable`] answers with the mount layout's meaning (policy intent).
//! * **`.openinterpreter`** — protected the same way in every writable root, always (also with
//!   `allow_git_writes`): the project config in it can loosen the next session. A missing one is
//!   created empty (0700) before the command starts so it can be mounted read-only; creating it
//!   is therefore refused as well.
//! * **Read-only paths** ([`SandboxRequest::read_only`]) — protected the same way, when they
//!   exist inside a writable root: what an accepted project config launches outside the sandbox.
//! * **Network** — when the policy has no network access, a seccomp filter makes `socket(2)` fail
//!   with `EPERM` for every address family except `AF_UNIX` and `AF_NETLINK`, and refuses
//!   `io_uring` (which could create sockets without the `socket` syscall). On Landlock ABI ≥ 4,
//!   TCP bind/connect are additionally denied by Landlock.
//! * **Always** (any confining policy) — `ioctl(TIOCSTI/TIOCLINUX)` is refused (no typing into
//!   the user's terminal); `open_by_handle_at`, module loading, kexec, reboot and swap are
//!   refused (root could sidestep path rules with them); `PR_SET_NO_NEW_PRIVS` is set; on
//!   Landlock ABI < 3 (which cannot govern truncation) `truncate(2)` and read-only opens with
//!   `O_TRUNC` fail with `EPERM` and `openat2` with `ENOSYS`. Other ABI gaps only make the
//!   sandbox stricter (ABI 1 refuses cross-directory renames) or concern device ioctls (ABI < 5).
//!
//! Everything is prepared in the parent (ruleset fd, compiled BPF, C strings); the `pre_exec`
//! hook only issues raw system calls, so it is safe after `fork` in a multi-threaded runtime.
//!
//! Fail closed: if the kernel cannot enforce the policy, [`confine`] and [`run_sandboxed`] return
//! [`SandboxError::Unsupported`] with what is missing and how to proceed; a command is never run
//! unconfined silently. On non-Linux targets every confining policy is unsupported.
//!
//! This crate knows nothing about approvals, tools or the model: the engine decides *whether* to
//! run a command and under which policy; this crate only enforces it.

use std::path::{Path, PathBuf};

use oi_protocol::config_types::SandboxPolicy;

mod roots;

#[cfg(target_os = "linux")]
mod linux;
#[cfg(not(target_os = "linux"))]
mod other;

#[cfg(target_os = "linux")]
use linux as imp;
#[cfg(not(target_os = "linux"))]
use other as imp;

/// What to confine a command to.
#[derive(Clone, Copy, Debug)]
pub struct SandboxRequest<'a> {
    /// The confinement to apply (read-only, workspace-write, or full access).
    pub policy: &'a SandboxPolicy,
    /// The workspace root (the session cwd); writable under `workspace-write`.
    pub sandbox_cwd: &'a Path,
    /// Let the command write inside `.git` entries of writable roots (off by default).
    pub allow_git_writes: bool,
    /// Existing files or folders inside the writable roots that stay read-only, protected like
    /// `.git`: the programs and scripts an accepted project config launches unsandboxed
    /// (`oi_config::launch_pins`), which a command must not be able to rewrite.
    pub read_only: &'a [PathBuf],
}

/// Why a command cannot be confined.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel cannot enforce the policy; the message says why and how to proceed.
    #[error("{0}")]
    Unsupported(String),
    /// Preparing the confinement failed (e.g. the ruleset could not be built).
    #[error("sandbox setup failed: {0}")]
    Setup(String),
    /// The confined command could not be started (only from [`run_sandboxed`]).
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program the confined command was to run.
        program: String,
        /// Why the operating system refused to start it.
        #[source]
        source: std::io::Error,
    },
}

/// Check support once (cached): `Ok` if this kernel can enforce `policy`.
pub fn check_support(policy: &SandboxPolicy) -> Result<(), SandboxError> {
    match policy {
        SandboxPolicy::DangerFullAccess => Ok(()),
        _ => imp::check_support(policy),
    }
}

/// Arrange for `cmd` to run confined. `DangerFullAccess`: no-op. Otherwise fail closed with
/// [`SandboxError::Unsupported`] if the kernel can't enforce the policy; else install the
/// confinement so it is applied in the child before `exec`.
pub fn confine(
    cmd: &mut tokio::process::Command,
    req: &SandboxRequest<'_>,
) -> Result<(), SandboxError> {
    match req.policy {
        SandboxPolicy::DangerFullAccess => Ok(()),
        _ => imp::confine(cmd, req),
    }
}

/// Writable roots the policy grants, canonicalized where they exist (for display and for
/// checking `apply_patch` targets before writing). `danger-full-access` → `["/"]`;
/// `read-only` → none. Roots that do not exist are listed but grant nothing.
pub fn writable_roots(req: &SandboxRequest<'_>) -> Vec<PathBuf> {
    roots::writable_roots(req, std::env::var_os("TMPDIR"))
}

/// Whether the policy lets a command write `path` (relative paths are taken from
/// `sandbox_cwd`; symlinks in existing components are resolved). Follows the policy's intent:
/// beneath a writable root and not inside a protected `.git` (the mount-namespace layout).
pub fn is_path_writable(req: &SandboxRequest<'_>, path: &Path) -> bool {
    roots::is_path_writable(req, std::env::var_os("TMPDIR"), path)
}

/// For `interpreter sandbox`: run `argv` under the policy with inherited stdio in `cwd` and
/// return its exit code; a command killed by signal N yields 128+N.
pub async fn run_sandboxed(
    argv: &[String],
    cwd: &Path,
    req: &SandboxRequest<'_>,
) -> Result<i32, SandboxError> {
    run_sandboxed_with_env(argv, cwd, req, None).await
}

/// [`run_sandboxed`] with the command's whole environment given (`None` inherits this
/// process's), so `interpreter sandbox` shows what the agent's commands would see.
pub async fn run_sandboxed_with_env(
    argv: &[String],
    cwd: &Path,
    req: &SandboxRequest<'_>,
    env: Option<&std::collections::HashMap<String, String>>,
) -> Result<i32, SandboxError> {
    let Some((program, args)) = argv.split_first() else {
        return Err(SandboxError::Setup(
            "no command given: pass the command after `--`, e.g. `interpreter sandbox -- ls`"
                .to_string(),
        ));
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args).current_dir(cwd).kill_on_drop(true);
    if let Some(env) = env {
        cmd.env_clear().envs(env);
    }
    // The command runs in its own process group (see `oi-process`); at a terminal that group
    // must own the terminal, or reading it would stop the command (SIGTTIN) and Ctrl-C would
    // not reach it. Registered before `confine`, so it runs before any namespace is entered.
    #[cfg(target_os = "linux")]
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stdin());
    #[cfg(target_os = "linux")]
    if terminal {
        // SAFETY: only raw syscalls (see `take_terminal`).
        unsafe {
            cmd.pre_exec(|| {
                take_terminal();
                Ok(())
            });
        }
    }
    confine(&mut cmd, req)?;
    // Unconfined, no keeper was installed: supervise it like any other child.
    if matches!(req.policy, SandboxPolicy::DangerFullAccess) {
        oi_process::supervise(&mut cmd);
    }
    let status = cmd.status().await.map_err(|source| SandboxError::Spawn {
        program: program.clone(),
        source,
    });
    #[cfg(target_os = "linux")]
    if terminal {
        // Take the terminal back for our own group.
        take_terminal();
    }
    Ok(oi_process::exit_code(status?))
}

/// Make the calling process's group the terminal's foreground group. From a background
/// group this raises SIGTTOU unless blocked, so it is blocked around the call (per thread).
#[cfg(target_os = "linux")]
fn take_terminal() {
    // SAFETY: raw syscalls on stack data; async-signal-safe (also used between fork and exec).
    unsafe {
        let mut ttou = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(ttou.as_mut_ptr());
        let mut ttou = ttou.assume_init();
        libc::sigaddset(&mut ttou, libc::SIGTTOU);
        let mut old = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::pthread_sigmask(libc::SIG_BLOCK, &ttou, old.as_mut_ptr());
        libc::tcsetpgrp(libc::STDIN_FILENO, libc::getpgrp());
        libc::pthread_sigmask(libc::SIG_SETMASK, old.as_ptr(), std::ptr::null_mut());
    }
}
