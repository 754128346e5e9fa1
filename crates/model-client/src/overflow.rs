//! Recognising "the prompt does not fit the model's context window" errors.
//!
//! Every server family words this differently, and none of them uses a distinct HTTP
//! status (it is a 400, sometimes a 413 or a 500, or an error inside the stream). The engine
//! needs to know, because the cure is not a retry of the same request but a smaller one
//! (compaction). Where the text states the window, we learn it: the next requests are sized
//! to what the server really has, whatever the configuration said.

use crate::ModelError;

/// A context-length error, with the window when the server said what it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ContextOverflow {
    /// The server's context window in tokens, when the error text states it.
    pub window: Option<i64>,
}

/// Lowercase fragments that only appear in context-length errors. Matched against the
/// provider's error text (and the raw body, which may carry more detail than the message).
const MARKERS: &[&str] = &[
    // OpenAI and everything that copies it (vLLM, DeepSeek, Together, Fireworks, OpenRouter).
    "context_length_exceeded",
    "maximum context length",
    // vLLM's newer wording, SGLang.
    "maximum model length",
    "longer than the model's context length",
    "max_model_len",
    // llama.cpp server.
    "exceeds the available context size",
    "exceed_context_size_error",
    // Ollama (runner and API wordings).
    "exceeded max context length",
    "input length exceeds the context length",
    "prompt too long",
    // LM Studio (0.4: "The number of tokens to keep from the initial prompt is greater than
    // the context length (n_keep: 13055>= n_ctx: 4096)", with or without the numbers).
    "tokens to keep from the initial prompt is greater than the context length",
    "context the overflows",
    "context overflow",
    "loaded with context length of only",
    // Mistral / TGI.
    "too large for model with",
    "must be <=",
    // Generic phrasings used by gateways and hosted APIs; Anthropic's Messages API ("prompt is
    // too long: 210412 tokens > 200000 maximum", "input length and `max_tokens` exceed context
    // limit: 198000 + 8192 > 200000").
    "prompt is too long",
    "exceed context limit",
    "context window",
    "too many tokens",
    "reduce the length of the messages",
];

/// Phrases followed (within a few characters) by the window size in tokens.
const WINDOW_BEFORE_NUMBER: &[&str] = &[
    "maximum context length is",
    "maximum model length of",
    "maximum model length is",
    "max_model_len",
    "loaded with context length of only",
    "context length of only",
    "\"n_ctx\"",
    "n_ctx",
    "must be <=",
    "model's context length (",
    "context window is",
    "context window of",
    "context size of",
    // Anthropic: "… 210412 tokens > 200000 maximum".
    "tokens >",
];

/// Phrases preceded by the window size ("... 32768 maximum context length").
const WINDOW_AFTER_NUMBER: &[&str] = &["maximum context length"];

/// Whether `text` (an error message or body) says the prompt exceeded the context window.
pub fn classify_overflow(text: &str) -> Option<ContextOverflow> {
    let lower = text.to_ascii_lowercase();
    // "must be <=" alone is TGI's validation error; only count it with "tokens" nearby.
    let hit = MARKERS.iter().any(|m| {
        lower.contains(m)
            && (*m != "must be <=" || lower.contains("tokens"))
            && (*m != "context window" || lower.contains("exceed"))
            && (*m != "too many tokens" || !lower.contains("rate"))
    });
    if !hit {
        return None;
    }
    Some(ContextOverflow {
        window: window_from_text(&lower),
    })
}

/// The window stated in a (lowercased) context-length error, if any.
fn window_from_text(lower: &str) -> Option<i64> {
    for phrase in WINDOW_BEFORE_NUMBER {
        let mut from = 0;
        while let Some(pos) = lower[from..].find(phrase) {
            let after = from + pos + phrase.len();
            if let Some(n) = number_at_start(&lower[after..]) {
                return Some(n);
            }
            from = after;
        }
    }
    for phrase in WINDOW_AFTER_NUMBER {
        if let Some(pos) = lower.find(phrase)
            && let Some(n) = number_at_end(&lower[..pos])
        {
            return Some(n);
        }
    }
    None
}

/// A plausible window size (at least 256 tokens) after up to 4 separator characters
/// (spaces, quotes, colons, `=`, `(`).
fn number_at_start(s: &str) -> Option<i64> {
    let s = s.trim_start_matches([' ', ':', '=', '"', '(']);
    let digits: String = s
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '_')
        .filter(char::is_ascii_digit)
        .collect();
    plausible(&digits)
}

/// A plausible window size at the end of `s`, before trailing spaces.
fn number_at_end(s: &str) -> Option<i64> {
    let s = s.trim_end();
    let start = s
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_ascii_digit())
        .last()
        .map(|(i, _)| i)?;
    plausible(&s[start..])
}

fn plausible(digits: &str) -> Option<i64> {
    let n: i64 = digits.parse().ok()?;
    (256..=100_000_000).contains(&n).then_some(n)
}

impl ModelError {
    /// `Some` when this error says the request did not fit the model's context window.
    pub fn context_overflow(&self) -> Option<ContextOverflow> {
        match self {
            ModelError::Http {
                status: 400 | 413 | 422 | 500,
                message,
            } => classify_overflow(message),
            ModelError::Provider(message) | ModelError::BadResponse(message) => {
                classify_overflow(message)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(text: &str) -> Option<Option<i64>> {
        classify_overflow(text).map(|o| o.window)
    }

    #[test]
    fn openai() {
        let t = r#"This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens. Please reduce the length of the messages. (context_length_exceeded)"#;
        assert_eq!(window(t), Some(Some(8192)));
        assert_eq!(
            window("Your input exceeds the context window of this model (context_length_exceeded)"),
            Some(None)
        );
    }

    #[test]
    fn vllm() {
        let t = "This model's maximum context length is 32768 tokens. However, you requested 40000 tokens (39000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion. (BadRequestError)";
        assert_eq!(window(t), Some(Some(32768)));
        let t = "The decoder prompt (length 40321) is longer than the maximum model length of 32,768. Make sure that `max_model_len` is no smaller than the number of text tokens.";
        assert_eq!(window(t), Some(Some(32768)));
    }

    #[test]
    fn llama_cpp() {
        let body = r#"{"error":{"code":400,"message":"the request exceeds the available context size, try increasing it","type":"exceed_context_size_error","n_prompt_tokens":5120,"n_ctx":4096}}"#;
        assert_eq!(window(body), Some(Some(4096)));
        assert_eq!(
            window(
                "the request exceeds the available context size, try increasing it (exceed_context_size_error)"
            ),
            Some(None)
        );
    }

    #[test]
    fn ollama() {
        assert_eq!(
            window("prompt too long; exceeded max context length by 1234 tokens"),
            Some(None)
        );
        assert_eq!(
            window("input length exceeds the context length"),
            Some(None)
        );
    }

    #[test]
    fn lm_studio() {
        let t = "Trying to keep the first 6000 tokens when context the overflows. However, the model is loaded with context length of only 4096 tokens, which is not enough. Try to load the model with a larger context length, or provide a shorter input";
        assert_eq!(window(t), Some(Some(4096)));
    }

    #[test]
    fn lm_studio_0_4() {
        // Reported with and without the numbers (Gitlawb/openclaude#353,
        // lmstudio-ai/lmstudio-bug-tracker#2205).
        let t = r#"{"error":"The number of tokens to keep from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input."}"#;
        assert_eq!(window(t), Some(Some(4096)));
        let t = "The number of tokens to keep from the initial prompt is greater than the context length. Try to load the model with a larger context length, or provide a shorter input";
        assert_eq!(window(t), Some(None));
    }

    #[test]
    fn mistral_tgi_sglang() {
        assert_eq!(
            window(
                "Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length"
            ),
            Some(Some(32768))
        );
        assert_eq!(
            window(
                "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 5000 `inputs` tokens and 0 `max_new_tokens`"
            ),
            Some(Some(4096))
        );
        assert_eq!(
            window(
                "The input (5000 tokens) is longer than the model's context length (4096 tokens)."
            ),
            Some(Some(4096))
        );
    }

    #[test]
    fn anthropic() {
        let body = r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210412 tokens > 200000 maximum"}}"#;
        assert_eq!(window(body), Some(Some(200_000)));
        assert_eq!(
            window(
                "input length and `max_tokens` exceed context limit: 198000 + 8192 > 200000, decrease input length or `max_tokens` and try again"
            ),
            Some(None)
        );
    }

    #[test]
    fn other_errors_are_not_overflow() {
        for t in [
            "Rate limit reached: too many tokens per minute",
            "invalid api key",
            "model `foo` not found",
            "Input validation error: temperature must be <= 2",
            "server error",
        ] {
            assert_eq!(classify_overflow(t), None, "{t}");
        }
    }

    #[test]
    fn error_kinds() {
        let e = ModelError::Http {
            status: 400,
            message: "http://x answered HTTP 400 Bad Request: This model's maximum context length is 6000 tokens".into(),
        };
        assert_eq!(
            e.context_overflow(),
            Some(ContextOverflow { window: Some(6000) })
        );
        let e = ModelError::Http {
            status: 401,
            message: "maximum context length is 6000 tokens".into(),
        };
        assert_eq!(e.context_overflow(), None);
        let e = ModelError::Provider("context_length_exceeded".into());
        assert!(e.context_overflow().is_some());
    }
}
