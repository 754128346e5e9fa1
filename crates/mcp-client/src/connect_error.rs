//! [`ConnectError`]: why a server's session did not start — its config, its process, the
//! HTTP client, its credentials, OAuth, the handshake — and the startup message built from
//! it (the process's exit and stderr, or the step that ran out of time and the config line
//! that gives it more).
//!
//! `Display` is the message the manager records for the server (its `Failed` state, the
//! startup event, the failure cache); no rmcp type name is in it.

use crate::oauth_error::OAuthError;
use std::time::Duration;

/// The HTTP client of a connection could not be built.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot create the HTTP client: {0}")]
pub(crate) struct HttpClientError(pub String);

/// A server's session that did not start. `Failed` and `TimedOut` are what `establish`
/// returns; the other variants are the causes inside `Failed`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum ConnectError {
    /// The server's table cannot be used as written (an unset variable it names, a `${VAR}`
    /// reference, a `cwd` that does not exist, …).
    #[error("{0}")]
    Config(String),
    /// The program could not be started.
    #[error("{0}")]
    Spawn(String),
    #[error(transparent)]
    HttpClient(#[from] HttpClientError),
    /// The server refused the credentials (HTTP 401/403): which ones, and the fix.
    #[error("{0}")]
    Refused(String),
    /// OAuth (the stored tokens, or the line of a challenge nobody could answer).
    #[error(transparent)]
    OAuth(#[from] OAuthError),
    /// Our OAuth line, found inside rmcp's error text.
    #[error("{0}")]
    OAuthLine(String),
    /// The `initialize` handshake or `tools/list` failed: the server's answer, or the
    /// connection or HTTP failure, in our words.
    #[error("{0}")]
    Handshake(String),
    /// A stdio server's connection ended during `during` (its output closed, or our write
    /// found the pipe closed) and no exit of its process was seen.
    #[error("the server closed its connection during {during}")]
    Lost { during: &'static str },
    /// A stdio server's process exited during `during`: that is the failure.
    #[error("the server process exited during {during} ({exit})")]
    Exited { during: &'static str, exit: String },
    /// The start failed: the cause and what the process wrote to stderr.
    #[error(
        "MCP client for `{server}` failed to start: {cause}{}",
        stderr_note(.stderr)
    )]
    Failed {
        server: String,
        cause: Box<ConnectError>,
        /// The tail of the process's stderr (empty for HTTP).
        stderr: String,
    },
    /// The start ran out of `startup_timeout_sec` during `during`.
    #[error(
        "MCP client for `{server}` timed out after {} seconds during {during}. Add or raise `startup_timeout_sec` in your config.toml:\n[mcp_servers.{server}]\nstartup_timeout_sec = {}{}",
        .timeout.as_secs_f64(),
        suggested_timeout(*.timeout),
        stderr_note(.stderr)
    )]
    TimedOut {
        server: String,
        timeout: Duration,
        during: String,
        stderr: String,
    },
}

fn stderr_note(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!("\nServer stderr:\n{stderr}")
    }
}

/// Twice the timeout that ran out, at least 10 s.
fn suggested_timeout(timeout: Duration) -> f64 {
    (timeout.as_secs_f64() * 2.0).ceil().max(10.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn startup_messages_keep_their_wording() {
        let failed = ConnectError::Failed {
            server: "fx".into(),
            cause: Box::new(ConnectError::Exited {
                during: "the initialize handshake",
                exit: "exit code 7".into(),
            }),
            stderr: "fatal: API_KEY is not set".into(),
        };
        assert_eq!(
            failed.to_string(),
            "MCP client for `fx` failed to start: the server process exited during the initialize handshake (exit code 7)\nServer stderr:\nfatal: API_KEY is not set"
        );
        let quiet = ConnectError::Failed {
            server: "web".into(),
            cause: Box::new(ConnectError::OAuth(OAuthError::LoginRequired {
                server: "web".into(),
            })),
            stderr: String::new(),
        };
        assert_eq!(
            quiet.to_string(),
            "MCP client for `web` failed to start: MCP server `web` needs authorization (HTTP 401): run `interpreter mcp login web`, or set `bearer_token_env_var` in [mcp_servers.web]"
        );
        let slow = ConnectError::TimedOut {
            server: "fx".into(),
            timeout: Duration::from_secs(3),
            during: "initialize".into(),
            stderr: String::new(),
        };
        assert_eq!(
            slow.to_string(),
            "MCP client for `fx` timed out after 3 seconds during initialize. Add or raise `startup_timeout_sec` in your config.toml:\n[mcp_servers.fx]\nstartup_timeout_sec = 10"
        );
    }
}
