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
    use crate::threads::{ForkParams, ListParams, ReadParams, ResumeParams, StartParams};
    use crate::turns::{InterruptParams, StartParams as TurnStartParams, SteerParams};
    use Kind::*;
    vec![
        entry!(Request, "initialize", InitializeParams => InitializeResponse),
        entry!(Request, "thread/start", StartParams),
        entry!(Request, "thread/resume", ResumeParams),
        entry!(Request, "thread/fork", ForkParams),
        entry!(Request, "thread/read", ReadParams),
        entry!(Request, "thread/list", ListParams),
        entry!(Request, "thread/turns/list", ThreadTurnsListParams => ThreadTurnsListResponse),
        entry!(Request, "thread/items/list", ThreadItemsListParams => ThreadItemsListResponse),
        entry!(Request, "thread/delete", ThreadIdParams => EmptyResponse),
        entry!(Request, "thread/unsubscribe", ThreadIdParams => ThreadUnsubscribeResponse),
        entry!(Request, "thread/compact/start", ThreadIdParams => EmptyResponse),
        entry!(Request, "turn/start", TurnStartParams),
        entry!(Request, "turn/steer", SteerParams),
        entry!(Request, "turn/interrupt", InterruptParams => EmptyResponse),
        entry!(Request, "mcpServerStatus/list", ListMcpServerStatusParams => ListMcpServerStatusResponse),
        entry!(Request, "command/exec", CommandExecParams => CommandExecResponse),
        entry!(
            Notification,
            "thread/status/changed",
            ThreadStatusChangedNotification
        ),
        entry!(Notification, "thread/closed", ThreadIdNotification),
        entry!(Notification, "thread/deleted", ThreadIdNotification),
        entry!(
            Notification,
            "thread/compacted",
            ContextCompactedNotification
        ),
        entry!(Notification, "turn/completed", TurnCompletedNotification),
        entry!(
            Notification,
            "deprecationNotice",
            DeprecationNoticeNotification
        ),
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
            CommandExecutionRequestApprovalParams
        ),
        entry!(
            ServerRequest,
            "item/fileChange/requestApproval",
            FileChangeRequestApprovalParams
        ),
    ]
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
