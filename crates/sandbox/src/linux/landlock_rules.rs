//! Builds the Landlock ruleset in the parent; the child only calls `landlock_restrict_self`.

use std::os::fd::OwnedFd;
use std::os::unix::fs::FileTypeExt;
use std::path::PathBuf;

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr,
};

use crate::SandboxError;

/// Character devices every sandboxed command may write (and ioctl, for terminals).
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
];

/// A path and what may be done beneath it.
#[derive(Debug, Clone)]
pub(crate) struct Grant {
    path: PathBuf,
    kind: GrantKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum GrantKind {
    /// Every handled write-ish right.
    Full,
    /// Writing to and ioctl on existing device files only.
    Device,
}

impl Grant {
    pub(crate) fn full(path: PathBuf) -> Self {
        Grant {
            path,
            kind: GrantKind::Full,
        }
    }
}

/// Grants for the device allow-list: only paths that really are character devices (and the
/// `/dev/pts` directory of pseudo-terminals), so a regular file planted at one of these names in
/// an unusual root would not become writable.
pub(crate) fn device_grants() -> Vec<Grant> {
    let mut out = Vec::new();
    for dev in DEVICES {
        if std::fs::metadata(dev).is_ok_and(|m| m.file_type().is_char_device()) {
            out.push(Grant {
                path: PathBuf::from(dev),
                kind: GrantKind::Device,
            });
        }
    }
    if std::fs::metadata("/dev/pts").is_ok_and(|m| m.is_dir()) {
        out.push(Grant {
            path: PathBuf::from("/dev/pts"),
            kind: GrantKind::Device,
        });
    }
    out
}

/// The write-ish rights handled for `abi`. Reads and execution are never restricted.
/// `ResolveUnix` (connecting to pathname UNIX sockets) is left alone: AF_UNIX stays usable.
pub(crate) fn handled_fs(abi: ABI) -> BitFlags<AccessFs> {
    AccessFs::from_write(abi) & !BitFlags::from(AccessFs::ResolveUnix)
}

pub(crate) fn build_ruleset(
    abi_version: i32,
    deny_network: bool,
    grants: &[Grant],
) -> Result<OwnedFd, SandboxError> {
    let abi = ABI::from(abi_version);
    let handled = handled_fs(abi);
    let err = |e: landlock::RulesetError| SandboxError::Setup(format!("landlock: {e}"));

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(handled)
        .map_err(err)?;
    // Landlock ABI ≥ 4 also governs TCP bind/connect: defence in depth next to seccomp.
    if deny_network && abi_version >= 4 {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;

    let device_rights = handled & (AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev);
    for grant in grants {
        let Ok(meta) = std::fs::metadata(&grant.path) else {
            // A root that does not exist grants nothing.
            continue;
        };
        let mut access = match grant.kind {
            GrantKind::Full => handled,
            GrantKind::Device => device_rights,
        };
        if !meta.is_dir() {
            access &= AccessFs::from_file(abi);
        }
        if access.is_empty() {
            continue;
        }
        let fd = match PathFd::new(&grant.path) {
            Ok(fd) => fd,
            // Vanished between stat and open: nothing to grant.
            Err(_) if !grant.path.exists() => continue,
            Err(e) => {
                return Err(SandboxError::Setup(format!(
                    "cannot open {} for a sandbox rule: {e}",
                    grant.path.display()
                )));
            }
        };
        created = created
            .add_rule(PathBeneath::new(fd, access))
            .map_err(err)?;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| {
        SandboxError::Unsupported(format!(
            "Landlock did not create a ruleset (ABI {abi_version}); run with \
             `-s danger-full-access` (no sandbox) or use a kernel with Landlock"
        ))
    })
}
