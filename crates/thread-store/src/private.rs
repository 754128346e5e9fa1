//! Owner-only files and folders. Rollouts hold everything the model saw (command output can
//! include whatever a command printed), so the store's files are created 0600 and its folders
//! 0700 whatever the umask, and files left more open by older versions are tightened when
//! opened. Tightening is best effort: a file owned by someone else is left alone, with a warning.

use std::fs::{File, OpenOptions};
use std::io;
use std::path::Path;

/// Mode of files the store creates.
pub(crate) const FILE_MODE: u32 = 0o600;
/// Mode of folders the store creates.
pub(crate) const DIR_MODE: u32 = 0o700;

/// `create_dir_all`, with every folder it creates made 0700, and `dir` itself tightened to 0700
/// when it already existed.
pub(crate) fn create_dir_all(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(DIR_MODE)
            .create(dir)?;
        tighten(dir, DIR_MODE);
        Ok(())
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}

/// Open with `opts`; a file this creates is 0600, an existing one is tightened to 0600. Like
/// every file the store opens (`crate::files::open_regular`), only a regular file.
pub(crate) fn open(opts: &mut OpenOptions, path: &Path) -> io::Result<File> {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(opts, FILE_MODE);
    let file = crate::files::open_regular(opts, path)?;
    tighten(path, FILE_MODE);
    Ok(file)
}

/// Make sure `path` (if it exists) grants nothing to group or others.
pub(crate) fn tighten(path: &Path, mode: u32) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let Ok(meta) = std::fs::metadata(path) else {
            return;
        };
        if meta.permissions().mode() & 0o077 == 0 {
            return;
        }
        if let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)) {
            crate::notice!(
                "{} is readable by other users and cannot be made private: {e}",
                path.display()
            );
        }
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
}

/// The SQLite index: created 0600 before SQLite opens it (SQLite gives its `-wal` and `-shm`
/// files the database's mode), and all three tightened if they exist.
pub(crate) fn prepare_database(path: &Path) -> io::Result<()> {
    open(
        OpenOptions::new().read(true).append(true).create(true),
        path,
    )?;
    for suffix in ["-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        tighten(Path::new(&p), FILE_MODE);
    }
    Ok(())
}
