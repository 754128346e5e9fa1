//! The execution seam between the engine and the OS sandbox.
//!
//! Every command the model runs goes through [`confine`]. The policy decides; if the kernel
//! cannot enforce it the command is refused (fail closed) — never run unconfined silently.

use oi_protocol::config_types::SandboxPolicy;
use std::path::{Path, PathBuf};

/// Arrange for `cmd` to run under `policy`. `DangerFullAccess` is a no-op.
pub(crate) fn confine(
    cmd: &mut tokio::process::Command,
    policy: &SandboxPolicy,
    sandbox_cwd: &Path,
    allow_git_writes: bool,
) -> Result<(), String> {
    let _ = (cmd, sandbox_cwd, allow_git_writes);
    match policy {
        SandboxPolicy::DangerFullAccess => Ok(()),
        _ => Err(format!(
            "command not run: the `{}` sandbox is not available in this build; run with `-s danger-full-access` to run commands without a sandbox",
            policy.mode()
        )),
    }
}

/// Directories the policy lets commands write to (used to decide whether a patch needs
/// approval; the engine writes patches itself, outside any sandbox).
pub(crate) fn writable_roots(policy: &SandboxPolicy, cwd: &Path) -> Vec<PathBuf> {
    match policy {
        SandboxPolicy::DangerFullAccess => vec![PathBuf::from("/")],
        SandboxPolicy::ReadOnly => Vec::new(),
        SandboxPolicy::WorkspaceWrite {
            writable_roots,
            exclude_tmpdir_env_var,
            exclude_slash_tmp,
            ..
        } => {
            let mut roots = vec![cwd.to_path_buf()];
            roots.extend(writable_roots.iter().cloned());
            if !exclude_slash_tmp {
                roots.push(PathBuf::from("/tmp"));
            }
            if !exclude_tmpdir_env_var
                && let Ok(t) = std::env::var("TMPDIR")
                && !t.is_empty()
            {
                roots.push(PathBuf::from(t));
            }
            roots
        }
    }
}

/// Whether writing `path` stays inside what the policy allows. `.git` directories directly
/// under a writable root stay protected unless `allow_git_writes`.
pub(crate) fn is_path_writable(
    policy: &SandboxPolicy,
    cwd: &Path,
    allow_git_writes: bool,
    path: &Path,
) -> bool {
    if matches!(policy, SandboxPolicy::DangerFullAccess) {
        return true;
    }
    let path = normalize(path);
    writable_roots(policy, cwd).iter().any(|root| {
        let root = normalize(root);
        if !path.starts_with(&root) {
            return false;
        }
        allow_git_writes || !path.starts_with(root.join(".git"))
    })
}

/// Lexical normalisation (no symlink resolution for paths that may not exist yet), with the
/// longest existing prefix canonicalised so `/tmp` vs `/private/tmp`-style links agree.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    let mut existing = out.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match existing.file_name() {
            Some(n) => rest.push(n.to_os_string()),
            None => break,
        }
        if !existing.pop() {
            break;
        }
    }
    let mut base = existing.canonicalize().unwrap_or(existing);
    for n in rest.into_iter().rev() {
        base.push(n);
    }
    base
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
        assert!(!is_path_writable(&p, &cwd, false, Path::new("/etc/passwd")));
        assert!(!is_path_writable(&p, &cwd, false, &cwd.join("../escape")));
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
