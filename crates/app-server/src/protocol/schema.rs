//! The JSON Schema of our typed v2 wire ([`super::wire`] and the params types of the older
//! methods), per method: what `interpreter app-server generate-json-schema` writes and
//! what the schema test compares with Codex's field names and required sets.

use super::wire::*;
use schemars::JsonSchema;
use serde_json::{Value, json};
use std::path::Path;

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

/// One wire method and the schemas of its params and result (`None`: untyped so far).
pub struct MethodSchema {
    pub kind: Kind,
    pub method: &'static str,
    pub params: Value,
    pub result: Option<Value>,
}

fn schema<T: JsonSchema>() -> Value {
    serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null)
}

macro_rules! entry {
    ($kind:expr, $method:literal, $params:ty) => {
        MethodSchema {
            kind: $kind,
            method: $method,
            params: schema::<$params>(),
            result: None,
        }
    };
    ($kind:expr, $method:literal, $params:ty => $result:ty) => {
        MethodSchema {
            kind: $kind,
            method: $method,
            params: schema::<$params>(),
            result: Some(schema::<$result>()),
        }
    };
}

/// Every method whose wire is typed, with its schemas.
pub fn methods() -> Vec<MethodSchema> {
    use crate::accounts;
    use crate::threads::{
        ForkParams, ListParams, NameParams, PageParams, ReadParams, ResumeParams, StartParams,
    };
    use crate::turns::{InterruptParams, StartParams as TurnStartParams, SteerParams};
    use Kind::*;
    vec![
        entry!(Request, "initialize", InitializeParams => InitializeResponse),
        entry!(Request, "thread/start", StartParams => ThreadSessionResponse),
        entry!(Request, "thread/resume", ResumeParams => ThreadSessionResponse),
        entry!(Request, "thread/fork", ForkParams => ThreadSessionResponse),
        entry!(Request, "thread/read", ReadParams => ThreadReadResponse),
        entry!(Request, "thread/list", ListParams => ThreadListResponse),
        entry!(Request, "thread/loaded/list", PageParams => ThreadLoadedListResponse),
        entry!(Request, "thread/archive", ThreadIdParams => EmptyResponse),
        entry!(Request, "thread/unarchive", ThreadIdParams => ThreadUnarchiveResponse),
        entry!(Request, "thread/name/set", NameParams => EmptyResponse),
        entry!(Request, "thread/turns/list", ThreadTurnsListParams => ThreadTurnsListResponse),
        entry!(Request, "thread/items/list", ThreadItemsListParams => ThreadItemsListResponse),
        entry!(Request, "thread/delete", ThreadIdParams => EmptyResponse),
        entry!(Request, "thread/unsubscribe", ThreadIdParams => ThreadUnsubscribeResponse),
        entry!(Request, "thread/compact/start", ThreadIdParams => EmptyResponse),
        entry!(Request, "turn/start", TurnStartParams => TurnStartResponse),
        entry!(Request, "turn/steer", SteerParams => TurnSteerResponse),
        entry!(Request, "turn/interrupt", InterruptParams => EmptyResponse),
        entry!(Request, "model/list", crate::catalog::ModelListParams => ModelListResponse),
        entry!(Request, "account/read", accounts::ReadParams => GetAccountResponse),
        entry!(Request, "account/login/start", accounts::LoginParams => LoginAccountResponse),
        entry!(Request, "account/login/cancel", accounts::CancelParams => CancelLoginAccountResponse),
        entry!(Request, "account/logout", accounts::Empty => EmptyResponse),
        entry!(Request, "account/rateLimits/read", accounts::Empty => GetAccountRateLimitsResponse),
        entry!(Request, "mcpServerStatus/list", ListMcpServerStatusParams => ListMcpServerStatusResponse),
        entry!(Request, "command/exec", CommandExecParams => CommandExecResponse),
        entry!(Notification, "thread/started", ThreadStartedNotification),
        entry!(
            Notification,
            "thread/status/changed",
            ThreadStatusChangedNotification
        ),
        entry!(Notification, "thread/archived", ThreadIdNotification),
        entry!(Notification, "thread/unarchived", ThreadIdNotification),
        entry!(Notification, "thread/closed", ThreadIdNotification),
        entry!(Notification, "thread/deleted", ThreadIdNotification),
        entry!(
            Notification,
            "thread/name/updated",
            ThreadNameUpdatedNotification
        ),
        entry!(
            Notification,
            "thread/tokenUsage/updated",
            ThreadTokenUsageUpdatedNotification
        ),
        entry!(
            Notification,
            "thread/compacted",
            ContextCompactedNotification
        ),
        entry!(Notification, "turn/started", TurnStartedNotification),
        entry!(Notification, "turn/completed", TurnCompletedNotification),
        entry!(Notification, "item/started", ItemStartedNotification),
        entry!(Notification, "item/completed", ItemCompletedNotification),
        entry!(
            Notification,
            "item/agentMessage/delta",
            ItemDeltaNotification
        ),
        entry!(
            Notification,
            "item/reasoning/textDelta",
            ReasoningTextDeltaNotification
        ),
        entry!(
            Notification,
            "item/commandExecution/outputDelta",
            ItemDeltaNotification
        ),
        entry!(
            Notification,
            "item/mcpToolCall/progress",
            McpToolCallProgressNotification
        ),
        entry!(Notification, "error", ErrorNotification),
        entry!(Notification, "warning", WarningNotification),
        entry!(Notification, "configWarning", ConfigWarningNotification),
        entry!(
            Notification,
            "deprecationNotice",
            DeprecationNoticeNotification
        ),
        entry!(
            Notification,
            "account/rateLimits/updated",
            AccountRateLimitsUpdatedNotification
        ),
        entry!(
            Notification,
            "account/login/completed",
            AccountLoginCompletedNotification
        ),
        entry!(Notification, "account/updated", AccountUpdatedNotification),
        entry!(
            Notification,
            "mcpServer/startupStatus/updated",
            McpServerStatusUpdatedNotification
        ),
        entry!(
            Notification,
            "serverRequest/resolved",
            ServerRequestResolvedNotification
        ),
        entry!(
            ServerRequest,
            "item/commandExecution/requestApproval",
            CommandExecutionRequestApprovalParams => CommandExecutionRequestApprovalResponse
        ),
        entry!(
            ServerRequest,
            "item/fileChange/requestApproval",
            FileChangeRequestApprovalParams => FileChangeRequestApprovalResponse
        ),
        entry!(Request, "config/read", ConfigReadParams => ConfigReadResponse),
        entry!(
            Request,
            "config/value/write",
            ConfigValueWriteParams => ConfigWriteResponse
        ),
        entry!(
            Request,
            "config/batchWrite",
            ConfigBatchWriteParams => ConfigWriteResponse
        ),
        entry!(
            Request,
            "collaborationMode/list",
            CollaborationModeListParams => CollaborationModeListResponse
        ),
        entry!(Request, "app/list", AppsListParams => AppsListResponse),
        entry!(
            Request,
            "fuzzyFileSearch",
            FuzzyFileSearchParams => FuzzyFileSearchResponse
        ),
        entry!(
            Request,
            "fuzzyFileSearch/sessionStart",
            FuzzyFileSearchSessionStartParams => EmptyResponse
        ),
        entry!(
            Request,
            "fuzzyFileSearch/sessionUpdate",
            FuzzyFileSearchSessionUpdateParams => EmptyResponse
        ),
        entry!(
            Request,
            "fuzzyFileSearch/sessionStop",
            FuzzyFileSearchSessionStopParams => EmptyResponse
        ),
        entry!(
            Notification,
            "fuzzyFileSearch/sessionUpdated",
            FuzzyFileSearchSessionUpdatedNotification
        ),
        entry!(
            Notification,
            "fuzzyFileSearch/sessionCompleted",
            FuzzyFileSearchSessionCompletedNotification
        ),
        entry!(
            ServerRequest,
            "mcpServer/elicitation/request",
            McpServerElicitationRequestParams
        ),
    ]
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

fn file_name(method: &str, part: &str) -> String {
    format!("{}.{part}.json", method.replace('/', "_"))
}

/// Writes one file per params/result schema and an `index.json` listing the methods.
/// Returns how many files were written.
pub fn write_schema(dir: &Path) -> Result<usize, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let write = |name: &str, v: &Value| -> Result<(), String> {
        let path = dir.join(name);
        let text = serde_json::to_string_pretty(v).map_err(|e| e.to_string())?;
        std::fs::write(&path, text + "\n")
            .map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    let mut index = Vec::new();
    let mut n = 0;
    for m in methods() {
        let params = file_name(m.method, "params");
        write(&params, &m.params)?;
        n += 1;
        let result = match &m.result {
            Some(r) => {
                let name = file_name(m.method, "result");
                write(&name, r)?;
                n += 1;
                Some(name)
            }
            None => None,
        };
        let kind = match m.kind {
            Kind::Request => "request",
            Kind::Notification => "notification",
            Kind::ServerRequest => "serverRequest",
        };
        index.push(json!({"method": m.method, "kind": kind, "params": params, "result": result}));
    }
    write("index.json", &json!({ "methods": index }))?;
    Ok(n + 1)
}
