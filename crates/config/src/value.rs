//! Parsing of single values whose wire spelling is owned elsewhere.

use oi_protocol::config_types::ReasoningEffort;

/// `model_reasoning_effort`, spelled as on the wire (`none` ... `xhigh`).
pub(crate) fn parse_effort(s: &str) -> Result<ReasoningEffort, String> {
    serde_json::from_value(serde_json::Value::String(s.to_string())).map_err(|_| {
        format!(
            "unknown reasoning effort `{s}`; expected none, minimal, low, medium, high or xhigh"
        )
    })
}
