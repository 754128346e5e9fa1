//! The keeper: the agent's direct child, which forks the command and waits for it, and kills
//! the command's process group when the agent dies. Runs between `fork` and `exec`: raw
//! system calls only.

use std::io;
use std::mem::MaybeUninit;

/// The death signal the kernel sends the keeper when its parent thread exits. Blocked and
/// taken with `sigwaitinfo`, never delivered to a handler.
const PARENT_GONE: libc::c_int = libc::SIGHUP;

/// Runs in the forked child; see `Keeper::start`. With `report`, the command side gets the
/// write end of a pipe on which it may send the command's wait status (see [`ExitReport`]).
pub(crate) unsafe fn start(
    agent_pid: libc::pid_t,
    before_fork: impl FnOnce() -> io::Result<()>,
    report: bool,
) -> io::Result<Option<ExitReport>> {
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

        // Both ends close on exec: a command that execs drops the write end (the keeper then
        // sees EOF and goes on waiting for SIGCHLD); only a process that stays (a PID
        // namespace's init) keeps it to report on.
        let mut pipe_fds = [-1; 2];
        if report {
            check(libc::pipe2(pipe_fds.as_mut_ptr(), libc::O_CLOEXEC))?;
        }
        let [report_read, report_write] = pipe_fds;

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
            if !report {
                return Ok(None);
            }
            libc::close(report_read);
            return Ok(Some(ExitReport { fd: report_write }));
        }
        keep(agent_pid, child, &waited, report_read)
    }
}

/// The command side's way to tell the keeper how the command ended before the process that
/// knows it has exited. A PID namespace's init uses it: its own exit tears the namespace down
/// (the mount namespace's teardown waits for an RCU grace period, milliseconds on a busy
/// machine), and the agent should not wait for that to learn that the command is done.
#[derive(Debug)]
pub struct ExitReport {
    fd: libc::c_int,
}

impl ExitReport {
    /// Close every other descriptor of this process (a watcher that stays behind the command
    /// must not hold its pipes open), keeping the report's.
    ///
    /// # Safety
    /// Only in a forked child that owns every descriptor it holds.
    pub unsafe fn close_other_fds(&mut self) {
        // SAFETY: forwarded contract.
        self.fd = unsafe { keep_only(self.fd) };
    }

    /// Send `status` (as `waitpid` returned it); the keeper exits the same way at once.
    /// Whether the keeper got it (if not, the keeper still waits for its child's exit).
    ///
    /// # Safety
    /// Async-signal-safe (one `write`); meant for a forked child.
    pub unsafe fn send(self, status: libc::c_int) -> bool {
        let bytes = status.to_ne_bytes();
        // SAFETY: writes from a stack buffer valid for its length; closes our own descriptor.
        unsafe {
            let n = libc::write(self.fd, bytes.as_ptr().cast(), bytes.len());
            libc::close(self.fd);
            n == bytes.len() as isize
        }
    }
}

/// The keeper's life: wait for the command, for a report of its status, or for the agent to
/// vanish. Never returns.
unsafe fn keep(
    agent_pid: libc::pid_t,
    child: libc::pid_t,
    waited: &libc::sigset_t,
    report_read: libc::c_int,
) -> ! {
    // SAFETY: (whole function) raw syscalls on stack data.
    unsafe {
        // The keeper must not hold the agent's pipes: stdout/stderr EOF has to mean the
        // command tree is done, and std's exec-status pipe has to close when the command
        // execs (or the agent's spawn would block until the command ends).
        let report_read = keep_only(report_read);
        // The waited signals arrive on a descriptor, so one `poll` waits for them and for
        // the report together. Without a signalfd (never expected) fall back to the signals.
        let signals = libc::signalfd(-1, waited, libc::SFD_CLOEXEC);
        if signals < 0 {
            wait_for_signals(agent_pid, child, waited);
        }
        let mut fds = [
            libc::pollfd {
                fd: signals,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: report_read,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // A negative fd is ignored by poll: no report channel, or it closed without a word.
        loop {
            if libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) < 0 {
                if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                // Cannot poll (never expected): the signals alone still say everything but
                // the early report.
                wait_for_signals(agent_pid, child, waited);
            }
            if fds[1].revents != 0 {
                let mut status = [0u8; 4];
                let n = libc::read(fds[1].fd, status.as_mut_ptr().cast(), status.len());
                if n == status.len() as isize {
                    mirror(libc::c_int::from_ne_bytes(status));
                }
                // EOF: the command exec'd (or its init died) without reporting.
                libc::close(fds[1].fd);
                fds[1].fd = -1;
            }
            if fds[0].revents != 0 {
                let mut info = MaybeUninit::<libc::signalfd_siginfo>::uninit();
                let size = std::mem::size_of::<libc::signalfd_siginfo>();
                if libc::read(fds[0].fd, info.as_mut_ptr().cast(), size) == size as isize {
                    let sig = info.assume_init().ssi_signo as libc::c_int;
                    on_signal(sig, agent_pid, child);
                }
            }
        }
    }
}

/// The keeper's wait without the report channel: the signals, taken one by one.
unsafe fn wait_for_signals(
    agent_pid: libc::pid_t,
    child: libc::pid_t,
    waited: &libc::sigset_t,
) -> ! {
    loop {
        // SAFETY: `waited` is a valid set on the caller's stack.
        let sig = unsafe { libc::sigwaitinfo(waited, std::ptr::null_mut()) };
        // SAFETY: raw syscalls in the keeper.
        unsafe { on_signal(sig, agent_pid, child) };
    }
}

/// One waited signal: the agent gone (kill the group and go), or a child's state changed.
unsafe fn on_signal(sig: libc::c_int, agent_pid: libc::pid_t, child: libc::pid_t) {
    // SAFETY: raw syscalls on stack data.
    unsafe {
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

/// Close every descriptor but `keep` (if it is one); returns where `keep` now is.
pub(crate) unsafe fn keep_only(keep: libc::c_int) -> libc::c_int {
    // SAFETY: descriptors we own (the forked copies).
    unsafe {
        if keep < 0 {
            close_all_fds(0);
            return -1;
        }
        // Move it to 0 (the keeper's copy of the command's stdin, which it does not need),
        // so everything above can go in one call.
        if keep != 0 {
            libc::dup2(keep, 0);
        }
        close_all_fds(1);
        0
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

/// Close every descriptor from `first` up.
unsafe fn close_all_fds(first: libc::c_int) {
    // SAFETY: closing descriptors we own (the forked copies).
    unsafe {
        if libc::syscall(libc::SYS_close_range, first as u32, u32::MAX, 0u32) == 0 {
            return;
        }
        // Kernels before 5.9: close what a default limit allows.
        for fd in first..4096 {
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
