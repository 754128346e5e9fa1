//! The watcher: the keeper of an unsandboxed command, without a second copy of the agent.
//!
//! The fork keeper (`keeper.rs`) sits between the agent and the command, so every command
//! costs two copies of the agent's address space (the agent's fork, the keeper's fork) and
//! two teardowns (the command's `exec`, the keeper's exit) on the path from spawn to status;
//! for an agent with a few hundred MB resident that is milliseconds per command. An
//! unsandboxed command needs no process between it and the agent, so here the agent's child
//! *is* the command, and the watcher runs beside it:
//!
//! * the command (still before `exec`) opens pidfds of the agent and of itself, then clones
//!   the watcher with `CLONE_VM`: no copy — it shares the command's memory (the agent's fork
//!   copy) and keeps it when the command execs — on a stack mapped once in the agent;
//! * the watcher polls both pidfds: agent gone → `SIGKILL` the command's group; command gone
//!   → exit. A pidfd is readable when the whole process has exited, so a thread of either
//!   that exits means nothing (unlike `PR_SET_PDEATHSIG`, which follows threads);
//! * its exit signal is 0, which makes it a "clone child" that the command's `wait()` and
//!   `waitpid(-1)` never see (a shell's `wait` does not wait for it); when the command exits
//!   it is re-parented to init, which reaps it.
//!
//! The agent waits for the command itself, so statuses need no mirroring, and nothing the
//! watcher does is on the path from the command's exit to the agent seeing it.

use std::io;
use std::sync::OnceLock;

/// Stack of the watcher: it runs a handful of system calls, a few hundred bytes deep.
const STACK_SIZE: usize = 64 * 1024;

/// One stack region, mapped once in the agent with a guard page below it and never used by
/// the agent: each command's fork has its own copy of it, and its watcher runs there.
fn stack_top() -> Option<usize> {
    static STACK: OnceLock<Option<usize>> = OnceLock::new();
    *STACK.get_or_init(|| {
        let page = 4096;
        // SAFETY: a fresh anonymous mapping; nothing else refers to it.
        unsafe {
            let base = libc::mmap(
                std::ptr::null_mut(),
                STACK_SIZE + page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            );
            if base == libc::MAP_FAILED {
                return None;
            }
            // The guard page: an overflow faults instead of writing into other memory.
            if libc::mprotect(base, page, libc::PROT_NONE) != 0 {
                libc::munmap(base, STACK_SIZE + page);
                return None;
            }
            Some(base as usize + STACK_SIZE + page)
        }
    })
}

/// What the command's side needs, prepared in the agent before `fork`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Watcher {
    agent_pid: libc::pid_t,
    stack_top: usize,
}

impl Watcher {
    /// `None` when the stack cannot be mapped or the agent is init (the caller then uses the
    /// fork keeper).
    pub(crate) fn new(agent_pid: libc::pid_t) -> Option<Self> {
        if agent_pid == 1 {
            // The agent is init (e.g. a container's entry point): orphaned watchers would
            // be re-parented to it, and it reaps only its own commands. The fork keeper
            // leaves no orphans.
            return None;
        }
        Some(Watcher {
            agent_pid,
            stack_top: stack_top()?,
        })
    }

    /// Runs in the command (a `pre_exec` hook, after it has its own process group): start
    /// the watcher. `Ok(false)` when this kernel has no pidfds (the caller then becomes a
    /// fork keeper instead); an error fails the spawn, so no command runs unwatched.
    ///
    /// # Safety
    /// Only between `fork` and `exec`.
    pub(crate) unsafe fn start(&self) -> io::Result<bool> {
        // SAFETY: raw syscalls on stack data in a forked, single-threaded child.
        unsafe {
            // Pidfds are close-on-exec: the command's copies go at exec; the watcher gets a
            // copy of the descriptor table (not a share of it) and keeps its own.
            let agent = pidfd_open(self.agent_pid);
            if agent < 0 {
                return match io::Error::last_os_error().raw_os_error() {
                    Some(libc::ENOSYS) => Ok(false),
                    _ => Err(io::Error::last_os_error()),
                };
            }
            // The pidfd names the agent only if the agent is still our parent now (else the
            // pid may already be someone else's).
            if libc::getppid() != self.agent_pid {
                libc::_exit(1);
            }
            let command = pidfd_open(libc::getpid());
            if command < 0 {
                let err = io::Error::last_os_error();
                libc::close(agent);
                return Err(err);
            }
            // Two small numbers travel in the argument itself, so the watcher reads nothing
            // from memory the command may change before it execs.
            let arg = ((agent as u32 as usize) << 32) | command as u32 as usize;
            // Exit signal 0 (the low byte of the flags): a clone child, see the module docs.
            let watcher = libc::clone(
                watch,
                self.stack_top as *mut libc::c_void,
                libc::CLONE_VM,
                arg as *mut libc::c_void,
            );
            let started = if watcher < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(true)
            };
            libc::close(agent);
            libc::close(command);
            started
        }
    }
}

unsafe fn pidfd_open(pid: libc::pid_t) -> libc::c_int {
    // SAFETY: plain syscall.
    unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) as libc::c_int }
}

/// The watcher's life. Never returns.
extern "C" fn watch(arg: *mut libc::c_void) -> libc::c_int {
    let arg = arg as usize;
    let agent = (arg >> 32) as u32 as libc::c_int;
    let command = (arg & 0xffff_ffff) as u32 as libc::c_int;
    // SAFETY: (whole body) raw syscalls on this stack's data. The watcher shares memory with
    // the command until it execs, so it writes nothing else; errno (the command's, until the
    // exec) is written only by a failing call, and none of these fail in normal operation.
    unsafe {
        // The command's signal mask, whatever it is, must not matter to poll: block them all.
        let mut all = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigfillset(all.as_mut_ptr());
        libc::sigprocmask(libc::SIG_SETMASK, all.as_ptr(), std::ptr::null_mut());
        // Hold none of the agent's descriptors (pipes must close when the command is done):
        // keep the two pidfds at 0 and 1.
        libc::dup2(agent, 0);
        libc::dup2(command, 1);
        if libc::syscall(libc::SYS_close_range, 2u32, u32::MAX, 0u32) != 0 {
            for fd in 2..4096 {
                libc::close(fd);
            }
        }
        let mut fds = [
            libc::pollfd {
                fd: 0,
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: 1,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        loop {
            if libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) < 0 {
                // EINTR cannot happen with every signal blocked; anything else means the
                // watch cannot go on, and an unwatched command must not run on.
                if *libc::__errno_location() != libc::EINTR {
                    kill_group_and_exit();
                }
                continue;
            }
            if fds[0].revents != 0 {
                // The agent is gone (killed, crashed, exited): take the whole group with it.
                kill_group_and_exit();
            }
            if fds[1].revents != 0 {
                // The command has exited: nothing left to watch.
                libc::_exit(0);
            }
        }
    }
}

fn kill_group_and_exit() -> ! {
    // SAFETY: signals our own process group (the command's), then ends this process.
    unsafe {
        libc::kill(-libc::getpgrp(), libc::SIGKILL);
        libc::_exit(137)
    }
}
