//! Streamable HTTP connection settings: URL and headers with every reference resolved.

use crate::connect_error::{ConnectError, HttpClientError};
use oi_config::mcp::{McpServerTransportConfig, expand_env_refs};
use std::collections::{BTreeMap, HashMap};

/// What the HTTP transport needs, resolved against the host environment.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct HttpSpec {
    pub url: String,
    /// Bearer token (without the `Bearer ` prefix).
    pub bearer_token: Option<String>,
    /// Header name → value, static and env-sourced merged.
    pub headers: BTreeMap<String, String>,
    /// Problems that did not stop the connection (skipped headers).
    pub warnings: Vec<String>,
}

pub(crate) fn http_spec(
    server: &str,
    transport: &McpServerTransportConfig,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<HttpSpec, ConnectError> {
    let McpServerTransportConfig::StreamableHttp {
        url,
        bearer_token_env_var,
        http_headers,
        env_http_headers,
        ..
    } = transport
    else {
        return Err(ConnectError::Config(format!(
            "MCP server `{server}` is not a streamable HTTP server"
        )));
    };
    let url = expand_env_refs(url, lookup)
        .map_err(|e| ConnectError::Config(format!("mcp_servers.{server}.url: {e}")))?;
    let bearer_token = match bearer_token_env_var {
        None => None,
        Some(var) => match lookup(var) {
            None => {
                return Err(ConnectError::Config(format!(
                    "Environment variable {var} for MCP server '{server}' is not set (it is named by `bearer_token_env_var`); export {var}=<token> and try again"
                )));
            }
            Some(v) if v.trim().is_empty() => {
                return Err(ConnectError::Config(format!(
                    "Environment variable {var} for MCP server '{server}' is empty (it is named by `bearer_token_env_var`)"
                )));
            }
            Some(v) => Some(v.trim().to_string()),
        },
    };
    let mut headers = BTreeMap::new();
    let mut warnings = Vec::new();
    for (name, value) in http_headers {
        let value = expand_env_refs(value, lookup).map_err(|e| {
            ConnectError::Config(format!("mcp_servers.{server}.http_headers.{name}: {e}"))
        })?;
        headers.insert(name.clone(), value);
    }
    for (name, var) in env_http_headers {
        match lookup(var) {
            Some(v) if !v.trim().is_empty() => {
                headers.insert(name.clone(), v.trim().to_string());
            }
            _ => warnings.push(format!(
                "MCP server `{server}`: header `{name}` skipped because environment variable {var} is not set"
            )),
        }
    }
    Ok(HttpSpec {
        url,
        bearer_token,
        headers,
        warnings,
    })
}

/// The HTTP client of a streamable-HTTP server connection, configured as rmcp's own default
/// (no idle connection pool: reusing a connection whose last body was not fully read stalls
/// ~40 ms on Linux's delayed ACK; only same-origin 307/308 redirects) but built by `oi-http`,
/// so a plain `http://` server costs no root-certificate read.
pub(crate) fn http_client() -> Result<reqwest::Client, HttpClientError> {
    oi_http::client_builder()
        .pool_max_idle_per_host(0)
        .redirect(oi_http::same_origin_redirects())
        .build()
        .map_err(|e| HttpClientError(e.to_string()))
}

/// The configured HTTP headers as a header map; an invalid name or value is skipped with a
/// warning rather than failing the server.
pub(crate) fn header_map(
    server: &str,
    headers: &std::collections::BTreeMap<String, String>,
) -> HashMap<reqwest::header::HeaderName, reqwest::header::HeaderValue> {
    let mut map = HashMap::new();
    for (k, v) in headers {
        let name = reqwest::header::HeaderName::try_from(k.as_str());
        let value = reqwest::header::HeaderValue::try_from(v.as_str());
        match (name, value) {
            (Ok(n), Ok(v)) => {
                map.insert(n, v);
            }
            _ => tracing::warn!("MCP server `{server}`: skipping invalid HTTP header `{k}`"),
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_config::mcp::McpServerConfig;

    fn cfg() -> McpServerConfig {
        let mut c = McpServerConfig::http("http://127.0.0.1:${PORT:-3001}/mcp");
        if let McpServerTransportConfig::StreamableHttp {
            bearer_token_env_var,
            http_headers,
            env_http_headers,
            ..
        } = &mut c.transport
        {
            *bearer_token_env_var = Some("TOKEN".into());
            http_headers.insert("X-Client".into(), "oi-${VER}".into());
            env_http_headers.insert("X-Auth".into(), "AUTH".into());
            env_http_headers.insert("X-Missing".into(), "NOPE".into());
        }
        c
    }

    #[test]
    fn resolves_url_token_and_headers() {
        let host = |k: &str| match k {
            "TOKEN" => Some("tok".to_string()),
            "VER" => Some("1".to_string()),
            "AUTH" => Some("a".to_string()),
            _ => None,
        };
        let s = http_spec("d", &cfg().transport, &host).unwrap();
        assert_eq!(s.url, "http://127.0.0.1:3001/mcp");
        assert_eq!(s.bearer_token.as_deref(), Some("tok"));
        assert_eq!(s.headers["X-Client"], "oi-1");
        assert_eq!(s.headers["X-Auth"], "a");
        assert!(!s.headers.contains_key("X-Missing"));
        assert_eq!(s.warnings.len(), 1);
    }

    #[test]
    fn missing_bearer_variable_fails_with_its_name() {
        let e = http_spec("d", &cfg().transport, &|k| {
            (k == "VER").then(|| "1".to_string())
        })
        .unwrap_err()
        .to_string();
        assert!(
            e.starts_with("Environment variable TOKEN for MCP server 'd' is not set"),
            "{e}"
        );
    }
}
