//! Params, results and notifications of the `account/*` methods. An "account" here is the
//! configured model provider's API key.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How the client is signed in: always an API key (no ChatGPT accounts).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum Account {
    /// An API key.
    ApiKey,
}

/// Where the configured provider's key was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ApiKeySource {
    /// The provider's `env_key` variable.
    Env,
    /// `.credentials.json` in the home directory (`account/login/start`).
    CredentialsFile,
}

/// `account/read`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetAccountResponse {
    /// `null` when the provider needs a key and none is set (or needs none).
    pub account: Option<Account>,
    /// True when the provider needs a key.
    pub requires_openai_auth: bool,
    /// The configured provider's id.
    pub model_provider: String,
    /// Its display name.
    pub model_provider_name: String,
    /// The variable the key is read from.
    pub api_key_env_var: Option<String>,
    /// Where the key was found; `null` when none is set.
    pub api_key_source: Option<ApiKeySource>,
}

/// `account/login/start`'s result: an API key login finishes at once.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum LoginAccountResponse {
    /// The key was saved; the login is complete.
    ApiKey,
}

/// `account/login/cancel`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct CancelLoginAccountResponse {
    /// Always `notFound`: nothing can be pending.
    pub status: String,
}

/// `account/login/completed`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountLoginCompletedNotification {
    /// Always `null`: API key logins have no id.
    pub login_id: Option<String>,
    /// Whether the key was saved.
    pub success: bool,
    /// Why not, when it was not.
    pub error: Option<String>,
}

/// `account/updated`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AccountUpdatedNotification {
    /// `apikey` while a key is set, else `null`.
    pub auth_mode: Option<String>,
    /// Always `null`: no plans.
    pub plan_type: Option<String>,
}

/// One rate-limit window from the provider's headers.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitWindow {
    /// How much of the window's limit is used, 0 to 100.
    pub used_percent: f64,
    /// The window's length in minutes, when the provider says.
    pub window_duration_mins: Option<i64>,
    /// Unix seconds.
    pub resets_at: Option<i64>,
}

impl From<&oi_protocol::protocol::RateLimitWindow> for RateLimitWindow {
    fn from(w: &oi_protocol::protocol::RateLimitWindow) -> Self {
        RateLimitWindow {
            used_percent: w.used_percent,
            window_duration_mins: w.window_minutes,
            resets_at: w.resets_at,
        }
    }
}

/// A provider's rate limits as its last response reported them.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitSnapshot {
    /// The provider id.
    pub limit_id: String,
    /// Always `null`.
    pub limit_name: Option<String>,
    /// The provider's requests window, when its headers give one.
    pub primary: Option<RateLimitWindow>,
    /// The provider's tokens window, when its headers give one.
    pub secondary: Option<RateLimitWindow>,
    /// Always `null`: no credits.
    pub credits: Option<String>,
    /// Always `null`: no plans.
    pub plan_type: Option<String>,
    /// Always `null`.
    pub rate_limit_reached_type: Option<String>,
    /// The raw `x-ratelimit-*` headers (providers differ in what they send).
    pub headers: BTreeMap<String, String>,
}

/// `account/rateLimits/read`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetAccountRateLimitsResponse {
    /// The configured provider's (empty windows when nothing is known yet).
    pub rate_limits: RateLimitSnapshot,
    /// Every provider seen on this connection, by id.
    pub rate_limits_by_limit_id: BTreeMap<String, RateLimitSnapshot>,
}

/// `account/read` params.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetAccountParams {
    /// Accepted and ignored: API keys do not refresh.
    #[serde(default)]
    pub refresh_token: Option<bool>,
}

/// `account/login/start` params.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct LoginAccountParams {
    /// Only `apiKey` logs in here.
    #[serde(rename = "type")]
    pub kind: String,
    /// The key to save (required for `apiKey`).
    #[serde(default)]
    pub api_key: Option<String>,
    /// Which provider the key is for; default: the configured one.
    #[serde(default)]
    pub model_provider: Option<String>,
}

/// `account/login/cancel` params.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CancelLoginAccountParams {
    /// Accepted and ignored: API-key logins finish at once, nothing can be pending.
    #[serde(default)]
    pub login_id: Option<String>,
}

/// No params (`{}` or absent): `account/logout`, `account/rateLimits/read`.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
pub struct EmptyParams {}
