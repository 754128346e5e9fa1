//! Our typed v2 wire against Codex app-server 0.171's, method by method: field names and
//! required sets. The Codex side is a fact list extracted from its generated schema
//! (`fixtures/codex-0.171-facts.json`, made by `scripts/codex-schema-facts.py`), so this
//! runs without Codex. Every difference must be listed in `ALLOWED` with its reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use oi_app_server::protocol::schema::{Kind, fields, methods};
use serde_json::Value;
use std::collections::BTreeSet;

/// (method, "params" | "result", field, why we differ).
const ALLOWED: &[(&str, &str, &str, &str)] = &[
    // Fields of Codex features we do not have (ChatGPT accounts, plugins, remote
    // environments, realtime, goals, projects, permission profiles, …): we accept
    // requests without them; a client that sends them is not refused (unknown fields are
    // ignored), they just have no effect.
    (
        "*",
        "params",
        "approvalsReviewer",
        "only the user reviews approvals",
    ),
    (
        "*",
        "params",
        "permissions",
        "permission profiles are not implemented; use sandbox",
    ),
    (
        "*",
        "params",
        "permissionProfile",
        "permission profiles are not implemented; use sandboxPolicy",
    ),
    (
        "*",
        "params",
        "serviceTier",
        "OpenAI service tiers do not apply to open-model endpoints",
    ),
    ("*", "params", "personality", "no personalities"),
    (
        "*",
        "params",
        "runtimeWorkspaceRoots",
        "no remote workspaces",
    ),
    ("*", "params", "environmentId", "no remote environments"),
    ("*", "params", "environments", "no remote environments"),
    ("*", "params", "path", "threads are named by id only"),
    (
        "*",
        "params",
        "history",
        "threads are resumed from our own store only",
    ),
    ("*", "params", "projectId", "no projects"),
    ("*", "params", "multiAgentMode", "no sub-agents"),
    ("*", "params", "additionalContext", "not implemented"),
    ("*", "params", "clientUserMessageId", "not implemented"),
    (
        "*",
        "params",
        "responsesapiClientMetadata",
        "Responses API client metadata is not forwarded",
    ),
    (
        "*",
        "params",
        "responsesapiClientMetadataPatch",
        "Responses API client metadata is not forwarded",
    ),
    (
        "thread/start",
        "params",
        "allowProviderModelFallback",
        "not implemented",
    ),
    (
        "thread/start",
        "params",
        "daybreakEnabled",
        "not implemented",
    ),
    (
        "thread/start",
        "params",
        "dynamicTools",
        "dynamic tools are not implemented",
    ),
    (
        "thread/start",
        "params",
        "experimentalRawEvents",
        "raw events are not implemented",
    ),
    ("thread/start", "params", "historyMode", "not implemented"),
    (
        "thread/start",
        "params",
        "mockExperimentalField",
        "Codex's own test field",
    ),
    (
        "thread/start",
        "params",
        "persistExtendedHistory",
        "not implemented",
    ),
    (
        "thread/start",
        "params",
        "sessionStartSource",
        "not implemented",
    ),
    (
        "thread/resume",
        "params",
        "initialTurnsPage",
        "use thread/turns/list",
    ),
    ("thread/fork", "params", "attachToSource", "not implemented"),
    (
        "thread/fork",
        "params",
        "beforeTurnId",
        "forks copy the whole thread",
    ),
    (
        "thread/fork",
        "params",
        "lastTurnId",
        "forks copy the whole thread",
    ),
    ("thread/fork", "params", "deferGoalContinuation", "no goals"),
    (
        "thread/fork",
        "params",
        "experimentalDisablePredictionMcp",
        "no predictions",
    ),
    (
        "thread/fork",
        "params",
        "experimentalPredictionMode",
        "no predictions",
    ),
    (
        "thread/list",
        "params",
        "ancestorThreadId",
        "no sub-agent threads",
    ),
    (
        "thread/list",
        "params",
        "attachedToThreadId",
        "no attached threads",
    ),
    (
        "thread/list",
        "params",
        "includeAttachedThreads",
        "no attached threads",
    ),
    (
        "thread/list",
        "params",
        "parentThreadId",
        "no sub-agent threads",
    ),
    (
        "thread/list",
        "params",
        "currentAccountOnly",
        "no ChatGPT accounts",
    ),
    (
        "thread/list",
        "params",
        "excludedThreadIds",
        "not implemented",
    ),
    (
        "thread/list",
        "params",
        "includedThreadIds",
        "not implemented",
    ),
    ("thread/list", "params", "originators", "not implemented"),
    ("thread/list", "params", "sectionId", "no thread sections"),
    (
        "thread/list",
        "params",
        "useStateDbOnly",
        "our index is always the source",
    ),
    (
        "thread/items/list",
        "params",
        "deferOutput",
        "outputs are always inline",
    ),
    (
        "turn/start",
        "params",
        "cyberAccessProgram",
        "not implemented",
    ),
    ("turn/start", "params", "disabledPluginIds", "no plugins"),
    (
        "turn/start",
        "params",
        "outputSchema",
        "structured output is not implemented",
    ),
    ("turn/start", "params", "parentTurnId", "not implemented"),
    ("turn/start", "params", "rootTurnId", "not implemented"),
    (
        "turn/start",
        "params",
        "summary",
        "reasoning summaries are whatever the model streams",
    ),
    (
        "mcpServerStatus/list",
        "params",
        "detail",
        "the full inventory is always returned",
    ),
    (
        "command/exec",
        "params",
        "processId",
        "buffered only: no follow-up command/exec/* calls",
    ),
    ("command/exec", "params", "size", "no PTY"),
    ("command/exec", "params", "tty", "no PTY"),
    ("command/exec", "params", "streamStdin", "buffered only"),
    (
        "command/exec",
        "params",
        "streamStdoutStderr",
        "buffered only",
    ),
    (
        "thread/start",
        "params",
        "selectedCapabilityRoots",
        "no capability roots",
    ),
    ("thread/start", "params", "serviceName", "not implemented"),
    (
        "*",
        "params",
        "threadSource",
        "every v2 thread is recorded as appServer",
    ),
    (
        "turn/start",
        "params",
        "serviceTierForTurn",
        "OpenAI service tiers do not apply",
    ),
    ("turn/start", "params", "toolOutput", "not implemented"),
    ("turn/start", "params", "turnTrigger", "not implemented"),
    // Notification and server-request fields we do not send.
    (
        "item/commandExecution/requestApproval",
        "params",
        "additionalPermissions",
        "no permission profiles",
    ),
    (
        "item/commandExecution/requestApproval",
        "params",
        "networkApprovalContext",
        "no network approvals",
    ),
    (
        "item/commandExecution/requestApproval",
        "params",
        "proposedExecpolicyAmendment",
        "no exec-policy rules",
    ),
    (
        "item/commandExecution/requestApproval",
        "params",
        "proposedNetworkPolicyAmendments",
        "no network approvals",
    ),
    (
        "mcpServer/startupStatus/updated",
        "params",
        "failureReason",
        "the error text says why",
    ),
];

fn allowed(method: &str, part: &str, field: &str) -> bool {
    ALLOWED
        .iter()
        .any(|(m, p, f, _)| (*m == "*" || *m == method) && *p == part && (*f == "*" || *f == field))
}

fn facts() -> Value {
    serde_json::from_str(include_str!("fixtures/codex-0.171-facts.json")).unwrap()
}

fn strings(v: &Value) -> BTreeSet<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect()
}

/// Compares one schema with Codex's facts; returns the problems found.
fn compare(method: &str, part: &str, ours: &Value, theirs: &Value, we_send: bool) -> Vec<String> {
    let (names, required) = fields(ours);
    let names: BTreeSet<String> = names.into_iter().collect();
    let required: BTreeSet<String> = required.into_iter().collect();
    let their_names = strings(&theirs["fields"]);
    let their_required = strings(&theirs["required"]);
    let mut problems = Vec::new();
    for f in names.difference(&their_names) {
        problems.push(format!("{method} {part}: `{f}` is not a Codex field"));
    }
    if we_send {
        // Clients may rely on every field Codex always sends.
        for f in their_required.difference(&names) {
            problems.push(format!(
                "{method} {part}: Codex always sends `{f}`; we do not"
            ));
        }
    } else {
        // We must not demand more than Codex does.
        for f in required.difference(&their_required) {
            problems.push(format!("{method} {part}: we require `{f}`; Codex does not"));
        }
        for f in their_required.difference(&names) {
            problems.push(format!(
                "{method} {part}: Codex requires `{f}`; we do not read it"
            ));
        }
    }
    // Codex fields we leave out need a reason.
    for f in their_names.difference(&names) {
        if !allowed(method, part, f) && !their_required.contains(f) {
            problems.push(format!(
                "{method} {part}: Codex field `{f}` is missing (add it or list it in ALLOWED)"
            ));
        }
    }
    problems
}

#[test]
fn typed_wire_matches_codex_field_names_and_required_sets() {
    let facts = facts();
    let mut problems = Vec::new();
    let mut compared = 0;
    for m in methods() {
        let table = match m.kind {
            Kind::Request => "requests",
            Kind::Notification => "notifications",
            Kind::ServerRequest => "serverRequests",
        };
        let Some(theirs) = facts[table].get(m.method) else {
            problems.push(format!(
                "{}: not in the fact list; add it to fixtures/codex-methods.txt and regenerate",
                m.method
            ));
            continue;
        };
        // Params: the client sends requests' params; we send notifications' and server
        // requests' params.
        let we_send_params = m.kind != Kind::Request;
        problems.extend(compare(
            m.method,
            "params",
            &m.params,
            &theirs["params"],
            we_send_params,
        ));
        compared += 1;
        if let (Some(ours), Some(t)) = (&m.result, theirs.get("result").filter(|r| !r.is_null())) {
            problems.extend(compare(
                m.method,
                "result",
                ours,
                t,
                m.kind == Kind::Request,
            ));
            compared += 1;
        }
    }
    assert!(compared >= 30, "only {compared} schemas compared");
    assert!(
        problems.is_empty(),
        "differences from Codex 0.171:\n{}",
        problems.join("\n")
    );
}

#[test]
fn generate_json_schema_writes_every_method() {
    let dir = tempfile::tempdir().unwrap();
    let n = oi_app_server::protocol::schema::write_schema(dir.path()).unwrap();
    assert!(n > methods().len());
    let index: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("index.json")).unwrap())
            .unwrap();
    let listed = index["methods"].as_array().unwrap();
    assert_eq!(listed.len(), methods().len());
    let start: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("thread_turns_list.result.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(start["required"], serde_json::json!(["data"]));
}
