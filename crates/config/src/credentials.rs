//! `$OPENINTERPRETER_HOME/.credentials.json`: the one owner of the file that holds secrets.
//!
//! The file is a JSON object with one section per kind of secret:
//!
//! ```json
//! { "api_keys":  { "<ENV_KEY>": "<key>" },
//!   "mcp_oauth": { "<server>|<url hash>": { "server_name": ..., "credentials": ... } } }
//! ```
//!
//! * `api_keys`: provider API keys saved by v2 `account/login/start` (and removed by
//!   `account/logout` or the TUI's `/logout`), filed under the provider's `env_key` name so the
//!   variable and the file are interchangeable ([`api_key`], [`set_api_key`]).
//! * `mcp_oauth`: OAuth tokens of MCP servers (`oi-mcp-client`'s credential store), through
//!   [`read_section`] and [`update`].
//!
//! Every write goes through [`update`]: under the file's edit lock ([`crate::edit::lock`]), the
//! current file is read, changed and replaced atomically with mode 0600 in a 0700 folder, so
//! a login in one process and a token refresh in another never lose each other's change, and
//! every section not being changed survives. Reads tighten a file that others can read.
//!
//! Refreshing an OAuth token is a longer read-change-write (read the refresh token, ask the
//! server, save what it answers) whose store may be the OS keyring rather than this file, so it
//! has its own lock per entry ([`lock_refresh`]): a refresh token that the server rotates is
//! never sent twice by two processes.

use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// The file name, under the home directory.
pub const CREDENTIALS_FILE: &str = ".credentials.json";

/// The section of provider API keys.
pub const API_KEYS: &str = "api_keys";

/// A credentials file that cannot be read or written; the message names the file and the fix.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct CredentialsError(String);

impl CredentialsError {
    /// The message (names the file and what to do).
    pub fn message(&self) -> &str {
        &self.0
    }
}

/// `home`'s credentials file.
pub fn path(home: &Path) -> PathBuf {
    home.join(CREDENTIALS_FILE)
}

/// The whole file as a JSON object (empty when there is no file). A file that is not a JSON
/// object is an error: rewriting it would lose whatever it holds.
pub fn read(home: &Path) -> Result<Map<String, Value>, CredentialsError> {
    let path = path(home);
    make_owner_only(&path);
    let text = match crate::project_file::read_text_capped(
        &path,
        crate::project_file::HOME_FILE_MAX_BYTES,
    ) {
        Ok(text) => text,
        Err(e) if e.is_not_found() => return Ok(Map::new()),
        Err(e) => return Err(CredentialsError(e.to_string())),
    };
    parse(&path, &text)
}

fn parse(path: &Path, text: &str) -> Result<Map<String, Value>, CredentialsError> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(all)) => Ok(all),
        _ => Err(CredentialsError(format!(
            "{} is not a JSON object; fix or remove it, then log in again",
            path.display()
        ))),
    }
}

/// One section (`api_keys`, `mcp_oauth`...) of the file; empty when absent.
pub fn read_section(home: &Path, section: &str) -> Result<Map<String, Value>, CredentialsError> {
    Ok(match read(home)?.remove(section) {
        Some(Value::Object(s)) => s,
        _ => Map::new(),
    })
}

/// Change `section` under the file's lock and write the file back (0600, atomically); other
/// sections are kept as they are. An emptied section is dropped, and a file left with nothing
/// in it is removed. Returns what `change` returns.
pub fn update<T>(
    home: &Path,
    section: &str,
    change: impl FnOnce(&mut Map<String, Value>) -> T,
) -> Result<T, CredentialsError> {
    let path = path(home);
    create_private_dir(home)?;
    let io_error =
        |e: std::io::Error| CredentialsError(format!("cannot update {}: {e}", path.display()));
    let _lock = crate::edit::lock(&path).map_err(io_error)?;
    make_owner_only(&path);
    let text = crate::edit::read_or_empty(&path).map_err(io_error)?;
    let mut all = parse(&path, &text)?;
    let mut entries = match all.remove(section) {
        Some(Value::Object(s)) => s,
        _ => Map::new(),
    };
    let out = change(&mut entries);
    if !entries.is_empty() {
        all.insert(section.to_string(), Value::Object(entries));
    }
    if all.is_empty() {
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io_error(e)),
        }
        return Ok(out);
    }
    let body = serde_json::to_string_pretty(&Value::Object(all))
        .map_err(|e| CredentialsError(format!("cannot encode {}: {e}", path.display())))?;
    write_private(&path, &body).map_err(io_error)?;
    Ok(out)
}

/// The folder of the refresh locks, under the home directory.
const REFRESH_LOCKS_DIR: &str = ".credentials.locks";

/// Wait for and take the lock that serializes refreshing the OAuth tokens stored under `entry`
/// (a `mcp_oauth` key), across processes: hold it from reading the refresh token until the
/// new tokens are saved. Blocking; one lock file per entry in a 0700 folder.
pub fn lock_refresh(home: &Path, entry: &str) -> Result<crate::edit::EditLock, CredentialsError> {
    let dir = home.join(REFRESH_LOCKS_DIR);
    create_private_dir(&dir)?;
    let name: String = entry
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    crate::edit::lock(&dir.join(name)).map_err(|e| {
        CredentialsError(format!(
            "cannot lock {} to refresh an OAuth token: {e}",
            dir.display()
        ))
    })
}

/// The key saved for `env_key` in `home`'s credentials file, if any. An unreadable or
/// malformed file counts as no key.
pub fn api_key(home: &Path, env_key: &str) -> Option<String> {
    let keys = read_section(home, API_KEYS).ok()?;
    let key = keys.get(env_key)?.as_str()?.trim();
    (!key.is_empty()).then(|| key.to_string())
}

/// Save (`Some`) or forget (`None`) the key for `env_key`. Returns whether a key was stored
/// before.
pub fn set_api_key(
    home: &Path,
    env_key: &str,
    key: Option<&str>,
) -> Result<bool, CredentialsError> {
    update(home, API_KEYS, |keys| match key {
        Some(k) => keys.insert(env_key.to_string(), Value::from(k)).is_some(),
        None => keys.remove(env_key).is_some(),
    })
}

/// Replace `path` with `body`, owner-only whatever the umask or the old file's mode.
fn write_private(path: &Path, body: &str) -> std::io::Result<()> {
    crate::edit::write_atomically(path, body)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(())
}

/// The home folder, created owner-only (0700) if it does not exist.
fn create_private_dir(dir: &Path) -> Result<(), CredentialsError> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| CredentialsError(format!("cannot create {}: {e}", dir.display())))
}

/// Tighten a file holding secrets to 0600 if group or others can read it (a copy made by hand,
/// an older version). Best effort: a file owned by someone else is left as it is.
pub fn make_owner_only(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path)
            && meta.permissions().mode() & 0o077 != 0
            && let Err(e) = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
        {
            tracing::warn!(
                "{} is readable by other users and cannot be made private: {e}",
                path.display()
            );
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn logout_removes_only_that_key() {
        let home = tempfile::tempdir().unwrap();
        assert!(!set_api_key(home.path(), "A_KEY", None).unwrap());
        std::fs::write(
            path(home.path()),
            r#"{"api_keys": {"A_KEY": "a", "B_KEY": "b"}}"#,
        )
        .unwrap();
        assert!(set_api_key(home.path(), "A_KEY", None).unwrap());
        assert_eq!(api_key(home.path(), "A_KEY"), None);
        assert_eq!(api_key(home.path(), "B_KEY").as_deref(), Some("b"));
        assert!(!set_api_key(home.path(), "A_KEY", None).unwrap());
        std::fs::write(path(home.path()), "not json").unwrap();
        let err = set_api_key(home.path(), "B_KEY", None).unwrap_err();
        assert!(err.message().contains("not a JSON object"), "{err}");
        assert_eq!(
            std::fs::read_to_string(path(home.path())).unwrap(),
            "not json",
            "a file we cannot parse is never overwritten"
        );
    }

    #[test]
    fn stored_keys_are_read_by_env_key_name() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(api_key(dir.path(), "X_KEY"), None);
        std::fs::write(path(dir.path()), "not json").unwrap();
        assert_eq!(api_key(dir.path(), "X_KEY"), None);
        std::fs::write(
            path(dir.path()),
            r#"{"api_keys": {"X_KEY": " sk-1 ", "EMPTY": ""}, "other": 1}"#,
        )
        .unwrap();
        assert_eq!(api_key(dir.path(), "X_KEY").as_deref(), Some("sk-1"));
        assert_eq!(api_key(dir.path(), "EMPTY"), None);
        assert_eq!(api_key(dir.path(), "Y_KEY"), None);
    }

    #[test]
    fn a_readable_credentials_file_is_tightened_when_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = path(dir.path());
        std::fs::write(&file, r#"{"api_keys": {"X_KEY": "sk-1"}}"#).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(api_key(dir.path(), "X_KEY").as_deref(), Some("sk-1"));
        assert_eq!(mode(&file), 0o600);
    }

    #[test]
    fn updates_keep_other_sections_are_private_and_empty_files_go_away() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path().join("new-home");
        set_api_key(&home, "X_KEY", Some("sk-9")).unwrap();
        assert_eq!(mode(&home), 0o700, "a new home is owner-only");
        assert_eq!(mode(&path(&home)), 0o600);
        update(&home, "mcp_oauth", |s| {
            s.insert("srv".into(), Value::from("tok"));
        })
        .unwrap();
        assert_eq!(api_key(&home, "X_KEY").as_deref(), Some("sk-9"));
        assert_eq!(read_section(&home, "mcp_oauth").unwrap()["srv"], "tok");
        set_api_key(&home, "X_KEY", None).unwrap();
        let all = read(&home).unwrap();
        assert!(!all.contains_key(API_KEYS), "an emptied section is dropped");
        update(&home, "mcp_oauth", |s| s.clear()).unwrap();
        assert!(!path(&home).exists(), "nothing left: no file");
    }

    #[test]
    fn a_refresh_lock_is_exclusive_per_entry_across_open_files() {
        let home = tempfile::tempdir().unwrap();
        let held = lock_refresh(home.path(), "docs|0123456789abcdef").unwrap();
        let dir = home.path().join(REFRESH_LOCKS_DIR);
        assert_eq!(mode(&dir), 0o700);
        // Another entry is not blocked by it.
        drop(lock_refresh(home.path(), "other|0123456789abcdef").unwrap());
        // A second open file of the same lock (as another process would have) cannot take it
        // while it is held, and can once it is dropped.
        let lock_file = crate::edit::lock_path(&dir.join("docs_0123456789abcdef"));
        let other = std::fs::File::open(&lock_file).unwrap();
        assert!(matches!(
            other.try_lock(),
            Err(std::fs::TryLockError::WouldBlock)
        ));
        drop(held);
        other.try_lock().unwrap();
    }

    #[test]
    fn concurrent_logins_keep_every_key() {
        let home = tempfile::tempdir().unwrap();
        let handles: Vec<_> = (0..8)
            .map(|w| {
                let home = home.path().to_path_buf();
                std::thread::spawn(move || {
                    for r in 0..10 {
                        let var = format!("K{w}_{r}");
                        set_api_key(&home, &var, Some("secret")).unwrap();
                        update(&home, "mcp_oauth", |s| {
                            s.insert(var.clone(), Value::from(r));
                        })
                        .unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let keys = read_section(home.path(), API_KEYS).unwrap();
        let tokens = read_section(home.path(), "mcp_oauth").unwrap();
        assert_eq!(keys.len(), 80, "{keys:?}");
        assert_eq!(tokens.len(), 80, "{tokens:?}");
        assert_eq!(mode(&path(home.path())), 0o600);
    }
}
