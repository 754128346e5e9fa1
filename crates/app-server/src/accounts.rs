//! `account/read`, `account/login/start|cancel`, `account/logout`,
//! `account/rateLimits/read`: API-key accounts per model provider.
//!
//! A key is filed under its provider's `env_key` name in
//! `$OPENINTERPRETER_HOME/.credentials.json` (mode 0600, locked, atomic; owned by
//! `oi_config::credentials`), where the model client finds it when the variable is unset.
//! Keys are never sent back to the client (except by the v1 `getAuthStatus` when the client
//! asks for the token explicitly).

use crate::items::Note;
use crate::protocol::ThreadOverrides;
use crate::protocol::methods as m;
use crate::protocol::wire::{
    Account, AccountLoginCompletedNotification, AccountUpdatedNotification, ApiKeySource,
    CancelLoginAccountParams, CancelLoginAccountResponse, EmptyParams, EmptyResponse,
    GetAccountParams, GetAccountRateLimitsResponse, GetAccountResponse, LoginAccountParams,
    LoginAccountResponse, RateLimitSnapshot as WireRateLimitSnapshot,
};
use crate::{Conn, blocking, internal, invalid, lock, method};
use oi_config::Config;
use oi_config::credentials;
use oi_jsonrpc::{Execution, MethodTable, RequestContext, RpcError};
use oi_protocol::protocol::RateLimitSnapshot;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::AccountRead, _, _>(t, conn, Execution::Spawn, read);
    method::<m::AccountLoginStart, _, _>(t, conn, Execution::Spawn, login);
    method::<m::AccountLoginCancel, _, _>(t, conn, Execution::Inline, cancel);
    method::<m::AccountLogout, _, _>(t, conn, Execution::Spawn, logout);
    method::<m::AccountRateLimitsRead, _, _>(t, conn, Execution::Inline, rate_limits);
}

/// Where the configured provider's key comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum KeySource {
    /// The provider needs no key (local servers).
    NotNeeded,
    Env,
    CredentialsFile,
    Missing,
}

/// Where the configured provider's key comes from. `.credentials.json` is read on the
/// blocking pool.
pub(crate) async fn key_source(config: &Config, home: &Path) -> Result<KeySource, RpcError> {
    let Some(var) = config.model_provider.env_key.clone() else {
        return Ok(KeySource::NotNeeded);
    };
    if std::env::var(&var).is_ok_and(|v| !v.trim().is_empty()) {
        return Ok(KeySource::Env);
    }
    let home = home.to_path_buf();
    let stored = blocking(move || Ok(credentials::api_key(&home, &var).is_some())).await?;
    Ok(if stored {
        KeySource::CredentialsFile
    } else {
        KeySource::Missing
    })
}

/// The key itself (for `getAuthStatus {includeToken: true}` only).
pub(crate) async fn key_value(config: &Config, home: &Path) -> Result<Option<String>, RpcError> {
    let Some(var) = config.model_provider.env_key.clone() else {
        return Ok(None);
    };
    if let Some(v) = std::env::var(&var)
        .ok()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
    {
        return Ok(Some(v));
    }
    let home = home.to_path_buf();
    blocking(move || Ok(credentials::api_key(&home, &var))).await
}

async fn current_config(conn: &Conn) -> Result<Config, RpcError> {
    Ok(conn.load_config(&ThreadOverrides::default()).await?.config)
}

fn account_json(config: &Config, source: KeySource) -> GetAccountResponse {
    let key_source = match source {
        KeySource::Env => Some(ApiKeySource::Env),
        KeySource::CredentialsFile => Some(ApiKeySource::CredentialsFile),
        KeySource::NotNeeded | KeySource::Missing => None,
    };
    GetAccountResponse {
        account: key_source.map(|_| Account::ApiKey),
        requires_openai_auth: source != KeySource::NotNeeded,
        model_provider: config.model_provider_id.clone(),
        model_provider_name: config.model_provider.name.clone(),
        api_key_env_var: config.model_provider.env_key.clone(),
        api_key_source: key_source,
    }
}

fn auth_mode(source: KeySource) -> Option<String> {
    match source {
        KeySource::Env | KeySource::CredentialsFile => Some("apikey".to_string()),
        _ => None,
    }
}

async fn read(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    _p: GetAccountParams,
) -> Result<GetAccountResponse, RpcError> {
    let config = current_config(&conn).await?;
    let home = conn.home()?;
    Ok(account_json(&config, key_source(&config, &home).await?))
}

fn update_key(home: &Path, var: &str, key: Option<&str>) -> Result<(), RpcError> {
    credentials::set_api_key(home, var, key)
        .map(|_| ())
        .map_err(|e| internal(e.to_string()))
}

async fn login(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: LoginAccountParams,
) -> Result<LoginAccountResponse, RpcError> {
    if p.kind != "apiKey" {
        return Err(invalid(format!(
            "login type `{}` is not supported: Open Interpreter logs in to model providers with API keys; send {{\"type\": \"apiKey\", \"apiKey\": \"…\"}}",
            p.kind
        )));
    }
    let key = p
        .api_key
        .map(|k| k.trim().to_string())
        .filter(|k| !k.is_empty())
        .ok_or_else(|| invalid("apiKey must not be empty"))?;
    let config = current_config(&conn).await?;
    let provider_id = p
        .model_provider
        .clone()
        .unwrap_or_else(|| config.model_provider_id.clone());
    let provider = config.model_providers.get(&provider_id).ok_or_else(|| {
        invalid(format!(
            "unknown model provider `{provider_id}`; known: {}",
            config
                .model_providers
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    let var = provider.env_key.clone().ok_or_else(|| {
        invalid(format!(
            "model provider `{provider_id}` takes no API key (it has no `env_key`); to send one, set env_key in [model_providers.{provider_id}] of config.toml"
        ))
    })?;
    let home = conn.home()?;
    blocking(move || update_key(&home, &var, Some(&key))).await?;
    conn.notify_after_response(
        &ctx,
        vec![
            Note::of::<m::AccountLoginCompleted>(&AccountLoginCompletedNotification {
                login_id: None,
                success: true,
                error: None,
            }),
            Note::of::<m::AccountUpdated>(&AccountUpdatedNotification {
                auth_mode: Some("apikey".to_string()),
                plan_type: None,
            }),
        ],
    );
    Ok(LoginAccountResponse::ApiKey)
}

async fn cancel(
    _conn: Arc<Conn>,
    _ctx: RequestContext,
    _p: CancelLoginAccountParams,
) -> Result<CancelLoginAccountResponse, RpcError> {
    Ok(CancelLoginAccountResponse {
        status: "notFound".to_string(),
    })
}

async fn logout(
    conn: Arc<Conn>,
    ctx: RequestContext,
    _p: EmptyParams,
) -> Result<EmptyResponse, RpcError> {
    let config = current_config(&conn).await?;
    let home = conn.home()?;
    if let Some(var) = config.model_provider.env_key.clone() {
        let h = home.clone();
        blocking(move || update_key(&h, &var, None)).await?;
    }
    // A key in the environment is still there; say so instead of pretending.
    let mode = auth_mode(key_source(&config, &home).await?);
    conn.notify_after_response(
        &ctx,
        vec![Note::of::<m::AccountUpdated>(&AccountUpdatedNotification {
            auth_mode: mode,
            plan_type: None,
        })],
    );
    Ok(EmptyResponse {})
}

/// A v2 `RateLimitSnapshot` (empty when nothing is known), plus the raw headers.
pub(crate) fn rate_limit_snapshot(
    provider: &str,
    s: Option<&RateLimitSnapshot>,
) -> WireRateLimitSnapshot {
    WireRateLimitSnapshot {
        limit_id: provider.to_string(),
        limit_name: None,
        primary: s.and_then(|s| s.primary.as_ref()).map(Into::into),
        secondary: s.and_then(|s| s.secondary.as_ref()).map(Into::into),
        credits: None,
        plan_type: None,
        rate_limit_reached_type: None,
        headers: s.map(|s| s.headers.clone()).unwrap_or_default(),
    }
}

async fn rate_limits(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    _p: EmptyParams,
) -> Result<GetAccountRateLimitsResponse, RpcError> {
    let provider = match current_config(&conn).await {
        Ok(c) => c.model_provider_id,
        Err(e) => return Err(e),
    };
    let seen = lock(&conn.rate_limits).clone();
    let mut by_id = BTreeMap::new();
    if let Some((p, s)) = &seen {
        by_id.insert(p.clone(), rate_limit_snapshot(p, Some(s)));
    }
    let current = match &seen {
        Some((p, s)) if *p == provider => rate_limit_snapshot(p, Some(s)),
        _ => rate_limit_snapshot(&provider, None),
    };
    Ok(GetAccountRateLimitsResponse {
        rate_limits: current,
        rate_limits_by_limit_id: by_id,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::wire::to_value;
    use serde_json::Value;

    #[test]
    fn credentials_updates_keep_other_data_and_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = credentials::path(dir.path());
        std::fs::write(&path, r#"{"mcp_oauth": {"srv": "tok"}}"#).unwrap();
        update_key(dir.path(), "X_KEY", Some("sk-9")).unwrap();
        assert_eq!(
            credentials::api_key(dir.path(), "X_KEY").as_deref(),
            Some("sk-9")
        );
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(v["mcp_oauth"]["srv"], "tok");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        update_key(dir.path(), "X_KEY", None).unwrap();
        assert_eq!(credentials::api_key(dir.path(), "X_KEY"), None);
        std::fs::write(&path, "[1]").unwrap();
        let e = update_key(dir.path(), "X_KEY", Some("k")).unwrap_err();
        assert!(e.message.contains("not a JSON object"), "{}", e.message);
    }

    #[test]
    fn empty_rate_limit_snapshot_has_the_v2_shape() {
        let v = to_value(&rate_limit_snapshot("mock", None));
        assert_eq!(v["limitId"], "mock");
        assert!(v["primary"].is_null() && v["secondary"].is_null());
    }
}
