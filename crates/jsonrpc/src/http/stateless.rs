//! The stateless path of MCP 2026-07-28 over streamable HTTP: every request is its own
//! exchange, with no session.
//!
//! * **Routing** ([`wants_stateless`]): a request whose `_meta` names its protocol version,
//!   or whose `MCP-Protocol-Version` header is a version without the `initialize` handshake,
//!   comes here (the caller also sends requests that have neither a session nor
//!   `initialize`, so they are told what they lack).
//! * **Standard headers** ([`check_headers`]): when the body names its version, the
//!   `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers must be present once each
//!   and agree with the body (`Mcp-Name` may be Base64 in the `=?base64?…?=` sentinel);
//!   otherwise `400` with `-32020` (HeaderMismatch), before anything runs.
//! * **The answer**: the request runs on the listener's stateless table, detached from any
//!   connection ([`dispatch::run_detached`]). Its first message decides the shape: the
//!   response itself becomes one JSON body (status by error code: `-32601` → 404; `-32700`,
//!   `-32600`, `-32602`, `-32020`…`-32022` → 400), a notification opens an SSE stream that
//!   carries the request's notifications and ends with its response. Streams have no event
//!   ids: 2026-07-28 streams are not resumable.
//! * **Cancellation**: closing the stream (or the connection, before the answer) cancels
//!   the request like `notifications/cancelled`; it then sends nothing more.
//! * **No server→client requests**: the 2026-07-28 protocol has none; a handler that asks
//!   anyway gets an error reply at once (an approval then fails closed).
//!
//! What a request means — its `_meta`, the version, the method — is the method table's
//! business, as on stdio.

use super::{HttpOptions, accepts_sse, refuse, rpc_error_response};
use crate::dispatch::{self, CALLS_GRACE, Detached, MethodTable};
use crate::message::{
    HEADER_MISMATCH, INVALID_PARAMS, INVALID_REQUEST, Incoming, METHOD_NOT_FOUND,
    MISSING_REQUIRED_CLIENT_CAPABILITY, Outgoing, PARSE_ERROR, RequestId, RpcError,
    UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::outgoing::{OutgoingSender, Routed};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use serde_json::Value;
use std::convert::Infallible;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Versions that open with `initialize`: their requests belong to sessions.
const HANDSHAKE_VERSIONS: &[&str] = &["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const VERSION_HEADER: &str = "mcp-protocol-version";
const METHOD_HEADER: &str = "mcp-method";
const NAME_HEADER: &str = "mcp-name";
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// The listener's stateless side: the table every stateless request runs on, and the
/// requests still running (so a shutdown lets them answer).
pub(super) struct Stateless {
    table: MethodTable,
    calls: TaskTracker,
    /// Cancels every running request at shutdown (they still answer).
    stop: CancellationToken,
}

impl Stateless {
    pub(super) fn new(table: MethodTable, stop: &CancellationToken) -> Self {
        Self {
            table,
            calls: TaskTracker::new(),
            stop: stop.child_token(),
        }
    }

    /// Cancels the running requests and waits for them to answer, at most the calls' grace.
    pub(super) async fn end(&self) {
        self.stop.cancel();
        self.calls.close();
        if tokio::time::timeout(CALLS_GRACE, self.calls.wait())
            .await
            .is_err()
        {
            tracing::warn!("stateless requests did not end within {CALLS_GRACE:?}");
        }
    }

    /// Answers one message that has no session.
    pub(super) async fn serve(
        &self,
        opts: &HttpOptions,
        headers: &HeaderMap,
        incoming: Incoming,
    ) -> Response {
        match incoming {
            Incoming::Request { id, method, params } => {
                if let Err(why) = check_headers(headers, &method, params.as_ref()) {
                    let error = RpcError::new(HEADER_MISMATCH, format!("Header mismatch: {why}"));
                    return rpc_error_response(StatusCode::BAD_REQUEST, Some(id), error);
                }
                self.run(opts, accepts_sse(headers), id, &method, params)
                    .await
            }
            // 2026-07-28 defines no notification from the client over HTTP (closing a
            // stream is the cancellation); there is nothing to do with one.
            Incoming::Notification { method, .. } => {
                tracing::debug!("ignoring notification {method} outside a session");
                StatusCode::ACCEPTED.into_response()
            }
            Incoming::Response { id, .. } => refuse(
                StatusCode::BAD_REQUEST,
                format!(
                    "a reply (to request {id}) needs the mcp-session-id of the session that asked; MCP 2026-07-28 has no server-to-client requests"
                ),
            ),
        }
    }

    async fn run(
        &self,
        opts: &HttpOptions,
        sse: bool,
        id: RequestId,
        method: &str,
        params: Option<Value>,
    ) -> Response {
        let (tx, mut rx) = mpsc::channel::<Routed>(crate::connection::OUTGOING_QUEUE);
        let outgoing = OutgoingSender::new(tx);
        let (detached, call) = dispatch::run_detached(
            &self.table,
            id,
            method,
            params,
            outgoing.clone(),
            self.stop.child_token(),
        );
        self.calls.spawn(call);
        // Until its answer is out the request is the client's: the guard cancels it if this
        // future (the connection) or the stream goes away first.
        let mut guard = ClientGone(Some(detached));
        let Some(first) = next_message(&mut rx, &outgoing).await else {
            guard.disarm();
            return refuse(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the server ended the request without answering it",
            );
        };
        if is_answer(&first) {
            guard.disarm();
            return json_answer(first);
        }
        if !sse {
            // A client that takes only JSON gets the answer alone.
            loop {
                match next_message(&mut rx, &outgoing).await {
                    Some(m) if is_answer(&m) => {
                        guard.disarm();
                        return json_answer(m);
                    }
                    Some(_) => {}
                    None => {
                        guard.disarm();
                        return refuse(
                            StatusCode::INTERNAL_SERVER_ERROR,
                            "the server ended the request without answering it",
                        );
                    }
                }
            }
        }
        let stream = futures::stream::unfold(
            (Some(first), rx, outgoing, guard),
            |(pending, mut rx, outgoing, mut guard)| async move {
                // The answer went out: the stream is over.
                guard.0.as_ref()?;
                let msg = match pending {
                    Some(m) => m,
                    None => next_message(&mut rx, &outgoing).await?,
                };
                if is_answer(&msg) {
                    guard.disarm();
                }
                let event = Event::default().event("message").data(line(&msg));
                Some((Ok::<Event, Infallible>(event), (None, rx, outgoing, guard)))
            },
        );
        let mut resp = Sse::new(stream)
            .keep_alive(KeepAlive::default().interval(opts.keep_alive()))
            .into_response();
        // Proxies must pass events on as they come.
        resp.headers_mut()
            .insert("x-accel-buffering", HeaderValue::from_static("no"));
        resp
    }
}

/// Cancels a request whose client went away before its answer (see
/// [`Detached::cancel_by_client`]); disarmed once the answer is out.
struct ClientGone(Option<Detached>);

impl ClientGone {
    fn disarm(&mut self) {
        self.0 = None;
    }
}

impl Drop for ClientGone {
    fn drop(&mut self) {
        if let Some(detached) = self.0.take() {
            tracing::info!("the client closed a stateless request's stream; cancelling it");
            detached.cancel_by_client();
        }
    }
}

/// The request's next message for the client. A server→client request is answered at once
/// with an error (there is no way to the client in this protocol), so whoever asked stops
/// waiting and fails closed.
async fn next_message(
    rx: &mut mpsc::Receiver<Routed>,
    outgoing: &OutgoingSender,
) -> Option<Outgoing> {
    loop {
        let routed = rx.recv().await?;
        match routed.msg {
            Outgoing::Request { id, method, .. } => {
                tracing::warn!("not sending {method} to a stateless client");
                outgoing.route_response(
                    &id,
                    Err(RpcError::new(
                        METHOD_NOT_FOUND,
                        format!("{method} cannot be sent: MCP 2026-07-28 has no server-to-client requests"),
                    )),
                );
            }
            other => return Some(other),
        }
    }
}

fn is_answer(msg: &Outgoing) -> bool {
    matches!(msg, Outgoing::Response { .. } | Outgoing::Error { .. })
}

fn line(msg: &Outgoing) -> String {
    let mut text = String::from_utf8_lossy(&msg.to_line()).into_owned();
    text.truncate(text.trim_end().len());
    text
}

/// The answer as one JSON body, with the HTTP status its error code calls for.
fn json_answer(msg: Outgoing) -> Response {
    let status = match &msg {
        Outgoing::Error { error, .. } => status_for(error.code),
        _ => StatusCode::OK,
    };
    (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        line(&msg),
    )
        .into_response()
}

/// The status of an error answer: what the 2026-07-28 transport requires for rejected
/// requests (a malformed request, a header mismatch, an unsupported version, a missing
/// capability: 400; an unknown method: 404); anything else is an answer like any other.
fn status_for(code: i64) -> StatusCode {
    match code {
        METHOD_NOT_FOUND => StatusCode::NOT_FOUND,
        PARSE_ERROR
        | INVALID_REQUEST
        | INVALID_PARAMS
        | HEADER_MISMATCH
        | MISSING_REQUIRED_CLIENT_CAPABILITY
        | UNSUPPORTED_PROTOCOL_VERSION => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// Whether a message is served statelessly rather than in a session: it names a protocol
/// version in its `_meta`, or its `MCP-Protocol-Version` header is a version that has no
/// `initialize` handshake.
pub(super) fn wants_stateless(headers: &HeaderMap, incoming: &Incoming) -> bool {
    let header_modern = headers
        .get(VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(trim_ows)
        .is_some_and(|v| !HANDSHAKE_VERSIONS.contains(&v));
    let params = match incoming {
        Incoming::Request { params, .. } | Incoming::Notification { params, .. } => params.as_ref(),
        Incoming::Response { .. } => None,
    };
    header_modern || body_version(params).is_some()
}

/// `params._meta["io.modelcontextprotocol/protocolVersion"]`, if present.
fn body_version(params: Option<&Value>) -> Option<&Value> {
    params?.get("_meta")?.get(META_VERSION)
}

/// Which body member `Mcp-Name` mirrors, for the methods that have one.
fn name_member(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// RFC 9110 §5.5: the whitespace around a field value is not part of it.
fn trim_ows(v: &str) -> &str {
    v.trim_matches([' ', '\t'])
}

/// Why a request's standard headers were refused (the message of its `-32020`).
#[derive(Debug, PartialEq)]
enum HeaderProblem {
    Missing {
        header: &'static str,
        send: String,
    },
    Repeated(&'static str),
    Unreadable(&'static str),
    Differs {
        header: &'static str,
        sent: String,
        body: String,
    },
    BadBase64 {
        value: String,
        why: String,
    },
}

impl std::fmt::Display for HeaderProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HeaderProblem::Missing { header, send } => {
                write!(f, "the {header} header is missing; send `{header}: {send}`")
            }
            HeaderProblem::Repeated(h) => write!(f, "the {h} header is sent more than once"),
            HeaderProblem::Unreadable(h) => {
                write!(
                    f,
                    "the {h} header holds characters a header value cannot carry"
                )
            }
            HeaderProblem::Differs { header, sent, body } => write!(
                f,
                "{header} header value '{sent}' does not match the body's '{body}'"
            ),
            HeaderProblem::BadBase64 { value, why } => write!(
                f,
                "the Base64 header value '{value}' does not decode ({why})"
            ),
        }
    }
}

const SHOWN_VERSION: &str = "MCP-Protocol-Version";
const SHOWN_METHOD: &str = "Mcp-Method";
const SHOWN_NAME: &str = "Mcp-Name";

/// The standard headers of a request whose body names its protocol version, checked against
/// the body: present once each, readable, and equal to what the body says. A body without a
/// version is left to the method table (which says what its `_meta` lacks).
fn check_headers(
    headers: &HeaderMap,
    method: &str,
    params: Option<&Value>,
) -> Result<(), HeaderProblem> {
    let Some(Value::String(version)) = body_version(params) else {
        return Ok(());
    };
    let single = |name: &str, shown: &'static str| -> Result<Option<String>, HeaderProblem> {
        let mut values = headers.get_all(name).iter();
        let Some(first) = values.next() else {
            return Ok(None);
        };
        if values.next().is_some() {
            return Err(HeaderProblem::Repeated(shown));
        }
        let text = first
            .to_str()
            .map_err(|_| HeaderProblem::Unreadable(shown))?;
        Ok(Some(trim_ows(text).to_string()))
    };
    let expect = |sent: Option<String>, shown: &'static str, body: &str| match sent {
        None => Err(HeaderProblem::Missing {
            header: shown,
            send: body.to_string(),
        }),
        Some(h) if h != body => Err(HeaderProblem::Differs {
            header: shown,
            sent: h,
            body: body.to_string(),
        }),
        Some(_) => Ok(()),
    };
    expect(
        single(VERSION_HEADER, SHOWN_VERSION)?,
        SHOWN_VERSION,
        version,
    )?;
    expect(single(METHOD_HEADER, SHOWN_METHOD)?, SHOWN_METHOD, method)?;
    let sent_name = single(NAME_HEADER, SHOWN_NAME)?;
    let Some(member) = name_member(method) else {
        return Ok(());
    };
    let Some(body_name) = params.and_then(|p| p.get(member)).and_then(Value::as_str) else {
        return Ok(());
    };
    let decoded = sent_name.map(|v| decode_header_value(&v)).transpose()?;
    expect(decoded, SHOWN_NAME, body_name)
}

/// A header value as sent: literal, or Base64 (standard alphabet, padded) of UTF-8 inside
/// the `=?base64?…?=` sentinel; a broken encoding is an error, not a literal.
fn decode_header_value(value: &str) -> Result<String, HeaderProblem> {
    let Some(encoded) = value
        .strip_prefix("=?base64?")
        .and_then(|v| v.strip_suffix("?="))
    else {
        return Ok(value.to_string());
    };
    let bad = |why: String| HeaderProblem::BadBase64 {
        value: value.to_string(),
        why,
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| bad(e.to_string()))?;
    String::from_utf8(bytes).map_err(|_| bad("not UTF-8".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    fn call_params(name: &str) -> Value {
        json!({"name": name, "_meta": {META_VERSION: "2026-07-28"}})
    }

    #[test]
    fn headers_must_agree_with_the_body() {
        let ok = headers(&[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("MCP-NAME", "  codex  "),
        ]);
        assert_eq!(
            check_headers(&ok, "tools/call", Some(&call_params("codex"))),
            Ok(())
        );
        let cases: &[(&[(&str, &str)], &str)] = &[
            (
                &[("mcp-method", "tools/call"), ("mcp-name", "codex")],
                "MCP-Protocol-Version header is missing",
            ),
            (
                &[
                    ("mcp-protocol-version", "2025-11-25"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "codex"),
                ],
                "MCP-Protocol-Version header value '2025-11-25' does not match the body's '2026-07-28'",
            ),
            (
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-name", "codex"),
                ],
                "Mcp-Method header is missing",
            ),
            (
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "TOOLS/CALL"),
                    ("mcp-name", "codex"),
                ],
                "Mcp-Method header value 'TOOLS/CALL' does not match the body's 'tools/call'",
            ),
            (
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                ],
                "Mcp-Name header is missing",
            ),
            (
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "other"),
                ],
                "Mcp-Name header value 'other' does not match the body's 'codex'",
            ),
            (
                &[
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "codex"),
                ],
                "more than once",
            ),
        ];
        for (pairs, want) in cases {
            let err = check_headers(&headers(pairs), "tools/call", Some(&call_params("codex")))
                .unwrap_err()
                .to_string();
            assert!(err.contains(want), "{pairs:?}: {err}");
        }
    }

    #[test]
    fn names_may_be_base64_and_bodies_without_a_version_are_left_alone() {
        let b64 = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "resources/read"),
            (
                "mcp-name",
                "=?base64?aW50ZXJwcmV0ZXI6Ly90aHJlYWRzL8OpdMOp?=",
            ),
        ]);
        let params =
            json!({"uri": "interpreter://threads/été", "_meta": {META_VERSION: "2026-07-28"}});
        assert_eq!(check_headers(&b64, "resources/read", Some(&params)), Ok(()));
        let broken = headers(&[
            ("mcp-protocol-version", "2026-07-28"),
            ("mcp-method", "tools/call"),
            ("mcp-name", "=?base64?SGVs!!!bG8=?="),
        ]);
        assert!(check_headers(&broken, "tools/call", Some(&call_params("Hello"))).is_err());
        // No version in the body: the method table answers (-32602 naming the missing key).
        assert_eq!(
            check_headers(&HeaderMap::new(), "tools/list", Some(&json!({}))),
            Ok(())
        );
    }

    #[test]
    fn routing_by_header_or_body_version() {
        let modern = Incoming::Request {
            id: RequestId::Integer(1),
            method: "tools/list".into(),
            params: Some(json!({"_meta": {META_VERSION: "2026-07-28"}})),
        };
        let legacy = Incoming::Request {
            id: RequestId::Integer(1),
            method: "tools/list".into(),
            params: Some(json!({"_meta": {"progressToken": 1}})),
        };
        assert!(wants_stateless(&HeaderMap::new(), &modern));
        assert!(!wants_stateless(&HeaderMap::new(), &legacy));
        assert!(!wants_stateless(
            &headers(&[("mcp-protocol-version", "2025-11-25")]),
            &legacy
        ));
        assert!(wants_stateless(
            &headers(&[("mcp-protocol-version", "v999")]),
            &legacy
        ));
    }

    #[test]
    fn rejections_get_their_status() {
        assert_eq!(status_for(METHOD_NOT_FOUND), StatusCode::NOT_FOUND);
        for code in [
            INVALID_PARAMS,
            HEADER_MISMATCH,
            UNSUPPORTED_PROTOCOL_VERSION,
            MISSING_REQUIRED_CLIENT_CAPABILITY,
        ] {
            assert_eq!(status_for(code), StatusCode::BAD_REQUEST);
        }
        assert_eq!(status_for(crate::message::INTERNAL_ERROR), StatusCode::OK);
    }
}
