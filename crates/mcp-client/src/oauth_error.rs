//! [`OAuthError`]: what failed in an MCP server's OAuth — discovery, authorization, the
//! token exchange, a machine grant, the stored tokens, the credential store, the keyring, the
//! refresh lock or the configuration — in the one line the user reads.
//!
//! Every message names the server where it is known and the fix where there is one; none
//! carries an rmcp type name or a secret. Front ends show it with `Display`; the rmcp
//! credential-store seam (which takes an `AuthError`) gets the same text. A wrapping variant
//! (`Server`, `Grant`) writes its cause into its own line and does not also report it as a
//! `source`, so an error-chain printer cannot show it twice.

use std::path::PathBuf;

/// The keyring service every server's tokens are filed under.
pub const KEYRING_SERVICE: &str = "Open Interpreter MCP Credentials";

/// An OAuth failure of one MCP server, by stage. Its `Display` is the one-line message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    // --- configuration -------------------------------------------------------------------
    /// A variable an `[mcp_servers.<server>.oauth]` key names is set but empty.
    #[error(
        "Environment variable {var} for MCP server '{server}' is empty (it is named by `[mcp_servers.{server}.oauth] {key}`)"
    )]
    EnvVarEmpty {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The `[mcp_servers.<server>.oauth]` key that names it.
        key: String,
        /// The environment variable.
        var: String,
    },
    /// A variable an `[mcp_servers.<server>.oauth]` key names is not set.
    #[error(
        "Environment variable {var} for MCP server '{server}' is not set (it is named by `[mcp_servers.{server}.oauth] {key}`); export {var}=<value> and try again"
    )]
    EnvVarUnset {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The `[mcp_servers.<server>.oauth]` key that names it.
        key: String,
        /// The environment variable.
        var: String,
    },
    /// The `[mcp_servers.<server>.oauth]` settings do not fit together (a key the grant or
    /// the client authentication needs is missing).
    #[error("{0}")]
    Config(String),
    /// A URL (the server's, or the authorization URL) that does not parse.
    #[error("{0}")]
    InvalidUrl(String),

    // --- discovery ---------------------------------------------------------------------------
    /// rmcp's authorization manager could not be set up for the server's URL.
    #[error("cannot prepare OAuth for {url}: {reason}")]
    Prepare {
        /// The server's URL.
        url: String,
        /// Why, in words.
        reason: String,
    },
    /// The authorization-server metadata did not answer in time.
    #[error("OAuth discovery at {url} timed out")]
    DiscoveryTimedOut {
        /// The server's URL.
        url: String,
    },
    /// The authorization-server metadata could not be fetched or read, or is not trusted.
    #[error("{0}")]
    Discovery(String),

    // --- the browser flow -------------------------------------------------------------------
    /// Registration or the authorization request could not be made.
    #[error("{0}")]
    Authorization(String),
    /// The loopback listener for the redirect failed.
    #[error("{0}")]
    Callback(String),
    /// Nobody came back from the browser in time.
    #[error("no OAuth callback within {secs} seconds; run the login again")]
    CallbackTimedOut {
        /// How long the login waited.
        secs: u64,
    },
    /// The provider redirected back with an `error` (the user refused, …).
    #[error("OAuth provider returned `{error}`: {description}")]
    Provider {
        /// The provider's `error` code.
        error: String,
        /// The provider's `error_description`, when it sent one.
        description: String,
    },
    /// The authorization code could not be exchanged for tokens.
    #[error("the OAuth token exchange failed: {0}")]
    TokenExchange(String),
    /// The redirect named another authorization server than the one we sent the user to
    /// (RFC 9207 `iss`): a mix-up, so the code was not exchanged.
    #[error(
        "the OAuth redirect came back from `{received}`, not from the authorization server the login was sent to (`{expected}`); the code was not used (RFC 9207 issuer check). Try the login again; if this repeats, the authorization server is misconfigured or something is impersonating it"
    )]
    IssuerMismatch {
        /// The authorization server the login was sent to.
        expected: String,
        /// The one the redirect names.
        received: String,
    },
    /// The authorization server promised to name itself in the redirect and did not.
    #[error(
        "the OAuth redirect from `{expected}` does not say which authorization server sent it, though its metadata promises it will (RFC 9207 `iss`); the code was not used. Try the login again"
    )]
    IssuerMissing {
        /// The authorization server the login was sent to.
        expected: String,
    },
    /// The server now sends logins to an authorization server other than the one the
    /// pre-registered client belongs to.
    #[error(
        "MCP server `{server}` now uses the authorization server `{named}`, but the `client_id` in [mcp_servers.{server}.oauth] belongs to `{bound}`, so it is not sent there. Register a client with `{named}`, set its `client_id` (and secret), and set `issuer = \"{named}\"` in [mcp_servers.{server}.oauth]"
    )]
    ClientBoundElsewhere {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The authorization server the configured client belongs to.
        bound: String,
        /// The authorization server the MCP server names now.
        named: String,
    },
    /// A new authorization during a session (the browser flow) failed.
    #[error("OAuth authorization failed: {cause}")]
    Authorize {
        /// The failure of the underlying step.
        cause: Box<OAuthError>,
    },
    /// The flow ended without an authorized client.
    #[error("the OAuth login did not complete")]
    Incomplete,

    // --- during a session --------------------------------------------------------------------
    /// The server asked for authorization and nobody can open a browser here.
    #[error(
        "MCP server `{server}` needs authorization (HTTP 401): run `interpreter mcp login {server}`, or set `bearer_token_env_var` in [mcp_servers.{server}]"
    )]
    LoginRequired {
        /// The server's name in `[mcp_servers]`.
        server: String,
    },
    /// The server asked for more scopes and nobody can open a browser here.
    #[error(
        "MCP server `{server}` needs more OAuth scopes (HTTP 403 insufficient_scope: {}): run `interpreter mcp login {server} --scopes {}`",
        .wanted.join(" "),
        .scopes.join(",")
    )]
    ScopesRequired {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// What the challenge asks for.
        wanted: Vec<String>,
        /// What the login should ask for (the configured or granted scopes and the wanted).
        scopes: Vec<String>,
    },
    /// A 403 for scopes that were already granted.
    #[error(
        "MCP server `{server}` refused the request (HTTP 403 insufficient_scope) although the scopes it asks for ({}) were granted; check the account's permissions on the server",
        .wanted.join(" ")
    )]
    ScopeRefused {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The scopes the challenge asks for.
        wanted: Vec<String>,
    },
    /// The per-session cap on authorizations was reached.
    #[error(
        "MCP server `{server}` still refuses access after {limit} authorizations in this session; check the account's permissions, then run `interpreter mcp login {server}`"
    )]
    TooManyAuthorizations {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The cap on authorizations per session.
        limit: u32,
    },
    /// The stored tokens could not give an access token (a refresh failed).
    #[error("the stored OAuth tokens could not be used: {0}")]
    Refresh(String),
    /// The stored tokens could not be loaded into a session.
    #[error(
        "stored OAuth tokens for `{server}` could not be used ({reason}); run `interpreter mcp login {server}`"
    )]
    StoredTokensUnusable {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// Why, in words.
        reason: String,
    },

    // --- machine grants ----------------------------------------------------------------------
    /// The token endpoint could not be reached, refused, or answered without a token.
    #[error("{0}")]
    TokenEndpoint(String),
    /// The private key of `private_key_jwt` is not usable.
    #[error("the private key (private_key_env_var) is not a PEM PKCS#8 P-256 key")]
    BadPrivateKey,
    /// The client assertion could not be signed.
    #[error("signing the client assertion failed{}", .0.as_deref().map(|e| format!(": {e}")).unwrap_or_default())]
    Signing(Option<String>),
    /// A grant (`client_credentials`, `token_exchange`) failed.
    #[error("the {grant} grant failed: {cause}")]
    Grant {
        /// The grant type.
        grant: String,
        /// The failure of the underlying step.
        cause: Box<OAuthError>,
    },

    // --- storage -----------------------------------------------------------------------------
    /// The credential store failed behind rmcp's seam (the store's own line).
    #[error("{0}")]
    Store(String),
    /// The credentials file could not be read or written (the message names the file).
    #[error("{0}")]
    CredentialsFile(String),
    /// The stored entry is not credentials we can read.
    #[error("stored OAuth credentials are unreadable: {0}")]
    Unreadable(String),
    /// The credentials could not be encoded for storage.
    #[error("cannot encode the OAuth credentials: {0}")]
    Encode(String),
    /// The blocking task that reads or writes the store did not finish.
    #[error("the credentials task failed ({0})")]
    Task(String),
    /// One keyring operation failed (in the keyring's words, never the secret).
    #[error("{0}")]
    Keyring(String),
    /// The keyring holds something other than JSON under this server's account.
    #[error(
        "the OS keyring entry `{key}` of service `{KEYRING_SERVICE}` is not JSON; run `interpreter mcp logout {server}` and log in again"
    )]
    KeyringEntryNotJson {
        /// The keyring account (entry) read.
        key: String,
        /// The server's name in `[mcp_servers]`.
        server: String,
    },
    /// `mcp_oauth_credentials_store = "keyring"` and the keyring cannot be used.
    #[error(
        "the OS keyring is not usable ({reason}); unlock or start it (a Secret Service such as GNOME Keyring on the D-Bus session bus), or set mcp_oauth_credentials_store = \"file\" to keep OAuth tokens in {}",
        .file.display()
    )]
    KeyringUnusable {
        /// Why, in words.
        reason: String,
        /// The credentials file `file` mode would use.
        file: PathBuf,
    },
    /// Logout could not reach the keyring under `keyring`.
    #[error(
        "cannot remove the tokens from the OS keyring: {reason}{}",
        if *.file_copy_removed { " (the copy in the credentials file was removed)" } else { "" }
    )]
    KeyringDelete {
        /// Why, in words.
        reason: String,
        /// Whether a copy in the credentials file was removed too.
        file_copy_removed: bool,
    },
    /// The per-server refresh lock could not be taken.
    #[error("{0}")]
    Lock(String),

    // --- plumbing ----------------------------------------------------------------------------
    /// The HTTP client could not be built.
    #[error("{0}")]
    Http(String),
    /// Any of the above, for the server it names (`MCP server `<name>`: …`).
    #[error("MCP server `{server}`: {cause}")]
    Server {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The failure of the underlying step.
        cause: Box<OAuthError>,
    },
}

impl OAuthError {
    /// `self`, prefixed with the server it concerns.
    pub(crate) fn for_server(self, server: &str) -> Self {
        OAuthError::Server {
            server: server.to_string(),
            cause: Box::new(self),
        }
    }

    /// Whether the fix is the user's configuration (a variable or an `oauth` key), not the
    /// server or the network.
    pub fn is_config(&self) -> bool {
        match self {
            OAuthError::EnvVarEmpty { .. }
            | OAuthError::EnvVarUnset { .. }
            | OAuthError::Config(_)
            | OAuthError::BadPrivateKey => true,
            OAuthError::Server { cause, .. }
            | OAuthError::Grant { cause, .. }
            | OAuthError::Authorize { cause } => cause.is_config(),
            _ => false,
        }
    }
}

impl From<oi_config::credentials::CredentialsError> for OAuthError {
    fn from(e: oi_config::credentials::CredentialsError) -> Self {
        OAuthError::CredentialsFile(e.to_string())
    }
}
