//! OAuth 2.1 (PKCE) for streamable HTTP servers, on rmcp's `auth` support: discovery, dynamic
//! client registration or a configured client id, a loopback callback, and token storage.
//!
//! Tokens live in the OS keyring or in `$HOME/.credentials.json` under the `mcp_oauth`
//! section, as `mcp_oauth_credentials_store` says ([`crate::oauth_store`]); the file is read
//! and written through `oi_config::credentials` (the file's one owner: locked, atomic, mode
//! 0600), which keeps the other sections (API keys) on every write. Entries are keyed
//! `<server>|<first 16 hex of SHA-256 of the server URL>`, so changing a server's URL starts a
//! fresh login. rmcp refreshes access tokens when they expire and saves the new ones through
//! the same store, under its refresh lock.

pub use crate::login_probe::login_challenge;
pub use crate::oauth_error::OAuthError;
pub use crate::oauth_store::{CREDENTIALS_FILE, FileCredentialStore, credential_key};
use crate::oauth_store::{OAuthCredentialsStoreMode, OAuthTokenStore};
use rmcp::transport::auth::{
    AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata,
    AuthorizationRequest, AuthorizationSession, OAuthState,
};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long `login` waits for the browser to come back.
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) async fn manager_for(url: &str) -> Result<AuthorizationManager, OAuthError> {
    AuthorizationManager::new(url)
        .await
        .map_err(|e| OAuthError::Prepare {
            url: url.to_string(),
            reason: e.to_string(),
        })
}

/// Does the server advertise OAuth (authorization-server metadata)? Bounded by 5 s.
pub async fn discover(url: &str) -> Result<bool, OAuthError> {
    let manager = manager_for(url).await?;
    match tokio::time::timeout(DISCOVERY_TIMEOUT, manager.resolve_metadata()).await {
        // Endpoints synthesized by the legacy fallback are no evidence of OAuth support.
        Ok(Ok(resolution)) => Ok(resolution.source.is_discovered()),
        Ok(Err(_)) => Ok(false),
        Err(_) => Err(OAuthError::DiscoveryTimedOut {
            url: url.to_string(),
        }),
    }
}

/// The secret `[mcp_servers.<server>.oauth] client_secret_env_var` names, read from the
/// environment now; `None` when no variable is named.
pub fn client_secret(
    server: &str,
    oauth: &oi_config::mcp::McpOAuthConfig,
) -> Result<Option<String>, OAuthError> {
    env_secret(
        server,
        "client_secret_env_var",
        oauth.client_secret_env_var.as_deref(),
    )
}

/// The value of the variable an `oauth.<key>` names; an unset or empty one is an error that
/// names the variable, the key and the fix (never a value).
pub(crate) fn env_secret(
    server: &str,
    key: &str,
    var: Option<&str>,
) -> Result<Option<String>, OAuthError> {
    let Some(var) = var else {
        return Ok(None);
    };
    match std::env::var(var) {
        Ok(v) if !v.trim().is_empty() => Ok(Some(v.trim().to_string())),
        Ok(_) => Err(OAuthError::EnvVarEmpty {
            server: server.to_string(),
            key: key.to_string(),
            var: var.to_string(),
        }),
        Err(_) => Err(OAuthError::EnvVarUnset {
            server: server.to_string(),
            key: key.to_string(),
            var: var.to_string(),
        }),
    }
}

/// What `login` needs.
pub struct LoginOptions {
    /// The server's name in `[mcp_servers]`.
    pub server: String,
    /// The server's URL.
    pub url: String,
    /// The Open Interpreter home (where the credentials file is).
    pub home: PathBuf,
    /// Where the tokens are saved (`mcp_oauth_credentials_store`).
    pub store: OAuthCredentialsStoreMode,
    /// A pre-registered client id (`oauth.client_id`); `None`: the client registers itself.
    pub client_id: Option<String>,
    /// The authorization server `client_id` is registered with (`oauth.issuer`); `None`: the
    /// one it was first used with, as stored with its tokens.
    pub client_issuer: Option<String>,
    /// Scopes asked for; empty: as the server asks.
    pub scopes: Vec<String>,
    /// RFC 8707 `resource`, appended to the authorization URL.
    pub resource: Option<String>,
    /// Port for the loopback callback (0 = any free port).
    pub callback_port: u16,
    /// How long to wait for the browser to come back.
    pub timeout: Duration,
    /// The `WWW-Authenticate` header of the server's 401/403, which names where its
    /// protected-resource metadata is and the scope it wants; `None` probes the well-known
    /// locations instead.
    pub challenge: Option<String>,
    /// The secret of the pre-registered `client_id` (a confidential client).
    pub client_secret: Option<String>,
    /// A Client ID Metadata Document URL, used as the client id where the server supports it.
    pub client_metadata_url: Option<String>,
}

impl LoginOptions {
    /// A login for `server` at `url` with every option at its default.
    pub fn new(server: &str, url: &str, home: &Path) -> Self {
        Self {
            server: server.to_string(),
            url: url.to_string(),
            home: home.to_path_buf(),
            client_id: None,
            client_issuer: None,
            scopes: Vec::new(),
            resource: None,
            callback_port: 0,
            timeout: DEFAULT_LOGIN_TIMEOUT,
            challenge: None,
            client_secret: None,
            client_metadata_url: None,
            store: OAuthCredentialsStoreMode::default(),
        }
    }
}

/// A finished authorization: the manager (which hands out the access token and refreshes it)
/// and the authorization server that issued the tokens.
pub struct Authorized {
    /// Hands out the access token and refreshes it.
    pub manager: AuthorizationManager,
    /// The authorization server's issuer, when its metadata names one.
    pub issuer: Option<String>,
}

/// Run the browser login. `show_url` is called with the authorization URL (print it, open a
/// browser). Tokens are saved where `opts.store` says.
pub async fn login(opts: LoginOptions, show_url: impl FnOnce(&str)) -> Result<(), OAuthError> {
    authorize(opts, show_url).await.map(|_| ())
}

/// The browser login, returning the authorized manager for a session to use at once.
///
/// Discovery starts from the challenge when there is one (its `resource_metadata` and
/// `scope`). A pre-registered client is used only with the authorization server it belongs
/// to ([`check_client_binding`]); a dynamically registered one is registered again with
/// whatever server the resource names now, so no client credentials cross issuers. The
/// redirect's `iss` is checked against the issuer (RFC 9207) before the code is exchanged.
pub async fn authorize(
    opts: LoginOptions,
    show_url: impl FnOnce(&str),
) -> Result<Authorized, OAuthError> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", opts.callback_port))
        .await
        .map_err(|e| {
            OAuthError::Callback(format!(
                "cannot listen for the OAuth callback on 127.0.0.1: {e}"
            ))
        })?;
    let port = listener
        .local_addr()
        .map_err(|e| OAuthError::Callback(format!("cannot read the callback port: {e}")))?
        .port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");

    let mut manager = manager_for(&opts.url).await?;
    let store = OAuthTokenStore::new(&opts.home, &opts.server, &opts.url, opts.store);
    manager.set_credential_store(store.clone());
    let metadata = authorization_server(&manager, &opts).await?;
    check_client_binding(&opts, &store, metadata.issuer.as_deref()).await?;
    let issuer = metadata.issuer.clone();
    store.remember_metadata(metadata.clone());
    manager.set_metadata(metadata);

    // No scopes given: the challenge's scope, else the resource's `scopes_supported` — not
    // both, which would ask for everything the resource offers (least privilege; a step-up
    // asks for more when a call needs it).
    let mut request = AuthorizationRequest::new(redirect_uri.clone())
        .with_client_name("Open Interpreter")
        .with_scopes(opts.scopes.iter().map(String::as_str))
        .with_initial_scope_selection();
    if let Some(id) = &opts.client_id {
        request = request.with_preregistered_client(id.as_str());
        if let Some(secret) = &opts.client_secret {
            request = request.with_client_secret(secret.as_str());
        }
    }
    if let Some(cimd) = &opts.client_metadata_url {
        request = request.with_client_metadata_url(cimd.as_str());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| {
            OAuthError::Authorization(format!("OAuth authorization could not start: {e}"))
        })?;
    let mut state = OAuthState::Session(session);
    let mut auth_url = state
        .get_authorization_url()
        .await
        .map_err(|e| OAuthError::Authorization(format!("no authorization URL: {e}")))?;
    if let Some(resource) = &opts.resource {
        let mut with_resource = url::Url::parse(&auth_url).map_err(|e| {
            OAuthError::InvalidUrl(format!(
                "the authorization URL `{auth_url}` is not a URL: {e}"
            ))
        })?;
        with_resource
            .query_pairs_mut()
            .append_pair("resource", resource);
        auth_url = with_resource.into();
    }
    show_url(&auth_url);

    let callback = tokio::time::timeout(opts.timeout, wait_for_callback(&listener, port))
        .await
        .map_err(|_| OAuthError::CallbackTimedOut {
            secs: opts.timeout.as_secs(),
        })??;
    state
        .handle_callback_with_issuer(
            &callback.code,
            &callback.csrf_token,
            callback.issuer.as_deref(),
        )
        .await
        .map_err(callback_error)?;
    let manager = state
        .into_authorization_manager()
        .ok_or(OAuthError::Incomplete)?;
    Ok(Authorized { manager, issuer })
}

/// The authorization server's metadata, found from the challenge (or the well-known
/// locations). A 2025-03-26 server publishes it at its own root with an issuer on a sub path
/// (`https://host/oauth`), which RFC 8414's issuer check rejects; that spec revision had no
/// such check, so such a server is trusted on its own origin.
async fn authorization_server(
    manager: &AuthorizationManager,
    opts: &LoginOptions,
) -> Result<AuthorizationMetadata, OAuthError> {
    match manager
        .resolve_metadata_from_challenge(opts.challenge.as_deref())
        .await
    {
        Ok(resolution) => Ok(resolution.metadata),
        Err(AuthError::AuthorizationServerMismatch {
            received_issuer, ..
        }) if same_origin(&opts.url, &received_issuer) => legacy_root_metadata(&opts.url).await,
        Err(e) => Err(OAuthError::Authorization(format!(
            "OAuth authorization could not start: {e}"
        ))),
    }
}

/// A pre-registered client is presented only to the authorization server it is registered
/// with: `oauth.issuer` when configured, else the issuer its stored tokens came from. A server
/// that now names another one gets an error naming both, before anything is sent there.
pub(crate) async fn check_client_binding(
    opts: &LoginOptions,
    store: &OAuthTokenStore,
    named: Option<&str>,
) -> Result<(), OAuthError> {
    let (Some(client_id), Some(named)) = (&opts.client_id, named) else {
        return Ok(());
    };
    let bound = match &opts.client_issuer {
        Some(configured) => Some(configured.clone()),
        None => store
            .load_entry()
            .await?
            .filter(|(stored, _)| &stored.client_id == client_id)
            .and_then(|(stored, _)| stored.issuer),
    };
    match bound {
        Some(bound) if !same_issuer(&bound, named) => Err(OAuthError::ClientBoundElsewhere {
            server: opts.server.clone(),
            bound,
            named: named.to_string(),
        }),
        _ => Ok(()),
    }
}

/// Issuer identifiers compared as RFC 8414 does, a trailing `/` on a bare origin aside.
pub(crate) fn same_issuer(a: &str, b: &str) -> bool {
    a.trim_end_matches('/') == b.trim_end_matches('/')
}

/// A failed code exchange, the RFC 9207 issuer checks in our words.
fn callback_error(e: AuthError) -> OAuthError {
    match e {
        AuthError::AuthorizationServerMismatch {
            expected_issuer,
            received_issuer,
        } => OAuthError::IssuerMismatch {
            expected: expected_issuer,
            received: received_issuer,
        },
        AuthError::AuthorizationServerMissingIssuer { expected_issuer } => {
            OAuthError::IssuerMissing {
                expected: expected_issuer,
            }
        }
        other => OAuthError::TokenExchange(other.to_string()),
    }
}

fn same_origin(a: &str, b: &str) -> bool {
    match (url::Url::parse(a), url::Url::parse(b)) {
        (Ok(a), Ok(b)) => a.origin() == b.origin(),
        _ => false,
    }
}

/// The authorization-server metadata at the root of `server_url`'s origin (where the
/// 2025-03-26 revision of MCP puts it).
async fn legacy_root_metadata(server_url: &str) -> Result<AuthorizationMetadata, OAuthError> {
    let mut url = url::Url::parse(server_url).map_err(|e| {
        OAuthError::InvalidUrl(format!("the server URL `{server_url}` is not a URL: {e}"))
    })?;
    url.set_path("/.well-known/oauth-authorization-server");
    url.set_query(None);
    let response = tokio::time::timeout(
        DISCOVERY_TIMEOUT,
        crate::http::http_client()
            .map_err(|e| OAuthError::Http(e.to_string()))?
            .get(url.as_str())
            .send(),
    )
    .await
    .map_err(|_| OAuthError::DiscoveryTimedOut {
        url: url.to_string(),
    })?
    .map_err(|e| OAuthError::Discovery(format!("OAuth discovery at {url} failed: {e}")))?;
    if !response.status().is_success() {
        return Err(OAuthError::Discovery(format!(
            "OAuth discovery at {url} answered HTTP {}",
            response.status().as_u16()
        )));
    }
    let metadata: AuthorizationMetadata = response.json().await.map_err(|e| {
        OAuthError::Discovery(format!("the OAuth metadata at {url} is unreadable: {e}"))
    })?;
    match &metadata.issuer {
        Some(issuer) if same_origin(server_url, issuer) => Ok(metadata),
        _ => Err(OAuthError::Discovery(format!(
            "the OAuth metadata at {url} names an issuer on another origin"
        ))),
    }
}

/// Serve the loopback redirect until a request carries `code` and `state` (or an error).
async fn wait_for_callback(
    listener: &tokio::net::TcpListener,
    port: u16,
) -> Result<AuthorizationCallback, OAuthError> {
    loop {
        let (mut sock, _) = listener
            .accept()
            .await
            .map_err(|e| OAuthError::Callback(format!("OAuth callback listener failed: {e}")))?;
        let mut buf = vec![0u8; 16 * 1024];
        let mut len = 0;
        // Read the request head (we only need the request line).
        while len < buf.len() {
            let n = match tokio::time::timeout(Duration::from_secs(10), sock.read(&mut buf[len..]))
                .await
            {
                Ok(Ok(n)) => n,
                _ => 0,
            };
            if n == 0 {
                break;
            }
            len += n;
            if buf[..len].windows(4).any(|w| w == b"\r\n\r\n") {
                break;
            }
        }
        let head = String::from_utf8_lossy(&buf[..len]);
        let target = head
            .lines()
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or("/")
            .to_string();
        let full = format!("http://127.0.0.1:{port}{target}");
        let query_error = url::Url::parse(&full).ok().and_then(|u| {
            let pairs: Vec<(String, String)> = u.query_pairs().into_owned().collect();
            let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
            get("error").map(|e| (e, get("error_description").unwrap_or_default()))
        });
        let respond = |status: &str, body: &str| {
            format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        };
        if let Some((error, description)) = query_error {
            let _ = sock
                .write_all(
                    respond(
                        "400 Bad Request",
                        "Authentication failed. You may close this window.",
                    )
                    .as_bytes(),
                )
                .await;
            return Err(OAuthError::Provider { error, description });
        }
        if target.starts_with("/callback")
            && let Ok(cb) = AuthorizationCallback::from_redirect_url(&full)
        {
            let _ = sock
                .write_all(
                    respond(
                        "200 OK",
                        "Authentication complete. You may close this window.",
                    )
                    .as_bytes(),
                )
                .await;
            return Ok(cb);
        }
        let _ = sock
            .write_all(respond("400 Bad Request", "Invalid OAuth callback").as_bytes())
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth_store::SECTION;
    use rmcp::transport::auth::{CredentialStore, StoredCredentials};
    use serde_json::Value;

    #[test]
    fn keys_depend_on_server_and_url() {
        let a = credential_key("docs", "https://a/mcp");
        assert!(a.starts_with("docs|"));
        assert_eq!(a.len(), "docs|".len() + 16);
        assert_ne!(a, credential_key("docs", "https://b/mcp"));
        assert_eq!(a, credential_key("docs", "https://a/mcp"));
    }

    #[tokio::test]
    async fn file_store_keeps_other_sections_and_is_private() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(CREDENTIALS_FILE);
        std::fs::write(&path, r#"{"api_keys":{"MOONSHOT_API_KEY":"k"}}"#).unwrap();
        let store = FileCredentialStore::new(home.path(), "docs", "https://a/mcp");
        assert!(store.load().await.unwrap().is_none());
        assert!(!store.has_tokens());
        store
            .save(StoredCredentials::new("cid".into(), None, vec![], None))
            .await
            .unwrap();
        let loaded = store.load().await.unwrap().unwrap();
        assert_eq!(loaded.client_id, "cid");
        assert!(!store.has_tokens(), "no token response yet");
        let all: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(all["api_keys"]["MOONSHOT_API_KEY"], "k");
        assert_eq!(
            all[SECTION][credential_key("docs", "https://a/mcp")]["server_name"],
            "docs"
        );
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert!(store.delete().unwrap());
        assert!(!store.delete().unwrap());
        let all: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(all.get(SECTION).is_none());
        assert_eq!(all["api_keys"]["MOONSHOT_API_KEY"], "k");
    }
}
