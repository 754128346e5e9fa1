//! `oi-process`: no command outlives the agent.
//!
//! Every child the agent starts — shell commands (sandboxed or not), `interpreter sandbox`,
//! MCP stdio servers, `git` for a thread's metadata — is started through [`supervise`] (or
//! [`supervise_std`]; or, when a sandbox also needs the child, through a [`Keeper`] it drives
//! itself). That gives each child:
//!
//! * **Its own process group**, whose id is the pid the agent sees, so one `kill(-pgid)` stops
//!   the command and everything it started ([`kill_group`]).
//! * **A keeper** (Linux): the agent's direct child is a tiny process that forks the real
//!   command and waits for it. It has `PR_SET_PDEATHSIG` set, so when the agent dies — even by
//!   `SIGKILL`, when no cleanup code runs — the kernel tells the keeper, which `SIGKILL`s the
//!   whole process group and exits. A plain `PR_SET_PDEATHSIG` on the command alone would not
//!   do: the flag is not inherited across `fork`, so `sh -c 'sleep 100; echo'` would leave the
//!   `sleep` running. The keeper mirrors the command's exit (code or signal), so callers see the
//!   command's own status. The sandbox uses it (a sandboxed command must be *born* in its
//!   namespaces, so a process has to fork it there).
//! * **A watcher** instead, for unsandboxed commands ([`supervise`], Linux ≥ 5.3): the agent's
//!   child is the command itself, and beside it (its child, sharing its memory with
//!   `CLONE_VM`: no second copy of the agent) a watcher polls pidfds of the agent and of the
//!   command. Agent gone → it kills the group; command gone → it exits. The agent waits for
//!   the command directly, so the watcher is on no path from spawn to status. It exits with
//!   no signal to its parent, so the command's own `wait()` never sees it.
//! * **No race with an agent that already died**: the agent's pid is recorded before `fork`; the
//!   child compares `getppid()` with it right after setting the death signal and exits if they
//!   differ (the agent died between `fork` and `prctl`).
//!
//! Limits, by design: a descendant that leaves the process group (`setsid`, `setpgid`) is not
//! reached by the group kill unless it also runs in a PID namespace whose init is the command
//! (the sandbox arranges that, see `oi-sandbox`). `PR_SET_PDEATHSIG` fires when the *thread*
//! that forked exits, not only when the process does; the keeper therefore only acts when its
//! parent *process* is gone (`getppid()` changed), and otherwise keeps watching — the kernel
//! re-parents it to another thread of the agent and re-arms the signal. So spawning from a
//! short-lived thread (tokio's blocking pool) is safe, just not needed.
//!
//! Everything the child runs between `fork` and `exec` is a raw system call on data prepared in
//! the parent: no allocation, no locks (the agent is multi-threaded).

#[cfg(target_os = "linux")]
mod keeper;
mod limits;
pub mod termination;
#[cfg(target_os = "linux")]
mod watcher;

pub use limits::raise_open_file_limit;
pub use termination::{TerminationSignal, TerminationSignals};

#[cfg(target_os = "linux")]
pub use keeper::ExitReport;

use std::io;

/// What the child needs to tie itself to the agent, captured in the parent before `fork`.
#[derive(Clone, Copy, Debug)]
pub struct Keeper {
    #[cfg(target_os = "linux")]
    agent_pid: libc::pid_t,
}

impl Default for Keeper {
    fn default() -> Self {
        Self::new()
    }
}

impl Keeper {
    /// Record the agent's pid (call in the parent, before spawning).
    pub fn new() -> Self {
        Keeper {
            // SAFETY: getpid has no preconditions.
            #[cfg(target_os = "linux")]
            agent_pid: unsafe { libc::getpid() },
        }
    }

    /// Runs in the forked child (a `pre_exec` hook of a command in its own process group).
    /// Ties the child to the agent, runs `before_fork` (e.g. entering namespaces the command
    /// must be born into), then forks: the calling process becomes the keeper and never
    /// returns; the new process returns `Ok` and goes on to `exec` the command.
    ///
    /// # Safety
    /// Only call between `fork` and `exec`, and only with a `before_fork` that is itself
    /// async-signal-safe (raw system calls on prepared data).
    pub unsafe fn start(&self, before_fork: impl FnOnce() -> io::Result<()>) -> io::Result<()> {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: forwarded contract.
            unsafe { keeper::start(self.agent_pid, before_fork, false) }.map(|_| ())
        }
        #[cfg(not(target_os = "linux"))]
        {
            before_fork()
        }
    }

    /// [`Keeper::start`] for a command side that stays to watch the command (a PID
    /// namespace's init): it gets an [`ExitReport`] on which to send the command's status, so
    /// the keeper — and with it the agent's wait — ends as soon as the command does, not after
    /// the watcher's own exit (which tears its namespaces down).
    ///
    /// # Safety
    /// As for [`Keeper::start`].
    #[cfg(target_os = "linux")]
    pub unsafe fn start_reporting(
        &self,
        before_fork: impl FnOnce() -> io::Result<()>,
    ) -> io::Result<ExitReport> {
        // SAFETY: forwarded contract.
        let report = unsafe { keeper::start(self.agent_pid, before_fork, true) }?;
        report.ok_or_else(|| io::Error::other("the keeper made no report channel"))
    }
}

/// Start `cmd` in its own process group, watched so that it cannot outlive the agent. For
/// commands that are not sandboxed (the sandbox installs its own keeper with namespaces).
///
/// On Linux the spawned process is the command itself, with a *watcher* beside it (see the
/// crate docs); where the kernel lacks pidfds (before 5.3) it is a [`Keeper`] instead.
pub fn supervise(cmd: &mut tokio::process::Command) {
    supervise_std(cmd.as_std_mut());
}

/// [`supervise`] for a [`std::process::Command`], for a caller that waits for its child
/// synchronously (on a blocking thread, e.g. `oi-thread-store` running `git`).
pub fn supervise_std(cmd: &mut std::process::Command) {
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(cmd, 0);
    #[cfg(target_os = "linux")]
    {
        let keeper = Keeper::new();
        let watcher = watcher::Watcher::new(keeper.agent_pid);
        // SAFETY: `Watcher::start` and `Keeper::start` only issue raw system calls on copied
        // plain data.
        unsafe {
            std::os::unix::process::CommandExt::pre_exec(cmd, move || {
                if let Some(watcher) = watcher
                    && watcher.start()?
                {
                    return Ok(());
                }
                keeper.start(|| Ok(()))
            });
        }
    }
}

/// A command for `program`, already [`supervise`]d (own process group, cannot outlive the
/// agent) and killed when its `Child` is dropped: how every layer but the sandbox and the
/// exec layer builds a child. A caller that wants the child to run on after the handle is
/// gone says so with `kill_on_drop(false)`.
pub fn command(program: impl AsRef<std::ffi::OsStr>) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(program);
    cmd.kill_on_drop(true);
    supervise(&mut cmd);
    cmd
}

/// [`command`] for a caller that waits for its child synchronously. std has no kill on
/// drop: the caller waits for the child or kills it.
pub fn command_std(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    supervise_std(&mut cmd);
    cmd
}

/// `SIGKILL` the process group `pgid` (a pid returned by spawning a supervised command).
/// Harmless if the group is already gone.
pub fn kill_group(pgid: u32) {
    #[cfg(unix)]
    if let Ok(pgid) = libc::pid_t::try_from(pgid)
        && pgid > 0
    {
        // SAFETY: kill(2) with a negative pid signals that process group only.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// A child's exit status as a shell reports it: the exit code, or `128 + signal` when a
/// signal ended it (`-1` for a status that is neither, which `wait` does not return).
pub fn exit_code(status: std::process::ExitStatus) -> i32 {
    if let Some(code) = status.code() {
        return code;
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(sig) = status.signal() {
            return 128 + sig;
        }
    }
    -1
}
