//! Where MCP servers' OAuth tokens are kept (`mcp_oauth_credentials_store`), and the lock that
//! serializes their refresh across processes.
//!
//! * `keyring`: the OS keyring. On Linux and the BSDs that is the freedesktop Secret Service
//!   (GNOME Keyring, KWallet), reached over the D-Bus session bus in pure Rust. One secret per
//!   server: service [`KEYRING_SERVICE`], account the credential key (`<server>|<hash of the
//!   URL>`), value the same JSON entry the file would hold.
//! * `file`: the `mcp_oauth` section of `$OPENINTERPRETER_HOME/.credentials.json` (0600,
//!   locked, atomic), through `oi_config::credentials`.
//! * `auto` (the default): the keyring while it is reachable; otherwise the file. "Not
//!   reachable" is any keyring error: no D-Bus session, no Secret Service on it, a locked
//!   keyring that cannot be unlocked (no one to type the password), or no answer within
//!   [`KEYRING_TIMEOUT`]. The first such error is logged once (info) with the reason, and the
//!   process uses the file from then on without asking the keyring again. Reads look in the
//!   keyring first, then in the file (tokens saved while no keyring was reachable, or under
//!   `file`). Saving to the keyring removes the server's entry from the file.
//!
//! Logout ([`OAuthTokenStore::delete`]) removes the server's tokens from both places, whatever
//! the mode. No token or keyring value is ever logged.
//!
//! An entry holds, besides the tokens and the client id, the issuer of the authorization
//! server that issued them (rmcp records it) and that server's metadata as the login found it
//! (`authorization_server`): a session refreshes at the endpoints the tokens came from without
//! discovering them again — which a server announcing its metadata only in its
//! `WWW-Authenticate` challenge would not allow before its first 401 — and a server that moves
//! to another authorization server is noticed by comparing issuers.
//!
//! Refresh: rmcp asks the store for a guard before it reads the refresh token and keeps it
//! until the new tokens are saved. Ours is the entry's lock file
//! (`oi_config::credentials::lock_refresh`), so two processes never send the same refresh
//! token, which a server that rotates refresh tokens would honour only once. rmcp reads the
//! tokens before every request, so the store keeps the last tokens it read or wrote in memory;
//! taking the guard drops that copy, and the refresh reads what another process may have saved.

use crate::oauth_error::OAuthError;
pub use oi_config::OAuthCredentialsStoreMode;
use oi_config::credentials;
use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The shared credentials file under the home directory.
pub use oi_config::credentials::CREDENTIALS_FILE;
pub(crate) const SECTION: &str = "mcp_oauth";

/// Stable key for one server's tokens.
pub fn credential_key(server: &str, url: &str) -> String {
    let identity = serde_json::json!({"type": "http", "url": url, "headers": {}});
    let digest = hex::encode(Sha256::digest(identity.to_string().as_bytes()));
    format!("{server}|{}", &digest[..16])
}

/// A [`CredentialStore`] backed by one entry of `$HOME/.credentials.json`.
#[derive(Clone, Debug)]
pub struct FileCredentialStore {
    home: PathBuf,
    key: String,
    server: String,
    url: String,
}

impl FileCredentialStore {
    /// The credentials-file store of `server`'s tokens (at `url`) under `home`.
    pub fn new(home: &Path, server: &str, url: &str) -> Self {
        Self {
            home: home.to_path_buf(),
            key: credential_key(server, url),
            server: server.to_string(),
            url: url.to_string(),
        }
    }

    pub(crate) fn entry(&self) -> Result<Option<Value>, OAuthError> {
        Ok(credentials::read_section(&self.home, SECTION)?.remove(&self.key))
    }

    /// Whether tokens are stored for this server.
    pub fn has_tokens(&self) -> bool {
        self.entry()
            .ok()
            .flatten()
            .and_then(|e| e.get("credentials").cloned())
            .and_then(|c| serde_json::from_value::<StoredCredentials>(c).ok())
            .is_some_and(|c| c.token_response.is_some())
    }

    /// Delete this server's tokens; `Ok(false)` if there were none.
    pub fn delete(&self) -> Result<bool, OAuthError> {
        Ok(credentials::update(&self.home, SECTION, |entries| {
            entries.remove(&self.key).is_some()
        })?)
    }

    /// Runs `work` on a clone of this store on the blocking pool: the credentials file is
    /// read and written with blocking I/O (and `fsync`), which must not stall the runtime
    /// while a connection refreshes its token.
    async fn off_runtime<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Self) -> Result<T, OAuthError> + Send + 'static,
    ) -> Result<T, OAuthError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || work(&store))
            .await
            .map_err(|e| OAuthError::Task(e.to_string()))?
    }

    /// Stores `stored` under this server's key, keeping every other entry and section.
    pub(crate) fn save_blocking(&self, stored: &StoredCredentials) -> Result<(), OAuthError> {
        self.save_entry_blocking(entry_json(&self.server, &self.url, stored, None)?)
    }

    /// Stores a whole entry (see `oauth_store::entry_json`) under this server's key.
    pub(crate) fn save_entry_blocking(&self, entry: Value) -> Result<(), OAuthError> {
        Ok(credentials::update(&self.home, SECTION, |entries| {
            entries.insert(self.key.clone(), entry);
        })?)
    }
}

/// rmcp's credential-store seam takes an `AuthError`: our line, as its text.
fn store_err(e: OAuthError) -> AuthError {
    AuthError::InternalError(e.to_string())
}

#[async_trait::async_trait]
impl CredentialStore for FileCredentialStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let Some(entry) = self.off_runtime(Self::entry).await.map_err(store_err)? else {
            return Ok(None);
        };
        match entry.get("credentials").cloned() {
            Some(c) => serde_json::from_value(c)
                .map(Some)
                .map_err(|e| store_err(OAuthError::Unreadable(e.to_string()))),
            None => Ok(None),
        }
    }

    async fn save(&self, stored: StoredCredentials) -> Result<(), AuthError> {
        self.off_runtime(move |s| s.save_blocking(&stored))
            .await
            .map_err(store_err)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.off_runtime(|s| s.delete().map(|_| ()))
            .await
            .map_err(store_err)
    }
}

pub use crate::oauth_error::KEYRING_SERVICE;
/// How long one keyring operation may take before the keyring counts as not reachable (a
/// locked keyring may wait for a password prompt nobody can answer).
pub const KEYRING_TIMEOUT: Duration = Duration::from_secs(10);

/// Where a server's tokens were found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenLocation {
    /// The OS keyring.
    Keyring,
    /// The 0600 credentials file.
    File,
}

/// One server's OAuth tokens, in the keyring or the credentials file as the mode says.
#[derive(Clone)]
pub struct OAuthTokenStore {
    mode: OAuthCredentialsStoreMode,
    home: PathBuf,
    key: String,
    server: String,
    url: String,
    file: FileCredentialStore,
    /// The tokens last read or written, so that rmcp's read before every request costs no
    /// keyring call; dropped when a refresh starts.
    cached: Arc<Mutex<Option<StoredCredentials>>>,
    /// The authorization server's metadata, saved with every write of the tokens.
    metadata: Arc<Mutex<Option<AuthorizationMetadata>>>,
}

impl std::fmt::Debug for OAuthTokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthTokenStore")
            .field("mode", &self.mode)
            .field("key", &self.key)
            .finish_non_exhaustive()
    }
}

impl OAuthTokenStore {
    /// The store of `server`'s tokens (at `url`) under `home`, in the places `mode` allows.
    pub fn new(home: &Path, server: &str, url: &str, mode: OAuthCredentialsStoreMode) -> Self {
        Self {
            mode,
            home: home.to_path_buf(),
            key: credential_key(server, url),
            server: server.to_string(),
            url: url.to_string(),
            file: FileCredentialStore::new(home, server, url),
            cached: Arc::new(Mutex::new(None)),
            metadata: Arc::new(Mutex::new(None)),
        }
    }

    /// The authorization server the next saved tokens come from: its metadata is written
    /// with them.
    pub fn remember_metadata(&self, metadata: AuthorizationMetadata) {
        if let Ok(mut m) = self.metadata.lock() {
            *m = Some(metadata);
        }
    }

    /// The stored entry: its credentials, if any, and the authorization server's metadata,
    /// if it was saved with them (which is remembered for the next save).
    pub(crate) async fn load_entry(
        &self,
    ) -> Result<Option<(StoredCredentials, Option<AuthorizationMetadata>)>, OAuthError> {
        let store = self.clone();
        let found = tokio::task::spawn_blocking(move || store.read_entry_blocking())
            .await
            .map_err(|e| OAuthError::Task(e.to_string()))??;
        let Some((entry, _)) = found else {
            return Ok(None);
        };
        let Some(credentials) = parse_entry(&entry)? else {
            return Ok(None);
        };
        let metadata = parse_metadata(&entry);
        if let Some(m) = &metadata {
            self.remember_metadata(m.clone());
        }
        self.remember(Some(&credentials));
        Ok(Some((credentials, metadata)))
    }

    /// Whether tokens (not just a registered client) are stored for this server. Blocking.
    pub fn has_tokens(&self) -> bool {
        self.read_blocking()
            .ok()
            .flatten()
            .is_some_and(|(c, _)| c.token_response.is_some())
    }

    /// Where this server's tokens are, if anywhere. Blocking.
    pub fn location(&self) -> Option<TokenLocation> {
        self.read_blocking().ok().flatten().map(|(_, at)| at)
    }

    /// Delete this server's tokens from the keyring and the file, whatever the mode (a mode
    /// changed since the login must not leave a copy behind). `Ok(false)` if there were none.
    /// A keyring that is not reachable is an error only under `keyring`. Blocking.
    pub fn delete(&self) -> Result<bool, OAuthError> {
        self.forget_cached();
        let in_file = self.file.delete()?;
        let in_keyring = match (self.mode, keyring::delete(&self.key)) {
            (_, Ok(found)) => found,
            (OAuthCredentialsStoreMode::Keyring, Err(e)) => {
                return Err(OAuthError::KeyringDelete {
                    reason: e.to_string(),
                    file_copy_removed: in_file,
                });
            }
            (_, Err(e)) => {
                tracing::debug!("OS keyring not reachable while logging out: {e}");
                false
            }
        };
        Ok(in_file || in_keyring)
    }

    /// The stored tokens and where they were found. Blocking.
    fn read_blocking(&self) -> Result<Option<(StoredCredentials, TokenLocation)>, OAuthError> {
        Ok(match self.read_entry_blocking()? {
            Some((entry, at)) => parse_entry(&entry)?.map(|c| (c, at)),
            None => None,
        })
    }

    /// The stored entry (the keyring's, else the file's) and where it was found. Blocking.
    fn read_entry_blocking(&self) -> Result<Option<(Value, TokenLocation)>, OAuthError> {
        if self.uses_keyring() {
            match keyring::get(&self.key) {
                Ok(Some(text)) => {
                    let entry: Value = serde_json::from_str(&text).map_err(|_| {
                        OAuthError::KeyringEntryNotJson {
                            key: self.key.clone(),
                            server: self.server.clone(),
                        }
                    })?;
                    return Ok(Some((entry, TokenLocation::Keyring)));
                }
                Ok(None) => {}
                Err(e) => self.keyring_failed(e)?,
            }
        }
        Ok(self.file.entry()?.map(|e| (e, TokenLocation::File)))
    }

    /// The metadata to save with the tokens: the remembered one, else the one already
    /// stored (a refresh in a session that did not load the entry through `load_entry`).
    fn metadata_to_save(&self) -> Option<AuthorizationMetadata> {
        let remembered = self.metadata.lock().ok().and_then(|m| m.clone());
        remembered.or_else(|| {
            self.read_entry_blocking()
                .ok()
                .flatten()
                .and_then(|(entry, _)| parse_metadata(&entry))
        })
    }

    /// Save to the keyring (removing the file's copy) or the file. Blocking.
    fn save_blocking(&self, stored: &StoredCredentials) -> Result<(), OAuthError> {
        let metadata = self.metadata_to_save();
        let entry = entry_json(&self.server, &self.url, stored, metadata.as_ref())?;
        if self.uses_keyring() {
            match keyring::set(&self.key, &entry.to_string()) {
                Ok(()) => {
                    // One copy only: an older copy in the file would outlive a logout that
                    // cannot reach the keyring.
                    if let Err(e) = self.file.delete() {
                        tracing::warn!(
                            "tokens saved in the OS keyring, but the old copy in the credentials file could not be removed: {e}"
                        );
                    }
                    return Ok(());
                }
                Err(e) => self.keyring_failed(e)?,
            }
        }
        self.file.save_entry_blocking(entry)
    }

    /// Whether to ask the keyring: always under `keyring`, never under `file`, under `auto`
    /// until it has failed once in this process.
    fn uses_keyring(&self) -> bool {
        match self.mode {
            OAuthCredentialsStoreMode::Keyring => true,
            OAuthCredentialsStoreMode::File => false,
            OAuthCredentialsStoreMode::Auto => KEYRING_UNREACHABLE.get().is_none(),
        }
    }

    /// A keyring error: fatal under `keyring`; under `auto`, remembered (and logged once) so
    /// that the file is used from now on.
    fn keyring_failed(&self, error: OAuthError) -> Result<(), OAuthError> {
        let error = error.to_string();
        if self.mode == OAuthCredentialsStoreMode::Keyring {
            return Err(OAuthError::KeyringUnusable {
                reason: error,
                file: credentials::path(&self.home),
            });
        }
        if KEYRING_UNREACHABLE.set(error.clone()).is_ok() {
            tracing::info!(
                "the OS keyring is not reachable ({error}); MCP OAuth tokens are kept in {} (mode 0600) for the rest of this run. Set mcp_oauth_credentials_store = \"file\" to not try the keyring, or \"keyring\" to make this an error.",
                credentials::path(&self.home).display()
            );
        }
        Ok(())
    }

    fn forget_cached(&self) {
        if let Ok(mut cached) = self.cached.lock() {
            *cached = None;
        }
    }

    fn remember(&self, stored: Option<&StoredCredentials>) {
        if let Ok(mut cached) = self.cached.lock() {
            *cached = stored.cloned();
        }
    }

    fn cached(&self) -> Option<StoredCredentials> {
        self.cached.lock().ok().and_then(|c| c.clone())
    }

    /// Runs `work` on a clone of this store on the blocking pool: the keyring (D-Bus) and the
    /// credentials file (`fsync`) are blocking, and must not stall the runtime.
    async fn off_runtime<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Self) -> Result<T, OAuthError> + Send + 'static,
    ) -> Result<T, AuthError> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || work(&store))
            .await
            .map_err(|e| OAuthError::Task(e.to_string()))
            .and_then(|r| r)
            // rmcp's seam takes an `AuthError`: our line is its text.
            .map_err(|e| AuthError::CredentialStoreError(e.to_string()))
    }
}

/// The first keyring error of this process under `auto`: from then on the file is used.
static KEYRING_UNREACHABLE: OnceLock<String> = OnceLock::new();

/// `{server_name, server_url, credentials, authorization_server}`: one server's entry, in the
/// keyring or the file (`authorization_server` only when the metadata is known).
pub(crate) fn entry_json(
    server: &str,
    url: &str,
    stored: &StoredCredentials,
    metadata: Option<&AuthorizationMetadata>,
) -> Result<Value, OAuthError> {
    let creds = serde_json::to_value(stored).map_err(|e| OAuthError::Encode(e.to_string()))?;
    let mut entry =
        serde_json::json!({"server_name": server, "server_url": url, "credentials": creds});
    if let Some(m) = metadata {
        entry["authorization_server"] =
            serde_json::to_value(m).map_err(|e| OAuthError::Encode(e.to_string()))?;
    }
    Ok(entry)
}

/// The authorization server's metadata saved in an entry, if any (an entry written before it
/// was kept has none; an unreadable one counts as none: discovery finds it again).
pub(crate) fn parse_metadata(entry: &Value) -> Option<AuthorizationMetadata> {
    serde_json::from_value(entry.get("authorization_server")?.clone()).ok()
}

/// The credentials of an entry written by [`entry_json`]; `None` when it has none.
pub(crate) fn parse_entry(entry: &Value) -> Result<Option<StoredCredentials>, OAuthError> {
    match entry.get("credentials") {
        Some(c) => serde_json::from_value(c.clone())
            .map(Some)
            .map_err(|e| OAuthError::Unreadable(e.to_string())),
        None => Ok(None),
    }
}

#[async_trait::async_trait]
impl CredentialStore for OAuthTokenStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        if let Some(cached) = self.cached() {
            return Ok(Some(cached));
        }
        let loaded = self
            .off_runtime(|s| Ok(s.read_blocking()?.map(|(c, _)| c)))
            .await?;
        self.remember(loaded.as_ref());
        Ok(loaded)
    }

    async fn save(&self, stored: StoredCredentials) -> Result<(), AuthError> {
        let to_save = stored.clone();
        self.off_runtime(move |s| s.save_blocking(&to_save)).await?;
        self.remember(Some(&stored));
        Ok(())
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.off_runtime(|s| s.delete().map(|_| ())).await
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let lock = self
            .off_runtime(|s| {
                credentials::lock_refresh(&s.home, &s.key)
                    .map_err(|e| OAuthError::Lock(e.to_string()))
            })
            .await?;
        // Another process may have refreshed (and rotated the refresh token) meanwhile.
        self.forget_cached();
        Ok(Some(CredentialRefreshGuard::new(lock)))
    }
}

/// The OS keyring, one operation at a time, each bounded by [`KEYRING_TIMEOUT`]. Errors are
/// worded here and never carry a secret.
mod keyring {
    use super::{KEYRING_SERVICE, KEYRING_TIMEOUT};
    use crate::oauth_error::OAuthError;

    /// The secret filed under `account`, if any.
    pub(super) fn get(account: &str) -> Result<Option<String>, OAuthError> {
        let account = account.to_string();
        bounded(move || match backend::entry(&account)?.get_password() {
            Ok(secret) => Ok(Some(secret)),
            Err(::keyring::Error::NoEntry) => Ok(None),
            Err(e) => Err(describe(&e)),
        })
    }

    /// File `secret` under `account`, replacing what was there.
    pub(super) fn set(account: &str, secret: &str) -> Result<(), OAuthError> {
        let account = account.to_string();
        let secret = secret.to_string();
        bounded(move || {
            backend::entry(&account)?
                .set_password(&secret)
                .map_err(|e| describe(&e))
        })
    }

    /// Remove what is filed under `account`; `Ok(false)` if nothing was.
    pub(super) fn delete(account: &str) -> Result<bool, OAuthError> {
        let account = account.to_string();
        bounded(
            move || match backend::entry(&account)?.delete_credential() {
                Ok(()) => Ok(true),
                Err(::keyring::Error::NoEntry) => Ok(false),
                Err(e) => Err(describe(&e)),
            },
        )
    }

    /// Runs `op` on its own thread and waits at most [`KEYRING_TIMEOUT`] for it: a keyring
    /// that waits for an unlock prompt must not hang a session start or a login.
    fn bounded<T: Send + 'static>(
        op: impl FnOnce() -> Result<T, OAuthError> + Send + 'static,
    ) -> Result<T, OAuthError> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("oi-keyring".into())
            .spawn(move || {
                let _ = tx.send(op());
            })
            .map_err(|e| OAuthError::Keyring(format!("cannot start the keyring thread: {e}")))?;
        match rx.recv_timeout(KEYRING_TIMEOUT) {
            Ok(result) => result,
            Err(_) => Err(OAuthError::Keyring(format!(
                "no answer within {} s (a locked keyring waiting for its password?)",
                KEYRING_TIMEOUT.as_secs()
            ))),
        }
    }

    /// The error in our words: the platform's message, never the secret or the entry.
    fn describe(e: &::keyring::Error) -> OAuthError {
        use ::keyring::Error as E;
        OAuthError::Keyring(match e {
            E::PlatformFailure(inner) => format!("keyring failure: {inner}"),
            E::NoStorageAccess(inner) => {
                format!("the keyring is locked or refused access: {inner}")
            }
            E::NoEntry => "no entry".to_string(),
            E::BadEncoding(_) => "the stored value is not UTF-8".to_string(),
            E::TooLong(what, limit) => format!("{what} is longer than the keyring's {limit}"),
            E::Invalid(what, why) => format!("invalid {what}: {why}"),
            E::Ambiguous(found) => format!(
                "{} entries match service `{KEYRING_SERVICE}`; remove the extra ones",
                found.len()
            ),
            other => format!("keyring error: {other}"),
        })
    }

    #[cfg(any(target_os = "linux", target_os = "freebsd", target_os = "openbsd"))]
    mod backend {
        use super::{KEYRING_SERVICE, OAuthError, describe};

        /// The Secret Service entry of `account` (D-Bus session bus; pure Rust).
        pub(super) fn entry(account: &str) -> Result<::keyring::Entry, OAuthError> {
            let credential = ::keyring::secret_service::SsCredential::new_with_target(
                None,
                KEYRING_SERVICE,
                account,
            )
            .map_err(|e| describe(&e))?;
            Ok(::keyring::Entry::new_with_credential(Box::new(credential)))
        }
    }

    #[cfg(not(any(target_os = "linux", target_os = "freebsd", target_os = "openbsd")))]
    mod backend {
        /// No keyring backend is built for this platform: `auto` uses the file.
        pub fn entry(_account: &str) -> Result<::keyring::Entry, super::OAuthError> {
            Err(super::OAuthError::Keyring(
                "no OS keyring support is built for this platform".to_string(),
            ))
        }
    }
}
