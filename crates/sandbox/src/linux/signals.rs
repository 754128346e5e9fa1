//! Keeping a sandboxed command's signals inside its sandbox when no PID namespace is
//! available: a seccomp filter on the signal-sending system calls.
//!
//! The exact rule (argument values compared as 32-bit ints):
//!
//! | call | allowed when | otherwise |
//! |---|---|---|
//! | `kill(pid, sig)` | `pid == 0` (own group), `pid == -pgid` (own group by id), `pid == top` (the command's first process), or `sig == 0` (existence probe) | `EPERM` |
//! | `tgkill(tgid, ..)`, `rt_sigqueueinfo(tgid, ..)`, `rt_tgsigqueueinfo(tgid, ..)` | `tgid == top` | `EPERM` |
//! | `tkill`, `pidfd_send_signal` | never | `EPERM` |
//!
//! `pgid` (the command's process group, led by its keeper) and `top` are only known after
//! `fork`: the filter is compiled in the parent with placeholders the child patches in place
//! ([`SignalFilter::patch`]) before loading it — no allocation after `fork`.
//!
//! Limits: seccomp cannot ask "is this pid in my group", so a process other than the top one
//! cannot signal a *specific* process by pid — not even itself or its own child (`kill $!` in
//! a sub-shell, `raise()` in a program the command started fail with `EPERM`). Signalling the
//! whole group (`kill 0`, `kill -- -$pgid`) works, and so does everything inside a PID
//! namespace, which is why the namespace is preferred whenever the kernel allows one.

use libc::sock_filter;

/// Offsets into `struct seccomp_data` (little-endian: an argument's low half comes first).
const NR: u32 = 0;
const fn arg(i: u32) -> u32 {
    16 + 8 * i
}

const PLACEHOLDER_NEG_PGID: u32 = 0xdead_0001;
const PLACEHOLDER_TOP: u32 = 0xdead_0002;

/// A compiled filter with the slots the child fills in.
pub(crate) struct SignalFilter {
    program: Vec<sock_filter>,
    neg_pgid_slots: Vec<usize>,
    top_slots: Vec<usize>,
}

enum Insn {
    LoadAbs(u32),
    /// if A == k goto label (else fall through).
    JeqGoto(u32, &'static str),
    Ret(u32),
    Label(&'static str),
}

impl SignalFilter {
    pub(crate) fn build() -> Self {
        use Insn::*;
        let allow = libc::SECCOMP_RET_ALLOW;
        let eperm = libc::SECCOMP_RET_ERRNO | libc::EPERM as u32;
        let nr = |n: libc::c_long| n as u32;
        let asm = [
            LoadAbs(NR),
            JeqGoto(nr(libc::SYS_kill), "kill"),
            JeqGoto(nr(libc::SYS_tgkill), "by_tgid"),
            JeqGoto(nr(libc::SYS_rt_sigqueueinfo), "by_tgid"),
            JeqGoto(nr(libc::SYS_rt_tgsigqueueinfo), "by_tgid"),
            JeqGoto(nr(libc::SYS_tkill), "deny"),
            JeqGoto(nr(libc::SYS_pidfd_send_signal), "deny"),
            Ret(allow),
            Label("kill"),
            LoadAbs(arg(0)),
            JeqGoto(0, "allow"),
            JeqGoto(PLACEHOLDER_NEG_PGID, "allow"),
            JeqGoto(PLACEHOLDER_TOP, "allow"),
            LoadAbs(arg(1)),
            JeqGoto(0, "allow"),
            Ret(eperm),
            Label("by_tgid"),
            LoadAbs(arg(0)),
            JeqGoto(PLACEHOLDER_TOP, "allow"),
            Label("deny"),
            Ret(eperm),
            Label("allow"),
            Ret(allow),
        ];
        // Resolve labels to instruction indices.
        let mut labels = std::collections::HashMap::new();
        let mut index = 0usize;
        for insn in &asm {
            match insn {
                Label(name) => {
                    labels.insert(*name, index);
                }
                _ => index += 1,
            }
        }
        let mut program = Vec::new();
        let mut neg_pgid_slots = Vec::new();
        let mut top_slots = Vec::new();
        for insn in &asm {
            let here = program.len();
            match insn {
                Label(_) => continue,
                LoadAbs(off) => program.push(stmt(
                    (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16,
                    *off,
                )),
                Ret(k) => program.push(stmt((libc::BPF_RET | libc::BPF_K) as u16, *k)),
                JeqGoto(k, label) => {
                    let target = labels[label];
                    // Jumps are relative to the next instruction and only go forward.
                    // The program is the constant above (a few dozen instructions), so
                    // every jump fits in a u8; a longer one is a bug in this file, caught by
                    // the first test that builds the filter.
                    #[allow(clippy::expect_used)]
                    let jt = u8::try_from(target - here - 1).expect("filter is short");
                    match *k {
                        PLACEHOLDER_NEG_PGID => neg_pgid_slots.push(here),
                        PLACEHOLDER_TOP => top_slots.push(here),
                        _ => {}
                    }
                    program.push(sock_filter {
                        code: (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16,
                        jt,
                        jf: 0,
                        k: *k,
                    });
                }
            }
        }
        SignalFilter {
            program,
            neg_pgid_slots,
            top_slots,
        }
    }

    /// In the child, after `fork`: fill in its process group and its own pid.
    pub(crate) fn patch(&mut self, pgid: libc::pid_t, top: libc::pid_t) {
        for &i in &self.neg_pgid_slots {
            self.program[i].k = pgid.wrapping_neg() as u32;
        }
        for &i in &self.top_slots {
            self.program[i].k = top as u32;
        }
    }

    pub(crate) fn program(&self) -> &[sock_filter] {
        &self.program
    }
}

fn stmt(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}
