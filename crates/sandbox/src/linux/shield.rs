//! Read-only bind mounts over protected `.git` entries, in a private mount namespace of the
//! child. Landlock alone cannot express "this root is writable except its `.git`".
//!
//! Root unshares only the mount namespace; other users also unshare a user namespace that maps
//! their own uid/gid to themselves (so files they own still look like theirs; files of other
//! users, root included, show as the overflow id inside the sandbox).

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::SandboxError;

pub(crate) struct MountShield {
    targets: Vec<CString>,
    id_maps: Option<IdMaps>,
}

struct IdMaps {
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
}

/// `struct mount_attr` of `mount_setattr(2)` (not in the libc crate).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;

impl MountShield {
    pub(crate) fn new(protected: &[PathBuf]) -> Result<Self, SandboxError> {
        let targets = protected
            .iter()
            .map(|p| {
                CString::new(p.as_os_str().as_bytes()).map_err(|_| {
                    SandboxError::Setup(format!("path contains a NUL byte: {}", p.display()))
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        // SAFETY: getters without side effects.
        let (uid, gid, euid) = unsafe { (libc::getuid(), libc::getgid(), libc::geteuid()) };
        let id_maps = (euid != 0).then(|| IdMaps {
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
        });
        Ok(MountShield { targets, id_maps })
    }

    /// Whether this environment lets us build the shield (namespaces may be disabled by sysctl,
    /// an LSM or a container's seccomp profile). Probed once in a throwaway child.
    pub(crate) fn works(&self) -> bool {
        static WORKS: OnceLock<bool> = OnceLock::new();
        *WORKS.get_or_init(|| self.probe())
    }

    fn probe(&self) -> bool {
        // SAFETY: the child only runs `apply` (raw syscalls on prepared data) and `_exit`.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return false;
        }
        if pid == 0 {
            let code = if self.apply().is_ok() { 0 } else { 1 };
            // SAFETY: we are the forked probe child; `_exit` ends it without running the
            // parent's atexit handlers or destructors.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        loop {
            // SAFETY: waits for the child forked above.
            let r = unsafe { libc::waitpid(pid, &mut status, 0) };
            if r == pid {
                break;
            }
            if r < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                return false;
            }
        }
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0
    }

    /// Runs in the forked child: raw syscalls only.
    pub(crate) fn apply(&self) -> io::Result<()> {
        // SAFETY: all pointers refer to NUL-terminated strings / structs owned by `self` or the
        // stack, alive for each call.
        unsafe {
            let flags = match self.id_maps {
                Some(_) => libc::CLONE_NEWUSER | libc::CLONE_NEWNS,
                None => libc::CLONE_NEWNS,
            };
            check(libc::unshare(flags))?;
            if let Some(maps) = &self.id_maps {
                write_proc(c"/proc/self/setgroups", b"deny")?;
                write_proc(c"/proc/self/uid_map", &maps.uid_map)?;
                write_proc(c"/proc/self/gid_map", &maps.gid_map)?;
            }
            // Our mounts must not propagate back to the host; host mounts may still arrive.
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_SLAVE,
                std::ptr::null(),
            ))?;
            let attr = MountAttr {
                attr_set: MOUNT_ATTR_RDONLY,
                attr_clr: 0,
                propagation: 0,
                userns_fd: 0,
            };
            for t in &self.targets {
                check(libc::mount(
                    t.as_ptr(),
                    t.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
                // mount_setattr changes only the read-only bit, so flags the kernel locks in a
                // user namespace (nosuid, nodev, atime...) need not be known and repeated.
                check(libc::syscall(
                    libc::SYS_mount_setattr,
                    libc::AT_FDCWD,
                    t.as_ptr(),
                    libc::AT_RECURSIVE as libc::c_uint,
                    &attr as *const MountAttr,
                    std::mem::size_of::<MountAttr>(),
                ) as libc::c_int)?;
            }
            // A working directory inside a protected `.git` still points into the writable
            // mount underneath; re-resolve it through the new mounts.
            let mut cwd = [0u8; libc::PATH_MAX as usize];
            if !libc::getcwd(cwd.as_mut_ptr().cast(), cwd.len()).is_null() {
                check(libc::chdir(cwd.as_ptr().cast()))?;
            }
        }
        Ok(())
    }
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// open/write/close without allocating.
unsafe fn write_proc(path: &std::ffi::CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated and `data` valid for its length.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let n = libc::write(fd, data.as_ptr().cast(), data.len());
        let err = if n < 0 {
            Some(io::Error::last_os_error())
        } else if n as usize != data.len() {
            Some(io::Error::from_raw_os_error(libc::EIO))
        } else {
            None
        };
        libc::close(fd);
        if let Some(err) = err {
            return Err(err);
        }
    }
    Ok(())
}
