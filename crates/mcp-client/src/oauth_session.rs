//! OAuth during a session: an HTTP client that answers the server's challenges as they come.
//!
//! Every request carries the current access token, if there is one. A 401 first refreshes a
//! stored token; if that is not enough, or a 403 `insufficient_scope` asks for more than was
//! granted, the client authorizes again — seeded with the challenge itself, so the server's
//! `resource_metadata` and `scope` are used as given — and retries the request. How it
//! authorizes depends on the config: a machine grant (client credentials, token exchange)
//! runs at once; the browser flow runs only when the front end can show a browser
//! ([`OAuthBrowser`]); otherwise the request fails with one line naming the server and the
//! `interpreter mcp login` command that fixes it. Authorizations are capped per session, a
//! refreshed token that is refused again leads to an authorization rather than another
//! refresh, and a scope already granted is not asked for again, so a server that keeps
//! refusing cannot loop us.
//!
//! A 401 whose challenge points at another authorization server than the one the tokens came
//! from is a migration: the old tokens are dropped (never refreshed at, or sent to, the old
//! server again), a dynamically registered client registers anew with the new server, and a
//! pre-registered client is refused there unless `oauth.issuer` names it.

use crate::oauth::{self, LoginOptions};
use crate::oauth_error::OAuthError;
use crate::oauth_grants::{self, ClientAuth, IdentityProvider, TokenRequest};
use oi_config::mcp::{McpOAuthConfig, McpOAuthGrant};
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, CredentialStore, StoredCredentials, WWWAuthenticateParams,
};
use rmcp::transport::streamable_http_client::StreamableHttpError;
use std::path::PathBuf;
use std::sync::Arc;

/// How many times one session may authorize (the first login, then step-ups).
const MAX_AUTHORIZATIONS: u32 = 3;
/// Marks our own one-line messages inside rmcp's error texts, so the caller can show them
/// alone (see [`user_message`]).
const NOTE: &str = "[oi-oauth] ";

/// Shows the user an authorization URL: opens a browser, prints it. A front end that
/// cannot do that (a headless run) passes none, and authorization fails with the fix.
pub trait OAuthBrowser: Send + Sync {
    /// Shows the user `url` to authorize `server`.
    fn open(&self, server: &str, url: &str);
}

/// Everything a session needs to authorize against one server, resolved at connect time.
pub struct OAuthSettings {
    /// The server's name in `[mcp_servers]`.
    pub server: String,
    /// The server's URL.
    pub url: String,
    /// The Open Interpreter home (where tokens are kept).
    pub home: PathBuf,
    /// The server's `[mcp_servers.<name>.oauth]` table.
    pub config: McpOAuthConfig,
    /// Scopes from the config (`scopes`); empty: as the server asks.
    pub scopes: Vec<String>,
    /// RFC 8707 resource from the config (`oauth_resource`).
    pub resource: Option<String>,
    /// Shows authorization URLs; `None` (headless): authorization fails with the login command.
    pub browser: Option<Arc<dyn OAuthBrowser>>,
    /// Where tokens are read and saved (`mcp_oauth_credentials_store`).
    pub store: crate::oauth_store::OAuthCredentialsStoreMode,
}

#[derive(Default)]
struct AuthState {
    /// Tokens from the browser flow or the store, refreshed by rmcp.
    manager: Option<AuthorizationManager>,
    /// A token from a machine grant (these issue no refresh token; a 401 grants again).
    machine_token: Option<String>,
    /// The issuer of the authorization server the current tokens came from, if known.
    issuer: Option<String>,
    /// The token a refresh after a 401 produced: refused again, it is not refreshed again.
    refreshed: Option<String>,
    /// What the last authorization asked for (or the stored tokens were granted).
    granted: Vec<String>,
    authorizations: u32,
}

/// Tokens found in the store for a session to start with.
pub struct StoredAuthorization {
    manager: AuthorizationManager,
    issuer: Option<String>,
    scopes: Vec<String>,
}

/// Shared by every clone of the client (rmcp clones it per request).
pub struct Authorizer {
    settings: OAuthSettings,
    state: tokio::sync::Mutex<AuthState>,
}

impl Authorizer {
    /// An authorizer starting from the stored tokens, if there are some.
    pub fn new(settings: OAuthSettings, stored: Option<StoredAuthorization>) -> Arc<Self> {
        let state = match stored {
            Some(s) => AuthState {
                manager: Some(s.manager),
                issuer: s.issuer,
                granted: s.scopes,
                ..Default::default()
            },
            None => AuthState::default(),
        };
        Arc::new(Self {
            settings,
            state: tokio::sync::Mutex::new(state),
        })
    }

    /// The token to send now, if any (refreshing an expired one). Tokens that can no longer
    /// be refreshed (the authorization server refused, or is gone) are dropped: the request
    /// goes without, and the server's challenge starts a new authorization.
    async fn token(&self) -> Result<Option<String>, OAuthError> {
        let mut state = self.state.lock().await;
        match current_token(&state).await {
            Err(OAuthError::Refresh(reason)) => {
                tracing::info!(
                    "MCP server `{}`: the stored OAuth tokens could not be refreshed ({reason}); authorizing again when the server asks",
                    self.settings.server
                );
                state.manager = None;
                Ok(None)
            }
            other => other,
        }
    }

    /// The issuer of the authorization server a challenge points at now, if it can be found
    /// (a 401 is the one moment a server tells us it moved).
    async fn named_issuer(&self, challenge: &str) -> Option<String> {
        let manager = AuthorizationManager::new(self.settings.url.as_str())
            .await
            .ok()?;
        let resolution = manager
            .resolve_metadata_from_challenge(Some(challenge))
            .await
            .ok()?;
        resolution
            .source
            .is_discovered()
            .then_some(resolution.metadata.issuer)
            .flatten()
    }

    /// The server now names another authorization server than the tokens' own: forget them
    /// (here and in the store) so nothing of the old server's is used again.
    async fn forget_other_issuer(&self, state: &mut AuthState, old: &str, new: &str) {
        let s = &self.settings;
        tracing::info!(
            "MCP server `{}` moved from the authorization server `{old}` to `{new}`: its tokens are dropped and the client registers anew",
            s.server
        );
        state.manager = None;
        state.machine_token = None;
        state.refreshed = None;
        state.granted.clear();
        state.issuer = None;
        // A pre-registered client's stored entry is its binding to the old server: it stays,
        // so the client keeps being refused at the new one until the user says otherwise.
        if s.config.client_id.is_none() {
            let store =
                crate::oauth_store::OAuthTokenStore::new(&s.home, &s.server, &s.url, s.store);
            let _ = tokio::task::spawn_blocking(move || store.delete()).await;
        }
    }

    /// A new token after the server refused `sent` with `challenge` (`forbidden`: a 403).
    async fn answer(
        &self,
        sent: Option<&str>,
        challenge: &str,
        forbidden: bool,
    ) -> Result<String, OAuthError> {
        let mut state = self.state.lock().await;
        let server = &self.settings.server;
        // Another request may have re-authorized while this one waited for the lock.
        if let Ok(Some(now)) = current_token(&state).await
            && Some(now.as_str()) != sent
        {
            return Ok(now);
        }
        let base = url::Url::parse(&self.settings.url).map_err(|e| {
            OAuthError::InvalidUrl(format!("the url is not a URL: {e}")).for_server(server)
        })?;
        let params = WWWAuthenticateParams::parse(challenge, &base);
        let wanted: Vec<String> = params
            .scope
            .as_deref()
            .map(|s| s.split_whitespace().map(str::to_string).collect())
            .unwrap_or_default();
        if !forbidden
            && sent.is_some()
            && let Some(old) = state.issuer.clone()
            && let Some(new) = self.named_issuer(challenge).await
            && !oauth::same_issuer(&old, &new)
        {
            self.forget_other_issuer(&mut state, &old, &new).await;
        }
        let refused_after_refresh = sent.is_some() && state.refreshed.as_deref() == sent;
        if !forbidden
            && sent.is_some()
            && !refused_after_refresh
            && let Some(manager) = &state.manager
            && manager.refresh_token().await.is_ok()
            && let Ok(fresh) = manager.get_access_token().await
            && Some(fresh.as_str()) != sent
        {
            state.refreshed = Some(fresh.clone());
            return Ok(fresh);
        }
        let mut scopes = self.settings.scopes.clone();
        if forbidden {
            if !wanted.iter().any(|s| !state.granted.contains(s)) && state.authorizations > 0 {
                return Err(OAuthError::ScopeRefused {
                    server: server.clone(),
                    wanted,
                });
            }
            scopes.extend(state.granted.iter().cloned());
        }
        if !scopes.is_empty() || forbidden {
            scopes.extend(wanted.iter().cloned());
            let mut seen = std::collections::HashSet::new();
            scopes.retain(|s| seen.insert(s.clone()));
        }
        if state.authorizations >= MAX_AUTHORIZATIONS {
            return Err(OAuthError::TooManyAuthorizations {
                server: server.clone(),
                limit: MAX_AUTHORIZATIONS,
            });
        }
        state.authorizations += 1;
        let requested = if scopes.is_empty() {
            wanted.clone()
        } else {
            scopes.clone()
        };
        let token = match self.settings.config.grant_type {
            McpOAuthGrant::AuthorizationCode => {
                let Some(browser) = self.settings.browser.clone() else {
                    return Err(self.login_hint(forbidden, &scopes, &wanted));
                };
                let mut opts = login_options(&self.settings)?;
                opts.scopes = scopes;
                opts.challenge = Some(challenge.to_string());
                let authorized = oauth::authorize(opts, |url| browser.open(server, url))
                    .await
                    .map_err(|e| authorize_failed(e, server))?;
                let token = authorized.manager.get_access_token().await.map_err(|e| {
                    OAuthError::Authorization(format!("no access token after authorizing: {e}"))
                        .for_server(server)
                })?;
                state.manager = Some(authorized.manager);
                state.issuer = authorized.issuer;
                token
            }
            McpOAuthGrant::ClientCredentials | McpOAuthGrant::TokenExchange => {
                let granted = self.machine_grant(Some(challenge), &scopes).await?;
                state.machine_token = Some(granted.token.clone());
                state.issuer = granted.issuer;
                granted.token
            }
        };
        state.refreshed = None;
        state.granted = requested;
        Ok(token)
    }

    /// The headless answer: one line with the command that authorizes.
    fn login_hint(&self, forbidden: bool, scopes: &[String], wanted: &[String]) -> OAuthError {
        let server = self.settings.server.clone();
        if forbidden {
            let all = if scopes.is_empty() { wanted } else { scopes };
            OAuthError::ScopesRequired {
                server,
                wanted: wanted.to_vec(),
                scopes: all.to_vec(),
            }
        } else {
            OAuthError::LoginRequired { server }
        }
    }

    /// Client credentials or token exchange: discover the token endpoint from the challenge,
    /// then grant.
    async fn machine_grant(
        &self,
        challenge: Option<&str>,
        scopes: &[String],
    ) -> Result<MachineGrant, OAuthError> {
        machine_grant(&self.settings, challenge, scopes).await
    }
}

/// A token from a machine grant and the authorization server that issued it.
struct MachineGrant {
    token: String,
    issuer: Option<String>,
}

/// The login options of a session's settings (who the client is, where tokens go).
fn login_options(s: &OAuthSettings) -> Result<LoginOptions, OAuthError> {
    let mut opts = LoginOptions::new(&s.server, &s.url, &s.home);
    opts.store = s.store;
    opts.client_id = s.config.client_id.clone();
    opts.client_issuer = s.config.issuer.clone();
    opts.client_secret = oauth::client_secret(&s.server, &s.config)?;
    opts.client_metadata_url = s.config.client_metadata_url.clone();
    opts.resource = s.resource.clone();
    Ok(opts)
}

/// An authorization that failed, for the server; a refused client binding is already a
/// whole line of its own.
fn authorize_failed(e: OAuthError, server: &str) -> OAuthError {
    match e {
        OAuthError::ClientBoundElsewhere { .. } => e,
        other => OAuthError::Authorize {
            cause: Box::new(other),
        }
        .for_server(server),
    }
}

/// Runs the configured machine grant once (what `interpreter mcp login` does for a server
/// whose `grant_type` needs no browser), seeded with the server's challenge if it gave one.
/// Returns the issuer of the authorization server that granted a token; nothing is stored
/// but which authorization server the client was used with.
pub async fn check_machine_grant(
    settings: &OAuthSettings,
    challenge: Option<&str>,
) -> Result<Option<String>, OAuthError> {
    let scopes = settings.scopes.clone();
    machine_grant(settings, challenge, &scopes)
        .await
        .map(|g| g.issuer)
}

/// Client credentials or token exchange: discover the token endpoint (from the challenge
/// when there is one), check the client belongs to that authorization server, grant, and
/// record which server the client was used with.
async fn machine_grant(
    s: &OAuthSettings,
    challenge: Option<&str>,
    scopes: &[String],
) -> Result<MachineGrant, OAuthError> {
    let server = &s.server;
    let fail = |e: OAuthError| e.for_server(server);
    let manager = AuthorizationManager::new(s.url.as_str())
        .await
        .map_err(|e| fail(OAuthError::Discovery(format!("cannot prepare OAuth: {e}"))))?;
    let resolution = manager
        .resolve_metadata_from_challenge(challenge)
        .await
        .map_err(|e| {
            fail(OAuthError::Discovery(format!(
                "OAuth discovery failed: {e}"
            )))
        })?;
    let metadata = resolution.metadata;
    let store = crate::oauth_store::OAuthTokenStore::new(&s.home, &s.server, &s.url, s.store);
    oauth::check_client_binding(&login_options(s)?, &store, metadata.issuer.as_deref()).await?;
    let supported: Vec<String> = metadata
        .additional_fields
        .get("token_endpoint_auth_methods_supported")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();
    let client_id = s.config.client_id.clone().ok_or_else(|| {
        fail(OAuthError::Config(format!(
            "`[mcp_servers.{server}.oauth] client_id` is required for grant_type = \"{}\"",
            s.config.grant_type.as_str()
        )))
    })?;
    let secret = oauth::client_secret(server, &s.config)?;
    let key = oauth::env_secret(
        server,
        "private_key_env_var",
        s.config.private_key_env_var.as_deref(),
    )?;
    let auth = ClientAuth::choose(
        s.config.token_endpoint_auth_method,
        &supported,
        client_id,
        secret,
        key,
    )
    .map_err(|e| {
        fail(OAuthError::Config(format!(
            "[mcp_servers.{server}.oauth] {e}"
        )))
    })?;
    let http = crate::http::http_client().map_err(|e| OAuthError::Http(e.to_string()))?;
    let issuer = metadata
        .issuer
        .clone()
        .unwrap_or_else(|| metadata.token_endpoint.clone());
    let resource = s.resource.clone().unwrap_or_else(|| s.url.clone());
    let request = TokenRequest {
        http: &http,
        token_endpoint: &metadata.token_endpoint,
        issuer: &issuer,
        resource: &resource,
        scopes,
    };
    let result = match s.config.grant_type {
        McpOAuthGrant::TokenExchange => {
            let id_token = oauth::env_secret(
                server,
                "id_token_env_var",
                s.config.id_token_env_var.as_deref(),
            )?
            .ok_or_else(|| {
                fail(OAuthError::Config(format!(
                    "`[mcp_servers.{server}.oauth] id_token_env_var` is required for grant_type = \"token_exchange\""
                )))
            })?;
            let idp = IdentityProvider {
                token_endpoint: s.config.idp_token_endpoint.as_deref().unwrap_or_default(),
                client_id: s.config.idp_client_id.as_deref().unwrap_or_default(),
                id_token: &id_token,
            };
            oauth_grants::token_exchange(&request, &idp, &auth).await
        }
        _ => oauth_grants::client_credentials(&request, &auth).await,
    };
    let token = result.map_err(|e| {
        fail(OAuthError::Grant {
            grant: s.config.grant_type.as_str().to_string(),
            cause: Box::new(e),
        })
    })?;
    record_binding(&store, s, metadata.issuer.as_deref()).await;
    Ok(MachineGrant {
        token,
        issuer: metadata.issuer,
    })
}

/// Remembers which authorization server a machine client was used with (an entry with the
/// client id and the issuer, no token: machine tokens are not kept), unless tokens are stored
/// there. A later change of server is then refused like a browser client's.
async fn record_binding(
    store: &crate::oauth_store::OAuthTokenStore,
    s: &OAuthSettings,
    issuer: Option<&str>,
) {
    let (Some(client_id), Some(issuer)) = (&s.config.client_id, issuer) else {
        return;
    };
    if let Ok(Some((stored, _))) = store.load_entry().await
        && (stored.token_response.is_some()
            || (&stored.client_id == client_id && stored.issuer.as_deref() == Some(issuer)))
    {
        return;
    }
    let binding = StoredCredentials::new(client_id.clone(), None, Vec::new(), None)
        .with_issuer(Some(issuer.to_string()));
    if let Err(e) = CredentialStore::save(store, binding).await {
        tracing::warn!(
            "MCP server `{}`: could not record which authorization server the client was used with: {e}",
            s.server
        );
    }
}

async fn current_token(state: &AuthState) -> Result<Option<String>, OAuthError> {
    if let Some(token) = &state.machine_token {
        return Ok(Some(token.clone()));
    }
    match &state.manager {
        None => Ok(None),
        Some(manager) => match manager.get_access_token().await {
            Ok(token) => Ok(Some(token)),
            Err(AuthError::AuthorizationRequired) => Ok(None),
            Err(e) => Err(OAuthError::Refresh(e.to_string())),
        },
    }
}

/// The stored tokens of `server`, as a manager that refreshes them; `None` when no tokens
/// are stored. Tokens saved with their authorization server's metadata are used without
/// discovering it again (the server may announce it only in a 401 challenge); older ones are
/// discovered as before, and dropped if the server names another authorization server now.
pub async fn stored_manager(
    home: &std::path::Path,
    server: &str,
    url: &str,
    store_mode: crate::oauth_store::OAuthCredentialsStoreMode,
) -> Result<Option<StoredAuthorization>, OAuthError> {
    let store = crate::oauth_store::OAuthTokenStore::new(home, server, url, store_mode);
    let Some((stored, metadata)) = store
        .load_entry()
        .await
        .map_err(|e| OAuthError::Store(e.to_string()))?
    else {
        return Ok(None);
    };
    if stored.token_response.is_none() {
        return Ok(None);
    }
    let mut manager = oauth::manager_for(url).await?;
    manager.set_credential_store(store);
    let issuer = stored
        .issuer
        .clone()
        .or_else(|| metadata.as_ref().and_then(|m| m.issuer.clone()));
    if let Some(metadata) = metadata {
        manager.set_metadata(metadata);
    }
    match manager.initialize_from_store().await {
        Ok(true) => Ok(Some(StoredAuthorization {
            manager,
            issuer,
            scopes: stored.granted_scopes,
        })),
        Ok(false) => Ok(None),
        Err(e) => Err(OAuthError::StoredTokensUnusable {
            server: server.to_string(),
            reason: e.to_string(),
        }),
    }
}

/// Our one-line message inside an rmcp error text, if the error is ours.
pub fn user_message(text: &str) -> Option<String> {
    let at = text.find(NOTE)?;
    Some(text[at + NOTE.len()..].trim().to_string())
}

fn ours<E: std::error::Error + Send + Sync + 'static>(
    message: OAuthError,
) -> StreamableHttpError<E> {
    // rmcp carries it as text; `user_message` finds it again at the display edge.
    StreamableHttpError::Auth(AuthError::InternalError(format!("{NOTE}{message}")))
}

/// The HTTP client of an OAuth-capable connection: `inner` plus the [`Authorizer`].
#[derive(Clone)]
pub struct OAuthHttpClient<C> {
    inner: C,
    auth: Arc<Authorizer>,
}

impl<C> OAuthHttpClient<C> {
    /// `inner`, authorizing its requests through `auth`.
    pub fn new(inner: C, auth: Arc<Authorizer>) -> Self {
        Self { inner, auth }
    }

    /// Run `call` with the current token; on a challenge, authorize and run it again (as many
    /// times as the authorizer allows).
    async fn with_token<T, E, F, Fut>(&self, call: F) -> Result<T, StreamableHttpError<E>>
    where
        E: std::error::Error + Send + Sync + 'static,
        F: Fn(Option<String>) -> Fut,
        Fut: Future<Output = Result<T, StreamableHttpError<E>>>,
    {
        let mut token = self.auth.token().await.map_err(ours)?;
        loop {
            let (challenge, forbidden) = match call(token.clone()).await {
                Err(StreamableHttpError::AuthRequired(c)) => (c.www_authenticate_header, false),
                Err(StreamableHttpError::InsufficientScope(c)) => (c.www_authenticate_header, true),
                other => return other,
            };
            let fresh = self
                .auth
                .answer(token.as_deref(), &challenge, forbidden)
                .await
                .map_err(ours)?;
            token = Some(fresh);
        }
    }
}

mod client {
    use super::OAuthHttpClient;
    use futures::stream::BoxStream;
    use reqwest::header::{HeaderName, HeaderValue};
    use rmcp::model::ClientJsonRpcMessage;
    use rmcp::transport::streamable_http_client::{
        SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
        StreamableHttpResponseLimits,
    };
    use sse_stream::Sse;
    use std::collections::HashMap;
    use std::sync::Arc;

    // The token argument rmcp passes is ignored: the authorizer owns the token.
    impl<C: StreamableHttpClient + Sync> StreamableHttpClient for OAuthHttpClient<C> {
        type Error = C::Error;

        async fn post_message(
            &self,
            uri: Arc<str>,
            message: ClientJsonRpcMessage,
            session_id: Option<Arc<str>>,
            _auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
            self.with_token(|token| {
                self.inner.post_message(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token,
                    custom_headers.clone(),
                )
            })
            .await
        }

        async fn post_message_with_max_sse_event_size(
            &self,
            uri: Arc<str>,
            message: ClientJsonRpcMessage,
            session_id: Option<Arc<str>>,
            _auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
            max_sse_event_size: usize,
        ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
            self.with_token(|token| {
                self.inner.post_message_with_max_sse_event_size(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token,
                    custom_headers.clone(),
                    max_sse_event_size,
                )
            })
            .await
        }

        async fn post_message_with_response_limits(
            &self,
            uri: Arc<str>,
            message: ClientJsonRpcMessage,
            session_id: Option<Arc<str>>,
            _auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
            limits: StreamableHttpResponseLimits,
        ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
            self.with_token(|token| {
                self.inner.post_message_with_response_limits(
                    uri.clone(),
                    message.clone(),
                    session_id.clone(),
                    token,
                    custom_headers.clone(),
                    limits,
                )
            })
            .await
        }

        async fn delete_session(
            &self,
            uri: Arc<str>,
            session_id: Arc<str>,
            _auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Result<(), StreamableHttpError<Self::Error>> {
            let token = self.auth.token().await.ok().flatten();
            self.inner
                .delete_session(uri, session_id, token, custom_headers)
                .await
        }

        async fn get_stream(
            &self,
            uri: Arc<str>,
            session_id: Option<Arc<str>>,
            last_event_id: Option<String>,
            _auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
        ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>>
        {
            self.with_token(|token| {
                self.inner.get_stream(
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    token,
                    custom_headers.clone(),
                )
            })
            .await
        }

        async fn get_stream_with_max_sse_event_size(
            &self,
            uri: Arc<str>,
            session_id: Option<Arc<str>>,
            last_event_id: Option<String>,
            _auth_header: Option<String>,
            custom_headers: HashMap<HeaderName, HeaderValue>,
            max_sse_event_size: usize,
        ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>>
        {
            self.with_token(|token| {
                self.inner.get_stream_with_max_sse_event_size(
                    uri.clone(),
                    session_id.clone(),
                    last_event_id.clone(),
                    token,
                    custom_headers.clone(),
                    max_sse_event_size,
                )
            })
            .await
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn authorizer() -> Arc<Authorizer> {
        Authorizer::new(
            OAuthSettings {
                server: "docs".into(),
                url: "https://docs.example.com/mcp".into(),
                home: PathBuf::from("/nonexistent"),
                config: McpOAuthConfig::default(),
                scopes: vec![],
                resource: None,
                browser: None,
                store: crate::oauth_store::OAuthCredentialsStoreMode::File,
            },
            None,
        )
    }

    #[tokio::test]
    async fn without_a_browser_a_step_up_names_the_login_command_and_its_scopes() {
        let auth = authorizer();
        let e = auth
            .answer(
                Some("old"),
                r#"Bearer error="insufficient_scope", scope="files:read files:write""#,
                true,
            )
            .await
            .unwrap_err();
        assert!(matches!(e, OAuthError::ScopesRequired { .. }), "{e:?}");
        assert_eq!(
            e.to_string(),
            "MCP server `docs` needs more OAuth scopes (HTTP 403 insufficient_scope: files:read files:write): run `interpreter mcp login docs --scopes files:read,files:write`"
        );
        let e = auth.answer(None, "Bearer", false).await.unwrap_err();
        assert!(matches!(e, OAuthError::LoginRequired { .. }), "{e:?}");
        let e = e.to_string();
        assert!(
            e.starts_with(
                "MCP server `docs` needs authorization (HTTP 401): run `interpreter mcp login docs`"
            ),
            "{e}"
        );
    }

    #[test]
    fn our_lines_are_found_inside_rmcp_error_texts() {
        let err: StreamableHttpError<std::io::Error> =
            ours(OAuthError::Config("MCP server `docs` needs more".into()));
        let text =
            format!("Send message error Transport [rmcp::transport::worker::X] error: {err}");
        assert_eq!(
            user_message(&text).as_deref(),
            Some("MCP server `docs` needs more")
        );
        assert_eq!(user_message("tools/list failed: boom"), None);
    }
}
