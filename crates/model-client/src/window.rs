//! Asking the server how big a context window it runs the model with.
//!
//! Local servers rarely run a model at its native window, so what they report beats any
//! table of models. Each server says it its own way:
//! - llama.cpp `llama-server`: `GET /props` → `default_generation_settings.n_ctx` (one slot's
//!   window: what one request gets), and `GET /v1/models` → `data[].meta.n_ctx`.
//! - vLLM: `GET /v1/models` → `data[].max_model_len`; hosted routers (OpenRouter) list
//!   `context_length`.
//! - Ollama: `GET /api/ps` → `context_length` of the loaded runner. The OpenAI-compatible
//!   endpoint cannot set `num_ctx` per request, so a model that is not loaded gets the
//!   model's own `num_ctx` parameter, else the server's default (`OLLAMA_CONTEXT_LENGTH`,
//!   else a VRAM tier) that no endpoint reports: we load the model (`POST /api/generate`
//!   with no prompt, as the first request would) and read `/api/ps` again.
//! - LM Studio: `GET /api/v1/models` → `loaded_instances[].config.context_length`.
//!
//! Best effort: short timeouts, and `None` on any failure; the engine has other sources.

use std::time::Duration;

use serde_json::{Value, json};

use crate::ModelClient;

/// How long one metadata request may take; they happen once per thread, before its first
/// request.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(3);
/// How long loading an Ollama model may take (the first request would wait as long).
const OLLAMA_LOAD_TIMEOUT: Duration = Duration::from_secs(180);

/// A window the server reported for a model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerWindow {
    /// The window's size in tokens.
    pub tokens: i64,
    /// Where it was read, in words for `/status`, e.g. "llama.cpp /props n_ctx".
    pub source: String,
    /// The server runs the model with this window. `false`: the model's trained maximum,
    /// which a local server may well not run (a weaker source than a running window).
    pub running: bool,
}

impl ServerWindow {
    fn running(tokens: i64, source: &str) -> Option<Self> {
        (tokens > 0).then(|| Self {
            tokens,
            source: source.to_string(),
            running: true,
        })
    }

    fn native(tokens: i64, source: &str) -> Option<Self> {
        (tokens > 0).then(|| Self {
            tokens,
            source: source.to_string(),
            running: false,
        })
    }
}

impl ModelClient {
    /// The context window the server reports for `model`, if it reports one.
    pub async fn server_context_window(&self, model: &str) -> Option<ServerWindow> {
        let base = self
            .inner
            .provider
            .base_url
            .as_deref()?
            .trim_end_matches('/')
            .to_string();
        let root = base.trim_end_matches("/v1").to_string();
        let listing = self.get_json(&format!("{base}/models")).await;
        if let Some(listing) = &listing {
            if let Some(n_ctx) = llama_cpp_listed_n_ctx(listing, model) {
                // One slot's window is what a request gets (`-np 4 -c 16384`: 4096 each).
                let props = self.get_json(&format!("{root}/props")).await;
                return props
                    .as_ref()
                    .and_then(window_in_llama_cpp_props)
                    .or_else(|| ServerWindow::running(n_ctx, "llama.cpp /v1/models meta.n_ctx"));
            }
            if let Some(w) = window_in_model_list(listing, model) {
                return Some(w);
            }
        }
        if self.looks_like_lm_studio(&base) {
            let models = self.get_json(&format!("{root}/api/v1/models")).await?;
            return window_in_lm_studio_models(&models, model);
        }
        if self.looks_like_ollama(&base) {
            return self.ollama_window(&root, model).await;
        }
        None
    }

    async fn ollama_window(&self, root: &str, model: &str) -> Option<ServerWindow> {
        let ps_url = format!("{root}/api/ps");
        if let Some(w) = self
            .get_json(&ps_url)
            .await
            .and_then(|ps| window_in_ollama_ps(&ps, model))
        {
            return Some(w);
        }
        let show = self
            .post_json(
                &format!("{root}/api/show"),
                json!({ "model": model }),
                LOOKUP_TIMEOUT,
            )
            .await;
        if let Some(w) = show.as_ref().and_then(num_ctx_in_ollama_show) {
            return Some(w);
        }
        // The window depends on the server's environment: load the model and ask again.
        let loaded = self
            .post_json(
                &format!("{root}/api/generate"),
                json!({ "model": model }),
                OLLAMA_LOAD_TIMEOUT,
            )
            .await
            .is_some();
        if loaded
            && let Some(w) = self
                .get_json(&ps_url)
                .await
                .and_then(|ps| window_in_ollama_ps(&ps, model))
        {
            return Some(w);
        }
        show.as_ref().and_then(trained_in_ollama_show)
    }

    fn looks_like_ollama(&self, base: &str) -> bool {
        self.inner.provider_id == "ollama" || base.contains(":11434")
    }

    fn looks_like_lm_studio(&self, base: &str) -> bool {
        self.inner.provider_id == "lmstudio" || base.contains(":1234/") || base.ends_with(":1234")
    }

    async fn get_json(&self, url: &str) -> Option<Value> {
        let send = self
            .inner
            .http
            .get(url)
            .headers(self.inner.headers.clone())
            .timeout(LOOKUP_TIMEOUT)
            .send();
        let resp = tokio::time::timeout(LOOKUP_TIMEOUT, send)
            .await
            .ok()?
            .ok()?;
        if !resp.status().is_success() {
            return None;
        }
        tokio::time::timeout(LOOKUP_TIMEOUT, resp.json())
            .await
            .ok()?
            .ok()
    }

    async fn post_json(&self, url: &str, body: Value, timeout: Duration) -> Option<Value> {
        let send = self
            .inner
            .http
            .post(url)
            .headers(self.inner.headers.clone())
            .timeout(timeout)
            .json(&body)
            .send();
        let resp = tokio::time::timeout(timeout, send).await.ok()?.ok()?;
        if !resp.status().is_success() {
            return None;
        }
        tokio::time::timeout(timeout, resp.json()).await.ok()?.ok()
    }
}

/// The entry for `model` in a listing's array under `key`, matched on any of `names`.
fn find_model<'a>(body: &'a Value, key: &str, names: &[&str], model: &str) -> Option<&'a Value> {
    body.get(key)?.as_array()?.iter().find(|m| {
        names.iter().any(|k| {
            m.get(*k)
                .and_then(Value::as_str)
                .is_some_and(|n| same_model(n, model))
        })
    })
}

/// Ollama names carry an implicit `:latest` tag.
fn same_model(listed: &str, model: &str) -> bool {
    listed == model
        || listed.strip_suffix(":latest") == Some(model)
        || model.strip_suffix(":latest") == Some(listed)
}

/// llama.cpp's `meta.n_ctx` for `model` in its `/v1/models` answer.
fn llama_cpp_listed_n_ctx(body: &Value, model: &str) -> Option<i64> {
    let entry = find_model(body, "data", &["id"], model).or_else(|| {
        // llama-server answers for whatever name is asked: with one model loaded, it is it.
        let data = body.get("data")?.as_array()?;
        (data.len() == 1).then(|| &data[0])
    })?;
    entry.get("meta")?.get("n_ctx")?.as_i64().filter(|n| *n > 0)
}

/// `default_generation_settings.n_ctx` in llama.cpp's `/props` answer.
pub fn window_in_llama_cpp_props(body: &Value) -> Option<ServerWindow> {
    let n = body
        .get("default_generation_settings")?
        .get("n_ctx")?
        .as_i64()?;
    ServerWindow::running(n, "llama.cpp /props n_ctx")
}

/// The window of `model` in an OpenAI-style `/models` answer (`{"data":[...]}` or
/// `{"models":[...]}`): vLLM's `max_model_len`, a router's `context_length`.
pub fn window_in_model_list(body: &Value, model: &str) -> Option<ServerWindow> {
    let names = ["id", "name", "model"];
    let entry = find_model(body, "data", &names, model)
        .or_else(|| find_model(body, "models", &names, model))?;
    if let Some(n) = llama_cpp_listed_n_ctx(body, model) {
        return ServerWindow::running(n, "llama.cpp /v1/models meta.n_ctx");
    }
    for key in ["max_model_len", "context_length", "context_window"] {
        if let Some(n) = entry.get(key).and_then(Value::as_i64) {
            return ServerWindow::running(n, &format!("/models {key}"));
        }
    }
    // A model's maximum, not what a local server loaded it with.
    let n = entry.get("max_context_length").and_then(Value::as_i64)?;
    ServerWindow::native(n, "/models max_context_length")
}

/// Ollama `/api/ps`: the loaded runner's `context_length`.
pub fn window_in_ollama_ps(body: &Value, model: &str) -> Option<ServerWindow> {
    let entry = find_model(body, "models", &["name", "model"], model)?;
    let n = entry.get("context_length").and_then(Value::as_i64)?;
    ServerWindow::running(n, "Ollama /api/ps context_length (the loaded model)")
}

/// Ollama `/api/show`: the model's own `num_ctx` parameter (what the server applies when no
/// request sets one), never more than the trained window.
pub fn num_ctx_in_ollama_show(body: &Value) -> Option<ServerWindow> {
    let num_ctx = body
        .get("parameters")
        .and_then(Value::as_str)?
        .lines()
        .find_map(|l| {
            let mut parts = l.split_whitespace();
            (parts.next() == Some("num_ctx"))
                .then(|| parts.next()?.parse::<i64>().ok())
                .flatten()
        })?;
    let trained = trained_in_ollama_show(body).map_or(i64::MAX, |w| w.tokens);
    ServerWindow::running(
        num_ctx.min(trained),
        "Ollama num_ctx in the model's parameters",
    )
}

/// Ollama `/api/show`: the trained `<arch>.context_length`.
pub fn trained_in_ollama_show(body: &Value) -> Option<ServerWindow> {
    let n = body
        .get("model_info")?
        .as_object()?
        .iter()
        .find(|(k, _)| k.ends_with(".context_length"))
        .and_then(|(_, v)| v.as_i64())?;
    ServerWindow::native(n, "Ollama /api/show trained context_length")
}

/// LM Studio `GET /api/v1/models`: the loaded instance's `context_length`, else the model's
/// maximum.
pub fn window_in_lm_studio_models(body: &Value, model: &str) -> Option<ServerWindow> {
    let models = body.get("models")?.as_array()?;
    let entry = models.iter().find(|m| {
        m.get("key").and_then(Value::as_str) == Some(model)
            || m.get("loaded_instances")
                .and_then(Value::as_array)
                .is_some_and(|l| {
                    l.iter()
                        .any(|i| i.get("id").and_then(Value::as_str) == Some(model))
                })
    })?;
    let loaded = entry
        .get("loaded_instances")
        .and_then(Value::as_array)
        .and_then(|l| {
            l.iter()
                .find(|i| i.get("id").and_then(Value::as_str) == Some(model))
                .or_else(|| l.first())
        })
        .and_then(|i| i.get("config")?.get("context_length")?.as_i64());
    match loaded {
        Some(n) => ServerWindow::running(n, "LM Studio loaded context_length"),
        None => ServerWindow::native(
            entry.get("max_context_length").and_then(Value::as_i64)?,
            "LM Studio max_context_length (not loaded)",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../test-support/fixtures/servers")
            .join(name);
        let text = std::fs::read_to_string(&path).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    #[test]
    fn llama_cpp_reports_its_running_window() {
        let models = fixture("llamacpp-v1-models.json");
        let w = window_in_model_list(&models, "qwen2.5-coder-1.5b-instruct").unwrap();
        assert_eq!(w.tokens, 2048, "meta.n_ctx, not n_ctx_train (32768)");
        assert!(w.running);
        let props = fixture("llamacpp-props.json");
        let w = window_in_llama_cpp_props(&props).unwrap();
        assert_eq!((w.tokens, w.running), (2048, true));
        // llama-server answers any model name: a single listed model is the one.
        assert_eq!(llama_cpp_listed_n_ctx(&models, "whatever"), Some(2048));
    }

    #[test]
    fn model_lists_of_common_servers() {
        let vllm = fixture("vllm-v1-models.json");
        let w = window_in_model_list(&vllm, "Qwen/Qwen3-Coder-30B-A3B-Instruct").unwrap();
        assert_eq!((w.tokens, w.running), (65536, true));
        assert!(window_in_model_list(&vllm, "other").is_none());
        let openrouter = json!({"data":[{"id":"z-ai/glm-4.6","context_length":202752}]});
        assert_eq!(
            window_in_model_list(&openrouter, "z-ai/glm-4.6").map(|w| w.tokens),
            Some(202752)
        );
        let bare = json!({"data":[{"id":"m","object":"model"}]});
        assert!(window_in_model_list(&bare, "m").is_none());
        // Ollama's OpenAI-compatible listing says nothing about windows.
        let ollama = fixture("ollama-v1-models.json");
        assert!(window_in_model_list(&ollama, "qwen3-coder:30b").is_none());
    }

    #[test]
    fn ollama_ps_is_the_loaded_window() {
        let ps = fixture("ollama-api-ps.json");
        let w = window_in_ollama_ps(&ps, "qwen3-coder:30b").unwrap();
        assert_eq!((w.tokens, w.running), (262144, true));
        // The implicit `:latest` tag.
        assert_eq!(
            window_in_ollama_ps(&ps, "mistral").map(|w| w.tokens),
            Some(4096)
        );
        assert!(window_in_ollama_ps(&ps, "llama3.2").is_none());
    }

    #[test]
    fn ollama_show_num_ctx_is_capped_by_the_trained_window() {
        let show = fixture("ollama-api-show.json");
        let w = num_ctx_in_ollama_show(&show).unwrap();
        assert_eq!((w.tokens, w.running), (8192, true));
        let trained = trained_in_ollama_show(&show).unwrap();
        assert_eq!((trained.tokens, trained.running), (262144, false));
        let huge =
            json!({"parameters": "num_ctx 1000000", "model_info": {"llama.context_length": 8192}});
        assert_eq!(num_ctx_in_ollama_show(&huge).map(|w| w.tokens), Some(8192));
        assert!(num_ctx_in_ollama_show(&json!({"parameters": "temperature 0.7"})).is_none());
    }

    #[test]
    fn lm_studio_loaded_instances() {
        let models = fixture("lmstudio-api-v1-models.json");
        let w = window_in_lm_studio_models(&models, "google/gemma-4-26b-a4b").unwrap();
        assert_eq!((w.tokens, w.running), (4096, true));
        let w = window_in_lm_studio_models(&models, "deepseek-r1").unwrap();
        assert_eq!((w.tokens, w.running), (131072, false));
    }
}
