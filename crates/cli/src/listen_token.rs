//! The bearer token of `--listen` when the user gives none: loopback is not a security
//! boundary on a shared machine (any local user can connect to 127.0.0.1), so a loopback
//! listener needs a token too. Like Jupyter, we make one and keep it where only the owner
//! can read it: `$OPENINTERPRETER_HOME/listen-token`, mode 0600. The same file serves the
//! next start, so configured clients keep working; delete it to get a new token. The token
//! itself is never printed or logged, only where it is.

use std::io::{Read, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The token file could not be read or written; says how to get past it.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot keep the listener's token in {}: {source}; make {} writable, or pass a token with --auth-token-env VAR",
    path.display(),
    home.display()
)]
pub(crate) struct TokenFileError {
    /// The token file.
    pub path: PathBuf,
    /// The home directory it is in.
    pub home: PathBuf,
    /// What failed.
    pub source: std::io::Error,
}

/// The file's name in the home directory.
pub(crate) const FILE_NAME: &str = "listen-token";

/// Shortest token accepted on an address other machines can reach.
pub(crate) const MIN_LEN: usize = 32;

/// Random bytes in a generated token (hex-encoded: twice as many characters).
const RANDOM_BYTES: usize = 32;

/// The token kept in `home`, made if there is none yet (or if the file there could have
/// been read by someone else, or does not hold a usable token). Returns it and its path.
pub(crate) fn load_or_create(home: &Path) -> Result<(String, PathBuf), TokenFileError> {
    let path = home.join(FILE_NAME);
    let fail = |source: std::io::Error| TokenFileError {
        path: path.clone(),
        home: home.to_path_buf(),
        source,
    };
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_file() && meta.mode() & 0o077 == 0 => {
            if let Some(token) = read_token(&path).map_err(fail)? {
                return Ok((token, path));
            }
        }
        Ok(_) => eprintln!(
            "warning: {} is not a private file (mode 0600); replacing it with a new token",
            path.display()
        ),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(fail(e)),
    }
    let token = random_token().map_err(fail)?;
    write_private(home, &path, &token).map_err(fail)?;
    Ok((token, path))
}

/// The file's token, or `None` if it holds none usable (empty, short, not text, too long).
fn read_token(path: &Path) -> std::io::Result<Option<String>> {
    // Non-blocking, a regular file only, bounded: a FIFO there is an error, not a wait.
    let text = match oi_config::project_file::read_text_capped(path, 4096) {
        Ok(text) => text,
        Err(
            e @ (oi_config::project_file::ProjectFileError::NotFound { .. }
            | oi_config::project_file::ProjectFileError::NotRegular { .. }),
        ) => return Err(e.into()),
        Err(_) => return Ok(None),
    };
    let token = text.trim();
    let usable =
        token.len() >= MIN_LEN && token.len() < 4096 && token.bytes().all(|b| b.is_ascii_graphic());
    Ok(usable.then(|| token.to_string()))
}

fn random_token() -> std::io::Result<String> {
    let mut bytes = [0u8; RANDOM_BYTES];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Writes `token` to `path` as a new 0600 file (through a temporary file and a rename, so
/// no one ever sees it with other permissions or half-written).
fn write_private(home: &Path, path: &Path, token: &str) -> std::io::Result<()> {
    if !home.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(home)?;
    }
    let tmp = home.join(format!(".{FILE_NAME}.{}.tmp", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&tmp)?;
    // The mode given to open() is masked by the umask; 0600 is what it must be.
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    let written = file
        .write_all(format!("{token}\n").as_bytes())
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_made_once_kept_private_and_reused() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path().join("new-home");
        let (token, path) = load_or_create(&home).unwrap();
        assert_eq!(token.len(), 2 * RANDOM_BYTES);
        assert!(token.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(path, home.join(FILE_NAME));
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(
            load_or_create(&home).unwrap().0,
            token,
            "the next start reuses it"
        );

        // Readable by others: it may have leaked, so it is replaced.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let (fresh, _) = load_or_create(&home).unwrap();
        assert_ne!(fresh, token);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);

        // Too short to be safe: replaced.
        std::fs::write(&path, "short\n").unwrap();
        let (fresh, _) = load_or_create(&home).unwrap();
        assert_eq!(fresh.len(), 2 * RANDOM_BYTES);
    }
}
