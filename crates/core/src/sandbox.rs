//! The execution seam between the engine and the OS sandbox (`oi-sandbox`).
//!
//! Every command the model runs goes through [`confine`]. The policy decides; if the kernel
//! cannot enforce it the command is refused (fail closed) — never run unconfined silently.

use oi_protocol::config_types::SandboxPolicy;
use oi_sandbox::SandboxRequest;
use std::path::Path;

/// Arrange for `cmd` to run under `policy`. `DangerFullAccess` is a no-op.
pub(crate) fn confine(
    cmd: &mut tokio::process::Command,
    policy: &SandboxPolicy,
    sandbox_cwd: &Path,
    allow_git_writes: bool,
) -> Result<(), String> {
    oi_sandbox::confine(
        cmd,
        &SandboxRequest {
            policy,
            sandbox_cwd,
            allow_git_writes,
        },
    )
    .map_err(|e| format!("command not run: {e}"))
}

/// Whether writing `path` stays inside what the policy allows (the engine writes patches
/// itself, outside any sandbox, so it checks first).
pub(crate) fn is_path_writable(
    policy: &SandboxPolicy,
    cwd: &Path,
    allow_git_writes: bool,
    path: &Path,
) -> bool {
    oi_sandbox::is_path_writable(
        &SandboxRequest {
            policy,
            sandbox_cwd: cwd,
            allow_git_writes,
        },
        path,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workspace_write_roots_and_git() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        std::fs::create_dir(cwd.join(".git")).unwrap();
        let p = SandboxPolicy::workspace_write();
        assert!(is_path_writable(&p, &cwd, false, &cwd.join("a/b.txt")));
        assert!(!is_path_writable(&p, &cwd, false, &cwd.join(".git/config")));
        assert!(is_path_writable(&p, &cwd, true, &cwd.join(".git/config")));
        // The project config folder stays out of reach even when git writes are allowed, so
        // the engine's own patch writer refuses to plant a config without an approval.
        let planted = cwd.join(".openinterpreter/config.toml");
        assert!(!is_path_writable(&p, &cwd, true, &planted));
        assert!(!is_path_writable(&p, &cwd, false, Path::new("/etc/passwd")));
        assert!(!is_path_writable(
            &SandboxPolicy::ReadOnly,
            &cwd,
            false,
            &cwd.join("x")
        ));
        assert!(is_path_writable(
            &SandboxPolicy::DangerFullAccess,
            &cwd,
            false,
            Path::new("/etc/x")
        ));
    }
}
