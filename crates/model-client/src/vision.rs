//! Whether a model takes images, and the one line that says so when it does not. Two
//! sources: the built-in catalog (a model we know has no vision is refused before anything is
//! sent), and the server's own refusal (llama.cpp without `--mmproj`, vLLM, Ollama and
//! LM Studio each word it differently), mapped to the same advice.

/// Why `model` cannot be sent images, when the built-in catalog knows it has no vision.
/// Models the catalog does not know are sent the image; the server decides.
pub fn refusal(model: &str) -> Option<String> {
    let info = crate::catalog::builtin_info(model)?;
    (!info.image_input).then(|| advice(model))
}

/// The advice for a model without vision.
pub fn advice(model: &str) -> String {
    format!(
        "the model `{model}` does not accept images; choose a vision model (for example Qwen2.5-VL, Kimi-VL, GLM-4.5V or Llama 4) with `-m MODEL` or /model, or send the message without images"
    )
}

/// Whether an error body is a server saying the model takes no images.
pub(crate) fn is_no_vision_error(body: &str) -> bool {
    let b = body.to_ascii_lowercase();
    let mentions_images = b.contains("image") || b.contains("multimodal") || b.contains("vision");
    mentions_images
        && [
            // llama.cpp: "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj"
            "not supported",
            "mmproj",
            // vLLM: "… is not a multimodal model", "At most 0 image(s) may be provided"
            "not a multimodal",
            "at most 0 image",
            // Ollama: "this model is missing data required for image input"
            "missing data required for image",
            // LM Studio and others: "Model does not support images", "does not support vision"
            "does not support",
            "unsupported",
        ]
        .iter()
        .any(|p| b.contains(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_text_models_are_refused_and_unknown_ones_are_not() {
        assert!(refusal("qwen3-coder-30b").is_some_and(|r| r.contains("does not accept images")));
        assert!(refusal("glm-4.5v").is_none());
        assert!(refusal("my-own-vl-model").is_none());
    }

    #[test]
    fn servers_refusals_are_recognised() {
        for body in [
            r#"{"error":{"code":500,"message":"image input is not supported - hint: if this is unexpected, you may need to provide the mmproj","type":"server_error"}}"#,
            r#"{"object":"error","message":"Qwen3 is not a multimodal model","code":400}"#,
            r#"{"error":"this model is missing data required for image input"}"#,
            r#"{"error":"Model does not support images. Please use a model that does."}"#,
        ] {
            assert!(is_no_vision_error(body), "{body}");
        }
        assert!(!is_no_vision_error(
            r#"{"error":"maximum context length is 4096 tokens"}"#
        ));
        assert!(!is_no_vision_error(
            r#"{"error":"tool_choice not supported"}"#
        ));
    }
}
