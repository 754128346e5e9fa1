//! A typed result on the wire of its era.
//!
//! 2026-07-28 results carry `resultType` (`"complete"` unless the result says otherwise,
//! e.g. `"input_required"`) and the server's identity in
//! `_meta["io.modelcontextprotocol/serverInfo"]`; cacheable results carry `ttlMs` and
//! `cacheScope`. Results of the `initialize` era keep the shape they always had: no
//! `resultType: "complete"`, no caching hints.

use super::era::{Era, META_SERVER_INFO};
use super::server_implementation;
use oi_jsonrpc::RpcError;
use rmcp::model::{CacheScope, ServerResult};
use serde_json::{Map, Value};

/// How long a client may keep a result, and who may share it (SEP-2549).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Caching {
    pub ttl_ms: u64,
    pub scope: CacheScope,
}

impl Caching {
    /// The same for everyone and fixed for the server's life: the tool list, the resource
    /// templates, what `server/discover` says.
    pub(crate) const FIXED: Caching = Caching {
        ttl_ms: 3_600_000,
        scope: CacheScope::Public,
    };
    /// The user's prompt files: edited now and then; a `subscriptions/listen` change
    /// notification invalidates them sooner.
    pub(crate) const PROMPTS: Caching = Caching {
        ttl_ms: 10_000,
        scope: CacheScope::Private,
    };
    /// The user's threads: any client may start or continue one at any moment, so they are
    /// stale at once (reading them again is cheap).
    pub(crate) const LIVE: Caching = Caching {
        ttl_ms: 0,
        scope: CacheScope::Private,
    };
}

/// `result` as the wire of `era` wants it.
pub(crate) fn finish(era: &Era, result: ServerResult) -> Result<Value, RpcError> {
    let value = serde_json::to_value(result)
        .map_err(|e| RpcError::internal(format!("the result could not be encoded: {e}")))?;
    let Value::Object(mut map) = value else {
        return Err(RpcError::internal("a result is not a JSON object"));
    };
    match era {
        Era::Stateless(_) => {
            map.entry("resultType")
                .or_insert_with(|| Value::String("complete".into()));
            let meta = map
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()));
            if let Value::Object(meta) = meta {
                meta.insert(
                    META_SERVER_INFO.into(),
                    serde_json::to_value(server_implementation()).unwrap_or(Value::Null),
                );
            }
        }
        Era::Handshake => {
            if map.get("resultType").and_then(Value::as_str) == Some("complete") {
                map.remove("resultType");
            }
            map.remove("ttlMs");
            map.remove("cacheScope");
        }
    }
    Ok(Value::Object(map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::era::Envelope;
    use rmcp::model::{ClientCapabilities, ListToolsResult};
    use serde_json::json;

    fn stateless() -> Era {
        Era::Stateless(Box::new(Envelope {
            protocol_version: "2026-07-28".into(),
            client_info: None,
            capabilities: ClientCapabilities::default(),
            log_level: None,
        }))
    }

    #[test]
    fn each_era_gets_its_shape() {
        let list = || {
            ServerResult::ListToolsResult(
                ListToolsResult::with_all_items(vec![])
                    .with_ttl_ms(Caching::FIXED.ttl_ms)
                    .with_cache_scope(Caching::FIXED.scope),
            )
        };
        let modern = finish(&stateless(), list()).unwrap();
        assert_eq!(modern["resultType"], "complete");
        assert_eq!(modern["ttlMs"], 3_600_000);
        assert_eq!(modern["cacheScope"], "public");
        assert_eq!(
            modern["_meta"][META_SERVER_INFO]["name"],
            "openinterpreter-mcp-server"
        );
        assert_eq!(
            finish(&Era::Handshake, list()).unwrap(),
            json!({"tools": []})
        );
        // An empty result is a result too.
        let empty = finish(&stateless(), ServerResult::empty(())).unwrap();
        assert_eq!(empty["resultType"], "complete");
    }
}
