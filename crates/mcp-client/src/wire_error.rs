//! Connection and HTTP failures in our words: what rmcp, reqwest and the OS report (a refused
//! connection, an unknown host, an HTTP status, an HTML page where JSON-RPC was expected, a
//! pipe the server closed) becomes one line that says what happened, at which URL, and what
//! to check — never a Rust type name or a library's phrasing.
//!
//! The errors arrive as rmcp's `ClientInitializeError` (the handshake) or `ServiceError`
//! (later requests); underneath is the transport's own error (`StreamableHttpError` for HTTP,
//! `io::Error` for a child's pipes), which is read by type, not by its text.

use rmcp::service::{ClientInitializeError, ServiceError};
use rmcp::transport::DynamicTransportError;
use rmcp::transport::streamable_http_client::StreamableHttpError;
use std::error::Error;

/// What went wrong on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum WireFault {
    /// Nothing listens there.
    Refused,
    /// The host name does not resolve.
    UnknownHost,
    /// The connection or the answer took too long.
    TimedOut,
    /// The TLS handshake failed (the reason, in rustls' words, which name the certificate
    /// problem).
    Tls(String),
    /// The peer closed the connection or the pipe (a stdio server that exited lands here).
    Closed,
    /// An HTTP status that is not an MCP answer (the reason phrase, if known).
    Status(u16),
    /// A body that is not MCP: the content type it had.
    NotMcp(Option<String>),
    /// A body that should have been JSON-RPC and is not: its first bytes.
    NotJsonRpc(String),
    /// The server forgot our session (HTTP 404 on a session it gave us).
    SessionExpired,
    /// Something else; the text is already free of type names.
    Other(String),
}

impl WireFault {
    /// Whether the connection ended under us (for a stdio server: its process is gone or
    /// closed its output), as opposed to an answer we could not use.
    pub(crate) fn is_lost(&self) -> bool {
        matches!(self, WireFault::Closed)
    }

    /// The one line, for a server reached at `url` (`None` for a stdio server) configured as
    /// `[mcp_servers.<server>]`.
    pub(crate) fn describe(&self, server: &str, url: Option<&str>) -> String {
        let at = url.map(|u| format!(" at {u}")).unwrap_or_default();
        let target = url.unwrap_or("the server");
        match self {
            WireFault::Refused => format!(
                "cannot connect to {target}: connection refused (is the server running, and are the host and port in `url` right?)"
            ),
            WireFault::UnknownHost => {
                let host = url
                    .and_then(|u| url::Url::parse(u).ok())
                    .and_then(|u| u.host_str().map(str::to_string))
                    .unwrap_or_else(|| "the server's host".to_string());
                format!(
                    "cannot connect to {target}: the host name `{host}` does not resolve (check `url` in [mcp_servers.{server}])"
                )
            }
            WireFault::TimedOut => format!("the server{at} did not answer in time"),
            WireFault::Tls(reason) => {
                format!("cannot connect to {target}: the TLS handshake failed ({reason})")
            }
            WireFault::Closed => match url {
                Some(u) => format!("the server at {u} closed the connection"),
                None => "the server closed its connection".to_string(),
            },
            WireFault::Status(code) => {
                let phrase = reqwest::StatusCode::from_u16(*code)
                    .ok()
                    .and_then(|s| s.canonical_reason())
                    .map(|r| format!(" {r}"))
                    .unwrap_or_default();
                let hint = match code {
                    404 | 405 => format!(
                        ": no MCP endpoint there; check `url` in [mcp_servers.{server}] (it usually ends in `/mcp`)"
                    ),
                    429 => ": it is rate limiting requests; try again later".to_string(),
                    500..=599 => {
                        ": the server failed; try again later or check its logs".to_string()
                    }
                    _ => String::new(),
                };
                format!("the server{at} answered HTTP {code}{phrase}{hint}")
            }
            WireFault::NotMcp(kind) => format!(
                "the server{at} answered with {}, not MCP (JSON or an event stream); check `url` in [mcp_servers.{server}]",
                kind.as_deref()
                    .map(|k| format!("`{k}`"))
                    .unwrap_or_else(|| "no content type".to_string())
            ),
            WireFault::NotJsonRpc(preview) => {
                format!("the server{at} answered with something that is not JSON-RPC: `{preview}`")
            }
            WireFault::SessionExpired => format!(
                "the server{at} no longer knows our session (HTTP 404); it will be re-established"
            ),
            WireFault::Other(text) => text.clone(),
        }
    }
}

/// The fault under a failed handshake; `None` when the server answered and the answer is the
/// problem (a JSON-RPC error, a wrong result), which [`handshake_answer`] words.
pub(crate) fn handshake_fault(e: &ClientInitializeError) -> Option<WireFault> {
    match e {
        ClientInitializeError::ConnectionClosed(_) | ClientInitializeError::Cancelled => {
            Some(WireFault::Closed)
        }
        ClientInitializeError::TransportError { error, .. } => Some(transport_fault(error)),
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => handshake_fault(fallback),
        _ => None,
    }
}

/// A handshake the server answered wrongly, in our words; `step` names the request that
/// opened the session (`the initialize handshake`, `server/discover`).
pub(crate) fn handshake_answer(e: &ClientInitializeError, step: &str) -> String {
    match e {
        ClientInitializeError::JsonRpcError(data) => format!(
            "the server refused {step} with error {}: {}",
            data.code.0, data.message
        ),
        ClientInitializeError::NoCompatibleProtocolVersion {
            server_supported, ..
        } => format!(
            "the server speaks none of our MCP protocol versions (it supports {})",
            server_supported
                .iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        // rmcp's probe fell back to `initialize`, which failed: that failure is the answer.
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => {
            handshake_answer(fallback, "the initialize handshake")
        }
        ClientInitializeError::ExpectedInitResponse(_)
        | ClientInitializeError::ExpectedInitResult(_)
        | ClientInitializeError::ConflictInitResponseId(..)
        | ClientInitializeError::UncorrelatedErrorResponse { .. } => {
            format!("the server answered {step} with something other than its result")
        }
        other => without_type_names(&other.to_string()),
    }
}

/// The fault under a failed request after the handshake; `None` when the server answered
/// (with an error or a result of the wrong kind).
pub(crate) fn service_fault(e: &ServiceError) -> Option<WireFault> {
    match e {
        ServiceError::TransportSend(error) => Some(transport_fault(error)),
        ServiceError::TransportClosed | ServiceError::Cancelled { .. } => Some(WireFault::Closed),
        ServiceError::Timeout { .. } => Some(WireFault::TimedOut),
        _ => None,
    }
}

/// The `WWW-Authenticate` challenge of the 401 (or 403 with a challenge) that failed a
/// request after the handshake, if that is why it failed.
pub(crate) fn service_challenge(e: &ServiceError) -> Option<String> {
    use rmcp::transport::streamable_http_client::{AuthRequiredError, InsufficientScopeError};
    let ServiceError::TransportSend(error) = e else {
        return None;
    };
    let mut current: Option<&(dyn Error + 'static)> = Some(error.error.as_ref());
    while let Some(err) = current {
        match err.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::AuthRequired(a)) => {
                return Some(a.www_authenticate_header.clone());
            }
            Some(StreamableHttpError::InsufficientScope(s)) => {
                return Some(s.www_authenticate_header.clone());
            }
            _ => {}
        }
        if let Some(a) = err.downcast_ref::<AuthRequiredError>() {
            return Some(a.www_authenticate_header.clone());
        }
        if let Some(s) = err.downcast_ref::<InsufficientScopeError>() {
            return Some(s.www_authenticate_header.clone());
        }
        current = err.source();
    }
    None
}

/// The transport's own error, read by type.
fn transport_fault(error: &DynamicTransportError) -> WireFault {
    let inner: &(dyn Error + 'static) = error.error.as_ref();
    if let Some(http) = inner.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
        return http_fault(http);
    }
    chain_fault(inner).unwrap_or_else(|| WireFault::Other(without_type_names(&inner.to_string())))
}

fn http_fault(e: &StreamableHttpError<reqwest::Error>) -> WireFault {
    match e {
        StreamableHttpError::Client(r) => reqwest_fault(r),
        StreamableHttpError::Io(io) => io_fault(io).unwrap_or(WireFault::Closed),
        StreamableHttpError::HttpStatus(s) => WireFault::Status(s.status),
        StreamableHttpError::AuthRequired(_) => WireFault::Status(401),
        StreamableHttpError::InsufficientScope(_) => WireFault::Status(403),
        StreamableHttpError::UnexpectedEndOfStream
        | StreamableHttpError::TransportChannelClosed => WireFault::Closed,
        StreamableHttpError::UnexpectedContentType(kind) => WireFault::NotMcp(kind.clone()),
        StreamableHttpError::SessionExpired => WireFault::SessionExpired,
        StreamableHttpError::UnexpectedServerResponse(text) => server_response_fault(text),
        StreamableHttpError::Deserialize(_) => WireFault::NotJsonRpc(String::new()),
        StreamableHttpError::Sse(e) => WireFault::Other(format!("the event stream broke: {e}")),
        other => WireFault::Other(without_type_names(&other.to_string())),
    }
}

/// rmcp words an unusable answer as `HTTP 404 Not Found: <body>` or `could not parse JSON
/// response as ServerJsonRpcMessage: <serde error>: <body>`; the status or the body is what
/// the user needs.
fn server_response_fault(text: &str) -> WireFault {
    if let Some(rest) = text.strip_prefix("HTTP ")
        && let Some(code) = rest
            .split(|c: char| !c.is_ascii_digit())
            .next()
            .and_then(|c| c.parse::<u16>().ok())
    {
        return WireFault::Status(code);
    }
    if text.starts_with("could not parse JSON") {
        let body = text.rsplit(": ").next().unwrap_or_default();
        return WireFault::NotJsonRpc(preview(body));
    }
    WireFault::Other(format!("unexpected answer: {}", preview(text)))
}

fn reqwest_fault(r: &reqwest::Error) -> WireFault {
    if let Some(found) = chain_fault(r) {
        return found;
    }
    if r.is_timeout() {
        return WireFault::TimedOut;
    }
    if let Some(status) = r.status() {
        return WireFault::Status(status.as_u16());
    }
    if r.is_connect() {
        return WireFault::Refused;
    }
    WireFault::Other(without_type_names(&r.to_string()))
}

/// The first error in `e`'s source chain that says what happened on the wire.
fn chain_fault(e: &(dyn Error + 'static)) -> Option<WireFault> {
    let mut current = Some(e);
    while let Some(err) = current {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if let Some(fault) = io_fault(io) {
                return Some(fault);
            }
            // An `io::Error` wrapping another error reports that error's source as its
            // own, skipping the wrapped error itself (a TLS failure arrives this way).
            if let Some(fault) = io.get_ref().and_then(|inner| chain_fault(inner)) {
                return Some(fault);
            }
        }
        if let Some(tls) = err.downcast_ref::<rustls::Error>() {
            return Some(WireFault::Tls(tls.to_string()));
        }
        // The resolver's error has no public type; its text is stable ("failed to lookup
        // address information", "dns error").
        let text = err.to_string();
        if text.contains("failed to lookup address") || text.starts_with("dns error") {
            return Some(WireFault::UnknownHost);
        }
        current = err.source();
    }
    None
}

fn io_fault(io: &std::io::Error) -> Option<WireFault> {
    use std::io::ErrorKind as K;
    match io.kind() {
        K::ConnectionRefused => Some(WireFault::Refused),
        K::BrokenPipe | K::ConnectionReset | K::ConnectionAborted | K::UnexpectedEof => {
            Some(WireFault::Closed)
        }
        K::TimedOut => Some(WireFault::TimedOut),
        _ => {
            let text = io.to_string();
            (text.contains("failed to lookup address")
                || text.contains("Name or service not known"))
            .then_some(WireFault::UnknownHost)
        }
    }
}

/// At most 120 characters of a body, on one line.
fn preview(body: &str) -> String {
    let one_line: String = body
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let trimmed = one_line.trim();
    match trimmed.char_indices().nth(120) {
        Some((cut, _)) => format!("{}…", &trimmed[..cut]),
        None => trimmed.to_string(),
    }
}

/// An rmcp error text without the Rust type names it embeds (`Transport [rmcp::...] error`),
/// which mean nothing to a user.
pub(crate) fn without_type_names(msg: &str) -> String {
    let mut out = String::with_capacity(msg.len());
    let mut rest = msg;
    while let Some(start) = rest.find(" [") {
        let Some(len) = rest[start..].find(']') else {
            break;
        };
        let inner = &rest[start + 2..start + len];
        out.push_str(&rest[..start]);
        if !inner.contains("::") {
            out.push_str(&rest[start..start + len + 1]);
        }
        rest = &rest[start + len + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_names_are_dropped_from_errors() {
        assert_eq!(
            without_type_names(
                "Send message error Transport [rmcp::transport::worker::WorkerTransport<rmcp::X<reqwest::Client>>] error: boom [keep me]"
            ),
            "Send message error Transport error: boom [keep me]"
        );
    }

    #[test]
    fn faults_are_worded_with_the_url_and_the_fix() {
        let url = Some("http://127.0.0.1:9/mcp");
        assert_eq!(
            WireFault::Refused.describe("docs", url),
            "cannot connect to http://127.0.0.1:9/mcp: connection refused (is the server running, and are the host and port in `url` right?)"
        );
        assert_eq!(
            WireFault::Status(404).describe("docs", url),
            "the server at http://127.0.0.1:9/mcp answered HTTP 404 Not Found: no MCP endpoint there; check `url` in [mcp_servers.docs] (it usually ends in `/mcp`)"
        );
        assert_eq!(
            WireFault::NotMcp(Some("text/html; charset=utf-8".into())).describe("docs", url),
            "the server at http://127.0.0.1:9/mcp answered with `text/html; charset=utf-8`, not MCP (JSON or an event stream); check `url` in [mcp_servers.docs]"
        );
        assert_eq!(
            WireFault::UnknownHost.describe("docs", Some("https://mcp.nowhere.invalid/mcp")),
            "cannot connect to https://mcp.nowhere.invalid/mcp: the host name `mcp.nowhere.invalid` does not resolve (check `url` in [mcp_servers.docs])"
        );
        assert_eq!(
            WireFault::Closed.describe("fx", None),
            "the server closed its connection"
        );
    }

    #[test]
    fn rmcp_answer_texts_give_the_status_or_the_body() {
        assert_eq!(
            server_response_fault("HTTP 404 Not Found: <html>nope</html>"),
            WireFault::Status(404)
        );
        assert_eq!(
            server_response_fault(
                "could not parse JSON response as ServerJsonRpcMessage: expected value at line 1 column 1: <html>\n<body>hi</body>"
            ),
            WireFault::NotJsonRpc("<html> <body>hi</body>".into())
        );
    }

    #[test]
    fn pipe_and_socket_errors_are_read_by_kind() {
        use std::io::{Error, ErrorKind};
        assert_eq!(
            io_fault(&Error::from(ErrorKind::BrokenPipe)),
            Some(WireFault::Closed)
        );
        assert_eq!(
            io_fault(&Error::from(ErrorKind::ConnectionRefused)),
            Some(WireFault::Refused)
        );
        let wrapped = Error::other(Error::from(ErrorKind::ConnectionReset));
        assert_eq!(chain_fault(&wrapped), Some(WireFault::Closed));
    }
}
