//! Which protocol era a request belongs to, from its own `params._meta`.
//!
//! A request whose `_meta` carries `io.modelcontextprotocol/protocolVersion` is a 2026-07-28
//! request: it stands alone, and its `_meta` must also carry
//! `io.modelcontextprotocol/clientCapabilities` (`-32602` otherwise, naming what is missing),
//! name a version served per request (`-32022` with `supported` and `requested`
//! otherwise), and may ask for log messages at a level (`io.modelcontextprotocol/logLevel`,
//! `-32602` for a level that is not one). Anything else is a request of the `initialize`
//! era, served as it always was — except where there is no `initialize` era to fall back
//! to: on the stateless HTTP path, and for the methods only 2026-07-28 has.

use super::STATELESS_VERSIONS;
use super::log::LogLevel;
use oi_jsonrpc::{RpcError, UNSUPPORTED_PROTOCOL_VERSION};
use rmcp::model::{ClientCapabilities, Implementation};
use serde::Serialize;
use serde_json::{Map, Value};

pub(crate) const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";
pub(crate) const META_CLIENT_INFO: &str = "io.modelcontextprotocol/clientInfo";
pub(crate) const META_LOG_LEVEL: &str = "io.modelcontextprotocol/logLevel";
pub(crate) const META_SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";

/// The era of one request.
#[derive(Clone, Debug)]
pub enum Era {
    /// The `initialize` handshake's era (2025-11-25 and earlier): the connection's session
    /// says what the client can do.
    Handshake,
    /// 2026-07-28: the request says everything about itself.
    Stateless(Box<Envelope>),
}

impl Era {
    pub fn is_stateless(&self) -> bool {
        matches!(self, Era::Stateless(_))
    }

    pub fn envelope(&self) -> Option<&Envelope> {
        match self {
            Era::Stateless(e) => Some(e),
            Era::Handshake => None,
        }
    }
}

/// What a 2026-07-28 request's `_meta` says about it.
#[derive(Clone, Debug)]
pub struct Envelope {
    pub protocol_version: String,
    pub client_info: Option<Implementation>,
    pub capabilities: ClientCapabilities,
    /// Log messages of this request at or above this level go on its response stream.
    pub log_level: Option<LogLevel>,
}

/// Where a request arrived, for the requests without a version of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// On a connection (stdio) or session (HTTP) that may have had `initialize`.
    Connection,
    /// On its own (HTTP without a session): there is no handshake era to fall back to.
    Alone,
}

/// The era of a request to `method` with `params`, or the error the request gets.
/// `stateless_only` is true for methods only 2026-07-28 has.
pub(crate) fn classify(
    method: &str,
    params: Option<&Map<String, Value>>,
    arrival: Arrival,
    stateless_only: bool,
) -> Result<Era, RpcError> {
    let meta = params.and_then(|p| p.get("_meta"));
    let has_version = meta
        .and_then(Value::as_object)
        .is_some_and(|m| m.contains_key(META_PROTOCOL_VERSION));
    if !has_version {
        if arrival == Arrival::Connection && !stateless_only {
            return Ok(Era::Handshake);
        }
        return Err(missing_meta(method, meta, arrival));
    }
    let meta = meta.and_then(Value::as_object).cloned().unwrap_or_default();
    envelope(method, &meta).map(|e| Era::Stateless(Box::new(e)))
}

fn envelope(method: &str, meta: &Map<String, Value>) -> Result<Envelope, RpcError> {
    let Some(Value::String(version)) = meta.get(META_PROTOCOL_VERSION) else {
        return Err(RpcError::invalid_params(
            method,
            format!("`_meta.{META_PROTOCOL_VERSION}` must be a string such as \"2026-07-28\""),
        ));
    };
    let capabilities = match meta.get(META_CLIENT_CAPABILITIES) {
        None => {
            return Err(RpcError::invalid_params(
                method,
                format!(
                    "`_meta` is missing the required `{META_CLIENT_CAPABILITIES}` (an object of the capabilities this request may rely on; `{{}}` for none)"
                ),
            ));
        }
        Some(v @ Value::Object(_)) => serde_json::from_value::<ClientCapabilities>(v.clone())
            .map_err(|e| {
                RpcError::invalid_params(
                    method,
                    format!("`_meta.{META_CLIENT_CAPABILITIES}` is not valid: {e}"),
                )
            })?,
        Some(other) => {
            return Err(RpcError::invalid_params(
                method,
                format!(
                    "`_meta.{META_CLIENT_CAPABILITIES}` must be an object, got {}",
                    oi_jsonrpc::message::json_type_name(other)
                ),
            ));
        }
    };
    let log_level = match meta.get(META_LOG_LEVEL) {
        None | Some(Value::Null) => None,
        Some(v) => Some(serde_json::from_value::<LogLevel>(v.clone()).map_err(|_| {
            RpcError::invalid_params(
                method,
                format!(
                    "Invalid log level {v} in `_meta.{META_LOG_LEVEL}`; use one of debug, info, notice, warning, error, critical, alert, emergency"
                ),
            )
        })?),
    };
    if !STATELESS_VERSIONS.contains(&version.as_str()) {
        return Err(unsupported_version(version));
    }
    Ok(Envelope {
        protocol_version: version.clone(),
        // Self-reported, for logs only: a malformed one is not worth refusing the request.
        client_info: meta
            .get(META_CLIENT_INFO)
            .and_then(|v| serde_json::from_value(v.clone()).ok()),
        capabilities,
        log_level,
    })
}

/// `data` of `-32022` (UnsupportedProtocolVersionError).
#[derive(Serialize)]
struct UnsupportedVersion<'a> {
    supported: &'a [&'a str],
    requested: &'a str,
}

/// `data` naming a method.
#[derive(Serialize)]
struct MethodName<'a> {
    method: &'a str,
}

/// A typed error `data` as JSON.
pub(crate) fn error_data(data: impl Serialize) -> Value {
    serde_json::to_value(data).unwrap_or(Value::Null)
}

/// `-32022` for a version not served per request, naming the ones that are.
pub(crate) fn unsupported_version(requested: &str) -> RpcError {
    RpcError::new(
        UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "Unsupported protocol version {requested}: requests carrying their version in _meta are served at {} (the initialize handshake serves 2025-11-25 and earlier)",
            STATELESS_VERSIONS.join(", ")
        ),
    )
    .with_data(error_data(UnsupportedVersion {
        supported: STATELESS_VERSIONS,
        requested,
    }))
}

fn missing_meta(method: &str, meta: Option<&Value>, arrival: Arrival) -> RpcError {
    let what = match meta {
        None => "has no `_meta`".to_string(),
        Some(Value::Object(_)) => format!("has no `_meta.{META_PROTOCOL_VERSION}`"),
        Some(other) => format!(
            "has a `_meta` that is {}, not an object",
            oi_jsonrpc::message::json_type_name(other)
        ),
    };
    let fix = if arrival == Arrival::Alone {
        format!(
            "send `_meta` with `{META_PROTOCOL_VERSION}: \"2026-07-28\"` and `{META_CLIENT_CAPABILITIES}`, or open a session with `initialize` (MCP 2025-11-25 and earlier) and send its mcp-session-id"
        )
    } else {
        format!(
            "{method} exists only in MCP 2026-07-28: send `_meta` with `{META_PROTOCOL_VERSION}: \"2026-07-28\"` and `{META_CLIENT_CAPABILITIES}`"
        )
    };
    RpcError::invalid_params(method, format!("the request {what}; {fix}"))
}

/// `data` of `-32021` (MissingRequiredClientCapabilityError): the capabilities the request
/// lacks, as a `ClientCapabilities` object.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RequiredCapabilities {
    required_capabilities: ClientCapabilities,
}

/// The part of `required` that `declared` lacks (`None`: nothing).
pub(crate) fn missing_capabilities(
    declared: &ClientCapabilities,
    required: &ClientCapabilities,
) -> Option<ClientCapabilities> {
    let mut missing = ClientCapabilities::default();
    if required.sampling.is_some() && declared.sampling.is_none() {
        missing.sampling = required.sampling.clone();
    }
    if required.elicitation.is_some() && declared.elicitation.is_none() {
        missing.elicitation = required.elicitation.clone();
    }
    if required.roots.is_some() && declared.roots.is_none() {
        missing.roots = required.roots.clone();
    }
    if let Some(wanted) = &required.extensions {
        let lacking: Vec<_> = wanted
            .iter()
            .filter(|(k, _)| {
                !declared
                    .extensions
                    .as_ref()
                    .is_some_and(|d| d.contains_key(*k))
            })
            .collect();
        if !lacking.is_empty() {
            let mut e = rmcp::model::ExtensionCapabilities::default();
            for (k, v) in lacking {
                e.insert(k.clone(), v.clone());
            }
            missing.extensions = Some(e);
        }
    }
    (missing != ClientCapabilities::default()).then_some(missing)
}

/// `Ok` when `declared` has everything `required` names; else `-32021`
/// (MissingRequiredClientCapabilityError, HTTP 400) naming what is missing in
/// `data.requiredCapabilities`, with `why` it is needed and how to fix it.
pub(crate) fn require_capabilities(
    declared: &ClientCapabilities,
    required: &ClientCapabilities,
    why: &str,
) -> Result<(), RpcError> {
    let Some(missing) = missing_capabilities(declared, required) else {
        return Ok(());
    };
    let names = serde_json::to_value(&missing)
        .ok()
        .and_then(|v| v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>()))
        .unwrap_or_default()
        .join(", ");
    Err(RpcError::new(
        oi_jsonrpc::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!(
            "Missing required client capability ({names}): {why}; declare it in the request's `_meta.{META_CLIENT_CAPABILITIES}`"
        ),
    )
    .with_data(error_data(RequiredCapabilities {
        required_capabilities: missing,
    })))
}

/// `-32601` for a method 2026-07-28 removed (or an `initialize`-era one sent with a
/// 2026-07-28 `_meta`), saying what replaced it.
pub(crate) fn removed_method(method: &str) -> RpcError {
    let instead = match method {
        "initialize" | "notifications/initialized" => {
            "requests carry their version and capabilities in _meta; `server/discover` describes the server"
        }
        "ping" => "send any request, e.g. `server/discover`",
        "logging/setLevel" => {
            "ask for log messages per request with `_meta.io.modelcontextprotocol/logLevel`"
        }
        "resources/subscribe" | "resources/unsubscribe" => {
            "use `subscriptions/listen` with `notifications.resourceSubscriptions`"
        }
        _ => "see the 2026-07-28 changelog",
    };
    RpcError::new(
        oi_jsonrpc::METHOD_NOT_FOUND,
        format!("method not found: {method} (removed in MCP 2026-07-28; {instead})"),
    )
    .with_data(error_data(MethodName { method }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    fn meta(extra: Value) -> Map<String, Value> {
        let mut m = json!({
            META_PROTOCOL_VERSION: "2026-07-28",
            META_CLIENT_CAPABILITIES: {"elicitation": {}},
            META_CLIENT_INFO: {"name": "t", "version": "1"},
        });
        for (k, v) in extra.as_object().unwrap() {
            m[k] = v.clone();
        }
        params(json!({ "_meta": m }))
    }

    #[test]
    fn a_versioned_meta_is_stateless_and_read_whole() {
        let p = meta(json!({ META_LOG_LEVEL: "warning" }));
        let era = classify("tools/list", Some(&p), Arrival::Connection, false).unwrap();
        let e = era.envelope().unwrap();
        assert_eq!(e.protocol_version, "2026-07-28");
        assert!(e.capabilities.elicitation.is_some());
        assert_eq!(e.client_info.as_ref().unwrap().name, "t");
        assert_eq!(e.log_level, Some(LogLevel::Warning));
    }

    #[test]
    fn no_version_is_the_handshake_era_only_on_a_connection() {
        let p = params(json!({"_meta": {"progressToken": 3}}));
        assert!(matches!(
            classify("tools/list", Some(&p), Arrival::Connection, false),
            Ok(Era::Handshake)
        ));
        let e = classify("tools/list", Some(&p), Arrival::Alone, false).unwrap_err();
        assert_eq!(e.code, oi_jsonrpc::INVALID_PARAMS);
        assert!(e.message.contains("initialize"), "{}", e.message);
        let e = classify("server/discover", None, Arrival::Connection, true).unwrap_err();
        assert!(e.message.contains("has no `_meta`"), "{}", e.message);
    }

    #[test]
    fn a_missing_capability_is_32021_naming_only_what_is_missing() {
        let declared: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {}})).unwrap();
        let required: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {}, "sampling": {}})).unwrap();
        let e = require_capabilities(&declared, &required, "it samples").unwrap_err();
        assert_eq!(e.code, oi_jsonrpc::MISSING_REQUIRED_CLIENT_CAPABILITY);
        assert_eq!(
            e.data,
            Some(json!({"requiredCapabilities": {"sampling": {}}}))
        );
        assert!(
            e.message.contains("(sampling): it samples"),
            "{}",
            e.message
        );
        assert!(require_capabilities(&required, &required, "").is_ok());
        let mut tasks = ClientCapabilities::default();
        tasks.extensions = Some(crate::protocol::extensions());
        let e = require_capabilities(&declared, &tasks, "tasks").unwrap_err();
        assert_eq!(
            e.data,
            Some(
                json!({"requiredCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}})
            )
        );
    }

    #[test]
    fn a_bad_meta_is_named() {
        let mut p = meta(json!({}));
        p["_meta"]
            .as_object_mut()
            .unwrap()
            .remove(META_CLIENT_CAPABILITIES);
        let e = classify("tools/list", Some(&p), Arrival::Alone, false).unwrap_err();
        assert_eq!(e.code, oi_jsonrpc::INVALID_PARAMS);
        assert!(
            e.message.contains(META_CLIENT_CAPABILITIES),
            "{}",
            e.message
        );
        let p = meta(json!({ META_LOG_LEVEL: "loud" }));
        let e = classify("tools/list", Some(&p), Arrival::Alone, false).unwrap_err();
        assert!(e.message.contains("Invalid log level"), "{}", e.message);
        let p = meta(json!({ META_PROTOCOL_VERSION: "v999.0.0" }));
        let e = classify("tools/list", Some(&p), Arrival::Alone, false).unwrap_err();
        assert_eq!(e.code, UNSUPPORTED_PROTOCOL_VERSION);
        assert_eq!(
            e.data,
            Some(json!({"supported": ["2026-07-28"], "requested": "v999.0.0"}))
        );
    }
}
