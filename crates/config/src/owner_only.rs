//! Owner-only folders and files under the home directory (logs, prompt history): they can
//! quote prompts and command output, so they are created 0700 / 0600 whatever the umask,
//! and ones left more open (by an older version, or by hand) are tightened when opened.
//! Tightening is best effort: what another user owns is left alone, with a warning.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// `create_dir_all` with every folder it creates made 0700, and `dir` itself tightened to
/// 0700 when it already existed.
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)?;
    tighten(dir, 0o700);
    Ok(())
}

/// Opens `path` for appending, creating it 0600 (its folder 0700); an existing file is
/// tightened to 0600.
pub fn open_append(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        create_dir_all(dir)?;
    }
    let mut opts = std::fs::OpenOptions::new();
    opts.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let file = crate::project_file::open_regular_with(&mut opts, path)?;
    tighten(path, 0o600);
    Ok(file)
}

/// `$home/log/<name>`: where a front end's log file lives.
pub fn log_path(home: &Path, name: &str) -> PathBuf {
    home.join("log").join(name)
}

/// `$home/log/<name>`, opened for appending (see [`open_append`]).
pub fn open_log(home: &Path, name: &str) -> io::Result<File> {
    open_append(&log_path(home, name))
}

/// Takes group and other access away from `path` if it has any.
fn tighten(path: &Path, mode: u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path)
            && meta.permissions().mode() & 0o077 != 0
            && let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        {
            tracing::warn!(
                "{} is open to other users and cannot be made private: {e}",
                path.display()
            );
        }
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0)
    }

    #[test]
    fn logs_are_owner_only_and_open_ones_are_tightened() {
        let home = tempfile::tempdir().unwrap();
        let fresh = home.path().join("new-home");
        drop(open_log(&fresh, "tui.log").unwrap());
        assert_eq!(mode(&fresh), 0o700);
        assert_eq!(mode(&fresh.join("log")), 0o700);
        assert_eq!(mode(&fresh.join("log/tui.log")), 0o600);
        let old = home.path().join("old");
        std::fs::create_dir_all(old.join("log")).unwrap();
        std::fs::set_permissions(old.join("log"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(old.join("log/tui.log"), "").unwrap();
        std::fs::set_permissions(
            old.join("log/tui.log"),
            std::fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        drop(open_log(&old, "tui.log").unwrap());
        assert_eq!(mode(&old.join("log")), 0o700);
        assert_eq!(mode(&old.join("log/tui.log")), 0o600);
    }
}
