//! Parsing of single values whose wire spelling is owned elsewhere.

use oi_protocol::config_types::ReasoningEffort;

/// A `model_reasoning_effort` that is not one of the wire spellings.
#[derive(Debug, thiserror::Error)]
#[error("unknown reasoning effort `{0}`; expected none, minimal, low, medium, high or xhigh")]
pub(crate) struct UnknownEffort(String);

/// `model_reasoning_effort`, spelled as on the wire (`none` ... `xhigh`).
pub(crate) fn parse_effort(s: &str) -> Result<ReasoningEffort, UnknownEffort> {
    serde_json::from_value(serde_json::Value::String(s.to_string()))
        .map_err(|_| UnknownEffort(s.to_string()))
}
