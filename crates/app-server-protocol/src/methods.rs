//! Every wire method of the v2 and v1 APIs, declared once: its name, which way it goes,
//! its params type and (for requests either way) its result type.
//!
//! Each method is a marker type (`ThreadStart`, `TurnCompleted`, …) that implements
//! [`WireMethod`] and one of [`ClientRequest`], [`ServerNotification`] or
//! [`ServerRequest`]. The server registers a handler only for a declared request (name
//! and params decode from the declaration, the handler returns its result type), sends a
//! notification only from a declaration and its params type, and asks the client only
//! through a declared server request whose reply decodes into its result type. The JSON
//! Schema that `interpreter app-server generate-json-schema` writes and the schema test
//! (`tests/schema_facts.rs`) read the same list ([`all`]), so none of these can drift
//! apart.

use super::schema::{Kind, MethodSchema, schema};
use super::wire::*;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// A declared wire method.
pub trait WireMethod {
    /// The method's name on the wire.
    const NAME: &'static str;
    /// What its params decode into (requests) or are built from (what we send).
    type Params;
}

/// A client→server request: its handler returns `Result`, serialized once at the edge.
pub trait ClientRequest: WireMethod {
    /// What the request answers.
    type Result: Serialize;
}

/// A server→client notification: the only way the server builds one, so every
/// notification sent is declared here with its params type.
pub trait ServerNotification: WireMethod {}

/// A server→client request (an approval, an MCP server's question): sent with its
/// params, answered by the client with a reply that decodes into `Result`.
pub trait ServerRequest: WireMethod<Params: Serialize> {
    /// What the client answers.
    type Result: DeserializeOwned;
}

macro_rules! kind {
    (request) => {
        Kind::Request
    };
    (v1) => {
        Kind::Request
    };
    (notification) => {
        Kind::Notification
    };
    (server_request) => {
        Kind::ServerRequest
    };
}

macro_rules! answer_impl {
    (request, $ty:ident, $result:ty) => {
        impl ClientRequest for $ty {
            type Result = $result;
        }
    };
    (v1, $ty:ident, $result:ty) => {
        answer_impl!(request, $ty, $result);
    };
    (server_request, $ty:ident, $result:ty) => {
        impl ServerRequest for $ty {
            type Result = $result;
        }
    };
}

macro_rules! notification_impl {
    (notification, $ty:ident) => {
        impl ServerNotification for $ty {}
    };
    ($other:ident, $ty:ident) => {};
}

macro_rules! wire_methods {
    ($($kind:ident $ty:ident $name:literal ($params:ty) $(-> $result:ty)?;)*) => {
        $(
            #[doc = concat!("`", $name, "`")]
            #[derive(Clone, Copy, Debug)]
            pub struct $ty;
            impl WireMethod for $ty {
                const NAME: &'static str = $name;
                type Params = $params;
            }
            $(answer_impl!($kind, $ty, $result);)?
            notification_impl!($kind, $ty);
        )*

        /// Every declared method with the schemas of its params and result.
        pub fn all() -> Vec<MethodSchema> {
            vec![$(MethodSchema {
                kind: kind!($kind),
                legacy_v1: stringify!($kind) == "v1",
                method: $name,
                params: schema::<$params>(),
                result: None $(.or(Some(schema::<$result>())))?,
            }),*]
        }
    };
}

wire_methods! {
    request Initialize "initialize" (InitializeParams) -> InitializeResponse;
    request ThreadStart "thread/start" (ThreadStartParams) -> ThreadSessionResponse;
    request ThreadResume "thread/resume" (ThreadResumeParams) -> ThreadSessionResponse;
    request ThreadFork "thread/fork" (ThreadForkParams) -> ThreadSessionResponse;
    request ThreadRead "thread/read" (ThreadReadParams) -> ThreadReadResponse;
    request ThreadList "thread/list" (ThreadListParams) -> ThreadListResponse;
    request ThreadLoadedList "thread/loaded/list" (ThreadLoadedListParams) -> ThreadLoadedListResponse;
    request ThreadArchive "thread/archive" (ThreadIdParams) -> EmptyResponse;
    request ThreadUnarchive "thread/unarchive" (ThreadIdParams) -> ThreadUnarchiveResponse;
    request ThreadNameSet "thread/name/set" (ThreadSetNameParams) -> EmptyResponse;
    request ThreadTurnsList "thread/turns/list" (ThreadTurnsListParams) -> ThreadTurnsListResponse;
    request ThreadItemsList "thread/items/list" (ThreadItemsListParams) -> ThreadItemsListResponse;
    request ThreadDelete "thread/delete" (ThreadIdParams) -> EmptyResponse;
    request ThreadUnsubscribe "thread/unsubscribe" (ThreadIdParams) -> ThreadUnsubscribeResponse;
    request ThreadCompactStart "thread/compact/start" (ThreadIdParams) -> EmptyResponse;
    request TurnStart "turn/start" (TurnStartParams) -> TurnStartResponse;
    request TurnSteer "turn/steer" (TurnSteerParams) -> TurnSteerResponse;
    request TurnInterrupt "turn/interrupt" (TurnInterruptParams) -> EmptyResponse;
    request ModelList "model/list" (ModelListParams) -> ModelListResponse;
    request CollaborationModeList "collaborationMode/list" (CollaborationModeListParams) -> CollaborationModeListResponse;
    request AppList "app/list" (AppsListParams) -> AppsListResponse;
    request AccountRead "account/read" (GetAccountParams) -> GetAccountResponse;
    request AccountLoginStart "account/login/start" (LoginAccountParams) -> LoginAccountResponse;
    request AccountLoginCancel "account/login/cancel" (CancelLoginAccountParams) -> CancelLoginAccountResponse;
    request AccountLogout "account/logout" (EmptyParams) -> EmptyResponse;
    request AccountRateLimitsRead "account/rateLimits/read" (EmptyParams) -> GetAccountRateLimitsResponse;
    request McpServerStatusList "mcpServerStatus/list" (ListMcpServerStatusParams) -> ListMcpServerStatusResponse;
    request CommandExec "command/exec" (CommandExecParams) -> CommandExecResponse;
    request ConfigRead "config/read" (ConfigReadParams) -> ConfigReadResponse;
    request ConfigValueWrite "config/value/write" (ConfigValueWriteParams) -> ConfigWriteResponse;
    request ConfigBatchWrite "config/batchWrite" (ConfigBatchWriteParams) -> ConfigWriteResponse;
    request FuzzyFileSearch "fuzzyFileSearch" (FuzzyFileSearchParams) -> FuzzyFileSearchResponse;
    request FuzzyFileSearchSessionStart "fuzzyFileSearch/sessionStart" (FuzzyFileSearchSessionStartParams) -> EmptyResponse;
    request FuzzyFileSearchSessionUpdate "fuzzyFileSearch/sessionUpdate" (FuzzyFileSearchSessionUpdateParams) -> EmptyResponse;
    request FuzzyFileSearchSessionStop "fuzzyFileSearch/sessionStop" (FuzzyFileSearchSessionStopParams) -> EmptyResponse;
    request ConfigRequirementsRead "configRequirements/read" (super::absent::ConfigRequirementsReadParams) -> super::absent::ConfigRequirementsReadResponse;
    request HooksList "hooks/list" (super::hooks::HooksListParams) -> super::hooks::HooksListResponse;
    request SkillsList "skills/list" (super::skills::SkillsListParams) -> super::skills::SkillsListResponse;
    request PluginInstalled "plugin/installed" (super::absent::PluginInstalledParams) -> super::absent::PluginInstalledResponse;
    request ThreadReadStateUpdate "thread/readState/update" (super::absent::ThreadReadStateUpdateParams) -> super::absent::ThreadReadStateUpdateResponse;
    request BedrockCheckGovCloudRequirements "account/bedrock/checkGovCloudRequirements" (super::absent::BedrockCheckGovCloudRequirementsParams) -> super::absent::BedrockCheckGovCloudRequirementsResponse;
    request ThreadGoalGet "thread/goal/get" (super::absent::ThreadGoalGetParams) -> super::absent::ThreadGoalGetResponse;
    request ThreadBackgroundTerminalsList "thread/backgroundTerminals/list" (super::absent::ThreadBackgroundTerminalsListParams) -> super::absent::ThreadBackgroundTerminalsListResponse;
    request ReviewStart "review/start" (super::session::ReviewStartParams) -> super::session::ReviewStartResponse;
    request ThreadSettingsUpdate "thread/settings/update" (super::session::ThreadSettingsUpdateParams) -> EmptyResponse;
    request ThreadShellCommand "thread/shellCommand" (super::session::ThreadShellCommandParams) -> EmptyResponse;
    request PermissionProfileList "permissionProfile/list" (super::session::PermissionProfileListParams) -> super::session::PermissionProfileListResponse;
    request McpServerOauthLogin "mcpServer/oauth/login" (super::session::McpServerOauthLoginParams) -> super::session::McpServerOauthLoginResponse;
    request ExperimentalFeatureList "experimentalFeature/list" (super::session::ExperimentalFeatureListParams) -> super::session::ExperimentalFeatureListResponse;

    // Kept for old clients; Codex 0.171 no longer has them, so they have no facts to
    // compare (tests/accounts_v1.rs checks their shapes).
    v1 GetConversationSummary "getConversationSummary" (super::v1::GetConversationSummaryParams) -> super::v1::GetConversationSummaryResponse;
    v1 GetAuthStatus "getAuthStatus" (super::v1::GetAuthStatusParams) -> super::v1::GetAuthStatusResponse;
    v1 GitDiffToRemote "gitDiffToRemote" (super::v1::GitDiffToRemoteParams) -> super::v1::GitDiffToRemoteResponse;

    notification ThreadStarted "thread/started" (ThreadStartedNotification);
    notification ThreadStatusChanged "thread/status/changed" (ThreadStatusChangedNotification);
    notification ThreadArchived "thread/archived" (ThreadIdNotification);
    notification ThreadUnarchived "thread/unarchived" (ThreadIdNotification);
    notification ThreadClosed "thread/closed" (ThreadIdNotification);
    notification ThreadDeleted "thread/deleted" (ThreadIdNotification);
    notification ThreadNameUpdated "thread/name/updated" (ThreadNameUpdatedNotification);
    notification ThreadTokenUsageUpdated "thread/tokenUsage/updated" (ThreadTokenUsageUpdatedNotification);
    notification ThreadCompacted "thread/compacted" (ContextCompactedNotification);
    notification ThreadSettingsUpdated "thread/settings/updated" (super::session::ThreadSettingsUpdatedNotification);
    notification TurnStarted "turn/started" (TurnStartedNotification);
    notification TurnCompleted "turn/completed" (TurnCompletedNotification);
    notification TurnPlanUpdated "turn/plan/updated" (TurnPlanUpdatedNotification);
    notification HookStarted "hook/started" (super::hooks::HookRunNotification);
    notification HookCompleted "hook/completed" (super::hooks::HookRunNotification);
    notification ItemStarted "item/started" (ItemStartedNotification);
    notification ItemCompleted "item/completed" (ItemCompletedNotification);
    notification AgentMessageDelta "item/agentMessage/delta" (ItemDeltaNotification);
    notification ReasoningTextDelta "item/reasoning/textDelta" (ReasoningTextDeltaNotification);
    notification CommandOutputDelta "item/commandExecution/outputDelta" (ItemDeltaNotification);
    notification McpToolCallProgress "item/mcpToolCall/progress" (McpToolCallProgressNotification);
    notification Error "error" (ErrorNotification);
    notification Warning "warning" (WarningNotification);
    notification ConfigWarning "configWarning" (ConfigWarningNotification);
    notification DeprecationNotice "deprecationNotice" (DeprecationNoticeNotification);
    notification AccountRateLimitsUpdated "account/rateLimits/updated" (AccountRateLimitsUpdatedNotification);
    notification AccountLoginCompleted "account/login/completed" (AccountLoginCompletedNotification);
    notification AccountUpdated "account/updated" (AccountUpdatedNotification);
    notification McpServerStartupStatusUpdated "mcpServer/startupStatus/updated" (McpServerStatusUpdatedNotification);
    notification McpServerOauthLoginCompleted "mcpServer/oauthLogin/completed" (super::session::McpServerOauthLoginCompletedNotification);
    notification ServerRequestResolved "serverRequest/resolved" (ServerRequestResolvedNotification);
    notification FuzzyFileSearchSessionUpdated "fuzzyFileSearch/sessionUpdated" (FuzzyFileSearchSessionUpdatedNotification);
    notification FuzzyFileSearchSessionCompleted "fuzzyFileSearch/sessionCompleted" (FuzzyFileSearchSessionCompletedNotification);

    server_request CommandExecutionRequestApproval "item/commandExecution/requestApproval" (CommandExecutionRequestApprovalParams) -> CommandExecutionRequestApprovalResponse;
    server_request FileChangeRequestApproval "item/fileChange/requestApproval" (FileChangeRequestApprovalParams) -> FileChangeRequestApprovalResponse;
    server_request McpServerElicitationRequest "mcpServer/elicitation/request" (McpServerElicitationRequestParams) -> McpServerElicitationRequestResponse;
}
