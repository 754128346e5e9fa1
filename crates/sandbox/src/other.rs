//! Non-Linux targets: no enforcement backend, so every confining policy fails closed.

use oi_protocol::config_types::SandboxPolicy;

use crate::{SandboxError, SandboxRequest};

fn unsupported() -> SandboxError {
    SandboxError::Unsupported(format!(
        "sandboxing is only implemented on Linux (Landlock + seccomp), not on {}; run with \
         `-s danger-full-access` (no sandbox)",
        std::env::consts::OS
    ))
}

pub(crate) fn check_support(_policy: &SandboxPolicy) -> Result<(), SandboxError> {
    Err(unsupported())
}

pub(crate) fn confine(
    _cmd: &mut tokio::process::Command,
    _req: &SandboxRequest<'_>,
) -> Result<(), SandboxError> {
    Err(unsupported())
}
