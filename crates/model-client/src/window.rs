//! Asking the server how big a model's context window is.
//!
//! OpenAI-compatible servers that know it put it in their `/models` listing (vLLM
//! `max_model_len`, OpenRouter and LM Studio `context_length`, others `context_window`).
//! Ollama's listing has no such field, but `POST /api/show` reports the model's trained
//! `context_length` and, when the model is configured with one, its runtime `num_ctx`.
//! Best effort: a short timeout, and `None` on any failure; the engine has other sources.

use std::time::Duration;

use serde_json::{Value, json};

use crate::ModelClient;

/// How long the lookup may take; it happens once per thread, before its first request.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(3);

impl ModelClient {
    /// The context window the server reports for `model`, if it reports one.
    pub async fn server_context_window(&self, model: &str) -> Option<i64> {
        let base = self
            .inner
            .provider
            .base_url
            .as_deref()?
            .trim_end_matches('/');
        let listed = tokio::time::timeout(LOOKUP_TIMEOUT, self.get_json(&format!("{base}/models")))
            .await
            .ok()
            .flatten()
            .and_then(|body| window_in_model_list(&body, model));
        if listed.is_some() {
            return listed;
        }
        if !self.looks_like_ollama(base) {
            return None;
        }
        let root = base.trim_end_matches("/v1");
        let show = tokio::time::timeout(
            LOOKUP_TIMEOUT,
            self.post_json(&format!("{root}/api/show"), json!({ "model": model })),
        )
        .await
        .ok()
        .flatten()?;
        window_in_ollama_show(&show)
    }

    fn looks_like_ollama(&self, base: &str) -> bool {
        self.inner.provider_id == "ollama" || base.contains(":11434")
    }

    async fn get_json(&self, url: &str) -> Option<Value> {
        let resp = self
            .inner
            .http
            .get(url)
            .headers(self.inner.headers.clone())
            .send()
            .await
            .ok()?;
        if !resp.status().is_success() {
            return None;
        }
        resp.json().await.ok()
    }

    async fn post_json(&self, url: &str, body: Value) -> Option<Value> {
        let resp = self
            .inner
            .http
            .post(url)
            .headers(self.inner.headers.clone())
            .json(&body)
            .send()
            .await
            .ok()?;
        if !resp.status().is_success() {
            return None;
        }
        resp.json().await.ok()
    }
}

/// The window of `model` in a `/models` answer (`{"data":[...]}` or `{"models":[...]}`).
pub fn window_in_model_list(body: &Value, model: &str) -> Option<i64> {
    let list = body
        .get("data")
        .or_else(|| body.get("models"))
        .and_then(Value::as_array)?;
    let entry = list.iter().find(|m| {
        ["id", "name", "model"]
            .iter()
            .any(|k| m.get(*k).and_then(Value::as_str) == Some(model))
    })?;
    [
        "max_model_len",
        "context_length",
        "max_context_length",
        "context_window",
    ]
    .iter()
    .find_map(|k| entry.get(*k).and_then(Value::as_i64))
    .filter(|w| *w > 0)
}

/// The window in an Ollama `/api/show` answer: the runtime `num_ctx` when the model sets
/// one (that is what the server really uses), else the trained `<arch>.context_length`.
pub fn window_in_ollama_show(body: &Value) -> Option<i64> {
    let num_ctx = body
        .get("parameters")
        .and_then(Value::as_str)
        .and_then(|p| {
            p.lines().find_map(|l| {
                let mut parts = l.split_whitespace();
                (parts.next() == Some("num_ctx"))
                    .then(|| parts.next()?.parse::<i64>().ok())
                    .flatten()
            })
        });
    num_ctx
        .or_else(|| {
            body.get("model_info")
                .and_then(Value::as_object)?
                .iter()
                .find(|(k, _)| k.ends_with(".context_length"))
                .and_then(|(_, v)| v.as_i64())
        })
        .filter(|w| *w > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_lists_of_common_servers() {
        let vllm = json!({"object":"list","data":[{"id":"Qwen/Qwen3-8B","max_model_len":32768}]});
        assert_eq!(window_in_model_list(&vllm, "Qwen/Qwen3-8B"), Some(32768));
        assert_eq!(window_in_model_list(&vllm, "other"), None);
        let openrouter = json!({"data":[{"id":"z-ai/glm-4.6","context_length":202752}]});
        assert_eq!(
            window_in_model_list(&openrouter, "z-ai/glm-4.6"),
            Some(202752)
        );
        let lmstudio = json!({"data":[{"id":"qwen3-8b","max_context_length":40960}]});
        assert_eq!(window_in_model_list(&lmstudio, "qwen3-8b"), Some(40960));
        let bare = json!({"data":[{"id":"m","object":"model"}]});
        assert_eq!(window_in_model_list(&bare, "m"), None);
    }

    #[test]
    fn ollama_show_prefers_num_ctx() {
        let show = json!({
            "parameters": "stop \"<|im_end|>\"\nnum_ctx 16384\ntemperature 0.7",
            "model_info": {"qwen3moe.context_length": 262144}
        });
        assert_eq!(window_in_ollama_show(&show), Some(16384));
        let show = json!({"model_info": {"qwen3moe.context_length": 262144}});
        assert_eq!(window_in_ollama_show(&show), Some(262144));
        assert_eq!(window_in_ollama_show(&json!({})), None);
    }
}
