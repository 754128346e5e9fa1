//! `[mcp_servers.<name>]` configuration: the typed [`McpServerConfig`] and how it is read.
//!
//! [`parse_mcp_servers`] takes the already-layered `mcp_servers` table (project over user) and
//! returns typed configs, or one error naming the exact element and the fix
//! (`mcp_servers.docs: url is not supported for stdio`, `mcp_servers.docs.args[1]: expected a
//! string, got an integer`). Unknown keys become warnings. The parts: `schema` (the serde shape
//! of a server table), `parse` (transport inference and the checks serde cannot make) and
//! `env_refs` (`${VAR}` and `env:VAR`).
//!
//! Values are kept as written: `${VAR}` references and `env:VAR` values are resolved only when a
//! server is launched ([`expand_env_refs`], [`resolve_env_value`]), so a missing variable fails
//! that one server instead of the whole config, and `interpreter mcp get` shows what the user wrote.

mod env_refs;
mod parse;
mod schema;

pub use env_refs::{EnvRefError, check_env_refs, expand_env_refs, resolve_env_value};
pub(crate) use parse::{IgnoredKey, parse_servers};
pub use parse::{McpConfigError, parse_mcp_servers, parse_server};

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Startup timeout when `startup_timeout_sec` is not set.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Per-call timeout when `tool_timeout_sec` is not set.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// How calls to an MCP tool are approved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum McpApprovalMode {
    /// The active approval policy decides, using the tool's annotations.
    #[default]
    Auto,
    /// Always ask before the tool runs.
    Prompt,
    /// Never ask.
    Approve,
    /// Ask unless the tool is annotated read-only.
    Writes,
}

impl McpApprovalMode {
    /// The mode as written in config.toml.
    pub fn as_str(&self) -> &'static str {
        match self {
            McpApprovalMode::Auto => "auto",
            McpApprovalMode::Prompt => "prompt",
            McpApprovalMode::Approve => "approve",
            McpApprovalMode::Writes => "writes",
        }
    }

    /// The mode written `s` (`"auto"`, `"prompt"`, `"approve"`, `"writes"`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Self::Auto),
            "prompt" => Some(Self::Prompt),
            "approve" => Some(Self::Approve),
            "writes" => Some(Self::Writes),
            _ => None,
        }
    }
}

impl std::fmt::Display for McpApprovalMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a server may ask the session's model to sample (`sampling/createMessage`), and
/// who approves each request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum McpSamplingMode {
    /// Sampling is not offered: the capability is not advertised and requests are refused.
    #[default]
    Off,
    /// Offered; each request asks the user first (denied when nobody can be asked).
    Prompt,
    /// Offered; requests run without asking.
    Approve,
}

impl McpSamplingMode {
    /// The mode as written in config.toml.
    pub fn as_str(&self) -> &'static str {
        match self {
            McpSamplingMode::Off => "off",
            McpSamplingMode::Prompt => "prompt",
            McpSamplingMode::Approve => "approve",
        }
    }

    /// The mode written `s` (`"off"`, `"prompt"`, `"approve"`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "off" => Some(Self::Off),
            "prompt" => Some(Self::Prompt),
            "approve" => Some(Self::Approve),
            _ => None,
        }
    }

    /// Whether the server is offered sampling at all.
    pub fn is_enabled(&self) -> bool {
        *self != McpSamplingMode::Off
    }
}

impl std::fmt::Display for McpSamplingMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which MCP protocol revision a server is spoken to in: `protocol_version = "auto" |
/// "2026-07-28" | "2025-11-25"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum McpProtocolVersion {
    /// Probe with `server/discover` (2026-07-28) and fall back to the `initialize` handshake
    /// (2025-11-25) on a server that does not know it.
    #[default]
    Auto,
    /// 2026-07-28 only: `server/discover`, every request carrying its own `_meta`.
    V2026_07_28,
    /// 2025-11-25 only: the `initialize` handshake (a session), as servers before 2026 speak.
    V2025_11_25,
}

impl McpProtocolVersion {
    /// The value as written in config.toml.
    pub fn as_str(&self) -> &'static str {
        match self {
            McpProtocolVersion::Auto => "auto",
            McpProtocolVersion::V2026_07_28 => "2026-07-28",
            McpProtocolVersion::V2025_11_25 => "2025-11-25",
        }
    }

    /// The value written `s`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Self::Auto),
            "2026-07-28" => Some(Self::V2026_07_28),
            "2025-11-25" => Some(Self::V2025_11_25),
            _ => None,
        }
    }
}

impl std::fmt::Display for McpProtocolVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an `env_vars` entry is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum McpEnvVarSource {
    /// This machine's environment.
    Local,
    /// A remote execution environment (accepted for Codex compatibility; such a server
    /// fails to start because we only run MCP servers locally).
    Remote,
}

impl McpEnvVarSource {
    /// The source as written in config.toml.
    pub fn as_str(&self) -> &'static str {
        match self {
            McpEnvVarSource::Local => "local",
            McpEnvVarSource::Remote => "remote",
        }
    }
}

/// One `env_vars` entry: `"NAME"` or `{ name = "NAME", source = "local" | "remote" }`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct McpEnvVar {
    /// The variable's name.
    pub name: String,
    /// `None` when written as a bare string.
    pub source: Option<McpEnvVarSource>,
}

/// How the client gets its access token from the authorization server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum McpOAuthGrant {
    /// A person signs in through the browser (PKCE); the default.
    #[default]
    AuthorizationCode,
    /// Machine to machine: the client authenticates as itself (a secret or a signed JWT).
    ClientCredentials,
    /// Cross-app access: an identity provider's ID token is exchanged for an ID-JAG
    /// (RFC 8693), which the authorization server turns into an access token (RFC 7523).
    TokenExchange,
}

impl McpOAuthGrant {
    /// The grant as written in config.toml.
    pub fn as_str(&self) -> &'static str {
        match self {
            McpOAuthGrant::AuthorizationCode => "authorization_code",
            McpOAuthGrant::ClientCredentials => "client_credentials",
            McpOAuthGrant::TokenExchange => "token_exchange",
        }
    }

    /// The grant written `s`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "authorization_code" => Some(Self::AuthorizationCode),
            "client_credentials" => Some(Self::ClientCredentials),
            "token_exchange" => Some(Self::TokenExchange),
            _ => None,
        }
    }
}

/// How the client proves its identity at the token endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum McpTokenEndpointAuth {
    /// A public client: only `client_id` is sent.
    None,
    /// `Authorization: Basic` with the client id and secret.
    ClientSecretBasic,
    /// The client id and secret in the form body.
    ClientSecretPost,
    /// A JWT signed with the client's private key (RFC 7523), ES256.
    PrivateKeyJwt,
}

impl McpTokenEndpointAuth {
    /// The method as written in config.toml (and in OAuth metadata).
    pub fn as_str(&self) -> &'static str {
        match self {
            McpTokenEndpointAuth::None => "none",
            McpTokenEndpointAuth::ClientSecretBasic => "client_secret_basic",
            McpTokenEndpointAuth::ClientSecretPost => "client_secret_post",
            McpTokenEndpointAuth::PrivateKeyJwt => "private_key_jwt",
        }
    }

    /// The method written `s`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "none" => Some(Self::None),
            "client_secret_basic" => Some(Self::ClientSecretBasic),
            "client_secret_post" => Some(Self::ClientSecretPost),
            "private_key_jwt" => Some(Self::PrivateKeyJwt),
            _ => None,
        }
    }
}

/// `[mcp_servers.<name>.oauth]`: who the client is and how it gets tokens. Secrets are never
/// written here: `*_env_var` keys name the environment variables that hold them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpOAuthConfig {
    /// A client registered with the authorization server out of band.
    pub client_id: Option<String>,
    /// The authorization server (its `issuer`) that `client_id` is registered with: the
    /// client id and its secret are presented there only. Unset: the authorization server
    /// the client was first used with, as recorded with its tokens.
    pub issuer: Option<String>,
    /// The variable holding that client's secret (a confidential client).
    pub client_secret_env_var: Option<String>,
    /// How to authenticate at the token endpoint; unset: what the server supports.
    pub token_endpoint_auth_method: Option<McpTokenEndpointAuth>,
    /// An HTTPS URL of the client's metadata document, used as the client id where the
    /// authorization server supports Client ID Metadata Documents.
    pub client_metadata_url: Option<String>,
    /// How the access token is obtained.
    pub grant_type: McpOAuthGrant,
    /// The variable holding the PEM private key (PKCS#8, P-256) for `private_key_jwt`.
    pub private_key_env_var: Option<String>,
    /// Token exchange: the identity provider's token endpoint.
    pub idp_token_endpoint: Option<String>,
    /// Token exchange: our client id at the identity provider.
    pub idp_client_id: Option<String>,
    /// Token exchange: the variable holding the identity provider's ID token.
    pub id_token_env_var: Option<String>,
}

/// How to reach the server.
// One per configured server, built once per load: boxing the HTTP variant's OAuth settings
// would only add an indirection to every use.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum McpServerTransportConfig {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio {
        /// The program to start.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Extra variables; a value `env:HOST_VAR` reads the host variable.
        env: BTreeMap<String, String>,
        /// Host variables passed through by name.
        env_vars: Vec<McpEnvVar>,
        /// Working directory; the session cwd when unset.
        cwd: Option<PathBuf>,
    },
    /// MCP streamable HTTP.
    StreamableHttp {
        /// The server's endpoint.
        url: String,
        /// Environment variable whose value is sent as `Authorization: Bearer <value>`.
        bearer_token_env_var: Option<String>,
        /// Static headers.
        http_headers: BTreeMap<String, String>,
        /// Header name → environment variable holding its value.
        env_http_headers: BTreeMap<String, String>,
        /// RFC 8707 `resource` for OAuth.
        oauth_resource: Option<String>,
        /// OAuth scopes to request.
        scopes: Option<Vec<String>>,
        /// `[mcp_servers.<n>.oauth]`: the OAuth client and grant.
        oauth: McpOAuthConfig,
    },
}

impl McpServerTransportConfig {
    /// `"stdio"` or `"streamable_http"`.
    pub fn kind(&self) -> &'static str {
        match self {
            McpServerTransportConfig::Stdio { .. } => "stdio",
            McpServerTransportConfig::StreamableHttp { .. } => "streamable_http",
        }
    }
}

/// Per-tool settings: `[mcp_servers.<n>.tools.<tool>]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpToolConfig {
    /// `None`: the server's `default_tools_approval_mode` applies.
    pub approval_mode: Option<McpApprovalMode>,
}

/// One configured MCP server.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServerConfig {
    /// How to reach the server.
    pub transport: McpServerTransportConfig,
    /// `false`: the server is not started (default `true`).
    pub enabled: bool,
    /// `true`: a server that fails to start fails the session start.
    pub required: bool,
    /// Covers spawn, `initialize` and the first `tools/list`. `None` = [`DEFAULT_STARTUP_TIMEOUT`].
    pub startup_timeout: Option<Duration>,
    /// Per `tools/call`. `None` = [`DEFAULT_TOOL_TIMEOUT`].
    pub tool_timeout: Option<Duration>,
    /// Allow-list of raw tool names (applied first).
    pub enabled_tools: Option<Vec<String>>,
    /// Deny-list of raw tool names (applied after the allow-list).
    pub disabled_tools: Option<Vec<String>>,
    /// The approval mode of tools without their own; `None`: `auto`.
    pub default_tools_approval_mode: Option<McpApprovalMode>,
    /// Per-tool overrides keyed by raw tool name.
    pub tools: BTreeMap<String, McpToolConfig>,
    /// Whether the model may call this server's tools concurrently.
    pub supports_parallel_tool_calls: bool,
    /// `roots = ["..."]`: directories offered to the server as MCP roots, as written (`"."` is
    /// the session's working directory; other relative paths are resolved against it, `~/`
    /// against the home directory). `None`: the `roots` capability is not offered at all, so
    /// servers such as server-filesystem keep serving the directories in their arguments.
    pub roots: Option<Vec<String>>,
    /// `sampling = "off" | "prompt" | "approve"`: whether the server may ask the session's
    /// model to sample, and whether each request asks the user first.
    pub sampling: McpSamplingMode,
    /// `protocol_version = "auto" | "2026-07-28" | "2025-11-25"`: the protocol revision the
    /// server is spoken to in (default `auto`: probe, then fall back).
    pub protocol_version: McpProtocolVersion,
    /// For a server an accepted project config adds: the files its command line names, pinned
    /// to their accepted content. The launch checks them first and refuses a changed one
    /// (`oi_config::launch_pins`). Never read from TOML.
    pub launch_pins: Option<crate::launch_pins::LaunchPins>,
}

impl McpServerConfig {
    /// A stdio server with every other field at its default.
    pub fn stdio(command: impl Into<String>, args: Vec<String>) -> Self {
        Self::with_transport(McpServerTransportConfig::Stdio {
            command: command.into(),
            args,
            env: BTreeMap::new(),
            env_vars: Vec::new(),
            cwd: None,
        })
    }

    /// A streamable HTTP server with every other field at its default.
    pub fn http(url: impl Into<String>) -> Self {
        Self::with_transport(McpServerTransportConfig::StreamableHttp {
            url: url.into(),
            bearer_token_env_var: None,
            http_headers: BTreeMap::new(),
            env_http_headers: BTreeMap::new(),
            oauth_resource: None,
            scopes: None,
            oauth: McpOAuthConfig::default(),
        })
    }

    /// A server reaching `transport`, with every other field at its default.
    pub fn with_transport(transport: McpServerTransportConfig) -> Self {
        Self {
            transport,
            enabled: true,
            required: false,
            startup_timeout: None,
            tool_timeout: None,
            enabled_tools: None,
            disabled_tools: None,
            default_tools_approval_mode: None,
            tools: BTreeMap::new(),
            supports_parallel_tool_calls: false,
            roots: None,
            sampling: McpSamplingMode::Off,
            protocol_version: McpProtocolVersion::Auto,
            launch_pins: None,
        }
    }

    /// The configured roots as absolute paths (see [`McpServerConfig::roots`]).
    pub fn resolved_roots(&self, session_cwd: &std::path::Path) -> Vec<PathBuf> {
        let Some(roots) = &self.roots else {
            return Vec::new();
        };
        roots
            .iter()
            .map(|r| {
                if r == "." {
                    return session_cwd.to_path_buf();
                }
                if let Some(rest) = r.strip_prefix("~/")
                    && let Some(home) = dirs::home_dir()
                {
                    return home.join(rest);
                }
                let p = PathBuf::from(r);
                if p.is_absolute() {
                    p
                } else {
                    session_cwd.join(p)
                }
            })
            .collect()
    }

    /// `startup_timeout_sec`, else [`DEFAULT_STARTUP_TIMEOUT`].
    pub fn startup_timeout_or_default(&self) -> Duration {
        self.startup_timeout.unwrap_or(DEFAULT_STARTUP_TIMEOUT)
    }

    /// `tool_timeout_sec`, else [`DEFAULT_TOOL_TIMEOUT`].
    pub fn tool_timeout_or_default(&self) -> Duration {
        self.tool_timeout.unwrap_or(DEFAULT_TOOL_TIMEOUT)
    }

    /// Allow-list first, then deny-list, on the raw tool name.
    pub fn is_tool_enabled(&self, tool: &str) -> bool {
        let allowed = self
            .enabled_tools
            .as_ref()
            .is_none_or(|list| list.iter().any(|t| t == tool));
        let denied = self
            .disabled_tools
            .as_ref()
            .is_some_and(|list| list.iter().any(|t| t == tool));
        allowed && !denied
    }

    /// Per-tool override, else the server default, else `auto`.
    pub fn approval_mode_for(&self, tool: &str) -> McpApprovalMode {
        self.tools
            .get(tool)
            .and_then(|t| t.approval_mode)
            .or(self.default_tools_approval_mode)
            .unwrap_or_default()
    }
}

/// Is `name` a valid server name? Printable ASCII without spaces or slashes: besides the usual
/// `[a-zA-Z0-9_-]`, a quoted TOML key such as `[mcp_servers."a.b"]` is accepted (as Codex
/// does); tool names sanitize it (`mcp__a_b__tool`).
pub fn is_valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_graphic() && c != '/' && c != '\\')
}

#[cfg(test)]
mod tests;

/// The keys of a `[mcp_servers.<name>]` table, as the schema reads them (for the test that
/// every key has a project rule, `project_keys`).
#[cfg(test)]
pub(crate) fn server_table_keys() -> Vec<&'static str> {
    crate::serde_fields::fields_of::<schema::McpServerToml>()
}
