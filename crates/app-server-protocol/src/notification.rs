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
    /// The thread it is about.
    pub thread_id: String,
    /// The turn it happened in.
    pub turn_id: String,
    /// The item as it starts (a command: its words, in progress).
    pub item: ThreadItem,
    /// When the item started (Unix ms).
    pub started_at_ms: i64,
}

/// `item/completed`: the item in its final state.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemCompletedNotification {
    /// The thread it is about.
    pub thread_id: String,
    /// The turn it happened in.
    pub turn_id: String,
    /// The item in its final state.
    pub item: ThreadItem,
    /// When the item completed (Unix ms).
    pub completed_at_ms: i64,
}

/// A piece of text for an open item: `item/agentMessage/delta`,
/// `item/commandExecution/outputDelta`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ItemDeltaNotification {
    /// The thread it is about.
    pub thread_id: String,
    /// The turn it happened in.
    pub turn_id: String,
    /// The open item it is for (an `item/started` named it).
    pub item_id: String,
    /// The text to append.
    pub delta: String,
}

/// `item/reasoning/textDelta`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningTextDeltaNotification {
    /// The thread it is about.
    pub thread_id: String,
    /// The turn it happened in.
    pub turn_id: String,
    /// The open item it is for (an `item/started` named it).
    pub item_id: String,
    /// The reasoning text to append.
    pub delta: String,
    /// Index into the item's `content`; always 0 (one reasoning text per item).
    pub content_index: u32,
}

/// `item/mcpToolCall/progress`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallProgressNotification {
    /// The thread it is about.
    pub thread_id: String,
    /// The turn it happened in.
    pub turn_id: String,
    /// The open item it is for (an `item/started` named it).
    pub item_id: String,
    /// The server's progress message, or `progress/total`.
    pub message: String,
}

/// Token counts of one request or of the whole thread.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsageBreakdown {
    /// All tokens, as the provider counts them.
    pub total_tokens: i64,
    /// Prompt tokens, cached ones included.
    pub input_tokens: i64,
    /// Of the input tokens, those the server read from its prompt cache.
    pub cached_input_tokens: i64,
    /// Generated tokens, reasoning included.
    pub output_tokens: i64,
    /// Generated tokens spent on reasoning.
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
    /// The whole thread so far.
    pub total: TokenUsageBreakdown,
    /// The last model request (its input is the context the model saw).
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
    /// The thread it is about.
    pub thread_id: String,
    /// The turn it happened in.
    pub turn_id: String,
    /// The thread's usage after the request.
    pub token_usage: ThreadTokenUsage,
}

/// `error`: a turn's error; `willRetry` says whether the engine tries again.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ErrorNotification {
    /// The thread it is about.
    pub thread_id: String,
    /// The turn it happened in.
    pub turn_id: String,
    /// What went wrong.
    pub error: TurnError,
    /// True when the engine retries (the turn goes on); false when the turn fails.
    pub will_retry: bool,
}

/// `warning`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WarningNotification {
    /// The thread it is about.
    pub thread_id: String,
    /// What the user should know.
    pub message: String,
}

/// `configWarning`: something in the config files was ignored or is wrong.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigWarningNotification {
    /// What was ignored or is wrong, and where.
    pub summary: String,
}

/// `account/rateLimits/updated`: the latest rate-limit headers of the model provider.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountRateLimitsUpdatedNotification {
    /// As in `account/rateLimits/read`.
    pub rate_limits: super::account::RateLimitSnapshot,
}
