//! Which MCP protocol revision a server is spoken to in, and what we remember of it.
//!
//! Two eras are live: 2026-07-28 (no handshake; `server/discover`, then every request carries
//! its own `_meta`) and the `initialize` handshake of 2025-11-25 and before. The server's
//! `protocol_version` setting picks one, or `auto` probes with `server/discover` and, when the
//! answer shows a server of the handshake era (an error such as "method not found", an HTTP
//! 4xx, a result that is not a discover result), continues with `initialize`. Over HTTP that
//! is rmcp's `ClientLifecycleMode::Auto`, on the same connection (and its OAuth session). A
//! stdio server gets a new process for `initialize` instead: rmcp's Auto also falls back after
//! 10 s without an answer, and a cold stdio server slower than that — a first `npx` run, a
//! Python server on a busy machine — answers the probe late, on the same pipe, where the late
//! answer then breaks the handshake.
//!
//! What a server negotiated is remembered beside its catalog cache, so the next start of an
//! `auto` server of the handshake era goes straight to `initialize` (one connection, not two).
//! A remembered handshake server that has since become modern-only refuses `initialize` with
//! -32022, and is then probed again.

use oi_config::mcp::McpProtocolVersion;
use rmcp::model::{ErrorCode, ProtocolVersion};
use rmcp::service::{ClientInitializeError, ClientLifecycleMode};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// The one version of the handshake-free era we speak.
pub(crate) const MODERN: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// What earlier runs learned of a server, for its next start.
#[derive(Clone, Debug, Default)]
pub(crate) struct Prior {
    /// The era it negotiated.
    pub era: Option<Era>,
    /// Its cached tool list while that is still fresh by the `ttlMs` it came with, and for
    /// how much longer: the start then skips `tools/list`.
    pub fresh_tools: Option<(Vec<serde_json::Value>, std::time::Duration)>,
}

/// The protocol era a connection runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Era {
    /// 2026-07-28: `server/discover` and per-request `_meta`.
    Discover,
    /// The `initialize` handshake (2025-11-25 and before).
    Initialize,
}

/// How one connection attempt opens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Opening {
    /// `server/discover` only: a server that does not know it fails the attempt.
    Discover,
    /// `initialize` only.
    Initialize,
    /// Probe with `server/discover`; a server of the handshake era is opened again with
    /// `initialize`.
    Probe,
}

impl Opening {
    /// The first way to open a server with this setting, given what it negotiated before.
    pub(crate) fn first(setting: McpProtocolVersion, remembered: Option<Era>) -> Self {
        match (setting, remembered) {
            (McpProtocolVersion::V2026_07_28, _) => Opening::Discover,
            (McpProtocolVersion::V2025_11_25, _) => Opening::Initialize,
            (McpProtocolVersion::Auto, Some(Era::Initialize)) => Opening::Initialize,
            (McpProtocolVersion::Auto, _) => Opening::Probe,
        }
    }

    /// What to try after this opening failed with `error`, if anything (only for `auto`): a
    /// probe the server answered as a server of the handshake era does (any correlated error
    /// that is not one of 2026-07-28's own rejections, an HTTP 4xx, a result that is not a
    /// `server/discover` result, or a discover result without our version) is followed by
    /// `initialize`; a remembered handshake server that now refuses `initialize` as an
    /// unsupported version (-32022) is probed.
    pub(crate) fn retry(
        self,
        setting: McpProtocolVersion,
        error: &ClientInitializeError,
    ) -> Option<Self> {
        if setting != McpProtocolVersion::Auto {
            return None;
        }
        match (self, error) {
            (Opening::Initialize, e) if refused_version(e).is_some() => Some(Opening::Probe),
            (Opening::Probe, ClientInitializeError::JsonRpcError(e))
                if !is_modern_rejection(e.code) =>
            {
                Some(Opening::Initialize)
            }
            (
                Opening::Probe,
                ClientInitializeError::ExpectedInitResult(_)
                | ClientInitializeError::ExpectedInitResponse(_)
                | ClientInitializeError::NoCompatibleProtocolVersion { .. },
            ) => Some(Opening::Initialize),
            _ => None,
        }
    }

    /// How rmcp opens the connection; `http`: a streamable-HTTP server, where a probe falls
    /// back on the same connection.
    pub(crate) fn lifecycle(self, http: bool) -> ClientLifecycleMode {
        match self {
            Opening::Initialize => ClientLifecycleMode::Initialize,
            Opening::Probe if http => ClientLifecycleMode::Auto {
                preferred_versions: vec![MODERN],
                legacy_version: Some(crate::handler::LEGACY_PROTOCOL_VERSION),
            },
            Opening::Discover | Opening::Probe => ClientLifecycleMode::Discover {
                preferred_versions: vec![MODERN],
            },
        }
    }
}

/// 2026-07-28's own ways to refuse a request: a modern server said this, not an old one.
fn is_modern_rejection(code: ErrorCode) -> bool {
    matches!(
        code,
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
            | ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
            | ErrorCode::HEADER_MISMATCH
    )
}

/// The versions a server said it supports when it refused ours (-32022), if that is why the
/// start failed.
pub(crate) fn refused_version(error: &ClientInitializeError) -> Option<Vec<String>> {
    match error {
        ClientInitializeError::JsonRpcError(e)
            if e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION =>
        {
            Some(
                e.data
                    .as_ref()
                    .and_then(|d| d.get("supported"))
                    .and_then(|s| s.as_array())
                    .map(|list| {
                        list.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
            )
        }
        ClientInitializeError::LegacyFallbackFailed { fallback, .. } => refused_version(fallback),
        _ => None,
    }
}

/// A start that failed because the server does not speak the era the setting pins: the
/// line that says so and names the setting to change.
pub(crate) fn era_mismatch(
    server: &str,
    setting: McpProtocolVersion,
    error: &ClientInitializeError,
) -> Option<String> {
    match setting {
        McpProtocolVersion::V2025_11_25 => {
            let supported = refused_version(error)?;
            let list = if supported.is_empty() {
                "another version".to_string()
            } else {
                supported.join(", ")
            };
            Some(format!(
                "MCP server `{server}` does not speak protocol 2025-11-25 (it supports {list}); set `protocol_version = \"auto\"` in [mcp_servers.{server}]"
            ))
        }
        McpProtocolVersion::V2026_07_28 => match error {
            ClientInitializeError::JsonRpcError(e) => Some(format!(
                "MCP server `{server}` does not speak protocol 2026-07-28 (it answered server/discover with error {}: {}); set `protocol_version = \"auto\"` or \"2025-11-25\" in [mcp_servers.{server}]",
                e.code.0, e.message
            )),
            ClientInitializeError::NoCompatibleProtocolVersion {
                server_supported, ..
            } => Some(format!(
                "MCP server `{server}` does not speak protocol 2026-07-28 (it supports {}); set `protocol_version = \"auto\"` in [mcp_servers.{server}]",
                server_supported
                    .iter()
                    .map(|v| v.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
            _ => None,
        },
        McpProtocolVersion::Auto => None,
    }
}

/// What a connection negotiated, for status displays.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Negotiated {
    /// The protocol version in use, e.g. `2026-07-28` or `2025-11-25`.
    pub version: String,
    /// The protocol era the version belongs to.
    pub era: Era,
    /// The server offers the Tasks extension (`io.modelcontextprotocol/tasks`): its
    /// task-only tools can be called.
    #[serde(default)]
    pub tasks: bool,
}

impl Negotiated {
    pub(crate) fn of(version: &ProtocolVersion) -> Self {
        Self {
            version: version.as_str().to_string(),
            era: if version.has_initialize() {
                Era::Initialize
            } else {
                Era::Discover
            },
            tasks: false,
        }
    }
}

/// Beside the catalog cache: `<digest>.protocol.json`.
pub(crate) fn memory_path(cache_path: &std::path::Path) -> PathBuf {
    cache_path.with_extension("protocol.json")
}

/// What a server negotiated in an earlier run, if remembered.
pub(crate) async fn remembered(path: PathBuf) -> Option<Negotiated> {
    tokio::task::spawn_blocking(move || {
        // Bounded, non-blocking, regular files only (the record is one short line): the
        // home is not ours alone.
        let text = oi_config::project_file::read_text_capped(&path, 4096).ok()?;
        serde_json::from_str::<Negotiated>(&text).ok()
    })
    .await
    .ok()
    .flatten()
}

/// What `server` negotiated the last time it started, as remembered beside its catalog cache
/// (for `interpreter mcp get`, which does not connect).
pub async fn last_negotiated(
    home: &std::path::Path,
    server: &str,
    config: &oi_config::mcp::McpServerConfig,
) -> Option<Negotiated> {
    remembered(memory_path(&crate::cache::cache_path(home, server, config))).await
}

/// Remembers what a server negotiated (written only when it changed).
pub(crate) async fn remember(path: PathBuf, negotiated: Negotiated, before: Option<Negotiated>) {
    if before.as_ref() == Some(&negotiated) {
        return;
    }
    let _ = tokio::task::spawn_blocking(move || {
        let result = crate::cache::write_json(&path, &negotiated);
        if let Err(e) = result {
            tracing::debug!("could not remember the MCP protocol version: {e}");
        }
    })
    .await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::ErrorData;

    fn unsupported(supported: &[&str]) -> ClientInitializeError {
        ClientInitializeError::JsonRpcError(ErrorData::new(
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
            "unsupported",
            Some(serde_json::json!({"supported": supported, "requested": "2025-11-25"})),
        ))
    }

    #[test]
    fn the_setting_and_the_memory_choose_the_opening() {
        use McpProtocolVersion::*;
        assert_eq!(Opening::first(Auto, None), Opening::Probe);
        assert_eq!(Opening::first(Auto, Some(Era::Discover)), Opening::Probe);
        assert_eq!(
            Opening::first(Auto, Some(Era::Initialize)),
            Opening::Initialize
        );
        assert_eq!(
            Opening::first(V2026_07_28, Some(Era::Initialize)),
            Opening::Discover
        );
        assert_eq!(
            Opening::first(V2025_11_25, Some(Era::Discover)),
            Opening::Initialize
        );
    }

    #[test]
    fn a_remembered_handshake_server_that_went_modern_is_probed_again() {
        let refused = unsupported(&["2026-07-28"]);
        assert_eq!(
            Opening::Initialize.retry(McpProtocolVersion::Auto, &refused),
            Some(Opening::Probe)
        );
        // Pinned: no second try, but a message naming the setting.
        assert_eq!(
            Opening::Initialize.retry(McpProtocolVersion::V2025_11_25, &refused),
            None
        );
        let line = era_mismatch("docs", McpProtocolVersion::V2025_11_25, &refused).unwrap();
        assert!(line.contains("supports 2026-07-28"), "{line}");
        assert!(line.contains("protocol_version = \"auto\""), "{line}");
        // Any other failure is not retried.
        let other = ClientInitializeError::ConnectionClosed("eof".into());
        assert_eq!(
            Opening::Initialize.retry(McpProtocolVersion::Auto, &other),
            None
        );
        assert_eq!(Opening::Probe.retry(McpProtocolVersion::Auto, &other), None);
    }

    #[test]
    fn a_probe_answered_the_old_way_is_followed_by_initialize() {
        let method_not_found = ClientInitializeError::JsonRpcError(ErrorData::new(
            ErrorCode::METHOD_NOT_FOUND,
            "Method not found",
            None,
        ));
        for old_way in [
            method_not_found,
            ClientInitializeError::ExpectedInitResult(None),
        ] {
            assert_eq!(
                Opening::Probe.retry(McpProtocolVersion::Auto, &old_way),
                Some(Opening::Initialize)
            );
            assert_eq!(
                Opening::Discover.retry(McpProtocolVersion::V2026_07_28, &old_way),
                None
            );
        }
        // A modern server's own refusal is not a sign of an old one.
        let missing = ClientInitializeError::JsonRpcError(ErrorData::new(
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            "missing",
            None,
        ));
        assert_eq!(
            Opening::Probe.retry(McpProtocolVersion::Auto, &missing),
            None
        );
    }

    #[test]
    fn the_negotiated_era_follows_the_version() {
        assert_eq!(
            Negotiated::of(&ProtocolVersion::V_2026_07_28).era,
            Era::Discover
        );
        assert_eq!(
            Negotiated::of(&ProtocolVersion::V_2025_06_18).era,
            Era::Initialize
        );
    }

    #[tokio::test]
    async fn the_memory_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let path = memory_path(&dir.path().join("abc.json"));
        assert_eq!(remembered(path.clone()).await, None);
        remember(
            path.clone(),
            Negotiated::of(&ProtocolVersion::V_2025_11_25),
            None,
        )
        .await;
        assert_eq!(
            remembered(path.clone()).await.map(|n| n.era),
            Some(Era::Initialize)
        );
        std::fs::write(&path, "{not json").unwrap();
        assert_eq!(remembered(path).await, None);
    }
}
