//! HTTP plumbing: request headers from provider config, rate-limit headers, and error
//! messages that tell the user what to fix.

use std::collections::BTreeMap;
use std::error::Error as _;
use std::time::Duration;

use oi_config::provider::ModelProviderInfo;
use oi_protocol::config_types::{AuthHeader, WireApi};
use oi_protocol::protocol::{RateLimitSnapshot, RateLimitWindow};
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::ModelError;
use crate::chat::error_text;
use crate::sse::truncate;

/// Headers sent with every request: the key (a bearer token or `x-api-key`, as
/// `auth_header` says), `anthropic-version` on the Messages wire, `http_headers`,
/// `env_http_headers` (these two last, so they can replace the others).
pub(crate) fn build_headers(
    provider: &ModelProviderInfo,
    provider_id: &str,
    api_key: Option<&str>,
) -> Result<HeaderMap, ModelError> {
    let mut headers = HeaderMap::new();
    headers.insert(
        reqwest::header::ACCEPT,
        HeaderValue::from_static("text/event-stream"),
    );
    if provider.wire_api == WireApi::Messages {
        headers.insert(
            HeaderName::from_static("anthropic-version"),
            HeaderValue::from_static(crate::messages::ANTHROPIC_VERSION),
        );
    }
    if let Some(key) = api_key {
        let (name, text) = match provider.auth_header() {
            AuthHeader::Bearer => (AUTHORIZATION, format!("Bearer {key}")),
            AuthHeader::XApiKey => (HeaderName::from_static("x-api-key"), key.to_string()),
        };
        let mut value = HeaderValue::from_str(&text).map_err(|_| {
            ModelError::Config(format!(
                "the API key for model provider `{provider_id}` contains characters that cannot be sent in an HTTP header; check the value of `{}`",
                provider.env_key.as_deref().unwrap_or("env_key")
            ))
        })?;
        value.set_sensitive(true);
        headers.insert(name, value);
    }
    let bad = |key: &str, name: &str| {
        ModelError::Config(format!(
            "`model_providers.{provider_id}.{key}` has an invalid header `{name}`: names must be HTTP tokens and values printable ASCII"
        ))
    };
    for (name, value) in provider.http_headers.iter().flatten() {
        let n = HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad("http_headers", name))?;
        let v = HeaderValue::from_str(value).map_err(|_| bad("http_headers", name))?;
        headers.insert(n, v);
    }
    for (name, var) in provider.env_http_headers.iter().flatten() {
        let Ok(value) = std::env::var(var) else {
            continue;
        };
        if value.trim().is_empty() {
            continue;
        }
        let n =
            HeaderName::from_bytes(name.as_bytes()).map_err(|_| bad("env_http_headers", name))?;
        let mut v =
            HeaderValue::from_str(value.trim()).map_err(|_| bad("env_http_headers", name))?;
        // Values from the environment are often tokens; keep them out of debug output.
        v.set_sensitive(true);
        headers.insert(n, v);
    }
    Ok(headers)
}

/// The rate-limit headers of a response, if it had any: OpenAI's `x-ratelimit-*`
/// (`x-ratelimit-limit-requests`) or Anthropic's `anthropic-ratelimit-*`
/// (`anthropic-ratelimit-requests-limit`).
pub(crate) fn rate_limit_snapshot(headers: &HeaderMap) -> Option<RateLimitSnapshot> {
    let raw: BTreeMap<String, String> = headers
        .iter()
        .filter(|(name, _)| {
            name.as_str().starts_with("x-ratelimit-")
                || name.as_str().starts_with("anthropic-ratelimit-")
        })
        .filter_map(|(name, value)| {
            Some((name.as_str().to_string(), value.to_str().ok()?.to_string()))
        })
        .collect();
    if raw.is_empty() {
        return None;
    }
    let window = |kind: &str| -> Option<RateLimitWindow> {
        let num = |prefix: &str| {
            raw.get(&format!("x-ratelimit-{prefix}-{kind}"))
                .or_else(|| raw.get(&format!("anthropic-ratelimit-{kind}-{prefix}")))
                .and_then(|v| v.trim().parse::<f64>().ok())
        };
        let limit = num("limit")?;
        let remaining = num("remaining")?;
        if limit <= 0.0 {
            return None;
        }
        Some(RateLimitWindow {
            used_percent: ((limit - remaining) / limit * 100.0).clamp(0.0, 100.0),
            window_minutes: None,
            resets_at: None,
        })
    };
    Some(RateLimitSnapshot {
        primary: window("requests"),
        secondary: window("tokens"),
        headers: raw,
    })
}

/// What the provider said in an error body: `error.message` when it is JSON, else the text.
pub(crate) fn provider_message(body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return "(empty body)".to_string();
    }
    if let Ok(v) = serde_json::from_str::<Value>(body) {
        let err = v
            .get("error")
            .filter(|e| !e.is_null())
            .or_else(|| v.get("detail"))
            .unwrap_or(&v);
        return truncate(&error_text(err), 500);
    }
    truncate(body, 500)
}

/// Why an error body is one no retry can fix, with what fixes it; `None` for the rest.
/// Recorded wordings: llama.cpp without `--jinja` ("tools param requires --jinja flag",
/// HTTP 500; older builds "Unsupported param: tools"), an account out of credit on a 429
/// (OpenAI's `insufficient_quota`, "exceeded your current quota", gateways' "billing" and
/// "credit"), and Ollama out of memory on a 500 ("model requires more system memory (7.5
/// GiB) than is available (5.2 GiB)", CUDA's "out of memory").
pub(crate) fn permanent_failure(body: &str) -> Option<&'static str> {
    let lower = body.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| lower.contains(w));
    if has(&["requires --jinja", "unsupported param: tools"]) {
        return Some(
            "this llama-server cannot take tool definitions: start it with `--jinja` (its default in current builds; an older build or `--no-jinja` turns it off)",
        );
    }
    if has(&[
        "insufficient_quota",
        "exceeded your current quota",
        "billing",
        "insufficient credit",
        "credit balance",
        "out of credits",
        "payment required",
    ]) {
        return Some(
            "the account has no quota or credit left: add credit or raise the plan's limit with the provider; retrying will not help",
        );
    }
    if has(&[
        "requires more system memory",
        "out of memory",
        "failed to allocate",
        "unable to allocate",
        "cudaerrormemoryallocation",
    ]) {
        return Some(
            "the server has not enough memory to load or run this model: choose a smaller model or quantization, lower the context size, or free memory on the server",
        );
    }
    None
}

pub(crate) struct ErrorContext<'a> {
    pub url: &'a str,
    pub provider: &'a ModelProviderInfo,
    pub provider_id: &'a str,
    pub model: &'a str,
    pub retries: u64,
}

pub(crate) fn http_error(
    status: reqwest::StatusCode,
    body: &str,
    cx: &ErrorContext<'_>,
) -> ModelError {
    let code = status.as_u16();
    let id = cx.provider_id;
    let hint = match code {
        401 | 403 => match &cx.provider.env_key {
            Some(var) => {
                format!("check the API key in the environment variable `{var}` (provider `{id}`)")
            }
            None => format!(
                "provider `{id}` sends no API key; set `env_key` in [model_providers.{id}] to the environment variable that holds it"
            ),
        },
        404 => format!(
            "check `base_url` in [model_providers.{id}] and that the model `{}` exists on that server",
            cx.model
        ),
        429 => format!("rate limited; gave up after {} retries", cx.retries),
        500..=599 => format!("server error; gave up after {} retries", cx.retries),
        _ => "the server rejected the request".to_string(),
    };
    // A context-length error: say so plainly, and carry the window the raw body states (e.g.
    // llama.cpp's `n_ctx`, which the short provider message drops) in words the engine's
    // overflow classifier reads back.
    let hint = match crate::overflow::classify_overflow(body) {
        Some(o) => match o.window {
            Some(n) => format!(
                "the conversation no longer fits the model's context window (maximum context length is {n} tokens); compact it, or set `model_context_window` to the server's real window"
            ),
            None => "the conversation no longer fits the model's context window (context_length_exceeded); compact it, or set `model_context_window` to the server's real window".to_string(),
        },
        None if crate::vision::is_no_vision_error(body) => crate::vision::advice(cx.model),
        None => match permanent_failure(body) {
            Some(fix) => fix.to_string(),
            None => hint,
        },
    };
    ModelError::Http {
        status: code,
        message: format!(
            "{} answered HTTP {status}: {} — {hint}",
            cx.url,
            provider_message(body)
        ),
    }
}

pub(crate) fn connect_error(err: &reqwest::Error, cx: &ErrorContext<'_>) -> ModelError {
    let retried = if cx.retries > 0 {
        format!(" (gave up after {} retries)", cx.retries)
    } else {
        String::new()
    };
    let chain = error_chain(err);
    let fix = match refused_local_hint(&chain, cx.url, cx.provider_id) {
        Some(hint) => hint,
        None => format!(
            "Check that the server is running and that `base_url` in [model_providers.{}] is right",
            cx.provider_id
        ),
    };
    ModelError::Connect(format!(
        "could not reach the model server at {}: {chain}{retried}. {fix}",
        cx.url
    ))
}

/// For a refused connection to this machine: which server to start, by the provider or the
/// port it is known by, and the built-in local model as the alternative that needs none.
pub(crate) fn refused_local_hint(chain: &str, url: &str, provider_id: &str) -> Option<String> {
    if !chain.to_ascii_lowercase().contains("connection refused") || !crate::is_loopback(url) {
        return None;
    }
    let port = url::Url::parse(url)
        .ok()
        .and_then(|u| u.port_or_known_default());
    let start = match (provider_id, port) {
        ("local", _) => {
            return Some(
                "The built-in local model's server is not running (it stops when unused): run the command again to start it, or see `interpreter local-model status`".to_string(),
            );
        }
        ("ollama", _) | (_, Some(11434)) => "start Ollama (`ollama serve`, or open the Ollama app)",
        ("lmstudio", _) | (_, Some(1234)) => {
            "start LM Studio's server (`lms server start`, or the Developer tab in the app)"
        }
        ("llamacpp", _) | (_, Some(8080)) => {
            "start llama.cpp's server (`llama-server -m MODEL.gguf --port 8080`)"
        }
        ("vllm", _) | (_, Some(8000)) => "start vLLM (`vllm serve MODEL --port 8000`)",
        _ => "start the model server this provider points at",
    };
    Some(format!(
        "Nothing listens there: {start}, or set `base_url` in [model_providers.{provider_id}] to where it runs. To use the built-in local model instead (installed and started for you), pass `-c model_provider=local` or set `model_provider = \"local\"`"
    ))
}

/// The causes of a reqwest error, `: `-joined (reqwest's own message only says "error
/// sending request for url (...)"; the cause says "Connection refused").
pub(crate) fn error_chain(err: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    if err.is_timeout() {
        parts.push("timed out".to_string());
    }
    let mut source = err.source();
    while let Some(s) = source {
        let text = s.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        source = s.source();
    }
    if parts.is_empty() {
        parts.push(err.to_string());
    }
    parts.join(": ")
}

/// Up to `limit` bytes of a (non-stream) body, never waiting longer than `idle` per chunk.
pub(crate) async fn read_body_limited(
    mut resp: reqwest::Response,
    limit: usize,
    idle: Duration,
) -> String {
    let mut buf: Vec<u8> = Vec::new();
    while buf.len() < limit {
        match tokio::time::timeout(idle, resp.chunk()).await {
            Ok(Ok(Some(chunk))) => buf.extend_from_slice(&chunk),
            _ => break,
        }
    }
    buf.truncate(limit);
    String::from_utf8_lossy(&buf).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limits_from_headers() {
        let mut h = HeaderMap::new();
        h.insert("x-ratelimit-limit-requests", "100".parse().unwrap());
        h.insert("x-ratelimit-remaining-requests", "75".parse().unwrap());
        h.insert("x-ratelimit-reset-requests", "1s".parse().unwrap());
        h.insert("content-type", "text/event-stream".parse().unwrap());
        let snap = rate_limit_snapshot(&h).unwrap();
        assert_eq!(snap.primary.unwrap().used_percent, 25.0);
        assert!(snap.secondary.is_none());
        assert_eq!(snap.headers.len(), 3);
        assert_eq!(snap.headers["x-ratelimit-reset-requests"], "1s");
        assert!(rate_limit_snapshot(&HeaderMap::new()).is_none());
    }

    #[test]
    fn anthropic_rate_limit_headers() {
        let mut h = HeaderMap::new();
        h.insert("anthropic-ratelimit-requests-limit", "50".parse().unwrap());
        h.insert(
            "anthropic-ratelimit-requests-remaining",
            "40".parse().unwrap(),
        );
        h.insert("anthropic-ratelimit-tokens-limit", "1000".parse().unwrap());
        h.insert(
            "anthropic-ratelimit-tokens-remaining",
            "250".parse().unwrap(),
        );
        let snap = rate_limit_snapshot(&h).unwrap();
        assert_eq!(snap.primary.unwrap().used_percent, 20.0);
        assert_eq!(snap.secondary.unwrap().used_percent, 75.0);
    }

    #[test]
    fn a_refused_local_server_is_named_with_how_to_start_it() {
        let refused =
            "client error (Connect): tcp connect error: Connection refused (os error 111)";
        let hint = |url: &str, id: &str| refused_local_hint(refused, url, id).unwrap_or_default();
        assert!(hint("http://localhost:11434/v1", "ollama").contains("ollama serve"));
        assert!(hint("http://127.0.0.1:1234/v1", "box").contains("LM Studio"));
        assert!(hint("http://localhost:8080/v1", "llamacpp").contains("llama-server -m"));
        assert!(hint("http://localhost:8000/v1", "vllm").contains("vllm serve"));
        for h in [
            hint("http://localhost:11434/v1", "ollama"),
            hint("http://[::1]:9999/v1", "x"),
        ] {
            assert!(h.contains("model_provider = \"local\""), "{h}");
        }
        assert!(hint("http://127.0.0.1:41000/v1", "local").contains("local-model status"));
        // Not refused, or not this machine: no such advice.
        assert_eq!(
            refused_local_hint("timed out", "http://localhost:11434/v1", "ollama"),
            None
        );
        assert_eq!(
            refused_local_hint(refused, "http://gpu-box:11434/v1", "ollama"),
            None
        );
    }

    #[test]
    fn provider_messages() {
        assert_eq!(
            provider_message(r#"{"error":{"message":"bad key","type":"invalid_request_error"}}"#),
            "bad key (invalid_request_error)"
        );
        assert_eq!(provider_message(r#"{"error":"nope"}"#), "nope");
        assert_eq!(provider_message("  "), "(empty body)");
        assert_eq!(provider_message("<html>oops</html>"), "<html>oops</html>");
        assert!(provider_message(&"x".repeat(2000)).len() < 600);
    }
}
