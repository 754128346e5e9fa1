//! Model providers: where requests go and how they authenticate.

use oi_protocol::config_types::{AuthHeader, WireApi};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One `[model_providers.<id>]` entry (Codex-compatible keys).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelProviderInfo {
    /// Human name, e.g. "Ollama".
    pub name: String,
    /// e.g. `http://localhost:11434/v1`. Requests go to `{base_url}/chat/completions`,
    /// `{base_url}/responses` or `{base_url}/messages` (`{base_url}/v1/messages` when it does
    /// not end in `/v1`).
    pub base_url: Option<String>,
    /// Environment variable holding the API key (sent as [`Self::auth_header`] says).
    #[serde(default)]
    pub env_key: Option<String>,
    /// Extra hint shown when `env_key` is missing.
    #[serde(default)]
    pub env_key_instructions: Option<String>,
    /// The API the provider speaks: Chat Completions or Responses.
    #[serde(default)]
    pub wire_api: WireApi,
    /// Query parameters added to every request URL.
    #[serde(default)]
    pub query_params: Option<BTreeMap<String, String>>,
    /// Static headers.
    #[serde(default)]
    pub http_headers: Option<BTreeMap<String, String>>,
    /// Header name → environment variable whose value is sent (skipped when unset/empty).
    #[serde(default)]
    pub env_http_headers: Option<BTreeMap<String, String>>,
    /// Retries for a failed request (429/5xx/connect error). Default 4.
    #[serde(default)]
    pub request_max_retries: Option<u64>,
    /// Retries for a stream that drops mid-way. Default 5.
    #[serde(default)]
    pub stream_max_retries: Option<u64>,
    /// Abort a stream that sends nothing for this long. Default 300 000 ms.
    #[serde(default)]
    pub stream_idle_timeout_ms: Option<u64>,
    /// Whether the provider needs a key at all (false for local servers).
    #[serde(default)]
    pub requires_openai_auth: bool,
    /// Send the model's reasoning back with the tool calls it led to: Chat `reasoning_content`
    /// (and `reasoning` for gpt-oss) on assistant messages that carry tool calls, Responses
    /// reasoning items as raw `reasoning_text`. DeepSeek's and Moonshot's thinking models
    /// reject a follow-up request without it; most other servers ignore or reject the field.
    /// Unset: decided from the provider's host and the model family (the model client's
    /// `quirks`, documented in docs/providers.md); `false` never sends it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_reasoning_content: Option<bool>,
    /// The agent harness `harness = "auto"` picks for this provider's models, whatever their
    /// family (a server that fronts one family, or a fine-tune named unlike its base).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<oi_protocol::config_types::Harness>,
    /// Whether the model may ask for several tool calls in one response (the request's
    /// `parallel_tool_calls`). Unset: yes, the OpenAI API's default, which vLLM, Ollama and
    /// llama.cpp accept (llama.cpp allows one call per response without it). `false` for a
    /// server or model that handles several calls badly. The engine runs calls that cannot
    /// write concurrently and the rest in order either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_parallel_tool_calls: Option<bool>,
    /// How the key is sent: `Authorization: Bearer` or `x-api-key`. Unset: `x-api-key` on
    /// the Messages wire (Anthropic's own scheme), a bearer token on the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_header: Option<AuthHeader>,
}

/// Retries of a failed request when the provider sets none.
pub const DEFAULT_REQUEST_MAX_RETRIES: u64 = 4;
/// Retries of a broken response stream when the provider sets none.
pub const DEFAULT_STREAM_MAX_RETRIES: u64 = 5;
/// Milliseconds a stream may stay silent when the provider sets none.
pub const DEFAULT_STREAM_IDLE_TIMEOUT_MS: u64 = 300_000;
/// Caps that keep a typo from hammering an endpoint forever.
const MAX_RETRIES_CAP: u64 = 100;

impl ModelProviderInfo {
    /// Retries of a failed request (the provider's, or the default), capped.
    pub fn request_max_retries(&self) -> u64 {
        self.request_max_retries
            .unwrap_or(DEFAULT_REQUEST_MAX_RETRIES)
            .min(MAX_RETRIES_CAP)
    }

    /// Retries of a broken response stream (the provider's, or the default), capped.
    pub fn stream_max_retries(&self) -> u64 {
        self.stream_max_retries
            .unwrap_or(DEFAULT_STREAM_MAX_RETRIES)
            .min(MAX_RETRIES_CAP)
    }

    /// How long a stream may send nothing before it is aborted.
    pub fn stream_idle_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_millis(
            self.stream_idle_timeout_ms
                .unwrap_or(DEFAULT_STREAM_IDLE_TIMEOUT_MS),
        )
    }

    /// How this provider's key is sent ([`Self::auth_header`], else the wire's own scheme).
    pub fn auth_header(&self) -> AuthHeader {
        self.auth_header.unwrap_or(match self.wire_api {
            WireApi::Messages => AuthHeader::XApiKey,
            WireApi::Chat | WireApi::Responses => AuthHeader::Bearer,
        })
    }

    /// The API key from `env_key`, if one is configured: the environment variable, else the
    /// key saved under that name in `home`'s credentials file ([`crate::credentials`]).
    /// `home` is the configuration's home ([`crate::Config::home`]), never assumed.
    ///
    /// `Ok(None)`: no key needed. `Err`: a key is needed and neither the variable nor the file
    /// has one; the message names the variable and how to set it.
    pub fn api_key(&self, home: &std::path::Path) -> Result<Option<String>, MissingApiKey> {
        let Some(var) = &self.env_key else {
            return Ok(None);
        };
        match std::env::var(var) {
            Ok(v) if !v.trim().is_empty() => Ok(Some(v.trim().to_string())),
            _ => {
                // A key saved with the v2 API's `account/login/start`.
                if let Some(key) = crate::credentials::api_key(home, var) {
                    return Ok(Some(key));
                }
                Err(MissingApiKey {
                    provider: self.name.clone(),
                    var: var.clone(),
                    instructions: self.env_key_instructions.clone(),
                })
            }
        }
    }
}

/// A provider needs an API key and neither its environment variable nor the credentials
/// file has one. The message names the variable and how to set it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingApiKey {
    /// The provider's display name.
    pub provider: String,
    /// Its `env_key`.
    pub var: String,
    /// Its `env_key_instructions`, said after the command.
    pub instructions: Option<String>,
}

impl std::fmt::Display for MissingApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let MissingApiKey { provider, var, .. } = self;
        write!(
            f,
            "model provider `{provider}` needs an API key in the environment variable `{var}`, \
             which is not set. Run `export {var}=<your key>` and try again"
        )?;
        if let Some(extra) = &self.instructions {
            write!(f, " ({extra})")?;
        }
        f.write_str(".")
    }
}

impl std::error::Error for MissingApiKey {}

impl ModelProviderInfo {
    /// A provider with only its name set: every other key at its default (chat wire, no
    /// key, no headers, default retries).
    pub(crate) fn named(name: String) -> Self {
        ModelProviderInfo {
            name,
            base_url: None,
            env_key: None,
            env_key_instructions: None,
            wire_api: WireApi::Chat,
            query_params: None,
            http_headers: None,
            env_http_headers: None,
            request_max_retries: None,
            stream_max_retries: None,
            stream_idle_timeout_ms: None,
            requires_openai_auth: false,
            send_reasoning_content: None,
            harness: None,
            supports_parallel_tool_calls: None,
            auth_header: None,
        }
    }
}

fn builtin(
    name: &str,
    base_url: &str,
    env_key: Option<&str>,
    instructions: Option<&str>,
) -> ModelProviderInfo {
    ModelProviderInfo {
        base_url: Some(base_url.to_string()),
        env_key: env_key.map(str::to_string),
        env_key_instructions: instructions.map(str::to_string),
        ..ModelProviderInfo::named(name.to_string())
    }
}

/// The id used when nothing is configured.
pub const DEFAULT_PROVIDER_ID: &str = "ollama";
/// The built-in local model: a `llama-server` the agent installs, starts and stops itself
/// (crates/local-model). Its provider has no `base_url`: the front end fills it in once the
/// server runs. Also what runs when nothing is configured and Ollama is not running.
pub const LOCAL_PROVIDER_ID: &str = "local";
/// The model of the `local` provider (the name its server answers to).
pub const LOCAL_MODEL: &str = "qwen2.5-coder-1.5b-instruct";
/// The model used with the default provider when nothing is configured.
pub const DEFAULT_OLLAMA_MODEL: &str = "qwen3-coder:30b";

/// Built-in providers. A `[model_providers.<id>]` table with the same id replaces one.
pub fn builtin_providers() -> BTreeMap<String, ModelProviderInfo> {
    let env = |name: &str| std::env::var(name).ok();
    let ollama_base = ollama_base_url(env("OLLAMA_BASE_URL"), env("OLLAMA_HOST"));
    let mut m = BTreeMap::new();
    m.insert("ollama".into(), builtin("Ollama", &ollama_base, None, None));
    m.insert(
        LOCAL_PROVIDER_ID.into(),
        ModelProviderInfo::named("built-in local model (llama.cpp, Qwen2.5-Coder-1.5B)".into()),
    );
    m.insert(
        "llamacpp".into(),
        builtin(
            "llama.cpp (llama-server)",
            "http://localhost:8080/v1",
            None,
            None,
        ),
    );
    m.insert(
        "lmstudio".into(),
        builtin("LM Studio", "http://localhost:1234/v1", None, None),
    );
    m.insert(
        "vllm".into(),
        builtin("vLLM", "http://localhost:8000/v1", None, None),
    );
    m.insert(
        "openrouter".into(),
        builtin(
            "OpenRouter",
            "https://openrouter.ai/api/v1",
            Some("OPENROUTER_API_KEY"),
            Some("create one at openrouter.ai/keys"),
        ),
    );
    m.insert(
        "moonshot".into(),
        builtin(
            "Moonshot AI (Kimi)",
            "https://api.moonshot.ai/v1",
            Some("MOONSHOT_API_KEY"),
            None,
        ),
    );
    m.insert(
        "zhipu".into(),
        builtin(
            "Zhipu AI / Z.ai (GLM)",
            "https://api.z.ai/api/paas/v4",
            Some("ZHIPU_API_KEY"),
            None,
        ),
    );
    m.insert(
        "deepseek".into(),
        builtin(
            "DeepSeek",
            "https://api.deepseek.com/v1",
            Some("DEEPSEEK_API_KEY"),
            None,
        ),
    );
    // Anthropic's API and the Anthropic-compatible endpoints open-model vendors document for
    // their coding plans (each vendor's "use with Claude Code" page; `-m` names the model).
    for (id, name, base, var, auth) in [
        (
            "anthropic",
            "Anthropic",
            "https://api.anthropic.com/v1",
            "ANTHROPIC_API_KEY",
            AuthHeader::XApiKey,
        ),
        (
            "zhipu-anthropic",
            "Z.ai (GLM), Anthropic-compatible",
            "https://api.z.ai/api/anthropic",
            "ZHIPU_API_KEY",
            AuthHeader::Bearer,
        ),
        (
            "moonshot-anthropic",
            "Moonshot AI (Kimi), Anthropic-compatible",
            "https://api.moonshot.ai/anthropic",
            "MOONSHOT_API_KEY",
            AuthHeader::Bearer,
        ),
        (
            "deepseek-anthropic",
            "DeepSeek, Anthropic-compatible",
            "https://api.deepseek.com/anthropic",
            "DEEPSEEK_API_KEY",
            AuthHeader::XApiKey,
        ),
        (
            "minimax-anthropic",
            "MiniMax, Anthropic-compatible",
            "https://api.minimax.io/anthropic",
            "MINIMAX_API_KEY",
            AuthHeader::XApiKey,
        ),
    ] {
        let mut p = builtin(name, base, Some(var), None);
        p.wire_api = WireApi::Messages;
        p.auth_header = Some(auth);
        m.insert(id.into(), p);
    }
    let mut openai = builtin(
        "OpenAI",
        "https://api.openai.com/v1",
        Some("OPENAI_API_KEY"),
        None,
    );
    openai.wire_api = WireApi::Responses;
    openai.requires_openai_auth = true;
    m.insert("openai".into(), openai);
    m
}

const OLLAMA_DEFAULT_BASE_URL: &str = "http://localhost:11434/v1";

/// The Ollama base URL: `OLLAMA_BASE_URL` as given, else one built from `OLLAMA_HOST` (what
/// the Ollama CLI itself reads), else `http://localhost:11434/v1`.
///
/// `OLLAMA_HOST` is written for the server: `host`, `host:port`, `:port` or a URL, and
/// often `0.0.0.0` ("listen on every interface"). The unspecified address is not a portable
/// destination for a client, so `0.0.0.0`/`::` become `localhost`. A missing port is
/// 11434 (80/443 for an explicit `http://`/`https://` URL without one); `/v1` is appended.
pub fn ollama_base_url(base_url: Option<String>, host: Option<String>) -> String {
    if let Some(url) = base_url
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
    {
        return url;
    }
    let Some(host) = host.map(|s| s.trim().to_string()).filter(|s| !s.is_empty()) else {
        return OLLAMA_DEFAULT_BASE_URL.to_string();
    };
    let (scheme, rest, default_port) = if let Some(r) = host.strip_prefix("https://") {
        ("https", r, "443")
    } else if let Some(r) = host.strip_prefix("http://") {
        ("http", r, "80")
    } else {
        ("http", host.as_str(), "11434")
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], rest[i..].trim_end_matches('/')),
        None => (rest, ""),
    };
    // `[v6]:port`, `[v6]`, `host:port`, `host`, `:port`.
    let (hostname, port) = if let Some(v6) = authority.strip_prefix('[') {
        match v6.split_once(']') {
            Some((h, tail)) => (format!("[{h}]"), tail.strip_prefix(':').unwrap_or("")),
            None => (authority.to_string(), ""),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), p),
            None => (authority.to_string(), ""),
        }
    };
    let hostname = match hostname.as_str() {
        "" | "0.0.0.0" | "[::]" | "[0:0:0:0:0:0:0:0]" => "localhost".to_string(),
        _ => hostname,
    };
    let port = if port.is_empty() { default_port } else { port };
    format!("{scheme}://{hostname}:{port}{path}/v1")
}

#[cfg(test)]
mod ollama_host_tests {
    use super::ollama_base_url;

    fn host(h: &str) -> String {
        ollama_base_url(None, Some(h.to_string()))
    }

    #[test]
    fn ollama_host_forms_become_client_urls() {
        assert_eq!(ollama_base_url(None, None), "http://localhost:11434/v1");
        assert_eq!(host(""), "http://localhost:11434/v1");
        assert_eq!(host("0.0.0.0"), "http://localhost:11434/v1");
        assert_eq!(host("0.0.0.0:11434"), "http://localhost:11434/v1");
        assert_eq!(host(":8081"), "http://localhost:8081/v1");
        assert_eq!(host("gpu-box"), "http://gpu-box:11434/v1");
        assert_eq!(host("10.0.0.5:9000"), "http://10.0.0.5:9000/v1");
        assert_eq!(host("http://gpu-box"), "http://gpu-box:80/v1");
        assert_eq!(
            host("https://ollama.example.com/proxy/"),
            "https://ollama.example.com:443/proxy/v1"
        );
        assert_eq!(host("[::1]:11435"), "http://[::1]:11435/v1");
        assert_eq!(host("[::]"), "http://localhost:11434/v1");
    }

    #[test]
    fn ollama_base_url_wins_over_ollama_host() {
        assert_eq!(
            ollama_base_url(Some("http://x:1/v1".into()), Some("0.0.0.0:2".into())),
            "http://x:1/v1"
        );
        assert_eq!(
            ollama_base_url(Some("  ".into()), Some("gpu:3".into())),
            "http://gpu:3/v1"
        );
    }
}

#[cfg(test)]
mod api_key_tests {
    use super::*;

    #[test]
    fn stored_keys_come_from_the_given_home_only() {
        // A variable nobody sets, so the key can only come from the file.
        let var = "OI_CONFIG_TEST_UNSET_KEY_8f3a";
        let mut p = builtin_providers()["openrouter"].clone();
        p.env_key = Some(var.into());
        let with_key = tempfile::tempdir().unwrap();
        let without = tempfile::tempdir().unwrap();
        crate::credentials::set_api_key(with_key.path(), var, Some("sk-home")).unwrap();
        assert_eq!(
            p.api_key(with_key.path()).unwrap().as_deref(),
            Some("sk-home")
        );
        let err = p.api_key(without.path()).unwrap_err();
        assert_eq!(err.var, var);
        // The words users saw when this was a `String`.
        p.env_key_instructions = Some("get one at https://openrouter.ai/keys".into());
        assert_eq!(
            p.api_key(without.path()).unwrap_err().to_string(),
            format!(
                "model provider `{}` needs an API key in the environment variable `{var}`, which \
                 is not set. Run `export {var}=<your key>` and try again (get one at \
                 https://openrouter.ai/keys).",
                p.name
            )
        );
        p.env_key = None;
        assert_eq!(p.api_key(without.path()).unwrap(), None);
    }
}
