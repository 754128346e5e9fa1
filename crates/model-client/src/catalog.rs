//! What we know about models: built-in metadata for well-known open models (context window,
//! reasoning efforts in the model's own order, image input) and a provider's own
//! `GET /models` list. Used by the v2 `model/list` and the TUI's `/model` picker.

use oi_config::ModelProviderInfo;
use serde_json::Value;
use std::time::Duration;

/// What a provider's `/models` said about one model.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RemoteModel {
    /// The model name as the provider lists it.
    pub id: String,
    /// Its context window in tokens, when the listing says.
    pub context_window: Option<i64>,
    /// What it takes as input (`text`, `image`), when the listing says.
    pub input_modalities: Option<Vec<String>>,
}

/// Built-in facts about a model family.
#[derive(Clone, Debug, PartialEq)]
pub struct ModelInfo {
    /// The name shown to users.
    pub display_name: String,
    /// One line on what the family is good for.
    pub description: &'static str,
    /// Its context window in tokens, when known.
    pub context_window: Option<i64>,
    /// In the order the model's API defines them.
    pub efforts: &'static [&'static str],
    /// The reasoning effort used when none is chosen.
    pub default_effort: Option<&'static str>,
    /// Whether it accepts images.
    pub image_input: bool,
}

/// Built-in metadata for a model id (provider prefixes like `moonshotai/` and Ollama tags
/// like `:30b` are tolerated). `None` for models we know nothing about.
pub fn builtin_info(model: &str) -> Option<ModelInfo> {
    let id = model.to_ascii_lowercase();
    let base = id.rsplit('/').next().unwrap_or(&id);
    let info = |name: &str,
                description: &'static str,
                ctx: i64,
                efforts: &'static [&'static str],
                default_effort: Option<&'static str>,
                image: bool| ModelInfo {
        display_name: name.to_string(),
        description,
        context_window: Some(ctx),
        efforts,
        default_effort,
        image_input: image,
    };
    const LMH: &[&str] = &["low", "medium", "high"];
    Some(if base.starts_with("gpt-oss") {
        info(
            "gpt-oss",
            "OpenAI's open-weight reasoning model",
            131_072,
            LMH,
            Some("medium"),
            false,
        )
    } else if base.starts_with("kimi-k2-thinking") {
        info(
            "Kimi K2 Thinking",
            "Moonshot's reasoning agent model",
            262_144,
            &[],
            None,
            false,
        )
    } else if base.starts_with("kimi-k2") {
        let ctx = if base.contains("0711") {
            131_072
        } else {
            262_144
        };
        info(
            "Kimi K2",
            "Moonshot's agentic coding model",
            ctx,
            &[],
            None,
            false,
        )
    } else if base.starts_with("glm-4.5v") {
        info(
            "GLM-4.5V",
            "Zhipu's vision-language model",
            65_536,
            &[],
            None,
            true,
        )
    } else if base.starts_with("glm-4.6") {
        info(
            "GLM-4.6",
            "Zhipu's agentic coding model",
            200_000,
            &[],
            None,
            false,
        )
    } else if base.starts_with("glm-4.5") {
        info(
            "GLM-4.5",
            "Zhipu's agentic coding model",
            131_072,
            &[],
            None,
            false,
        )
    } else if base.starts_with("qwen3-coder") {
        info(
            "Qwen3 Coder",
            "Alibaba's agentic coding model",
            262_144,
            &[],
            None,
            false,
        )
    } else if base.starts_with("deepseek-reasoner") || base.starts_with("deepseek-r1") {
        info(
            "DeepSeek Reasoner",
            "DeepSeek's reasoning model",
            131_072,
            &[],
            None,
            false,
        )
    } else if base.starts_with("deepseek-chat") || base.starts_with("deepseek-v3") {
        info(
            "DeepSeek Chat",
            "DeepSeek's general chat and coding model",
            131_072,
            &[],
            None,
            false,
        )
    } else if base.starts_with("llama-3.3") || base.starts_with("llama3.3") {
        info(
            "Llama 3.3",
            "Meta's open instruction model",
            131_072,
            &[],
            None,
            false,
        )
    } else {
        return None;
    })
}

/// Models that cannot chat (embeddings, speech, …): listed only with `includeHidden`.
pub fn is_hidden(model: &str) -> bool {
    let id = model.to_ascii_lowercase();
    [
        "embed",
        "whisper",
        "tts",
        "rerank",
        "moderation",
        "dall-e",
        "transcribe",
    ]
    .iter()
    .any(|k| id.contains(k))
}

/// Parses an OpenAI-style `/models` body. Context windows and modalities are read where
/// providers report them (OpenRouter `context_length`, vLLM `max_model_len`, …).
pub fn parse_models(body: &Value) -> Vec<RemoteModel> {
    let list = body
        .get("data")
        .or_else(|| body.get("models"))
        .and_then(Value::as_array);
    list.into_iter()
        .flatten()
        .filter_map(|m| {
            let id = m
                .get("id")
                .or_else(|| m.get("name"))
                .and_then(Value::as_str)?;
            let context_window = ["context_length", "max_model_len", "context_window"]
                .iter()
                .find_map(|k| m.get(*k).and_then(Value::as_i64));
            let input_modalities = m
                .get("architecture")
                .and_then(|a| a.get("input_modalities"))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Value::as_str)
                        .filter(|s| matches!(*s, "text" | "image"))
                        .map(str::to_string)
                        .collect()
                });
            Some(RemoteModel {
                id: id.to_string(),
                context_window,
                input_modalities,
            })
        })
        .collect()
}

/// Why a provider's models could not be listed. `Clone`, so a front end can cache the
/// answer it got, failures included.
#[derive(Clone, Debug, thiserror::Error)]
pub enum ModelListError {
    /// The provider has no `base_url` to ask.
    #[error("no base_url")]
    NoBaseUrl,
    /// The request could not be made, sent or its body read as JSON.
    #[error("{0}")]
    Http(std::sync::Arc<reqwest::Error>),
    /// The server answered, but not with success.
    #[error("GET {url} answered {status}")]
    Status {
        /// The URL asked.
        url: String,
        /// What it answered.
        status: reqwest::StatusCode,
    },
}

impl ModelListError {
    fn http(e: reqwest::Error) -> Self {
        Self::Http(std::sync::Arc::new(e))
    }
}

/// `GET {base_url}/models` of `provider` (with its headers, query and key, if any; a stored
/// key is looked up under `home`), parsed. Loopback URLs bypass proxies; the request gives up
/// after `timeout`.
pub async fn fetch_models(
    provider: ModelProviderInfo,
    home: &std::path::Path,
    timeout: Duration,
) -> Result<Vec<RemoteModel>, ModelListError> {
    let base = provider.base_url.clone().ok_or(ModelListError::NoBaseUrl)?;
    let url = format!("{}/models", base.trim_end_matches('/'));
    let mut builder = oi_http::client_builder().timeout(timeout);
    if crate::is_loopback(&url) {
        builder = builder.no_proxy();
    }
    let client = builder.build().map_err(ModelListError::http)?;
    let mut req = client.get(&url);
    if let Some(q) = &provider.query_params {
        req = req.query(q);
    }
    for (k, v) in provider.http_headers.iter().flatten() {
        req = req.header(k, v);
    }
    // A missing key only means we ask without one; local servers need none.
    if let Ok(Some(key)) = provider.api_key(home) {
        req = req.bearer_auth(key);
    }
    let resp = req.send().await.map_err(ModelListError::http)?;
    if !resp.status().is_success() {
        return Err(ModelListError::Status {
            url,
            status: resp.status(),
        });
    }
    let body: Value = resp.json().await.map_err(ModelListError::http)?;
    Ok(parse_models(&body))
}
