//! Our typed v2 wire against Codex app-server 0.171's, method by method: field names and
//! required sets. The Codex side is a fact list extracted from its generated schema
//! (`fixtures/codex-0.171-facts.json`, made by `scripts/codex-schema-facts.py`), so this
//! runs without Codex. Every difference must be listed in `ALLOWED` with its reason.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use oi_app_server_protocol::export::methods;
use oi_app_server_protocol::schema::{Kind, fields, types, variants};
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
    (
        "mcpServer/oauth/login",
        "params",
        "clientRegistration",
        "the client is registered dynamically, or by `[mcp_servers.<name>.oauth] client_id`",
    ),
    (
        "mcpServer/oauth/login",
        "result",
        "loginId",
        "one login per request; mcpServer/oauthLogin/completed names the server",
    ),
    (
        "mcpServer/oauthLogin/completed",
        "params",
        "loginId",
        "one login per request; the notification names the server",
    ),
    (
        "thread/settings/update",
        "params",
        "disabledPluginIds",
        "no plugins",
    ),
    (
        "thread/settings/update",
        "params",
        "summary",
        "reasoning summaries are whatever the model streams",
    ),
    ("turn/start", "params", "turnTrigger", "not implemented"),
    // Result fields of Codex features we do not have; clients must treat them as optional
    // (Codex does not always send them either).
    (
        "*",
        "result",
        "activePermissionProfile",
        "permission profiles are not implemented",
    ),
    ("*", "result", "disabledPluginIds", "no plugins"),
    ("*", "result", "multiAgentMode", "no sub-agents"),
    (
        "*",
        "result",
        "runtimeWorkspaceRoots",
        "no remote workspaces",
    ),
    (
        "thread/resume",
        "result",
        "collaborationMode",
        "collaboration modes apply per turn (turn/start), not per thread",
    ),
    (
        "thread/resume",
        "result",
        "initialTurnsPage",
        "resume returns every turn in thread.turns (or none with excludeTurns); page with thread/turns/list",
    ),
    (
        "thread/resume",
        "result",
        "turnsBackwardsCursor",
        "no initialTurnsPage, so no cursor into it",
    ),
    (
        "thread/resume",
        "result",
        "itemsBackwardsCursor",
        "no initialTurnsPage, so no cursor into it",
    ),
    (
        "thread/read",
        "result",
        "readState",
        "no read/unread tracking",
    ),
    (
        "thread/list",
        "result",
        "readStates",
        "no read/unread tracking",
    ),
    (
        "thread/list",
        "result",
        "backwardsCursor",
        "thread/list pages forward only",
    ),
    (
        "configRequirements/read",
        "result",
        "supportsIndependentSpeedModes",
        "no speed modes: OpenAI service tiers do not apply",
    ),
    // Accounts are API keys of model providers, not ChatGPT accounts.
    (
        "account/login/start",
        "params",
        "type",
        "Codex's params are a union tagged by `type` (the facts hold top-level fields only); we take its apiKey variant",
    ),
    (
        "account/login/start",
        "params",
        "apiKey",
        "the apiKey variant of Codex's union",
    ),
    (
        "account/login/start",
        "params",
        "modelProvider",
        "ours: which provider the key is for (default: the configured one)",
    ),
    ("account/read", "result", "userId", "no ChatGPT accounts"),
    (
        "account/read",
        "result",
        "workspaceRouting",
        "no ChatGPT workspaces",
    ),
    (
        "account/read",
        "result",
        "modelProvider",
        "ours: the provider whose key this is",
    ),
    (
        "account/read",
        "result",
        "modelProviderName",
        "ours: the provider's display name",
    ),
    (
        "account/read",
        "result",
        "apiKeyEnvVar",
        "ours: the variable the key is read from",
    ),
    (
        "account/read",
        "result",
        "apiKeySource",
        "ours: where the key was found (env or credentials file)",
    ),
    (
        "account/rateLimits/read",
        "result",
        "accountId",
        "no ChatGPT accounts",
    ),
    (
        "account/rateLimits/read",
        "result",
        "ordinaryUsageAllowed",
        "no ChatGPT usage plans",
    ),
    (
        "account/rateLimits/read",
        "result",
        "rateLimitResetCredits",
        "no ChatGPT credits",
    ),
    (
        "account/rateLimits/read",
        "result",
        "rateLimitUpsell",
        "no ChatGPT plans",
    ),
    (
        "account/updated",
        "params",
        "reason",
        "the update always follows a login or logout call",
    ),
    (
        "account/login/completed",
        "params",
        "onboardingEntrypoint",
        "no ChatGPT onboarding",
    ),
    // Notification and server-request fields we do not send.
    (
        "item/completed",
        "params",
        "contentTokenCount",
        "items are not tokenized separately; thread/tokenUsage/updated has the counts",
    ),
    (
        "configWarning",
        "params",
        "details",
        "the summary says what was ignored and why",
    ),
    (
        "configWarning",
        "params",
        "range",
        "config warnings carry no source range",
    ),
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
        "mcpServer/elicitation/request",
        "params",
        "mode",
        "a field of Codex's `form` variant (a oneOf beside the common fields, which the fact script does not read)",
    ),
    (
        "mcpServer/elicitation/request",
        "params",
        "message",
        "a field of Codex's `form` variant (a oneOf beside the common fields, which the fact script does not read)",
    ),
    (
        "mcpServer/elicitation/request",
        "params",
        "requestedSchema",
        "a field of Codex's `form` variant (a oneOf beside the common fields, which the fact script does not read)",
    ),
    (
        "mcpServer/elicitation/request",
        "params",
        "_meta",
        "a field of Codex's `form` variant (a oneOf beside the common fields, which the fact script does not read)",
    ),
    (
        "mcpServer/startupStatus/updated",
        "params",
        "failureReason",
        "the error text says why",
    ),
];

/// (type, variant tag or "*", field or "*", why we differ) for the objects nested in
/// results and notifications. A variant listed with field "*" is one we never send.
const ALLOWED_IN_TYPES: &[(&str, &str, &str, &str)] = &[
    (
        "ConfigLayerSource",
        "user",
        "profile",
        "a profile is resolved inside the user layer, not reported as a source of its own",
    ),
    (
        "ConfigLayerSource",
        "packagedDefaults",
        "*",
        "defaults are compiled in, not a layer",
    ),
    ("ConfigLayerSource", "mdm", "*", "no managed (MDM) config"),
    (
        "ConfigLayerSource",
        "system",
        "*",
        "no system-wide config file",
    ),
    (
        "ConfigLayerSource",
        "enterpriseManaged",
        "*",
        "no enterprise-managed config",
    ),
    (
        "ConfigLayerSource",
        "legacyManagedConfigTomlFromFile",
        "*",
        "no managed config",
    ),
    (
        "ConfigLayerSource",
        "legacyManagedConfigTomlFromMdm",
        "*",
        "no managed config",
    ),
    (
        "ConfigLayer",
        "*",
        "disabledReason",
        "every layer we report is in effect (an untrusted project's config is not loaded)",
    ),
    // The settings of later turns: fields of Codex features we do not have.
    (
        "ThreadSettings",
        "*",
        "activePermissionProfile",
        "profiles stand for sandbox modes; sandboxPolicy says which one is active",
    ),
    ("ThreadSettings", "*", "disabledPluginIds", "no plugins"),
    (
        "ThreadSettings",
        "*",
        "environments",
        "no remote environments",
    ),
    ("ThreadSettings", "*", "multiAgentMode", "no sub-agents"),
    ("ThreadSettings", "*", "personality", "no personalities"),
    // Thread fields of Codex features we do not have.
    ("Thread", "*", "attachedToThreadId", "no attached threads"),
    (
        "Thread",
        "*",
        "canAcceptDirectInput",
        "every loaded thread accepts turn/start",
    ),
    ("Thread", "*", "daybreakEnabled", "not implemented"),
    ("Thread", "*", "environments", "no remote environments"),
    ("Thread", "*", "extra", "no client metadata on threads"),
    ("Thread", "*", "historyMode", "not implemented"),
    (
        "Thread",
        "*",
        "model",
        "the model is in the thread/start|resume|fork result",
    ),
    (
        "Thread",
        "*",
        "reasoningEffort",
        "the effort is in the thread/start|resume|fork result",
    ),
    ("Thread", "*", "originator", "not recorded"),
    ("Thread", "*", "parentThreadId", "no sub-agent threads"),
    ("Thread", "*", "recencyAt", "updatedAt orders threads"),
    ("Thread", "*", "section", "no thread sections"),
    ("Thread", "*", "sectionEnteredAt", "no thread sections"),
    (
        "Thread",
        "*",
        "threadSource",
        "source says where the thread came from",
    ),
    ("Turn", "*", "rootTurnId", "no sub-agent turns"),
    (
        "TurnError",
        "*",
        "misalignment",
        "no misalignment detection",
    ),
    (
        "TokenUsageBreakdown",
        "*",
        "cacheWriteInputTokens",
        "open-model endpoints do not report cache writes",
    ),
    // Item variants our engine has no events for.
    ("ThreadItem", "hookPrompt", "*", "no hooks"),
    ("ThreadItem", "functionCallOutput", "*", "no dynamic tools"),
    ("ThreadItem", "plan", "*", "no plan tool"),
    ("ThreadItem", "dynamicToolCall", "*", "no dynamic tools"),
    ("ThreadItem", "collabAgentToolCall", "*", "no sub-agents"),
    ("ThreadItem", "subAgentActivity", "*", "no sub-agents"),
    ("ThreadItem", "webSearch", "*", "no web search tool"),
    ("ThreadItem", "imageView", "*", "no image view tool"),
    ("ThreadItem", "sleep", "*", "no sleep tool"),
    ("ThreadItem", "imageGeneration", "*", "no image generation"),
    ("ThreadItem", "enteredReviewMode", "*", "no review mode"),
    ("ThreadItem", "exitedReviewMode", "*", "no review mode"),
    // Item fields we do not have.
    (
        "ThreadItem",
        "userMessage",
        "clientId",
        "clients send no message ids",
    ),
    ("ThreadItem", "agentMessage", "delivery", "not implemented"),
    (
        "ThreadItem",
        "agentMessage",
        "memoryCitation",
        "no memories",
    ),
    ("ThreadItem", "agentMessage", "moderation", "no moderation"),
    (
        "ThreadItem",
        "agentMessage",
        "questions",
        "no structured questions",
    ),
    ("ThreadItem", "commandExecution", "pluginId", "no plugins"),
    (
        "ThreadItem",
        "commandExecution",
        "scriptPath",
        "commands are not scripts on disk",
    ),
    ("ThreadItem", "mcpToolCall", "appContext", "no apps"),
    (
        "ThreadItem",
        "mcpToolCall",
        "environmentId",
        "no remote environments",
    ),
    (
        "ThreadItem",
        "mcpToolCall",
        "mcpAppResourceUri",
        "no MCP apps",
    ),
    ("ThreadItem", "mcpToolCall", "mcpAppUi", "no MCP apps"),
    ("ThreadItem", "mcpToolCall", "pluginId", "no plugins"),
    (
        "ThreadItem",
        "mcpToolCall",
        "readOnlyHint",
        "tool annotations are in mcpServerStatus/list",
    ),
    ("UserInput", "audio", "*", "no audio input"),
    ("UserInput", "localAudio", "*", "no audio input"),
    (
        "UserInput",
        "image",
        "detail",
        "image detail is left to the model server",
    ),
    (
        "UserInput",
        "image",
        "fileId",
        "file ids name OpenAI uploads; images come by url",
    ),
    (
        "UserInput",
        "image",
        "url",
        "Codex needs url or fileId; we need url, the one we support",
    ),
    (
        "UserInput",
        "localImage",
        "detail",
        "image detail is left to the model server",
    ),
    (
        "SandboxPolicy",
        "externalSandbox",
        "*",
        "no external sandbox mode",
    ),
    (
        "SandboxPolicy",
        "readOnly",
        "networkAccess",
        "read-only never has network access",
    ),
    (
        "RateLimitSnapshot",
        "*",
        "individualLimit",
        "no ChatGPT plans",
    ),
    (
        "RateLimitSnapshot",
        "*",
        "normalModelSlug",
        "no ChatGPT plans",
    ),
    (
        "RateLimitSnapshot",
        "*",
        "spendControlReached",
        "no ChatGPT spend controls",
    ),
    // Model fields of OpenAI's catalog that open-model providers have no data for.
    ("Model", "*", "additionalSpeedTiers", "no service tiers"),
    ("Model", "*", "availabilityNux", "no ChatGPT onboarding"),
    (
        "Model",
        "*",
        "availableAccessPrograms",
        "no ChatGPT access programs",
    ),
    ("Model", "*", "defaultServiceTier", "no service tiers"),
    ("Model", "*", "modelSpecialty", "not known for open models"),
    ("Model", "*", "multiAgentVersion", "no sub-agents"),
    ("Model", "*", "serviceTiers", "no service tiers"),
];

/// (type, variant or "*", field, why) for fields we send that Codex does not have.
const EXTRA_IN_TYPES: &[(&str, &str, &str, &str)] = &[
    (
        "McpServerStatus",
        "*",
        "protocolVersion",
        "the MCP protocol version the server negotiated: servers of two protocol eras are live",
    ),
    (
        "RateLimitSnapshot",
        "*",
        "headers",
        "providers differ in their x-ratelimit-* headers; the raw ones say what the windows cannot",
    ),
    (
        "Model",
        "*",
        "modelProvider",
        "we list several providers' models; this says which provider serves it",
    ),
    (
        "Model",
        "*",
        "contextWindow",
        "open models' windows differ widely; clients size their context by it",
    ),
];

fn allowed_in_type(ty: &str, variant: &str, field: &str) -> bool {
    ALLOWED_IN_TYPES
        .iter()
        .any(|(t, v, f, _)| *t == ty && (*v == "*" || *v == variant) && (*f == "*" || *f == field))
}

fn allowed(method: &str, part: &str, field: &str) -> bool {
    ALLOWED
        .iter()
        .any(|(m, p, f, _)| (*m == "*" || *m == method) && *p == part && (*f == "*" || *f == field))
}

fn facts() -> Value {
    serde_json::from_str(include_str!("fixtures/codex-0.171-facts.json")).unwrap()
}

fn facts_of<'a>(facts: &'a Value, kind: Kind, method: &str) -> Option<&'a Value> {
    let table = match kind {
        Kind::Request => "requests",
        Kind::Notification => "notifications",
        Kind::ServerRequest => "serverRequests",
    };
    facts[table].get(method)
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
        if !allowed(method, part, f) {
            problems.push(format!("{method} {part}: `{f}` is not a Codex field"));
        }
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
            if !allowed(method, part, f) {
                problems.push(format!("{method} {part}: we require `{f}`; Codex does not"));
            }
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
        if facts_of(&facts, m.kind, m.method).is_some_and(|t| t["params"].is_null()) {
            // Codex's method takes no params; ours must not need any either.
            let (_, required) = fields(&m.params);
            if !required.is_empty() {
                problems.push(format!(
                    "{}: Codex takes no params; we require {required:?}",
                    m.method
                ));
            }
        }
        let table = match m.kind {
            Kind::Request => "requests",
            Kind::Notification => "notifications",
            Kind::ServerRequest => "serverRequests",
        };
        if m.legacy_v1 {
            // Codex 0.171 dropped the v1 methods; tests/accounts_v1.rs checks ours.
            if facts[table].get(m.method).is_some() {
                problems.push(format!(
                    "{}: declared v1 (legacy), yet Codex 0.171 has it; declare it as a request",
                    m.method
                ));
            }
            continue;
        }
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
        if !theirs["params"].is_null() {
            problems.extend(compare(
                m.method,
                "params",
                &m.params,
                &theirs["params"],
                we_send_params,
            ));
            compared += 1;
        }
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
    let n = oi_app_server_protocol::export::write_schema(dir.path()).unwrap();
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

/// Types both sides send: compared like params we read (we must not require more) and
/// like things we send (we must have every field Codex requires).
const BOTH_WAYS: &[&str] = &["UserInput", "SandboxPolicy"];

/// Compares one object (or one variant) of a type with Codex's facts.
fn compare_type(ty: &str, variant: &str, ours: &Value, theirs: &Value) -> Vec<String> {
    let (names, required) = fields(ours);
    let names: BTreeSet<String> = names.into_iter().collect();
    let required: BTreeSet<String> = required.into_iter().collect();
    let their_names = strings(&theirs["fields"]);
    let their_required = strings(&theirs["required"]);
    let mut problems = Vec::new();
    for f in names.difference(&their_names) {
        let extra = EXTRA_IN_TYPES
            .iter()
            .any(|(t, v, x, _)| *t == ty && (*v == "*" || *v == variant) && x == f);
        if !extra {
            problems.push(format!("{ty} {variant}: `{f}` is not a Codex field"));
        }
    }
    for f in their_required.difference(&names) {
        problems.push(format!("{ty} {variant}: Codex always has `{f}`; we do not"));
    }
    if BOTH_WAYS.contains(&ty) {
        for f in required.difference(&their_required) {
            if !allowed_in_type(ty, variant, f) {
                problems.push(format!("{ty} {variant}: we require `{f}`; Codex does not"));
            }
        }
    }
    for f in their_names.difference(&names) {
        if !their_required.contains(f) && !allowed_in_type(ty, variant, f) {
            problems.push(format!(
                "{ty} {variant}: Codex field `{f}` is missing (add it or list it in ALLOWED_IN_TYPES)"
            ));
        }
    }
    problems
}

#[test]
fn nested_objects_match_codex_field_names_and_required_sets() {
    let facts = facts();
    let mut problems = Vec::new();
    let mut compared = 0;
    for (ty, ours) in types() {
        let Some(theirs) = facts["types"].get(ty) else {
            problems.push(format!(
                "{ty}: not in the fact list; add `type {ty}` to fixtures/codex-methods.txt and regenerate"
            ));
            continue;
        };
        let Some(their_variants) = theirs.get("variants").and_then(Value::as_object) else {
            problems.extend(compare_type(ty, "*", &ours, theirs));
            compared += 1;
            continue;
        };
        let our_variants = variants(&ours);
        assert!(
            !our_variants.is_empty(),
            "{ty}: Codex's is a tagged union, ours is not"
        );
        for (tag, schema) in &our_variants {
            match their_variants.get(tag) {
                Some(t) => {
                    problems.extend(compare_type(ty, tag, schema, t));
                    compared += 1;
                }
                None => problems.push(format!("{ty}: variant `{tag}` is not a Codex variant")),
            }
        }
        for tag in their_variants.keys() {
            if !our_variants.iter().any(|(t, _)| t == tag) && !allowed_in_type(ty, tag, "*") {
                problems.push(format!(
                    "{ty}: Codex variant `{tag}` is missing (add it or list it in ALLOWED_IN_TYPES)"
                ));
            }
        }
    }
    assert!(compared >= 25, "only {compared} objects compared");
    assert!(
        problems.is_empty(),
        "differences from Codex 0.171:\n{}",
        problems.join("\n")
    );
}
