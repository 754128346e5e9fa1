//! JSON-RPC 2.0 message types: parsing of one incoming frame, serialization of outgoing
//! messages, and the error codes this server uses. No I/O here.
//!
//! Parsing is lenient where being strict would only hurt a client (a missing `"jsonrpc"`
//! member is accepted) and strict where leniency would hide a bug (a wrong `"jsonrpc"`
//! value, an id that is neither a string nor an integer, a batch).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::fmt;

/// The frame is not JSON.
pub const PARSE_ERROR: i64 = -32700;
/// The frame is JSON but not a valid message (also the v2 API's validation errors).
pub const INVALID_REQUEST: i64 = -32600;
/// No method of that name.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// The params do not fit the method's declaration.
pub const INVALID_PARAMS: i64 = -32602;
/// The server failed while handling the request.
pub const INTERNAL_ERROR: i64 = -32603;
/// MCP up to 2025-11-25: a `resources/read` for a URI the server does not have (2026-07-28
/// uses [`INVALID_PARAMS`]).
pub const RESOURCE_NOT_FOUND: i64 = -32002;
/// MCP 2026-07-28: the HTTP headers disagree with the body, or a required one is missing.
pub const HEADER_MISMATCH: i64 = -32020;
/// MCP 2026-07-28: the request needs a client capability it did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// MCP 2026-07-28: the request's protocol version is not served (`data`: `supported`,
/// `requested`).
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// A request id. JSON-RPC allows strings and numbers; the JSON type is kept so replies
/// and `_meta.requestId` echo exactly what the client sent.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A numeric id.
    Integer(i64),
    /// A string id.
    String(String),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Integer(n) => write!(f, "{n}"),
            RequestId::String(s) => f.write_str(s),
        }
    }
}

impl RequestId {
    /// Reads an id from JSON; `None` for anything JSON-RPC does not allow (null, floats,
    /// booleans, objects) so the caller can answer `-32600`.
    pub fn from_value(v: &Value) -> Option<RequestId> {
        match v {
            Value::String(s) => Some(RequestId::String(s.clone())),
            Value::Number(n) => n.as_i64().map(RequestId::Integer),
            _ => None,
        }
    }
}

/// The `error` member of an error response.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RpcError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// What went wrong and how to fix it, for people.
    pub message: String,
    /// Machine-readable details.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with `code` and `message`.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data`.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// `-32700` naming what could not be parsed.
    pub fn parse_error(detail: impl fmt::Display) -> Self {
        Self::new(PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// `-32600` naming what is wrong with the message.
    pub fn invalid_request(detail: impl fmt::Display) -> Self {
        Self::new(INVALID_REQUEST, format!("Invalid request: {detail}"))
    }

    /// `-32601` naming the method.
    pub fn method_not_found(method: &str) -> Self {
        Self::new(METHOD_NOT_FOUND, format!("method not found: {method}"))
            .with_data(json!({ "method": method }))
    }

    /// `-32602` naming the method and the problem with its params.
    pub fn invalid_params(method: &str, detail: impl fmt::Display) -> Self {
        Self::new(
            INVALID_PARAMS,
            format!("Invalid params for {method}: {detail}"),
        )
        .with_data(json!({ "method": method }))
    }

    /// `-32603` with the detail.
    pub fn internal(detail: impl fmt::Display) -> Self {
        Self::new(INTERNAL_ERROR, format!("Internal error: {detail}"))
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.message, self.code)
    }
}

/// One incoming frame, classified.
#[derive(Clone, Debug, PartialEq)]
pub enum Incoming {
    /// A request: it gets exactly one response.
    Request {
        /// The id its response must carry.
        id: RequestId,
        /// The method called.
        method: String,
        /// The call's arguments, absent when the client sent none.
        params: Option<Value>,
    },
    /// A notification: no response.
    Notification {
        /// The method named.
        method: String,
        /// Its arguments, absent when the client sent none.
        params: Option<Value>,
    },
    /// A reply to a request this server sent (e.g. `elicitation/create`).
    Response {
        /// The id of the request it answers.
        id: RequestId,
        /// The client's result, or the error it answered with.
        result: Result<Value, RpcError>,
    },
}

/// A frame that could not be accepted, with the id to answer to (`None` → `id: null`).
#[derive(Clone, Debug, PartialEq)]
pub struct Rejected {
    /// The id to answer to, when it could be read.
    pub id: Option<RequestId>,
    /// Why the frame was rejected.
    pub error: RpcError,
}

/// Classifies one line of input. Errors carry whatever id could be recovered.
#[allow(clippy::result_large_err)] // A rejection is built once per bad frame, never on the hot path.
pub fn parse_incoming(bytes: &[u8]) -> Result<Incoming, Rejected> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| Rejected {
        id: None,
        error: RpcError::parse_error(describe_json_error(bytes, &e)),
    })?;
    classify(value)
}

fn describe_json_error(bytes: &[u8], e: &serde_json::Error) -> String {
    if let Err(utf8) = std::str::from_utf8(bytes) {
        return format!(
            "the line is not valid UTF-8 (bad byte at offset {}); JSON-RPC messages must be UTF-8 JSON",
            utf8.valid_up_to()
        );
    }
    format!("the line is not valid JSON ({e})")
}

/// Classifies an already-parsed JSON value.
#[allow(clippy::result_large_err)] // A rejection is built once per bad frame, never on the hot path.
pub fn classify(value: Value) -> Result<Incoming, Rejected> {
    let mut obj = match value {
        Value::Object(o) => o,
        Value::Array(_) => {
            return Err(Rejected {
                id: None,
                error: RpcError::invalid_request(
                    "batches (JSON arrays) are not supported; send one message per line",
                ),
            });
        }
        other => {
            return Err(Rejected {
                id: None,
                error: RpcError::invalid_request(format!(
                    "expected a JSON object, got {}",
                    json_type_name(&other)
                )),
            });
        }
    };
    let raw_id = obj.remove("id");
    let id = match &raw_id {
        None => None,
        Some(v) => match RequestId::from_value(v) {
            Some(id) => Some(id),
            None => {
                return Err(Rejected {
                    id: None,
                    error: RpcError::invalid_request(format!(
                        "`id` must be a string or an integer, got {}",
                        json_type_name(v)
                    )),
                });
            }
        },
    };
    if let Some(version) = obj.get("jsonrpc")
        && version != "2.0"
    {
        return Err(Rejected {
            id,
            error: RpcError::invalid_request(format!("`jsonrpc` must be \"2.0\", got {version}")),
        });
    }
    let params = obj.remove("params");
    if let Some(p) = &params
        && !(p.is_object() || p.is_array() || p.is_null())
    {
        return Err(Rejected {
            id,
            error: RpcError::invalid_request(format!(
                "`params` must be an object, got {}",
                json_type_name(p)
            )),
        });
    }
    match obj.remove("method") {
        Some(Value::String(method)) => Ok(match id {
            Some(id) => Incoming::Request { id, method, params },
            None => Incoming::Notification { method, params },
        }),
        Some(other) => Err(Rejected {
            id,
            error: RpcError::invalid_request(format!(
                "`method` must be a string, got {}",
                json_type_name(&other)
            )),
        }),
        None => classify_response(id, obj),
    }
}

#[allow(clippy::result_large_err)] // As `classify`.
fn classify_response(
    id: Option<RequestId>,
    mut obj: Map<String, Value>,
) -> Result<Incoming, Rejected> {
    let result = match (obj.remove("result"), obj.remove("error")) {
        (Some(result), None) => Ok(result),
        (None, Some(error)) => Err(serde_json::from_value::<RpcError>(error.clone())
            .unwrap_or_else(|_| RpcError::new(INTERNAL_ERROR, error.to_string()))),
        _ => {
            return Err(Rejected {
                id,
                error: RpcError::invalid_request(
                    "a message needs `method` (request/notification) or exactly one of `result`/`error` (response)",
                ),
            });
        }
    };
    match id {
        Some(id) => Ok(Incoming::Response { id, result }),
        // An error response with a null id answers a message the client could not read;
        // there is nothing to route it to, and replying would loop.
        None => Err(Rejected {
            id: None,
            error: RpcError::invalid_request("a response needs an `id`"),
        }),
    }
}

/// "an object", "a string"…: for error messages about JSON values.
pub fn json_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Everything the server writes. Serialized flat, always with `"jsonrpc":"2.0"`.
#[derive(Clone, Debug, PartialEq)]
pub enum Outgoing {
    /// A successful response.
    Response {
        /// The id of the request answered.
        id: RequestId,
        /// The method's result.
        result: Value,
    },
    /// An error response.
    Error {
        /// The id of the request refused; `None` when it could not be read.
        id: Option<RequestId>,
        /// The code and message sent.
        error: RpcError,
    },
    /// A notification; `emitted_at_ms` (Unix milliseconds, sent as `emittedAtMs` beside
    /// `method`) is the stamp Codex's app server puts on its notifications.
    Notification {
        /// The notification's method.
        method: String,
        /// Its payload.
        params: Value,
        /// When it was emitted (Unix milliseconds), for clients that expect the stamp.
        emitted_at_ms: Option<i64>,
    },
    /// A server→client request (its reply is routed by [`crate::OutgoingSender`]).
    Request {
        /// The id the client's reply will carry.
        id: RequestId,
        /// The method asked of the client.
        method: String,
        /// Its arguments.
        params: Value,
    },
}

#[derive(Serialize)]
struct Wire<'a> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<Option<&'a RequestId>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    method: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    result: Option<&'a Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a RpcError>,
    #[serde(rename = "emittedAtMs", skip_serializing_if = "Option::is_none")]
    emitted_at_ms: Option<i64>,
}

impl Outgoing {
    /// Compact JSON plus the terminating newline.
    pub fn to_line(&self) -> Vec<u8> {
        let wire = match self {
            Outgoing::Response { id, result } => Wire {
                jsonrpc: "2.0",
                id: Some(Some(id)),
                method: None,
                params: None,
                result: Some(result),
                error: None,
                emitted_at_ms: None,
            },
            Outgoing::Error { id, error } => Wire {
                jsonrpc: "2.0",
                id: Some(id.as_ref()),
                method: None,
                params: None,
                result: None,
                error: Some(error),
                emitted_at_ms: None,
            },
            Outgoing::Notification {
                method,
                params,
                emitted_at_ms,
            } => Wire {
                jsonrpc: "2.0",
                id: None,
                method: Some(method),
                params: Some(params),
                result: None,
                error: None,
                emitted_at_ms: *emitted_at_ms,
            },
            Outgoing::Request { id, method, params } => Wire {
                jsonrpc: "2.0",
                id: Some(Some(id)),
                method: Some(method),
                params: Some(params),
                result: None,
                error: None,
                emitted_at_ms: None,
            },
        };
        // Serializing these plain structs cannot fail (no non-string map keys, no
        // failing Serialize impls); fall back to an internal-error frame just in case.
        let mut line = serde_json::to_vec(&wire).unwrap_or_else(|e| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"error","data":"serialization failed: {}"}}}}"#,
                e.to_string().replace('"', "'")
            )
            .into_bytes()
        });
        line.push(b'\n');
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(o: &Outgoing) -> Value {
        serde_json::from_slice(&o.to_line()).unwrap()
    }

    #[test]
    fn classifies_requests_notifications_and_responses() {
        assert_eq!(
            parse_incoming(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).unwrap(),
            Incoming::Request {
                id: RequestId::Integer(1),
                method: "ping".into(),
                params: None
            }
        );
        // Missing "jsonrpc" is tolerated.
        assert!(matches!(
            parse_incoming(br#"{"method":"notifications/initialized"}"#).unwrap(),
            Incoming::Notification { .. }
        ));
        assert!(matches!(
            parse_incoming(br#"{"jsonrpc":"2.0","id":"a","result":{}}"#).unwrap(),
            Incoming::Response {
                id: RequestId::String(_),
                result: Ok(_)
            }
        ));
        let Incoming::Response { result: Err(e), .. } =
            parse_incoming(br#"{"jsonrpc":"2.0","id":0,"error":{"code":-1,"message":"no"}}"#)
                .unwrap()
        else {
            panic!("expected error response")
        };
        assert_eq!(e.code, -1);
    }

    #[test]
    fn rejects_bad_frames_with_reasons() {
        let r = parse_incoming(b"not json").unwrap_err();
        assert_eq!((r.id, r.error.code), (None, PARSE_ERROR));
        let r = parse_incoming(b"{\"id\":1,\"method\":\"p\xff\"}").unwrap_err();
        assert_eq!(r.error.code, PARSE_ERROR);
        assert!(r.error.message.contains("UTF-8"), "{}", r.error.message);
        let r = parse_incoming(br#"[{"id":1,"method":"ping"}]"#).unwrap_err();
        assert_eq!(r.error.code, INVALID_REQUEST);
        let r = parse_incoming(br#"{"id":1.5,"method":"ping"}"#).unwrap_err();
        assert!(r.error.message.contains("`id`"));
        let r = parse_incoming(br#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#).unwrap_err();
        assert_eq!(r.id, Some(RequestId::Integer(3)));
        let r = parse_incoming(br#"{"id":3,"method":"ping","params":5}"#).unwrap_err();
        assert!(r.error.message.contains("`params`"));
        let r = parse_incoming(br#"{"id":3}"#).unwrap_err();
        assert_eq!(r.error.code, INVALID_REQUEST);
    }

    #[test]
    fn serializes_flat_with_version() {
        assert_eq!(
            line(&Outgoing::Response {
                id: RequestId::String("x".into()),
                result: json!({})
            }),
            json!({"jsonrpc":"2.0","id":"x","result":{}})
        );
        assert_eq!(
            line(&Outgoing::Error {
                id: None,
                error: RpcError::parse_error("bad")
            }),
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: bad"}})
        );
        assert_eq!(
            line(&Outgoing::Notification {
                method: "codex/event".into(),
                params: json!({"a":1}),
                emitted_at_ms: None,
            }),
            json!({"jsonrpc":"2.0","method":"codex/event","params":{"a":1}})
        );
        assert_eq!(
            line(&Outgoing::Notification {
                method: "turn/started".into(),
                params: json!({}),
                emitted_at_ms: Some(1_764_000_000_123),
            }),
            json!({"jsonrpc":"2.0","method":"turn/started","params":{},"emittedAtMs":1_764_000_000_123_i64})
        );
        assert_eq!(
            line(&Outgoing::Request {
                id: RequestId::Integer(0),
                method: "elicitation/create".into(),
                params: json!({})
            }),
            json!({"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{}})
        );
    }
}
