//! What a provider needs in the history it is sent, decided from its documented behaviour:
//! the host it runs on (`base_url`, or the built-in provider id) and the model family.
//!
//! * Reasoning on assistant tool-call messages (Chat). DeepSeek (api-docs.deepseek.com,
//!   "Thinking Mode" → tool calls) and Moonshot (platform.moonshot.ai, "Using thinking models":
//!   kimi-k2-thinking, kimi-k2.5 and later think by default) reject the next request with HTTP
//!   400 when `reasoning_content` is missing there; Z.ai (docs.z.ai, "Thinking Mode" →
//!   interleaved thinking, GLM-4.5 and later) asks for it back; gpt-oss needs the chain of
//!   thought of a tool-calling turn (OpenAI cookbook, "How to handle the raw chain of thought
//!   in gpt-oss"), read as `reasoning` by vLLM's harmony path and Ollama and as
//!   `reasoning_content` by llama.cpp.
//! * Reasoning items without `encrypted_content` (Responses): gpt-oss servers (vLLM) return
//!   the raw chain of thought as `content` of type `reasoning_text` and take it back the same
//!   way (same cookbook article); OpenAI's hosted API only takes encrypted or stored items.
//! * Tool call ids: Mistral templates reject ids that are not 9 alphanumerics.
//! * Prompt-cache markers (Messages `cache_control`): only Anthropic's own API caches by them
//!   (docs.anthropic.com, "Prompt caching"); the compatible endpoints of DeepSeek, Moonshot,
//!   Z.ai, MiniMax and llama.cpp cache prefixes on their own, and a marker means nothing there
//!   (some list it as ignored, others do not list it at all), so it is not sent.
//!
//! `send_reasoning_content` in the provider's config overrides the reasoning decisions.

use oi_config::provider::ModelProviderInfo;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Quirks {
    /// Chat: fields of an assistant tool-call message that carry the reasoning behind the
    /// calls. Empty: reasoning is never sent back.
    pub reasoning_fields: &'static [&'static str],
    /// Chat: what those fields hold when the tool-call message has no reasoning (history
    /// from another model, or a turn that did not think). `None`: the fields are left out.
    pub missing_reasoning: Option<&'static str>,
    /// Responses: reasoning without `encrypted_content` that led to a tool call is sent back
    /// as `reasoning_text` content.
    pub responses_reasoning_text: bool,
    /// Chat: call ids in the history are mapped to 9 alphanumerics.
    pub portable_call_ids: bool,
    /// The model may be offered several tool calls per response (`parallel_tool_calls`).
    pub parallel_tool_calls: bool,
    /// Messages: `cache_control` markers on the system prompt, tools and last user turns.
    pub cache_markers: bool,
}

/// A provider that follows the OpenAI API as written: nothing extra in the history, several
/// calls per response offered.
impl Default for Quirks {
    fn default() -> Self {
        Quirks {
            reasoning_fields: &[],
            missing_reasoning: None,
            responses_reasoning_text: false,
            portable_call_ids: false,
            parallel_tool_calls: true,
            cache_markers: false,
        }
    }
}

const REASONING_CONTENT: &[&str] = &["reasoning_content"];
/// OpenRouter's `reasoning` (the cookbook's convention; vLLM, Ollama) and llama.cpp's
/// `reasoning_content`: each server reads its own and ignores the other.
const GPT_OSS_FIELDS: &[&str] = &["reasoning", "reasoning_content"];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Host {
    DeepSeek,
    Moonshot,
    Zai,
    Mistral,
    OpenAi,
    Anthropic,
    Other,
}

fn host(provider: &ModelProviderInfo, provider_id: &str) -> Host {
    let name = provider
        .base_url
        .as_deref()
        .and_then(|u| url::Url::parse(u.trim()).ok())
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
        .unwrap_or_default();
    let on = |domain: &str| name == domain || name.ends_with(&format!(".{domain}"));
    if on("deepseek.com") {
        Host::DeepSeek
    } else if on("moonshot.ai") || on("moonshot.cn") {
        Host::Moonshot
    } else if on("z.ai") || on("bigmodel.cn") {
        Host::Zai
    } else if on("mistral.ai") {
        Host::Mistral
    } else if on("openai.com") {
        Host::OpenAi
    } else if on("anthropic.com") {
        Host::Anthropic
    } else {
        // Another URL under a built-in provider's id is that provider behind a proxy or
        // gateway: it still validates the history the same way.
        match provider_id {
            "deepseek" => Host::DeepSeek,
            "moonshot" => Host::Moonshot,
            "zhipu" | "zhipu-anthropic" => Host::Zai,
            "anthropic" => Host::Anthropic,
            _ => Host::Other,
        }
    }
}

/// Model families whose history needs something, from the model id as servers spell it
/// (`openai/gpt-oss-20b`, `gpt-oss:20b`, `zai-org/GLM-4.6`, `moonshotai/Kimi-K2.5`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    GptOss,
    /// DeepSeek, Kimi thinking, GLM-4.5 and later: `reasoning_content` in their templates.
    ThinksWithReasoningContent,
    Mistral,
    Other,
}

fn family(model: &str) -> Family {
    let m = model.to_ascii_lowercase();
    if m.contains("gpt-oss") {
        return Family::GptOss;
    }
    let kimi_thinking = m.contains("kimi")
        && (m.contains("thinking")
            || version_after(&m, "kimi-k", &['.', '-']).is_some_and(|v| v >= (2, 5)));
    let glm_thinking = version_after(&m, "glm-", &['.'])
        .or_else(|| version_after(&m, "glm", &['.']))
        .is_some_and(|v| v >= (4, 5));
    if m.contains("deepseek") || kimi_thinking || glm_thinking {
        return Family::ThinksWithReasoningContent;
    }
    const MISTRAL: [&str; 7] = [
        "mistral",
        "mixtral",
        "codestral",
        "devstral",
        "magistral",
        "ministral",
        "pixtral",
    ];
    if MISTRAL.iter().any(|f| m.contains(f)) {
        return Family::Mistral;
    }
    Family::Other
}

/// `(major, minor)` written right after `prefix`: `k2.5` (and for Kimi `k2-5`) → (2, 5), `k2`
/// → (2, 0). A minor of more than one digit is a date, not a version (`kimi-k2-0905-preview`),
/// and GLM's `-` starts a size (`glm-4-9b`).
fn version_after(s: &str, prefix: &str, seps: &[char]) -> Option<(u32, u32)> {
    let rest = &s[s.find(prefix)? + prefix.len()..];
    let major_len = rest.bytes().take_while(u8::is_ascii_digit).count();
    let major: u32 = rest.get(..major_len)?.parse().ok()?;
    let tail = &rest[major_len..];
    let minor = tail
        .strip_prefix(seps)
        .map(|t| {
            let n = t.bytes().take_while(u8::is_ascii_digit).count();
            if n == 1 {
                t[..1].parse().unwrap_or(0)
            } else {
                0
            }
        })
        .unwrap_or(0);
    Some((major, minor))
}

/// The quirks for `model` served by `provider` (`provider_id` is its config id).
pub(crate) fn for_model(provider: &ModelProviderInfo, provider_id: &str, model: &str) -> Quirks {
    let host = host(provider, provider_id);
    let family = family(model);
    let mut fields: &'static [&'static str] = match (host, family) {
        (_, Family::GptOss) => GPT_OSS_FIELDS,
        (Host::DeepSeek | Host::Moonshot | Host::Zai, _) => REASONING_CONTENT,
        (_, Family::ThinksWithReasoningContent) => REASONING_CONTENT,
        _ => &[],
    };
    let mut missing = match host {
        // Presence is what DeepSeek checks ("Missing `reasoning_content` field in the
        // assistant message"); an empty string passes.
        Host::DeepSeek => Some(""),
        // Moonshot treats an empty string as missing for some models (K2.6); a single space
        // is accepted. Its moonshot-v1 models do not think.
        Host::Moonshot if !model.to_ascii_lowercase().starts_with("moonshot-v1") => Some(" "),
        _ => None,
    };
    let mut responses_reasoning_text = family == Family::GptOss && host != Host::OpenAi;
    match provider.send_reasoning_content {
        Some(false) => {
            fields = &[];
            missing = None;
            responses_reasoning_text = false;
        }
        Some(true) => {
            if fields.is_empty() {
                fields = REASONING_CONTENT;
            }
            responses_reasoning_text = true;
        }
        None => {}
    }
    Quirks {
        reasoning_fields: fields,
        missing_reasoning: missing.filter(|_| !fields.is_empty()),
        responses_reasoning_text,
        portable_call_ids: host == Host::Mistral || family == Family::Mistral,
        parallel_tool_calls: provider.supports_parallel_tool_calls.unwrap_or(true),
        cache_markers: host == Host::Anthropic,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provider(base_url: &str, flag: Option<bool>) -> ModelProviderInfo {
        let mut p = oi_config::provider::builtin_providers()["vllm"].clone();
        p.base_url = Some(base_url.to_string());
        p.send_reasoning_content = flag;
        p
    }

    fn q(base_url: &str, model: &str) -> Quirks {
        for_model(&provider(base_url, None), "custom", model)
    }

    #[test]
    fn hosts_decide_for_any_model_name() {
        // Moonshot's thinking models whose names lack "thinking".
        for model in ["kimi-k2.5", "kimi-k2.6", "kimi-latest"] {
            let k = q("https://api.moonshot.ai/v1", model);
            assert_eq!(k.reasoning_fields, ["reasoning_content"], "{model}");
            assert_eq!(k.missing_reasoning, Some(" "), "{model}");
        }
        assert_eq!(
            q("https://api.moonshot.cn/v1", "kimi-k2.5").missing_reasoning,
            Some(" ")
        );
        assert_eq!(
            q("https://api.moonshot.ai/v1", "moonshot-v1-8k").missing_reasoning,
            None
        );
        let ds = q("https://api.deepseek.com/v1", "some-future-name");
        assert_eq!(
            (ds.reasoning_fields, ds.missing_reasoning),
            (REASONING_CONTENT, Some(""))
        );
        for zai in [
            "https://api.z.ai/api/paas/v4",
            "https://open.bigmodel.cn/api/paas/v4",
        ] {
            let z = q(zai, "glm-4.6");
            assert_eq!(
                (z.reasoning_fields, z.missing_reasoning),
                (REASONING_CONTENT, None)
            );
        }
        // A look-alike host is not the provider.
        assert_eq!(
            q("https://notmoonshot.ai.example/v1", "x").missing_reasoning,
            None
        );
        // Without a URL the built-in id tells.
        let mut p = provider("", None);
        p.base_url = None;
        assert_eq!(
            for_model(&p, "moonshot", "kimi-k2.5").missing_reasoning,
            Some(" ")
        );
    }

    #[test]
    fn families_on_local_servers() {
        let local = "http://localhost:8000/v1";
        for model in ["openai/gpt-oss-20b", "gpt-oss:120b"] {
            let g = q(local, model);
            assert_eq!(g.reasoning_fields, GPT_OSS_FIELDS, "{model}");
            assert!(g.responses_reasoning_text && g.missing_reasoning.is_none());
        }
        for model in [
            "deepseek-r1:14b",
            "moonshotai/Kimi-K2-Thinking",
            "moonshotai/Kimi-K2.5",
            "zai-org/GLM-4.5-Air",
            "zai-org/GLM-4.7",
            "glm-5",
        ] {
            assert_eq!(
                q(local, model).reasoning_fields,
                REASONING_CONTENT,
                "{model}"
            );
        }
        for model in [
            "qwen3-coder:30b",
            "moonshotai/Kimi-K2-Instruct-0905",
            "kimi-k2-0905-preview",
            "THUDM/glm-4-9b-chat",
        ] {
            assert_eq!(q(local, model), Quirks::default(), "{model}");
        }
        assert!(q(local, "mistralai/Devstral-Small-2507").portable_call_ids);
        assert!(q("https://api.mistral.ai/v1", "codestral-latest").portable_call_ids);
        assert!(!q(local, "qwen3").portable_call_ids);
        // OpenAI's hosted Responses API takes only encrypted or stored reasoning.
        assert!(!q("https://api.openai.com/v1", "gpt-oss-120b").responses_reasoning_text);
    }

    #[test]
    fn the_config_override_wins() {
        let off = for_model(
            &provider("https://api.moonshot.ai/v1", Some(false)),
            "moonshot",
            "kimi-k2.5",
        );
        assert_eq!(off, Quirks::default());
        let on = for_model(
            &provider("http://localhost:8000/v1", Some(true)),
            "vllm",
            "my-model",
        );
        assert_eq!(on.reasoning_fields, REASONING_CONTENT);
        assert!(on.responses_reasoning_text && on.missing_reasoning.is_none());
    }

    #[test]
    fn cache_markers_only_for_anthropic() {
        assert!(q("https://api.anthropic.com/v1", "claude-sonnet-4-5").cache_markers);
        for base in [
            "https://api.deepseek.com/anthropic",
            "https://api.z.ai/api/anthropic",
            "https://api.minimax.io/anthropic",
            "http://127.0.0.1:8080/v1",
        ] {
            assert!(!q(base, "m").cache_markers, "{base}");
        }
        // The built-in id behind a gateway is still Anthropic.
        let p = provider("https://gateway.example/anthropic", None);
        assert!(for_model(&p, "anthropic", "claude").cache_markers);
    }
}
