//! Notifications about a turn's items and the thread's state while a turn runs: item
//! lifecycle and deltas, token usage, errors and warnings.

use super::item::ThreadItem;
use super::turn::TurnError;
use oi_protocol::models::TokenUsage;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `item/started`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemStartedNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub item: ThreadItem,
    /// When the item started (Unix ms).
    pub started_at_ms: i64,
}

/// `item/completed`: the item in its final state.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemCompletedNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub item: ThreadItem,
    /// When the item completed (Unix ms).
    pub completed_at_ms: i64,
}

/// A piece of text for an open item: `item/agentMessage/delta`,
/// `item/commandExecution/outputDelta`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemDeltaNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    pub delta: String,
}

/// `item/reasoning/textDelta`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningTextDeltaNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    pub delta: String,
    /// Index into the item's `content`; always 0 (one reasoning text per item).
    pub content_index: u32,
}

/// `item/mcpToolCall/progress`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallProgressNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    /// The server's progress message, or `progress/total`.
    pub message: String,
}

/// Token counts of one request or of the whole thread.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsageBreakdown {
    pub total_tokens: i64,
    pub input_tokens: i64,
    pub cached_input_tokens: i64,
    pub output_tokens: i64,
    pub reasoning_output_tokens: i64,
}

impl From<&TokenUsage> for TokenUsageBreakdown {
    fn from(u: &TokenUsage) -> Self {
        TokenUsageBreakdown {
            total_tokens: u.total_tokens,
            input_tokens: u.input_tokens,
            cached_input_tokens: u.cached_input_tokens,
            output_tokens: u.output_tokens,
            reasoning_output_tokens: u.reasoning_output_tokens,
        }
    }
}

/// A thread's token usage: the whole thread and the last request.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTokenUsage {
    pub total: TokenUsageBreakdown,
    pub last: TokenUsageBreakdown,
    /// The model's context window, when known.
    pub model_context_window: Option<i64>,
}

impl From<&oi_protocol::protocol::TokenUsageInfo> for ThreadTokenUsage {
    fn from(info: &oi_protocol::protocol::TokenUsageInfo) -> Self {
        ThreadTokenUsage {
            total: (&info.total_token_usage).into(),
            last: (&info.last_token_usage).into(),
            model_context_window: info.model_context_window,
        }
    }
}

/// `thread/tokenUsage/updated`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTokenUsageUpdatedNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub token_usage: ThreadTokenUsage,
}

/// `error`: a turn's error; `willRetry` says whether the engine tries again.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub error: TurnError,
    pub will_retry: bool,
}

/// `warning`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WarningNotification {
    pub thread_id: String,
    pub message: String,
}

/// `configWarning`: something in the config files was ignored or is wrong.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigWarningNotification {
    pub summary: String,
}

/// `account/rateLimits/updated`: the latest rate-limit headers of the model provider.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountRateLimitsUpdatedNotification {
    /// As in `account/rateLimits/read`.
    pub rate_limits: super::account::RateLimitSnapshot,
}
