//! The challenge `mcp login` starts from: the `WWW-Authenticate` header a server answers a
//! client without credentials with, which names where its metadata is and the scope it
//! wants — the only place some servers announce them.
//!
//! The server is asked as a session would ask it, in its own era: the same opening as a
//! session's ([`crate::protocol::Opening`] from its `protocol_version`: `server/discover` with
//! 2026-07-28's `_meta` and headers, falling back to `initialize`), through rmcp, then (a
//! server may let the opening through and guard the rest) `tools/list`. A modern-only server
//! that checks the version, the `_meta` or the `Mcp-Method` header before it checks
//! credentials would refuse a request of the older era with -32022 or -32020 and never show
//! its challenge.

use crate::oauth_error::OAuthError;
use crate::protocol::Opening;
use crate::wire_error::{self, WireFault};
use rmcp::model::ClientConfig;
use rmcp::service::{ClientInitializeError, ClientServiceExt};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use std::time::Duration;

/// How long the opening may take: a probe, and `initialize` after it.
const OPENING_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the `tools/list` after an unchallenged opening may take.
const LIST_TIMEOUT: Duration = Duration::from_secs(5);

/// The client a probe opens a session as: it offers nothing and answers nothing.
struct ProbeClient;

impl rmcp::ClientHandler for ProbeClient {
    fn get_info(&self) -> ClientConfig {
        crate::handler::client_config(false, false)
    }
}

/// The challenge of `server` (401, or 403 with a challenge) to a client without
/// credentials; `None` when nothing it was asked is challenged. A server that cannot be
/// reached is an error, in our words; one that answers wrongly is not (the login then
/// discovers the metadata the ordinary way). A session the server opened is ended.
pub async fn login_challenge(
    server: &str,
    config: &oi_config::mcp::McpServerConfig,
) -> Result<Option<String>, OAuthError> {
    let lookup = |k: &str| std::env::var(k).ok();
    let spec = crate::http::http_spec(server, &config.transport, &lookup)
        .map_err(|e| OAuthError::Config(e.to_string()))?;
    let transport_config = StreamableHttpClientTransportConfig::with_uri(spec.url.clone())
        .custom_headers(crate::http::header_map(server, &spec.headers));
    let mut opening = Opening::first(config.protocol_version, None);
    // A probe, then `initialize` (only for `auto`; `Opening::retry` says when).
    for _ in 0..2 {
        let http = crate::http::http_client().map_err(|e| OAuthError::Http(e.to_string()))?;
        let transport = StreamableHttpClientTransport::with_client(http, transport_config.clone());
        let opened = tokio::time::timeout(
            OPENING_TIMEOUT,
            ProbeClient.serve_with_lifecycle(transport, opening.lifecycle(true)),
        )
        .await
        .map_err(|_| OAuthError::DiscoveryTimedOut {
            url: spec.url.clone(),
        })?;
        let error = match opened {
            Ok(service) => {
                let listed = tokio::time::timeout(
                    LIST_TIMEOUT,
                    crate::tool_list::list_tools(service.peer()),
                )
                .await;
                let challenge = match listed {
                    Ok(Err(e)) => wire_error::service_challenge(&e),
                    Ok(Ok(_)) | Err(_) => None,
                };
                let _ = tokio::time::timeout(LIST_TIMEOUT, service.cancel()).await;
                return Ok(challenge);
            }
            Err(e) => e,
        };
        if let Some(challenge) = error.auth_challenge() {
            return Ok(Some(challenge.to_string()));
        }
        if let Some(fault) = unreachable(&error) {
            return Err(OAuthError::Discovery(
                fault.describe(server, Some(&spec.url)),
            ));
        }
        match opening.retry(config.protocol_version, &error) {
            Some(next) => opening = next,
            None => {
                tracing::debug!(
                    "MCP server `{server}`: the login probe's {opening:?} failed without a challenge: {}",
                    wire_error::handshake_answer(&error, "the probe")
                );
                return Ok(None);
            }
        }
    }
    Ok(None)
}

/// The fault of a server that could not be reached at all (nothing listens, an unknown host,
/// TLS), as opposed to one that answered.
fn unreachable(error: &ClientInitializeError) -> Option<WireFault> {
    wire_error::handshake_fault(error).filter(|fault| {
        matches!(
            fault,
            WireFault::Refused | WireFault::UnknownHost | WireFault::TimedOut | WireFault::Tls(_)
        )
    })
}
