//! Which paths a policy makes writable, and which `.git` and `.openinterpreter` entries stay
//! protected. Pure path logic shared by every platform; the Linux backend turns it into
//! Landlock rules and read-only mounts.

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use oi_protocol::config_types::SandboxPolicy;

use crate::SandboxRequest;

/// The project-config folder protected in every writable root, whatever
/// `allow_git_writes` says: a command that could write `.openinterpreter/config.toml` could
/// raise the sandbox of the next session there or add MCP servers that run unconfined.
pub(crate) const CONFIG_DIR: &str = ".openinterpreter";

/// How many directories of the workspace (and of the configured writable roots) are listed,
/// per command, to find `.openinterpreter` folders below the top level. Shallow folders come
/// first (breadth-first), so in a huge tree it is the deepest ones that stay unprotected; the
/// config loader's consent check (`oi_config::project_consent`) covers those, and the folders a
/// command creates, which no walk can foresee.
pub(crate) const NESTED_WALK_MAX_DIRS: usize = 4096;

/// Writable roots plus the `.git` and `.openinterpreter` entries inside them that must stay
/// read-only.
#[derive(Debug, Default)]
pub(crate) struct Layout {
    /// Canonical (where they exist) writable roots, deduplicated, in policy order.
    pub roots: Vec<PathBuf>,
    /// `.git` and `.openinterpreter` entries directly inside a root (and the target of such an
    /// entry that is a symlink). A `.openinterpreter` is listed even when it does not exist yet:
    /// creating it must be refused too.
    pub protected: Vec<PathBuf>,
    /// Some protected entry is a symlink: the symlink itself can only be protected by not
    /// granting its parent, so the mount-namespace layout cannot be used.
    pub symlinked_git: bool,
}

pub(crate) fn writable_roots(req: &SandboxRequest<'_>, tmpdir: Option<OsString>) -> Vec<PathBuf> {
    match req.policy {
        SandboxPolicy::DangerFullAccess => vec![PathBuf::from("/")],
        SandboxPolicy::ReadOnly => Vec::new(),
        SandboxPolicy::WorkspaceWrite {
            writable_roots,
            exclude_tmpdir_env_var,
            exclude_slash_tmp,
            ..
        } => {
            let base = absolute_base(req.sandbox_cwd);
            let mut candidates: Vec<PathBuf> = vec![base.clone()];
            candidates.extend(writable_roots.iter().map(|r| base.join(r)));
            if !exclude_slash_tmp {
                candidates.push(PathBuf::from("/tmp"));
            }
            if !exclude_tmpdir_env_var && let Some(t) = tmpdir.filter(|t| !t.is_empty()) {
                candidates.push(base.join(t));
            }
            let mut out: Vec<PathBuf> = Vec::new();
            for c in candidates {
                // An unresolvable root (dangling symlink) grants nothing; keep it lexical for
                // display, it will simply fail to open when rules are built.
                let r = resolve(&c, &base).unwrap_or(c);
                if !out.contains(&r) {
                    out.push(r);
                }
            }
            out
        }
    }
}

/// The layout for a workspace-write policy (empty for the other policies).
pub(crate) fn layout(req: &SandboxRequest<'_>, tmpdir: Option<OsString>) -> Layout {
    if !matches!(req.policy, SandboxPolicy::WorkspaceWrite { .. }) {
        return Layout::default();
    }
    let roots = writable_roots(req, tmpdir);
    let mut protected = Vec::new();
    let mut symlinked_git = false;
    // Project roots, not the temp dirs: those are where a later session may start and layer a
    // planted `sub/.openinterpreter/config.toml`.
    let walk_roots = project_roots(req);
    let mut names = vec![CONFIG_DIR];
    if !req.allow_git_writes {
        names.push(".git");
    }
    for root in &roots {
        for name in &names {
            let entry = root.join(name);
            // An entry the user listed as a writable root on purpose is theirs to write.
            if roots.contains(&entry) {
                continue;
            }
            match std::fs::symlink_metadata(&entry) {
                // A symlinked config folder is not a config folder (the loader refuses it),
                // and what it points at is not the project's: the read-only rule never
                // follows it (`sl/.openinterpreter -> /tmp/x` must not freeze /tmp).
                Ok(meta) if meta.file_type().is_symlink() && *name == CONFIG_DIR => continue,
                Ok(meta) if meta.file_type().is_symlink() => {
                    symlinked_git = true;
                    if let Ok(target) = std::fs::canonicalize(&entry) {
                        protected.push(target);
                    }
                }
                Ok(_) => {}
                // A missing `.git` needs no protection (creating one does not let anything
                // escape); a missing config folder does (see CONFIG_DIR).
                Err(_) if *name == CONFIG_DIR => {}
                Err(_) => continue,
            }
            protected.push(entry);
        }
    }
    for path in req.read_only {
        // Only what exists can be mounted over; outside every root nothing needs protecting.
        let Ok(real) = std::fs::canonicalize(path) else {
            continue;
        };
        if roots.iter().any(|r| real.starts_with(r) && real != *r) && !protected.contains(&real) {
            protected.push(real);
        }
    }
    let mut budget = NESTED_WALK_MAX_DIRS;
    for root in roots.iter().filter(|r| walk_roots.contains(r)) {
        for entry in nested_config_dirs(root, &mut budget) {
            if roots.contains(&entry) || protected.contains(&entry) {
                continue;
            }
            protected.push(entry);
        }
    }
    Layout {
        roots,
        protected,
        symlinked_git,
    }
}

/// The workspace and the configured writable roots, resolved like [`writable_roots`].
fn project_roots(req: &SandboxRequest<'_>) -> Vec<PathBuf> {
    let SandboxPolicy::WorkspaceWrite { writable_roots, .. } = req.policy else {
        return Vec::new();
    };
    let base = absolute_base(req.sandbox_cwd);
    std::iter::once(base.clone())
        .chain(writable_roots.iter().map(|r| base.join(r)))
        .map(|c| resolve(&c, &base).unwrap_or(c))
        .collect()
}

/// `.openinterpreter` folders below `root`'s top level (that one is handled with `.git`),
/// breadth-first, listing at most `budget` directories in all. Symlinked directories are not
/// followed (their targets are not inside the root), and `.git` folders are skipped. A
/// `.openinterpreter` that is a symlink is not listed: the config loader refuses it as a config
/// folder, and protecting it would make its target (anywhere) read-only.
pub(crate) fn nested_config_dirs(root: &Path, budget: &mut usize) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut queue = std::collections::VecDeque::from([(root.to_path_buf(), 0usize)]);
    while let Some((dir, depth)) = queue.pop_front() {
        if *budget == 0 {
            break;
        }
        *budget -= 1;
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if name == CONFIG_DIR {
                if depth > 0 && !kind.is_symlink() {
                    found.push(entry.path());
                }
                continue;
            }
            if kind.is_dir() && name != ".git" {
                queue.push_back((entry.path(), depth + 1));
            }
        }
    }
    found
}

pub(crate) fn is_path_writable(
    req: &SandboxRequest<'_>,
    tmpdir: Option<OsString>,
    path: &Path,
) -> bool {
    match req.policy {
        SandboxPolicy::DangerFullAccess => true,
        SandboxPolicy::ReadOnly => false,
        SandboxPolicy::WorkspaceWrite { .. } => {
            let base = absolute_base(req.sandbox_cwd);
            let Some(p) = resolve(path, &base) else {
                return false;
            };
            let l = layout(req, tmpdir);
            l.roots.iter().any(|r| p.starts_with(r))
                && !l.protected.iter().any(|g| p.starts_with(g))
        }
    }
}

fn absolute_base(cwd: &Path) -> PathBuf {
    if cwd.is_absolute() {
        cwd.to_path_buf()
    } else {
        std::env::current_dir()
            .map(|d| d.join(cwd))
            .unwrap_or_else(|_| cwd.to_path_buf())
    }
}

/// Resolve `path` (relative to `base`) the way the kernel will: symlinks in existing components
/// are followed, `..` is applied to the resolved prefix, missing tail components are kept as
/// written. `None` when an existing component cannot be resolved (dangling symlink, no access):
/// writing there could land anywhere.
pub(crate) fn resolve(path: &Path, base: &Path) -> Option<PathBuf> {
    let joined = base.join(path);
    let mut cur = PathBuf::from("/");
    let mut exists = true;
    for comp in joined.components() {
        match comp {
            Component::Prefix(_) | Component::RootDir | Component::CurDir => {}
            Component::ParentDir => {
                cur.pop();
            }
            Component::Normal(name) => {
                cur.push(name);
                if !exists {
                    continue;
                }
                match std::fs::symlink_metadata(&cur) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        cur = std::fs::canonicalize(&cur).ok()?;
                    }
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => exists = false,
                    Err(_) => return None,
                }
            }
        }
    }
    Some(cur)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ww(roots: Vec<PathBuf>, no_tmp: bool) -> SandboxPolicy {
        SandboxPolicy::WorkspaceWrite {
            writable_roots: roots,
            network_access: false,
            exclude_tmpdir_env_var: false,
            exclude_slash_tmp: no_tmp,
        }
    }

    #[test]
    fn roots_include_cwd_tmp_tmpdir_and_configured_deduplicated() {
        let cwd = tempfile::tempdir().unwrap();
        let extra = tempfile::tempdir().unwrap();
        let cwd_c = std::fs::canonicalize(cwd.path()).unwrap();
        let extra_c = std::fs::canonicalize(extra.path()).unwrap();
        let policy = ww(
            vec![extra.path().to_path_buf(), extra.path().to_path_buf()],
            false,
        );
        let req = SandboxRequest {
            policy: &policy,
            sandbox_cwd: cwd.path(),
            allow_git_writes: false,
            read_only: &[],
        };
        let tmp_c = std::fs::canonicalize("/tmp").unwrap();
        let roots = writable_roots(&req, Some(extra.path().as_os_str().to_owned()));
        assert_eq!(roots, vec![cwd_c.clone(), extra_c, tmp_c.clone()]);

        let policy = SandboxPolicy::WorkspaceWrite {
            writable_roots: vec![],
            network_access: false,
            exclude_tmpdir_env_var: true,
            exclude_slash_tmp: true,
        };
        let req = SandboxRequest {
            policy: &policy,
            sandbox_cwd: cwd.path(),
            allow_git_writes: false,
            read_only: &[],
        };
        assert_eq!(writable_roots(&req, Some("/var/tmp".into())), vec![cwd_c]);
    }

    #[test]
    fn read_only_and_full_access_roots() {
        let req = SandboxRequest {
            policy: &SandboxPolicy::ReadOnly,
            sandbox_cwd: Path::new("/"),
            allow_git_writes: false,
            read_only: &[],
        };
        assert!(writable_roots(&req, None).is_empty());
        assert!(!is_path_writable(&req, None, Path::new("/tmp/x")));
        let req = SandboxRequest {
            policy: &SandboxPolicy::DangerFullAccess,
            ..req
        };
        assert_eq!(writable_roots(&req, None), vec![PathBuf::from("/")]);
        assert!(is_path_writable(&req, None, Path::new("/etc/x")));
    }

    #[test]
    fn path_writability_follows_roots_git_and_symlinks() {
        let cwd = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(cwd.path().join(".git")).unwrap();
        std::os::unix::fs::symlink(outside.path(), cwd.path().join("escape")).unwrap();
        std::os::unix::fs::symlink("/nonexistent/dangling", cwd.path().join("dangling")).unwrap();
        let policy = ww(vec![], true);
        let mut req = SandboxRequest {
            policy: &policy,
            sandbox_cwd: cwd.path(),
            allow_git_writes: false,
            read_only: &[],
        };
        let w = |req: &SandboxRequest<'_>, p: &str| is_path_writable(req, None, Path::new(p));
        assert!(w(&req, "src/new/file.rs"));
        assert!(w(&req, "README.md"));
        assert!(!w(&req, ".git/config"));
        assert!(!w(&req, "sub/../.git/hooks/pre-commit"));
        assert!(
            !w(&req, "escape/file"),
            "symlink leaving the root is not writable"
        );
        assert!(
            !w(&req, "dangling/file"),
            "dangling symlink is not writable"
        );
        assert!(!w(&req, "../elsewhere"));
        assert!(!is_path_writable(&req, None, &outside.path().join("f")));
        req.allow_git_writes = true;
        assert!(w(&req, ".git/config"));
    }

    #[test]
    fn config_folder_is_protected_even_before_it_exists_and_with_git_writes() {
        let cwd = tempfile::tempdir().unwrap();
        let policy = ww(vec![], true);
        let req = SandboxRequest {
            policy: &policy,
            sandbox_cwd: cwd.path(),
            allow_git_writes: true,
            read_only: &[],
        };
        let w = |p: &str| is_path_writable(&req, None, Path::new(p));
        assert!(!w(".openinterpreter/config.toml"));
        assert!(!w("./sub/../.openinterpreter"));
        assert!(w("sub/.openinterpreter-notes.txt"));
        let l = layout(&req, None);
        let cwd_c = std::fs::canonicalize(cwd.path()).unwrap();
        assert_eq!(l.protected, vec![cwd_c.join(CONFIG_DIR)]);
        // Listing the folder itself as a writable root is an explicit choice.
        let policy = ww(vec![cwd.path().join(CONFIG_DIR)], true);
        std::fs::create_dir(cwd.path().join(CONFIG_DIR)).unwrap();
        let req = SandboxRequest {
            policy: &policy,
            ..req
        };
        assert!(is_path_writable(
            &req,
            None,
            Path::new(".openinterpreter/config.toml")
        ));
    }

    #[test]
    fn nested_config_folders_are_protected_within_the_walk_budget() {
        let cwd = tempfile::tempdir().unwrap();
        let cwd_c = std::fs::canonicalize(cwd.path()).unwrap();
        std::fs::create_dir_all(cwd.path().join("sub/.openinterpreter")).unwrap();
        std::fs::create_dir_all(cwd.path().join("a/b/c/.openinterpreter")).unwrap();
        // Inside `.git` and behind a symlinked folder: not part of the tree to protect.
        std::fs::create_dir_all(cwd.path().join(".git/x/.openinterpreter")).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(outside.path().join(".openinterpreter")).unwrap();
        std::os::unix::fs::symlink(outside.path(), cwd.path().join("link")).unwrap();
        let policy = ww(vec![], true);
        let req = SandboxRequest {
            policy: &policy,
            sandbox_cwd: cwd.path(),
            allow_git_writes: true,
            read_only: &[],
        };
        let l = layout(&req, None);
        assert!(l.protected.contains(&cwd_c.join("sub/.openinterpreter")));
        assert!(l.protected.contains(&cwd_c.join("a/b/c/.openinterpreter")));
        assert!(
            !l.protected
                .iter()
                .any(|p| p.starts_with(cwd_c.join(".git")))
        );
        assert!(
            !l.protected
                .iter()
                .any(|p| p.starts_with(cwd_c.join("link")))
        );
        assert!(!is_path_writable(
            &req,
            None,
            Path::new("sub/.openinterpreter/config.toml")
        ));
        assert!(is_path_writable(&req, None, Path::new("sub/other.toml")));

        // Breadth-first with a budget: the shallow folder is found before the deep one.
        let mut budget = 3;
        let found = nested_config_dirs(&cwd_c, &mut budget);
        assert_eq!(found, vec![cwd_c.join("sub/.openinterpreter")]);
        assert_eq!(budget, 0);

        // A symlinked config folder, nested or at the top: its target is never protected,
        // and it does not force the layout that freezes the top level.
        let target = tempfile::tempdir().unwrap();
        std::fs::create_dir(cwd.path().join("sl")).unwrap();
        std::os::unix::fs::symlink(target.path(), cwd.path().join("sl/.openinterpreter")).unwrap();
        let l = layout(&req, None);
        let target_c = std::fs::canonicalize(target.path()).unwrap();
        assert!(
            !l.protected.iter().any(|p| p.starts_with(&target_c)),
            "{l:?}"
        );
        assert!(!l.protected.contains(&cwd_c.join("sl/.openinterpreter")));
        assert!(!l.symlinked_git);
        let top = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(target.path(), top.path().join(".openinterpreter")).unwrap();
        let top_req = SandboxRequest {
            sandbox_cwd: top.path(),
            ..req
        };
        let l = layout(&top_req, None);
        assert!(
            !l.protected.iter().any(|p| p.starts_with(&target_c)),
            "{l:?}"
        );
        assert!(!l.symlinked_git);
    }
}
