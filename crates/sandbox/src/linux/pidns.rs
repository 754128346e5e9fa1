//! A PID namespace per sandboxed command: the command is its namespace's init, so it cannot
//! see or signal any process outside the sandbox, and when it dies (or its keeper kills its
//! group) the kernel kills everything left inside — including processes that left the group.
//!
//! Entered by the keeper (see `oi-process`) right before it forks the command, after the
//! mount (and, unprivileged, user) namespace of `MountShield`, which is what gives an
//! unprivileged user the right to create it. The command then mounts a fresh `/proc`, so `ps`
//! and `pkill` see only the sandbox; that mount is best effort (a container may forbid it), the
//! signal isolation does not depend on it.

use std::io;
use std::sync::OnceLock;

use super::shield::MountShield;

/// Runs in the keeper, after `MountShield::apply`: the next fork starts a new PID namespace.
pub(crate) unsafe fn enter() -> io::Result<()> {
    // SAFETY: plain syscall.
    if unsafe { libc::unshare(libc::CLONE_NEWPID) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Runs in the first process of the new namespace (pid 1), before Landlock forbids mounting:
/// mounts `/proc`, then forks the command and stays behind as the namespace's init. Returns
/// only in the command.
///
/// The command must not be pid 1 itself: the kernel drops signals that init has no handler
/// for, so `kill $$`, `raise()` or `abort()` in the command would be silently ignored.
///
/// When the command ends, init sends its status on `report` and stays until the keeper (its
/// parent) exits, whose death signal then ends init and with it the namespaces. So the keeper
/// and the agent's wait end with the command, while the teardown — killing what the command
/// left in the namespace, unmounting, an RCU grace period for the mount namespace — runs
/// after. Without a keeper listening, init exits like the command did.
pub(crate) unsafe fn become_init(mut report: oi_process::ExitReport) -> io::Result<()> {
    // SAFETY: raw syscalls in a single-threaded forked child.
    unsafe {
        mount_proc();
        let command = libc::fork();
        if command < 0 {
            return Err(io::Error::last_os_error());
        }
        if command == 0 {
            // The report's descriptor closes when the command execs.
            return Ok(());
        }
        // Init: hold nothing of the agent's (pipes must close when the command tree is
        // done), reap every orphan, and report how the command ended.
        report.close_other_fds();
        let status = reap_until(command);
        if report.send(status) {
            // The keeper exits on this report; its death signal (SIGKILL) ends us. Until
            // then, go on reaping what the command left behind.
            loop {
                if reap_one() == -1 {
                    libc::pause();
                }
            }
        }
        // A signal cannot be re-raised by init (it would be ignored): report it the way
        // shells do, as 128 + signal.
        let code = if libc::WIFSIGNALED(status) {
            128 + libc::WTERMSIG(status)
        } else {
            libc::WEXITSTATUS(status)
        };
        libc::_exit(code);
    }
}

/// Reap children until `command` is among them; its wait status.
unsafe fn reap_until(command: libc::pid_t) -> libc::c_int {
    loop {
        let mut status = 0;
        // SAFETY: waits for our own children.
        let r = unsafe { libc::waitpid(-1, &mut status, 0) };
        if r == command {
            return status;
        }
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            // No children left without having seen the command: report a failure.
            return 1 << 8;
        }
    }
}

/// Reap one child (blocking); -1 once there are none.
unsafe fn reap_one() -> libc::pid_t {
    let mut status = 0;
    loop {
        // SAFETY: waits for our own children.
        let r = unsafe { libc::waitpid(-1, &mut status, 0) };
        if r >= 0 || io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return r;
        }
    }
}

unsafe fn mount_proc() {
    // SAFETY: NUL-terminated literals.
    unsafe {
        libc::mount(
            c"proc".as_ptr(),
            c"/proc".as_ptr(),
            c"proc".as_ptr(),
            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
            std::ptr::null(),
        );
    }
}

/// Whether this environment lets us create the namespaces (probed once, in throwaway
/// children: namespaces may be disabled by sysctl, an LSM or a container's seccomp profile).
pub(crate) fn works() -> bool {
    static WORKS: OnceLock<bool> = OnceLock::new();
    *WORKS.get_or_init(probe)
}

fn probe() -> bool {
    let Ok(shield) = MountShield::new(&[]) else {
        return false;
    };
    // SAFETY: the child only issues raw syscalls on prepared data and `_exit`s.
    unsafe {
        let pid = libc::fork();
        if pid < 0 {
            return false;
        }
        if pid == 0 {
            let ok = shield.apply().is_ok() && enter().is_ok();
            if !ok {
                libc::_exit(1);
            }
            let init = libc::fork();
            if init < 0 {
                libc::_exit(1);
            }
            if init == 0 {
                // In the new namespace, init sees itself as pid 1.
                libc::_exit(if libc::getpid() == 1 { 0 } else { 1 });
            }
            libc::_exit(if wait(init) { 0 } else { 1 });
        }
        wait(pid)
    }
}

/// Wait for `pid`; whether it exited with status 0.
fn wait(pid: libc::pid_t) -> bool {
    let mut status = 0;
    loop {
        // SAFETY: waits for our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
        }
        if r < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return false;
        }
    }
}
