//! The keeper: the agent's direct child, which forks the command and waits for it, and kills
//! the command's process group when the agent dies. Runs between `fork` and `exec`: raw
//! system calls only.

use std::io;
use std::mem::MaybeUninit;

/// The death signal the kernel sends the keeper when its parent thread exits. Blocked and
/// taken with `sigwaitinfo`, never delivered to a handler.
const PARENT_GONE: libc::c_int = libc::SIGHUP;

pub(crate) unsafe fn start(
    agent_pid: libc::pid_t,
    before_fork: impl FnOnce() -> io::Result<()>,
) -> io::Result<()> {
    // SAFETY: (whole function) raw syscalls on stack data, in a single-threaded forked child.
    unsafe {
        // Block every signal *before* arming the death signal, so it cannot be delivered (and
        // kill us with its default action) before we wait for it. The keeper must also survive
        // what is meant for the command: a SIGTERM to the group (graceful shutdown of an MCP
        // server, `kill 0` inside the command) reaches the command, and the keeper waits for
        // the command's own exit. Only SIGKILL stops the keeper.
        let mut all = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigfillset(all.as_mut_ptr());
        let all = all.assume_init();
        let mut waited = MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(waited.as_mut_ptr());
        let mut waited = waited.assume_init();
        libc::sigaddset(&mut waited, libc::SIGCHLD);
        libc::sigaddset(&mut waited, PARENT_GONE);
        let mut previous = MaybeUninit::<libc::sigset_t>::uninit();
        check(libc::sigprocmask(
            libc::SIG_BLOCK,
            &all,
            previous.as_mut_ptr(),
        ))?;
        let previous = previous.assume_init();
        check(libc::prctl(libc::PR_SET_PDEATHSIG, PARENT_GONE))?;
        if libc::getppid() != agent_pid {
            // The agent died between fork and prctl: nothing was started, just go.
            libc::_exit(1);
        }

        before_fork()?;

        let keeper = libc::getpid();
        let child = libc::fork();
        if child < 0 {
            return Err(io::Error::last_os_error());
        }
        if child == 0 {
            // The command. Die with the keeper too (cheap insurance: a group kill reaches us
            // anyway); in a fresh PID namespace getppid() is 0, so only check outside one.
            check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL))?;
            let ppid = libc::getppid();
            if ppid != keeper && ppid != 0 {
                libc::_exit(1);
            }
            check(libc::sigprocmask(
                libc::SIG_SETMASK,
                &previous,
                std::ptr::null_mut(),
            ))?;
            return Ok(());
        }
        keep(agent_pid, child, &waited)
    }
}

/// The keeper's life: wait for the command, or for the agent to vanish. Never returns.
unsafe fn keep(agent_pid: libc::pid_t, child: libc::pid_t, waited: &libc::sigset_t) -> ! {
    // SAFETY: (whole function) raw syscalls on stack data.
    unsafe {
        // The keeper must not hold the agent's pipes: stdout/stderr EOF has to mean the
        // command tree is done, and std's exec-status pipe has to close when the command
        // execs (or the agent's spawn would block until the command ends).
        close_all_fds();
        loop {
            let sig = libc::sigwaitinfo(waited, std::ptr::null_mut());
            if sig == PARENT_GONE && libc::getppid() != agent_pid {
                // The agent is gone (killed, crashed, exited): take the whole group with it.
                libc::kill(-libc::getpgrp(), libc::SIGKILL);
                libc::_exit(137);
            }
            // PARENT_GONE with the agent still our parent: an agent *thread* exited (we were
            // re-parented to a sibling thread and the signal re-armed), or someone sent it.
            let mut status = 0;
            let r = libc::waitpid(child, &mut status, libc::WNOHANG);
            if r == child {
                mirror(status);
            }
        }
    }
}

/// Exit the way the command did, so the agent sees the command's status, not ours.
unsafe fn mirror(status: libc::c_int) -> ! {
    // SAFETY: raw syscalls.
    unsafe {
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            // No core file for the keeper, whatever the command's signal would do.
            let no_core = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &no_core);
            libc::signal(sig, libc::SIG_DFL);
            let mut all = MaybeUninit::<libc::sigset_t>::uninit();
            libc::sigfillset(all.as_mut_ptr());
            libc::sigprocmask(libc::SIG_UNBLOCK, all.as_ptr(), std::ptr::null_mut());
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        libc::_exit(libc::WEXITSTATUS(status));
    }
}

unsafe fn close_all_fds() {
    // SAFETY: closing descriptors we own (the forked copies).
    unsafe {
        if libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32) == 0 {
            return;
        }
        // Kernels before 5.9: close what a default limit allows.
        for fd in 0..4096 {
            libc::close(fd);
        }
    }
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
