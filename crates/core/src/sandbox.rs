//! The execution seam between the engine and the OS sandbox (`oi-sandbox`).
//!
//! Every command the model runs goes through [`confine`]. The policy decides; if the kernel
//! cannot enforce it the command is refused (fail closed) — never run unconfined silently.

use oi_protocol::config_types::SandboxPolicy;
use oi_sandbox::SandboxRequest;
use std::path::{Path, PathBuf};

/// What confines one command: the policy, the workspace it is relative to, and what stays
/// read-only inside it.
pub(crate) struct SandboxScope<'a> {
    pub policy: &'a SandboxPolicy,
    pub cwd: &'a Path,
    pub allow_git_writes: bool,
    /// What an accepted project config launches unsandboxed (`Config::launch_pinned_paths`).
    pub read_only: Vec<PathBuf>,
}

impl<'a> SandboxScope<'a> {
    /// The session's own scope.
    pub(crate) fn of(config: &'a oi_config::Config) -> Self {
        Self::with_policy(config, &config.sandbox_policy, &config.cwd)
    }

    /// The session's scope with another policy and workspace (a one-off command's).
    pub(crate) fn with_policy(
        config: &oi_config::Config,
        policy: &'a SandboxPolicy,
        cwd: &'a Path,
    ) -> Self {
        Self {
            policy,
            cwd,
            allow_git_writes: config.allow_git_writes,
            read_only: config.launch_pinned_paths(),
        }
    }

    fn request(&self) -> SandboxRequest<'_> {
        SandboxRequest {
            policy: self.policy,
            sandbox_cwd: self.cwd,
            allow_git_writes: self.allow_git_writes,
            read_only: &self.read_only,
        }
    }
}

/// Arrange for `cmd` to run confined by `scope`. `DangerFullAccess` is a no-op.
pub(crate) fn confine(
    cmd: &mut tokio::process::Command,
    scope: &SandboxScope<'_>,
) -> Result<(), oi_sandbox::SandboxError> {
    oi_sandbox::confine(cmd, &scope.request())
}

/// Whether writing `path` stays inside what the scope allows (the engine writes patches
/// itself, outside any sandbox, so it checks first).
pub(crate) fn is_path_writable(scope: &SandboxScope<'_>, path: &Path) -> bool {
    oi_sandbox::is_path_writable(&scope.request(), path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(policy: &SandboxPolicy, cwd: &Path, allow_git: bool, path: &Path) -> bool {
        let scope = SandboxScope {
            policy,
            cwd,
            allow_git_writes: allow_git,
            read_only: vec![cwd.join("tools/helper.sh")],
        };
        is_path_writable(&scope, path)
    }

    #[test]
    fn workspace_write_roots_git_and_read_only_paths() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().canonicalize().unwrap();
        std::fs::create_dir(cwd.join(".git")).unwrap();
        std::fs::create_dir(cwd.join("tools")).unwrap();
        std::fs::write(cwd.join("tools/helper.sh"), "echo hi\n").unwrap();
        let p = SandboxPolicy::workspace_write();
        assert!(w(&p, &cwd, false, &cwd.join("a/b.txt")));
        assert!(w(&p, &cwd, false, &cwd.join("tools/other.sh")));
        assert!(!w(&p, &cwd, false, &cwd.join("tools/helper.sh")));
        assert!(!w(&p, &cwd, false, &cwd.join(".git/config")));
        assert!(w(&p, &cwd, true, &cwd.join(".git/config")));
        // The project config folder stays out of reach even when git writes are allowed, so
        // the engine's own patch writer refuses to plant a config without an approval.
        let planted = cwd.join(".openinterpreter/config.toml");
        assert!(!w(&p, &cwd, true, &planted));
        assert!(!w(&p, &cwd, false, Path::new("/etc/passwd")));
        assert!(!w(&SandboxPolicy::ReadOnly, &cwd, false, &cwd.join("x")));
        assert!(w(
            &SandboxPolicy::DangerFullAccess,
            &cwd,
            false,
            Path::new("/etc/x")
        ));
    }
}
