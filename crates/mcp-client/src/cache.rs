//! On-disk tool-catalog cache: `$HOME/cache/mcp/<sha1(server identity)>.json`.
//!
//! The identity is the server name plus its transport settings, so editing `command`, `args` or
//! `url` starts a fresh cache, while filters and approval modes (applied after listing) do not.
//! A catalog is served only while its server is starting; a live listing replaces it.

use oi_config::mcp::{McpServerConfig, McpServerTransportConfig};
use serde::{Deserialize, Serialize};
use sha1::{Digest, Sha1};
use std::path::{Path, PathBuf};

const SCHEMA_VERSION: u32 = 1;

#[derive(Serialize, Deserialize)]
struct CacheFile {
    schema_version: u32,
    server: String,
    /// Raw MCP `Tool` objects as the server listed them.
    tools: Vec<serde_json::Value>,
    /// When they were listed (Unix milliseconds), if the server gave a freshness hint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    listed_at_ms: Option<i64>,
    /// The list's `ttlMs` (2026-07-28): how long it stays fresh.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ttl_ms: Option<u64>,
}

/// A catalog read back from the cache.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CachedCatalog {
    pub tools: Vec<serde_json::Value>,
    /// How much longer the list is fresh by the server's `ttlMs`; `None`: no hint, or it
    /// has expired.
    pub fresh_for: Option<std::time::Duration>,
}

/// The cache file for `server` under `home`.
pub(crate) fn cache_path(home: &Path, server: &str, config: &McpServerConfig) -> PathBuf {
    let identity = match &config.transport {
        McpServerTransportConfig::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd,
        } => serde_json::json!({
            "server": server,
            "type": "stdio",
            "command": command,
            "args": args,
            "env": env,
            "env_vars": env_vars.iter().map(|v| &v.name).collect::<Vec<_>>(),
            "cwd": cwd,
        }),
        McpServerTransportConfig::StreamableHttp {
            url, http_headers, ..
        } => serde_json::json!({
            "server": server,
            "type": "streamable_http",
            "url": url,
            "http_headers": http_headers,
        }),
    };
    let mut identity = identity;
    // What we offer changes what some servers list (server-everything lists its sampling tool
    // only to a client that offers sampling). Added only when on, so other digests stay.
    if config.sampling.is_enabled() {
        identity["sampling"] = serde_json::Value::Bool(true);
    }
    let digest = hex::encode(Sha1::digest(identity.to_string().as_bytes()));
    home.join("cache")
        .join("mcp")
        .join(format!("{digest}.json"))
}

/// Reads a cached catalog on the blocking pool (startup must not stall the runtime on disk);
/// `None` if missing, unreadable, or from another schema version.
pub(crate) async fn load(path: PathBuf, server: String) -> Option<CachedCatalog> {
    match tokio::task::spawn_blocking(move || read(&path, &server)).await {
        Ok(tools) => tools,
        Err(e) => {
            tracing::warn!("reading the MCP tool cache failed: {e}");
            None
        }
    }
}

/// Writes a catalog on the blocking pool (see [`write`]), with its freshness hint (`ttlMs`)
/// counted from now. Failures are logged, never fatal.
pub(crate) async fn store(
    path: PathBuf,
    server: String,
    tools: Vec<serde_json::Value>,
    ttl: Option<std::time::Duration>,
) {
    let freshness = ttl.map(|ttl| (unix_now_ms(), ttl.as_millis() as u64));
    if let Err(e) =
        tokio::task::spawn_blocking(move || write(&path, &server, &tools, freshness)).await
    {
        tracing::warn!("writing the MCP tool cache failed: {e}");
    }
}

/// The largest catalog read back: far above a real server's tool list.
const CACHE_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// Writes `value` as the JSON file `path` in the cache folder, whole or not at all: into a
/// temporary file beside it, renamed over it (a reader never sees half a file).
pub(crate) fn write_json(path: &Path, value: &impl Serialize) -> std::io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| std::io::Error::other("cache path has no parent"))?;
    std::fs::create_dir_all(dir)?;
    let body = serde_json::to_vec(value).map_err(std::io::Error::other)?;
    let tmp = path.with_extension(format!("json.tmp{}", std::process::id()));
    write_new(&tmp, &body)?;
    std::fs::rename(&tmp, path)
}

/// Writes `bytes` to the temporary file `tmp`, replacing a regular file left there by a
/// crash but never opening anything else (a FIFO planted at that name would block a write).
fn write_new(tmp: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = oi_config::project_file::open_regular_with(
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true),
        tmp,
    )?;
    file.write_all(bytes)
}

/// Read a cached catalog; `None` if missing, unreadable, or from another schema version.
fn read(path: &Path, server: &str) -> Option<CachedCatalog> {
    // Bounded, non-blocking, regular files only: the home is not ours alone.
    let bytes = oi_config::project_file::read_bytes_capped(path, CACHE_MAX_BYTES).ok()?;
    let file: CacheFile = match serde_json::from_slice(&bytes) {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!("ignoring corrupt MCP tool cache {}: {e}", path.display());
            return None;
        }
    };
    if file.schema_version != SCHEMA_VERSION || file.server != server {
        return None;
    }
    let fresh_for = match (file.listed_at_ms, file.ttl_ms) {
        (Some(at), Some(ttl)) => {
            let age = unix_now_ms().saturating_sub(at).max(0) as u64;
            // A clock that went back makes the age negative: not trusted as fresh.
            (unix_now_ms() >= at && age < ttl).then(|| std::time::Duration::from_millis(ttl - age))
        }
        _ => None,
    };
    Some(CachedCatalog {
        tools: file.tools,
        fresh_for,
    })
}

/// Write a catalog atomically (temp file + rename). Failures are logged, never fatal.
fn write(path: &Path, server: &str, tools: &[serde_json::Value], freshness: Option<(i64, u64)>) {
    let result = write_json(
        path,
        &CacheFile {
            schema_version: SCHEMA_VERSION,
            server: server.to_string(),
            tools: tools.to_vec(),
            listed_at_ms: freshness.map(|(at, _)| at),
            ttl_ms: freshness.map(|(_, ttl)| ttl),
        },
    );
    if let Err(e) = result {
        tracing::warn!("could not write MCP tool cache {}: {e}", path.display());
    }
}

/// How long a startup failure is remembered: within it, headless starts wait only
/// [`RECENT_FAILURE_GRACE`] for the server instead of its whole `startup_timeout_sec`.
pub(crate) const FAILURE_MEMORY: std::time::Duration = std::time::Duration::from_secs(10 * 60);
/// How long a headless start waits for an optional server that failed recently.
pub(crate) const RECENT_FAILURE_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// A remembered startup failure of one server configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub(crate) struct RecentFailure {
    /// Unix seconds.
    pub at: i64,
    pub message: String,
}

impl RecentFailure {
    /// Seconds since the failure.
    pub(crate) fn age_secs(&self) -> i64 {
        (unix_now() - self.at).max(0)
    }
}

fn unix_now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

/// Beside the catalog cache: `<digest>.failed.json`.
pub(crate) fn failure_path(cache_path: &Path) -> PathBuf {
    cache_path.with_extension("failed.json")
}

/// The failure remembered at `path`, if it is younger than [`FAILURE_MEMORY`].
pub(crate) async fn recent_failure(path: PathBuf) -> Option<RecentFailure> {
    tokio::task::spawn_blocking(move || {
        // Bounded: a failure record is a line of JSON.
        let text = oi_config::project_file::read_text_capped(&path, 64 * 1024).ok()?;
        let failure: RecentFailure = serde_json::from_str(&text).ok()?;
        (failure.age_secs() < FAILURE_MEMORY.as_secs() as i64).then_some(failure)
    })
    .await
    .ok()
    .flatten()
}

/// Remembers that the server failed to start with `message`.
pub(crate) async fn record_failure(path: PathBuf, message: String) {
    let _ = tokio::task::spawn_blocking(move || {
        let failure = RecentFailure {
            at: unix_now(),
            message,
        };
        let result = write_json(&path, &failure);
        if let Err(e) = result {
            tracing::debug!("could not remember the MCP startup failure: {e}");
        }
    })
    .await;
}

/// Forgets a remembered failure (the server started).
pub(crate) async fn clear_failure(path: PathBuf) {
    let _ = tokio::task::spawn_blocking(move || std::fs::remove_file(path)).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn round_trip_and_keying() {
        let home = tempfile::tempdir().unwrap();
        let a = McpServerConfig::stdio("srv", vec!["a".into()]);
        let b = McpServerConfig::stdio("srv", vec!["b".into()]);
        let mut a_filtered = a.clone();
        a_filtered.disabled_tools = Some(vec!["x".into()]);
        let pa = cache_path(home.path(), "s", &a);
        assert_ne!(pa, cache_path(home.path(), "s", &b), "args change the key");
        assert_ne!(
            pa,
            cache_path(home.path(), "t", &a),
            "the name changes the key"
        );
        assert_eq!(
            pa,
            cache_path(home.path(), "s", &a_filtered),
            "filters do not"
        );
        assert!(pa.starts_with(home.path().join("cache/mcp")));

        let load = |server: &str| load(pa.clone(), server.to_string());
        assert!(load("s").await.is_none());
        let tools = vec![serde_json::json!({"name":"echo","inputSchema":{"type":"object"}})];
        store(pa.clone(), "s".into(), tools.clone(), None).await;
        assert_eq!(
            load("s").await.unwrap(),
            CachedCatalog {
                tools: tools.clone(),
                fresh_for: None
            }
        );
        // With the server's ttlMs the list is fresh for that long, and then no longer.
        store(
            pa.clone(),
            "s".into(),
            tools.clone(),
            Some(std::time::Duration::from_secs(3600)),
        )
        .await;
        let fresh = load("s").await.unwrap().fresh_for.unwrap();
        assert!(fresh > std::time::Duration::from_secs(3590), "{fresh:?}");
        store(
            pa.clone(),
            "s".into(),
            tools.clone(),
            Some(std::time::Duration::ZERO),
        )
        .await;
        assert_eq!(load("s").await.unwrap().fresh_for, None);
        assert!(load("other").await.is_none());
        std::fs::write(&pa, "{not json").unwrap();
        assert!(load("s").await.is_none());
    }
}
