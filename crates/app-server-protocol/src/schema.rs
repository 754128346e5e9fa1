//! The JSON Schema of our typed wire, per method declared in [`super::methods`]: what
//! `interpreter app-server generate-json-schema` writes and what the schema test compares
//! with Codex's field names and required sets.

use super::wire::*;
use schemars::JsonSchema;
use serde_json::Value;

/// Which way a method goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Client → server request, with a result.
    Request,
    /// Server → client notification.
    Notification,
    /// Server → client request (approvals), with the client's reply.
    ServerRequest,
}

/// One wire method and the schemas of its params and result (`None`: a notification, or
/// a server request whose answer is not typed).
pub struct MethodSchema {
    /// Which way it goes.
    pub kind: Kind,
    /// A v1 method kept for old clients, which Codex 0.171 no longer has.
    pub legacy_v1: bool,
    /// Its name on the wire, e.g. `thread/start`.
    pub method: &'static str,
    /// The JSON Schema of its params.
    pub params: Value,
    /// The JSON Schema of its result.
    pub result: Option<Value>,
}

pub(crate) fn schema<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
}

/// The objects nested in results and notifications, by Codex's name for them, with our
/// schema: what the schema test compares beyond the top level of each method.
pub fn types() -> Vec<(&'static str, Value)> {
    vec![
        ("Thread", schema::<Thread>()),
        ("ConfigLayerSource", schema::<ConfigLayerSource>()),
        ("ConfigLayer", schema::<ConfigLayer>()),
        ("ConfigLayerMetadata", schema::<ConfigLayerMetadata>()),
        ("OverriddenMetadata", schema::<OverriddenMetadata>()),
        ("ConfigEdit", schema::<ConfigEdit>()),
        ("FuzzyFileSearchResult", schema::<FuzzyFileSearchResult>()),
        ("CollaborationModeMask", schema::<CollaborationModeMask>()),
        ("ThreadSettings", schema::<super::session::ThreadSettings>()),
        ("ThreadStatus", schema::<ThreadStatus>()),
        ("GitInfo", schema::<GitInfo>()),
        ("Turn", schema::<Turn>()),
        ("TurnError", schema::<TurnError>()),
        ("ThreadItem", schema::<ThreadItem>()),
        ("UserInput", schema::<V2UserInput>()),
        ("CommandAction", schema::<CommandAction>()),
        ("FileUpdateChange", schema::<FileUpdateChange>()),
        ("PatchChangeKind", schema::<PatchChangeKind>()),
        ("McpToolCallResult", schema::<McpToolCallResult>()),
        ("McpToolCallError", schema::<McpToolCallError>()),
        ("ThreadTokenUsage", schema::<ThreadTokenUsage>()),
        ("TokenUsageBreakdown", schema::<TokenUsageBreakdown>()),
        ("SandboxPolicy", schema::<V2SandboxPolicy>()),
        ("Model", schema::<Model>()),
        ("ReasoningEffortOption", schema::<ReasoningEffortOption>()),
        ("RateLimitSnapshot", schema::<RateLimitSnapshot>()),
        ("RateLimitWindow", schema::<RateLimitWindow>()),
    ]
}

/// The variants of a union tagged by `type`, by tag, each an object schema; empty for a
/// schema that is not such a union.
pub fn variants(schema: &Value) -> Vec<(String, Value)> {
    let Some(arms) = schema["oneOf"].as_array() else {
        return Vec::new();
    };
    arms.iter()
        .filter_map(|arm| {
            let tag = &arm["properties"]["type"];
            let name = tag["const"]
                .as_str()
                .or_else(|| tag["enum"][0].as_str())?
                .to_string();
            Some((name, arm.clone()))
        })
        .collect()
}

/// Top-level field names and the required ones of an object schema (flattened fields
/// included; schemars merges them).
pub fn fields(schema: &Value) -> (Vec<String>, Vec<String>) {
    let mut names: Vec<String> = schema["properties"]
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    let mut required: Vec<String> = schema["required"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|v| v.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    required.sort();
    (names, required)
}
