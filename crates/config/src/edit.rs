//! Writing the user's files safely: `config.toml` and `.credentials.json`.
//!
//! Every writer (`config/value/write`, `interpreter trust`/`untrust`, `interpreter mcp
//! add`/`remove`, [`crate::credentials`]) follows the same recipe:
//!
//! 1. take the file's [`lock`] (an advisory lock on a sibling `.<name>.lock` file), so two
//!    processes editing at once never lose each other's change;
//! 2. read the current text *under the lock* ([`read_or_empty`]) and change it;
//! 3. [`write_atomically`]: a temporary file in the same folder, then a rename, so a crash or a
//!    full disk never leaves a half-written file behind.
//!
//! The lock lives on a sibling file rather than on the file itself because the rename in step 3
//! replaces the file's inode: a second writer that opened the old inode would hold a lock on a
//! file nobody reads any more.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Holds the edit lock of one file; dropping it lets the next writer in.
#[derive(Debug)]
pub struct EditLock {
    // Closing the descriptor releases the lock.
    _file: File,
}

/// The sibling lock file of `path`: `dir/.config.toml.lock` for `dir/config.toml`.
pub fn lock_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".to_string());
    path.with_file_name(format!(".{name}.lock"))
}

/// Wait for and take the exclusive edit lock of `path` (creating its folder and lock file if
/// needed). Hold the returned guard across the whole read-change-write sequence.
pub fn lock(path: &Path) -> std::io::Result<EditLock> {
    let lock_path = lock_path(path);
    if let Some(dir) = lock_path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut opts = OpenOptions::new();
    opts.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
    let file = crate::project_file::open_regular_with(&mut opts, &lock_path)?;
    file.lock()?;
    Ok(EditLock { _file: file })
}

/// The file's text, or `""` when it does not exist yet. Read with the bounded reader: a FIFO
/// or device in its place is an error, not a wait.
pub fn read_or_empty(path: &Path) -> std::io::Result<String> {
    match crate::project_file::read_text_capped(path, crate::project_file::HOME_FILE_MAX_BYTES) {
        Ok(text) => Ok(text),
        Err(e) if e.is_not_found() => Ok(String::new()),
        Err(e) => Err(e.into()),
    }
}

/// Replace `path` with `text` through a temporary file in the same folder (then a rename).
/// The result is the owner's only: a new file gets 0600, an existing one keeps its owner
/// bits but loses any group or other access (0644 becomes 0600), since the user config may
/// hold secrets (`--env KEY=value`, headers) and the credentials file does.
pub fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let prefix = format!(
        ".{}.",
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    let mut tmp = tempfile::Builder::new().prefix(&prefix).tempfile_in(dir)?;
    #[cfg(unix)]
    if let Ok(meta) = std::fs::metadata(path) {
        use std::os::unix::fs::PermissionsExt;
        let owner_only = meta.permissions().mode() & 0o700;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(owner_only))?;
    }
    tmp.write_all(text.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Read `path`, let `change` turn its text into the new text, and write that back, all under
/// the file's lock. `change` returning `Ok(None)` leaves the file untouched.
pub fn update_text<T, E>(
    path: &Path,
    io_error: impl Fn(std::io::Error) -> E,
    change: impl FnOnce(&str) -> Result<(Option<String>, T), E>,
) -> Result<T, E> {
    let _lock = lock(path).map_err(&io_error)?;
    let text = read_or_empty(path).map_err(&io_error)?;
    let (new_text, out) = change(&text)?;
    if let Some(new_text) = new_text {
        write_atomically(path, &new_text).map_err(&io_error)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_keeps_it_the_owners_only() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/config.toml");
        write_atomically(&path, "a = 1\n").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "a new config is owner-only");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_atomically(&path, "a = 2\n").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "a = 2\n");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "a file we write is the owner's only");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
        write_atomically(&path, "a = 3\n").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o400, "the owner's own bits are kept");
        let leftovers = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1, "no temporary file is left behind");
    }

    #[test]
    fn concurrent_writers_never_lose_an_edit() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let writers = 8;
        let rounds = 25;
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for r in 0..rounds {
                        update_text(
                            &path,
                            |e| e,
                            |text| {
                                // Yield between read and write: without the lock another
                                // writer would slip in here and its line would be lost.
                                std::thread::yield_now();
                                Ok::<_, std::io::Error>((Some(format!("{text}w{w}r{r}\n")), ()))
                            },
                        )
                        .unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), writers * rounds, "{text}");
        for w in 0..writers {
            for r in 0..rounds {
                assert!(text.contains(&format!("w{w}r{r}\n")), "w{w}r{r} lost");
            }
        }
    }

    #[test]
    fn the_lock_excludes_a_second_holder_until_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let held = lock(&path).unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.clone();
        let waiter = std::thread::spawn(move || {
            let _second = lock(&p).unwrap();
            tx.send(()).unwrap();
        });
        // A separate descriptor cannot take the lock while `held` lives.
        let probe = OpenOptions::new()
            .read(true)
            .write(true)
            .open(lock_path(&path))
            .unwrap();
        assert!(matches!(
            probe.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(probe);
        drop(held);
        rx.recv_timeout(std::time::Duration::from_secs(30))
            .expect("the waiting writer gets the lock once it is released");
        waiter.join().unwrap();
    }

    #[test]
    fn an_untouched_file_is_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let out = update_text(&path, |e| e, |_| Ok::<_, std::io::Error>((None, 7))).unwrap();
        assert_eq!(out, 7);
        assert!(!path.exists());
    }
}
